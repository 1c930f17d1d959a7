// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rr_arbiter: round-robin choice among N requesters.
//
// Combinational: `grant` names the requester that wins this cycle, searching from the one
// after the last winner. `accept` (the caller took the winner this cycle) moves the
// round-robin pointer to the winner. Latency 0; the pointer updates at the clock edge.
`default_nettype none
module bouncer_rr_arbiter #(
  parameter int N = 2,
  parameter int W = (N > 1) ? $clog2(N) : 1
) (
  input  wire          clk,
  input  wire          rst,
  input  wire  [N-1:0] req,
  input  wire          accept,
  output logic         grant_valid,
  output logic [W-1:0] grant
);

  logic [W-1:0] last_q;

  always_comb begin
    grant_valid = 1'b0;
    grant       = '0;
    for (int k = N; k >= 1; k--) begin
      if (req[(32'(last_q) + k) % N]) begin
        grant_valid = 1'b1;
        grant       = W'((32'(last_q) + k) % N);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (accept && grant_valid) last_q <= grant;
    if (rst) last_q <= W'(N - 1);
  end

endmodule
`default_nettype wire
