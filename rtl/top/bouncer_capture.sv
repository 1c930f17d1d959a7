// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_capture: on-card capture of the last frames of both port directions, read through
// the CAP_* registers.
//
// Two rings, one per direction (dir 0: RX as it arrives on s_axis_rx, dir 1: TX as it leaves
// on m_axis_tx), each of 2**LOG2 slots. A slot holds the frame's first SNAP bytes (128: the
// headers and the start of the MPA payload) and its header: original length in bytes, the
// stamp of its first beat and the low 32 bits of the stamp of its last beat. A stamp is the
// CYCLE counter's value at the clock edge that transferred the beat (the value CYCLE has in
// the cycle after it), the cycle numbering the co-simulation uses for its own capture.
//
// Ring accounting (per direction): wr_q is the slot the next frame goes into; oldest_q and
// count_q describe the frames held, the oldest first. A frame is captured when its first beat
// arrives while FREEZE is 0. When the ring is full, that first beat gives up the oldest frame
// (the slot about to be overwritten leaves the held set before any byte of it changes), and
// the frame joins the held set at its last beat. A frame that FREEZE catches in progress is
// abandoned (its slot is not held). CLEAR empties both rings. The header (length, stamps)
// reaches the slot 3 cycles after the last beat.
//
// Readout (host: set FREEZE, read CAP_STATUS, then per frame and word write CAP_INDEX and
// read): CAP_INDEX names a direction, a frame (0 = the oldest held) and a data word; three
// cycles after CAP_INDEX changes, CAP_DATA holds that word (bytes 4w..4w+3 of the frame, byte
// 4w in bits 7:0) and CAP_LEN / CAP_STAMP_* that frame's header. Indices at or past the held
// count read stale slots: the host reads only what CAP_STATUS counts. All readout values are
// flops (registered RAM reads), so the register file's read mux sees no RAM path.
`default_nettype none
module bouncer_capture #(
  parameter int DATA_W = 64,  // port width: 64 or 512
  parameter int LOG2   = 4    // slots per direction: 2**LOG2 (1..6)
) (
  input  wire                   clk,
  input  wire                   rst,
  input  wire  [63:0]           cycle_count,

  // the two ports' beats (valid = tvalid && tready), [0] RX, [1] TX
  input  wire  [2*DATA_W-1:0]   s_tdata,
  input  wire  [2*DATA_W/8-1:0] s_tkeep,
  input  wire  [1:0]            s_tlast,
  input  wire  [1:0]            s_valid,

  input  wire                   freeze,       // CAP_CTRL.FREEZE
  input  wire                   clear,        // pulse: CAP_CTRL.CLEAR written 1
  input  wire                   sel_dir,      // CAP_INDEX.DIR
  input  wire  [LOG2-1:0]       sel_frame,    // CAP_INDEX.FRAME (frames >= 2**LOG2 alias)
  input  wire  [4:0]            sel_word,     // CAP_INDEX.WORD

  output logic [7:0]            rx_count,     // frames held per direction
  output logic [7:0]            tx_count,
  output logic [31:0]           rd_data,      // CAP_DATA
  output logic [15:0]           rd_len,       // CAP_LEN
  output logic [63:0]           rd_stamp,     // CAP_STAMP_LO/HI
  output logic [31:0]           rd_end        // CAP_END_LO
);
  localparam int KW    = DATA_W / 8;
  localparam int SNAP  = 128;                       // bytes kept per frame
  localparam int SB    = SNAP / KW;                 // beats kept: 16 at 64 bit, 2 at 512
  localparam int SBW   = $clog2(SB);
  localparam int NS    = 1 << LOG2;
  localparam int WPB   = KW / 4;                    // 32-bit words per beat: 2 or 16
  localparam int WPBW  = $clog2(WPB);
  localparam int AW    = LOG2 + SBW;                // data RAM address
  localparam int GB    = (KW < 16) ? KW : 16;       // tkeep bits per popcount group
  localparam int NG    = KW / GB;
  localparam int GW    = $clog2(GB + 1);
  localparam int HW    = 16 + 64 + 32;              // header: length, first stamp, end stamp

  // ------------------------------------------------------------------ parameter checks
  if (!(DATA_W == 64 || DATA_W == 512)) begin : g_bad_data_w
    $error("bouncer_capture: DATA_W must be 64 or 512");
  end
  if (LOG2 < 1 || LOG2 > 6) begin : g_bad_log2
    $error("bouncer_capture: LOG2 must be 1..6 (CAP_INDEX.FRAME is 6 bits)");
  end

  logic [31:0]   d_word [2];    // per direction: the selected data word, registered
  logic [HW-1:0] d_hdr [2];     // per direction: the selected frame's header, registered
  logic [7:0]    d_count [2];

  for (genvar d = 0; d < 2; d++) begin : g_dir
    logic [DATA_W-1:0] tdata;
    logic [KW-1:0]     tkeep;
    logic              fire, sof, eof;
    assign tdata = s_tdata[d*DATA_W +: DATA_W];
    assign tkeep = s_tkeep[d*KW +: KW];
    assign fire  = s_valid[d];

    // ---------------------------------------------------------------- frame tracking
    logic            in_frame_q, cap_q, cap_now;
    logic [15:0]     beats_q;                 // beats of the frame so far (saturating)
    logic [LOG2-1:0] wr_q, oldest_q;
    logic [LOG2:0]   count_q;
    logic            full;
    assign sof     = fire && !in_frame_q;
    assign eof     = fire && s_tlast[d];
    assign cap_now = sof ? !freeze : (cap_q && !freeze);  // this beat is captured
    assign full    = count_q == (LOG2 + 1)'(NS);

    always_ff @(posedge clk) begin
      if (fire) begin
        in_frame_q <= !s_tlast[d];
        cap_q      <= cap_now;
        beats_q    <= sof ? 16'd1 : (beats_q == 16'hFFFF ? beats_q : beats_q + 16'd1);
      end else if (freeze) begin
        cap_q <= 1'b0;
      end
      // held set: the first captured beat of a frame into a full ring gives up the oldest;
      // the last captured beat adds the frame
      if (clear) begin
        oldest_q <= wr_q;
        count_q  <= '0;
      end else begin
        if (sof && cap_now && full) oldest_q <= oldest_q + LOG2'(1);
        if (eof && cap_now) begin
          wr_q    <= wr_q + LOG2'(1);
          count_q <= count_q + (LOG2 + 1)'(!(sof && full));
        end else if (sof && cap_now && full) begin
          count_q <= count_q - (LOG2 + 1)'(1);
        end
      end
      if (rst) begin
        in_frame_q <= 1'b0;
        cap_q      <= 1'b0;
        beats_q    <= '0;
        wr_q       <= '0;
        oldest_q   <= '0;
        count_q    <= '0;
      end
    end

    // ---------------------------------------------------------------- data RAM
    logic [DATA_W-1:0] mem [NS*SB];
    logic [AW-1:0]     wa, ra;
    logic [LOG2-1:0]   rd_slot;
    logic [15:0]       beat_idx;                // index of this beat in the frame
    assign beat_idx = sof ? 16'd0 : beats_q;
    assign wa       = {wr_q, beat_idx[SBW-1:0]};
    assign rd_slot  = oldest_q + sel_frame;
    if (SBW > 0) begin : g_ra
      if (WPBW > 0) begin : g_ra_w
        assign ra = {rd_slot, sel_word[4 -: SBW]};
      end else begin : g_ra_nw
        assign ra = {rd_slot, sel_word[SBW-1:0]};
      end
    end else begin : g_ra_slot
      assign ra = rd_slot;
    end

    logic [DATA_W-1:0] row_q;
    logic [WPBW-1:0]   word_q;
    always_ff @(posedge clk) begin
      if (fire && cap_now && beat_idx < 16'(SB)) mem[wa] <= tdata;
      row_q  <= mem[ra];
      word_q <= sel_word[WPBW-1:0];
    end
    // the word of the row: a WPB:1 mux from flops
    logic [31:0] word_sel, word_o_q;
    always_comb begin
      word_sel = '0;
      for (int k = 0; k < WPB; k++)
        if (word_q == WPBW'(k)) word_sel = row_q[32*k +: 32];
    end
    always_ff @(posedge clk) word_o_q <= word_sel;
    assign d_word[d] = word_o_q;

    // ---------------------------------------------------------------- header pipeline
    // h0 (the cycle after the last beat): slot, beats, last tkeep, end stamp = CYCLE now;
    // h1: popcount groups of the last tkeep, first stamp (first_q: CYCLE in the cycle after
    // the first beat, still this frame's: the next frame's first beat is at h0 at the
    // earliest, so it reloads first_q at the end of h1); h2: length, written to the slot.
    logic            first_pend_q;
    logic [63:0]     first_q;
    logic            h0_v_q, h1_v_q, h2_v_q;
    logic [LOG2-1:0] h0_slot_q, h1_slot_q, h2_slot_q;
    logic [15:0]     h0_beats_q, h1_beats_q;
    logic [KW-1:0]   h0_keep_q;
    logic [NG*GW-1:0] h1_grp_q, grp_cnt;
    logic [31:0]     h1_end_q, h2_end_q;
    logic [63:0]     h2_first_q;
    logic [15:0]     h2_len_q, last_bytes;
    logic [HW-1:0]   hmem [NS];
    logic [HW-1:0]   hdr_o_q;
    assign d_hdr[d] = hdr_o_q;

    always_comb begin
      grp_cnt = '0;
      for (int g = 0; g < NG; g++)
        for (int i = g * GB; i < (g + 1) * GB; i++)
          grp_cnt[g*GW +: GW] = grp_cnt[g*GW +: GW] + GW'(h0_keep_q[i]);
      last_bytes = '0;
      for (int g = 0; g < NG; g++) last_bytes = last_bytes + 16'(h1_grp_q[g*GW +: GW]);
    end

    always_ff @(posedge clk) begin
      first_pend_q <= sof && cap_now;
      if (first_pend_q) first_q <= cycle_count;
      h0_v_q     <= eof && cap_now;
      h0_slot_q  <= wr_q;
      h0_beats_q <= sof ? 16'd1 : (beats_q == 16'hFFFF ? beats_q : beats_q + 16'd1);
      h0_keep_q  <= tkeep;
      h1_v_q     <= h0_v_q;
      h1_slot_q  <= h0_slot_q;
      h1_beats_q <= h0_beats_q;
      h1_grp_q   <= grp_cnt;
      h1_end_q   <= cycle_count[31:0];
      h2_v_q     <= h1_v_q;
      h2_slot_q  <= h1_slot_q;
      h2_len_q   <= ((h1_beats_q - 16'd1) << $clog2(KW)) + last_bytes;
      h2_first_q <= first_q;
      h2_end_q   <= h1_end_q;
      if (h2_v_q) hmem[h2_slot_q] <= {h2_end_q, h2_first_q, h2_len_q};
      hdr_o_q <= hmem[rd_slot];
      if (rst) begin
        first_pend_q <= 1'b0;
        h0_v_q       <= 1'b0;
        h1_v_q       <= 1'b0;
        h2_v_q       <= 1'b0;
      end
    end

    assign d_count[d] = 8'(count_q);
  end

  // ------------------------------------------------------------------ readout
  logic        dir_q;
  logic [31:0] data_q;
  logic [HW-1:0] hdr_q;
  always_ff @(posedge clk) begin
    dir_q  <= sel_dir;
    data_q <= dir_q ? d_word[1] : d_word[0];
    hdr_q  <= sel_dir ? d_hdr[1] : d_hdr[0];
  end
  assign rd_data  = data_q;
  assign rd_len   = hdr_q[15:0];
  assign rd_stamp = hdr_q[16 +: 64];
  assign rd_end   = hdr_q[80 +: 32];
  assign rx_count = d_count[0];
  assign tx_count = d_count[1];

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      // never more frames held than slots
      assert (d_count[0] <= 8'(NS) && d_count[1] <= 8'(NS));
    end
  end
`endif

endmodule
`default_nettype wire
