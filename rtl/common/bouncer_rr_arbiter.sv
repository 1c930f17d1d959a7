// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rr_arbiter: round-robin choice among N requesters.
//
// Combinational: `grant` names the requester that wins this cycle, searching from the one
// after the last winner (last_q is always < N). `accept` (the caller took the winner this cycle) moves the
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

  // Kept binary: Yosys' FSM pass would otherwise recode the pointer one-hot (it is loaded only
  // from the constants of the grant mux), which puts N pointer bits instead of W in front of
  // every grant bit and made the requests -> pointer path about 1.5 LUT levels deeper.
  (* fsm_encoding = "none" *) logic [W-1:0] last_q;

  // The winner is the lowest requester above last_q, else the lowest requester overall: the
  // same order as searching last_q+1, last_q+2, ... modulo N, without an adder or a divider
  // (one W-bit compare per requester, then two priority encoders: about 2 LUT levels for N <= 8).
  logic         hi_valid;
  logic [W-1:0] hi_grant;
  logic [W-1:0] lo_grant;

  always_comb begin
    hi_valid = 1'b0;
    hi_grant = '0;
    lo_grant = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (req[i]) lo_grant = W'(i);
      if (req[i] && (W'(i) > last_q)) begin
        hi_valid = 1'b1;
        hi_grant = W'(i);
      end
    end
    grant_valid = |req;
    grant       = hi_valid ? hi_grant : lo_grant;
  end

  always_ff @(posedge clk) begin
    if (accept && grant_valid) last_q <= grant;
    if (rst) last_q <= W'(N - 1);
  end

endmodule
`default_nettype wire
