// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_axis_async_fifo: dual-clock AXI-Stream frame FIFO (tdata/tkeep/tlast), store and
// forward: a frame becomes visible on m_axis only once its tlast beat is stored, and then
// leaves at one beat per m_clk cycle with no gap if m_axis_tready stays high (what a CMAC TX
// port needs: it must not run dry inside a frame).
//
// Write side (s_clk): every accepted beat is written at the speculative write pointer; its
// frame is committed when the tlast beat is written (s_good_frame pulses).
// - FRAME_DROP = 1 (RX from a MAC, which cannot be stalled): s_axis_tready is constant 1. A
//   beat that finds the FIFO full (2**DEPTH_LOG2 beats stored, committed or not) rolls the
//   write pointer back to the start of its frame, the rest of the frame up to its tlast beat
//   is discarded and s_drop_frame pulses once.
// - FRAME_DROP = 0 (TX): no loss: s_axis_tready is low while the FIFO is full. Only a frame
//   longer than the whole FIFO (it fills all 2**DEPTH_LOG2 beats and nothing else is left to
//   read) cannot be stored; it is dropped whole as above instead of stalling forever.
// Every frame gives exactly one s_good_frame or one s_drop_frame pulse, registered (the
// cycle after the beat that decided).
//
// Clock-domain crossing: only Gray-coded counters cross, each through two flops named
// *_sync_q1/*_sync_q2 (ASYNC_REG; the kernel XDC constrains the paths into *_sync_q1 with
// set_max_delay -datapath_only): the number of committed frames (s_clk -> m_clk, +1 per
// frame, taken from a flop) and the read pointer (m_clk -> s_clk, +1 per beat). The read
// side issues a RAM read only for a beat of a committed frame: it counts the tlast beats it
// has read (a tlast bit per entry, kept in an asynchronously read LUTRAM of 64-entry banks)
// against the committed frame count. The write pointer never crosses, so its roll-backs are
// local. Every decision on either side starts at flops: the tlast RAM is written through a
// register stage (one write-enable flop per bank), and the read side registers the
// frame-available compare and the tlast bit of the next entry (read ahead).
// Storage: {tkeep, tdata} in one simple dual-port RAM of 2**DEPTH_LOG2 entries, written on
// s_clk, read on m_clk into a RAM output register (BRAM; LUTRAM at small depths), then the
// registered m_axis outputs (nothing combinational from m_axis_tready to an output).
// Latency (read side idle): the s_clk edge after the one that takes a frame's tlast beat
// writes its tlast bit and updates the Gray frame count; the next m_clk edges are the two
// synchroniser edges, the frame-available edge, the RAM read edge and the output register
// edge, so the first beat is on m_axis after the 5th m_clk edge strictly after that s_clk
// edge (1 s_clk period + 4 to 5 m_clk periods after the tlast beat was taken) and taken at
// the 6th at the earliest (tb/unit/test_rtl_axis_async_fifo checks 1 s_clk + 5..6 m_clk
// periods at every clock ratio). A read frees its entry for the write side after 1 m_clk
// edge + 3 s_clk edges (+ phase).
// Capacity: 2**DEPTH_LOG2 beats in the RAM, plus 2 in the read pipeline.
// Throughput: one beat per cycle on each side.
// Reset: s_rst and m_rst (each synchronous to its clock, active high) must be asserted
// together (the kernel derives both from one asynchronous reset, bouncer_reset_sync).
`default_nettype none
module bouncer_axis_async_fifo #(
  parameter int DATA_W     = 64,
  parameter int DEPTH_LOG2 = 9,   // beats
  parameter int FRAME_DROP = 0    // 1: never back-pressure, drop whole frames when full
) (
  input  wire                 s_clk,
  input  wire                 s_rst,
  input  wire  [DATA_W-1:0]   s_axis_tdata,
  input  wire  [DATA_W/8-1:0] s_axis_tkeep,
  input  wire                 s_axis_tlast,
  input  wire                 s_axis_tvalid,
  output logic                s_axis_tready,
  output logic                s_good_frame,   // s_clk pulse: a frame was stored
  output logic                s_drop_frame,   // s_clk pulse: a frame was dropped whole

  input  wire                 m_clk,
  input  wire                 m_rst,
  output logic [DATA_W-1:0]   m_axis_tdata,
  output logic [DATA_W/8-1:0] m_axis_tkeep,
  output logic                m_axis_tlast,
  output logic                m_axis_tvalid,
  input  wire                 m_axis_tready
);

  localparam int KW = DATA_W / 8;
  localparam int AW = DEPTH_LOG2;
  localparam int EW = DATA_W + KW;   // {tkeep, tdata}; tlast lives in last_mem

  function automatic logic [AW:0] bin2gray(input logic [AW:0] b);
    bin2gray = b ^ (b >> 1);
  endfunction

  logic [EW-1:0] mem [1 << AW];
  // tlast of every entry: LUTRAM read asynchronously by the read side, in banks of 64 entries
  // (LB bank-select bits) so that each bank's write enable is one flop (lw_we_q)
  localparam int LB  = (AW > 6) ? AW - 6 : 0;
  localparam int LAW = AW - LB;
  localparam int NLB = 1 << LB;

  // ---------------------------------------------------------------- write side (s_clk)
  // Pointers are kept in binary (RAM address, increments) and in Gray code (comparisons with
  // the synchronised read pointer). full and "every stored beat is uncommitted" are flops,
  // computed from the next pointer values, so s_axis_tready and the write decisions start at
  // a flop. The Gray code one write ahead (wr_inc_gray_q, commit_inc_gray_q) is kept too, so
  // no increment sits in front of those comparisons.
  localparam logic [AW:0] GRAY_HALF = (AW + 1)'(3) << (AW - 1);  // Gray of +2**AW: top 2 bits
  logic [AW:0] wr_q, wr_d;           // speculative write pointer
  logic [AW:0] wr_gray_q, wr_gray_d, wr_inc_gray_q, wr_inc_gray_d;
  logic [AW:0] commit_q, commit_d;   // end of the last committed frame
  logic [AW:0] commit_gray_q, commit_gray_d, commit_inc_gray_q, commit_inc_gray_d;
  logic [AW:0] fcnt_q, fcnt_d;       // committed frames (mod 2**(AW+1)), binary
  logic [AW:0] fcnt_gray_q;          // the same in Gray code a cycle later: crosses to m_clk
  (* ASYNC_REG = "TRUE" *) logic [AW:0] rd_gray_sync_q1;
  (* ASYNC_REG = "TRUE" *) logic [AW:0] rd_gray_sync_q2;
  logic [AW:0] wr_inc2_gray, fcnt_inc;
  logic        full_q;               // wr - rd == 2**AW (rd as synchronised)
  logic        commit_at_rd_q;       // commit == rd: every stored beat is uncommitted
  logic        dropping_q, dropping_d;
  logic        oversize, wr_en, take;
  logic        drop_d, good_d, drop_q, good_q;
  logic [AW:0] rd_gray_q;            // read side's Gray pointer (m_clk flop)
  // The tlast RAM is written one cycle after the beat is taken (registered write port,
  // decoded bank enables); the frame count's Gray code follows fcnt_q one cycle later too, so
  // a frame's count never crosses before its last tlast bit is written.
  logic [NLB-1:0] lw_we_q;
  logic [LAW-1:0] lw_addr_q;
  logic           lw_last_q;

  // full, and every stored beat belongs to the frame being written: it can never fit
  assign oversize = full_q && commit_at_rd_q;
  assign s_axis_tready = (FRAME_DROP != 0) || dropping_q || !full_q || oversize;
  assign take         = s_axis_tvalid && s_axis_tready;
  assign wr_inc2_gray = bin2gray(wr_q + (AW + 1)'(2));
  assign fcnt_inc     = fcnt_q + 1'b1;
  // keep: each comparison stays a net of its own, for a timing tool to find. Each is a
  // bouncer_eq_sliced (two LUT levels from the flops): ABC, mapping the flattened kernel,
  // otherwise spread a 12-bit equality over 3.25 levels and full_q missed the 322 MHz budget.
  logic [AW:0] rd_half;
  assign rd_half = rd_gray_sync_q2 ^ GRAY_HALF;
  (* keep *) logic eq_full_wr, eq_full_commit, eq_full_inc, eq_rd_commit, eq_rd_inc;
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_full_wr (.a(wr_gray_q), .b(rd_half), .eq(eq_full_wr));
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_full_commit (.a(commit_gray_q), .b(rd_half),
                                                    .eq(eq_full_commit));
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_full_inc (.a(wr_inc_gray_q), .b(rd_half), .eq(eq_full_inc));
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_rd_commit (.a(commit_gray_q), .b(rd_gray_sync_q2),
                                                  .eq(eq_rd_commit));
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_rd_inc (.a(wr_inc_gray_q), .b(rd_gray_sync_q2),
                                               .eq(eq_rd_inc));

  always_comb begin
    wr_d              = wr_q;
    wr_gray_d         = wr_gray_q;
    wr_inc_gray_d     = wr_inc_gray_q;
    commit_d          = commit_q;
    commit_gray_d     = commit_gray_q;
    commit_inc_gray_d = commit_inc_gray_q;
    fcnt_d            = fcnt_q;
    dropping_d        = dropping_q;
    drop_d            = 1'b0;
    good_d            = 1'b0;
    wr_en             = 1'b0;
    if (take) begin
      if (dropping_q) begin
        if (s_axis_tlast) dropping_d = 1'b0;
      end else if (full_q) begin
        wr_d          = commit_q;
        wr_gray_d     = commit_gray_q;
        wr_inc_gray_d = commit_inc_gray_q;
        drop_d        = 1'b1;
        dropping_d    = !s_axis_tlast;
      end else begin
        wr_en         = 1'b1;
        wr_d          = wr_q + 1'b1;
        wr_gray_d     = wr_inc_gray_q;
        wr_inc_gray_d = wr_inc2_gray;
        if (s_axis_tlast) begin
          commit_d          = wr_q + 1'b1;
          commit_gray_d     = wr_inc_gray_q;
          commit_inc_gray_d = wr_inc2_gray;
          fcnt_d            = fcnt_inc;
          good_d            = 1'b1;
        end
      end
    end
  end

  always_ff @(posedge s_clk) begin
    if (wr_en) mem[wr_q[AW-1:0]] <= {s_axis_tkeep, s_axis_tdata};
    for (int b = 0; b < NLB; b++) lw_we_q[b] <= wr_en && ((wr_q[AW-1:0] >> LAW) == AW'(b));
    lw_addr_q         <= wr_q[LAW-1:0];
    lw_last_q         <= s_axis_tlast;
    wr_q              <= wr_d;
    wr_gray_q         <= wr_gray_d;
    wr_inc_gray_q     <= wr_inc_gray_d;
    commit_q          <= commit_d;
    commit_gray_q     <= commit_gray_d;
    commit_inc_gray_q <= commit_inc_gray_d;
    fcnt_q            <= fcnt_d;
    fcnt_gray_q       <= bin2gray(fcnt_q);
    // against the synchronised read pointer of this cycle: the write side sees the read
    // pointer one s_clk later, which only makes full more conservative (the read pointer
    // never moves back, so wr - rd never exceeds 2**AW). The three candidates are compared
    // in parallel and the decision only selects (what wr_gray_d and commit_gray_d hold), as
    // and/or: Yosys' opt_share turns a mux of compares with a shared operand into one compare
    // behind a mux of the other operands (wr_en and drop_d are never both set).
    full_q            <= (wr_en && eq_full_inc) || (drop_d && eq_full_commit)
                      || (!wr_en && !drop_d && eq_full_wr);
    commit_at_rd_q    <= (good_d && eq_rd_inc) || (!good_d && eq_rd_commit);
    dropping_q        <= dropping_d;
    drop_q            <= drop_d;
    good_q            <= good_d;
    rd_gray_sync_q1   <= rd_gray_q;
    rd_gray_sync_q2   <= rd_gray_sync_q1;
    if (s_rst) begin
      wr_q              <= '0;
      wr_gray_q         <= '0;
      wr_inc_gray_q     <= (AW + 1)'(1);   // Gray of 1
      commit_q          <= '0;
      commit_gray_q     <= '0;
      commit_inc_gray_q <= (AW + 1)'(1);
      fcnt_q            <= '0;
      fcnt_gray_q       <= '0;
      lw_we_q           <= '0;
      full_q            <= 1'b0;
      commit_at_rd_q    <= 1'b1;
      dropping_q        <= 1'b0;
      drop_q            <= 1'b0;
      good_q            <= 1'b0;
      rd_gray_sync_q1   <= '0;
      rd_gray_sync_q2   <= '0;
    end
  end

  // each bank's entry at rd_q and at rd_q + 1 (read side, asynchronous reads)
  logic [NLB-1:0] lbank_cur, lbank_inc;
  logic [AW-1:0]  rd_q;                 // read side: next entry to read (RAM address)
  logic [AW:0]    rd_inc_q;             // read side: rd_q + 1, with the wrap bit
  // Two copies, each with one read port: with one array, Yosys merges two read ports whose
  // outputs are muxed into one port behind an address mux, which puts the read decision in
  // front of the RAM read.
  for (genvar b = 0; b < NLB; b++) begin : g_lbank
    logic last_mem_cur [1 << LAW];
    logic last_mem_inc [1 << LAW];
    always_ff @(posedge s_clk) begin
      if (lw_we_q[b]) begin
        last_mem_cur[lw_addr_q] <= lw_last_q;
        last_mem_inc[lw_addr_q] <= lw_last_q;
      end
    end
    assign lbank_cur[b] = last_mem_cur[rd_q[LAW-1:0]];
    assign lbank_inc[b] = last_mem_inc[rd_inc_q[LAW-1:0]];
  end

  assign s_good_frame = good_q;
  assign s_drop_frame = drop_q;

  // ---------------------------------------------------------------- read side (m_clk)
  // avail_q (the entry at rd_q belongs to a committed frame) is a flop: the synchronised frame
  // count is compared with the tlast count and with the tlast count + 1 side by side, and the
  // tlast beat being read (bump) only selects. It compares this cycle's synchronised count, so
  // it lags it by one edge, which only delays a frame (the count never moves back, and
  // tcnt <= fcnt always holds, so "!=" means "<"). The tlast count is kept one step ahead
  // (tcnt_inc_q, tcnt_inc_gray_q), so no increment sits behind the read decision either.
  // The tlast bit of the entry at rd_q is a flop too (rd_last_q): every cycle it loads the
  // bit of the entry that will be at rd_q next (rd_q or rd_q + 1, both read side by side).
  // When avail_q says an entry is committed, its bit was written at least three read-clock
  // edges before the edge that loaded rd_last_q; a value loaded earlier, while the entry was
  // not committed, is never used (ram_re needs avail_q) and is reloaded every cycle.
  (* ASYNC_REG = "TRUE" *) logic [AW:0] fcnt_gray_sync_q1;
  (* ASYNC_REG = "TRUE" *) logic [AW:0] fcnt_gray_sync_q2;
  logic [AW:0]       tcnt_inc_q;     // tlast beats read from the RAM + 1, binary
  logic [AW:0]       tcnt_gray_q;    // tlast beats read, Gray code (compared with the sync'd count)
  logic [AW:0]       tcnt_inc_gray_q;  // the same + 1
  logic              avail_q;        // the entry at rd_q belongs to a committed frame
  logic              rd_last_q;      // the entry at rd_q is a tlast beat
  logic              last_cur, last_inc;
  // keep: each compare and the read decision stay nets of their own. ABC maps the whole
  // flattened kernel against its deepest path (an ap_clk one) and otherwise folds the
  // decision into the compares on this 322 MHz side (5.25 levels in a trial, 3.5 alone)
  (* keep *) logic   bump;           // a tlast beat is read this cycle
  (* keep *) logic   ne_same, ne_inc;
  logic [EW-1:0]     ram_q;          // RAM read register
  logic              ram_last_q;
  logic              ram_v_q;        // ram_q holds a beat not yet in the output register
  logic              ram_re, out_load, move;
  logic              out_v_q;
  logic [DATA_W-1:0] out_data_q;
  logic [KW-1:0]     out_keep_q;
  logic              out_last_q;

  if (LB == 0) begin : g_lone
    assign last_cur = lbank_cur[0];
    assign last_inc = lbank_inc[0];
  end else begin : g_lsel
    assign last_cur = lbank_cur[rd_q[AW-1:LAW]];
    assign last_inc = lbank_inc[rd_inc_q[AW-1:LAW]];
  end
  assign out_load = !out_v_q || m_axis_tready;
  assign move     = ram_v_q && out_load;
  assign ram_re   = avail_q && (!ram_v_q || move);
  assign bump     = ram_re && rd_last_q;
  logic eq_same, eq_inc;   // sliced, like the write side's compares
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_same (.a(fcnt_gray_sync_q2), .b(tcnt_gray_q), .eq(eq_same));
  bouncer_eq_sliced #(.W(AW + 1)) u_eq_inc (.a(fcnt_gray_sync_q2), .b(tcnt_inc_gray_q), .eq(eq_inc));
  assign ne_same  = !eq_same;
  assign ne_inc   = !eq_inc;

  always_ff @(posedge m_clk) begin
    if (ram_re) begin
      ram_q      <= mem[rd_q];
      ram_last_q <= rd_last_q;
      rd_q       <= rd_inc_q[AW-1:0];
      rd_inc_q   <= rd_inc_q + 1'b1;
      rd_gray_q  <= bin2gray(rd_inc_q);
    end
    rd_last_q <= ram_re ? last_inc : last_cur;
    if (bump) begin
      tcnt_inc_q      <= tcnt_inc_q + 1'b1;
      tcnt_gray_q     <= tcnt_inc_gray_q;
      tcnt_inc_gray_q <= bin2gray(tcnt_inc_q + 1'b1);
    end
    // and/or, not a mux: Yosys' opt_share turns a mux of two compares with a shared operand
    // into one compare behind a mux of the other operands, which puts the whole read
    // decision in front of a 10-bit compare
    avail_q <= (bump && ne_inc) || (!bump && ne_same);
    if (ram_re) ram_v_q <= 1'b1;
    else if (move) ram_v_q <= 1'b0;
    if (out_load) begin
      out_v_q    <= ram_v_q;
      out_data_q <= ram_q[DATA_W-1:0];
      out_keep_q <= ram_q[DATA_W +: KW];
      out_last_q <= ram_last_q;
    end
    fcnt_gray_sync_q1 <= fcnt_gray_q;
    fcnt_gray_sync_q2 <= fcnt_gray_sync_q1;
    if (m_rst) begin
      rd_q              <= '0;
      rd_inc_q          <= (AW + 1)'(1);
      rd_last_q         <= 1'b0;
      rd_gray_q         <= '0;
      tcnt_inc_q        <= (AW + 1)'(1);
      tcnt_gray_q       <= '0;
      tcnt_inc_gray_q   <= (AW + 1)'(1);   // Gray of 1
      avail_q           <= 1'b0;
      ram_v_q           <= 1'b0;
      out_v_q           <= 1'b0;
      fcnt_gray_sync_q1 <= '0;
      fcnt_gray_sync_q2 <= '0;
    end
  end

  assign m_axis_tvalid = out_v_q;
  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;

endmodule
`default_nettype wire
