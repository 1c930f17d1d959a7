// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Shared helpers of the passive-CM system tests (tb/system/test_system_cm*.cpp): the real
// driver (hostsw/) against the verilated bouncer_core in the co-simulation (sim/), with
// simulated iWARP initiators (sim/peer) on the wire.
//
// What is here:
//  - test-scale timer/TCP settings and addresses (one place, so every test runs short);
//  - an independent TCP/IPv4 frame decoder (checksums recomputed with golden's own
//    internet_checksum) and a per-connection transcript of both directions, in cycle order;
//  - `Expect`: Bouncer's frames of one connection as the golden builders make them
//    (SYN-ACK, ACK, FIN, RST, MPA reject), from the peer's config and the observed ISS;
//  - a hand-made frame builder for the peer side (inject_rx);
//  - `Scenario`: peers plus a host program (poll events, reject with a per-peer plan, record
//    everything the driver reports, terminal events via the observer);
//  - the initiator's personalities (siw, irdma, cxgb4): what each one's application gets for
//    a reject, restated from the kernel rules (app_for_reject), and whether it is intact;
//  - end-of-test checks (table empty, no node held, no unexpected event) and the tshark
//    dissection of the pcap;
//  - the frame of a test (`CmTest`: platform, driver, listener, Scenario, pcap check), the
//    host program around an opened device (`with_cm`) and a drop hook for the first frame
//    of a kind (`drop_first`).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "golden/frame_parser.hpp"
#include "golden/gtest_tools.hpp"
#include "golden/pcap_io.hpp"
#include "golden/reject_frame.hpp"
#include "golden/tcp_ctrl.hpp"
#include "golden/tshark.hpp"

namespace systest {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
namespace peer = bouncer::peer;
using bouncer::Cm;
using bouncer::Completion;
using bouncer::Device;
using bouncer::RejectOptions;

// ------------------------------------------------------------------ settings

inline constexpr uint32_t kLocalIp = 0x0A000001;  // 10.0.0.1
inline constexpr uint16_t kPort = 20049;
inline constexpr uint16_t kPort2 = 20050;
inline constexpr bouncer::MacAddr kLocalMac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x01};
inline constexpr uint8_t kTtl = 61;    // listener TTL (not the default, so it is checked)
inline constexpr uint8_t kTos = 0x28;  // listener TOS
inline constexpr std::array<uint32_t, 4> kIsnKey = {0x01234567, 0x89abcdef, 0xdeadbeef, 0x0badf00d};
// The core's reset value of HASH_KEY (public): the tests place tuples in buckets on purpose.
inline constexpr uint32_t kHashKey = 0x6A09E667;

// CM timers at simulation scale. One tick is 64 cycles; the timer sweeps all 1024 cm_ids
// once per 1024 cycles, so an expiry is seen at most one sweep (+3) after its deadline.
inline constexpr uint32_t kTick = 64;
inline constexpr uint32_t kRtoTicks = 320;  // RTO_INIT: 20480 cycles
inline constexpr uint64_t kRto = uint64_t{kTick} * kRtoTicks;
inline constexpr uint32_t kCtxDepth = 1024;  // CTX_DEPTH_LOG2 10
inline constexpr uint64_t kSweep = kCtxDepth + 3;
inline constexpr uint32_t kTimeWaitTicks = 100;

inline bouncer::TimerConfig test_timers(uint8_t rtx_max = 6) {
  bouncer::TimerConfig t;
  t.tick_cycles = kTick;
  t.rto_init = kRtoTicks;
  t.rto_max = 8 * kRtoTicks;
  t.rtx_max = rtx_max;
  t.mpa_timeout = 400'000 / kTick;
  t.fin_timeout = 600'000 / kTick;
  t.time_wait = kTimeWaitTicks;
  return t;
}

// Not the reset values, so the frames prove where their fields come from.
inline bouncer::TcpConfig test_tcp() {
  bouncer::TcpConfig t;
  t.mss = 1400;
  t.wscale = 5;
  t.window = 0x7000;
  return t;
}

inline std::string width_name(const ::testing::TestParamInfo<unsigned>& info) {
  return "w" + std::to_string(info.param);
}

// Tests that check what the initiator received run per data width and initiator personality.
using WidthPersonality = std::tuple<unsigned, bouncer::peer::Personality>;
inline std::string width_personality_name(const ::testing::TestParamInfo<WidthPersonality>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + "_" +
         bouncer::peer::to_string(std::get<1>(info.param));
}

inline std::string pcap_path(const std::string& name) {
  return ::testing::TempDir() + "bouncer_cm_" + name + ".pcap";
}

// The current test's name with '/' replaced: a file-name stem.
inline std::string test_stem() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string s = std::string(info->test_suite_name()) + "_" + info->name();
  for (char& c : s) {
    if (c == '/') c = '_';
  }
  return s;
}

inline sim::PlatformConfig platform_config(unsigned width, bool pcap = true) {
  sim::PlatformConfig pc;
  pc.data_width = width;
  if (pcap) pc.pcap_path = pcap_path(test_stem());
  return pc;
}

inline bouncer::DeviceConfig device_config(uint8_t rtx_max = 6) {
  bouncer::DeviceConfig dc;
  dc.isn_key = kIsnKey;
  dc.hash_key = kHashKey;
  dc.timers = test_timers(rtx_max);
  dc.tcp = test_tcp();
  return dc;
}

// IRD/ORD word: ctrl_ird = peer-to-peer | IRD, ctrl_ord = RDMA Read RTR | ORD.
constexpr uint32_t ird_ord_word(unsigned ird, unsigned ord) {
  return (uint32_t{0x8000u | ird} << 16) | (0x4000u | ord);
}

// A simulated initiator number i: its own MAC, 10.0.(1 + i/250).(2 + i%250), port 40000 + i.
// With `kernel`, the rules of that initiator and what its kernel puts on the wire (SYN
// options, request flags, IRD/ORD word for IRD 16 + i % 8, ORD 8 + i % 4); without, the
// default personality (siw rules) with the generic request (CRC, P2P | READ RTR word).
inline peer::InitiatorConfig peer_config(unsigned i, uint8_t rev, bool enhanced,
                                         std::vector<uint8_t> pd, uint16_t port = kPort,
                                         std::optional<peer::Personality> kernel = std::nullopt) {
  peer::InitiatorConfig p;
  if (kernel) {
    p.set_kernel(*kernel, static_cast<uint16_t>(16 + i % 8), static_cast<uint16_t>(8 + i % 4));
  }
  p.mac = {0x02, 0x00, 0x00, 0x01, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
  p.peer_mac = kLocalMac;
  p.ip = 0x0A000000u | ((1 + i / 250) << 8) | (2 + i % 250);
  p.peer_ip = kLocalIp;
  p.port = static_cast<uint16_t>(40000 + i);
  p.peer_port = port;
  p.isn = 0x1000'0000u + i * 0x0101'0101u;
  p.ip_id = static_cast<uint16_t>(0x2000 + 16 * i);
  p.mpa_rev = rev;
  p.enhanced = rev == 2 && enhanced;
  if (!kernel) p.ird_ord = ird_ord_word(16 + i % 8, 8 + i % 4);
  p.private_data = std::move(pd);
  p.rto_cycles = 3 * kRto;  // slower than ours: the retransmissions seen are Bouncer's
  p.max_retransmits = 8;
  p.time_wait_cycles = 8'000;
  p.reply_timeout_cycles = 6'000'000;
  return p;
}

inline std::vector<uint8_t> text_pd(const std::string& base, size_t len) {
  std::vector<uint8_t> pd(len);
  for (size_t k = 0; k < len; ++k) pd[k] = static_cast<uint8_t>(base[k % base.size()]);
  return pd;
}

inline std::vector<std::byte> to_bytes(std::span<const uint8_t> v) {
  std::vector<std::byte> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::byte{v[i]};
  return out;
}

inline std::vector<uint8_t> to_u8(std::span<const std::byte> v) {
  std::vector<uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = std::to_integer<uint8_t>(v[i]);
  return out;
}

inline std::string ip_str(uint32_t ip) {
  char b[24];
  std::snprintf(b, sizeof b, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF,
                ip & 0xFF);
  return b;
}

inline std::string hex(std::span<const uint8_t> v, size_t max = 64) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < v.size() && i < max; ++i) {
    std::snprintf(b, sizeof b, "%02x", v[i]);
    s += b;
  }
  if (v.size() > max) s += "...";
  return s;
}

// ------------------------------------------------------------------ frame decoder

inline constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;

struct Seg {
  std::array<uint8_t, 6> dst_mac{}, src_mac{};
  std::optional<uint16_t> vlan_tci;
  uint8_t tos = 0, ttl = 0;
  uint16_t ip_id = 0, ip_frag = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0;
  uint16_t window = 0;
  std::optional<uint16_t> mss;
  std::optional<uint8_t> wscale;
  std::vector<uint8_t> payload;
  bool ip_csum_ok = false, tcp_csum_ok = false;

  bool has(uint8_t f) const { return (flags & f) != 0; }
  uint32_t seq_len() const {
    return static_cast<uint32_t>(payload.size()) + (has(kSyn) ? 1u : 0u) + (has(kFin) ? 1u : 0u);
  }
  uint32_t end() const { return seq + seq_len(); }
  bool mpa_key(const char* key) const {
    return payload.size() >= 20 && std::memcmp(payload.data(), key, 16) == 0;
  }
  bool mpa_reply() const { return mpa_key("MPA ID Rep Frame"); }
  bool mpa_request() const { return mpa_key("MPA ID Req Frame"); }
  bool bare(uint8_t f) const { return payload.empty() && flags == f; }
};

inline std::string flag_str(uint8_t f) {
  std::string s;
  if (f & kSyn) s += 'S';
  if (f & kFin) s += 'F';
  if (f & kRst) s += 'R';
  if (f & kPsh) s += 'P';
  if (f & kAck) s += '.';
  return s.empty() ? "none" : s;
}

inline uint16_t be16(std::span<const uint8_t> f, size_t o) {
  return static_cast<uint16_t>(f[o] << 8 | f[o + 1]);
}
inline uint32_t be32(std::span<const uint8_t> f, size_t o) {
  return uint32_t{be16(f, o)} << 16 | be16(f, o + 2);
}

// The internet checksum over the TCP pseudo-header (source, destination, protocol 6, the
// segment's length) and `segment` (TCP header and payload): 0 when the segment's checksum
// field is right, the value to put there when that field is zero.
inline uint16_t tcp_pseudo_checksum(uint32_t src_ip, uint32_t dst_ip,
                                    std::span<const uint8_t> segment) {
  std::vector<uint8_t> pseudo;
  for (uint32_t ip : {src_ip, dst_ip}) {
    for (int sh = 24; sh >= 0; sh -= 8) pseudo.push_back(static_cast<uint8_t>(ip >> sh));
  }
  pseudo.push_back(0);
  pseudo.push_back(6);
  pseudo.push_back(static_cast<uint8_t>(segment.size() >> 8));
  pseudo.push_back(static_cast<uint8_t>(segment.size()));
  pseudo.insert(pseudo.end(), segment.begin(), segment.end());
  return golden::internet_checksum(pseudo);
}

// Ethernet [802.1Q] IPv4 TCP, any IHL, TCP options MSS / WS recognized. nullopt (reason in
// *why) for anything else or a truncated frame. Checksums are reported, not required.
inline std::optional<Seg> decode(std::span<const uint8_t> f, std::string* why = nullptr) {
  auto fail = [&](const char* w) -> std::optional<Seg> {
    if (why) *why = w;
    return std::nullopt;
  };
  Seg s;
  if (f.size() < 14) return fail("runt");
  std::copy_n(f.begin(), 6, s.dst_mac.begin());
  std::copy_n(f.begin() + 6, 6, s.src_mac.begin());
  size_t o = 12;
  uint16_t type = be16(f, o);
  if (type == 0x8100) {
    if (f.size() < 18) return fail("runt vlan");
    s.vlan_tci = be16(f, 14);
    type = be16(f, 16);
    o = 16;
  }
  o += 2;
  if (type != 0x0800) return fail("not IPv4");
  if (f.size() < o + 20) return fail("short IPv4");
  const size_t ihl = size_t{f[o] & 0x0Fu} * 4;
  if ((f[o] >> 4) != 4 || ihl < 20 || f.size() < o + ihl) return fail("bad IPv4 header");
  s.tos = f[o + 1];
  const size_t total = be16(f, o + 2);
  s.ip_id = be16(f, o + 4);
  s.ip_frag = be16(f, o + 6);
  s.ttl = f[o + 8];
  if (f[o + 9] != 6) return fail("not TCP");
  s.src_ip = be32(f, o + 12);
  s.dst_ip = be32(f, o + 16);
  s.ip_csum_ok = golden::ipv4_header_checksum_ok(f.subspan(o, ihl));
  if (total < ihl + 20 || f.size() < o + total) return fail("bad IPv4 total length");
  const size_t t = o + ihl;
  const size_t tcp_len = total - ihl;
  s.sport = be16(f, t);
  s.dport = be16(f, t + 2);
  s.seq = be32(f, t + 4);
  s.ack = be32(f, t + 8);
  const size_t doff = static_cast<size_t>(f[t + 12] >> 4) * 4;
  if (doff < 20 || doff > tcp_len) return fail("bad TCP data offset");
  s.flags = f[t + 13];
  s.window = be16(f, t + 14);
  for (size_t k = t + 20; k < t + doff;) {
    const uint8_t kind = f[k];
    if (kind == 0) break;
    if (kind == 1) {
      ++k;
      continue;
    }
    if (k + 1 >= t + doff) break;
    const uint8_t len = f[k + 1];
    if (len < 2 || k + len > t + doff) break;
    if (kind == 2 && len == 4) s.mss = be16(f, k + 2);
    if (kind == 3 && len == 3) s.wscale = f[k + 2];
    k += len;
  }
  s.payload.assign(f.begin() + static_cast<std::ptrdiff_t>(t + doff),
                   f.begin() + static_cast<std::ptrdiff_t>(o + total));
  s.tcp_csum_ok = tcp_pseudo_checksum(s.src_ip, s.dst_ip, f.subspan(t, tcp_len)) == 0;
  return s;
}

inline std::string describe(const Seg& s) {
  char b[200];
  std::snprintf(b, sizeof b, "%s:%u > %s:%u [%s] seq %08x ack %08x win %u len %zu id %04x",
                ip_str(s.src_ip).c_str(), s.sport, ip_str(s.dst_ip).c_str(), s.dport,
                flag_str(s.flags).c_str(), s.seq, s.ack, s.window, s.payload.size(), s.ip_id);
  std::string r = b;
  if (s.mpa_reply()) r += " MPA-reply";
  if (s.mpa_request()) r += " MPA-request";
  if (!s.ip_csum_ok || !s.tcp_csum_ok) r += " BAD-CHECKSUM";
  return r;
}

// ------------------------------------------------------------------ transcripts

struct WireSeg {
  bool to_bouncer = false;  // RX (peer -> Bouncer) or TX (Bouncer -> peer)
  uint64_t first = 0, last = 0;
  size_t index = 0;  // in rx_frames() / tx_frames()
  Seg seg;
  std::vector<uint8_t> bytes;
};

// Every frame of the connection (rem_ip, rem_port) at Bouncer's port, both directions, in
// order of their first beat (RX first on a tie). Frames that do not decode are skipped.
inline std::vector<WireSeg> transcript(const sim::Platform& plat, uint32_t rem_ip,
                                       uint16_t rem_port) {
  std::vector<WireSeg> out;
  auto add = [&](const std::vector<sim::TxFrame>& frames, bool rx) {
    for (size_t i = 0; i < frames.size(); ++i) {
      auto s = decode(frames[i].bytes);
      if (!s) continue;
      const bool mine = rx ? (s->src_ip == rem_ip && s->sport == rem_port)
                           : (s->dst_ip == rem_ip && s->dport == rem_port);
      if (!mine) continue;
      out.push_back(
          {rx, frames[i].first_cycle, frames[i].last_cycle, i, std::move(*s), frames[i].bytes});
    }
  };
  add(plat.rx_frames(), true);
  add(plat.tx_frames(), false);
  std::stable_sort(out.begin(), out.end(), [](const WireSeg& a, const WireSeg& b) {
    if (a.first != b.first) return a.first < b.first;
    return a.to_bouncer && !b.to_bouncer;
  });
  return out;
}

inline std::string dump(const std::vector<WireSeg>& t) {
  std::string s;
  for (const auto& w : t) {
    char b[64];
    std::snprintf(b, sizeof b, "  %9" PRIu64 " %s ", w.first, w.to_bouncer ? "->B" : "B->");
    s += b + describe(w.seg) + "\n";
  }
  return s;
}

inline std::vector<const WireSeg*> tx_only(const std::vector<WireSeg>& t) {
  std::vector<const WireSeg*> v;
  for (const auto& w : t) {
    if (!w.to_bouncer) v.push_back(&w);
  }
  return v;
}

// ------------------------------------------------------------------ expected frames

// Bouncer's side of one connection, for the golden builders.
struct Expect {
  peer::InitiatorConfig peer;  // the initiator (its MAC, IP, port, ISN)
  bouncer::MacAddr loc_mac = kLocalMac;
  uint8_t ttl = kTtl, tos = kTos;
  bouncer::TcpConfig tcp = test_tcp();
  uint32_t iss = 0;              // our ISN (from the SYN-ACK, checked against the keyed hash)
  uint16_t ip_id0 = 0;           // IP ID of the SYN-ACK
  uint32_t req_len = 0;          // MPA request bytes the peer sends
  std::optional<uint16_t> vlan;  // 802.1Q TCI of our frames (echoes the peer's tag)
  bool peer_ws = true;           // the peer's SYN had a window-scale option (sim/peer's do)

  // Our window field after the SYN-ACK: TCP_WND, scaled (rounded up) once scaling is on.
  uint16_t wnd_field() const {
    if (!peer_ws) return tcp.window;
    return static_cast<uint16_t>((uint32_t{tcp.window} + (1u << tcp.wscale) - 1) >> tcp.wscale);
  }

  golden::Mac gmac(const std::array<uint8_t, 6>& m) const {
    golden::Mac g;
    g.b = m;
    return g;
  }
  uint32_t rcv_after_request() const { return peer.isn + 1 + req_len; }

  std::vector<uint8_t> ctrl(golden::TcpCtrlKind kind, uint32_t seq, uint32_t ack,
                            uint16_t ip_id) const {
    golden::TcpCtrlParams p;
    p.kind = kind;
    p.rem_mac = gmac(peer.mac);
    p.loc_mac = gmac(loc_mac);
    p.vlan_en = vlan.has_value();
    p.vlan_tci = vlan.value_or(0);
    p.loc_ip = peer.peer_ip;
    p.rem_ip = peer.ip;
    p.tos = tos;
    p.ttl = ttl;
    p.ip_id = ip_id;
    p.loc_port = peer.peer_port;
    p.rem_port = peer.port;
    p.seq = seq;
    p.ack = ack;
    p.window = kind == golden::TcpCtrlKind::kSynAck ? tcp.window : wnd_field();
    p.mss = tcp.mss;
    p.wscale = tcp.wscale;
    p.ws = peer_ws;
    return golden::build_tcp_ctrl_frame(p);
  }
  std::vector<uint8_t> synack() const {
    return ctrl(golden::TcpCtrlKind::kSynAck, iss, peer.isn + 1, ip_id0);
  }
  golden::RejectParams reject_params(std::span<const std::byte> pd, bool fin,
                                     std::optional<uint32_t> ird_ord_override) const {
    golden::RejectParams p;
    p.rem_mac = gmac(peer.mac);
    p.loc_mac = gmac(loc_mac);
    p.vlan_en = vlan.has_value();
    p.vlan_tci = vlan.value_or(0);
    p.loc_ip = peer.peer_ip;
    p.rem_ip = peer.ip;
    p.tos = tos;
    p.ttl = ttl;
    p.ip_id = static_cast<uint16_t>(ip_id0 + 1);
    p.loc_port = peer.peer_port;
    p.rem_port = peer.port;
    p.snd_nxt = iss + 1;
    p.rcv_nxt = rcv_after_request();
    p.rcv_wnd = wnd_field();
    p.req_rev = peer.mpa_rev;
    p.req_flags = static_cast<uint8_t>((peer.markers ? 0x80 : 0) | (peer.crc ? 0x40 : 0) |
                                       (peer.enhanced && peer.mpa_rev == 2 ? 0x10 : 0));
    p.req_ird_ord = peer.ird_ord;
    p.ird_ord_override = ird_ord_override;
    p.fin = fin;
    p.pd = to_u8(pd);
    return p;
  }
};

// The request's MPA payload length as the peer sends it.
inline uint32_t request_len(const peer::InitiatorConfig& c) {
  return static_cast<uint32_t>(peer::Initiator(c).request_bytes().size());
}

// The keyed ISN: F(key, tuple) + (cycle >> 4) for a cycle in [lo, hi] (golden model).
inline bool isn_plausible(uint32_t iss, const peer::InitiatorConfig& p, uint64_t lo, uint64_t hi) {
  golden::IsnKey k;
  k.lo = uint64_t{kIsnKey[1]} << 32 | kIsnKey[0];
  k.hi = uint64_t{kIsnKey[3]} << 32 | kIsnKey[2];
  golden::IsnTuple t{p.peer_ip, p.ip, p.peer_port, p.port};
  const uint32_t f0 = golden::isn_hash(k, t, 0);
  const uint64_t d = static_cast<uint32_t>(iss - f0);
  return d >= (lo >> 4) && d <= (hi >> 4);
}

// ------------------------------------------------------------------ hand-made peer frames

// A peer -> Bouncer segment, built here (not by the RTL or the peer model): Ethernet, IPv4
// (IHL 5, DF), TCP with optional MSS/WS options (SYN), checksums by golden's routine.
struct PeerFrame {
  std::array<uint8_t, 6> src_mac{}, dst_mac = kLocalMac;
  uint32_t src_ip = 0, dst_ip = kLocalIp;
  uint16_t sport = 0, dport = kPort;
  uint16_t ip_id = 0x4000;
  uint16_t window = 0xFFFF;
  uint8_t ttl = 64;
};

inline std::vector<uint8_t> build_peer_segment(const PeerFrame& pf, uint8_t flags, uint32_t seq,
                                               uint32_t ack, std::span<const uint8_t> payload,
                                               bool syn_options = false) {
  std::vector<uint8_t> f;
  auto p16 = [&](uint16_t v) {
    f.push_back(static_cast<uint8_t>(v >> 8));
    f.push_back(static_cast<uint8_t>(v));
  };
  auto p32 = [&](uint32_t v) {
    p16(static_cast<uint16_t>(v >> 16));
    p16(static_cast<uint16_t>(v));
  };
  f.insert(f.end(), pf.dst_mac.begin(), pf.dst_mac.end());
  f.insert(f.end(), pf.src_mac.begin(), pf.src_mac.end());
  p16(0x0800);
  const size_t ip = f.size();
  const size_t opt = syn_options ? 8 : 0;
  const size_t tcp_len = 20 + opt + payload.size();
  f.push_back(0x45);
  f.push_back(0);
  p16(static_cast<uint16_t>(20 + tcp_len));
  p16(pf.ip_id);
  p16(0x4000);
  f.push_back(pf.ttl);
  f.push_back(6);
  p16(0);
  p32(pf.src_ip);
  p32(pf.dst_ip);
  const uint16_t ipc = golden::internet_checksum(std::span<const uint8_t>(f.data() + ip, 20));
  f[ip + 10] = static_cast<uint8_t>(ipc >> 8);
  f[ip + 11] = static_cast<uint8_t>(ipc);
  const size_t t = f.size();
  p16(pf.sport);
  p16(pf.dport);
  p32(seq);
  p32(ack);
  f.push_back(static_cast<uint8_t>((5 + opt / 4) << 4));
  f.push_back(flags);
  p16(pf.window);
  p16(0);
  p16(0);
  if (syn_options) {
    for (uint8_t b : {2, 4, 0x05, 0xb4, 1, 3, 3, 7}) f.push_back(b);
  }
  f.insert(f.end(), payload.begin(), payload.end());
  const uint16_t tc =
      tcp_pseudo_checksum(pf.src_ip, pf.dst_ip, std::span<const uint8_t>(f).subspan(t, tcp_len));
  f[t + 16] = static_cast<uint8_t>(tc >> 8);
  f[t + 17] = static_cast<uint8_t>(tc);
  while (f.size() < 60) f.push_back(0);
  return f;
}

// An MPA request payload: key, flags, rev, PD_Length, [IRD/ORD], PD.
inline std::vector<uint8_t> mpa_request_payload(uint8_t rev, bool enhanced, uint32_t ird_ord,
                                                std::span<const uint8_t> pd) {
  std::vector<uint8_t> m(16);
  std::memcpy(m.data(), "MPA ID Req Frame", 16);
  const bool enh = rev == 2 && enhanced;
  m.push_back(static_cast<uint8_t>(0x40 | (enh ? 0x10 : 0)));
  m.push_back(rev);
  const size_t pdl = pd.size() + (enh ? 4 : 0);
  m.push_back(static_cast<uint8_t>(pdl >> 8));
  m.push_back(static_cast<uint8_t>(pdl));
  if (enh) {
    for (int sh = 24; sh >= 0; sh -= 8) m.push_back(static_cast<uint8_t>(ird_ord >> sh));
  }
  m.insert(m.end(), pd.begin(), pd.end());
  return m;
}

// ------------------------------------------------------------------ initiator personalities

inline constexpr peer::Personality kPersonalities[] = {
    peer::Personality::kSiw, peer::Personality::kIrdma, peer::Personality::kCxgb4};

// What the application behind an initiator gets for Bouncer's reject of `pd`, from the
// kernel rules (docs/interop.md, "What the initiator's application gets"), written out here
// independently of sim/peer. `rev`/`enh`: the initiator's request (Bouncer's reply echoes
// them); `fin_in_reject`: the FIN rode in the reject's segment; `reply_word`: the reply's
// IRD/ORD word (enhanced); `own`: the initiator's request config.
struct AppWant {
  peer::AppEvent ev = peer::AppEvent::kNone;
  int status = 0;
  std::vector<uint8_t> pd;
  bool kernel_fault = false;
};
inline AppWant app_for_reject(const peer::InitiatorConfig& own, std::span<const uint8_t> pd,
                              bool fin_in_reject, uint32_t reply_word) {
  using E = peer::AppEvent;
  const bool rev2 = own.mpa_rev == 2;
  const bool enh = rev2 && own.enhanced;
  const size_t pd_length = pd.size() + (enh ? 4 : 0);
  auto first = [](std::vector<uint8_t> v, size_t n) {
    v.resize(std::min(n, v.size()));
    return v;
  };
  const std::vector<uint8_t> ulp(pd.begin(), pd.end());
  switch (own.personality) {
    case peer::Personality::kSiw: {
      // FIN with the reply: PEER_CLOSE before the read (no PD). siw_recv_mpa_rr: PD_Length
      // <= 256, else CONNECT_REPLY(-EINVAL) with a NULL (+ 4) pointer. siw_cm_upcall:
      // (u8)PD_Length, 4 less when the request was enhanced.
      if (fin_in_reject) return {E::kRejected, -104, {}};
      if (pd_length > 256) {
        const size_t len = ((pd_length & 0xFF) - (enh ? 4 : 0)) & 0xFF;
        return {E::kConnectError, -22, {}, len != 0};
      }
      if (pd_length == 0) return {E::kRejected, -104, {}};
      const size_t len = ((pd_length & 0xFF) - (enh ? 4 : 0)) & 0xFF;
      return {E::kRejected, -104, first(ulp, len)};
    }
    case peer::Personality::kIrdma: {
      // irdma_parse_mpa: a rev-2 reply's bytes 20..23 are the IRD/ORD word (the first PD
      // bytes when Bouncer sent none); it must pass irdma_negotiate_mpa_v2_ird_ord, else RST
      // and our own PD with -ECONNRESET. Then (u8)PD_Length bytes from offset 24 (rev 2) or
      // 20, the frame's bytes where there are any and junk past its end.
      std::vector<uint8_t> frame(20, 0);
      if (enh) {
        for (int sh = 24; sh >= 0; sh -= 8) frame.push_back(static_cast<uint8_t>(reply_word >> sh));
      }
      frame.insert(frame.end(), pd.begin(), pd.end());
      auto at = [&](size_t i) { return i < frame.size() ? frame[i] : peer::kAppPdJunk; };
      if (rev2) {
        const uint16_t ci = static_cast<uint16_t>(at(20) << 8 | at(21));
        const uint16_t co = static_cast<uint16_t>(at(22) << 8 | at(23));
        const uint16_t ird = ci & 0x3FFF, ord = co & 0x3FFF;
        const uint16_t own_ird = static_cast<uint16_t>((own.ird_ord >> 16) & 0x3FFF);
        bool ok = (ci & 0x8000) != 0 && (co & 0xC000) != 0;
        if (ok && ird != 0x3FFF && ord != 0x3FFF) {
          ok = !(ird == 0 && (co & 0x4000) != 0) && own_ird >= ord;
        }
        if (!ok)
          return {E::kRejected, -104, first(own.private_data, own.private_data.size() & 0xFF)};
      }
      std::vector<uint8_t> seen(pd_length & 0xFF);
      for (size_t i = 0; i < seen.size(); ++i) seen[i] = at((rev2 ? 24 : 20) + i);
      return {E::kRejected, -111, seen};
    }
    case peer::Personality::kCxgb4: {
      // process_mpa_reply: at most 20 + 256 bytes (one segment: -EINVAL), (u8)plen; a rev-2
      // attempt hands out 4 bytes less from mpa_pkt + 24, where the word would be or not.
      // mpa_pkt held our own request PD at + 20 (c4iw_connect) before the reply came.
      if (pd_length > 256) return {E::kConnectError, -22, {}};
      std::vector<uint8_t> buf(276, 0);
      const size_t own_len = std::min<size_t>(own.private_data.size() & 0xFF, 256);
      std::copy_n(own.private_data.begin(), own_len, buf.begin() + 20);
      size_t o = 20;
      if (enh) {
        for (int sh = 24; sh >= 0; sh -= 8) buf[o++] = static_cast<uint8_t>(reply_word >> sh);
      }
      std::copy(pd.begin(), pd.end(), buf.begin() + static_cast<std::ptrdiff_t>(o));
      const size_t len = ((pd_length & 0xFF) - (rev2 ? 4 : 0)) & 0xFF;
      const size_t from = rev2 ? 24 : 20;
      std::vector<uint8_t> seen(len);
      for (size_t i = 0; i < len; ++i) {
        seen[i] = from + i < buf.size() ? buf[from + i] : peer::kAppPdJunk;
      }
      return {E::kRejected, -111, seen};
    }
  }
  return {};
}

// The application got the reject and every byte the host posted, in order (irdma's 4 bytes
// read past the frame may follow: that kernel defect cannot be avoided by the responder).
inline bool delivered_intact(const AppWant& w, std::span<const uint8_t> pd) {
  return w.ev == peer::AppEvent::kRejected && !w.kernel_fault && w.pd.size() >= pd.size() &&
         std::equal(pd.begin(), pd.end(), w.pd.begin());
}

// The initiator answers a reject with ACK, RST instead of closing: cxgb4 always
// (process_mpa_reply -> c4iw_ep_disconnect abrupt), siw when the FIN rode in the reject
// segment (the reply is left unread when the socket is released).
inline bool peer_resets_after_reject(peer::Personality p, R::FinPolicy policy) {
  return p == peer::Personality::kCxgb4 ||
         (p == peer::Personality::kSiw && policy == R::FinPolicy::IRDMA);
}

// The terminal event of a host-rejected connection: RESET when the initiator resets it,
// CLOSED otherwise (and with ABORT, whose RST ends the node first).
inline R::AeqEvent expected_terminal(peer::Personality p, R::FinPolicy policy) {
  if (policy == R::FinPolicy::ABORT) return R::AeqEvent::CLOSED;
  return peer_resets_after_reject(p, policy) ? R::AeqEvent::RESET : R::AeqEvent::CLOSED;
}

// ------------------------------------------------------------------ registers

inline uint32_t reg(bouncer::hal::Device& hal, uint32_t off) { return hal.read32(off); }

// Every STAT_* register, by name, for failure messages and bug reports.
inline std::string stats_line(Device& d) {
  std::string s;
  for (const auto& v : d.read_stats()) {
    if (v.value == 0) continue;
    s += std::string(v.name) + "=" + std::to_string(v.value) + " ";
  }
  return s;
}

// ------------------------------------------------------------------ the host program

// One simulated initiator and what the host does with / learns about its connection.
struct Conn {
  size_t peer = 0;
  peer::InitiatorConfig cfg;
  // plan
  std::vector<std::byte> reject_pd;
  RejectOptions opts;
  bool hold = false;  // the test rejects it itself (Scenario does not)
  // The initiator's application is known not to get this reject intact (a personality's
  // limit): asserted instead of the delivery.
  bool expect_lost = false;
  // what the driver reported
  std::vector<bouncer::ConnectRequest> requests;
  uint64_t event_cycle = 0;   // cycle at which poll_event returned the request
  uint64_t posted_cycle = 0;  // cycle at which reject() / post_reject() returned
  std::optional<Completion> completion;
  std::optional<bouncer::Error> reject_error;
  std::vector<bouncer::PeerReset> resets;
  std::vector<bouncer::MpaError> mpa_errors;
  std::vector<R::AeqEvent> terminals;  // consumed by the driver (terminal observer)
  std::optional<uint32_t> cm_id;
  bouncer::ConnHandle handle;  // of the last request
};

class Scenario {
 public:
  Scenario(sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm)
      : plat_(plat), hal_(hal), dev_(dev), cm_(cm) {
    cm_.set_terminal_observer([this](uint32_t cm_id, R::AeqEvent code) {
      auto it = by_cm_id_.find(cm_id);
      if (it == by_cm_id_.end()) {
        stray_terminals.push_back({cm_id, code});
      } else {
        conns[it->second].terminals.push_back(code);
      }
    });
  }
  ~Scenario() { cm_.set_terminal_observer({}); }
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  // Adds a peer that starts at `start` and is rejected with `pd` / `opts` by the host.
  size_t add(peer::InitiatorConfig cfg, uint64_t start, std::vector<std::byte> pd = {},
             RejectOptions opts = {}) {
    Conn c;
    c.cfg = cfg;
    c.reject_pd = std::move(pd);
    c.opts = opts;
    // the driver refuses a reject whose PD_Length on the wire would exceed 255 unless told
    const bool enh = cfg.mpa_rev == 2 && cfg.enhanced;
    c.opts.unsafe_wire_pd = c.reject_pd.size() + (enh ? 4 : 0) > R::kWirePdSafeMax;
    c.peer = plat_.add_peer(cfg, start);
    by_tuple_[{cfg.ip, cfg.port}] = conns.size();
    conns.push_back(std::move(c));
    return conns.size() - 1;
  }

  // Post rejects without waiting for their completions (Cm::post_reject; the completion
  // comes back as a RejectComplete event).
  bool pipelined = false;

  // The host's reaction to one event (the default program: reject with the plan).
  void handle(const bouncer::Event& e) {
    const uint64_t now = hal_.now_cycles();
    if (const auto* cr = std::get_if<bouncer::ConnectRequest>(&e)) {
      auto it = by_tuple_.find({cr->tuple.remote_ip, cr->tuple.remote_port});
      if (it == by_tuple_.end()) {
        unknown.push_back(e);
        (void)cm_.reject(cr->handle, {});
        return;
      }
      Conn& c = conns[it->second];
      by_cm_id_[cr->cm_id] = it->second;
      c.cm_id = cr->cm_id;
      c.handle = cr->handle;
      c.requests.push_back(*cr);
      c.event_cycle = now;
      if (c.hold) return;
      reject(c);
    } else if (const auto* pr = std::get_if<bouncer::PeerReset>(&e)) {
      auto it = by_cm_id_.find(pr->cm_id);
      if (it == by_cm_id_.end()) {
        unknown.push_back(e);
        return;
      }
      Conn& c = conns[it->second];
      c.resets.push_back(*pr);
      if (!c.hold && !c.completion && !c.reject_error) reject(c);
    } else if (const auto* me = std::get_if<bouncer::MpaError>(&e)) {
      auto it = by_tuple_.find({me->tuple.remote_ip, me->tuple.remote_port});
      if (it == by_tuple_.end()) {
        unknown.push_back(e);
        return;
      }
      conns[it->second].mpa_errors.push_back(*me);
      conns[it->second].cm_id = me->cm_id;
    } else if (const auto* rc = std::get_if<bouncer::RejectComplete>(&e)) {
      auto it = inflight_.find({rc->handle.cm_id, rc->handle.gen});
      if (it == inflight_.end()) {
        ++stray_completions;
        return;
      }
      Conn& c = conns[it->second];
      inflight_.erase(it);
      if (rc->completion.ok()) {
        c.completion = rc->completion;
      } else {
        c.reject_error = bouncer::completion_error(rc->completion);
      }
    }
  }

  // Rejects c's held request now, with its plan (synchronously unless pipelined).
  void reject(Conn& c) {
    if (pipelined) {
      for (;;) {
        auto r = cm_.post_reject(c.handle, c.reject_pd, c.opts);
        if (r) {
          inflight_[{c.handle.cm_id, c.handle.gen}] = static_cast<size_t>(&c - conns.data());
          break;
        }
        if (r.error().code != bouncer::Errc::kRingFull) {
          c.reject_error = r.error();
          return;
        }
        // The SQ is full: let completions come back (as events, handled after this one).
        hal_.wait_cycles(32);
        auto ev = cm_.poll_event();
        if (ev && *ev) deferred_.push_back(**ev);
      }
      c.posted_cycle = hal_.now_cycles();
      return;
    }
    auto r = cm_.reject(c.handle, c.reject_pd, c.opts);
    c.posted_cycle = hal_.now_cycles();
    if (r) {
      c.completion = *r;
    } else {
      c.reject_error = r.error();
    }
  }

  // Polls events (handing each to `on_event`, default handle()) every `poll` cycles until
  // done() holds; false after max_cycles.
  bool pump(const std::function<bool()>& done, uint64_t max_cycles,
            const std::function<void(const bouncer::Event&)>& on_event = {}, uint64_t poll = 64) {
    const uint64_t deadline = hal_.now_cycles() + max_cycles;
    for (;;) {
      if (!deferred_.empty()) {
        const bouncer::Event e = deferred_.front();
        deferred_.pop_front();
        if (on_event) {
          on_event(e);
        } else {
          handle(e);
        }
        continue;
      }
      auto ev = cm_.poll_event();
      if (!ev) {
        ADD_FAILURE() << "poll_event: " << ev.error().message;
        return false;
      }
      if (*ev) {
        if (on_event) {
          on_event(**ev);
        } else {
          handle(**ev);
        }
        continue;
      }
      if (done()) return true;
      if (hal_.now_cycles() >= deadline) return false;
      hal_.wait_cycles(poll);
    }
  }

  // Everything over: peers finished, nothing held or awaiting its terminal event, the
  // connection table empty, no reject in flight.
  bool settled() {
    const auto s = cm_.stats();
    return plat_.peers_finished() && s.nodes_held == 0 && s.nodes_awaiting_terminal == 0 &&
           inflight_.empty() && dev_.cm_conns() == 0;
  }

  bool settle(uint64_t max_cycles,
              const std::function<void(const bouncer::Event&)>& on_event = {}) {
    return pump([this] { return settled(); }, max_cycles, on_event);
  }

  // Why settle() is not done yet (for failure messages).
  std::string status() {
    const auto s = cm_.stats();
    std::string r = "peers finished " + std::string(plat_.peers_finished() ? "yes" : "no") +
                    ", held " + std::to_string(s.nodes_held) + ", awaiting terminal " +
                    std::to_string(s.nodes_awaiting_terminal) + ", inflight " +
                    std::to_string(inflight_.size()) + ", CM_CONNS " +
                    std::to_string(dev_.cm_conns()) + "\n";
    for (const auto& c : conns) {
      const auto& o = plat_.peer(c.peer).outcome();
      if (plat_.peer(c.peer).finished() && (c.requests.empty() || c.completion)) continue;
      r += "  peer " + ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " " +
           peer::to_string(o.state) + (o.error.empty() ? "" : " (" + o.error + ")") +
           ", requests " + std::to_string(c.requests.size()) +
           (c.cm_id ? ", cm_id " + std::to_string(*c.cm_id) + " driver " +
                          bouncer::node_state_name(cm_.node_state(*c.cm_id))
                    : std::string()) +
           "\n";
    }
    return r;
  }

  // The end of every scenario: table empty, nothing held or awaiting, no surprise.
  void expect_clean_end() {
    EXPECT_EQ(dev_.cm_conns(), 0u) << "CM_CONNS: the connection table is not empty";
    const auto s = cm_.stats();
    EXPECT_EQ(s.nodes_held, 0u);
    EXPECT_EQ(s.nodes_awaiting_terminal, 0u);
    EXPECT_EQ(s.unexpected_events, 0u);
    EXPECT_EQ(s.missing_terminal, 0u);
    EXPECT_EQ(s.bad_pd, 0u);
    EXPECT_EQ(s.cleanup_rejects, 0u);
    EXPECT_TRUE(unknown.empty()) << unknown.size() << " events for no peer of this test";
    EXPECT_TRUE(stray_terminals.empty())
        << stray_terminals.size() << " terminal events for cm_ids of no peer";
    EXPECT_EQ(stray_completions, 0u);
  }

  // Peer i got exactly the reject its plan asked for.
  void expect_rejected_as_planned(const Conn& c) {
    const auto& o = plat_.peer(c.peer).outcome();
    const std::string who = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port);
    EXPECT_TRUE(o.rejected) << who << " " << peer::to_string(o.state) << " " << o.error;
    EXPECT_FALSE(o.accepted) << who;
    EXPECT_EQ(o.reject_pd, to_u8(c.reject_pd)) << who;
    EXPECT_EQ(o.reply_rev, c.cfg.mpa_rev) << who;
    const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
    EXPECT_EQ(o.reply_pd_length, c.reject_pd.size() + (enh ? 4 : 0)) << who;
    EXPECT_EQ(o.reply_flags & peer::kMpaFlagReject, peer::kMpaFlagReject) << who;
    if (enh) {
      ASSERT_TRUE(o.reply_ird_ord.has_value()) << who;
      const uint32_t want =
          c.opts.ird_ord ? *c.opts.ird_ord : golden::default_reply_ird_ord(c.cfg.ird_ord);
      EXPECT_EQ(*o.reply_ird_ord, want) << who;
    } else {
      EXPECT_FALSE(o.reply_ird_ord.has_value()) << who;
    }
    expect_app_got_planned(c);
  }

  // What c's application got (rdma_cm event, status, PD) is what its personality makes of
  // the reject; and it is the reject intact unless the test expects the loss.
  void expect_app_got_planned(const Conn& c) {
    const auto& o = plat_.peer(c.peer).outcome();
    const std::string who = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " (" +
                            peer::to_string(c.cfg.personality) + ")";
    const auto pd = to_u8(c.reject_pd);
    const AppWant w = app_for_reject(c.cfg, pd, o.reply_had_fin, o.reply_ird_ord.value_or(0));
    EXPECT_EQ(o.app_event, w.ev) << who << ": " << peer::to_string(o.app_event);
    EXPECT_EQ(o.app_status, w.status) << who;
    EXPECT_EQ(o.app_pd, w.pd) << who << ": " << hex(o.app_pd) << " vs " << hex(w.pd);
    EXPECT_EQ(o.app_kernel_fault, w.kernel_fault) << who;
    if (c.expect_lost) {
      EXPECT_FALSE(delivered_intact(w, pd)) << who << ": expected to lose this reject";
    } else {
      EXPECT_TRUE(delivered_intact(w, pd))
          << who << " would not deliver this reject intact: " << peer::to_string(w.ev) << " "
          << w.status << ", " << w.pd.size() << " of " << pd.size() << " bytes"
          << (w.kernel_fault ? ", kernel fault" : "");
    }
  }

  // The same checks as expect_request_matches + expect_rejected_as_planned, as one line of
  // text ("" when all hold), for tests with many connections.
  std::string problems(const Conn& c) {
    std::string r;
    const auto& o = plat_.peer(c.peer).outcome();
    const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
    if (c.requests.size() != 1) {
      r += " requests=" + std::to_string(c.requests.size());
    } else if (to_u8(c.requests[0].private_data) != c.cfg.private_data ||
               c.requests[0].rev != c.cfg.mpa_rev ||
               c.requests[0].ird_ord !=
                   (enh ? std::optional<uint32_t>(c.cfg.ird_ord) : std::optional<uint32_t>())) {
      r += " request-differs";
    }
    if (!o.rejected) r += " not-rejected";
    if (o.reject_pd != to_u8(c.reject_pd)) r += " wrong-reject-pd";
    const AppWant w =
        app_for_reject(c.cfg, to_u8(c.reject_pd), o.reply_had_fin, o.reply_ird_ord.value_or(0));
    if (o.app_event != w.ev || o.app_status != w.status || o.app_pd != w.pd) {
      r += std::string(" app-differs(") + peer::to_string(o.app_event) + ")";
    }
    if (delivered_intact(w, to_u8(c.reject_pd)) == c.expect_lost) {
      r += c.expect_lost ? " app-not-lost" : " app-not-intact";
    }
    if (enh) {
      const uint32_t want =
          c.opts.ird_ord ? *c.opts.ird_ord : golden::default_reply_ird_ord(c.cfg.ird_ord);
      if (o.reply_ird_ord != std::optional<uint32_t>(want)) r += " wrong-ird-ord";
    }
    if (c.terminals.size() != 1) r += " terminals=" + std::to_string(c.terminals.size());
    if (!r.empty()) {
      r = ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + r + " (peer " +
          peer::to_string(o.state) + (o.error.empty() ? "" : ": " + o.error) + ")";
    }
    return r;
  }

  // The ConnectRequest carries exactly what peer c sent.
  void expect_request_matches(const Conn& c) {
    ASSERT_EQ(c.requests.size(), 1u) << ip_str(c.cfg.ip) << ":" << c.cfg.port;
    const auto& r = c.requests[0];
    const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
    EXPECT_EQ(r.tuple, (bouncer::Tuple{c.cfg.peer_ip, c.cfg.peer_port, c.cfg.ip, c.cfg.port}));
    EXPECT_EQ(r.rev, c.cfg.mpa_rev);
    EXPECT_EQ(r.flags, (c.cfg.crc ? 0x40 : 0) | (c.cfg.markers ? 0x80 : 0) | (enh ? 0x10 : 0));
    EXPECT_EQ(r.enhanced(), enh);
    if (enh) {
      EXPECT_EQ(r.ird_ord, std::optional<uint32_t>(c.cfg.ird_ord));
    } else {
      EXPECT_FALSE(r.ird_ord.has_value());
    }
    EXPECT_EQ(to_u8(r.private_data), c.cfg.private_data);
  }

  // A scenario of one connection: peer `cfg` starts 100 cycles from now and is rejected
  // with `pd`; settled within `max_cycles`, then `linger` more cycles of polling (for
  // anything late: a retransmission, an event). The request and the reject are checked
  // against the plan; `check(c, t)` gets the connection and its transcript (the trace of
  // every failure from here on).
  template <class F>
  void run_one(const peer::InitiatorConfig& cfg, std::vector<std::byte> pd, uint64_t max_cycles,
               uint64_t linger, F&& check) {
    add(cfg, hal_.now_cycles() + 100, std::move(pd));
    ASSERT_TRUE(settle(max_cycles)) << status();
    if (linger != 0) {
      ASSERT_FALSE(pump([] { return false; }, linger));
    }
    const Conn& c = conns.back();
    const auto t = transcript(plat_, c.cfg.ip, c.cfg.port);
    SCOPED_TRACE(dump(t));
    expect_request_matches(c);
    expect_rejected_as_planned(c);
    check(c, t);
  }

  std::vector<Conn> conns;
  std::vector<bouncer::Event> unknown;
  std::vector<std::pair<uint32_t, R::AeqEvent>> stray_terminals;
  uint64_t stray_completions = 0;

 private:
  sim::Platform& plat_;
  bouncer::hal::Device& hal_;
  Device& dev_;
  Cm& cm_;
  std::map<std::pair<uint32_t, uint16_t>, size_t> by_tuple_;
  std::map<uint32_t, size_t> by_cm_id_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> inflight_;  // (cm_id, gen) -> conn
  std::deque<bouncer::Event> deferred_;  // read while waiting for a free SQ slot
};

// Opens the device, listens on kPort with `lo` (local MAC, TTL, TOS filled in).
inline bouncer::ListenOptions listen_options(R::FinPolicy policy = R::FinPolicy::SIW_SAFE) {
  bouncer::ListenOptions lo;
  lo.fin_policy = policy;
  lo.local_mac = kLocalMac;
  lo.ttl = kTtl;
  lo.tos = kTos;
  return lo;
}

// ------------------------------------------------------------------ pcap + tshark

struct PcapWant {
  std::vector<uint8_t> pd;  // the reject's PD (without the IRD/ORD word)
  bool enhanced = false;    // tshark 4.0 counts the IRD/ORD word as PD
};
// Per connection (the peer's IP and port): the reject the capture must show.
using PcapWants = std::map<std::pair<uint32_t, uint16_t>, PcapWant>;

// Dissects the capture with tshark (IP and TCP checksum validation on, iwarp_mpa heuristic):
// no checksum error, no malformed frame, no error-level expert info; every MPA reply it
// decodes has rej_flag 1 and the PD meant for its connection. With `every`, each
// connection in `want` has at least one dissected reject.
inline void check_pcap(const std::string& path, const PcapWants& want, bool every = true) {
  std::string err;
  auto pkts = golden::read_pcap(path, &err);
  ASSERT_TRUE(pkts) << err;
  size_t bad_csum = 0;
  for (const auto& p : *pkts) {
    auto s = decode(p);
    if (s && (!s->ip_csum_ok || !s->tcp_csum_ok)) ++bad_csum;
  }
  EXPECT_EQ(bad_csum, 0u) << "frames with a bad checksum in " << path;
  GOLDEN_REQUIRE_TSHARK();
  auto rep = golden::tshark_check_mpa(path);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.frames, pkts->size());
  EXPECT_TRUE(rep.ip_checksum_bad.empty()) << rep.summary();
  EXPECT_TRUE(rep.tcp_checksum_bad.empty()) << rep.summary();
  // Malformed frames and error-level expert infos are judged on Bouncer's frames only: the
  // peers' frames include deliberately malformed MPA requests (fault knobs).
  auto from_bouncer = [&](uint32_t frame) {
    if (frame == 0 || frame > pkts->size()) return true;
    auto s = decode((*pkts)[frame - 1]);
    return !s || s->src_ip == kLocalIp;
  };
  for (uint32_t f : rep.malformed) {
    EXPECT_FALSE(from_bouncer(f)) << "frame " << f << " (from Bouncer) is malformed\n"
                                  << rep.summary();
  }
  size_t warnings = 0;
  for (const auto& e : rep.experts) {
    const bool bad = e.severity >= 0x800000 || e.message.find("hecksum") != std::string::npos ||
                     e.message.find("alformed") != std::string::npos;
    if (bad && from_bouncer(e.frame)) {
      ADD_FAILURE() << "frame " << e.frame << " (from Bouncer): " << e.message;
    } else {
      ++warnings;
    }
  }
  std::set<std::pair<uint32_t, uint16_t>> seen;
  for (const auto& row : rep.replies) {
    ASSERT_GE(row.frame, 1u);
    ASSERT_LE(row.frame, pkts->size());
    auto s = decode((*pkts)[row.frame - 1]);
    ASSERT_TRUE(s);
    const std::pair<uint32_t, uint16_t> key{s->dst_ip, s->dport};
    EXPECT_TRUE(row.rej_flag) << "frame " << row.frame;
    auto it = want.find(key);
    if (it == want.end()) {
      ADD_FAILURE() << "frame " << row.frame << ": a reply to " << ip_str(key.first) << ":"
                    << key.second << ", which should get none";
      continue;
    }
    const size_t extra = it->second.enhanced ? 4 : 0;
    EXPECT_EQ(row.pd_length, it->second.pd.size() + extra) << "frame " << row.frame;
    EXPECT_EQ(row.private_data.size(), it->second.pd.size() + extra) << "frame " << row.frame;
    if (row.private_data.size() == it->second.pd.size() + extra) {
      EXPECT_TRUE(std::equal(it->second.pd.begin(), it->second.pd.end(),
                             row.private_data.begin() + static_cast<std::ptrdiff_t>(extra)))
          << "frame " << row.frame;
    }
    seen.insert(key);
  }
  if (every) {
    for (const auto& [key, w] : want) {
      EXPECT_TRUE(seen.count(key)) << "tshark dissected no reject to " << ip_str(key.first) << ":"
                                   << key.second << " in " << path;
    }
  }
  std::printf(
      "[ tshark   ] %s: %u frames, %zu MPA replies (rej_flag 1), %zu expert infos "
      "not about Bouncer's frames' form (TCP analysis, peer faults)\n",
      path.c_str(), rep.frames, rep.replies.size(), warnings);
}

inline PcapWants pcap_wants(const Scenario& sc) {
  PcapWants w;
  for (const auto& c : sc.conns) {
    if (c.requests.empty() || !c.completion) continue;
    w[{c.cfg.ip, c.cfg.port}] = {to_u8(c.reject_pd), c.cfg.mpa_rev == 2 && c.cfg.enhanced};
  }
  return w;
}

// ------------------------------------------------------------------ test frames

// Runs `body(hal, dev, cm)` as the host program with an opened device and a Cm.
template <class F>
void with_cm(sim::Platform& plat, const bouncer::DeviceConfig& dc, F&& body) {
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Cm cm(**dev);
    body(hal, **dev, cm);
  });
}

// A drop hook: the first frame in direction `dir` that decodes and satisfies `pred(seg)` is
// lost, nothing else.
template <class Pred>
sim::DropHook drop_first(sim::Direction dir, Pred pred) {
  auto done = std::make_shared<bool>(false);
  return [dir, pred, done](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != dir || *done) return false;
    auto s = decode(f);
    *done = s && pred(*s);
    return *done;
  };
}

// The frame of a passive-CM system test. A Platform of `cfg` (with the drop hook `drop`, if
// any) runs the host program: the driver opened with `dc`, a Cm listening on
// kLocalIp:kPort with `listen` (none: the body sets up its listeners) and a Scenario, handed
// to `body(plat, hal, dev, cm, sc)`. Once the platform is gone (the capture complete), the
// pcap is dissected against `wants` (filled by the body; empty: no reject expected in it),
// `every` as in check_pcap.
struct CmTest {
  sim::PlatformConfig cfg;
  bouncer::DeviceConfig dc = device_config();
  std::optional<bouncer::ListenOptions> listen = listen_options();
  sim::DropHook drop = {};
  bool every = true;
  PcapWants wants = {};

  template <class Body>
  void run(Body&& body) {
    {
      sim::Platform plat(cfg);
      if (drop) plat.set_drop_hook(drop);
      with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
        if (listen) {
          ASSERT_TRUE(cm.listen(kLocalIp, kPort, *listen).ok());
        }
        Scenario sc(plat, hal, dev, cm);
        body(plat, hal, dev, cm, sc);
      });
    }
    check_pcap(cfg.pcap_path, wants, every);
  }
};

}  // namespace systest
