// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_tx_arb: bounded model check harness for rtl/tx/bouncer_tx_arb (N 2, DATA_W 16).
// Environment: each s_axis input obeys AXI-Stream (valid held until ready, payload stable;
// assumed), and tags its beats with its own index in tdata[0] (assumed); m_axis_tready is
// free, rst may rise in any cycle and is high in the first one.
// Asserts: m_axis valid held until ready, payload (tdata, tkeep, tlast) stable, m_axis_tvalid
// low after reset; at most one s_axis_tready high; frames never interleave (every beat of an
// output frame carries the tag of the frame's first beat); frame_done is exactly the tlast
// handshake 2 cycles later, with frame_bytes = the frame's tkeep bits; beats in = beats out +
// beats held (nothing lost or duplicated); and a second copy started from another initial
// state agrees on m_axis_tvalid, s_axis_tready and frame_done.
`default_nettype none
module formal_tx_arb (
  input wire        clk,
  input wire        rst,
  input wire [31:0] s_axis_tdata,
  input wire [3:0]  s_axis_tkeep,
  input wire [1:0]  s_axis_tlast,
  input wire [1:0]  s_axis_tvalid,
  input wire        m_axis_tready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire [1:0]  a_s_ready, b_s_ready;
  wire [15:0] a_m_data, b_m_data;
  wire [1:0]  a_m_keep, b_m_keep;
  wire        a_m_last, b_m_last, a_m_valid, b_m_valid, a_done, b_done;
  wire [15:0] a_bytes, b_bytes;

  bouncer_tx_arb #(.DATA_W(16), .N(2)) dut_a (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tlast(s_axis_tlast),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(a_s_ready),
    .m_axis_tdata(a_m_data), .m_axis_tkeep(a_m_keep), .m_axis_tlast(a_m_last),
    .m_axis_tvalid(a_m_valid), .m_axis_tready(m_axis_tready),
    .frame_done(a_done), .frame_bytes(a_bytes)
  );
  bouncer_tx_arb #(.DATA_W(16), .N(2)) dut_b (
    .clk(clk), .rst(rst),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tlast(s_axis_tlast),
    .s_axis_tvalid(s_axis_tvalid), .s_axis_tready(b_s_ready),
    .m_axis_tdata(b_m_data), .m_axis_tkeep(b_m_keep), .m_axis_tlast(b_m_last),
    .m_axis_tvalid(b_m_valid), .m_axis_tready(m_axis_tready),
    .frame_done(b_done), .frame_bytes(b_bytes)
  );

  genvar i;
  generate
    for (i = 0; i < 2; i = i + 1) begin : g_in
      formal_axis_check #(.W(19), .MASTER(0)) env (
        .clk(clk), .rst(rst), .clr(1'b0), .valid(s_axis_tvalid[i]), .ready(a_s_ready[i]),
        .payload({s_axis_tlast[i], s_axis_tkeep[2*i +: 2], s_axis_tdata[16*i +: 16]})
      );
      always @* assume (s_axis_tdata[16*i] == i);
    end
  endgenerate

  formal_axis_check #(.W(19), .MASTER(1)) chk_m (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_m_valid), .ready(m_axis_tready),
    .payload({a_m_last, a_m_keep, a_m_data})
  );

  // output framing and beat accounting, kept by the harness
  reg       out_in_frame_q, out_tag_q;
  reg [3:0] beats_in_q, beats_out_q;
  wire      out_fire = a_m_valid && m_axis_tready;
  wire      in_fire  = |(s_axis_tvalid & a_s_ready);
  wire [3:0] held    = beats_in_q - beats_out_q;
  // the frame's byte count so far, and the expected frame_done / frame_bytes 1 and 2 cycles on
  reg  [15:0] out_bytes_q, exp1_bytes_q, exp2_bytes_q;
  reg         exp1_done_q, exp2_done_q;
  wire [15:0] beat_bytes = out_bytes_q + {15'd0, a_m_keep[0]} + {15'd0, a_m_keep[1]};
  always @(posedge clk) begin
    if (out_fire) begin
      out_in_frame_q <= !a_m_last;
      out_tag_q      <= a_m_data[0];
      out_bytes_q    <= a_m_last ? 16'd0 : beat_bytes;
    end
    exp1_done_q  <= out_fire && a_m_last;
    exp1_bytes_q <= beat_bytes;
    exp2_done_q  <= exp1_done_q;
    exp2_bytes_q <= exp1_bytes_q;
    if (in_fire) beats_in_q <= beats_in_q + 4'd1;
    if (out_fire) beats_out_q <= beats_out_q + 4'd1;
    if (rst) begin
      out_in_frame_q <= 1'b0;
      out_bytes_q    <= 16'd0;
      exp1_done_q    <= 1'b0;
      exp2_done_q    <= 1'b0;
      beats_in_q     <= 4'd0;
      beats_out_q    <= 4'd0;
    end
  end

  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_m_valid == b_m_valid);
      assert (a_s_ready == b_s_ready);
      assert (a_done == b_done);
      assert (a_s_ready != 2'b11);
      assert (a_done == exp2_done_q);
      if (a_done) assert (a_bytes == exp2_bytes_q);
      if (a_m_valid && out_in_frame_q) assert (a_m_data[0] == out_tag_q);
      // at most the output register and the skid register hold beats
      assert (held <= 4'd2);
      assert (held != 4'd0 || !a_m_valid);
    end
  end

endmodule
`default_nettype wire
