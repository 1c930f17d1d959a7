// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// formal_mpa_reject_builder: bounded model check harness for rtl/tx/bouncer_mpa_reject_builder
// (DATA_W 64).
// Environment (assumed): start_valid is held until start_ready with the context, FIN and
// IRD/ORD inputs stable; the PD inputs (pd_clear, pd_len, pd_wr_*) and m_axis_tready are
// free; rst may rise in any cycle and is high in the first one.
// Asserts: m_axis valid held until ready, tdata/tkeep/tlast stable, tvalid low after reset;
// tkeep contiguous from byte 0 and all ones except on the last beat; one frame per start: at
// most one frame in flight, no beat offered without a start and none while start_ready; done
// pulses exactly in the cycle after the tlast handshake; a second copy from another initial
// state agrees on m_axis_tvalid, m_axis_tlast, start_ready, first_beat and done.
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

  bouncer_mpa_reject_builder #(.DATA_W(64)) dut_a (
    .clk(clk), .rst(rst), .pd_clear(pd_clear), .pd_len(pd_len), .pd_wr_en(pd_wr_en),
    .pd_wr_idx(pd_wr_idx), .pd_wr_data(pd_wr_data),
    .start_valid(start_valid), .start_ready(a_ready), .start_ctx(start_ctx),
    .start_fin(start_fin), .start_ird_ord_valid(start_ird_ord_valid), .start_ird_ord(start_ird_ord),
    .frame_len(a_flen), .seq_advance(a_seq), .first_beat(a_first), .done(a_done),
    .m_axis_tdata(a_data), .m_axis_tkeep(a_keep), .m_axis_tlast(a_last),
    .m_axis_tvalid(a_valid), .m_axis_tready(m_axis_tready)
  );
  bouncer_mpa_reject_builder #(.DATA_W(64)) dut_b (
    .clk(clk), .rst(rst), .pd_clear(pd_clear), .pd_len(pd_len), .pd_wr_en(pd_wr_en),
    .pd_wr_idx(pd_wr_idx), .pd_wr_data(pd_wr_data),
    .start_valid(start_valid), .start_ready(b_ready), .start_ctx(start_ctx),
    .start_fin(start_fin), .start_ird_ord_valid(start_ird_ord_valid), .start_ird_ord(start_ird_ord),
    .frame_len(b_flen), .seq_advance(b_seq), .first_beat(b_first), .done(b_done),
    .m_axis_tdata(b_data), .m_axis_tkeep(b_keep), .m_axis_tlast(b_last),
    .m_axis_tvalid(b_valid), .m_axis_tready(m_axis_tready)
  );

  formal_axis_check #(.W(546), .MASTER(0)) env_start (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(start_valid), .ready(a_ready),
    .payload({start_ctx, start_fin, start_ird_ord_valid, start_ird_ord})
  );
  formal_axis_check #(.W(73), .MASTER(1)) chk_m (
    .clk(clk), .rst(rst), .clr(1'b0), .valid(a_valid), .ready(m_axis_tready),
    .payload({a_last, a_keep, a_data})
  );

  wire start_fire = start_valid && a_ready;
  wire last_fire  = a_valid && m_axis_tready && a_last;
  reg [1:0] pending_q;   // starts whose tlast beat has not been sent
  reg       last_fire_q;
  always @(posedge clk) begin
    pending_q   <= pending_q + {1'b0, start_fire} - {1'b0, last_fire};
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
        assert (a_done == last_fire_q);
        if (a_valid) begin
          assert (a_keep[0] && (a_keep & (a_keep + 8'd1)) == 8'd0);
          if (!a_last) assert (a_keep == 8'hFF);
        end
      end
    end
  end

endmodule
`default_nettype wire
