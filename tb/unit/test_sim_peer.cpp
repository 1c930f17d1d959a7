// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The simulated iWARP initiator (sim/peer) against a small scripted responder: the responder
// builds SYN-ACK/ACK/FIN/RST frames with its own helper and the MPA reject with the golden
// model; the initiator's frames are checked with the golden parser and the asserts below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bouncer/peer/initiator.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"

namespace bouncer::peer {
// Readable states in gtest messages.
void PrintTo(State s, std::ostream* os) { *os << to_string(s); }
}  // namespace bouncer::peer

namespace {

namespace P = bouncer::peer;
using Bytes = std::vector<uint8_t>;
using Fault = P::InitiatorConfig::Fault;
using P::State;

constexpr uint64_t kRto = 1000;  // small timeouts keep cycle numbers readable
constexpr uint64_t kTw = 3000;
constexpr uint64_t kReplyTimeout = 50'000;

Bytes bytes_of(const std::string& s) { return Bytes(s.begin(), s.end()); }

uint16_t rd16(const Bytes& b, size_t o) { return static_cast<uint16_t>(b[o] << 8 | b[o + 1]); }
uint32_t rd32(const Bytes& b, size_t o) {
  return static_cast<uint32_t>(rd16(b, o)) << 16 | rd16(b, o + 2);
}
void wr16(Bytes& b, uint16_t x) {
  b.push_back(static_cast<uint8_t>(x >> 8));
  b.push_back(static_cast<uint8_t>(x));
}
void wr32(Bytes& b, uint32_t x) {
  wr16(b, static_cast<uint16_t>(x >> 16));
  wr16(b, static_cast<uint16_t>(x));
}

P::InitiatorConfig base_config() {
  P::InitiatorConfig c;
  c.mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  c.peer_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0xB0};
  c.ip = 0x0A000001;       // 10.0.0.1
  c.peer_ip = 0x0A000002;  // 10.0.0.2 (Bouncer)
  c.port = 40001;
  c.peer_port = 4791;
  c.isn = 0x11223344;
  c.private_data = bytes_of("conn-req");
  c.rto_cycles = kRto;
  c.time_wait_cycles = kTw;
  c.reply_timeout_cycles = kReplyTimeout;
  return c;
}

// ---- a TCP segment from the initiator, decoded and checked independently -------------------
struct Seg {
  Bytes raw;
  std::array<uint8_t, 6> dst{}, src{};
  bool vlan = false;
  uint16_t tci = 0;
  uint16_t ip_total = 0, ip_id = 0, ip_frag = 0;
  uint8_t ttl = 0;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t sport = 0, dport = 0;
  uint32_t seq = 0, ack = 0;
  uint8_t flags = 0, doff = 0;
  uint16_t window = 0;
  Bytes options, payload;
  uint32_t seq_len() const {
    return static_cast<uint32_t>(payload.size()) + ((flags & (P::kTcpSyn | P::kTcpFin)) ? 1 : 0);
  }
};

// Decodes with ADD_FAILURE on any structural or checksum error.
Seg decode(const Bytes& f) {
  Seg s;
  s.raw = f;
  if (f.size() < 54) {
    ADD_FAILURE() << "frame of " << f.size() << " bytes";
    return s;
  }
  std::copy(f.begin(), f.begin() + 6, s.dst.begin());
  std::copy(f.begin() + 6, f.begin() + 12, s.src.begin());
  size_t l3 = 14;
  if (rd16(f, 12) == 0x8100) {
    s.vlan = true;
    s.tci = rd16(f, 14);
    l3 = 18;
  }
  EXPECT_EQ(rd16(f, l3 - 2), 0x0800);
  const Bytes ip(f.begin() + static_cast<std::ptrdiff_t>(l3), f.end());
  EXPECT_EQ(ip[0], 0x45);
  EXPECT_TRUE(golden::ipv4_header_checksum_ok(ip)) << "IPv4 header checksum";
  s.ip_total = rd16(ip, 2);
  s.ip_id = rd16(ip, 4);
  s.ip_frag = rd16(ip, 6);
  s.ttl = ip[8];
  EXPECT_EQ(ip[9], 6);
  s.src_ip = rd32(ip, 12);
  s.dst_ip = rd32(ip, 16);
  EXPECT_LE(s.ip_total, ip.size());
  // Anything beyond IP total length must be zero padding up to the 60-byte minimum.
  if (ip.size() > s.ip_total) {
    EXPECT_EQ(f.size(), 60u);
    for (size_t i = s.ip_total; i < ip.size(); ++i) EXPECT_EQ(ip[i], 0);
  }
  const Bytes tcp(ip.begin() + 20, ip.begin() + s.ip_total);
  Bytes pseudo;
  wr32(pseudo, s.src_ip);
  wr32(pseudo, s.dst_ip);
  wr16(pseudo, 6);
  wr16(pseudo, static_cast<uint16_t>(tcp.size()));
  pseudo.insert(pseudo.end(), tcp.begin(), tcp.end());
  EXPECT_EQ(golden::internet_checksum(pseudo), 0) << "TCP checksum";
  s.sport = rd16(tcp, 0);
  s.dport = rd16(tcp, 2);
  s.seq = rd32(tcp, 4);
  s.ack = rd32(tcp, 8);
  s.doff = tcp[12] >> 4;
  s.flags = tcp[13];
  s.window = rd16(tcp, 14);
  EXPECT_EQ(rd16(tcp, 18), 0) << "urgent pointer";
  s.options.assign(tcp.begin() + 20, tcp.begin() + s.doff * 4);
  s.payload.assign(tcp.begin() + s.doff * 4, tcp.end());
  return s;
}

// ---- the scripted responder (Bouncer's side) -------------------------------------------------
struct Responder {
  P::InitiatorConfig ic;             // the initiator's configuration: addresses
  uint32_t iss = 0xF0000000u - 100;  // wraps during the exchange
  uint32_t snd_nxt = iss;
  uint32_t rcv_nxt = 0;
  uint16_t ip_id = 0x4000;
  uint16_t window = 0xFFFF;
  uint16_t mss = 1460;
  std::optional<uint8_t> wscale = 7;
  Bytes stream;  // in-order data from the initiator

  explicit Responder(P::InitiatorConfig c) : ic(std::move(c)) {}

  golden::RejectParams params() const {
    golden::RejectParams p;
    p.rem_mac.b = ic.mac;
    p.loc_mac.b = ic.peer_mac;
    p.vlan_en = ic.vlan_tci.has_value();
    p.vlan_tci = ic.vlan_tci.value_or(0);
    p.loc_ip = ic.peer_ip;
    p.rem_ip = ic.ip;
    p.loc_port = ic.peer_port;
    p.rem_port = ic.port;
    p.snd_nxt = snd_nxt;
    p.rcv_nxt = rcv_nxt;
    p.rcv_wnd = window;
    p.ip_id = ip_id;
    return p;
  }

  // Our own frame helper for non-MPA segments (and hand-made MPA payloads).
  Bytes frame_at(uint32_t seq, uint8_t flags, const Bytes& payload = {}, const Bytes& opts = {}) {
    Bytes f(ic.mac.begin(), ic.mac.end());
    f.insert(f.end(), ic.peer_mac.begin(), ic.peer_mac.end());
    if (ic.vlan_tci) {
      wr16(f, 0x8100);
      wr16(f, *ic.vlan_tci);
    }
    wr16(f, 0x0800);
    const size_t l3 = f.size();
    const size_t tcp_len = 20 + opts.size() + payload.size();
    f.push_back(0x45);
    f.push_back(0);
    wr16(f, static_cast<uint16_t>(20 + tcp_len));
    wr16(f, ip_id++);
    wr16(f, 0x4000);
    f.push_back(64);
    f.push_back(6);
    wr16(f, 0);
    wr32(f, ic.peer_ip);
    wr32(f, ic.ip);
    const uint16_t ipc = golden::internet_checksum(std::span<const uint8_t>(f).subspan(l3, 20));
    f[l3 + 10] = static_cast<uint8_t>(ipc >> 8);
    f[l3 + 11] = static_cast<uint8_t>(ipc);
    const size_t l4 = f.size();
    wr16(f, ic.peer_port);
    wr16(f, ic.port);
    wr32(f, seq);
    wr32(f, (flags & P::kTcpAck) ? rcv_nxt : 0);
    f.push_back(static_cast<uint8_t>((20 + opts.size()) / 4 << 4));
    f.push_back(flags);
    wr16(f, window);
    wr16(f, 0);
    wr16(f, 0);
    f.insert(f.end(), opts.begin(), opts.end());
    f.insert(f.end(), payload.begin(), payload.end());
    Bytes pseudo;
    wr32(pseudo, ic.peer_ip);
    wr32(pseudo, ic.ip);
    wr16(pseudo, 6);
    wr16(pseudo, static_cast<uint16_t>(tcp_len));
    pseudo.insert(pseudo.end(), f.begin() + static_cast<std::ptrdiff_t>(l4), f.end());
    const uint16_t tc = golden::internet_checksum(pseudo);
    f[l4 + 16] = static_cast<uint8_t>(tc >> 8);
    f[l4 + 17] = static_cast<uint8_t>(tc);
    return f;
  }
  // A segment at snd_nxt; advances snd_nxt by its sequence length.
  Bytes frame(uint8_t flags, const Bytes& payload = {}, const Bytes& opts = {}) {
    Bytes f = frame_at(snd_nxt, flags, payload, opts);
    snd_nxt +=
        static_cast<uint32_t>(payload.size()) + ((flags & (P::kTcpSyn | P::kTcpFin)) ? 1u : 0u);
    return f;
  }

  Bytes syn_ack(const Seg& syn) {
    rcv_nxt = syn.seq + 1;
    snd_nxt = iss;
    Bytes opts;
    opts.push_back(2);
    opts.push_back(4);
    wr16(opts, mss);
    if (wscale) {
      opts.insert(opts.end(), {3, 3, *wscale});
      opts.push_back(0);  // EOL, as irdma
    }
    while (opts.size() % 4 != 0) opts.push_back(0);
    return frame(P::kTcpSyn | P::kTcpAck, {}, opts);
  }
  // Absorbs an in-order initiator segment.
  void take(const Seg& s) {
    if (s.seq != rcv_nxt || (s.flags & P::kTcpRst)) return;
    stream.insert(stream.end(), s.payload.begin(), s.payload.end());
    rcv_nxt += static_cast<uint32_t>(s.payload.size()) + ((s.flags & P::kTcpFin) ? 1u : 0u);
  }
  Bytes ack() { return frame(P::kTcpAck); }
  Bytes fin() { return frame(P::kTcpFin | P::kTcpAck); }
  Bytes rst() { return frame_at(snd_nxt, P::kTcpRst | P::kTcpAck); }
  // A FIN whose ACK field does not cover the initiator's FIN (sent before it arrived).
  Bytes fin_at_old_ack() {
    --rcv_nxt;
    Bytes f = fin();
    ++rcv_nxt;
    return f;
  }

  // The MPA reject, built by the golden model from the request received so far.
  golden::RejectParams reject_params(const Bytes& pd, bool fin) const {
    golden::RejectParams p = params();
    EXPECT_GE(stream.size(), 20u);
    p.req_flags = stream.at(16);
    p.req_rev = stream.at(17);
    if (golden::is_enhanced(p.req_rev, p.req_flags)) p.req_ird_ord = rd32(stream, 20);
    p.pd = pd;
    p.fin = fin;
    return p;
  }
  Bytes reject(const Bytes& pd, bool fin, std::optional<uint32_t> ird_ord_override = std::nullopt) {
    golden::RejectParams p = reject_params(pd, fin);
    p.ird_ord_override = ird_ord_override;
    Bytes f = golden::build_mpa_reject_frame(p);
    EXPECT_FALSE(f.empty());
    snd_nxt += golden::reject_seq_advance(p);
    ++ip_id;
    return f;
  }
};

// All frames the initiator has to send at `cycle`, decoded.
std::vector<Seg> drain(P::Initiator& ini, uint64_t cycle) {
  std::vector<Seg> v;
  while (auto f = ini.poll_tx(cycle)) v.push_back(decode(*f));
  return v;
}

bool is_pure_ack(const Seg& s) { return s.flags == P::kTcpAck && s.payload.empty(); }

// Drives SYN / SYN-ACK / ACK / request (+ the responder's ACK of it). Returns the request
// segments; the responder has absorbed them.
struct Exchange {
  P::Initiator ini;
  Responder rsp;
  Seg syn;
  std::vector<Seg> request;
  uint64_t cycle = 0;
  explicit Exchange(const P::InitiatorConfig& c) : ini(c), rsp(c) {}

  void handshake() {
    ini.start(cycle);
    auto s = drain(ini, cycle);
    ASSERT_EQ(s.size(), 1u);
    syn = s[0];
    cycle += 100;
    ini.on_rx(rsp.syn_ack(syn), cycle);
    ASSERT_NE(ini.state(), State::kSynSent);
    EXPECT_EQ(ini.outcome().synack_cycle, cycle);
  }
  void connect(bool ack_request = true) {
    handshake();
    auto s = drain(ini, cycle);
    ASSERT_GE(s.size(), 2u);
    EXPECT_TRUE(is_pure_ack(s[0]));
    EXPECT_EQ(s[0].seq, syn.seq + 1);
    EXPECT_EQ(s[0].ack, rsp.iss + 1);
    rsp.take(s[0]);
    request.assign(s.begin() + 1, s.end());
    for (const Seg& r : request) rsp.take(r);
    if (ack_request) {
      cycle += 100;
      ini.on_rx(rsp.ack(), cycle);
      EXPECT_TRUE(drain(ini, cycle).empty());
    }
  }
  // Reject; returns what the initiator sent in response.
  std::vector<Seg> reject(const Bytes& pd, bool fin) {
    cycle += 100;
    ini.on_rx(rsp.reject(pd, fin), cycle);
    auto out = drain(ini, cycle);
    for (const Seg& s : out) rsp.take(s);
    return out;
  }
  std::vector<Seg> deliver(const Bytes& f) {
    cycle += 100;
    ini.on_rx(f, cycle);
    auto out = drain(ini, cycle);
    for (const Seg& s : out) rsp.take(s);
    return out;
  }
  // Runs the clock to the next timer and polls there.
  std::vector<Seg> tick() {
    const uint64_t d = ini.next_deadline();
    EXPECT_NE(d, UINT64_MAX);
    cycle = std::max(cycle, d);
    return drain(ini, cycle);
  }
};

void expect_addresses(const Seg& s, const P::InitiatorConfig& c) {
  EXPECT_EQ(s.dst, c.peer_mac);
  EXPECT_EQ(s.src, c.mac);
  EXPECT_EQ(s.vlan, c.vlan_tci.has_value());
  if (c.vlan_tci) {
    EXPECT_EQ(s.tci, *c.vlan_tci);
  }
  EXPECT_EQ(s.src_ip, c.ip);
  EXPECT_EQ(s.dst_ip, c.peer_ip);
  EXPECT_EQ(s.sport, c.port);
  EXPECT_EQ(s.dport, c.peer_port);
  EXPECT_EQ(s.ip_frag, 0x4000) << "DF";
  EXPECT_EQ(s.ttl, 64);
}

// The full orderly exchange used by several tests: reject without FIN, then the responder
// ACKs our FIN and sends its own.
void full_exchange(const P::InitiatorConfig& c, const Bytes& reject_pd) {
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  const golden::RejectParams rp = x.rsp.reject_params(reject_pd, false);

  // The SYN: MSS, NOP, window scale; no SACK-permitted; not padded (62 bytes + VLAN).
  EXPECT_EQ(x.syn.flags, P::kTcpSyn);
  EXPECT_EQ(x.syn.seq, c.isn);
  EXPECT_EQ(x.syn.ack, 0u);
  EXPECT_EQ(x.syn.doff, 7);
  EXPECT_EQ(x.syn.options, (Bytes{2, 4, 0x05, 0xB4, 1, 3, 3, 7}));
  EXPECT_EQ(x.syn.window, 0xFFFF);
  expect_addresses(x.syn, c);

  // The request: one segment, PSH|ACK, golden parser agrees with the configuration.
  ASSERT_EQ(x.request.size(), 1u);
  const Seg& rq = x.request[0];
  expect_addresses(rq, c);
  EXPECT_EQ(rq.flags, P::kTcpPsh | P::kTcpAck);
  EXPECT_EQ(rq.seq, c.isn + 1);
  EXPECT_EQ(rq.ack, x.rsp.iss + 1);
  EXPECT_EQ(rq.doff, 5);
  std::string why;
  const auto parsed = golden::parse_mpa_reply(rq.raw, &why);
  ASSERT_TRUE(parsed) << why;
  EXPECT_TRUE(parsed->key_request_ok);
  EXPECT_FALSE(parsed->key_reply_ok);
  const bool enh = c.mpa_rev == 2 && c.enhanced;
  EXPECT_EQ(parsed->rev, c.mpa_rev);
  EXPECT_EQ(parsed->mpa_flags, (c.crc ? 0x40 : 0) | (c.markers ? 0x80 : 0) | (enh ? 0x10 : 0));
  EXPECT_EQ(parsed->pd_length, c.private_data.size() + (enh ? 4 : 0));
  EXPECT_EQ(parsed->enhanced, enh);
  if (enh) {
    EXPECT_EQ(parsed->ird_ord, c.ird_ord);
  }
  EXPECT_EQ(parsed->private_data, c.private_data);
  EXPECT_EQ(rq.payload, x.ini.request_bytes());
  // Cross-check against the golden model's own request frame (payload only: IDs differ).
  golden::RejectParams gp = rp;
  gp.req_ird_ord = c.ird_ord;
  const Seg golden_req = decode(golden::build_mpa_request_frame(gp, c.private_data));
  EXPECT_EQ(rq.payload, golden_req.payload);

  // The reject: the initiator ACKs it, then sends FIN.
  auto out = x.reject(reject_pd, false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[0].ack, rp.snd_nxt + golden::mpa_reply_len(rp));
  EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_EQ(out[1].seq, c.isn + 1 + rq.payload.size());
  const P::Outcome& o = x.ini.outcome();
  EXPECT_TRUE(o.rejected);
  EXPECT_FALSE(o.accepted);
  EXPECT_EQ(o.reject_pd, reject_pd);
  EXPECT_EQ(o.reply_rev, c.mpa_rev);
  EXPECT_EQ(o.reply_flags, golden::reply_mpa_flags(rp));
  if (enh) {
    EXPECT_EQ(o.reply_ird_ord, golden::default_reply_ird_ord(c.ird_ord));
  } else {
    EXPECT_FALSE(o.reply_ird_ord);
  }
  EXPECT_FALSE(o.reply_had_fin);
  EXPECT_EQ(x.ini.state(), State::kFinWait1);

  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.state(), State::kFinWait2);
  out = x.deliver(x.rsp.fin());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[0].ack, x.rsp.snd_nxt);
  EXPECT_EQ(x.ini.state(), State::kTimeWait);
  const uint64_t tw_start = x.cycle;
  EXPECT_EQ(x.ini.next_deadline(), tw_start + kTw);
  EXPECT_TRUE(x.tick().empty());
  EXPECT_EQ(x.ini.state(), State::kDone);
  EXPECT_TRUE(x.ini.finished());
  EXPECT_EQ(o.closed_cycle, tw_start + kTw);
  EXPECT_TRUE(o.error.empty()) << o.error;
  EXPECT_EQ(o.retransmits, 0u);
  EXPECT_EQ(o.stats.bad_ip_checksum + o.stats.bad_tcp_checksum + o.stats.foreign, 0u);
  EXPECT_EQ(o.peer_isn, x.rsp.iss);
  EXPECT_EQ(o.peer_mss, 1460);
  EXPECT_EQ(o.peer_wscale, 7);
  EXPECT_EQ(x.ini.next_deadline(), UINT64_MAX);
}

// ---- tests -----------------------------------------------------------------------------------

TEST(SimPeer, FullExchangeRev2EnhancedWithPd) {
  full_exchange(base_config(), bytes_of("go away, try port 4792"));
}

TEST(SimPeer, FullExchangeRev1) {
  P::InitiatorConfig c = base_config();
  c.mpa_rev = 1;  // enhanced stays true in the config but only applies to rev 2
  c.private_data = bytes_of("v1 request pd");
  full_exchange(c, bytes_of("v1 reject, odd"));
}

TEST(SimPeer, FullExchangeRev2NotEnhancedMarkersNoCrc) {
  P::InitiatorConfig c = base_config();
  c.enhanced = false;
  c.markers = true;
  c.crc = false;
  full_exchange(c, bytes_of("x"));
}

TEST(SimPeer, FullExchangeEmptyPds) {
  P::InitiatorConfig c = base_config();
  c.private_data.clear();
  full_exchange(c, {});
}

TEST(SimPeer, VlanOn) {
  P::InitiatorConfig c = base_config();
  c.vlan_tci = 0x6123;  // PCP 3, VID 0x123
  full_exchange(c, bytes_of("vlan reject"));

  // Untagged, or tagged with another VID: not ours.
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  P::InitiatorConfig untagged = c;
  untagged.vlan_tci.reset();
  Responder other(untagged);
  other.rcv_nxt = x.rsp.rcv_nxt;
  other.snd_nxt = x.rsp.snd_nxt;
  x.ini.on_rx(other.fin(), x.cycle);
  P::InitiatorConfig vid2 = c;
  vid2.vlan_tci = 0x6124;
  Responder other2(vid2);
  other2.rcv_nxt = x.rsp.rcv_nxt;
  other2.snd_nxt = x.rsp.snd_nxt;
  x.ini.on_rx(other2.fin(), x.cycle);
  EXPECT_EQ(x.ini.outcome().stats.foreign, 2u);
  EXPECT_TRUE(drain(x.ini, x.cycle).empty());
  EXPECT_EQ(x.ini.state(), State::kEstablished);
}

TEST(SimPeer, RequestSplitIntoThreeSegments) {
  P::InitiatorConfig c = base_config();
  c.private_data.resize(100);
  for (size_t i = 0; i < c.private_data.size(); ++i) c.private_data[i] = static_cast<uint8_t>(i);
  c.request_segments = 3;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  ASSERT_EQ(x.request.size(), 3u);
  // 124 bytes -> 42, 41, 41; contiguous, each PSH|ACK, distinct IP IDs.
  EXPECT_EQ(x.request[0].payload.size(), 42u);
  EXPECT_EQ(x.request[1].payload.size(), 41u);
  EXPECT_EQ(x.request[2].payload.size(), 41u);
  Bytes whole;
  uint32_t seq = c.isn + 1;
  for (const Seg& s : x.request) {
    EXPECT_EQ(s.seq, seq);
    EXPECT_EQ(s.flags, P::kTcpPsh | P::kTcpAck);
    seq += static_cast<uint32_t>(s.payload.size());
    whole.insert(whole.end(), s.payload.begin(), s.payload.end());
  }
  EXPECT_NE(x.request[0].ip_id, x.request[1].ip_id);
  EXPECT_EQ(x.rsp.stream, whole);  // the responder reassembled it
  // Equal to the one-segment request of the same configuration, and the golden parser
  // accepts it once put into one frame.
  P::InitiatorConfig one = c;
  one.request_segments = 1;
  Exchange y(one);
  ASSERT_NO_FATAL_FAILURE(y.connect());
  ASSERT_EQ(y.request.size(), 1u);
  EXPECT_EQ(whole, y.request[0].payload);
  const auto parsed = golden::parse_mpa_reply(y.request[0].raw, nullptr);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->key_request_ok);
  EXPECT_EQ(parsed->private_data, c.private_data);
  // And the reject still works.
  x.reject(bytes_of("no"), true);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("no"));
}

TEST(SimPeer, RequestSegmentsNeverExceedPeerMss) {
  P::InitiatorConfig c = base_config();
  c.private_data.assign(200, 0xAB);  // 224-byte request
  Exchange x(c);
  x.rsp.mss = 64;
  ASSERT_NO_FATAL_FAILURE(x.connect());
  ASSERT_EQ(x.request.size(), 4u);  // ceil(224 / 64), as even as possible: 56 each
  for (const Seg& s : x.request) EXPECT_EQ(s.payload.size(), 56u);
  EXPECT_EQ(x.rsp.stream.size(), 224u);
  EXPECT_EQ(x.ini.outcome().peer_mss, 64);
}

TEST(SimPeer, RejectAndFinInOneSegment) {
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  const uint32_t reply_seq = x.rsp.snd_nxt;
  auto out = x.reject(bytes_of("busy"), true);
  // ACK of reply + FIN, then our FIN: LAST_ACK.
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[0].ack, reply_seq + 20 + 4 + 4 + 1);
  EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_EQ(out[1].ack, out[0].ack);
  const P::Outcome& o = x.ini.outcome();
  EXPECT_TRUE(o.rejected);
  EXPECT_TRUE(o.reply_had_fin);
  EXPECT_TRUE(o.peer_fin);
  EXPECT_EQ(o.reject_pd, bytes_of("busy"));
  EXPECT_EQ(x.ini.state(), State::kLastAck);
  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.state(), State::kDone);
  EXPECT_TRUE(x.ini.finished());
  EXPECT_EQ(o.closed_cycle, x.cycle);
  EXPECT_TRUE(o.error.empty()) << o.error;
}

TEST(SimPeer, RejectThenSeparateFinCrossingOurs) {
  // Our FIN goes out at once; the responder's FIN arrives before it ACKs ours: CLOSING.
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  x.cycle += 100;
  x.ini.on_rx(x.rsp.reject(bytes_of("r"), false), x.cycle);
  const uint32_t rcv_before = x.rsp.rcv_nxt;
  x.ini.on_rx(x.rsp.fin(), x.cycle);  // acks only the request, not our FIN (not seen yet)
  auto out = drain(x.ini, x.cycle);
  ASSERT_EQ(out.size(), 3u);  // ACK of the reject, FIN, ACK of their FIN
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_TRUE(is_pure_ack(out[2]));
  EXPECT_EQ(out[2].ack, x.rsp.snd_nxt);
  EXPECT_EQ(rcv_before, out[1].seq);
  EXPECT_EQ(x.ini.state(), State::kClosing);
  for (const Seg& s : out) x.rsp.take(s);
  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.state(), State::kTimeWait);
  x.tick();
  EXPECT_EQ(x.ini.state(), State::kDone);
}

TEST(SimPeer, RejectThenSeparateFinWithCloseDelay) {
  // The application closes 5000 cycles after the reply; the responder's FIN comes first.
  P::InitiatorConfig c = base_config();
  c.close_delay_cycles = 5000;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  auto out = x.reject(bytes_of("later"), false);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(x.ini.state(), State::kReplyReceived);
  const uint64_t reply_cycle = x.cycle;
  out = x.deliver(x.rsp.fin());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(x.ini.state(), State::kReplyReceived);
  EXPECT_EQ(x.ini.next_deadline(), reply_cycle + 5000);
  out = x.tick();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_EQ(x.ini.state(), State::kLastAck);
  x.rsp.take(out[0]);
  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.state(), State::kDone);
  EXPECT_FALSE(x.ini.outcome().reply_had_fin);
}

TEST(SimPeer, RejectThenRstWhenFinAfterRejectIsOff) {
  P::InitiatorConfig c = base_config();
  c.fin_after_reject = false;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  auto out = x.reject(bytes_of("rst me"), false);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
  EXPECT_EQ(out[1].seq, x.syn.seq + 1 + x.ini.request_bytes().size());
  EXPECT_EQ(out[1].window, 0);
  EXPECT_EQ(x.ini.state(), State::kAborted);
  EXPECT_TRUE(x.ini.finished());
  EXPECT_TRUE(x.ini.outcome().rst_sent);
  EXPECT_EQ(x.ini.outcome().rst_cycle, x.cycle);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("rst me"));
}

TEST(SimPeer, AcceptedReplySendsFin) {
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  Bytes mpa = bytes_of("MPA ID Rep Frame");
  mpa.insert(mpa.end(), {0x50, 2, 0, 6});
  wr32(mpa, 0x8010'4010);
  mpa.insert(mpa.end(), {'o', 'k'});
  auto out = x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, mpa));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_TRUE(x.ini.outcome().accepted);
  EXPECT_FALSE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reply_ird_ord, 0x8010'4010u);
  EXPECT_EQ(x.ini.state(), State::kFinWait1);
}

// RST from the responder in every state the initiator can be in.
class RstInState : public testing::TestWithParam<State> {};

TEST_P(RstInState, ResetRecordedWithCycle) {
  const State target = GetParam();
  P::InitiatorConfig c = base_config();
  if (target == State::kReplyReceived) c.close_delay_cycles = 10'000;
  Exchange x(c);
  if (target == State::kSynSent) {
    x.ini.start(0);
    const Seg syn = drain(x.ini, 0).at(0);
    x.rsp.rcv_nxt = syn.seq + 1;  // RST|ACK acknowledging the SYN (a closed port)
  } else {
    ASSERT_NO_FATAL_FAILURE(x.connect());
    if (target != State::kEstablished) {
      const bool fin = target == State::kLastAck;
      x.reject(bytes_of("pd"), fin);
      if (target == State::kFinWait2 || target == State::kTimeWait) x.deliver(x.rsp.ack());
      if (target == State::kClosing) x.deliver(x.rsp.fin_at_old_ack());
      if (target == State::kTimeWait) x.deliver(x.rsp.fin());
    }
  }
  ASSERT_EQ(x.ini.state(), target);
  // An in-window RST with the wrong sequence number only draws a challenge ACK (RFC 5961),
  // except in SYN_SENT where the ACK field is what counts.
  if (target != State::kSynSent) {
    x.cycle += 10;
    x.ini.on_rx(x.rsp.frame_at(x.rsp.snd_nxt + 1, P::kTcpRst | P::kTcpAck), x.cycle);
    auto out = drain(x.ini, x.cycle);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(is_pure_ack(out[0]));
    EXPECT_EQ(x.ini.outcome().stats.challenge_acks, 1u);
    ASSERT_EQ(x.ini.state(), target);
  }
  x.cycle += 10;
  x.ini.on_rx(x.rsp.rst(), x.cycle);
  EXPECT_EQ(x.ini.state(), State::kReset);
  EXPECT_TRUE(x.ini.finished());
  const P::Outcome& o = x.ini.outcome();
  EXPECT_TRUE(o.rst_received);
  EXPECT_EQ(o.rst_cycle, x.cycle);
  EXPECT_EQ(o.closed_cycle, x.cycle);
  EXPECT_FALSE(o.error.empty());
  EXPECT_TRUE(drain(x.ini, x.cycle + 1'000'000).empty());  // no timers left, nothing to send
  EXPECT_EQ(x.ini.next_deadline(), UINT64_MAX);
}

INSTANTIATE_TEST_SUITE_P(SimPeer, RstInState,
                         testing::Values(State::kSynSent, State::kEstablished,
                                         State::kReplyReceived, State::kFinWait1, State::kFinWait2,
                                         State::kClosing, State::kTimeWait, State::kLastAck),
                         [](const testing::TestParamInfo<State>& i) {
                           return std::string(P::to_string(i.param));
                         });

TEST(SimPeer, LostSynAckSynRetransmittedIdenticallyWithDoubling) {
  Exchange x(base_config());
  x.ini.start(0);
  auto first = drain(x.ini, 0);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(x.ini.outcome().syn_cycle, 0u);
  EXPECT_TRUE(drain(x.ini, kRto - 1).empty());
  EXPECT_EQ(x.ini.next_deadline(), kRto);
  auto r1 = drain(x.ini, kRto);
  ASSERT_EQ(r1.size(), 1u);
  EXPECT_EQ(r1[0].raw, first[0].raw);  // byte-identical, IP ID included
  EXPECT_EQ(x.ini.next_deadline(), kRto + 2 * kRto);
  auto r2 = x.tick();
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_EQ(r2[0].raw, first[0].raw);
  EXPECT_EQ(x.cycle, 3 * kRto);
  EXPECT_EQ(x.ini.next_deadline(), 7 * kRto);
  // The SYN-ACK to the retransmission gets through.
  x.cycle += 10;
  x.ini.on_rx(x.rsp.syn_ack(first[0]), x.cycle);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  EXPECT_EQ(x.ini.outcome().retransmits, 2u);
  EXPECT_EQ(x.ini.outcome().synack_cycle, x.cycle);
  auto out = drain(x.ini, x.cycle);
  ASSERT_EQ(out.size(), 2u);
  // The request timer starts afresh at one RTO.
  EXPECT_EQ(x.ini.next_deadline(), x.cycle + kRto);
}

TEST(SimPeer, DuplicateSynAckDrawsDuplicateAck) {
  // Our handshake ACK was lost: the responder retransmits its SYN-ACK.
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  x.rsp.snd_nxt = x.rsp.iss;
  auto out = x.deliver(x.rsp.syn_ack(x.syn));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[0].ack, x.rsp.iss + 1);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  EXPECT_EQ(x.ini.outcome().stats.out_of_window, 1u);
}

TEST(SimPeer, LostRequestAckDataRetransmittedIdentically) {
  P::InitiatorConfig c = base_config();
  c.request_segments = 3;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect(/*ack_request=*/false));
  ASSERT_EQ(x.request.size(), 3u);
  const uint64_t sent = x.cycle;
  EXPECT_EQ(x.ini.outcome().request_last_cycle, sent);
  EXPECT_EQ(x.ini.next_deadline(), sent + kRto);
  auto r1 = x.tick();
  ASSERT_EQ(r1.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r1[i].raw, x.request[i].raw) << i;
  EXPECT_EQ(x.ini.next_deadline(), sent + 3 * kRto);
  // The responder ACKs the first segment only: the rest is retransmitted, still identical.
  x.rsp.rcv_nxt = x.request[1].seq;
  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.next_deadline(), x.cycle + kRto);  // backoff reset on progress
  auto r2 = x.tick();
  ASSERT_EQ(r2.size(), 2u);
  EXPECT_EQ(r2[0].raw, x.request[1].raw);
  EXPECT_EQ(r2[1].raw, x.request[2].raw);
  EXPECT_EQ(x.ini.outcome().retransmits, 5u);
  // Everything ACKed: only the reply timeout remains.
  x.rsp.rcv_nxt = x.request[2].seq + static_cast<uint32_t>(x.request[2].payload.size());
  x.deliver(x.rsp.ack());
  EXPECT_EQ(x.ini.next_deadline(), sent + kReplyTimeout);
  auto out = x.reject(bytes_of("late"), true);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("late"));
  EXPECT_EQ(x.ini.state(), State::kLastAck);
}

TEST(SimPeer, CorruptedChecksumsAndForeignFramesIgnored) {
  Exchange x(base_config());
  x.ini.start(0);
  const Seg syn = drain(x.ini, 0).at(0);
  Bytes good = x.rsp.syn_ack(syn);
  Bytes bad_ip = good;
  bad_ip[14 + 8] ^= 0x01;  // TTL: header checksum no longer matches
  Bytes bad_tcp = good;
  bad_tcp[14 + 20 + 14] ^= 0x80;  // TCP window field
  Bytes bad_len = good;
  bad_len.resize(good.size() - 1);  // truncated below IP total length
  x.ini.on_rx(bad_ip, 10);
  x.ini.on_rx(bad_tcp, 11);
  x.ini.on_rx(bad_len, 12);
  P::InitiatorConfig other = base_config();
  other.port += 1;
  Responder stranger(other);
  x.ini.on_rx(stranger.syn_ack(syn), 13);
  EXPECT_TRUE(drain(x.ini, 14).empty());
  EXPECT_EQ(x.ini.state(), State::kSynSent);
  const P::Stats& st = x.ini.outcome().stats;
  EXPECT_EQ(st.bad_ip_checksum, 1u);
  EXPECT_EQ(st.bad_tcp_checksum, 1u);
  EXPECT_EQ(st.malformed, 1u);
  EXPECT_EQ(st.foreign, 1u);
  x.cycle = 20;
  x.ini.on_rx(good, x.cycle);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  // A corrupted reject is dropped; its retransmission is taken.
  auto hs = drain(x.ini, x.cycle);
  for (const Seg& s : hs) x.rsp.take(s);
  const uint32_t at = x.rsp.snd_nxt;
  Bytes rej = x.rsp.reject(bytes_of("crc"), false);
  Bytes rej_bad = rej;
  rej_bad[rej_bad.size() - 2] ^= 0xFF;  // PD byte
  x.ini.on_rx(rej_bad, 30);
  EXPECT_TRUE(drain(x.ini, 30).empty());
  EXPECT_EQ(st.bad_tcp_checksum, 2u);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  EXPECT_EQ(x.rsp.snd_nxt - at, 20u + 4 + 3);
  x.ini.on_rx(rej, 40);
  EXPECT_TRUE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("crc"));
  EXPECT_EQ(x.ini.outcome().reply_cycle, 40u);
}

TEST(SimPeer, OutOfWindowSegmentDrawsDuplicateAck) {
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  // Far beyond the receive window (0xFFFF << 7).
  auto out = x.deliver(
      x.rsp.frame_at(x.rsp.snd_nxt + 0x4000'0000u, P::kTcpAck | P::kTcpPsh, bytes_of("junk")));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[0].ack, x.rsp.snd_nxt);
  EXPECT_EQ(x.ini.outcome().stats.out_of_window, 1u);
  // An ACK for data we never sent: ACK, segment dropped.
  x.rsp.rcv_nxt += 1000;
  const Bytes f = x.rsp.frame_at(x.rsp.snd_nxt, P::kTcpAck);
  x.rsp.rcv_nxt -= 1000;
  out = x.deliver(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(x.ini.outcome().stats.ack_beyond_snd_nxt, 1u);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
}

TEST(SimPeer, ReplyOverSeveralSegmentsAndOutOfOrder) {
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  // Cut the golden reject's MPA bytes into three segments; deliver 3rd, 1st, 2nd.
  const golden::RejectParams p = x.rsp.reject_params(bytes_of("in three pieces"), true);
  const Seg whole = decode(golden::build_mpa_reject_frame(p));
  const Bytes& m = whole.payload;
  const uint32_t s0 = x.rsp.snd_nxt;
  const Bytes a(m.begin(), m.begin() + 10), b(m.begin() + 10, m.begin() + 30),
      cc(m.begin() + 30, m.end());
  auto out = x.deliver(x.rsp.frame_at(s0 + 30, P::kTcpAck | P::kTcpFin, cc));
  ASSERT_EQ(out.size(), 1u);  // duplicate ACK, data buffered
  EXPECT_EQ(out[0].ack, s0);
  EXPECT_EQ(x.ini.outcome().stats.out_of_order, 1u);
  out = x.deliver(x.rsp.frame_at(s0, P::kTcpAck, a));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].ack, s0 + 10);
  EXPECT_EQ(x.ini.state(), State::kEstablished);  // header incomplete: waits
  EXPECT_FALSE(x.ini.outcome().rejected);
  out = x.deliver(x.rsp.frame_at(s0 + 10, P::kTcpAck, b));
  ASSERT_EQ(out.size(), 2u);  // ACK of everything incl. the FIN, then our FIN
  EXPECT_EQ(out[0].ack, s0 + static_cast<uint32_t>(m.size()) + 1);
  EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_TRUE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("in three pieces"));
  EXPECT_EQ(x.ini.state(), State::kLastAck);
}

TEST(SimPeer, ReplyWithPdStillMissingWaits) {
  Exchange x(base_config());
  ASSERT_NO_FATAL_FAILURE(x.connect());
  const golden::RejectParams p = x.rsp.reject_params(bytes_of("0123456789"), false);
  const Seg whole = decode(golden::build_mpa_reject_frame(p));
  const Bytes head(whole.payload.begin(), whole.payload.begin() + 26);
  const Bytes tail(whole.payload.begin() + 26, whole.payload.end());
  x.deliver(x.rsp.frame(P::kTcpAck, head));
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  EXPECT_FALSE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reply_pd_length, 14);
  x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, tail));
  EXPECT_TRUE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("0123456789"));
}

TEST(SimPeer, MalformedRepliesFailWithRst) {
  struct Case {
    const char* name;
    Bytes mpa;
    bool strict;
  };
  auto hdr = [](const char* key, uint8_t flags, uint8_t rev, uint16_t pdl) {
    Bytes m = bytes_of(key);
    m.push_back(flags);
    m.push_back(rev);
    wr16(m, pdl);
    return m;
  };
  Bytes no_p2p = hdr("MPA ID Rep Frame", 0x70, 2, 4);
  wr32(no_p2p, 0x3FFF'7FFF);
  const std::vector<Case> cases = {
      {"rev3", hdr("MPA ID Rep Frame", 0x60, 3, 0), false},
      {"bad key", hdr("MPA ID Req Frame", 0x60, 1, 0), false},
      {"PD_Length 600", hdr("MPA ID Rep Frame", 0x60, 1, 600), false},
      {"enhanced PD_Length 2",
       [&] {
         Bytes m = hdr("MPA ID Rep Frame", 0x70, 2, 2);
         m.insert(m.end(), {0, 0});
         return m;
       }(),
       false},
      {"strict: no P2P", no_p2p, true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    P::InitiatorConfig c = base_config();
    c.strict_ird_ord = k.strict;
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    auto out = x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, k.mpa));
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(is_pure_ack(out[0]));
    EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
    EXPECT_EQ(x.ini.state(), State::kFailed);
    EXPECT_FALSE(x.ini.outcome().error.empty());
    EXPECT_FALSE(x.ini.outcome().rejected);
  }
  // Not strict, the same no-P2P reject is fine (siw does not check).
  Exchange y(base_config());
  ASSERT_NO_FATAL_FAILURE(y.connect());
  y.deliver(y.rsp.frame(P::kTcpAck | P::kTcpPsh, no_p2p));
  EXPECT_TRUE(y.ini.outcome().rejected);
}

TEST(SimPeer, FaultRstAfterSynAck) {
  P::InitiatorConfig c = base_config();
  c.fault = Fault::kRstAfterSynAck;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.handshake());
  auto out = drain(x.ini, x.cycle);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
  EXPECT_EQ(out[1].seq, c.isn + 1);
  EXPECT_TRUE(out[1].payload.empty());
  EXPECT_EQ(x.ini.state(), State::kAborted);
  EXPECT_TRUE(x.ini.finished());
}

TEST(SimPeer, FaultRstAfterRequest) {
  P::InitiatorConfig c = base_config();
  c.fault = Fault::kRstAfterRequest;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.handshake());
  auto out = drain(x.ini, x.cycle);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  const auto parsed = golden::parse_mpa_reply(out[1].raw, nullptr);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->key_request_ok);
  EXPECT_EQ(out[2].flags, P::kTcpRst | P::kTcpAck);
  EXPECT_EQ(out[2].seq, out[1].seq + out[1].payload.size());
  EXPECT_EQ(x.ini.state(), State::kAborted);
  EXPECT_EQ(x.ini.next_deadline(), UINT64_MAX);  // no retransmission after an abort
}

// The request of a fault configuration, decoded and parsed by the golden parser.
Seg fault_request(Fault f, std::optional<golden::ParsedReject>* parsed, std::string* why) {
  P::InitiatorConfig c = base_config();
  c.fault = f;
  Exchange x(c);
  x.handshake();
  auto out = drain(x.ini, x.cycle);
  EXPECT_EQ(out.size(), 2u);
  *parsed = golden::parse_mpa_reply(out.at(1).raw, why);
  return out.at(1);
}

TEST(SimPeer, FaultBadKey) {
  std::optional<golden::ParsedReject> p;
  std::string why;
  fault_request(Fault::kBadKey, &p, &why);
  ASSERT_TRUE(p) << why;
  EXPECT_FALSE(p->key_request_ok);
  EXPECT_TRUE(p->key_reply_ok);  // the reply key: the wrong direction
  EXPECT_EQ(p->rev, 2);
  EXPECT_EQ(p->mpa_flags, 0x50);
  EXPECT_EQ(p->private_data, bytes_of("conn-req"));
}

TEST(SimPeer, FaultRev3) {
  std::optional<golden::ParsedReject> p;
  std::string why;
  fault_request(Fault::kRev3, &p, &why);
  ASSERT_TRUE(p) << why;
  EXPECT_TRUE(p->key_request_ok);
  EXPECT_EQ(p->rev, 3);
  EXPECT_EQ(p->mpa_flags, 0x50);
  EXPECT_EQ(p->pd_length, 8 + 4);
  EXPECT_FALSE(p->enhanced);  // rev != 2: the parser does not split off the IRD/ORD word
  EXPECT_EQ(rd32(p->private_data, 0), 0x80104010u);
}

TEST(SimPeer, FaultPdTooLong) {
  std::optional<golden::ParsedReject> p;
  std::string why;
  const Seg s = fault_request(Fault::kPdTooLong, &p, &why);
  EXPECT_FALSE(p);
  EXPECT_NE(why.find("PD_Length 513 > 512"), std::string::npos) << why;
  // Self-consistent framing: header says 513 and 513 PD bytes follow.
  ASSERT_EQ(s.payload.size(), 20u + 513);
  EXPECT_EQ(rd16(s.payload, 18), 513);
  EXPECT_EQ(Bytes(s.payload.begin(), s.payload.begin() + 16), bytes_of("MPA ID Req Frame"));
  EXPECT_EQ(rd32(s.payload, 20), 0x80104010u);
  EXPECT_EQ(Bytes(s.payload.begin() + 24, s.payload.begin() + 32), bytes_of("conn-req"));
  EXPECT_TRUE(std::all_of(s.payload.begin() + 32, s.payload.end(), [](uint8_t b) { return !b; }));
}

TEST(SimPeer, FaultNoRequestThenReplyTimeout) {
  P::InitiatorConfig c = base_config();
  c.fault = Fault::kNoRequest;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.handshake());
  const uint64_t est = x.cycle;
  auto out = drain(x.ini, x.cycle);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  EXPECT_EQ(x.ini.next_deadline(), est + kReplyTimeout);
  out = x.tick();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, P::kTcpRst | P::kTcpAck);
  EXPECT_EQ(x.ini.state(), State::kFailed);
  EXPECT_NE(x.ini.outcome().error.find("reply"), std::string::npos);
}

TEST(SimPeer, SynRetransmitExhaustionFails) {
  Exchange x(base_config());  // max_retransmits 5
  x.ini.start(0);
  ASSERT_EQ(drain(x.ini, 0).size(), 1u);
  std::vector<uint64_t> at;
  while (!x.ini.finished()) {
    auto out = x.tick();
    if (!out.empty()) at.push_back(x.cycle);
  }
  EXPECT_EQ(at, (std::vector<uint64_t>{1 * kRto, 3 * kRto, 7 * kRto, 15 * kRto, 31 * kRto}));
  EXPECT_EQ(x.ini.state(), State::kFailed);
  EXPECT_EQ(x.ini.outcome().closed_cycle, 63 * kRto);
  EXPECT_EQ(x.ini.outcome().retransmits, 5u);
  EXPECT_FALSE(x.ini.outcome().rst_sent);  // Linux gives up silently
  EXPECT_NE(x.ini.outcome().error.find("SYN_SENT"), std::string::npos);
}

TEST(SimPeer, RequestAndFinRetransmitExhaustionFails) {
  P::InitiatorConfig c = base_config();
  c.max_retransmits = 2;
  {
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect(false));
    const uint64_t sent = x.cycle;
    EXPECT_EQ(x.tick().size(), 1u);
    EXPECT_EQ(x.tick().size(), 1u);
    EXPECT_TRUE(x.tick().empty());
    EXPECT_EQ(x.ini.state(), State::kFailed);
    EXPECT_EQ(x.ini.outcome().closed_cycle, sent + 7 * kRto);
  }
  {
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    auto out = x.reject(bytes_of("q"), false);
    const Seg fin = out.at(1);
    auto r = x.tick();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].raw, fin.raw);
    x.tick();
    x.tick();
    EXPECT_EQ(x.ini.state(), State::kFailed);
    EXPECT_NE(x.ini.outcome().error.find("FIN_WAIT1"), std::string::npos);
    EXPECT_TRUE(x.ini.outcome().rejected);  // the outcome of the exchange is kept
  }
}

TEST(SimPeer, DeterministicFrames) {
  auto run = [] {
    P::InitiatorConfig c = base_config();
    c.request_segments = 2;
    Exchange x(c);
    x.connect();
    std::vector<Bytes> frames;
    for (const Seg& s : x.request) frames.push_back(s.raw);
    for (const Seg& s : x.reject(bytes_of("same"), true)) frames.push_back(s.raw);
    return frames;
  };
  EXPECT_EQ(run(), run());
}

TEST(SimPeer, ConfigValidation) {
  P::InitiatorConfig c = base_config();
  c.private_data.assign(509, 1);  // 509 + 4 > 512
  EXPECT_THROW(P::Initiator{c}, std::invalid_argument);
  c.private_data.assign(508, 1);
  EXPECT_NO_THROW(P::Initiator{c});
  c.rto_cycles = 0;
  EXPECT_THROW(P::Initiator{c}, std::invalid_argument);
  // Frames before start() and after the end are ignored.
  P::Initiator ini(base_config());
  ini.on_rx(Bytes(60, 0), 0);
  EXPECT_EQ(ini.outcome().stats.ignored, 1u);
  EXPECT_FALSE(ini.poll_tx(0));
  EXPECT_EQ(ini.next_deadline(), UINT64_MAX);
}

}  // namespace
