// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rx_frame_ring: one store-and-forward frame queue of bouncer_rx_prio_fifo, whose
// frames are kept or discarded one cycle after their last beat, when the frame's class is
// known.
//
// Write side (no ready: the port cannot be stalled): every beat is written speculatively at
// the write pointer. A frame that finds the ring full (2**DEPTH_LOG2 beats stored, kept or
// not; a beat read in the previous cycle still counts) is rolled back to its start and the
// rest of it is discarded ("lost"). In the cycle
// after a frame's tlast beat (pend = 1) the parent says with `take` whether the frame belongs
// to this ring: taken and not lost, it becomes visible to the read side (kept = 1); otherwise
// its beats are given back. The next frame's first beat may arrive in that same cycle; it is
// written where the ring's next frame starts once the pending one is settled.
//
// Read side: one simple dual-port RAM of 2**DEPTH_LOG2 x (DATA_W + DATA_W/8 + 1) and its read
// register (rd_valid / rd_beat). The parent takes the register's beat with rd_take; only kept
// beats are ever read, so no frame is emitted partially.
// Latency: when the tlast beat is on s_* in cycle c and the ring is empty, the frame's first
// beat is in the read register in cycle c+2 (the RAM read is issued in cycle c+1, in the same
// cycle as the keep decision). Throughput: one beat per cycle in and out.
`default_nettype none
module bouncer_rx_frame_ring #(
  parameter int DATA_W     = 64,
  parameter int DEPTH_LOG2 = 9   // beats
) (
  input  wire                        clk,
  input  wire                        rst,

  input  wire  [DATA_W-1:0]          s_tdata,
  input  wire  [DATA_W/8-1:0]        s_tkeep,
  input  wire                        s_tlast,
  input  wire                        s_tvalid,

  output logic                       pend,      // the previous cycle's tlast beat ended a frame
  output logic                       pend_lost, // with pend: that frame did not fit
  input  wire                        take,      // with pend: the frame belongs to this ring
  output logic                       kept,      // the pending frame is now visible (pend, take, !lost)

  output logic                       rd_valid,
  output logic [DATA_W+DATA_W/8:0]   rd_beat,   // {tlast, tkeep, tdata}
  input  wire                        rd_take
);

  // ------------------------------------------------------------------ parameter checks
  if (DEPTH_LOG2 < 2 || DEPTH_LOG2 > 16) begin : g_bad_depth
    $error("bouncer_rx_frame_ring: DEPTH_LOG2 must be 2..16");
  end

  localparam int KW = DATA_W / 8;
  localparam int AW = DEPTH_LOG2;
  localparam int EW = DATA_W + KW + 1;

  logic [AW:0] wr_q, wr_d;       // speculative write pointer (end of the pending frame)
  logic [AW:0] base_q, base_d;   // end of the kept frames (start of the frame being written)
  logic [AW:0] rd_q;             // next beat to read from the RAM
  logic [AW:0] wr_eff, base_eff; // the pointers once the pending frame is settled
  // Occupancies for the full test, wr - rd and base - rd, as registers so that the test is
  // one bit (at most 2**AW + 1, bit AW set when full) chosen by the keep decision, with no
  // subtraction after it. A RAM read is subtracted one cycle late (rd_dec_q): for that cycle
  // the occupancy is one beat high, which can only make the test stricter.
  logic [AW:0] occ_wr_q, occ_wr_d, occ_base_q, occ_base_d, occ_wr_eff, occ_base_eff;
  logic        rd_dec_q;
  logic        pend_q, lost_q, dropping_q, dropping_d, pend_d, lost_d;
  logic        keep, give, full, wr_en, ram_re, ram_v_q, rd_more;
  logic        more_to_wr, more_to_base;

  assign keep = pend_q && take && !lost_q;
  assign give = pend_q && !keep;

  assign more_to_wr   = rd_q != wr_q;
  assign more_to_base = rd_q != base_q;

  always_comb begin
    wr_eff       = give ? base_q : wr_q;
    base_eff     = keep ? wr_q : base_q;
    occ_wr_eff   = give ? occ_base_q : occ_wr_q;
    occ_base_eff = keep ? occ_wr_q : occ_base_q;
    full         = give ? occ_base_q[AW] : occ_wr_q[AW];
    rd_more      = keep ? more_to_wr : more_to_base;

    wr_d       = wr_eff;
    base_d     = base_eff;
    occ_wr_d   = occ_wr_eff - (AW + 1)'(rd_dec_q);
    occ_base_d = occ_base_eff - (AW + 1)'(rd_dec_q);
    dropping_d = dropping_q;
    pend_d     = 1'b0;
    lost_d     = 1'b0;
    wr_en      = 1'b0;
    if (s_tvalid) begin
      if (dropping_q) begin
        if (s_tlast) begin
          dropping_d = 1'b0;
          pend_d     = 1'b1;
          lost_d     = 1'b1;
        end
      end else if (full) begin
        wr_d       = base_eff;
        occ_wr_d   = occ_base_eff - (AW + 1)'(rd_dec_q);
        dropping_d = !s_tlast;
        pend_d     = s_tlast;
        lost_d     = s_tlast;
      end else begin
        wr_en    = 1'b1;
        wr_d     = wr_eff + 1'b1;
        occ_wr_d = occ_wr_eff + 1'b1 - (AW + 1)'(rd_dec_q);
        pend_d   = s_tlast;
      end
    end
  end

  // ------------------------------------------------------------------ RAM
  logic [EW-1:0] mem [1 << AW];
  logic [EW-1:0] ram_q;

  always_ff @(posedge clk) begin
    if (wr_en) mem[wr_eff[AW-1:0]] <= {s_tlast, s_tkeep, s_tdata};
    if (ram_re) ram_q <= mem[rd_q[AW-1:0]];
  end

  assign ram_re = rd_more && (!ram_v_q || rd_take);

  always_ff @(posedge clk) begin
    if (ram_re) ram_v_q <= 1'b1;
    else if (rd_take) ram_v_q <= 1'b0;
    if (ram_re) rd_q <= rd_q + 1'b1;
    wr_q       <= wr_d;
    base_q     <= base_d;
    occ_wr_q   <= occ_wr_d;
    occ_base_q <= occ_base_d;
    rd_dec_q   <= ram_re;
    dropping_q <= dropping_d;
    pend_q     <= pend_d;
    lost_q     <= lost_d;
    if (rst) begin
      ram_v_q    <= 1'b0;
      rd_q       <= '0;
      wr_q       <= '0;
      base_q     <= '0;
      occ_wr_q   <= '0;
      occ_base_q <= '0;
      rd_dec_q   <= 1'b0;
      dropping_q <= 1'b0;
      pend_q     <= 1'b0;
      lost_q     <= 1'b0;
    end
  end

  assign pend      = pend_q;
  assign pend_lost = lost_q;
  assign kept      = keep;
  assign rd_valid  = ram_v_q;
  assign rd_beat   = ram_q;

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      // never more beats stored than the ring holds, and kept beats never pass the writer
      assert ((wr_q - rd_q) <= (AW + 1)'(1 << AW));
      assert ((base_q - rd_q) <= (wr_q - rd_q));
      // the occupancies are the pointer differences, plus a read not yet subtracted
      assert (occ_wr_q == wr_q - rd_q + (AW + 1)'(rd_dec_q));
      assert (occ_base_q == base_q - rd_q + (AW + 1)'(rd_dec_q));
      // the read register is taken only when it holds a beat
      if (rd_take) assert (ram_v_q);
      // a lost frame is only reported with its end
      if (lost_q) assert (pend_q);
    end
  end
`endif

endmodule
`default_nettype wire
