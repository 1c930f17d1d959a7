// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_arp_responder: answers ARP requests for the port's own IPv4 address, so that a peer
// can resolve PORT_IP to PORT_MAC without a static neighbour entry.
//
// Input: a copy of every beat the RX parser takes from the RX FIFO (s_snoop_*, no
// back-pressure: the responder only watches). It keeps bytes 0..41 of each frame (Ethernet
// header and the 28-byte ARP body of an untagged frame) and, after the frame's last beat,
// decides in two registered steps:
//   1. match bits: EtherType 0x0806; the fixed fields htype 1, ptype 0x0800, hlen 6, plen 4,
//      at least 42 bytes, a unicast sender MAC (sha); oper 1; destination MAC broadcast or
//      PORT_MAC; target IP (tpa) = PORT_IP; sender IP (spa) = tpa (gratuitous);
//   2. an ARP frame (EtherType 0x0806) is answered when the responder is enabled (CTRL.ENABLE
//      1, PORT_IP non-zero, PORT_MAC a non-zero unicast address), it is a well-formed request
//      (oper 1) to the broadcast MAC or PORT_MAC for tpa = PORT_IP, not gratuitous
//      (spa != tpa), and no reply is waiting. Every other ARP frame (disabled, malformed,
//      replies, requests for another address, gratuitous requests, requests that find a reply
//      still waiting) is dropped and counted (stat_dropped). 802.1Q-tagged frames are not
//      looked at (their EtherType is 0x8100).
// The reply (oper 2, sha = PORT_MAC, spa = PORT_IP, tha/tpa = the request's sha/spa, Ethernet
// destination = the request's sha, source PORT_MAC, zero padding to 60 bytes) is held in one
// slot and sent on m_axis_*, a frame source of the TX arbiter; stat_replied pulses when its
// last beat is taken. One slot and the arbiter's round-robin bound what an ARP flood costs the
// TCP sources: at most every other frame on the port, never a stall.
// The module never back-pressures anything and sends only frames it was asked for.
`default_nettype none
module bouncer_arp_responder #(
  parameter int DATA_W = 64  // stream width: 64 or 512
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire                 enable,     // CTRL.ENABLE
  input  wire  [47:0]         port_mac,   // byte 0 (first on the wire) in bits 47:40
  input  wire  [31:0]         port_ip,    // first byte on the wire in bits 31:24

  // every beat the RX parser takes (valid = tvalid && tready there)
  input  wire  [DATA_W-1:0]   s_snoop_tdata,
  input  wire  [DATA_W/8-1:0] s_snoop_tkeep,
  input  wire                 s_snoop_tlast,
  input  wire                 s_snoop_valid,

  output logic [DATA_W-1:0]   m_axis_tdata,
  output logic [DATA_W/8-1:0] m_axis_tkeep,
  output logic                m_axis_tlast,
  output logic                m_axis_tvalid,
  input  wire                 m_axis_tready,

  output logic                stat_replied,   // pulse: a reply's last beat was taken
  output logic                stat_dropped    // pulse: an ARP frame got no reply
);
  localparam int KW      = DATA_W / 8;
  localparam int HB      = 42;                 // bytes looked at: Ethernet 14 + ARP 28
  localparam int FB      = 60;                 // reply length (minimum frame, no FCS)
  localparam int NBEATS  = (FB + KW - 1) / KW; // reply beats: 8 at 64 bit, 1 at 512
  localparam int BW      = 4;                  // beat counter width
  localparam int LASTB   = (HB - 1) / KW;      // beat that holds byte 41

  // ------------------------------------------------------------------ parameter checks
  if (!(DATA_W == 64 || DATA_W == 512)) begin : g_bad_data_w
    $error("bouncer_arp_responder: DATA_W must be 64 or 512");
  end

  // ------------------------------------------------------------------ header capture
  logic [HB*8-1:0] hdr_q, hdr_d;     // byte i of the frame at bits 8 i +: 8
  logic [BW-1:0]   beat_q;           // beat index in the frame (saturates)
  logic            long_q, long_d;   // byte 41 was present
  logic            eval_q;           // the frame ended last cycle: hdr_q is complete

  always_comb begin
    hdr_d  = hdr_q;
    long_d = (beat_q == '0) ? 1'b0 : long_q;
    for (int p = 0; p < HB; p++)
      if (beat_q == BW'(p / KW)) hdr_d[8*p +: 8] = s_snoop_tdata[8*(p % KW) +: 8];
    if (beat_q == BW'(LASTB)) long_d = long_d | s_snoop_tkeep[(HB - 1) % KW];
  end

  always_ff @(posedge clk) begin
    eval_q <= s_snoop_valid && s_snoop_tlast;
    if (s_snoop_valid) begin
      hdr_q  <= hdr_d;
      long_q <= long_d;
      if (s_snoop_tlast) beat_q <= '0;
      else if (beat_q != '1) beat_q <= beat_q + BW'(1);
    end
    if (rst) begin
      eval_q <= 1'b0;
      beat_q <= '0;
      long_q <= 1'b0;
    end
  end

  // Field n bytes long at byte offset o, as a big-endian number (first byte most significant).
  function automatic logic [47:0] be(input logic [HB*8-1:0] h, input int o, input int n);
    be = '0;
    for (int i = 0; i < n; i++) be = {be[39:0], h[8*(o + i) +: 8]};
  endfunction

  // ------------------------------------------------------------------ step 1: match bits
  logic        s1_v_q, s1_arp_q, s1_fmt_q, s1_req_q, s1_dst_q, s1_tpa_q, s1_grat_q, en_q;
  logic [47:0] s1_sha_q;
  logic [31:0] s1_spa_q;
  logic [47:0] f_dst, f_sha;
  logic [31:0] f_spa, f_tpa;
  assign f_dst = be(hdr_q, 0, 6);
  assign f_sha = be(hdr_q, 22, 6);
  assign f_spa = 32'(be(hdr_q, 28, 4));
  assign f_tpa = 32'(be(hdr_q, 38, 4));

  always_ff @(posedge clk) begin
    s1_v_q    <= eval_q;
    s1_arp_q  <= be(hdr_q, 12, 2) == 48'h0806;
    s1_fmt_q  <= (be(hdr_q, 14, 6) == 48'h0001_0800_0604) && long_q && !f_sha[40];
    s1_req_q  <= be(hdr_q, 20, 2) == 48'h0001;
    s1_dst_q  <= (f_dst == 48'hFFFF_FFFF_FFFF) || (f_dst == port_mac);
    s1_tpa_q  <= f_tpa == port_ip;
    s1_grat_q <= f_spa == f_tpa;
    s1_sha_q  <= f_sha;
    s1_spa_q  <= f_spa;
    en_q      <= enable && (port_ip != 32'd0) && (port_mac != 48'd0) && !port_mac[40];
    if (rst) begin
      s1_v_q <= 1'b0;
      en_q   <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ step 2: decide, reply slot
  logic            answer, take, busy_q, replied_q, dropped_q;
  logic [BW-1:0]   tx_beat_q;
  logic [47:0]     r_tha_q, r_mac_q;
  logic [31:0]     r_tpa_q, r_ip_q;
  logic            tx_fire, tx_last;

  assign answer  = en_q && s1_fmt_q && s1_req_q && s1_dst_q && s1_tpa_q && !s1_grat_q;
  assign take    = s1_v_q && s1_arp_q && answer && !busy_q;
  assign tx_last = tx_beat_q == BW'(NBEATS - 1);
  assign tx_fire = busy_q && m_axis_tready;

  always_ff @(posedge clk) begin
    replied_q <= tx_fire && tx_last;
    dropped_q <= s1_v_q && s1_arp_q && !take;
    if (take) begin
      busy_q    <= 1'b1;
      tx_beat_q <= '0;
      r_tha_q   <= s1_sha_q;
      r_tpa_q   <= s1_spa_q;
      r_mac_q   <= port_mac;
      r_ip_q    <= port_ip;
    end else if (tx_fire) begin
      busy_q    <= !tx_last;
      tx_beat_q <= tx_beat_q + BW'(1);
    end
    if (rst) begin
      busy_q    <= 1'b0;
      tx_beat_q <= '0;
      replied_q <= 1'b0;
      dropped_q <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ the reply frame
  logic [NBEATS*DATA_W-1:0] frame;   // byte i at bits 8 i +: 8, zero past byte 59
  always_comb begin
    logic [FB*8-1:0] b;
    logic [42*8-1:0] hdr;           // bytes 0..41, big-endian: byte 0 in the top bits
    hdr = {r_tha_q, r_mac_q, 16'h0806, 16'h0001, 16'h0800, 8'd6, 8'd4, 16'h0002,
           r_mac_q, r_ip_q, r_tha_q, r_tpa_q};
    b = '0;
    for (int i = 0; i < 42; i++) b[8*i +: 8] = hdr[8*(41 - i) +: 8];
    frame = (NBEATS * DATA_W)'(b);
  end

  always_comb begin
    m_axis_tdata = '0;
    m_axis_tkeep = '0;
    for (int k = 0; k < NBEATS; k++) begin
      if (tx_beat_q == BW'(k)) begin
        m_axis_tdata = frame[k*DATA_W +: DATA_W];
        for (int j = 0; j < KW; j++) m_axis_tkeep[j] = (k * KW + j) < FB;
      end
    end
  end
  assign m_axis_tlast  = tx_last;
  assign m_axis_tvalid = busy_q;
  assign stat_replied  = replied_q;
  assign stat_dropped  = dropped_q;

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  logic held_q;   // a beat was offered and not taken last cycle
  always_ff @(posedge clk) begin
    held_q <= !rst && m_axis_tvalid && !m_axis_tready;
    if (!rst) begin
      // a frame once offered is held until its last beat is taken
      if (held_q) assert (m_axis_tvalid);
      // a reply is loaded only into an empty slot
      if (take) assert (!busy_q);
      // the beat index never runs past the reply
      if (busy_q) assert (tx_beat_q < BW'(NBEATS));
    end
  end
`endif

endmodule
`default_nettype wire
