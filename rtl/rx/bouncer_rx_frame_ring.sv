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
  logic [AW-1:0] wr_eff;         // the RAM address once the pending frame is settled
  // Occupancies for the full test, wr - rd and base - rd, as registers so that the test is
  // one bit (at most 2**AW + 1, bit AW set when full) chosen by the keep decision, with no
  // subtraction after it. A RAM read is subtracted one cycle late (rd_dec_q): for that cycle
  // the occupancy is one beat high, which can only make the test stricter.
  logic [AW:0] occ_wr_q, occ_wr_d, occ_base_q, occ_base_d;
  logic        rd_dec_q;
  logic        pend_q, lost_q, dropping_q, dropping_d, pend_d, lost_d;
  logic        keep, wr_en, ram_re, ram_v_q, rd_more;
  logic        more_to_wr, more_to_base;

  assign keep = pend_q && take && !lost_q;

  // the candidate sums, from registers only
  logic [AW:0] wr_p1, base_p1, occ_wr_m, occ_base_m, occ_wr_p1m, occ_base_p1m;
  assign wr_p1        = wr_q + 1'b1;
  assign base_p1      = base_q + 1'b1;
  assign occ_wr_m     = occ_wr_q - (AW + 1)'(rd_dec_q);
  assign occ_base_m   = occ_base_q - (AW + 1)'(rd_dec_q);
  assign occ_wr_p1m   = occ_wr_q + 1'b1 - (AW + 1)'(rd_dec_q);
  assign occ_base_p1m = occ_base_q + 1'b1 - (AW + 1)'(rd_dec_q);

  assign more_to_wr   = rd_q != wr_q;
  assign more_to_base = rd_q != base_q;

  // The next state for each way the pending frame can settle, computed in parallel from
  // registers and the port (case 0: nothing pending, 1: kept, 2: given back), then one case
  // chosen by pend_q, lost_q and `take`. `take` (the frame's class, a register in the parent)
  // is thus only the last select in front of each register (depth budget), and every sum is
  // formed from registers before any select.
  // case c = 0: nothing pending; 1: the pending frame is kept; 2: it is given back
  logic [AW:0] n0_wr_eff, n0_wr_d, n0_base_d, n0_occ_wr_d, n0_occ_base_d;
  logic        n0_dropping_d, n0_pend_d, n0_lost_d, n0_wr_en, n0_rd_more;
  logic [AW:0] n1_wr_eff, n1_wr_d, n1_base_d, n1_occ_wr_d, n1_occ_base_d;
  logic        n1_dropping_d, n1_pend_d, n1_lost_d, n1_wr_en, n1_rd_more;
  logic [AW:0] n2_wr_eff, n2_wr_d, n2_base_d, n2_occ_wr_d, n2_occ_base_d;
  logic        n2_dropping_d, n2_pend_d, n2_lost_d, n2_wr_en, n2_rd_more;

  always_comb begin
    n0_wr_eff     = 1'b0 ? base_q : wr_q;
    n0_rd_more    = 1'b0 ? more_to_wr : more_to_base;
    n0_wr_d       = n0_wr_eff;
    n0_base_d     = 1'b0 ? wr_q : base_q;
    n0_occ_wr_d   = 1'b0 ? occ_base_m : occ_wr_m;
    n0_occ_base_d = 1'b0 ? occ_wr_m : occ_base_m;
    n0_dropping_d = dropping_q;
    n0_pend_d     = 1'b0;
    n0_lost_d     = 1'b0;
    n0_wr_en      = 1'b0;
    if (s_tvalid) begin
      if (dropping_q) begin
        if (s_tlast) begin
          n0_dropping_d = 1'b0;
          n0_pend_d     = 1'b1;
          n0_lost_d     = 1'b1;
        end
      end else if (1'b0 ? occ_base_q[AW] : occ_wr_q[AW]) begin   // full
        n0_wr_d       = 1'b0 ? wr_q : base_q;
        n0_occ_wr_d   = 1'b0 ? occ_wr_m : occ_base_m;
        n0_dropping_d = !s_tlast;
        n0_pend_d     = s_tlast;
        n0_lost_d     = s_tlast;
      end else begin
        n0_wr_en    = 1'b1;
        n0_wr_d     = 1'b0 ? base_p1 : wr_p1;
        n0_occ_wr_d = 1'b0 ? occ_base_p1m : occ_wr_p1m;
        n0_pend_d   = s_tlast;
      end
    end
  end

  always_comb begin
    n1_wr_eff     = 1'b0 ? base_q : wr_q;
    n1_rd_more    = 1'b1 ? more_to_wr : more_to_base;
    n1_wr_d       = n1_wr_eff;
    n1_base_d     = 1'b1 ? wr_q : base_q;
    n1_occ_wr_d   = 1'b0 ? occ_base_m : occ_wr_m;
    n1_occ_base_d = 1'b1 ? occ_wr_m : occ_base_m;
    n1_dropping_d = dropping_q;
    n1_pend_d     = 1'b0;
    n1_lost_d     = 1'b0;
    n1_wr_en      = 1'b0;
    if (s_tvalid) begin
      if (dropping_q) begin
        if (s_tlast) begin
          n1_dropping_d = 1'b0;
          n1_pend_d     = 1'b1;
          n1_lost_d     = 1'b1;
        end
      end else if (1'b0 ? occ_base_q[AW] : occ_wr_q[AW]) begin   // full
        n1_wr_d       = 1'b1 ? wr_q : base_q;
        n1_occ_wr_d   = 1'b1 ? occ_wr_m : occ_base_m;
        n1_dropping_d = !s_tlast;
        n1_pend_d     = s_tlast;
        n1_lost_d     = s_tlast;
      end else begin
        n1_wr_en    = 1'b1;
        n1_wr_d     = 1'b0 ? base_p1 : wr_p1;
        n1_occ_wr_d = 1'b0 ? occ_base_p1m : occ_wr_p1m;
        n1_pend_d   = s_tlast;
      end
    end
  end

  always_comb begin
    n2_wr_eff     = 1'b1 ? base_q : wr_q;
    n2_rd_more    = 1'b0 ? more_to_wr : more_to_base;
    n2_wr_d       = n2_wr_eff;
    n2_base_d     = 1'b0 ? wr_q : base_q;
    n2_occ_wr_d   = 1'b1 ? occ_base_m : occ_wr_m;
    n2_occ_base_d = 1'b0 ? occ_wr_m : occ_base_m;
    n2_dropping_d = dropping_q;
    n2_pend_d     = 1'b0;
    n2_lost_d     = 1'b0;
    n2_wr_en      = 1'b0;
    if (s_tvalid) begin
      if (dropping_q) begin
        if (s_tlast) begin
          n2_dropping_d = 1'b0;
          n2_pend_d     = 1'b1;
          n2_lost_d     = 1'b1;
        end
      end else if (1'b1 ? occ_base_q[AW] : occ_wr_q[AW]) begin   // full
        n2_wr_d       = 1'b0 ? wr_q : base_q;
        n2_occ_wr_d   = 1'b0 ? occ_wr_m : occ_base_m;
        n2_dropping_d = !s_tlast;
        n2_pend_d     = s_tlast;
        n2_lost_d     = s_tlast;
      end else begin
        n2_wr_en    = 1'b1;
        n2_wr_d     = 1'b1 ? base_p1 : wr_p1;
        n2_occ_wr_d = 1'b1 ? occ_base_p1m : occ_wr_p1m;
        n2_pend_d   = s_tlast;
      end
    end
  end

  // the case: nothing pending (0), kept (1) or given back (2); `take` is the last select
  logic [1:0] cs;
  always_comb begin
    if (!pend_q)     cs = 2'd0;
    else if (lost_q) cs = 2'd2;
    else             cs = take ? 2'd1 : 2'd2;
    wr_eff = (cs == 2'd0) ? n0_wr_eff[AW-1:0] : (cs == 2'd1) ? n1_wr_eff[AW-1:0] : n2_wr_eff[AW-1:0];
    rd_more = (cs == 2'd0) ? n0_rd_more : (cs == 2'd1) ? n1_rd_more : n2_rd_more;
    wr_d = (cs == 2'd0) ? n0_wr_d : (cs == 2'd1) ? n1_wr_d : n2_wr_d;
    base_d = (cs == 2'd0) ? n0_base_d : (cs == 2'd1) ? n1_base_d : n2_base_d;
    occ_wr_d = (cs == 2'd0) ? n0_occ_wr_d : (cs == 2'd1) ? n1_occ_wr_d : n2_occ_wr_d;
    occ_base_d = (cs == 2'd0) ? n0_occ_base_d : (cs == 2'd1) ? n1_occ_base_d : n2_occ_base_d;
    dropping_d = (cs == 2'd0) ? n0_dropping_d : (cs == 2'd1) ? n1_dropping_d : n2_dropping_d;
    pend_d = (cs == 2'd0) ? n0_pend_d : (cs == 2'd1) ? n1_pend_d : n2_pend_d;
    lost_d = (cs == 2'd0) ? n0_lost_d : (cs == 2'd1) ? n1_lost_d : n2_lost_d;
    wr_en = (cs == 2'd0) ? n0_wr_en : (cs == 2'd1) ? n1_wr_en : n2_wr_en;
  end

  // ------------------------------------------------------------------ RAM
  logic [EW-1:0] mem [1 << AW];
  logic [EW-1:0] ram_q;

  always_ff @(posedge clk) begin
    if (wr_en) mem[wr_eff] <= {s_tlast, s_tkeep, s_tdata};
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
