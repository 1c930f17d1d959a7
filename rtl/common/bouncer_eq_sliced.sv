// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_eq_sliced: eq = (a == b) for W-bit operands, built as an AND of 3-bit slice compares
// that are kept as nets (one LUT6 each: three bit pairs), so that the compare is two LUT
// levels for W <= 18 however the surrounding logic is mapped. Left to itself, ABC (mapping a
// flattened netlist for its deepest path) spreads a 12-15 bit equality over LUT2 + LUT6 +
// MUXF7 + LUT6 or merges it into the logic behind it, 1-1.5 levels deeper: the async FIFO's
// Gray-pointer compares and the SQ engine's CI != PI test.
// Combinational, no latency.
`default_nettype none
module bouncer_eq_sliced #(
  parameter int W = 12
) (
  input  wire  [W-1:0] a,
  input  wire  [W-1:0] b,
  output logic         eq
);
  localparam int NSL = (W + 2) / 3;   // 3-bit slices, the last one zero-padded
  localparam int PW  = 3 * NSL;

  logic [PW-1:0] ap, bp;
  assign ap = PW'(a);
  assign bp = PW'(b);
  (* keep *) logic [NSL-1:0] sl_eq;
  for (genvar k = 0; k < NSL; k++) begin : g_slice
    assign sl_eq[k] = ap[3*k +: 3] == bp[3*k +: 3];
  end
  assign eq = &sl_eq;
endmodule
`default_nettype wire
