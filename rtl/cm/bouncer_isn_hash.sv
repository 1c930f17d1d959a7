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
// Pipeline: one register per half SIPROUND (each half has one layer of two independent
// 64-bit adds: A = v0+=v1 .. v3^=v2, B = v0+=v3 .. v2<<<=32), plus the initial state and the
// output register: 1 + 10 + 1 stages. A whole round per stage put two dependent 64-bit adds
// between two registers (6.875 LUT levels, the kernel's deepest path).
// Latency: request handshake -> m_valid = 11 cycles; one request per cycle. All stages stall
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

  // SIPROUND in two halves, each with one layer of adds
  function automatic logic [255:0] half_a(input logic [255:0] v);
    logic [63:0] v0, v1, v2, v3;
    v0 = v[0 +: 64];
    v1 = v[64 +: 64];
    v2 = v[128 +: 64];
    v3 = v[192 +: 64];
    v0 = v0 + v1; v1 = rotl(v1, 13); v1 = v1 ^ v0; v0 = rotl(v0, 32);
    v2 = v2 + v3; v3 = rotl(v3, 16); v3 = v3 ^ v2;
    half_a = {v3, v2, v1, v0};
  endfunction

  function automatic logic [255:0] half_b(input logic [255:0] v);
    logic [63:0] v0, v1, v2, v3;
    v0 = v[0 +: 64];
    v1 = v[64 +: 64];
    v2 = v[128 +: 64];
    v3 = v[192 +: 64];
    v0 = v0 + v3; v3 = rotl(v3, 21); v3 = v3 ^ v0;
    v2 = v2 + v1; v1 = rotl(v1, 17); v1 = v1 ^ v2; v2 = rotl(v2, 32);
    half_b = {v3, v2, v1, v0};
  endfunction

  localparam int NH = 10;          // half rounds: compression 2 x 2, finalisation 3 x 2

  logic en;
  assign en      = !m_valid || m_ready;
  assign s_ready = en;

  // st_q[256*k +: 256]: the state after stage k (0: initial state, k = 1..NH: half rounds)
  logic [NH:0]           val_q;
  logic [256*(NH+1)-1:0] st_q;
  logic [64*2-1:0]       m0_q;     // m0 along stages 0..1 (used after half round 2)
  logic [64*4-1:0]       m1_q;     // m1 along stages 0..3 (used after half rounds 2 and 4)
  logic [32*(NH+1)-1:0]  t_q;      // time along stages 0..NH

  logic [63:0]  in_m0, in_m1, k0, k1;
  logic [256*(NH+1)-1:0] st_d;
  logic [63:0]  h;
  always_comb begin
    k0    = key[63:0];
    k1    = key[127:64];
    in_m0 = {s_loc_ip, s_rem_ip};
    in_m1 = {32'd0, s_loc_port, s_rem_port};
    // stage 0: initial state, v3 ^= m0
    st_d[0 +: 256] = {k1 ^ 64'h7465646279746573 ^ in_m0, k0 ^ 64'h6c7967656e657261,
                      k1 ^ 64'h646f72616e646f6d, k0 ^ 64'h736f6d6570736575};
    for (int k = 1; k <= NH; k++) begin
      if (k % 2 == 1) st_d[256*k +: 256] = half_a(st_q[256*(k-1) +: 256]);
      else            st_d[256*k +: 256] = half_b(st_q[256*(k-1) +: 256]);
    end
    // after round 1 (stage 2): v0 ^= m0, v3 ^= m1; after round 2 (stage 4): v0 ^= m1,
    // v2 ^= 0xff
    st_d[256*2 +: 64]       = st_d[256*2 +: 64] ^ m0_q[64*1 +: 64];
    st_d[256*2 + 192 +: 64] = st_d[256*2 + 192 +: 64] ^ m1_q[64*1 +: 64];
    st_d[256*4 +: 64]       = st_d[256*4 +: 64] ^ m1_q[64*3 +: 64];
    st_d[256*4 + 128 +: 64] = st_d[256*4 + 128 +: 64] ^ 64'hff;
    h = st_q[256*NH +: 64] ^ st_q[256*NH + 64 +: 64] ^ st_q[256*NH + 128 +: 64]
      ^ st_q[256*NH + 192 +: 64];
  end

  always_ff @(posedge clk) begin
    if (en) begin
      val_q <= {val_q[NH-1:0], s_valid};
      st_q  <= st_d;
      m0_q  <= {m0_q[0 +: 64], in_m0};
      m1_q  <= {m1_q[0 +: 64*3], in_m1};
      t_q   <= {t_q[0 +: 32*NH], time_cnt[SHIFT +: 32]};
      // output
      m_valid <= val_q[NH];
      m_isn   <= (h[63:32] ^ h[31:0]) + t_q[32*NH +: 32];
    end
    if (rst) begin
      val_q   <= '0;
      m_valid <= 1'b0;
    end
  end

endmodule
`default_nettype wire
