// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rx_parser: passive-side RX parser. Takes Ethernet frames on an AXI-Stream slave
// (DATA_W = 64 or 512; byte 0 of the frame in tdata[7:0]; tkeep all ones except on the last
// beat, where it covers the low bytes; no FCS), and for every frame
//   - forwards the TCP payload on m_axis_payload_* realigned to lane 0 (payload byte 0 in
//     tdata[7:0] of the first payload beat), tkeep on the last payload beat, tlast, bytes
//     past tkeep zero. Only bytes in [payload offset, min(IP end, frame end)) go out: the
//     Ethernet padding behind the IP datagram never does. No beat when that is empty, and
//     none at all unless m_meta_tcp = 1 with a valid data offset.
//   - emits exactly one record on m_meta_* (valid/ready) after the frame's last beat, even
//     for non-IP, non-TCP, truncated or malformed frames.
// The two outputs are each in frame order; a frame's payload beats are produced no later
// than its record, but a consumer must not rely on any order *between* the two streams
// (each has its own ready).
//
// Record (one port per field, m_meta_ prefix; byte order: network order as integers, e.g.
// eth_dst[47:40] is the first byte on the wire, ip_src = 0x0A000001 for 10.0.0.1):
//   eth_dst[48] eth_src[48] vlan_present vlan_tci[16] ethertype[16] (after the 802.1Q tag)
//   ipv4 (ethertype 0x0800) ip_ihl[4] ip_tos[8] ip_total_len[16] ip_id[16] ip_df ip_mf
//     ip_frag_off[13] ip_ttl[8] ip_proto[8] ip_src[32] ip_dst[32] ip_csum_ok (header
//     checksum over IHL*4 bytes, options included)             -- all 0 when ipv4 = 0
//   tcp (ipv4, version 4, IHL >= 5, proto 6, MF = 0, fragment offset 0) tcp_src_port[16]
//     tcp_dst_port[16] tcp_seq[32] tcp_ack[32] tcp_doff[4] tcp_flags[8] (CWR..FIN)
//     tcp_window[16] tcp_csum_ok (pseudo header + IP total length - IHL*4 bytes)
//     tcp_mss_present tcp_mss[16] tcp_ws_present tcp_ws[8] tcp_opt_err
//                                                              -- all 0 when tcp = 0
//   payload_len[16]: the number of bytes sent on m_axis_payload for this frame
//   frame_len[16]:   bytes in the frame
//   runt:    the frame ends inside the Ethernet, IPv4 or TCP header (options included)
//   len_err: IPv4 total length > bytes present, or smaller than IHL*4 (+ doff*4 for TCP)
//   hdr_err: IPv4 version != 4 or IHL < 5; TCP data offset < 5
//   bad = runt | len_err | hdr_err | (ipv4 & !ip_csum_ok) | (tcp & (!tcp_csum_ok | opt_err))
// TCP options: kinds 0 (EOL: stop), 1 (NOP), 2 (MSS, len 4), 3 (WS, len 3); any other kind
// is skipped by its length. A length < 2 or past the option area, an MSS without len 4 or
// a WS without len 3 sets tcp_opt_err and stops the walk.
//
// Pipeline (one global advance; s_axis_tready = advance):
//   A  input beat, header capture (first 138 bytes: 18 L2 + 60 IPv4 + 60 TCP)
//   B  L2/L3 offsets from the capture: VLAN, IHL, TCP offset, IP end; header snapshot on
//      the last beat
//   C  data offset -> payload offset; record fields decoded from the snapshot; the beat's
//      TCP checksum byte mask
//   D  checksum partial sums, payload beat counts, error flags, the beat shifted both ways
//      for the realignment (a barrel shift by the payload offset, which is always 2 mod 4),
//      every option position decoded
//   -> payload output register (the window: this beat's low part OR the previous beat's
//      high part, then the tkeep mask)
//   E  the beat's checksum as one sum, added to the frame's accumulator; the record
//   -> the option walker (P3: one option per cycle, a pick of the position's decode), then
//      the record register.
// Latency: m_meta_valid rises 7 cycles after the cycle in which the last input beat is
// accepted (6 register stages: A, B, C, D, E, P3, then the record register) for a frame
// without TCP options, 7 + n with n option steps (each option, NOP and EOL is one step;
// irdma's SYN options MSS, WS, EOL are 3). The last payload beat is offered 5 (at most 6)
// cycles after the last input beat.
// Throughput: one beat per cycle for back-to-back frames as long as each frame has at least
// n + 1 beats (the option walker holds a frame for n + 1 cycles; frames without options:
// 1 cycle, so every such frame, even a one-beat one, goes at full rate). Frames with more
// option steps than that stall the input for the difference (DATA_W = 512, back-to-back
// irdma SYNs of 1-2 beats: 0.38 beats per cycle; DATA_W = 64: always full rate, a SYN is
// at least 8 beats). At DATA_W = 512 a one-beat frame whose payload straddles the
// realignment right behind a frame that ended the same way costs one extra cycle.
// tready of both outputs reaches s_axis_tready combinationally (as in the TX builder).
// Frames up to 65535 bytes.
`default_nettype none
module bouncer_rx_parser #(
  parameter int DATA_W = 64
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire [DATA_W-1:0]    s_axis_tdata,
  input  wire [DATA_W/8-1:0]  s_axis_tkeep,
  input  wire                 s_axis_tlast,
  input  wire                 s_axis_tvalid,
  output logic                s_axis_tready,

  output logic [DATA_W-1:0]   m_axis_payload_tdata,
  output logic [DATA_W/8-1:0] m_axis_payload_tkeep,
  output logic                m_axis_payload_tlast,
  output logic                m_axis_payload_tvalid,
  input  wire                 m_axis_payload_tready,

  output logic                m_meta_valid,
  input  wire                 m_meta_ready,
  output logic [47:0]         m_meta_eth_dst,
  output logic [47:0]         m_meta_eth_src,
  output logic                m_meta_vlan_present,
  output logic [15:0]         m_meta_vlan_tci,
  output logic [15:0]         m_meta_ethertype,
  output logic                m_meta_ipv4,
  output logic [3:0]          m_meta_ip_ihl,
  output logic [7:0]          m_meta_ip_tos,
  output logic [15:0]         m_meta_ip_total_len,
  output logic [15:0]         m_meta_ip_id,
  output logic                m_meta_ip_df,
  output logic                m_meta_ip_mf,
  output logic [12:0]         m_meta_ip_frag_off,
  output logic [7:0]          m_meta_ip_ttl,
  output logic [7:0]          m_meta_ip_proto,
  output logic [31:0]         m_meta_ip_src,
  output logic [31:0]         m_meta_ip_dst,
  output logic                m_meta_ip_csum_ok,
  output logic                m_meta_tcp,
  output logic [15:0]         m_meta_tcp_src_port,
  output logic [15:0]         m_meta_tcp_dst_port,
  output logic [31:0]         m_meta_tcp_seq,
  output logic [31:0]         m_meta_tcp_ack,
  output logic [3:0]          m_meta_tcp_doff,
  output logic [7:0]          m_meta_tcp_flags,
  output logic [15:0]         m_meta_tcp_window,
  output logic                m_meta_tcp_csum_ok,
  output logic                m_meta_tcp_mss_present,
  output logic [15:0]         m_meta_tcp_mss,
  output logic                m_meta_tcp_ws_present,
  output logic [7:0]          m_meta_tcp_ws,
  output logic                m_meta_tcp_opt_err,
  output logic [15:0]         m_meta_payload_len,
  output logic [15:0]         m_meta_frame_len,
  output logic                m_meta_runt,
  output logic                m_meta_len_err,
  output logic                m_meta_hdr_err,
  output logic                m_meta_bad
);

  localparam int WB     = DATA_W / 8;          // bytes per beat
  localparam int LB     = $clog2(WB);
  localparam int NW     = WB / 2;              // 16-bit words per beat
  localparam int NG     = (NW + 3) / 4;        // checksum groups (4 words) per beat
  localparam int HN     = 138;                 // header bytes kept: 18 + 60 + 60
  localparam int HBEATS = (HN + WB - 1) / WB;
  localparam int HB     = HBEATS * WB;
  localparam int CW     = LB + 1;              // byte count 0..WB
  localparam int SW     = LB - 2;              // payload shift = 4 * sidx + 2

  typedef struct packed {
    logic [47:0] eth_dst;
    logic [47:0] eth_src;
    logic        vlan;
    logic [15:0] vlan_tci;
    logic [15:0] ethertype;
    logic        ipv4;
    logic [3:0]  ip_ihl;
    logic [7:0]  ip_tos;
    logic [15:0] ip_total_len;
    logic [15:0] ip_id;
    logic        ip_df;
    logic        ip_mf;
    logic [12:0] ip_frag_off;
    logic [7:0]  ip_ttl;
    logic [7:0]  ip_proto;
    logic [31:0] ip_src;
    logic [31:0] ip_dst;
    logic        ip_csum_ok;
    logic        tcp;
    logic [15:0] tcp_sport;
    logic [15:0] tcp_dport;
    logic [31:0] tcp_seq;
    logic [31:0] tcp_ack;
    logic [3:0]  tcp_doff;
    logic [7:0]  tcp_flags;
    logic [15:0] tcp_window;
    logic        tcp_csum_ok;
    logic        mss_present;
    logic [15:0] mss;
    logic        ws_present;
    logic [7:0]  ws;
    logic        opt_err;
    logic [15:0] payload_len;
    logic [15:0] frame_len;
    logic        runt;
    logic        len_err;
    logic        hdr_err;
    logic        bad;
  } meta_t;

  // TCP header index (TCP offset = L2 + 20 + 4 * index) from the IPv4 version/IHL byte:
  // IHL - 5 for a valid IPv4 header, else 0
  function automatic logic [3:0] ihl_idx(input logic [7:0] vihl);
    ihl_idx = ((vihl[7:4] == 4'd4) && (vihl[3:0] >= 4'd5)) ? vihl[3:0] - 4'd5 : 4'd0;
  endfunction

  // thermometer of a byte index: bit i = (i < v), as a pick of constants by v (an equality
  // per value maps to LUTs, where Yosys makes a carry chain of a compare with a constant)
  function automatic logic [WB-1:0] therm_lt(input logic [LB-1:0] v);
    therm_lt = '0;
    for (int n = 1; n < WB; n++)
      if (v == LB'(n)) for (int i = 0; i < n; i++) therm_lt[i] = 1'b1;
  endfunction

  // frame byte positions 0..127 at or behind the TCP header (34 + 4 * TCP index): a constant
  // shifted by the index times 4, a concatenation (no adder, so no carry chain; every bit is
  // a function of the 4 index bits, one LUT)
  function automatic logic [127:0] tcp_ge(input logic [3:0] idx);
    tcp_ge = {{94{1'b1}}, 34'd0} << {idx, 2'b00};
  endfunction

  // clamp a signed byte distance to 0..WB: min(max(v, 0), WB) for a signed 18-bit v: WB is
  // 2**LB, so "v >= WB" is an OR of the bits above LB (no compare chain behind the subtraction
  // that makes v)
  function automatic logic [CW-1:0] clampb(input logic [17:0] v);
    if (v[17]) clampb = '0;
    else if (|v[16:LB]) clampb = CW'(WB);
    else clampb = {1'b0, v[LB-1:0]};
  endfunction

  // ------------------------------------------------------------------ control
  logic adv;                       // every beat stage moves one step
  logic o_free, m_free, p3_leave, p3_ok, d_out;

  // ------------------------------------------------------------------ stage A: input
  logic              a_valid_q, a_last_q, a_first_q;
  logic [DATA_W-1:0] a_data_q;
  logic [4*NKG-1:0]  a_kc_q;
  logic [15:0]       a_off_q, fr_off_q;
  /* verilator lint_off UNUSEDSIGNAL */  // bytes past 137: HB rounds up to whole beats
  logic [8*HB-1:0]   hdr_q;
  /* verilator lint_on UNUSEDSIGNAL */

  // The beat's byte count (tkeep need not be contiguous) in two steps: A registers a count per
  // 8 bytes (two LUT levels from the port), B adds the counts as a balanced tree (three adder
  // levels at 512 bits): a 64-input population count in one cycle exceeds the depth budget.
  localparam int NKG = (WB + 7) / 8;                          // tkeep groups of 8
  localparam int NKP = (NKG <= 1) ? 1 : (1 << $clog2(NKG));  // padded to a power of 2
  logic [DATA_W-1:0] din_m;
  logic [4*NKG-1:0]  din_kc;
  always_comb begin
    din_kc = '0;
    for (int b = 0; b < WB; b++) begin
      din_m[8*b +: 8] = s_axis_tkeep[b] ? s_axis_tdata[8*b +: 8] : 8'd0;
      din_kc[4*(b/8) +: 4] = din_kc[4*(b/8) +: 4] + 4'(s_axis_tkeep[b]);
    end
  end

  assign s_axis_tready = adv;

  always_ff @(posedge clk) begin
    if (adv) begin
      a_valid_q <= s_axis_tvalid;
      if (s_axis_tvalid) begin
        a_data_q   <= din_m;
        a_kc_q     <= din_kc;
        a_last_q   <= s_axis_tlast;
        a_off_q    <= fr_off_q;
        a_first_q  <= (fr_off_q == 16'd0);
        if (s_axis_tlast) fr_off_q <= 16'd0;
        else if (fr_off_q <= 16'(65535 - WB)) fr_off_q <= fr_off_q + 16'(WB);  // last beat of 65535 B
        for (int b = 0; b < HBEATS; b++) begin
          if (fr_off_q == 16'(b * WB)) hdr_q[b*DATA_W +: DATA_W] <= din_m;
          else if (fr_off_q == 16'd0) hdr_q[b*DATA_W +: DATA_W] <= '0;
        end
      end
    end
    if (rst) begin
      a_valid_q <= 1'b0;
      fr_off_q  <= 16'd0;
    end
  end

  // ------------------------------------------------------------------ stage B: offsets
  // From the capture as of the beat in A: correct for every byte the beats so far hold,
  // which covers every byte position that later decisions on this beat depend on.
  logic [8*HN-1:0] hq;
  assign hq = hdr_q[8*HN-1:0];

  logic        hq_vlan, hq_tcp, hq_ihl_ok;
  logic [3:0]  hq_tcp_idx;          // TCP header at 34 + 4 * idx
  logic [16:0] hq_ip_end;
  logic [47:0] hq_doffc;            // data-offset nibble at 46 + 4 * idx, idx = 0..11
  logic [29:0] hq_ipm;              // IPv4 header words inside IHL * 4 (raw IHL nibble)
  always_comb begin : hq_decode
    logic [7:0]  vihl, proto;
    logic [15:0] etype, tlen;
    logic [13:0] frag;               // MF, fragment offset
    logic        ihl_ok;
    logic [3:0]  idx_n, idx_v;
    logic [29:0] ipm_n, ipm_v;
    hq_vlan = (hq[8*12 +: 8] == 8'h81) && (hq[8*13 +: 8] == 8'h00);
    etype   = hq_vlan ? {hq[8*16 +: 8], hq[8*17 +: 8]} : {hq[8*12 +: 8], hq[8*13 +: 8]};
    vihl    = hq_vlan ? hq[8*18 +: 8] : hq[8*14 +: 8];
    tlen    = hq_vlan ? {hq[8*20 +: 8], hq[8*21 +: 8]} : {hq[8*16 +: 8], hq[8*17 +: 8]};
    frag    = hq_vlan ? {hq[8*24 +: 6], hq[8*25 +: 8]} : {hq[8*20 +: 6], hq[8*21 +: 8]};
    proto   = hq_vlan ? hq[8*27 +: 8] : hq[8*23 +: 8];
    ihl_ok  = (vihl[7:4] == 4'd4) && (vihl[3:0] >= 4'd5);
    hq_ihl_ok = ihl_ok;
    hq_tcp  = (etype == 16'h0800) && ihl_ok && (proto == 8'd6) && !frag[13] && (frag[12:0] == 13'd0);
    // the TCP index and the IHL word mask for both L2 headers side by side (each a function
    // of one byte), the VLAN decode only selects
    idx_n = ihl_idx(hq[8*14 +: 8]);
    idx_v = ihl_idx(hq[8*18 +: 8]) + 4'd1;
    hq_tcp_idx = hq_vlan ? idx_v : idx_n;
    for (int w = 0; w < 30; w++) begin
      ipm_n[w] = 5'(w) < {hq[8*14 +: 4], 1'b0};
      ipm_v[w] = 5'(w) < {hq[8*18 +: 4], 1'b0};
    end
    hq_ipm = hq_vlan ? ipm_v : ipm_n;
    hq_ip_end  = {1'b0, tlen} + (hq_vlan ? 17'd18 : 17'd14);
    for (int i = 0; i < 12; i++) hq_doffc[4*i +: 4] = hq[8*(46 + 4*i) + 4 +: 4];
  end

  logic [CW-1:0] a_nbytes;
  always_comb begin : keep_tree
    logic [2*NKP*8-1:0] t;      // tree node i in t[8*i +: 8]; leaves NKP..2*NKP-1, root 1
    t = '0;
    for (int g = 0; g < NKP; g++)
      t[8*(NKP + g) +: 8] = (g < NKG) ? {4'd0, a_kc_q[4*g +: 4]} : 8'd0;
    for (int i = NKP - 1; i >= 1; i--) t[8*i +: 8] = t[8*(2*i) +: 8] + t[8*(2*i + 1) +: 8];
    a_nbytes = (NKP == 1) ? CW'(t[8*NKP +: 8]) : CW'(t[8 +: 8]);
  end

  logic              b_valid_q, b_last_q, b_first_q, b_vlan_q, b_tcp_q, b_ihl_ok_q;
  logic [DATA_W-1:0] b_data_q;
  logic [CW-1:0]     b_nbytes_q;
  logic [15:0]       b_off_q;
  logic              b_obig_q;          // b_off_q >= 128
  logic [3:0]        b_tcp_idx_q;
  logic [16:0]       b_ip_end_q;
  logic [47:0]       b_doffc_q;
  logic [8*HN-1:0]   sn_q;              // header snapshot of the frame whose last beat is in B
  logic [29:0]       sn_ipm_q;          // its IPv4 header word mask (hq_ipm)

  always_ff @(posedge clk) begin
    if (adv) begin
      b_valid_q   <= a_valid_q;
      b_last_q    <= a_last_q;
      b_first_q   <= a_first_q;
      b_data_q    <= a_data_q;
      b_nbytes_q  <= a_nbytes;
      b_off_q     <= a_off_q;
      b_obig_q    <= |a_off_q[15:7];
      b_vlan_q    <= hq_vlan;
      b_tcp_q     <= hq_tcp;
      b_ihl_ok_q  <= hq_ihl_ok;
      b_tcp_idx_q <= hq_tcp_idx;
      b_ip_end_q  <= hq_ip_end;
      b_doffc_q   <= hq_doffc;
      if (a_valid_q && a_last_q) begin
        sn_q     <= hq;
        sn_ipm_q <= hq_ipm;
      end
    end
    if (rst) b_valid_q <= 1'b0;
  end

  // ------------------------------------------------------------------ stage C: decode
  logic [6:0]  b_tcp_off;
  logic [3:0]  b_doff;
  logic        b_doff_ok;
  logic [7:0]  b_pay_off;
  logic [WB-1:0] b_keep;               // bytes of the beat in the TCP checksum
  logic [17:0]   b_ipr, b_ipw;          // IP end - offset (signed), and + WB
  logic          b_pe_frame;            // the payload ends with this last beat, before the IP end
  always_comb begin : b_offsets
    b_tcp_off = 7'd34 + {1'b0, b_tcp_idx_q, 2'b00};
    b_doff    = 4'd0;
    for (int i = 0; i < 12; i++) if (b_tcp_idx_q == 4'(i)) b_doff = b_doffc_q[4*i +: 4];
    b_doff_ok = (b_doff >= 4'd5);
    b_pay_off = {1'b0, b_tcp_off} + {2'b00, b_doff, 2'b00};
    b_ipr = {1'b0, b_ip_end_q} - {2'b00, b_off_q};
    b_ipw = b_ipr + 18'(WB);
    // off + nbytes < IP end
    b_pe_frame = b_last_q && ($signed({{(18-CW){1'b0}}, b_nbytes_q}) < $signed(b_ipr));
  end

  // The TCP checksum covers frame bytes [TCP offset, IP end). The byte mask of the beat is
  // made here and registered, so stage C only ANDs it into the data in front of its adders
  // (the mask from two byte bounds in C would exceed the depth budget at DATA_W 512). The beat
  // offset is a multiple of WB, so byte b of the beat is frame byte {off[15:LB], b}: the TCP
  // offset (below 128) is a pick from a thermometer of the TCP index by off[6:LB] (or passed
  // when off >= 128), the IP end a comparison of the beat numbers (less / equal) and a
  // thermometer of its low bits.
  // The beat-number comparison is not made here (an 11-bit compare in front of the mask was
  // the deepest RX path at DATA_W 512): the first beat of a frame (off 0) needs only the
  // IP end's beat number against zero, and every later beat takes e_nlt_q / e_neq_q, which
  // the frame's previous beat registered from its own IP end - off (b_ipr): the next beat is
  // before / at the IP end's beat when b_ipr >= 2 WB / WB <= b_ipr < 2 WB. Bubbles leave them
  // alone (a frame's beats reach B in order). The previous beat's IP end is this beat's: the
  // capture already held the total length for it whenever the mask can be nonzero (bytes
  // >= 34; the length is in bytes 16..21, so at DATA_W 64 it is there from beat 3 on and the
  // mask is zero up to beat 4).
  logic e_nlt_q, e_neq_q;
  always_ff @(posedge clk) begin
    if (adv && b_valid_q) begin
      e_nlt_q <= !b_ipr[17] && (|b_ipr[16:LB+1]);
      e_neq_q <= !b_ipr[17] && (b_ipr[16:LB] == (17 - LB)'(1));
    end
  end
  always_comb begin : b_ckeep
    logic [127:0]  tge;
    logic [WB-1:0] e_lo;
    logic          e_lt, e_eq;
    tge  = tcp_ge(b_tcp_idx_q);
    e_lo = therm_lt(b_ip_end_q[LB-1:0]);
    e_lt = b_first_q ? (|b_ip_end_q[16:LB]) : e_nlt_q;
    e_eq = b_first_q ? !(|b_ip_end_q[16:LB]) : e_neq_q;
    for (int b = 0; b < WB; b++)
      b_keep[b] = b_tcp_q && (b_obig_q || tge[{b_off_q[6:LB], LB'(b)}])
                          && (e_lt || (e_eq && e_lo[b]));
  end

  // record fields straight from the snapshot
  /* verilator lint_off UNUSEDSIGNAL */  // checksum and urgent-pointer bytes are not reported
  logic [8*60-1:0] sn_iph, sn_tcph;
  /* verilator lint_on UNUSEDSIGNAL */
  meta_t           sn_rec;
  logic [8*40-1:0] sn_opts;
  logic [18*8-1:0] sn_ipsum;            // IPv4 header: 8 groups of up to 4 words, IHL-masked
  logic [16*32-1:0] sn_ipw;             // the header words, IHL-masked (words 30, 31: 0)
  always_comb begin : sn_decode
    logic       isv4;
    sn_iph  = b_vlan_q ? sn_q[8*18 +: 480] : sn_q[8*14 +: 480];
    sn_tcph = sn_q[8*34 +: 480];
    for (int i = 1; i < 12; i++) if (b_tcp_idx_q == 4'(i)) sn_tcph = sn_q[8*(34 + 4*i) +: 480];
    sn_opts = sn_tcph[8*20 +: 320];
    sn_rec = '0;
    for (int i = 0; i < 6; i++) begin
      sn_rec.eth_dst[8*(5-i) +: 8] = sn_q[8*i +: 8];
      sn_rec.eth_src[8*(5-i) +: 8] = sn_q[8*(6+i) +: 8];
    end
    sn_rec.vlan      = b_vlan_q;
    sn_rec.vlan_tci  = b_vlan_q ? {sn_q[8*14 +: 8], sn_q[8*15 +: 8]} : 16'd0;
    sn_rec.ethertype = b_vlan_q ? {sn_q[8*16 +: 8], sn_q[8*17 +: 8]} : {sn_q[8*12 +: 8], sn_q[8*13 +: 8]};
    isv4 = (sn_rec.ethertype == 16'h0800);
    sn_rec.ipv4 = isv4;
    if (isv4) begin
      sn_rec.ip_ihl       = sn_iph[3:0];
      sn_rec.ip_tos       = sn_iph[8*1 +: 8];
      sn_rec.ip_total_len = {sn_iph[8*2 +: 8], sn_iph[8*3 +: 8]};
      sn_rec.ip_id        = {sn_iph[8*4 +: 8], sn_iph[8*5 +: 8]};
      sn_rec.ip_df        = sn_iph[8*6 + 6];
      sn_rec.ip_mf        = sn_iph[8*6 + 5];
      sn_rec.ip_frag_off  = {sn_iph[8*6 +: 5], sn_iph[8*7 +: 8]};
      sn_rec.ip_ttl       = sn_iph[8*8 +: 8];
      sn_rec.ip_proto     = sn_iph[8*9 +: 8];
      sn_rec.ip_src       = {sn_iph[8*12 +: 8], sn_iph[8*13 +: 8], sn_iph[8*14 +: 8], sn_iph[8*15 +: 8]};
      sn_rec.ip_dst       = {sn_iph[8*16 +: 8], sn_iph[8*17 +: 8], sn_iph[8*18 +: 8], sn_iph[8*19 +: 8]};
    end
    sn_rec.tcp = b_tcp_q;
    if (b_tcp_q) begin
      sn_rec.tcp_sport  = {sn_tcph[8*0 +: 8], sn_tcph[8*1 +: 8]};
      sn_rec.tcp_dport  = {sn_tcph[8*2 +: 8], sn_tcph[8*3 +: 8]};
      sn_rec.tcp_seq    = {sn_tcph[8*4 +: 8], sn_tcph[8*5 +: 8], sn_tcph[8*6 +: 8], sn_tcph[8*7 +: 8]};
      sn_rec.tcp_ack    = {sn_tcph[8*8 +: 8], sn_tcph[8*9 +: 8], sn_tcph[8*10 +: 8], sn_tcph[8*11 +: 8]};
      sn_rec.tcp_doff   = sn_tcph[8*12 + 4 +: 4];
      sn_rec.tcp_flags  = sn_tcph[8*13 +: 8];
      sn_rec.tcp_window = {sn_tcph[8*14 +: 8], sn_tcph[8*15 +: 8]};
    end
    // each group as two pair sums added together: two adder levels, not a chain of three
    for (int w = 0; w < 32; w++)
      sn_ipw[16*w +: 16] = (w < 30 && sn_ipm_q[w % 30])
                         ? {sn_iph[16*(w % 30) +: 8], sn_iph[16*(w % 30) + 8 +: 8]} : 16'd0;
    for (int g = 0; g < 8; g++)
      sn_ipsum[18*g +: 18] = ({2'b00, sn_ipw[64*g +: 16]} + {2'b00, sn_ipw[64*g + 16 +: 16]})
                           + ({2'b00, sn_ipw[64*g + 32 +: 16]} + {2'b00, sn_ipw[64*g + 48 +: 16]});
  end

  // Frame length and its compares with the fixed header ends, and the pseudo-header terms
  // of the TCP checksum, a stage before C uses them. The terms are taken from the IPv4 header
  // bytes as they are, not from the record fields (which are zeroed unless the ethertype is
  // IPv4): they only count for TCP, which implies IPv4, and the ethertype compare stays out
  // of the adders' way.
  logic [15:0] b_fl;
  logic [17:0] b_ps4;
  logic [16:0] b_tl6;
  always_comb begin : b_lens
    b_fl  = b_off_q + 16'(b_nbytes_q);
    b_ps4 = ({2'd0, sn_iph[8*12 +: 8], sn_iph[8*13 +: 8]}
             + {2'd0, sn_iph[8*14 +: 8], sn_iph[8*15 +: 8]})
          + ({2'd0, sn_iph[8*16 +: 8], sn_iph[8*17 +: 8]}
             + {2'd0, sn_iph[8*18 +: 8], sn_iph[8*19 +: 8]});
    b_tl6 = {1'b0, 16'({sn_iph[8*2 +: 8], sn_iph[8*3 +: 8]} - {10'd0, sn_iph[3:0], 2'b00})}
          + 17'd6;
  end

  logic              c_valid_q, c_last_q, c_first_q, c_fwd_q, c_doff_ok_q, c_ihl_ok_q;
  logic [DATA_W-1:0] c_data_q;
  logic [CW-1:0]     c_nbytes_q;
  logic [WB-1:0]     c_keep_q;          // TCP checksum byte mask (b_keep)
  logic [15:0]       c_off_q, c_frame_len_q;
  logic [3:0]        c_flk_q;           // frame length < 14, 18, 34, 38 (bits 0..3)
  logic [17:0]       c_ps4_q;           // pseudo header: IP source + destination words
  logic [16:0]       c_tl6_q;           // pseudo header: TCP length + protocol 6
  logic [7:0]        c_pay_off_q;
  logic [16:0]       c_ip_end_q;
  logic [17:0]       c_ipr_q, c_ipw_q;
  logic              c_pe_frame_q;
  logic [16:0]       c_th_ip_q;         // L2 header + IHL * 4 (raw IHL): IPv4 header end
  logic [16:0]       c_th_tcp_q;        // TCP offset + 20: end of the fixed TCP header
  meta_t             c_rec_q;
  logic [8*40-1:0]   c_opts_q;
  logic [18*8-1:0]   c_ipsum_q;

  always_ff @(posedge clk) begin
    if (adv) begin
      c_valid_q     <= b_valid_q;
      c_last_q      <= b_last_q;
      c_first_q     <= b_first_q;
      c_data_q      <= b_data_q;
      c_nbytes_q    <= b_nbytes_q;
      c_off_q       <= b_off_q;
      c_frame_len_q <= b_fl;
      c_flk_q       <= {b_fl < 16'd38, b_fl < 16'd34, b_fl < 16'd18, b_fl < 16'd14};
      c_ps4_q       <= b_ps4;
      c_tl6_q       <= b_tl6;
      c_fwd_q       <= b_tcp_q && b_doff_ok;
      c_doff_ok_q   <= b_doff_ok;
      c_ihl_ok_q    <= b_ihl_ok_q;
      c_pay_off_q   <= b_pay_off;
      c_ip_end_q    <= b_ip_end_q;
      c_ipr_q       <= b_ipr;
      c_ipw_q       <= b_ipw;
      c_pe_frame_q  <= b_pe_frame;
      c_th_ip_q     <= (b_vlan_q ? 17'd18 : 17'd14) + {11'd0, sn_iph[3:0], 2'b00};
      c_th_tcp_q    <= {10'd0, b_tcp_off} + 17'd20;
      c_keep_q      <= b_keep;
      c_rec_q       <= sn_rec;
      c_opts_q      <= sn_opts;
      c_ipsum_q     <= sn_ipsum;
    end
    if (rst) c_valid_q <= 1'b0;
  end

  // ------------------------------------------------------------------ stage D: sums, counts
  // payload beat counts for the beat in C. Window output: frame bytes
  // [off - WB + s, off + s) (previous beat's tail + this beat's head); flush output on the
  // last beat: [off + s, off + WB + s). Both clipped to the payload end.
  // With the payload end pe (the frame end off + nbytes on the last beat if that comes first,
  // else the IP end) and the window start ws = off + s: tf = pe - ws, tw = tf + WB. The
  // offset-dependent parts (IP end - off, and whether the frame ends first) come registered
  // from stage B, so here there is one mux and one subtraction before the clamp.
  logic [CW-1:0] c_nw, c_nf;
  logic          c_tlw, c_tlf;
  logic [18*NG-1:0] c_tsum;
  always_comb begin : c_counts
    logic [16:0] pb;
    logic [17:0] s, tw_i, tf_i;
    logic [CW-1:0] nb_s;
    logic [CW-1:0] nw_f, nf_f;
    logic        r_hz, r_lo_le;
    pb = {9'd0, c_pay_off_q[7:LB], {LB{1'b0}}};
    s  = {{(18-LB){1'b0}}, c_pay_off_q[LB-1:0]};
    // both payload ends are taken through the subtraction and the clamp side by side; the
    // registered c_pe_frame_q only selects
    tf_i = c_ipr_q - s;
    tw_i = c_ipw_q - s;
    // last payload beat: tw <= WB (window), tf <= WB (flush), as tests that follow no
    // subtraction. Frame end: nbytes + WB - s <= WB is nbytes <= s; nbytes - s <= WB always.
    // IP end, with r = IP end - off (c_ipr_q, signed) and 0 <= s < WB: r + WB - s <= WB is
    // r <= s (r < 0, or r < WB and r's low bits <= s), r - s <= WB is r <= WB + s (r < 0,
    // or r < 2 * WB and either r < WB or r's low bits <= s).
    r_hz    = (c_ipr_q[16:LB+1] == '0);
    r_lo_le = (c_ipr_q[LB-1:0] <= s[LB-1:0]);
    c_tlw = c_pe_frame_q ? (c_nbytes_q <= s[CW-1:0])
                         : (c_ipr_q[17] || (r_hz && !c_ipr_q[LB] && r_lo_le));
    c_tlf = c_pe_frame_q || c_ipr_q[17] || (r_hz && (!c_ipr_q[LB] || r_lo_le));
    // with the frame end (0 <= nbytes <= WB, 0 <= s < WB) the clamps need no wide compare:
    // nbytes + WB - s >= WB exactly when nbytes >= s, and is (nbytes - s) mod WB below that;
    // nbytes - s is at most WB
    nb_s  = c_nbytes_q - s[CW-1:0];   // mod 2^CW
    nw_f  = (c_nbytes_q >= s[CW-1:0]) ? CW'(WB) : {1'b0, nb_s[LB-1:0]};
    nf_f  = (c_nbytes_q > s[CW-1:0]) ? nb_s : '0;
    c_nw  = (c_fwd_q && ({1'b0, c_off_q} >= pb + 17'(WB)))
          ? (c_pe_frame_q ? nw_f : clampb(tw_i)) : '0;
    c_nf  = (c_fwd_q && c_last_q && ({1'b0, c_off_q} >= pb))
          ? (c_pe_frame_q ? nf_f : clampb(tf_i)) : '0;
    // TCP checksum: the bytes in c_keep_q, big-endian words; each group of four words as two
    // pair sums added together (two adder levels, not a chain of three)
    for (int g = 0; g < NG; g++) begin : grp
      logic [16*4-1:0] wm;
      wm = '0;
      for (int w = 4*g; w < 4*g + 4 && w < NW; w++)
        wm[16*(w - 4*g) +: 16] = {c_keep_q[2*w] ? c_data_q[16*w +: 8] : 8'd0,
                                  c_keep_q[2*w+1] ? c_data_q[16*w + 8 +: 8] : 8'd0};
      c_tsum[18*g +: 18] = ({2'b00, wm[0 +: 16]} + {2'b00, wm[16 +: 16]})
                         + ({2'b00, wm[32 +: 16]} + {2'b00, wm[48 +: 16]});
    end
  end

  // error flags, lengths, sums for the record (valid when C holds a last beat)
  meta_t       c_rec_x;
  logic [23:0] c_ipsum_tot;           // up to 30 words
  logic [19:0] c_psum;
  logic [5:0]  c_optlen;
  // Every length check compares the frame length or the IP end (IP total length + L2 header,
  // c_ip_end_q) with a register: the header ends are added up in stage C. With the IP end E =
  // TL + L2: TL < IHL*4 is E < L2 + IHL*4 (c_th_ip_q), and for TCP (IHL valid, so the TCP
  // offset is L2 + IHL*4) TL < IHL*4 + DOFF*4 is E < the payload offset.
  always_comb begin : c_flags
    logic [16:0] fl, pay;
    logic [15:0] d_ip, d_fl;         // (mod 2^16, as the record's field)
    logic        ip_first, gt;
    fl    = {1'b0, c_frame_len_q};
    pay   = {9'd0, c_pay_off_q};
    c_rec_x = c_rec_q;
    c_rec_x.frame_len = c_frame_len_q;
    c_rec_x.runt = c_flk_q[0] || (c_rec_q.vlan && c_flk_q[1])
                || (c_rec_q.ipv4 && (c_rec_q.vlan ? c_flk_q[3] : c_flk_q[2]))
                || (c_rec_q.ipv4 && c_ihl_ok_q && (fl < c_th_ip_q))
                || (c_rec_q.tcp && (fl < c_th_tcp_q))
                || (c_rec_q.tcp && c_doff_ok_q && (fl < pay));
    c_rec_x.hdr_err = (c_rec_q.ipv4 && !c_ihl_ok_q) || (c_rec_q.tcp && !c_doff_ok_q);
    c_rec_x.len_err = c_rec_q.ipv4
                   && ((c_ip_end_q > fl) || (c_ip_end_q < c_th_ip_q)
                       || (c_rec_q.tcp && (c_ip_end_q < pay)));
    // payload: min(IP end, frame end) - payload offset, or 0; both differences and both
    // compares side by side, one choice after them
    ip_first = (c_ip_end_q < fl);
    d_ip = c_ip_end_q[15:0] - pay[15:0];
    d_fl = fl[15:0] - pay[15:0];
    gt   = ip_first ? (c_ip_end_q > pay) : (fl > pay);
    c_rec_x.payload_len = (c_fwd_q && gt) ? (ip_first ? d_ip : d_fl) : 16'd0;
    c_optlen = (c_rec_q.tcp && c_doff_ok_q) ? 6'({c_rec_q.tcp_doff, 2'b00} - 6'd20) : 6'd0;
    c_ipsum_tot = '0;
    for (int g = 0; g < 8; g++) c_ipsum_tot = c_ipsum_tot + {6'd0, c_ipsum_q[18*g +: 18]};
    c_psum = {2'd0, c_ps4_q} + {3'd0, c_tl6_q};
  end

  logic [DATA_W-1:0] c_hi, c_lo;
  always_comb begin : c_shift
    logic [SW+4:0] sh;                 // bits: 8 * (4 * sidx + 2) = 32 * sidx + 16
    sh   = {c_pay_off_q[LB-1:2], 5'b10000};
    // barrel shifts (log2 stages), not a priority chain of constant shifts
    c_hi = c_data_q >> sh;
    c_lo = DATA_W'({c_data_q, {DATA_W{1'b0}}} >> sh);
  end

  logic              d_valid_q, d_last_q, d_first_q;
  logic [DATA_W-1:0] d_hi_q, d_lo_q;    // the beat shifted for the realignment (see below)
  logic [CW-1:0]     d_nw_q, d_nf_q;
  logic              d_tlw_q, d_tlf_q;
  logic [18*NG-1:0]  d_tsum_q;
  meta_t             d_rec_q;
  logic [8*40-1:0]   d_opts_q;
  logic [5:0]        d_optlen_q;
  logic [23:0]       d_ipsum_q;
  logic [19:0]       d_psum_q;

  always_ff @(posedge clk) begin
    if (adv) begin
      d_valid_q  <= c_valid_q;
      d_last_q   <= c_last_q;
      d_first_q  <= c_first_q;
      d_hi_q     <= c_hi;
      d_lo_q     <= c_lo;
      d_nw_q     <= c_valid_q ? c_nw : '0;
      d_nf_q     <= c_valid_q ? c_nf : '0;
      d_tlw_q    <= c_tlw;
      d_tlf_q    <= c_tlf;
      d_tsum_q   <= c_tsum;
      d_rec_q    <= c_rec_x;
      d_opts_q   <= c_opts_q;
      d_optlen_q <= c_optlen;
      d_ipsum_q  <= c_ipsum_tot;
      d_psum_q   <= c_psum;
    end
    if (rst) begin
      d_valid_q <= 1'b0;
      d_nw_q    <= '0;
      d_nf_q    <= '0;
    end
  end

  // ------------------------------------------------------------------ payload out
  // The payload starts sh = 4 * sidx + 2 bytes into a beat (sidx = payload offset bits
  // LB-1:2, constant for a frame). The window of a beat is the previous beat's bytes from sh
  // on, then this beat's first sh bytes: (prev >> sh) | (this << (DATA_W - sh)); the flush
  // beat is this >> sh. Both shifts of each beat are made in C (c_hi, c_lo) and registered,
  // so D only ORs two registers before the tkeep mask and the output choice.
  logic [DATA_W-1:0] prev_hi_q;            // d_hi_q of the previous beat of the frame in D
  logic [DATA_W-1:0] win_data, fl_data, win_m, fl_m;
  logic [WB-1:0]     win_keep, fl_keep;
  always_comb begin : pay_mux
    win_data = d_lo_q | prev_hi_q;
    fl_data  = d_hi_q;
    for (int b = 0; b < WB; b++) begin
      win_keep[b] = (CW'(b) < d_nw_q);
      fl_keep[b]  = (CW'(b) < d_nf_q);
      win_m[8*b +: 8] = win_keep[b] ? win_data[8*b +: 8] : 8'd0;
      fl_m[8*b +: 8]  = fl_keep[b] ? fl_data[8*b +: 8] : 8'd0;
    end
  end

  logic              o_valid_q, o_last_q, r_valid_q, r_last_q;
  logic [DATA_W-1:0] o_data_q, r_data_q;   // r_*: second beat of a frame end (window + flush)
  logic [WB-1:0]     o_keep_q, r_keep_q;

  assign o_free = !o_valid_q || m_axis_payload_tready;
  assign d_out  = d_valid_q && ((d_nw_q != '0) || (d_nf_q != '0));

  always_ff @(posedge clk) begin
    if (o_free) o_valid_q <= 1'b0;
    if (o_free && r_valid_q) begin
      o_valid_q <= 1'b1;
      o_data_q  <= r_data_q;
      o_keep_q  <= r_keep_q;
      o_last_q  <= r_last_q;
      r_valid_q <= 1'b0;
    end else if (adv && d_out) begin
      o_valid_q <= 1'b1;
      if (d_nw_q != '0) begin
        o_data_q <= win_m;
        o_keep_q <= win_keep;
        o_last_q <= d_tlw_q;
        if (d_nf_q != '0) begin
          r_valid_q <= 1'b1;
          r_data_q  <= fl_m;
          r_keep_q  <= fl_keep;
          r_last_q  <= d_tlf_q;
        end
      end else begin
        o_data_q <= fl_m;
        o_keep_q <= fl_keep;
        o_last_q <= d_tlf_q;
      end
    end
    if (adv && d_valid_q) prev_hi_q <= d_hi_q;
    if (rst) begin
      o_valid_q <= 1'b0;
      r_valid_q <= 1'b0;
    end
  end

  assign m_axis_payload_tdata  = o_data_q;
  assign m_axis_payload_tkeep  = o_keep_q;
  assign m_axis_payload_tlast  = o_last_q;
  assign m_axis_payload_tvalid = o_valid_q;

  // ------------------------------------------------------------------ stage E: checksum
  // The beat's group sums are added as a balanced tree in D (8 groups at DATA_W 512: three
  // adder levels) and registered as one beat sum in E, with the rest of the record; the
  // accumulator adds the beat sums in E, one beat behind D, and the last beat's record
  // moves from E to P3 with the pseudo-header sum added. So no adder tree, accumulator and
  // pseudo-header add sit between the same two registers (8.875 levels at 512 before, when
  // D did all three).
  localparam int NGP = (NG <= 1) ? 1 : (1 << $clog2(NG));   // groups padded to a power of 2
  logic [23:0]     beat_sum;
  logic            e_valid_q, e_last_q, e_first_q, e_ipok_q;
  logic [23:0]     e_bsum_q;
  meta_t           e_rec_q;
  logic [8*40-1:0] e_opts_q;
  logic [5:0]      e_optlen_q;
  logic [19:0]     e_psum_q;
  logic [31:0]     acc_q, acc_next;
  // Option decode for every byte position i of the option area (0..39), from D, registered
  // in E: the walker in P3 then only picks the flags at its position (see P3). The next
  // position is stored bit-sliced (bit k of position i at e_nxt_q[NO*k + i]), so picking it
  // is six 40-way muxes indexed by the position, with no index arithmetic. P3 takes the
  // decode only from a frame's last beat, so E registers it only with a valid last beat in
  // D (a simulator then decodes once per frame instead of every cycle).
  localparam int NO = 40;
  logic [NO-1:0]   e_k0_q, e_err_q, e_mss_q, e_ws_q, e_fin_q;
  logic [6*NO-1:0] e_nxt_q;
  // {k0, err, mss, ws, fin, nxt} of every position (the E registers in that order)
  function automatic logic [11*NO-1:0] opt_decode(input logic [8*40-1:0] opts,
                                                   input logic [5:0] optlen);
    logic [7:0]      kind, len;
    logic [6:0]      rem;                // option bytes from i to the end (negative: past it)
    logic [5:0]      nxt;
    logic            bad, fin_l;
    logic [NO-1:0]   k0, err, mss, ws, fin;
    logic [6*NO-1:0] nx;
    for (int i = 0; i < NO; i++) begin
      kind  = opts[8*i +: 8];
      len   = (i + 1 < NO) ? opts[8*(i+1) +: 8] : 8'd0;
      // rem is the option length minus a constant, so every test below is a compare of two
      // registered quantities (no add in front of a compare)
      rem   = {1'b0, optlen} - 7'(i);
      bad   = rem[6] || (rem[5:0] < 6'd2) || (len < 8'd2)
           || (len[7:6] != 2'd0) || (len[5:0] > rem[5:0])
           || ((kind == 8'd2) && (len != 8'd4)) || ((kind == 8'd3) && (len != 8'd3));
      fin_l = (len[7:6] == 2'd0) && (len[5:0] == rem[5:0]);
      k0[i]  = (kind == 8'd0);
      err[i] = (kind > 8'd1) && bad;
      mss[i] = (kind == 8'd2) && !bad;
      ws[i]  = (kind == 8'd3) && !bad;
      fin[i] = (kind == 8'd1) ? (rem == 7'd1) : fin_l;
      nxt = (kind == 8'd1) ? 6'(i + 1) : 6'(i) + len[5:0];
      for (int k = 0; k < 6; k++) nx[NO*k + i] = nxt[k];
    end
    opt_decode = {k0, err, mss, ws, fin, nx};
  endfunction
  always_comb begin : beat_tree
    logic [2*NGP*24-1:0] t;     // tree node i in t[24*i +: 24]; leaves NGP..2*NGP-1, root 1
    t = '0;
    for (int g = 0; g < NGP; g++)
      t[24*(NGP + g) +: 24] = (g < NG) ? {6'd0, d_tsum_q[18*g +: 18]} : 24'd0;
    for (int i = NGP - 1; i >= 1; i--) t[24*i +: 24] = t[24*(2*i) +: 24] + t[24*(2*i + 1) +: 24];
    beat_sum = (NGP == 1) ? t[24*NGP +: 24] : t[24 +: 24];
  end
  always_ff @(posedge clk) begin
    if (adv) begin
      e_valid_q  <= d_valid_q;
      e_last_q   <= d_last_q;
      e_first_q  <= d_first_q;
      e_bsum_q   <= beat_sum;
      e_rec_q    <= d_rec_q;
      e_ipok_q   <= d_rec_q.ipv4 && bouncer_util_pkg::csum_is_ffff({8'd0, d_ipsum_q});
      e_opts_q   <= d_opts_q;
      e_optlen_q <= d_optlen_q;
      e_psum_q   <= d_psum_q;
    end
    if (adv && d_valid_q && d_last_q)
      {e_k0_q, e_err_q, e_mss_q, e_ws_q, e_fin_q, e_nxt_q} <= opt_decode(d_opts_q, d_optlen_q);
    if (adv && e_valid_q) acc_q <= acc_next;
    if (rst) e_valid_q <= 1'b0;
  end
  assign acc_next = (e_first_q ? 32'd0 : acc_q) + {8'd0, e_bsum_q};

  // ------------------------------------------------------------------ P3: option walker
  logic            p3_valid_q, p3_done_q;
  meta_t           p3_rec_q;
  logic [8*40-1:0] p3_opts_q;
  logic [5:0]      p3_pos_q;     // byte position of the option in hand
  logic [NO-1:0]   p3_k0_q, p3_err_q, p3_mss_q, p3_ws_q, p3_fin_q;
  logic [6*NO-1:0] p3_nxt_q;
  logic [31:0]     p3_sum_q;

  assign m_free   = !m_valid_q || m_meta_ready;
  assign p3_leave = p3_valid_q && p3_done_q && m_free;
  assign p3_ok    = !(e_valid_q && e_last_q) || !p3_valid_q || p3_leave;
  assign adv      = o_free && p3_ok && !(r_valid_q && d_out);

  // One option step per cycle at byte position p3_pos_q. Every position's decode (EOL, NOP,
  // error, MSS, WS, the position after the option, and whether that is the end of the
  // option area) was made in D and registered, so a step is a pick of those flags at the
  // position: the next position and the record updates wait for a 40-way mux, not for a
  // kind/length decode, a length compare and a byte shifter in a row.
  //   EOL: done. NOP: next position + 1, done at the end of the area. Kind >= 2: a length
  //   < 2 or past the area, or an MSS without length 4 / a WS without length 3: opt_err,
  //   done; otherwise MSS/WS are recorded from the next two bytes and the walk goes on
  //   behind the option, done at the end of the area.
  logic [15:0] opt_v;            // option bytes p3_pos_q + 2 and + 3 (MSS / WS values)
  logic [5:0]  step_pos;
  logic        step_done, step_err, step_mss, step_ws;
  always_comb begin : opt_step
    opt_v     = 16'((p3_opts_q >> 16) >> {p3_pos_q, 3'b000});
    for (int k = 0; k < 6; k++) begin : pick
      logic [NO-1:0] nx;
      nx          = p3_nxt_q[NO*k +: NO];
      step_pos[k] = nx[p3_pos_q];
    end
    step_err  = p3_err_q[p3_pos_q];
    step_mss  = p3_mss_q[p3_pos_q];
    step_ws   = p3_ws_q[p3_pos_q];
    step_done = p3_k0_q[p3_pos_q] || step_err || p3_fin_q[p3_pos_q];
  end

  always_ff @(posedge clk) begin
    if (p3_leave) p3_valid_q <= 1'b0;
    if (p3_valid_q && !p3_done_q) begin
      p3_pos_q  <= step_pos;
      p3_done_q <= step_done;
      if (step_err) p3_rec_q.opt_err <= 1'b1;
      if (step_mss) begin
        p3_rec_q.mss_present <= 1'b1;
        p3_rec_q.mss         <= {opt_v[7:0], opt_v[15:8]};
      end
      if (step_ws) begin
        p3_rec_q.ws_present <= 1'b1;
        p3_rec_q.ws         <= opt_v[7:0];
      end
    end
    if (adv && e_valid_q && e_last_q) begin
      p3_valid_q  <= 1'b1;
      p3_rec_q    <= e_rec_q;
      p3_rec_q.ip_csum_ok <= e_ipok_q;
      p3_opts_q   <= e_opts_q;
      p3_pos_q    <= '0;
      p3_k0_q     <= e_k0_q;
      p3_err_q    <= e_err_q;
      p3_mss_q    <= e_mss_q;
      p3_ws_q     <= e_ws_q;
      p3_fin_q    <= e_fin_q;
      p3_nxt_q    <= e_nxt_q;
      p3_done_q   <= (e_optlen_q == 6'd0);
      p3_sum_q    <= acc_next + {12'd0, e_psum_q};
    end
    if (rst) p3_valid_q <= 1'b0;
  end

  // ------------------------------------------------------------------ record out
  logic  m_valid_q;
  meta_t m_rec_q;
  always_ff @(posedge clk) begin
    if (m_free) m_valid_q <= 1'b0;
    if (p3_leave) begin : load
      logic csum_ok;
      csum_ok = p3_rec_q.tcp && bouncer_util_pkg::csum_is_ffff(p3_sum_q);
      m_valid_q           <= 1'b1;
      m_rec_q             <= p3_rec_q;
      m_rec_q.tcp_csum_ok <= csum_ok;
      m_rec_q.bad <= p3_rec_q.runt || p3_rec_q.len_err || p3_rec_q.hdr_err
                  || (p3_rec_q.ipv4 && !p3_rec_q.ip_csum_ok)
                  || (p3_rec_q.tcp && (!csum_ok || p3_rec_q.opt_err));
    end
    if (rst) m_valid_q <= 1'b0;
  end

  assign m_meta_valid           = m_valid_q;
  assign m_meta_eth_dst         = m_rec_q.eth_dst;
  assign m_meta_eth_src         = m_rec_q.eth_src;
  assign m_meta_vlan_present    = m_rec_q.vlan;
  assign m_meta_vlan_tci        = m_rec_q.vlan_tci;
  assign m_meta_ethertype       = m_rec_q.ethertype;
  assign m_meta_ipv4            = m_rec_q.ipv4;
  assign m_meta_ip_ihl          = m_rec_q.ip_ihl;
  assign m_meta_ip_tos          = m_rec_q.ip_tos;
  assign m_meta_ip_total_len    = m_rec_q.ip_total_len;
  assign m_meta_ip_id           = m_rec_q.ip_id;
  assign m_meta_ip_df           = m_rec_q.ip_df;
  assign m_meta_ip_mf           = m_rec_q.ip_mf;
  assign m_meta_ip_frag_off     = m_rec_q.ip_frag_off;
  assign m_meta_ip_ttl          = m_rec_q.ip_ttl;
  assign m_meta_ip_proto        = m_rec_q.ip_proto;
  assign m_meta_ip_src          = m_rec_q.ip_src;
  assign m_meta_ip_dst          = m_rec_q.ip_dst;
  assign m_meta_ip_csum_ok      = m_rec_q.ip_csum_ok;
  assign m_meta_tcp             = m_rec_q.tcp;
  assign m_meta_tcp_src_port    = m_rec_q.tcp_sport;
  assign m_meta_tcp_dst_port    = m_rec_q.tcp_dport;
  assign m_meta_tcp_seq         = m_rec_q.tcp_seq;
  assign m_meta_tcp_ack         = m_rec_q.tcp_ack;
  assign m_meta_tcp_doff        = m_rec_q.tcp_doff;
  assign m_meta_tcp_flags       = m_rec_q.tcp_flags;
  assign m_meta_tcp_window      = m_rec_q.tcp_window;
  assign m_meta_tcp_csum_ok     = m_rec_q.tcp_csum_ok;
  assign m_meta_tcp_mss_present = m_rec_q.mss_present;
  assign m_meta_tcp_mss         = m_rec_q.mss;
  assign m_meta_tcp_ws_present  = m_rec_q.ws_present;
  assign m_meta_tcp_ws          = m_rec_q.ws;
  assign m_meta_tcp_opt_err     = m_rec_q.opt_err;
  assign m_meta_payload_len     = m_rec_q.payload_len;
  assign m_meta_frame_len       = m_rec_q.frame_len;
  assign m_meta_runt            = m_rec_q.runt;
  assign m_meta_len_err         = m_rec_q.len_err;
  assign m_meta_hdr_err         = m_rec_q.hdr_err;
  assign m_meta_bad             = m_rec_q.bad;

endmodule
`default_nettype wire
