// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_axis_frame_fifo: bounded model check harness for rtl/common/bouncer_axis_frame_fifo
// (DATA_W 16, DEPTH_LOG2 2: 4 beats, so full, drop and wrap-around are reached in a few
// cycles). The input stream is unconstrained (the MAC side cannot be stalled; s_axis_tready
// is asserted to be 1), m_axis_tready is free, rst may rise in any cycle and is high in the
// first one.
// Asserts: m_axis valid held until ready, payload stable, m_axis_tvalid low after reset;
// two copies started from different initial states agree on every handshake and status
// output (no dependence on unreset state); every input frame gives exactly one good_frame or
// one drop_frame pulse (never both, never a second one, none left missing after the tlast beat).
// Covers: a frame dropped because the FIFO was full; a good frame after a drop; a beat leaving
// while the FIFO holds a full 4 beats behind it.
`default_nettype none
module formal_axis_frame_fifo (
  input wire        clk,
  input wire        rst,
  input wire [15:0] s_axis_tdata,
  input wire [1:0]  s_axis_tkeep,
  input wire        s_axis_tlast,
  input wire        s_axis_tvalid,
  input wire        m_axis_tready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire        a_s_ready, b_s_ready, a_m_valid, b_m_valid, a_m_last, b_m_last;
  wire [15:0] a_m_data, b_m_data;
  wire [1:0]  a_m_keep, b_m_keep;
  wire        a_drop, b_drop, a_good, b_good;

  bouncer_axis_frame_fifo #(.DATA_W(16), .DEPTH_LOG2(2)) dut_a (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tlast(s_axis_tlast),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(a_s_ready),
    .m_axis_tdata(a_m_data), .m_axis_tkeep(a_m_keep), .m_axis_tlast(a_m_last),
    .m_axis_tvalid(a_m_valid), .m_axis_tready(m_axis_tready),
    .drop_frame(a_drop), .good_frame(a_good)
  );
  bouncer_axis_frame_fifo #(.DATA_W(16), .DEPTH_LOG2(2)) dut_b (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tlast(s_axis_tlast),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(b_s_ready),
    .m_axis_tdata(b_m_data), .m_axis_tkeep(b_m_keep), .m_axis_tlast(b_m_last),
    .m_axis_tvalid(b_m_valid), .m_axis_tready(m_axis_tready),
    .drop_frame(b_drop), .good_frame(b_good)
  );

  formal_axis_check #(.W(19), .MASTER(1)) chk_m (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_m_valid), .ready(m_axis_tready),
    .payload({a_m_last, a_m_keep, a_m_data})
  );

  // frame accounting, kept by the harness
  reg       in_frame_q;   // a frame has started and its tlast beat has not come yet
  reg [2:0] ends_q, decs_q;
  reg       seen_drop_q;  // a frame was dropped since reset
  wire      beat = s_axis_tvalid && a_s_ready;
  wire [2:0] open_decs = decs_q + {2'd0, a_good || a_drop} - ends_q;
  always @(posedge clk) begin
    if (beat) in_frame_q <= !s_axis_tlast;
    if (beat && s_axis_tlast) ends_q <= ends_q + 3'd1;
    if (a_good || a_drop) decs_q <= decs_q + 3'd1;
    if (a_drop) seen_drop_q <= 1'b1;
    if (rst) begin
      in_frame_q <= 1'b0;
      ends_q     <= 3'd0;
      decs_q     <= 3'd0;
      seen_drop_q <= 1'b0;
    end
  end

  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_s_ready);
      // miter: outputs that must not depend on unreset state
      assert (a_m_valid == b_m_valid);
      assert (a_s_ready == b_s_ready);
      assert (a_good == b_good && a_drop == b_drop);
      // one decision per frame
      if (!$past(rst)) begin
        assert (!(a_good && a_drop));
        assert (open_decs == 3'd0 || (open_decs == 3'd1 && in_frame_q));
        cover (a_drop);
        cover (a_good && seen_drop_q);
        cover (a_m_valid && m_axis_tready && a_m_last && seen_drop_q);
      end
    end
  end

endmodule
`default_nettype wire
