// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_rx_syn_class: tells, for each frame on the RX port, whether it is a pure SYN: a TCP
// segment over IPv4 (Ethernet type 0x0800, or 802.1Q tag 0x8100 then 0x0800; IPv4 version 4,
// IHL 5..15, protocol 6) whose flags have SYN set and ACK, RST and FIN clear. Everything else
// (other EtherTypes, other protocols, frames too short to hold the flags byte) is "not a SYN".
// The classification only decides which RX queue a frame waits in (bouncer_rx_prio_fifo); the
// parser checks the frame in full afterwards, so a frame classified wrongly (an IPv4 fragment,
// a bad checksum) is still parsed or dropped exactly as before.
//
// Latency: the class of a frame is registered: when its tlast beat is on s_* in cycle c,
// cls_valid pulses and cls_syn holds the class in cycle c+1. One frame per tlast beat, at
// line rate: beats may come every cycle and frames back to back (no ready; the input is
// observed, not consumed).
//
// How: the flags byte lies at L2 + 4 * IHL + 13, with L2 = 14 (untagged) or 18 (tagged): one
// of 22 byte offsets (47..91) in the frame. A sticky bit per candidate offset records whether
// the byte at that offset had the pure-SYN pattern; the header bytes that select the candidate
// (EtherType, version/IHL, protocol) are captured as they pass. At the tlast beat the selected
// candidate, the header checks and the current beat's bytes (which may hold all of them at
// 512 bits) give the class, registered. Beat numbers saturate after the last candidate beat.
// At 64 bits no frame of 28 bytes or more has a header byte or its flags byte in its tlast beat
// (the flags byte sits at lane 3 or 7, and 6 more TCP header bytes follow it), so the class is
// taken from the registered bytes alone: the RX port's data is then not in front of the
// candidate selection (depth budget). Shorter frames are runts the parser drops anyway.
`default_nettype none
module bouncer_rx_syn_class #(
  parameter int DATA_W = 64
) (
  input  wire                 clk,
  input  wire                 rst,

  input  wire  [DATA_W-1:0]   s_tdata,
  input  wire  [DATA_W/8-1:0] s_tkeep,
  input  wire                 s_tlast,
  input  wire                 s_tvalid,

  output logic                cls_valid,   // one cycle after each tlast beat
  output logic                cls_syn      // with cls_valid: the frame is a pure SYN
);

  // ------------------------------------------------------------------ parameter checks
  if (!(DATA_W == 64 || DATA_W == 128 || DATA_W == 256 || DATA_W == 512)) begin : g_bad_data_w
    $error("bouncer_rx_syn_class: DATA_W must be 64, 128, 256 or 512");
  end

  localparam int KB      = DATA_W / 8;       // bytes per beat
  localparam int NCAND   = 11;               // IHL 5..15
  localparam int LAST_B  = 91 / KB;          // beat of the furthest candidate
  localparam int BW      = $clog2(LAST_B + 2);
  // header bytes: 12/13 (EtherType or TPID), 14 (version/IHL untagged), 16/17 (inner
  // EtherType), 18 (version/IHL tagged), 23 (protocol untagged), 27 (protocol tagged)
  localparam int NHDR = 8;
  // the class from the bytes of earlier beats only (see the header)
  localparam bit FROM_REGS = (KB == 8);

  localparam logic [8*NHDR-1:0] HDR_OFF =
      {8'd27, 8'd23, 8'd18, 8'd17, 8'd16, 8'd14, 8'd13, 8'd12};   // byte h: HDR_OFF[8h +: 8]

  function automatic int cand_off(input bit vlan, input int i);
    cand_off = (vlan ? 18 : 14) + 4 * (i + 5) + 13;
  endfunction

  // pure SYN: SYN (0x02) set; FIN (0x01), RST (0x04), ACK (0x10) clear
  function automatic logic pure_syn(input logic [7:0] f);
    pure_syn = (f & 8'h17) == 8'h02;
  endfunction

  logic [BW-1:0]    beat_q, beat_d;
  logic [NCAND-1:0] hit_u_q, hit_u_d, hit_t_q, hit_t_d;   // untagged / tagged candidates
  logic [7:0]       hdr_q [NHDR];
  logic [7:0]       hdr   [NHDR];   // header bytes as of the current beat
  logic [7:0]       hsel  [NHDR];   // the header bytes the class is taken from
  logic [NCAND-1:0] hit_u_sel, hit_t_sel;
  logic             syn_d, cls_v_q, cls_syn_q;
  logic             u_ok, t_ok, u_hit, t_hit;
  logic [3:0]       ihl_u, ihl_t;

  always_comb begin
    // the header bytes: from this beat when it carries them, else as captured
    for (int h = 0; h < NHDR; h++) begin
      hdr[h] = hdr_q[h];
      if (32'(beat_q) == 32'(HDR_OFF[8*h +: 8]) / KB)
        hdr[h] = s_tdata[8 * (32'(HDR_OFF[8*h +: 8]) % KB) +: 8];
    end
    // candidate flag bytes seen so far, this beat included
    hit_u_d = hit_u_q;
    hit_t_d = hit_t_q;
    for (int i = 0; i < NCAND; i++) begin
      if (32'(beat_q) == cand_off(1'b0, i) / KB && s_tkeep[cand_off(1'b0, i) % KB] &&
          pure_syn(s_tdata[8 * (cand_off(1'b0, i) % KB) +: 8]))
        hit_u_d[i] = 1'b1;
      if (32'(beat_q) == cand_off(1'b1, i) / KB && s_tkeep[cand_off(1'b1, i) % KB] &&
          pure_syn(s_tdata[8 * (cand_off(1'b1, i) % KB) +: 8]))
        hit_t_d[i] = 1'b1;
    end
    for (int h = 0; h < NHDR; h++) hsel[h] = FROM_REGS ? hdr_q[h] : hdr[h];
    hit_u_sel = FROM_REGS ? hit_u_q : hit_u_d;
    hit_t_sel = FROM_REGS ? hit_t_q : hit_t_d;
    ihl_u = hsel[2][3:0];
    ihl_t = hsel[5][3:0];
    u_ok  = hsel[0] == 8'h08 && hsel[1] == 8'h00 && hsel[2][7:4] == 4'd4 && hsel[6] == 8'd6;
    t_ok  = hsel[0] == 8'h81 && hsel[1] == 8'h00 && hsel[3] == 8'h08 && hsel[4] == 8'h00 &&
            hsel[5][7:4] == 4'd4 && hsel[7] == 8'd6;
    u_hit = 1'b0;
    t_hit = 1'b0;
    for (int i = 0; i < NCAND; i++) begin
      if (ihl_u == 4'(i + 5) && hit_u_sel[i]) u_hit = 1'b1;
      if (ihl_t == 4'(i + 5) && hit_t_sel[i]) t_hit = 1'b1;
    end
    syn_d = (u_ok && u_hit) || (t_ok && t_hit);

    beat_d = beat_q;
    if (s_tvalid) begin
      if (s_tlast) beat_d = '0;
      else if (32'(beat_q) <= LAST_B) beat_d = beat_q + 1'b1;
    end
  end

  always_ff @(posedge clk) begin
    if (s_tvalid) begin
      for (int h = 0; h < NHDR; h++) hdr_q[h] <= hdr[h];
      hit_u_q <= s_tlast ? '0 : hit_u_d;
      hit_t_q <= s_tlast ? '0 : hit_t_d;
    end
    beat_q    <= beat_d;
    cls_v_q   <= s_tvalid && s_tlast;
    cls_syn_q <= s_tvalid && s_tlast && syn_d;
    if (rst) begin
      beat_q  <= '0;
      hit_u_q <= '0;
      hit_t_q <= '0;
      cls_v_q <= 1'b0;
      cls_syn_q <= 1'b0;
    end
  end

  assign cls_valid = cls_v_q;
  assign cls_syn   = cls_syn_q;

  // ------------------------------------------------------------------ assertions
`ifndef SYNTHESIS
  always_ff @(posedge clk) begin
    if (!rst) begin
      // a class only with a frame's end
      if (cls_syn_q) assert (cls_v_q);
      // the beat number never passes the saturation value
      assert (32'(beat_q) <= LAST_B + 1);
    end
  end
`endif

endmodule
`default_nettype wire
