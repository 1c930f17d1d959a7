// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer_util_pkg: small pure functions shared by the RTL.
//
// Byte vectors are little-endian in the bus sense: wire byte 0 sits in bits [7:0]. The
// beN() functions turn an integer into its network-order (big-endian) byte vector, so
// `hdr[8*o +: 16] = be16(v)` puts v's high byte at wire offset o.
// Written in the subset that both Verilator 5.006 and Yosys 0.23 accept (no return, no
// import, no casts to user types).
package bouncer_util_pkg;

  function automatic logic [15:0] be16(input logic [15:0] v);
    be16 = {v[7:0], v[15:8]};
  endfunction

  function automatic logic [31:0] be32(input logic [31:0] v);
    be32 = {v[7:0], v[15:8], v[23:16], v[31:24]};
  endfunction

  function automatic logic [47:0] be48(input logic [47:0] v);
    be48 = {v[7:0], v[15:8], v[23:16], v[31:24], v[39:32], v[47:40]};
  endfunction

  // Index mask of a ring of 2**size_log2 entries (size_log2 1..15; 0 gives an empty mask):
  // bits below size_log2 set. Built from equalities against constants, so each mask bit is
  // one 4-input LUT; (1 << size_log2) - 1 maps to a shifter and a carry chain (about 5 levels,
  // in front of every ring-index compare).
  function automatic logic [14:0] ring_mask(input logic [3:0] size_log2);
    ring_mask = '0;
    for (int k = 1; k < 16; k++) begin
      if (size_log2 == 4'(k)) ring_mask = 15'((16'd1 << k) - 16'd1);
    end
  endfunction

  // Fold a 32-bit ones'-complement partial sum to 16 bits (two end-around carries).
  function automatic logic [15:0] csum_fold(input logic [31:0] s);
    logic [16:0] t;
    t = {1'b0, s[15:0]} + {1'b0, s[31:16]};
    csum_fold = t[15:0] + {15'd0, t[16]};
  endfunction

  // csum_fold(s) == 16'hFFFF without the two carry chains: the first fold gives FFFF without
  // a carry exactly when the halves are complements, and FFFE with one (FFFE + 1) only for
  // FFFF + FFFF.
  function automatic logic csum_is_ffff(input logic [31:0] s);
    csum_is_ffff = (s[15:0] == ~s[31:16]) || (s == 32'hFFFF_FFFF);
  endfunction

endpackage
