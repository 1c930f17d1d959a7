// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_mpa_reject_builder: bounded model check harness for rtl/tx/bouncer_mpa_reject_builder
// (DATA_W 64).
// Environment (assumed): start_valid is held until start_ready with the context, FIN,
// IRD/ORD and MSS inputs stable; the MSS is 0 (no bound) or at least 48; pd_len is at most
// 512 (508 when the request is enhanced: PD_Length <= 512); the other PD inputs (pd_clear,
// pd_wr_*) and m_axis_tready are free; rst may rise in any cycle and is high in the first one.
// Asserts: m_axis valid held until ready, tdata/tkeep/tlast stable, tvalid low after reset;
// tkeep contiguous from byte 0 and all ones except on the last beat of a frame; one reject
// per start: at most one in flight, no beat offered without a start and none while
// start_ready; done only in the cycle after a tlast handshake, and a tlast handshake
// without done leaves the builder busy (another segment follows); a second copy from
// another initial state agrees on m_axis_tvalid, m_axis_tlast, start_ready, first_beat and
// done. The builder's own assertions are checked too: FIN only in the last segment's
// header, segment states only for a reply longer than the MSS.
// At depth 14 a reply longer than the MSS does not reach its first beat (11 cycles after
// start). seq_advance, frame_len and seg_count against their definitions (every length and
// MSS), the segments' bytes, FIN on the last one only and done after the last one are pinned
// by tb/unit/test_rtl_reject_builder.cpp: as values of the start inputs through the
// compares and the count they cost z3 minutes per step here.
// Covers: the first beat of a reject. (Its tlast beat, at least 16 cycles after the start, is
// beyond depth 14; a cover run to depth 18 did not finish in 15 minutes here.)
`default_nettype none
module formal_mpa_reject_builder (
  input wire         clk,
  input wire         rst,
  input wire         pd_clear,
  input wire [9:0]   pd_len,
  input wire         pd_wr_en,
  input wire [6:0]   pd_wr_idx,
  input wire [63:0]  pd_wr_data,
  input wire         start_valid,
  input wire [511:0] start_ctx,
  input wire         start_fin,
  input wire         start_ird_ord_valid,
  input wire [31:0]  start_ird_ord,
  input wire [15:0]  start_mss,
  input wire         m_axis_tready
);

  reg init_q = 1'b1;
  always @(posedge clk) init_q <= 1'b0;
  always @* if (init_q) assume (rst);

  wire        a_ready, b_ready, a_first, b_first, a_done, b_done;
  wire        a_valid, b_valid, a_last, b_last;
  wire [63:0] a_data, b_data;
  wire [7:0]  a_keep, b_keep;
  wire [15:0] a_flen, b_flen, a_seq, b_seq;
  wire [3:0]  a_segs, b_segs;

  bouncer_mpa_reject_builder #(.DATA_W(64)) dut_a (
    .clk(clk), .rst(rst), .pd_clear(pd_clear), .pd_len(pd_len), .pd_wr_en(pd_wr_en),
    .pd_wr_idx(pd_wr_idx), .pd_wr_data(pd_wr_data),
    .start_valid(start_valid), .start_ready(a_ready), .start_ctx(start_ctx),
    .start_fin(start_fin), .start_ird_ord_valid(start_ird_ord_valid), .start_ird_ord(start_ird_ord),
    .start_mss(start_mss),
    .frame_len(a_flen), .seq_advance(a_seq), .seg_count(a_segs), .first_beat(a_first),
    .done(a_done),
    .m_axis_tdata(a_data), .m_axis_tkeep(a_keep), .m_axis_tlast(a_last),
    .m_axis_tvalid(a_valid), .m_axis_tready(m_axis_tready)
  );
  bouncer_mpa_reject_builder #(.DATA_W(64)) dut_b (
    .clk(clk), .rst(rst), .pd_clear(pd_clear), .pd_len(pd_len), .pd_wr_en(pd_wr_en),
    .pd_wr_idx(pd_wr_idx), .pd_wr_data(pd_wr_data),
    .start_valid(start_valid), .start_ready(b_ready), .start_ctx(start_ctx),
    .start_fin(start_fin), .start_ird_ord_valid(start_ird_ord_valid), .start_ird_ord(start_ird_ord),
    .start_mss(start_mss),
    .frame_len(b_flen), .seq_advance(b_seq), .seg_count(b_segs), .first_beat(b_first),
    .done(b_done),
    .m_axis_tdata(b_data), .m_axis_tkeep(b_keep), .m_axis_tlast(b_last),
    .m_axis_tvalid(b_valid), .m_axis_tready(m_axis_tready)
  );

  formal_axis_check #(.W(562), .MASTER(0)) env_start (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(start_valid), .ready(a_ready),
    .payload({start_ctx, start_fin, start_ird_ord_valid, start_ird_ord, start_mss})
  );
  formal_axis_check #(.W(73), .MASTER(1)) chk_m (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_valid), .ready(m_axis_tready),
    .payload({a_last, a_keep, a_data})
  );

  // the request as the builder decodes it: enhanced = rev 2 with the 0x10 flag
  wire [7:0] req_rev   = start_ctx[bouncer_regs_pkg::CM_CTX_REQ_REV_LSB +: 8];
  wire [7:0] req_flags = start_ctx[bouncer_regs_pkg::CM_CTX_REQ_FLAGS_LSB +: 8];
  wire       enh       = (req_rev == 8'd2) && req_flags[4];
  always @* begin
    assume (pd_len <= 10'd512);
    if (start_valid) begin
      assume (start_mss == 16'd0 || start_mss >= 16'd48);
      if (enh) assume (pd_len <= 10'd508);
    end
  end

  wire start_fire = start_valid && a_ready;
  wire last_fire  = a_valid && m_axis_tready && a_last;
  reg [1:0] pending_q;   // starts whose done has not come
  reg       last_fire_q;
  always @(posedge clk) begin
    pending_q   <= pending_q + {1'b0, start_fire} - {1'b0, a_done};
    last_fire_q <= last_fire;
    if (rst) begin
      pending_q   <= 2'd0;
      last_fire_q <= 1'b0;
    end
  end

  always @(posedge clk) begin
    if (!init_q) begin
      assert (a_valid == b_valid && a_ready == b_ready);
      assert (a_first == b_first && a_done == b_done);
      if (a_valid) assert (a_last == b_last);
      if (!rst) begin
        assert (pending_q <= 2'd1);
        if (pending_q == 2'd0 || a_ready) assert (!a_valid);
        if (a_done) assert (last_fire_q);
        if (last_fire_q && !a_done) assert (pending_q == 2'd1 && !a_ready);
        if (a_valid) begin
          assert (a_keep[0] && (a_keep & (a_keep + 8'd1)) == 8'd0);
          if (!a_last) assert (a_keep == 8'hFF);
        end
        cover (a_first && a_valid && m_axis_tready);
      end
    end
  end

endmodule
`default_nettype wire
