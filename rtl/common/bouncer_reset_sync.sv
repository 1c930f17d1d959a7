// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_reset_sync: reset synchroniser. An active-low reset from any clock domain (or none)
// becomes an active-high reset for the logic on clk: asserted asynchronously (rst rises as
// soon as arst_n falls, without waiting for a clock edge), released synchronously to clk
// after STAGES rising edges of clk with arst_n high (the first flop may go metastable on
// release; the others give it STAGES - 1 cycles to settle).
// The flops are rst_sync_q (ASYNC_REG, matched by the kernel XDC as *_sync_q*); their
// asynchronous clear path is a false path.
// Latency: assertion immediate (combinational through the flops' asynchronous set); release
// STAGES clk cycles.
`default_nettype none
module bouncer_reset_sync #(
  parameter int STAGES = 3   // >= 2
) (
  input  wire  clk,
  input  wire  arst_n,   // asynchronous, active low
  output logic rst       // synchronous release, active high
);

  (* ASYNC_REG = "TRUE" *) logic [STAGES-1:0] rst_sync_q;

  always_ff @(posedge clk or negedge arst_n) begin
    if (!arst_n) rst_sync_q <= '1;
    else         rst_sync_q <= {rst_sync_q[STAGES-2:0], 1'b0};
  end

  assign rst = rst_sync_q[STAGES-1];

endmodule
`default_nettype wire
