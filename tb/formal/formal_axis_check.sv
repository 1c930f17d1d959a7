// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_axis_check: valid/ready handshake rules of one AXI-Stream (or AXI4-Lite channel,
// or any valid/ready port) for the bounded model checks in tb/formal (scripts/formal.sh).
//
// MASTER = 1: the port is driven by the design under test, the rules are asserted.
// MASTER = 0: the port is driven by the environment, the rules are assumed.
// Rules, checked whenever neither this cycle nor the previous one is in reset (rst or the
// extra `clr`, e.g. a ring reset):
//   - valid, once high, stays high until the cycle with ready (valid held until ready);
//   - the payload (any bits the caller concatenates: tdata, tkeep, tlast, addresses...)
//     does not change while valid && !ready (payload stable);
//   - MASTER only, RESET_LOW = 1: valid is low in the cycle after a reset (valid has a
//     defined reset value; the harnesses also compare two copies of each design started
//     from different initial states, which proves valid does not depend on unreset state).
// Read only by Yosys (read_verilog -formal). Previous-cycle values are explicit registers
// (Yosys 0.23 allows $past only inside clocked blocks).
`default_nettype none
module formal_axis_check #(
  parameter int W         = 8,
  parameter int MASTER    = 1,
  parameter int RESET_LOW = 1
) (
  input wire         clk,
  input wire         rst,
  input wire         clr,
  input wire         valid,
  input wire         ready,
  input wire [W-1:0] payload
);

  reg         past_ok = 1'b0;
  reg         rst_q, in_rst_q, valid_q, ready_q;
  reg [W-1:0] payload_q;
  wire        in_rst = rst || clr;
  always @(posedge clk) begin
    past_ok   <= 1'b1;
    rst_q     <= rst;
    in_rst_q  <= in_rst;
    valid_q   <= valid;
    ready_q   <= ready;
    payload_q <= payload;
  end

  wire check = past_ok && !in_rst_q && !in_rst;
  wire hold  = valid_q && !ready_q;

  generate
    if (MASTER != 0) begin : g_assert
      always @(posedge clk) begin
        if (check && hold) begin
          assert (valid);
          assert (payload == payload_q);
        end
        if (RESET_LOW != 0 && past_ok && rst_q) assert (!valid);
      end
    end else begin : g_assume
      always @(posedge clk) begin
        if (check && hold) begin
          assume (valid);
          assume (payload == payload_q);
        end
      end
    end
  endgenerate

endmodule
`default_nettype wire
