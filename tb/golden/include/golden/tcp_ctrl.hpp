// Golden reference model of the TCP control segments (SYN-ACK, ACK, FIN|ACK, RST|ACK) and of
// the keyed ISN hash.
//
// Independent of rtl/ and hostsw/: plain structs in, exact wire bytes (no FCS) out.
//
// Segment layout: Ethernet (REM_MAC, LOC_MAC), optional 802.1Q tag (0x8100, TCI), EtherType
// 0x0800; IPv4 0x45, TOS, total length 40 (+8 with options), IP ID, 0x4000 (DF), TTL, 6,
// header checksum, LOC_IP, REM_IP; TCP LOC_PORT, REM_PORT, seq, ack, data offset 5 (7 with
// options), flags, window, checksum (pseudo-header), urgent 0. Only SYN-ACK carries options:
// MSS (02 04 mss), window scale (03 03 wscale; three NOPs 01 01 01 instead when `ws` is false,
// i.e. the SYN had no window-scale option) and one EOL byte (00). With pad_min, frames
// shorter than 60 bytes get zero bytes up to 60 (the IP total length excludes them).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "golden/reject_frame.hpp"

namespace golden {

enum class TcpCtrlKind : uint8_t { kSynAck = 0, kAck = 1, kFinAck = 2, kRstAck = 3 };

inline constexpr uint8_t kTcpSyn = 0x02;
inline constexpr uint8_t kTcpRst = 0x04;
inline constexpr size_t kEthMinFrame = 60;  // without FCS

struct TcpCtrlParams {
  TcpCtrlKind kind = TcpCtrlKind::kAck;
  Mac rem_mac, loc_mac;
  bool vlan_en = false;
  uint16_t vlan_tci = 0;
  uint32_t loc_ip = 0, rem_ip = 0;  // host-order integers
  uint8_t tos = 0, ttl = 64;
  uint16_t ip_id = 0;
  uint16_t loc_port = 0, rem_port = 0;
  uint32_t seq = 0, ack = 0;
  uint16_t window = 0xFFFF;
  uint16_t mss = 1460;
  uint8_t wscale = 2;
  bool ws = true;       // the window-scale option (else NOPs)
  bool pad_min = true;  // pad to kEthMinFrame like a MAC
};

// TCP flags byte of a kind: 0x12, 0x10, 0x11, 0x14.
uint8_t tcp_ctrl_flags(TcpCtrlKind kind);

// Exact frame bytes, no FCS.
std::vector<uint8_t> build_tcp_ctrl_frame(const TcpCtrlParams& p);

// ---- keyed ISN (RFC 6528 style): ISN = F(key, tuple) + (time >> shift) mod 2^32.
// F: SipHash-1-3-like ARX over two 64-bit words, no length block:
//   m0 = loc_ip << 32 | rem_ip, m1 = loc_port << 16 | rem_port;
//   v0..v3 = SipHash's initial state from k0 = key.lo, k1 = key.hi;
//   v3 ^= m0, 1 round, v0 ^= m0; v3 ^= m1, 1 round, v0 ^= m1; v2 ^= 0xff, 3 rounds;
//   h = v0 ^ v1 ^ v2 ^ v3; F = (h >> 32) ^ (h & 0xffffffff).
struct IsnKey {
  uint64_t lo = 0, hi = 0;  // key bits [63:0] and [127:64]
};
struct IsnTuple {
  uint32_t loc_ip = 0, rem_ip = 0;
  uint16_t loc_port = 0, rem_port = 0;
};
uint32_t isn_hash(const IsnKey& key, const IsnTuple& tuple, uint64_t time, unsigned shift = 4);

}  // namespace golden
