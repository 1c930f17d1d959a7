// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_mpa_reject_builder: builds the Ethernet/802.1Q/IPv4/TCP/MPA-reply(R=1) frames of
// one MPA reject and streams them on an AXI-Stream master, DATA_W bits per beat (64 or 512).
//
// The frames are exactly docs/reject-frame.md. Usage:
//   1. pulse pd_clear, hold pd_len; write the private data as 64-bit words in index order
//      (pd_wr_idx = word index 0, 1, 2, ..., byte 0 of the PD in bits [7:0] of word 0), from
//      the cycle of pd_clear on (a word written with pd_clear is the PD's first). The PD
//      checksum accumulates as the words are written, so the DMA can feed it directly; it
//      takes a word two cycles after its write (the word with bytes past pd_len zeroed, then
//      the sum). The running sum in front of each word is kept too (the prefix sums that
//      give the checksum of any byte range of the PD, for the segments below).
//   2. start (valid/ready) with the connection context, the WQE options and the peer's MSS,
//      at the earliest in the cycle after the last PD word was written.
//   3. the frames stream out; first_beat pulses on the first handshake of the first frame,
//      done on the last handshake of the last frame.
//
// Segments. The MPA reply (20 bytes, the 4-byte IRD/ORD word when enhanced, the PD: M bytes)
// goes out as one frame when M <= start_mss, and otherwise as seg_count = ceil(M / mss)
// frames back to back (RFC 9293 3.7.1: the peer's MSS bounds every segment). Segment k
// carries the MPA bytes [k mss, min((k+1) mss, M)): all but the last exactly mss bytes. Its
// sequence number is SND_NXT + k mss, its IPv4 ID is IP_ID + k (mod 2^16), its flags ACK|PSH
// with FIN only on the last segment (when start_fin), and it has its own IPv4 and TCP
// checksums. start_mss = 0 means no bound (one frame); otherwise the caller guarantees
// start_mss >= 48 (Linux's tcp_min_snd_mss), which also bounds seg_count to 12.
//
// Ports added for the segments:
//   start_mss  [15:0] with start: the peer's MSS in bytes (0: no bound)
//   seg_count  [3:0]  frames this reject sends (1..12), valid from 2 cycles after start until
//                     the next start. The caller advances IP_ID by seg_count and SND_NXT by
//                     seq_advance.
//
// Latency, one frame (M <= mss): start -> first beat valid = 3 cycles (field latch with the
// checksum partial sums, computed from the start inputs; checksum totals; fold + header
// register). Throughput: one beat per cycle with tready.
// Latency, several frames: start -> first beat valid = 11 cycles. The first beat of each
// later segment is valid 13 cycles after the last beat of the segment before became valid
// (S_SEG below: the segment's checksums from the prefix sums, and the pre-load of its
// realigned PD words; it starts when that last beat is in the beat register, so a wait for
// tready overlaps it). Within a frame one beat per cycle with tready, no bubbles.
// The PD must not be written from start until done: the frames read it while streaming.
// seq_advance (MPA bytes + FIN: the whole reply) and frame_len (one frame: its length;
// several: the first segment's length, 54 / 58 (VLAN) + mss) are valid from 1 cycle after
// start until the next start.
`default_nettype none
module bouncer_mpa_reject_builder #(
  parameter int DATA_W = 64
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire                 pd_clear,
  input  wire [9:0]           pd_len,
  input  wire                 pd_wr_en,
  input  wire [6:0]           pd_wr_idx,
  input  wire [63:0]          pd_wr_data,

  input  wire                 start_valid,
  output logic                start_ready,
  input  wire [511:0]         start_ctx,      // bouncer_regs_pkg::cm_ctx_t
  input  wire                 start_fin,
  input  wire                 start_ird_ord_valid,
  input  wire [31:0]          start_ird_ord,
  input  wire [15:0]          start_mss,      // peer's MSS; 0: no bound

  output logic [15:0]         frame_len,
  output logic [15:0]         seq_advance,
  output logic [3:0]          seg_count,
  output logic                first_beat,
  output logic                done,

  output logic [DATA_W-1:0]   m_axis_tdata,
  output logic [DATA_W/8-1:0] m_axis_tkeep,
  output logic                m_axis_tlast,
  output logic                m_axis_tvalid,
  input  wire                 m_axis_tready
);

  localparam int WB        = DATA_W / 8;            // bytes per beat
  localparam int LB        = $clog2(WB);            // log2 bytes per beat
  localparam int LANES     = WB / 8;                // 64-bit lanes per beat
  localparam int PD_WORDS_LOG2 = $clog2(512 / WB + 2);
  localparam int HDR_BYTES = (2 * WB > 96) ? 2 * WB : 96;

  // header lengths: 12 (MACs) + optional 4 (VLAN) + 62 (type, IPv4, TCP, MPA) + optional 4 (IRD/ORD)
  localparam int H0 = 74;
  localparam int H1 = 78;
  localparam int H2 = 82;
  // Ethernet + IPv4 + TCP header lengths (a segment after the first carries PD bytes only),
  // the beat that holds the first PD byte and the header bytes in front of it in that beat
  localparam int HT0 = 54;
  localparam int HT1 = 58;
  localparam int QC0 = HT0 / WB;
  localparam int QC1 = HT1 / WB;
  localparam int HL0 = HT0 % WB;
  localparam int HL1 = HT1 % WB;

  // "MPA ID Rep Frame", wire byte 0 in bits [7:0]
  localparam logic [127:0] MPA_KEY_REP = 128'h656D6172_46207065_52204449_2041504D;
  localparam logic [19:0]  KEY_SUM = 20'h4D50 + 20'h4120 + 20'h4944 + 20'h2052
                                   + 20'h6570 + 20'h2046 + 20'h7261 + 20'h6D65;

  // ------------------------------------------------------------------ PD buffer
  // One 64-bit-wide memory per lane, so each PD word is a plain single-lane write. pd_cur is
  // the word at rd_word_q. DATA_W = 64 (one 128-word lane, a block RAM): read registered
  // from the next read address (rd_word = the next rd_word_q), i.e. lane_mem[rd_word_q] as
  // of the previous cycle, a read-first port without the write bypass that an asynchronous
  // read behind the address register needs in a block RAM (an address compare after the
  // beat logic, a mux after the RAM). The PD is written before start and read while
  // streaming, never both in one cycle, so both reads give the same data. DATA_W = 512
  // (16-word lanes, distributed RAM): asynchronous read at rd_word_q, no output registers.
  logic [PD_WORDS_LOG2-1:0] rd_word, rd_word_q;
  logic [DATA_W-1:0]        pd_cur;

  for (genvar l = 0; l < LANES; l++) begin : g_lane
    logic [63:0] lane_mem [1 << PD_WORDS_LOG2];
    always_ff @(posedge clk) begin
      if (pd_wr_en && ((LANES == 1) || (32'(pd_wr_idx) % LANES == l)))
        lane_mem[PD_WORDS_LOG2'(32'(pd_wr_idx) / LANES)] <= pd_wr_data;
    end
    if (LANES == 1) begin : g_rd_sync
      always_ff @(posedge clk) pd_cur[64*l +: 64] <= lane_mem[rd_word];
    end else begin : g_rd_async
      assign pd_cur[64*l +: 64] = lane_mem[rd_word_q];
    end
  end

  // PD checksum, bytes past pd_len count as zero padding. Two steps, so the PD length, the
  // byte mask, the four-word sum and the accumulation are not one path: the written word is
  // registered already masked (pdw_data_q: bytes past pd_len zeroed), and summed into
  // pd_sum_q in the next cycle. pd_sum_q holds the PD's sum from the second cycle after its
  // last word, which the totals stage (the cycle after start) reads: start must not come in
  // the cycle of the last write. A pd_clear without a word clears the sum at once (an empty
  // PD may start in the cycle of its pd_clear) and drops a word still in flight (it belonged
  // to the PD before).
  //
  // Byte l of word pd_wr_idx is PD iff 8 pd_wr_idx + l < pd_len: the word lies wholly inside
  // the PD (pd_len[9:3] > pd_wr_idx), or it is the PD's last, partial word
  // (pd_len[9:3] == pd_wr_idx) and l < pd_len[2:0]. A compare, an equality and a decode side
  // by side, no subtraction in front of them.
  logic [31:0] pd_sum_q;
  logic        pdw_v_q, pdw_clear_q;
  logic [6:0]  pdw_idx_q;
  logic [63:0] pdw_data_q;
  logic        pd_w_full, pd_w_last;
  logic [7:0]  pd_lo_mask, pd_bmask;
  logic [63:0] pd_wr_masked;
  always_comb begin
    pd_w_full  = (pd_len[9:3] > pd_wr_idx);
    pd_w_last  = (pd_len[9:3] == pd_wr_idx);
    pd_lo_mask = ~(8'hFF << pd_len[2:0]);              // bit l: l < pd_len[2:0]
    pd_bmask   = {8{pd_w_full}} | ({8{pd_w_last}} & pd_lo_mask);
    for (int l = 0; l < 8; l++) pd_wr_masked[8*l +: 8] = pd_wr_data[8*l +: 8] & {8{pd_bmask[l]}};
  end

  // number of ones among six bits, as bit logic (no adder cells)
  function automatic logic [2:0] count6(input logic a, input logic b, input logic c,
                                        input logic d, input logic e, input logic f);
    logic s1, c1, s2, c2, k;
    s1 = a ^ b ^ c;
    c1 = (a & b) | (a & c) | (b & c);
    s2 = d ^ e ^ f;
    c2 = (d & e) | (d & f) | (e & f);
    k  = s1 & s2;
    count6 = {(c1 & c2) | (c1 & k) | (c2 & k), c1 ^ c2 ^ k, s1 ^ s2};
  endfunction

  // a + b + c through one 3:2 step and one carry chain (bit 31's carry would leave the sum)
  function automatic logic [31:0] add3(input logic [31:0] a, input logic [31:0] b,
                                       input logic [31:0] c);
    logic [30:0] y;
    y    = (a[30:0] & b[30:0]) | (a[30:0] & c[30:0]) | (b[30:0] & c[30:0]);
    add3 = (a ^ b ^ c) + {y, 1'b0};
  endfunction

  // a + b + c + d + e + f (each below 2^28) as one 6:3 counter per bit column, a 3:2 step
  // and one carry chain, the same shape as the PD sum below
  function automatic logic [31:0] add6(input logic [31:0] a, input logic [31:0] b,
                                       input logic [31:0] c, input logic [31:0] d,
                                       input logic [31:0] e, input logic [31:0] f);
    logic [31:0] s, cy, dy;
    s  = '0;
    cy = '0;
    dy = '0;
    for (int i = 0; i < 28; i++)
      {dy[i+2], cy[i+1], s[i]} = count6(a[i], b[i], c[i], d[i], e[i], f[i]);
    add6 = add3(s, cy, dy);
  endfunction

  // The accumulation pd_sum_q + the word's four big-endian 16-bit words, as a compressor and
  // one carry chain instead of an adder tree: per bit column a 6:3 counter with one input 0
  // (the four word bits and the sum bit, with the clear: one LUT per output), then a 3:2 step on
  // the three counter vectors, then the add. All bitwise in front of the add, so Yosys
  // builds no adder cells there (its multi-operand adder tree was a LUT level deeper).
  logic [31:0] pda_acc, pda_s, pda_c, pda_d, pd_sum_next;
  logic [15:0] pda_w0, pda_w1, pda_w2, pda_w3;
  always_comb begin
    pda_acc = pdw_clear_q ? 32'd0 : pd_sum_q;   // a word written with pd_clear is the first
    pda_w0  = {pdw_data_q[7:0],   pdw_data_q[15:8]};
    pda_w1  = {pdw_data_q[23:16], pdw_data_q[31:24]};
    pda_w2  = {pdw_data_q[39:32], pdw_data_q[47:40]};
    pda_w3  = {pdw_data_q[55:48], pdw_data_q[63:56]};
    pda_s = pda_acc;
    pda_c = '0;
    pda_d = '0;
    for (int i = 0; i < 16; i++)
      {pda_d[i+2], pda_c[i+1], pda_s[i]} = count6(pda_w0[i], pda_w1[i], pda_w2[i], pda_w3[i],
                                                  pda_acc[i], 1'b0);
    pd_sum_next = add3(pda_s, pda_c, pda_d);
  end

  // Prefix sums: pfx_mem[w] = the sum of PD words 0 .. w-1 (the running sum in front of word
  // w, written as word w is summed; the words come in index order). The sum of the PD bytes
  // [0, b) is then pfx_mem[b / 8] plus the bytes of word b / 8 below b (F(b) below), and
  // the sum of a byte range [a, b) is F(b) - F(a). Below 2^24: at most 256 words of 0xFFFF.
  logic [23:0] pfx_mem [64];
  always_ff @(posedge clk) begin
    if (pdw_v_q && !pdw_idx_q[6]) pfx_mem[pdw_idx_q[5:0]] <= pda_acc[23:0];
  end

  always_ff @(posedge clk) begin
    pdw_v_q      <= pd_wr_en;
    pdw_clear_q  <= pd_clear;
    pdw_idx_q    <= pd_wr_idx;
    pdw_data_q   <= pd_wr_masked;
    // a word written with pd_clear is the first of the new PD
    if (pd_clear && !pd_wr_en) pd_sum_q <= '0;
    else if (pdw_v_q) pd_sum_q <= pd_sum_next;
    if (rst) begin
      pdw_v_q     <= 1'b0;
      pdw_clear_q <= 1'b0;
      pd_sum_q    <= '0;
    end
  end

  // ------------------------------------------------------------------ fields (stage 0)
  typedef enum logic [2:0] {S_IDLE, S_SUM2, S_FOLD, S_STREAM, S_SEG} state_t;
  state_t state_q;

  /* verilator lint_off UNUSEDSIGNAL */  // reserved and CQP-only bits
  bouncer_regs_pkg::cm_ctx_t ctx_q;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        fin_q;
  logic [31:0] ird_ord_q;
  // the frame's derived header fields, registered at the start from the start inputs (s_*
  // below), so the header image is only registers and constants. The per-segment fields
  // (sequence number, IPv4 ID and total length, FIN, checksums) are registers the segment
  // sequencer (S_SEG) rewrites for every segment.
  logic        enh_q;
  logic [15:0] pdl_q, ip_total_q, ipid_q;
  logic [31:0] seq_q;
  logic [7:0]  mflags_q, tflags;
  logic        tfin_q;
  logic [1:0]  hsel_q;                  // 0: H0, 1: H1, 2: H2, 3: a segment after the first

  assign start_ready = (state_q == S_IDLE);
  assign tflags      = 8'h18 | {7'd0, tfin_q};

  // the same fields from the start inputs: the checksum partial sums are taken at the start
  /* verilator lint_off UNUSEDSIGNAL */  // reserved and CQP-only bits
  bouncer_regs_pkg::cm_ctx_t sc;
  /* verilator lint_on UNUSEDSIGNAL */
  logic        s_enh;
  logic [15:0] s_pdl, s_ip_total, s_hlen, s_seq_adv, s_flen;
  logic [15:0] pl_4, pl_20, pl_21, pl_24, pl_25, pl_60, pl_64, pl_h0, pl_h1, pl_h2;
  logic [7:0]  s_mflags, s_tflags;
  logic [31:0] s_io, s_io_dflt;
  logic [16:0] s_io_sum;      // s_io[31:16] + s_io[15:0], without the select in front of the add
  always_comb begin
    sc         = start_ctx;
    s_enh      = (sc.req_rev == 8'd2) && sc.req_flags[4];
    // lengths as pd_len plus a constant each, added in parallel and selected afterwards, so
    // the request decode (s_enh) meets them after the carry chains rather than in front
    pl_4       = {6'd0, pd_len} + 16'd4;
    pl_20      = {6'd0, pd_len} + 16'd20;
    pl_21      = {6'd0, pd_len} + 16'd21;
    pl_24      = {6'd0, pd_len} + 16'd24;
    pl_25      = {6'd0, pd_len} + 16'd25;
    pl_60      = {6'd0, pd_len} + 16'd60;
    pl_64      = {6'd0, pd_len} + 16'd64;
    pl_h0      = {6'd0, pd_len} + 16'(H0);
    pl_h1      = {6'd0, pd_len} + 16'(H1);
    pl_h2      = {6'd0, pd_len} + 16'(H2);
    s_pdl      = s_enh ? pl_4 : {6'd0, pd_len};
    s_ip_total = s_enh ? pl_64 : pl_60;
    case ({s_enh, start_fin})
      2'b00:   s_seq_adv = pl_20;
      2'b01:   s_seq_adv = pl_21;
      2'b10:   s_seq_adv = pl_24;
      default: s_seq_adv = pl_25;
    endcase
    case ({sc.vlan_en, s_enh})
      2'b00:   s_flen = pl_h0;
      2'b11:   s_flen = pl_h2;
      default: s_flen = pl_h1;
    endcase
    s_mflags   = (sc.req_flags & 8'hC0) | 8'h20 | (s_enh ? 8'h10 : 8'h00);
    s_tflags   = 8'h18 | {7'd0, start_fin};
    s_io_dflt  = default_ird_ord(sc.req_ird_ord);
    s_io       = start_ird_ord_valid ? start_ird_ord : s_io_dflt;
    // the default word depends on two request bits only, so its sum folds to constants
    s_io_sum   = start_ird_ord_valid ? {1'b0, start_ird_ord[31:16]} + {1'b0, start_ird_ord[15:0]}
                                     : {1'b0, s_io_dflt[31:16]} + {1'b0, s_io_dflt[15:0]};
    s_hlen     = 16'(H0) + (sc.vlan_en ? 16'd4 : 16'd0) + (s_enh ? 16'd4 : 16'd0);
  end

  // default reply IRD/ORD word: P2P + "no IRD/ORD", and one RTR bit (the request's Read RTR,
  // else its Write RTR, else Read)
  /* verilator lint_off UNUSEDSIGNAL */  // only the request's RTR bits matter
  function automatic logic [31:0] default_ird_ord(input logic [31:0] req);
    logic [15:0] rtr;
    if (req[14]) rtr = 16'h4000;
    else if (req[15]) rtr = 16'h8000;
    else rtr = 16'h4000;
    default_ird_ord = {16'hBFFF, rtr | 16'h3FFF};
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  // ------------------------------------------------------------------ segment count
  // seg_count = ceil(M / mss) = 1 + #{j in 1..11 : j mss < M}, M = pd_len + 20 (+ 4 when
  // enhanced). Each j mss < M is the sign of j mss - pd_len - 20 (or 24): j mss as one, two or
  // three shifted copies of the MSS (7 mss = 8 mss + ~mss + 1), -pd_len - 1 as the complement
  // of pd_len, and a constant, through 3:2 steps and one carry chain; both M side by side,
  // registered at the start (t20_q, t24_q), and the request decode selects in the next
  // cycle. The j are a thermometer (j mss grows with j), so the count is a few AND/OR terms
  // of neighbours and a parity. An MSS of 0 or above 1023 bounds nothing.
  function automatic logic [15:0] maj3(input logic [15:0] a, input logic [15:0] b,
                                       input logic [15:0] c);
    maj3 = (a & b) | (a & c) | (b & c);
  endfunction
  // the sign of a + b + c + d + e (16 bits, two's complement): 3:2 steps, one carry chain
  /* verilator lint_off UNUSEDSIGNAL */  // the sign bit only; bit 15's carries leave the sum
  function automatic logic neg3(input logic [15:0] a, input logic [15:0] b,
                                input logic [15:0] c);
    logic [15:0] cy, sum;
    cy   = maj3(a, b, c);
    sum  = (a ^ b ^ c) + {cy[14:0], 1'b0};
    neg3 = sum[15];
  endfunction
  function automatic logic neg4(input logic [15:0] a, input logic [15:0] b, input logic [15:0] c,
                                input logic [15:0] d);
    logic [15:0] cy;
    cy   = maj3(a, b, c);
    neg4 = neg3(a ^ b ^ c, {cy[14:0], 1'b0}, d);
  endfunction
  function automatic logic neg5(input logic [15:0] a, input logic [15:0] b, input logic [15:0] c,
                                input logic [15:0] d, input logic [15:0] e);
    logic [15:0] cy;
    cy   = maj3(a, b, c);
    neg5 = neg4(a ^ b ^ c, {cy[14:0], 1'b0}, d, e);
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */
  // j mss < pd_len + mh for j = 1..11 (bit j-1)
  function automatic logic [10:0] below(input logic [9:0] m, input logic [9:0] pdl,
                                        input logic [15:0] mh);
    logic [15:0] x, np, k1, k2;
    x  = {6'd0, m};
    np = ~{6'd0, pdl};              // -pd_len - 1
    k1 = 16'd1 - mh;                // the + 1 of -pd_len, and -mh
    k2 = 16'd2 - mh;                // and the + 1 of -mss (j = 7)
    below[0]  = neg3(x, np, k1);
    below[1]  = neg3(x << 1, np, k1);
    below[2]  = neg4(x << 1, x, np, k1);
    below[3]  = neg3(x << 2, np, k1);
    below[4]  = neg4(x << 2, x, np, k1);
    below[5]  = neg4(x << 2, x << 1, np, k1);
    below[6]  = neg4(x << 3, ~x, np, k2);
    below[7]  = neg3(x << 3, np, k1);
    below[8]  = neg4(x << 3, x, np, k1);
    below[9]  = neg4(x << 3, x << 1, np, k1);
    below[10] = neg5(x << 3, x << 1, x, np, k1);
  endfunction
  // 1 + the number of ones of a thermometer t (t[j-1] = j mss < M)
  function automatic logic [3:0] count_of(input logic [10:0] t);
    count_of[0] = !(^t);
    count_of[1] = (t[0] && !t[2]) || (t[4] && !t[6]) || (t[8] && !t[10]);
    count_of[2] = (t[2] && !t[6]) || t[10];
    count_of[3] = t[6];
  endfunction

  // seg_count is valid from 2 cycles after start: compares, select by s_enh and count in
  // the start cycle were 7 levels.
  logic        s_nobound, s_split, nobound_q;
  logic [10:0] s_t20, s_t24, t20_q, t24_q;
  logic [15:0] s_flen1;
  always_comb begin
    s_nobound = (start_mss[15:10] != '0) || (start_mss == '0);
    s_t20     = below(start_mss[9:0], pd_len, 16'd20);
    s_t24     = below(start_mss[9:0], pd_len, 16'd24);
    s_split   = !s_nobound && (s_enh ? s_t24[0] : s_t20[0]);
    s_flen1   = {6'd0, start_mss[9:0]} + (sc.vlan_en ? 16'(HT1) : 16'(HT0));
  end

  // ------------------------------------------------------------------ checksums
  logic [19:0] s_a_q, s_b_q, s_c_q, s_d_q, s_e_q, s_f_q;
  logic [31:0] ip_tot_q, tcp_tot_q;
  logic [15:0] ip_csum_q, tcp_csum_q;

  // The TCP total s_b + s_c + s_d + s_e + s_f + pd_sum_q, the same way as the PD sum: a 6:3
  // counter per bit column (one 6-input LUT per output), a 3:2 step, one carry chain.
  logic [31:0] tt_s, tt_c, tt_d, tcp_tot_next;
  always_comb begin
    tt_s = pd_sum_q;
    tt_c = '0;
    tt_d = '0;
    for (int i = 0; i < 20; i++)
      {tt_d[i+2], tt_c[i+1], tt_s[i]} = count6(s_b_q[i], s_c_q[i], s_d_q[i], s_e_q[i], s_f_q[i],
                                               pd_sum_q[i]);
    tcp_tot_next = add3(tt_s, tt_c, tt_d);
  end

  // ------------------------------------------------------------------ header image
  logic [8*HDR_BYTES-1:0] hdr;
  always_comb begin : hdr_image
    logic [95:0]  macs;
    logic [31:0]  tag;
    logic [527:0] rest;     // 66 bytes: ethertype .. IRD/ORD
    macs = {bouncer_util_pkg::be48(ctx_q.loc_mac), bouncer_util_pkg::be48(ctx_q.rem_mac)};
    tag  = {bouncer_util_pkg::be16(ctx_q.vlan_tci), bouncer_util_pkg::be16(16'h8100)};
    rest = '0;
    rest[0   +: 16]  = bouncer_util_pkg::be16(16'h0800);
    rest[16  +: 8]   = 8'h45;
    rest[24  +: 8]   = ctx_q.tos;
    rest[32  +: 16]  = bouncer_util_pkg::be16(ip_total_q);
    rest[48  +: 16]  = bouncer_util_pkg::be16(ipid_q);
    rest[64  +: 16]  = bouncer_util_pkg::be16(16'h4000);
    rest[80  +: 8]   = ctx_q.ttl;
    rest[88  +: 8]   = 8'h06;
    rest[96  +: 16]  = bouncer_util_pkg::be16(ip_csum_q);
    rest[112 +: 32]  = bouncer_util_pkg::be32(ctx_q.loc_ip);
    rest[144 +: 32]  = bouncer_util_pkg::be32(ctx_q.rem_ip);
    rest[176 +: 16]  = bouncer_util_pkg::be16(ctx_q.loc_port);
    rest[192 +: 16]  = bouncer_util_pkg::be16(ctx_q.rem_port);
    rest[208 +: 32]  = bouncer_util_pkg::be32(seq_q);
    rest[240 +: 32]  = bouncer_util_pkg::be32(ctx_q.rcv_nxt);
    rest[272 +: 8]   = 8'h50;
    rest[280 +: 8]   = tflags;
    rest[288 +: 16]  = bouncer_util_pkg::be16(ctx_q.rcv_wnd);
    rest[304 +: 16]  = bouncer_util_pkg::be16(tcp_csum_q);
    rest[320 +: 16]  = 16'h0000;
    rest[336 +: 128] = MPA_KEY_REP;
    rest[464 +: 8]   = mflags_q;
    rest[472 +: 8]   = ctx_q.req_rev;
    rest[480 +: 16]  = bouncer_util_pkg::be16(pdl_q);
    rest[496 +: 32]  = enh_q ? bouncer_util_pkg::be32(ird_ord_q) : 32'd0;
    hdr = '0;
    if (ctx_q.vlan_en) hdr[0 +: 96+32+528] = {rest, tag, macs};
    else               hdr[0 +: 96+528]    = {rest, macs};
  end

  // ------------------------------------------------------------------ segments (S_SEG)
  // Segment k covers the MPA bytes [k mss, ...): the first holds the MPA header and the PD
  // bytes [0, b), b = mss - 20 (24 enhanced); segment k > 0 the PD bytes [a, b), a = the
  // previous b, b = a + mss or pd_len for the last. Per segment, from registers only, one
  // step per cycle (ps_q):
  //   0  last = rem <= mss; e = a - (its header bytes in the beat of its first PD byte);
  //      read address: the PD word that holds byte b, and pfx_mem[b / 8]
  //   1  payload length L, FIN (last segment only)
  //   2  that word, bytes from b on zeroed; frame length 54 / 58 + L; IPv4 total; IPv4 sum
  //   3  the word's sum; beats; IPv4 checksum
  //   4  F(b) = pfx + the word's sum (the last segment: pd_sum_q, all of the PD)
  //   5  payload sum: the first segment's MPA header sum + F(b), the others F(b) - F(a)
  //      (F(b) + the 24-bit complement of F(a) + 0xFF00: 2^24 - 1 = 255 mod 0xFFFF)
  //   6  fold to 17 bits; a segment that starts at an odd PD byte sees the PD's 16-bit words
  //      byte-swapped, and swapping the bytes of a ones' complement sum is a multiply by 256
  //   7  TCP total (6 terms, add6)
  //   8  TCP checksum; beat state for streaming. The first segment streams as the single
  //      frame does (its header image ends with the MPA header, then the PD from byte 0);
  //   9, 10  the others pre-load the realignment: rd_word = the PD word of frame byte
  //      qc * WB (e >> LB: it may be the word in front of the PD, or one past it, whose
  //      bytes are all header), ra_q = the beat qc (the header's last beat), prev_q and
  //      rd_word one word on.
  // In the stream, a segment after the first takes beats below qc from the header image and
  // ra_q after that: ra_q = the W bytes from byte r of {word, previous word}, r = e mod WB,
  // one PD word per beat; in beat qc the header bytes in front come from the image (hbyte_q).
  logic        split_q, last_q, cont_q;
  logic [3:0]  ps_q;
  logic [9:0]  mss_q, rem_q, a_q, b_q, len_q;
  logic [10:0] e_q;                       // a - header bytes in front of it in its beat
  logic [23:0] fa_q, fb_q, pfx_q;
  logic [17:0] part_q;
  logic [63:0] pw_q;
  logic [24:0] rs_q, pay_q;
  logic [16:0] rs_fold;
  logic [31:0] tbase_q;
  logic [19:0] ibase_q, mhsum_q;
  logic [15:0] tlen_q;                    // TCP length 20 + L, protocol 6, 0x50 and ACK|PSH
  logic        rd_ld_q, fill_q, ra_ld_q;
  logic [PD_WORDS_LOG2-1:0] rd_val_q;
  logic [DATA_W-1:0]   ra_q, rot;
  logic [DATA_W-1:0]   prev_q;              // the PD word before pd_cur
  logic [63:0]         w64;
  logic [7:0]          w64_mask;

  // rot = the W bytes of {pd_cur, prev_q} from byte r = e_q mod WB of prev_q: a byte
  // rotation. At DATA_W = 512 a shifter of three 4:1 stages (by 16, 4 and 1 bytes; each
  // keeps the bytes the later stages may still need: 3 LUT levels, about 1700 LUTs; one
  // 64-byte shift maps to about 800 LUTs more). At DATA_W = 64 one 8:1 multiplexer per bit.
  logic [LB-1:0] rsh;
  assign rsh = e_q[LB-1:0];
  if (LB == 6) begin : g_rot512
    logic [2*DATA_W-1:0] both;
    logic [8*79-1:0]     st1;           // W + 15 bytes
    logic [8*67-1:0]     st2;           // W + 3 bytes
    always_comb begin
      both = {pd_cur, prev_q};
      for (int i = 0; i < 79; i++)
        case (rsh[5:4])
          2'd0:    st1[8*i +: 8] = both[8*i +: 8];
          2'd1:    st1[8*i +: 8] = both[8*(i+16) +: 8];
          2'd2:    st1[8*i +: 8] = both[8*(i+32) +: 8];
          default: st1[8*i +: 8] = both[8*(i+48) +: 8];
        endcase
      for (int i = 0; i < 67; i++)
        case (rsh[3:2])
          2'd0:    st2[8*i +: 8] = st1[8*i +: 8];
          2'd1:    st2[8*i +: 8] = st1[8*(i+4) +: 8];
          2'd2:    st2[8*i +: 8] = st1[8*(i+8) +: 8];
          default: st2[8*i +: 8] = st1[8*(i+12) +: 8];
        endcase
      for (int i = 0; i < WB; i++)
        case (rsh[1:0])
          2'd0:    rot[8*i +: 8] = st2[8*i +: 8];
          2'd1:    rot[8*i +: 8] = st2[8*(i+1) +: 8];
          2'd2:    rot[8*i +: 8] = st2[8*(i+2) +: 8];
          default: rot[8*i +: 8] = st2[8*(i+3) +: 8];
        endcase
    end
  end else begin : g_rot64
    /* verilator lint_off UNUSEDSIGNAL */
    logic [2*DATA_W-1:0] both;
    /* verilator lint_on UNUSEDSIGNAL */
    always_comb begin
      both = {pd_cur, prev_q} >> {rsh, 3'd0};
      rot  = both[DATA_W-1:0];
    end
  end

  always_comb begin
    // the 64-bit PD word that holds byte b_q, bytes from b_q on zeroed
    w64      = pd_cur[64 * ((32'(b_q) / 8) % LANES) +: 64];
    w64_mask = ~(8'hFF << b_q[2:0]);
    rs_fold  = {8'd0, rs_q[24:16]} + {1'b0, rs_q[15:0]};
  end

  // ------------------------------------------------------------------ streaming
  // The header image `hdr` only depends on registers that hold still while streaming,
  // so beats are cut straight from it; PD beats are a window over {cur, prev} PD words.
  logic [15:0]         flen_q, flen_out_q;
  logic [7:0]          nbeats_q, k_q;
  logic [7:0]          q_q;                 // first beat that carries PD bytes
  // per-beat selects kept as registers that step with k_q (no compare or subtraction of
  // k_q in front of the beat multiplexer): rd_word_q = k_q - q_q (the PD word of beat k),
  // in_hdr_q = (k_q < q_q), at_q_q = (k_q == q_q), keep_q = tkeep of beat k_q
  logic                in_hdr_q, at_q_q;
  // hbyte_q: the bytes of beat k_q taken from the header image: all of a beat below q_q, and
  // in a segment after the first the header bytes of beat qc (hmask_q), ra_q the rest
  logic [WB-1:0]       hbyte_q, hmask_q;
  logic [WB-1:0]       keep_q;

  logic [DATA_W-1:0]   out_data_q;
  logic [WB-1:0]       out_keep_q;
  logic                out_last_q, out_valid_q, out_first_q;
  logic                out_final_q;         // the beat belongs to the last segment
  logic                advance, emit;

  assign advance = !out_valid_q || m_axis_tready;
  assign emit    = (state_q == S_STREAM) && advance && (k_q != nbeats_q);
  // the PD read address: the single frame and the first segment step it on every beat from
  // 0 - q_q; a later segment only on its PD beats (from qc on), after its pre-load; the
  // segment sequencer loads it through rd_ld_q / rd_val_q and steps it with fill_q
  always_comb begin
    rd_word = rd_word_q;
    if (state_q == S_FOLD) rd_word = PD_WORDS_LOG2'(8'd0 - q_q);
    if (rd_ld_q) rd_word = rd_val_q;
    if ((emit && (!cont_q || !in_hdr_q)) || fill_q) rd_word = rd_word_q + 1'b1;
  end

  // W-byte window of {cur, prev} that starts r bytes before cur
  function automatic logic [DATA_W-1:0] window(input logic [DATA_W-1:0] cur,
                                               input logic [DATA_W-1:0] prev,
                                               input int r);
    /* verilator lint_off UNUSEDSIGNAL */
    logic [2*DATA_W-1:0] both;
    /* verilator lint_on UNUSEDSIGNAL */
    both   = {cur, prev} >> (8 * (WB - r));
    window = both[DATA_W-1:0];
  endfunction

  // the W header bytes that end at the last header byte: "prev" for the first PD beat
  logic [DATA_W-1:0] prev_init, prev_sel, merged, beat, hdr_k;
  always_comb begin
    case (hsel_q)
      2'd0:    prev_init = hdr[8*(H0 - WB) +: DATA_W];
      2'd1:    prev_init = hdr[8*(H1 - WB) +: DATA_W];
      default: prev_init = hdr[8*(H2 - WB) +: DATA_W];
    endcase
    prev_sel = at_q_q ? prev_init : prev_q;
    case (hsel_q)
      2'd0:    merged = window(pd_cur, prev_sel, H0 % WB);
      2'd1:    merged = window(pd_cur, prev_sel, H1 % WB);
      2'd2:    merged = window(pd_cur, prev_sel, H2 % WB);
      default: merged = ra_q;
    endcase
    hdr_k = hdr[32'(k_q) * DATA_W +: DATA_W];
    for (int b = 0; b < WB; b++) beat[8*b +: 8] = hbyte_q[b] ? hdr_k[8*b +: 8] : merged[8*b +: 8];
  end

  // bytes of the current beat that belong to the frame: keep_q, computed a beat ahead from
  // beat_left_q = flen_q - k_q * WB (a register), so no compare sits in front of tdata.
  // Every beat but the last is full, and the last one keeps flen mod WB bytes (all when 0):
  // lastk_q, decoded from flen_q's low bits once per frame. The next beat is full while at
  // least two beats' bytes are left, a test of beat_left_q's high bits; after the last beat
  // keep_q holds lastk_q, unused.
  logic [15:0]       beat_left_q;
  logic [WB-1:0]     lastk_q;
  logic [DATA_W-1:0] beat_masked;
  function automatic logic [WB-1:0] thermo(input logic [LB-1:0] n);   // byte b: b < n
    for (int b = 0; b < WB; b++) thermo[b] = (n > LB'(b));
  endfunction
  function automatic logic [WB-1:0] keep_of(input logic [15:0] left);   // byte b: b < left
    keep_of = (left[15:LB] != '0) ? '1 : thermo(left[LB-1:0]);
  endfunction
  always_comb begin
    for (int b = 0; b < WB; b++) beat_masked[8*b +: 8] = keep_q[b] ? beat[8*b +: 8] : 8'd0;
  end

  // the first PD beat of a segment after the first, and the beat state at a frame's start
  logic [7:0] q_next;
  assign q_next = cont_q ? (ctx_q.vlan_en ? 8'(QC1) : 8'(QC0)) : q_q;

  always_ff @(posedge clk) begin
    first_beat <= out_valid_q && m_axis_tready && out_first_q;
    done       <= 1'b0;
    rd_ld_q    <= 1'b0;
    fill_q     <= 1'b0;
    ra_ld_q    <= 1'b0;
    case (state_q)
      S_IDLE: begin
        if (start_valid) begin
          ctx_q     <= start_ctx;
          fin_q     <= start_fin;
          ird_ord_q <= s_io;
          enh_q       <= s_enh;
          pdl_q       <= s_pdl;
          ip_total_q  <= s_ip_total;
          ipid_q      <= sc.ip_id;
          seq_q       <= sc.snd_nxt;
          tfin_q      <= start_fin && !s_split;
          mflags_q    <= s_mflags;
          hsel_q      <= 2'({1'b0, sc.vlan_en} + {1'b0, s_enh});
          // checksum partial sums of the header fields (the PD's comes from pd_sum_q)
          // The PD length enters as pd_len and the enhanced flag (IRD/ORD word: 4 bytes in
          // the IP and TCP lengths and in PD_Length), not as s_pdl, so no add sits in front:
          // IP total = 60 + PD_Length; the TCP sum has TCP length (40 + PD_Length) and
          // PD_Length, together 40 + 2 pd_len + 8 enh.
          s_a_q <= {4'd0, 8'h45, sc.tos} + 20'h0403C + {10'd0, pd_len}
                 + (s_enh ? 20'd4 : 20'd0) + {4'd0, sc.ip_id} + {4'd0, sc.ttl, 8'h06};
          s_b_q <= {4'd0, sc.loc_ip[31:16]} + {4'd0, sc.loc_ip[15:0]}
                 + {4'd0, sc.rem_ip[31:16]} + {4'd0, sc.rem_ip[15:0]};
          s_c_q <= 20'd46 + {4'd0, sc.loc_port} + {4'd0, sc.rem_port}
                 + {4'd0, sc.snd_nxt[31:16]} + {4'd0, sc.snd_nxt[15:0]};
          s_d_q <= {4'd0, sc.rcv_nxt[31:16]} + {4'd0, sc.rcv_nxt[15:0]}
                 + {4'd0, 8'h50, s_tflags} + {4'd0, sc.rcv_wnd} + KEY_SUM;
          s_e_q <= {4'd0, s_mflags, sc.req_rev} + {9'd0, pd_len, 1'b0} + (s_enh ? 20'd8 : 20'd0);
          s_f_q <= s_enh ? {3'd0, s_io_sum} : 20'd0;
          flen_q      <= s_flen;
          flen_out_q  <= s_split ? s_flen1 : s_flen;
          seq_advance <= s_seq_adv;
          t20_q       <= s_t20;
          t24_q       <= s_t24;
          nobound_q   <= s_nobound;
          split_q     <= s_split;
          last_q      <= !s_split;
          cont_q      <= 1'b0;
          mss_q       <= start_mss[9:0];
          q_q         <= 8'(32'(s_hlen) / WB);
          state_q     <= S_SUM2;
        end
      end
      S_SUM2: begin
        ip_tot_q  <= {12'd0, s_a_q} + {12'd0, s_b_q};
        tcp_tot_q <= tcp_tot_next;   // s_b + s_c + s_d + s_e + s_f + pd_sum_q
        nbeats_q  <= 8'((32'(flen_q) + WB - 1) / WB);
        seg_count <= nobound_q ? 4'd1 : count_of(enh_q ? t24_q : t20_q);
        // segments: the sums every segment shares. TCP: addresses, ports, acknowledgement,
        // window (the constants go with the segment's length, tlen_q); IPv4: version, TOS,
        // DF, TTL, protocol, addresses, 40 header bytes; the first segment's MPA header.
        tbase_q <= add6({12'd0, s_b_q}, {16'd0, ctx_q.loc_port}, {16'd0, ctx_q.rem_port},
                        {16'd0, ctx_q.rcv_nxt[31:16]}, {16'd0, ctx_q.rcv_nxt[15:0]},
                        {16'd0, ctx_q.rcv_wnd});
        ibase_q <= s_b_q + {4'd0, 8'h45, ctx_q.tos} + 20'h4000 + {4'd0, ctx_q.ttl, 8'h06}
                 + 20'd40;
        mhsum_q <= KEY_SUM + {4'd0, mflags_q, ctx_q.req_rev} + {4'd0, pdl_q} + s_f_q;
        a_q     <= '0;
        b_q     <= mss_q - (enh_q ? 10'd24 : 10'd20);
        rem_q   <= pdl_q[9:0] + 10'd20;
        fa_q    <= '0;
        ps_q    <= '0;
        state_q <= split_q ? S_SEG : S_FOLD;
      end
      S_FOLD: begin
        ip_csum_q  <= ~bouncer_util_pkg::csum_fold(ip_tot_q);
        tcp_csum_q <= ~bouncer_util_pkg::csum_fold(tcp_tot_q);
        k_q        <= '0;
        beat_left_q <= flen_q;
        keep_q     <= keep_of(flen_q);
        lastk_q    <= (flen_q[LB-1:0] == '0) ? '1 : thermo(flen_q[LB-1:0]);
        in_hdr_q   <= (q_q != 8'd0);
        hbyte_q    <= {WB{q_q != 8'd0}};
        at_q_q     <= (q_q == 8'd0);
        state_q    <= S_STREAM;
      end
      S_SEG: begin
        ps_q <= ps_q + 4'd1;
        case (ps_q)
          4'd0: begin
            last_q   <= (rem_q <= mss_q);
            e_q      <= {1'b0, a_q} - (ctx_q.vlan_en ? 11'(HL1) : 11'(HL0));
            rd_ld_q  <= 1'b1;
            rd_val_q <= PD_WORDS_LOG2'(b_q >> LB);
            hmask_q  <= ctx_q.vlan_en ? thermo(LB'(HL1)) : thermo(LB'(HL0));
          end
          4'd1: begin
            len_q  <= last_q ? rem_q : mss_q;
            tfin_q <= last_q && fin_q;
            pfx_q  <= pfx_mem[b_q[8:3]];
          end
          4'd2: begin
            for (int l = 0; l < 8; l++) pw_q[8*l +: 8] <= w64[8*l +: 8] & {8{w64_mask[l]}};
            flen_q     <= {6'd0, len_q} + (ctx_q.vlan_en ? 16'(HT1) : 16'(HT0));
            ip_total_q <= {6'd0, len_q} + 16'd40;
            tlen_q     <= {6'd0, len_q} + 16'd20 + 16'd6 + 16'h5018;
            ip_tot_q   <= {12'd0, ibase_q} + {22'd0, len_q} + {16'd0, ipid_q};
          end
          4'd3: begin
            part_q    <= {2'd0, pw_q[7:0], pw_q[15:8]} + {2'd0, pw_q[23:16], pw_q[31:24]}
                       + {2'd0, pw_q[39:32], pw_q[47:40]} + {2'd0, pw_q[55:48], pw_q[63:56]};
            nbeats_q  <= 8'((32'(flen_q) + WB - 1) / WB);
            ip_csum_q <= ~bouncer_util_pkg::csum_fold(ip_tot_q);
          end
          4'd4: fb_q <= last_q ? pd_sum_q[23:0] : pfx_q + {6'd0, part_q};
          4'd5: rs_q <= cont_q ? {1'b0, fb_q} + {1'b0, ~fa_q} + 25'h0FF00
                               : {1'b0, fb_q} + {5'd0, mhsum_q};
          4'd6: pay_q <= a_q[0] ? {rs_fold, 8'd0} : {8'd0, rs_fold};
          4'd7: begin
            tcp_tot_q <= add6(tbase_q, {16'd0, seq_q[31:16]}, {16'd0, seq_q[15:0]},
                              {16'd0, tlen_q}, {31'd0, tfin_q}, {7'd0, pay_q});
            // the PD read address of the stream's start (step 8)
            rd_ld_q  <= 1'b1;
            rd_val_q <= cont_q ? PD_WORDS_LOG2'(e_q >> LB) : PD_WORDS_LOG2'(8'd0 - q_q);
          end
          4'd8: begin
            tcp_csum_q  <= ~bouncer_util_pkg::csum_fold(tcp_tot_q);
            k_q         <= '0;
            beat_left_q <= flen_q;
            keep_q      <= keep_of(flen_q);
            lastk_q     <= (flen_q[LB-1:0] == '0) ? '1 : thermo(flen_q[LB-1:0]);
            q_q         <= q_next;
            in_hdr_q    <= (q_next != 8'd0);
            hbyte_q     <= (q_next != 8'd0) ? '1 : (cont_q ? hmask_q : '0);
            at_q_q      <= (q_next == 8'd0);
            if (cont_q) begin
              hsel_q  <= 2'd3;
              fill_q  <= 1'b1;
            end else begin
              state_q <= S_STREAM;
            end
          end
          4'd9: begin
            fill_q  <= 1'b1;
            ra_ld_q <= 1'b1;
          end
          default: begin
            state_q <= S_STREAM;
          end
        endcase
      end
      S_STREAM: begin
        // (the last beat of the segment before may still wait for tready here)
        if (out_valid_q && m_axis_tready && out_last_q && out_final_q) begin
          done    <= 1'b1;
          state_q <= S_IDLE;
        end
        // a segment with more to follow: all its beats are in the beat register, so the
        // next one's fields may change (its last beat may still wait for tready)
        if (!last_q && k_q == nbeats_q) begin
          a_q     <= b_q;
          fa_q    <= fb_q;
          b_q     <= b_q + mss_q;
          rem_q   <= rem_q - mss_q;
          seq_q   <= seq_q + {22'd0, mss_q};
          ipid_q  <= ipid_q + 16'd1;
          cont_q  <= 1'b1;
          ps_q    <= '0;
          state_q <= S_SEG;
        end
      end
      default: state_q <= S_IDLE;
    endcase

    rd_word_q <= rd_word;
    if (advance) out_valid_q <= emit;
    if (emit) begin
      out_data_q  <= beat_masked;
      out_keep_q  <= keep_q;
      out_last_q  <= (k_q + 8'd1 == nbeats_q);
      out_first_q <= (k_q == 8'd0) && !cont_q;
      out_final_q <= last_q;
      k_q         <= k_q + 8'd1;
      beat_left_q <= beat_left_q - 16'(WB);
      keep_q      <= (beat_left_q[15:LB+1] != '0) ? '1 : lastk_q;
      in_hdr_q    <= in_hdr_q && (k_q + 8'd1 != q_q);
      hbyte_q     <= (in_hdr_q && (k_q + 8'd1 != q_q)) ? '1
                   : ((cont_q && k_q + 8'd1 == q_q) ? hmask_q : '0);
      at_q_q      <= (k_q + 8'd1 == q_q);
    end

    if (rst) begin
      state_q     <= S_IDLE;
      out_valid_q <= 1'b0;
      first_beat  <= 1'b0;
      done        <= 1'b0;
      rd_ld_q     <= 1'b0;
      fill_q      <= 1'b0;
      ra_ld_q     <= 1'b0;
    end
  end

  // The PD word pipeline, one step per PD beat (from beat q_q on) and per pre-load step of a
  // segment after the first (fill_q: steps 9 and 10, ra_ld_q: step 10), as plain enables.
  logic pd_step;
  assign pd_step = emit && (k_q >= q_q);
  always_ff @(posedge clk) begin
    if (pd_step || fill_q) prev_q <= pd_cur;
    if (pd_step || ra_ld_q) ra_q <= rot;
  end

  assign frame_len     = flen_out_q;
  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;
  assign m_axis_tvalid = out_valid_q;

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      // FIN only in the header of the last segment
      if (tfin_q && state_q != S_IDLE) assert (last_q);
      // a later segment never starts before the first segment's beats are all out
      if (cont_q && state_q == S_STREAM) assert (split_q);
      // segments only when the reply is longer than the MSS
      if (state_q == S_SEG) assert (split_q);
    end
  end
`endif

endmodule
`default_nettype wire
