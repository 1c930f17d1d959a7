// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_tcp_ctrl_builder: builds one Ethernet/[802.1Q]/IPv4/TCP control segment without
// payload and streams it on an AXI-Stream master, DATA_W bits per beat (64 or 512), wire
// byte 0 in tdata[7:0], tkeep per byte, no FCS.
//
// Kinds (s_req_kind):
//   0 SYN-ACK  flags 0x12, doff 7, options MSS (02 04 mss) + WS (03 03 wscale) + EOL (00);
//              without s_req_ws_en (the SYN had no window-scale option, RFC 7323 2.2) the
//              window-scale bytes are NOPs (01 01 01), so the length does not change
//   1 ACK      flags 0x10, doff 5, no options
//   2 FIN|ACK  flags 0x11, doff 5, no options
//   3 RST|ACK  flags 0x14, doff 5, no options
// IPv4: 0x45, TOS, total length 40 (+8 options), IP ID, DF (0x4000), TTL, proto 6, checksum,
// src LOC_IP, dst REM_IP. TCP: src LOC_PORT, dst REM_PORT, seq, ack, window, checksum
// (pseudo-header), urgent 0. All inputs are host-order integers; MACs have the first wire
// byte in bits [47:40]. With PAD_MIN != 0 frames shorter than 60 bytes are padded with zero
// bytes to 60 (IP total length excludes the padding), as a MAC would.
//
// Pipeline (elastic, every stage stalls only when the one after it is full):
//   A  (accept edge)  fields + partial checksum sums of at most 4 words (+ a constant)
//                     each, at most 3 where a sequence or acknowledgement number is in it
//   B                 IPv4 and TCP 32-bit totals (2 and 5 partial sums), frame length
//   S  (stream reg)   fold + complement, header image; cut into beats
//   O  (output reg)   m_axis_* registered
// Latency: request handshake -> first beat valid = 3 cycles (edges B, S, O after the
// accepting edge). Throughput: one beat per cycle with tready high, back to back across
// segments (S reloads on the edge that sends the previous segment's last beat), so one
// segment per cycle at DATA_W 512 (SYN-ACK with VLAN, 66 bytes, takes 2 beats).
// s_req_ready is a flop: a request that arrives while stage A cannot move waits in a skid
// register (s_req_ready low while it is full) and enters A from there, so m_axis_tready
// does not reach the requester combinationally. Without back-pressure the skid is bypassed
// and the latency is unchanged.
`default_nettype none
module bouncer_tcp_ctrl_builder #(
  parameter int DATA_W  = 64,
  parameter int PAD_MIN = 1
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire                 s_req_valid,
  output logic                s_req_ready,
  input  wire [1:0]           s_req_kind,
  input  wire [47:0]          s_req_rem_mac,
  input  wire [47:0]          s_req_loc_mac,
  input  wire                 s_req_vlan_en,
  input  wire [15:0]          s_req_vlan_tci,
  input  wire [31:0]          s_req_loc_ip,
  input  wire [31:0]          s_req_rem_ip,
  input  wire [7:0]           s_req_tos,
  input  wire [7:0]           s_req_ttl,
  input  wire [15:0]          s_req_ip_id,
  input  wire [15:0]          s_req_loc_port,
  input  wire [15:0]          s_req_rem_port,
  input  wire [31:0]          s_req_seq,
  input  wire [31:0]          s_req_ack,
  input  wire [15:0]          s_req_window,
  input  wire [15:0]          s_req_mss,
  input  wire [7:0]           s_req_wscale,
  input  wire                 s_req_ws_en,

  output logic [DATA_W-1:0]   m_axis_tdata,
  output logic [DATA_W/8-1:0] m_axis_tkeep,
  output logic                m_axis_tlast,
  output logic                m_axis_tvalid,
  input  wire                 m_axis_tready
);

  localparam int WB        = DATA_W / 8;                       // bytes per beat
  localparam int MAX_BYTES = 66;                               // SYN-ACK with VLAN
  localparam int NB_MAX    = (MAX_BYTES + WB - 1) / WB;        // beats of the longest frame
  localparam int IMG_BYTES = NB_MAX * WB;
  localparam int KW        = $clog2(NB_MAX + 1);

  localparam logic [1:0] K_SYNACK = 2'd0;
  localparam logic [1:0] K_ACK    = 2'd1;
  localparam logic [1:0] K_FINACK = 2'd2;

  typedef struct packed {
    logic [1:0]  kind;
    logic [47:0] rem_mac;
    logic [47:0] loc_mac;
    logic        vlan_en;
    logic [15:0] vlan_tci;
    logic [31:0] loc_ip;
    logic [31:0] rem_ip;
    logic [7:0]  tos;
    logic [7:0]  ttl;
    logic [15:0] ip_id;
    logic [15:0] loc_port;
    logic [15:0] rem_port;
    logic [31:0] seq;
    logic [31:0] ack;
    logic [15:0] window;
    logic [15:0] mss;
    logic [7:0]  wscale;
    logic        ws_en;
  } req_t;

  // ------------------------------------------------------------------ handshakes
  logic a_valid_q, b_valid_q, s_busy_q, out_valid_q;
  logic out_adv, emit, last_emit, s_load, b_ready, a_ready;
  logic [KW-1:0] k_q, nb_q;

  assign out_adv     = !out_valid_q || m_axis_tready;
  assign emit        = s_busy_q && out_adv;
  assign last_emit   = emit && (k_q + KW'(1) == nb_q);
  assign b_ready     = !s_busy_q || last_emit;
  assign s_load      = b_valid_q && b_ready;
  assign a_ready     = !a_valid_q || b_ready;

  // ------------------------------------------------------------------ request skid
  req_t s_req, sk_q, req_in;
  logic sk_v_q, in_valid, a_load;
  always_comb begin
    s_req.kind     = s_req_kind;
    s_req.rem_mac  = s_req_rem_mac;
    s_req.loc_mac  = s_req_loc_mac;
    s_req.vlan_en  = s_req_vlan_en;
    s_req.vlan_tci = s_req_vlan_tci;
    s_req.loc_ip   = s_req_loc_ip;
    s_req.rem_ip   = s_req_rem_ip;
    s_req.tos      = s_req_tos;
    s_req.ttl      = s_req_ttl;
    s_req.ip_id    = s_req_ip_id;
    s_req.loc_port = s_req_loc_port;
    s_req.rem_port = s_req_rem_port;
    s_req.seq      = s_req_seq;
    s_req.ack      = s_req_ack;
    s_req.window   = s_req_window;
    s_req.mss      = s_req_mss;
    s_req.wscale   = s_req_wscale;
    s_req.ws_en    = s_req_ws_en;
  end
  assign s_req_ready = !sk_v_q;
  assign req_in      = sk_v_q ? sk_q : s_req;
  assign in_valid    = sk_v_q || s_req_valid;
  assign a_load      = in_valid && a_ready;

  always_ff @(posedge clk) begin
    if (sk_v_q) begin
      if (a_ready) sk_v_q <= 1'b0;
    end else if (s_req_valid && !a_ready) begin
      sk_v_q <= 1'b1;
      sk_q   <= s_req;
    end
    if (rst) sk_v_q <= 1'b0;
  end

  // ------------------------------------------------------------------ stage A
  req_t        a_q;
  logic [19:0] a_ip_q, a_addr_q;
  logic [17:0] a_sp_q, a_ap_q, a_wc_q, a_opt_q;

  // Per kind, the constant parts of the sums, folded into one constant each: IPv4 total length
  // + flags/fragment word + protocol; pseudo-header protocol + TCP length, data offset and flags,
  // and for a SYN-ACK the option kinds/lengths (MSS 02 04, window scale 03 03 or NOPs 01 01,
  // whose third byte, 01, is in a_opt_q). The sums are
  // written as balanced trees of two-operand adds behind the skid mux. The TCP words are cut
  // into four partial sums of at most 3 words (B adds them to the addresses): the sequence
  // and acknowledgement numbers come through the requester's state mux, and a 6-word tree
  // behind it and the skid mux would exceed the depth budget into stage A.
  logic        in_syn;
  logic [19:0] in_ip_c;
  logic [17:0] in_tcp_c;
  always_comb begin
    in_syn = (req_in.kind == K_SYNACK);
    case (req_in.kind)
      K_SYNACK: in_tcp_c = 18'd6 + 18'd28 + 18'h07012 + 18'h00204
                         + (req_in.ws_en ? 18'h00303 : 18'h00101);
      K_ACK:    in_tcp_c = 18'd6 + 18'd20 + 18'h05010;
      K_FINACK: in_tcp_c = 18'd6 + 18'd20 + 18'h05011;
      default:  in_tcp_c = 18'd6 + 18'd20 + 18'h05014;
    endcase
    in_ip_c = (in_syn ? 20'd48 : 20'd40) + 20'h04000 + 20'h00006;
  end

  always_ff @(posedge clk) begin
    if (a_load) begin
      a_q <= req_in;
      // IPv4 header words except the addresses (checksum field 0)
      a_ip_q   <= ({4'd0, 8'h45, req_in.tos} + {4'd0, req_in.ip_id})
                + ({4'd0, req_in.ttl, 8'h00} + in_ip_c);
      // addresses: shared by the IPv4 header and the TCP pseudo-header
      a_addr_q <= ({4'd0, req_in.loc_ip[31:16]} + {4'd0, req_in.loc_ip[15:0]})
                + ({4'd0, req_in.rem_ip[31:16]} + {4'd0, req_in.rem_ip[15:0]});
      // ports, sequence and acknowledgement numbers (3 words each, < 2**18)
      a_sp_q   <= {2'd0, req_in.seq[31:16]} + {2'd0, req_in.seq[15:0]} + {2'd0, req_in.loc_port};
      a_ap_q   <= {2'd0, req_in.ack[31:16]} + {2'd0, req_in.ack[15:0]} + {2'd0, req_in.rem_port};
      // pseudo-header protocol + TCP length, doff/flags, window; the options' variable words
      a_wc_q   <= in_tcp_c + {2'd0, req_in.window};
      a_opt_q  <= in_syn ? {2'd0, req_in.mss} + (req_in.ws_en ? {2'd0, req_in.wscale, 8'h00}
                                                               : 18'h00100) : 18'd0;
    end
  end

  // ------------------------------------------------------------------ stage B
  req_t        b_q;
  logic [31:0] b_ip_tot_q, b_tcp_tot_q;
  logic [6:0]  b_flen_q;
  logic [KW-1:0] b_nb_q;

  logic [6:0] a_flen;
  always_comb begin
    a_flen = 7'd54 + (a_q.vlan_en ? 7'd4 : 7'd0) + ((a_q.kind == K_SYNACK) ? 7'd8 : 7'd0);
    if (PAD_MIN != 0 && a_flen < 7'd60) a_flen = 7'd60;
  end

  always_ff @(posedge clk) begin
    if (a_valid_q && b_ready) begin
      b_q         <= a_q;
      b_ip_tot_q  <= {12'd0, a_ip_q} + {12'd0, a_addr_q};
      b_tcp_tot_q <= ({12'd0, a_addr_q} + {14'd0, a_sp_q}) + ({14'd0, a_ap_q} + {14'd0, a_wc_q})
                   + {14'd0, a_opt_q};
      b_flen_q    <= a_flen;
      b_nb_q      <= KW'((32'(a_flen) + WB - 1) / WB);
    end
  end

  // ------------------------------------------------------------------ header image
  logic [8*IMG_BYTES-1:0] img;
  always_comb begin : img_build
    logic [95:0]  macs;
    logic [31:0]  tag;
    logic [383:0] l34;     // IPv4 (20) + TCP (20) + options (8)
    logic         syn;
    logic [7:0]   flags;
    syn = (b_q.kind == K_SYNACK);
    case (b_q.kind)
      K_SYNACK: flags = 8'h12;
      K_ACK:    flags = 8'h10;
      K_FINACK: flags = 8'h11;
      default:  flags = 8'h14;
    endcase
    macs = {bouncer_util_pkg::be48(b_q.loc_mac), bouncer_util_pkg::be48(b_q.rem_mac)};
    tag  = {bouncer_util_pkg::be16(b_q.vlan_tci), bouncer_util_pkg::be16(16'h8100)};
    l34 = '0;
    l34[0   +: 8]  = 8'h45;
    l34[8   +: 8]  = b_q.tos;
    l34[16  +: 16] = bouncer_util_pkg::be16(syn ? 16'd48 : 16'd40);
    l34[32  +: 16] = bouncer_util_pkg::be16(b_q.ip_id);
    l34[48  +: 16] = bouncer_util_pkg::be16(16'h4000);
    l34[64  +: 8]  = b_q.ttl;
    l34[72  +: 8]  = 8'h06;
    l34[80  +: 16] = bouncer_util_pkg::be16(~bouncer_util_pkg::csum_fold(b_ip_tot_q));
    l34[96  +: 32] = bouncer_util_pkg::be32(b_q.loc_ip);
    l34[128 +: 32] = bouncer_util_pkg::be32(b_q.rem_ip);
    l34[160 +: 16] = bouncer_util_pkg::be16(b_q.loc_port);
    l34[176 +: 16] = bouncer_util_pkg::be16(b_q.rem_port);
    l34[192 +: 32] = bouncer_util_pkg::be32(b_q.seq);
    l34[224 +: 32] = bouncer_util_pkg::be32(b_q.ack);
    l34[256 +: 8]  = syn ? 8'h70 : 8'h50;
    l34[264 +: 8]  = flags;
    l34[272 +: 16] = bouncer_util_pkg::be16(b_q.window);
    l34[288 +: 16] = bouncer_util_pkg::be16(~bouncer_util_pkg::csum_fold(b_tcp_tot_q));
    l34[304 +: 16] = 16'h0000;
    if (syn) begin
      l34[320 +: 16] = bouncer_util_pkg::be16(16'h0204);
      l34[336 +: 16] = bouncer_util_pkg::be16(b_q.mss);
      l34[352 +: 16] = bouncer_util_pkg::be16(b_q.ws_en ? 16'h0303 : 16'h0101);
      l34[368 +: 8]  = b_q.ws_en ? b_q.wscale : 8'h01;
      l34[376 +: 8]  = 8'h00;    // EOL
    end
    img = '0;
    if (b_q.vlan_en) img[0 +: 96+32+16+384] = {l34, bouncer_util_pkg::be16(16'h0800), tag, macs};
    else             img[0 +: 96+16+384]    = {l34, bouncer_util_pkg::be16(16'h0800), macs};
  end

  // ------------------------------------------------------------------ stream + output
  logic [8*IMG_BYTES-1:0] img_q;
  logic [6:0]             flen_q;

  logic [DATA_W-1:0] out_data_q;
  logic [WB-1:0]     out_keep_q;
  logic              out_last_q;

  logic [15:0]   beat_left;
  logic [WB-1:0] keep;
  always_comb begin
    beat_left = {9'd0, flen_q} - 16'(32'(k_q) * WB);
    for (int b = 0; b < WB; b++) keep[b] = (16'(b) < beat_left);
  end

  always_ff @(posedge clk) begin
    if (emit) begin
      out_data_q <= img_q[32'(k_q) * DATA_W +: DATA_W];
      out_keep_q <= keep;
      out_last_q <= (k_q + KW'(1) == nb_q);
      k_q        <= k_q + KW'(1);
    end
    if (last_emit || !s_busy_q) s_busy_q <= 1'b0;
    if (s_load) begin
      img_q    <= img;
      flen_q   <= b_flen_q;
      nb_q     <= b_nb_q;
      k_q      <= '0;
      s_busy_q <= 1'b1;
    end
    if (out_adv) out_valid_q <= emit;

    if (a_load) a_valid_q <= 1'b1;
    else if (a_valid_q && b_ready) a_valid_q <= 1'b0;
    if (a_valid_q && b_ready) b_valid_q <= 1'b1;
    else if (s_load) b_valid_q <= 1'b0;

    if (rst) begin
      a_valid_q   <= 1'b0;
      b_valid_q   <= 1'b0;
      s_busy_q    <= 1'b0;
      out_valid_q <= 1'b0;
    end
  end

  assign m_axis_tdata  = out_data_q;
  assign m_axis_tkeep  = out_keep_q;
  assign m_axis_tlast  = out_last_q;
  assign m_axis_tvalid = out_valid_q;

endmodule
`default_nettype wire
