// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_isn_hash: keyed initial sequence numbers in the spirit of Linux secure_tcp_seq()
// (RFC 6528): ISN = F(key, 4-tuple) + (time >> SHIFT).
//
// F is SipHash-1-3 style over two 64-bit message words without SipHash's length block
// (so it is not SipHash proper, just the same ARX rounds and finalisation):
//   k0 = key[63:0], k1 = key[127:64]
//   m0 = {loc_ip, rem_ip}                   (loc_ip in bits 63:32)
//   m1 = {32'd0, loc_port, rem_port}        (loc_port in bits 31:16)
//   v0 = k0 ^ 0x736f6d6570736575   v1 = k1 ^ 0x646f72616e646f6d
//   v2 = k0 ^ 0x6c7967656e657261   v3 = k1 ^ 0x7465646279746573
//   v3 ^= m0; SIPROUND; v0 ^= m0;              (compression, 1 round per word)
//   v3 ^= m1; SIPROUND; v0 ^= m1;
//   v2 ^= 0xff; SIPROUND; SIPROUND; SIPROUND;   (finalisation, 3 rounds)
//   h = v0 ^ v1 ^ v2 ^ v3;  F = h[63:32] ^ h[31:0]
//   ISN = F + time[SHIFT+31:SHIFT]   (mod 2^32; time sampled when the request is accepted)
// SIPROUND is SipHash's: v0+=v1; v1<<<=13; v1^=v0; v0<<<=32; v2+=v3; v3<<<=16; v3^=v2;
//                        v0+=v3; v3<<<=21; v3^=v0; v2+=v1; v1<<<=17; v1^=v2; v2<<<=32.
// The time term is linear on purpose (as in Linux): ISNs of a reused 4-tuple advance with
// the clock. With a 250 MHz cycle counter, SHIFT 4 gives one ISN step per 64 ns like Linux.
//
// Pipeline: one register per SIPROUND, plus the initial state and the output register.
// Latency: request handshake -> m_valid = 6 cycles; one request per cycle. All stages stall
// together when the output is held (s_ready = !m_valid || m_ready).
`default_nettype none
module bouncer_isn_hash #(
  parameter int SHIFT = 4
) (
  input  wire         clk,
  input  wire         rst,

  input  wire         s_valid,
  output logic        s_ready,
  input  wire [31:0]  s_loc_ip,
  input  wire [31:0]  s_rem_ip,
  input  wire [15:0]  s_loc_port,
  input  wire [15:0]  s_rem_port,
  input  wire [127:0] key,
  /* verilator lint_off UNUSEDSIGNAL */  // only 32 bits from SHIFT up are used
  input  wire [63:0]  time_cnt,
  /* verilator lint_on UNUSEDSIGNAL */

  output logic        m_valid,
  input  wire         m_ready,
  output logic [31:0] m_isn
);

  // state packing: {v3, v2, v1, v0}, v0 in bits [63:0]
  function automatic logic [63:0] rotl(input logic [63:0] x, input int n);
    rotl = (x << n) | (x >> (64 - n));
  endfunction

  function automatic logic [255:0] sipround(input logic [255:0] v);
    logic [63:0] v0, v1, v2, v3;
    v0 = v[0 +: 64];
    v1 = v[64 +: 64];
    v2 = v[128 +: 64];
    v3 = v[192 +: 64];
    v0 = v0 + v1; v1 = rotl(v1, 13); v1 = v1 ^ v0; v0 = rotl(v0, 32);
    v2 = v2 + v3; v3 = rotl(v3, 16); v3 = v3 ^ v2;
    v0 = v0 + v3; v3 = rotl(v3, 21); v3 = v3 ^ v0;
    v2 = v2 + v1; v1 = rotl(v1, 17); v1 = v1 ^ v2; v2 = rotl(v2, 32);
    sipround = {v3, v2, v1, v0};
  endfunction

  logic en;
  assign en      = !m_valid || m_ready;
  assign s_ready = en;

  logic [5:0]   val_q;           // stages 0..5
  logic [255:0] v0_q, v1_q, v2_q, v3_q, v4_q, v5_q;
  logic [63:0]  m0_q;
  logic [63:0]  m1_q, m1b_q;
  logic [31:0]  t0_q, t1_q, t2_q, t3_q, t4_q, t5_q;

  logic [63:0]  in_m0, in_m1, k0, k1;
  logic [255:0] r1, r2;
  logic [63:0]  h;
  always_comb begin
    k0    = key[63:0];
    k1    = key[127:64];
    in_m0 = {s_loc_ip, s_rem_ip};
    in_m1 = {32'd0, s_loc_port, s_rem_port};
    r1    = sipround(v0_q);
    r1[0 +: 64]   = r1[0 +: 64] ^ m0_q;
    r1[192 +: 64] = r1[192 +: 64] ^ m1_q;
    r2    = sipround(v1_q);
    r2[0 +: 64]   = r2[0 +: 64] ^ m1b_q;
    r2[128 +: 64] = r2[128 +: 64] ^ 64'hff;
    h     = v5_q[0 +: 64] ^ v5_q[64 +: 64] ^ v5_q[128 +: 64] ^ v5_q[192 +: 64];
  end

  always_ff @(posedge clk) begin
    if (en) begin
      val_q <= {val_q[4:0], s_valid};
      // stage 0: initial state, v3 ^= m0
      v0_q  <= {k1 ^ 64'h7465646279746573 ^ in_m0, k0 ^ 64'h6c7967656e657261,
                k1 ^ 64'h646f72616e646f6d, k0 ^ 64'h736f6d6570736575};
      m0_q  <= in_m0;
      m1_q  <= in_m1;
      t0_q  <= time_cnt[SHIFT +: 32];
      // stage 1: round, v0 ^= m0, v3 ^= m1
      v1_q  <= r1;
      m1b_q <= m1_q;
      t1_q  <= t0_q;
      // stage 2: round, v0 ^= m1, v2 ^= 0xff
      v2_q  <= r2;
      t2_q  <= t1_q;
      // stages 3..5: finalisation rounds
      v3_q  <= sipround(v2_q);
      t3_q  <= t2_q;
      v4_q  <= sipround(v3_q);
      t4_q  <= t3_q;
      v5_q  <= sipround(v4_q);
      t5_q  <= t4_q;
      // output
      m_valid <= val_q[5];
      m_isn   <= (h[63:32] ^ h[31:0]) + t5_q;
    end
    if (rst) begin
      val_q   <= '0;
      m_valid <= 1'b0;
    end
  end

endmodule
`default_nettype wire
