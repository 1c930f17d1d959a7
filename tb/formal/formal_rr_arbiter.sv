// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_rr_arbiter: bounded model check harness for rtl/common/bouncer_rr_arbiter (N 5: not a
// power of two, so the wrap from the last index to 0 is exercised with unused pointer codes).
// Environment: req and accept are free; rst is high in the first cycle and may rise in any cycle.
// Asserts: grant_valid = |req; the grant is a requester; round robin: no requester lies strictly
// between the last accepted winner and the grant (cyclically), tracked by the harness itself; the
// first winner after reset is the lowest requester; and every requester that keeps requesting
// is granted within N accepted grants (no starvation).
// Covers: every requester wins after waiting the longest (N - 1 accepted grants to others).
`default_nettype none
module formal_rr_arbiter (
  input wire       clk,
  input wire       rst,
  input wire [4:0] req,
  input wire       accept
);
  localparam int N = 5;

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire       grant_valid;
  wire [2:0] grant;
  bouncer_rr_arbiter #(.N(N)) dut (
    .clk(clk), .rst(rst), .req(req), .accept(accept), .grant_valid(grant_valid), .grant(grant)
  );

  // The harness' own record of the last accepted winner (N - 1 after reset, so index 0 is first).
  reg [2:0] last_q;
  // Per requester: accepted grants to others since it last won or stopped requesting.
  reg [3:0] wait_q [N];
  wire      won = accept && grant_valid;
  always @(posedge clk) begin
    if (won) last_q <= grant;
    if (rst) last_q <= 3'(N - 1);
  end
  genvar r;
  generate
    for (r = 0; r < N; r = r + 1) begin : g_wait
      always @(posedge clk) begin
        if (won && grant != 3'(r)) wait_q[r] <= req[r] ? wait_q[r] + 4'd1 : 4'd0;
        if (!req[r] || (won && grant == 3'(r))) wait_q[r] <= 4'd0;
        if (rst) wait_q[r] <= 4'd0;
      end
      always @* begin
        if (!init_q && !rst) begin
          assert (wait_q[r] < 4'(N));
          cover (won && grant == 3'(r) && wait_q[r] == 4'(N - 1));
        end
      end
    end
  endgenerate

  integer k;
  reg between_req, reached;
  reg [3:0] idx;
  always @* begin
    between_req = 1'b0;
    reached     = 1'b0;
    // requesters last+1 .. grant-1 (cyclically) must all be idle
    for (k = 1; k < N; k = k + 1) begin
      idx = 4'(last_q) + 4'(k);
      if (idx >= 4'(N)) idx = idx - 4'(N);
      if (idx[2:0] == grant) reached = 1'b1;
      if (!reached && req[idx[2:0]]) between_req = 1'b1;
    end
  end

  always @* begin
    if (!init_q && !rst) begin
      assert (grant_valid == |req);
      assert (grant < 3'(N));
      if (grant_valid) begin
        assert (req[grant]);
        assert (!between_req);
      end
    end
  end
endmodule
`default_nettype wire
