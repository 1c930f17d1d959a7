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
  // siw hands the ULP PD to the application: the word of an enhanced exchange stripped
  EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
  EXPECT_EQ(o.app_status, P::kECONNRESET);
  EXPECT_EQ(o.app_pd, reject_pd);
  EXPECT_FALSE(o.app_kernel_fault);
  EXPECT_EQ(o.app_cycle, x.cycle);
  EXPECT_EQ(o.attempts, 1u);
  EXPECT_EQ(o.request_rev, c.mpa_rev);
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

// Reject and FIN in one segment. siw: Linux runs tcp_fin before sk_data_ready, so siw's
// PEER_CLOSE comes first: REJECTED -104 without PD, the reply left unread, RST. irdma: the
// reply, then the FIN (LAST_ACK, FIN). cxgb4: the reject, then its abort (RST).
TEST(SimPeer, RejectAndFinInOneSegment) {
  for (P::Personality pers :
       {P::Personality::kSiw, P::Personality::kIrdma, P::Personality::kCxgb4}) {
    SCOPED_TRACE(P::to_string(pers));
    P::InitiatorConfig c = base_config();
    c.personality = pers;
    c.ird_ord = 0x8010'C010;  // IRD 16: irdma's check of the reply's ORD passes
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    const uint32_t reply_seq = x.rsp.snd_nxt;
    auto out = x.reject(bytes_of("busy"), true);
    const uint32_t end = reply_seq + 20 + 4 + 4;
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(is_pure_ack(out[0]));
    const P::Outcome& o = x.ini.outcome();
    EXPECT_TRUE(o.rejected);  // the wire
    EXPECT_EQ(o.reject_pd, bytes_of("busy"));
    EXPECT_TRUE(o.peer_fin);
    EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
    switch (pers) {
      case P::Personality::kSiw:
        EXPECT_EQ(out[0].ack, end + 1);
        EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_TRUE(o.app_pd.empty());
        EXPECT_EQ(x.ini.state(), State::kAborted);
        EXPECT_NE(o.error.find("unread"), std::string::npos) << o.error;
        break;
      case P::Personality::kIrdma:
        EXPECT_EQ(out[0].ack, end);  // irdma_send_ack for the reply, then FIN|ACK
        EXPECT_EQ(out[1].flags, P::kTcpFin | P::kTcpAck);
        EXPECT_EQ(out[1].ack, end + 1);
        EXPECT_EQ(o.app_status, P::kECONNREFUSED);
        EXPECT_EQ(o.app_pd, (Bytes{'b', 'u', 's', 'y', 0xEE, 0xEE, 0xEE, 0xEE}));
        EXPECT_TRUE(o.reply_had_fin);
        EXPECT_EQ(x.ini.state(), State::kLastAck);
        x.deliver(x.rsp.ack());
        EXPECT_EQ(x.ini.state(), State::kDone);
        EXPECT_TRUE(o.error.empty()) << o.error;
        break;
      case P::Personality::kCxgb4:
        EXPECT_EQ(out[0].ack, end + 1);
        EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
        EXPECT_EQ(o.app_status, P::kECONNREFUSED);
        EXPECT_EQ(o.app_pd, bytes_of("busy"));
        EXPECT_EQ(x.ini.state(), State::kAborted);
        break;
    }
    EXPECT_TRUE(x.ini.finished() || x.ini.state() == State::kDone);
  }
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
  if (target == State::kReplyReceived || target == State::kLastAck) c.close_delay_cycles = 10'000;
  Exchange x(c);
  if (target == State::kSynSent) {
    x.ini.start(0);
    const Seg syn = drain(x.ini, 0).at(0);
    x.rsp.rcv_nxt = syn.seq + 1;  // RST|ACK acknowledging the SYN (a closed port)
  } else {
    ASSERT_NO_FATAL_FAILURE(x.connect());
    if (target != State::kEstablished) {
      x.reject(bytes_of("pd"), false);
      if (target == State::kLastAck) {  // the peer's FIN during the think time, then ours
        x.deliver(x.rsp.fin());
        for (const Seg& f : x.tick()) x.rsp.take(f);
      }
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
  // siw: a RST before the reply is a reject without PD (PEER_CLOSE), in SYN_SENT a failed
  // rdma_connect(); after the reply the application has its event already
  if (target == State::kSynSent) {
    EXPECT_EQ(o.app_event, P::AppEvent::kConnectFailed);
    EXPECT_EQ(o.app_status, P::kECONNREFUSED);
  } else {
    EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
    EXPECT_EQ(o.app_status, P::kECONNRESET);
    EXPECT_EQ(o.app_pd, target == State::kEstablished ? Bytes{} : bytes_of("pd"));
  }
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
  auto out = x.reject(bytes_of("late"), false);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("late"));
  EXPECT_EQ(x.ini.outcome().app_pd, bytes_of("late"));
  EXPECT_EQ(x.ini.state(), State::kFinWait1);
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
  // ACK of everything incl. the FIN; the FIN came with the end of the reply, so siw never
  // reads it (PEER_CLOSE first) and resets
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].ack, s0 + static_cast<uint32_t>(m.size()) + 1);
  EXPECT_EQ(out[1].flags, P::kTcpRst | P::kTcpAck);
  EXPECT_TRUE(x.ini.outcome().rejected);
  EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("in three pieces"));
  EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kRejected);
  EXPECT_TRUE(x.ini.outcome().app_pd.empty());
  EXPECT_EQ(x.ini.state(), State::kAborted);
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
  EXPECT_EQ(x.ini.outcome().app_pd, bytes_of("0123456789"));  // siw reassembles
}

// An MPA reply header (and whatever the caller appends).
Bytes mpa_hdr(const char* key, uint8_t flags, uint8_t rev, uint16_t pdl) {
  Bytes m = bytes_of(key);
  m.push_back(flags);
  m.push_back(rev);
  wr16(m, pdl);
  return m;
}
Bytes with_word(Bytes m, uint32_t w) {
  wr32(m, w);
  return m;
}

const P::Personality kAll[] = {P::Personality::kSiw, P::Personality::kIrdma,
                               P::Personality::kCxgb4};

// What each personality does with odd replies to an enhanced rev-2 request (IRD 16, ORD 16).
// siw: errors after the whole frame was read -> CONNECT_ERROR -22 and an orderly FIN; PD_Length
// over 256 -> error on the header, bytes unread -> RST. irdma: every error -> RST and
// REJECTED -104 with our own request PD; it checks the IRD/ORD word of any rev-2 reply.
// cxgb4: errors -> CONNECT_ERROR -71 and RST; takes rejects without looking at the word.
TEST(SimPeer, OddRepliesPerPersonality) {
  struct Want {
    std::vector<uint8_t> flags;  // TCP flags of what we send back
    P::AppEvent ev;
    int status;
  };
  struct Case {
    const char* name;
    Bytes mpa;
    Want siw, irdma, cxgb4;
  };
  const uint8_t A = P::kTcpAck, F = P::kTcpFin | P::kTcpAck, R = P::kTcpRst | P::kTcpAck;
  using E = P::AppEvent;
  const Want irdma_err{{R}, E::kRejected, P::kECONNRESET};
  const Want cx_err{{A, R}, E::kConnectError, P::kEPROTO};
  const Want siw_rej{{A, F}, E::kRejected, P::kECONNRESET};
  const Want cx_rej{{A, R}, E::kRejected, P::kECONNREFUSED};
  const Want irdma_rej{{A}, E::kRejected, P::kECONNREFUSED};
  const std::vector<Case> cases = {
      {"Rev 3",
       mpa_hdr("MPA ID Rep Frame", 0x60, 3, 0),
       {{A, F}, E::kConnectError, P::kEINVAL},
       irdma_err,
       cx_err},
      {"request key",
       mpa_hdr("MPA ID Req Frame", 0x60, 1, 0),
       {{A, F}, E::kConnectError, P::kEINVAL},
       irdma_err,
       cx_err},
      {"PD_Length 600",
       mpa_hdr("MPA ID Rep Frame", 0x60, 1, 600),
       {{A, R}, E::kConnectError, P::kEINVAL},
       irdma_err,
       cx_err},
      {"enhanced PD_Length 2",
       [] {
         Bytes m = mpa_hdr("MPA ID Rep Frame", 0x70, 2, 2);
         m.insert(m.end(), {0, 0});
         return m;
       }(),
       siw_rej, irdma_err, cx_rej},
      {"no P2P bit", with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 4), 0x3FFF'7FFF), siw_rej,
       irdma_err, cx_rej},
      {"no RTR bit", with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 4), 0xBFFF'3FFF), siw_rej,
       irdma_err, cx_rej},
      {"ORD 32 above our IRD 16", with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 4), 0x8010'4020),
       siw_rej, irdma_err, cx_rej},
      {"IRD 0 with READ RTR", with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 4), 0x8000'4004),
       siw_rej, irdma_err, cx_rej},
      {"ORD 32 but IRD 0x3FFF", with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 4), 0xBFFF'4020),
       siw_rej, irdma_rej, cx_rej},
      {"rev 2 without the enhanced flag: irdma still reads a word",
       with_word(mpa_hdr("MPA ID Rep Frame", 0x60, 2, 4), 0x0000'0000), siw_rej, irdma_err, cx_rej},
  };
  for (const Case& k : cases) {
    for (P::Personality pers : kAll) {
      SCOPED_TRACE(std::string(k.name) + " / " + P::to_string(pers));
      const Want& w = pers == P::Personality::kSiw     ? k.siw
                      : pers == P::Personality::kIrdma ? k.irdma
                                                       : k.cxgb4;
      P::InitiatorConfig c = base_config();
      c.personality = pers;
      c.ird_ord = 0x8010'C010;
      Exchange x(c);
      ASSERT_NO_FATAL_FAILURE(x.connect());
      auto out = x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, k.mpa));
      std::vector<uint8_t> flags;
      for (const Seg& g : out) flags.push_back(g.flags);
      EXPECT_EQ(flags, w.flags);
      const P::Outcome& o = x.ini.outcome();
      EXPECT_EQ(o.app_event, w.ev) << P::to_string(o.app_event);
      EXPECT_EQ(o.app_status, w.status);
      if (pers == P::Personality::kIrdma && w.ev == E::kRejected && w.status == P::kECONNRESET) {
        EXPECT_EQ(o.app_pd, bytes_of("conn-req")) << "irdma: our own request's PD";
        EXPECT_EQ(x.ini.state(), State::kFailed);
      }
      if (w.flags.back() == R) {
        EXPECT_TRUE(x.ini.finished());
      }
      if (w.flags.back() == F) {
        EXPECT_EQ(x.ini.state(), State::kFinWait1);
      }
    }
  }
}

// The private data the application gets for odd lengths: siw and cxgb4 wrap u8 lengths and
// hand out memory they never wrote; siw strips 4 bytes of a rev-1 reply (interop measured
// "go away" -> "way").
TEST(SimPeer, AppPdOfShortAndRev1Replies) {
  {  // siw, enhanced request, rev-1 reject "go away": 3 bytes
    Exchange x(base_config());
    ASSERT_NO_FATAL_FAILURE(x.connect());
    Bytes m = mpa_hdr("MPA ID Rep Frame", 0x60, 1, 7);
    for (uint8_t b : bytes_of("go away")) m.push_back(b);
    x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, m));
    EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("go away"));  // the wire
    EXPECT_EQ(x.ini.outcome().app_pd, bytes_of("way"));
  }
  {  // siw, enhanced reject with PD_Length 2: (2 - 4) & 0xFF = 254 bytes nobody wrote
    Exchange x(base_config());
    ASSERT_NO_FATAL_FAILURE(x.connect());
    Bytes m = mpa_hdr("MPA ID Rep Frame", 0x70, 2, 2);
    m.insert(m.end(), {0x41, 0x42});
    x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, m));
    EXPECT_EQ(x.ini.outcome().app_pd, Bytes(254, P::kAppPdJunk));
  }
  {  // cxgb4, same reply: 254 bytes from mpa_pkt + 24, which still holds the end of our own
     // request PD ("conn-req" was copied to + 20), then zeros, then 2 bytes past the buffer
    P::InitiatorConfig c = base_config();
    c.personality = P::Personality::kCxgb4;
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    Bytes m = mpa_hdr("MPA ID Rep Frame", 0x70, 2, 2);
    m.insert(m.end(), {0x41, 0x42});
    x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, m));
    Bytes want = bytes_of("-req");
    want.resize(252, 0);
    want.insert(want.end(), {P::kAppPdJunk, P::kAppPdJunk});
    EXPECT_EQ(x.ini.outcome().app_pd, want);
  }
  {  // irdma: the segment's bytes after the frame are what it reads past the PD
    P::InitiatorConfig c = base_config();
    c.personality = P::Personality::kIrdma;
    c.ird_ord = 0x8010'C010;
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    Bytes m = with_word(mpa_hdr("MPA ID Rep Frame", 0x70, 2, 6), 0xBFFF'7FFF);
    for (uint8_t b : bytes_of("ab"
                              "XYZ"))
      m.push_back(b);
    x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, m));
    EXPECT_EQ(x.ini.outcome().reject_pd, bytes_of("ab"));
    EXPECT_EQ(x.ini.outcome().app_pd, (Bytes{'a', 'b', 'X', 'Y', 'Z', P::kAppPdJunk}));
  }
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
  // siw's MPA timer: UNREACHABLE -110, then the socket is released with nothing unread: FIN
  out = x.tick();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, P::kTcpFin | P::kTcpAck);
  EXPECT_EQ(x.ini.state(), State::kFinWait1);
  EXPECT_NE(x.ini.outcome().error.find("reply"), std::string::npos);
  EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kUnreachable);
  EXPECT_EQ(x.ini.outcome().app_status, P::kETIMEDOUT);
  EXPECT_EQ(x.ini.outcome().app_cycle, est + kReplyTimeout);
}

// After its reply timeout siw closes with FIN; Bouncer acknowledges it, and its own reject
// and RST never arrive (lost on the wire): FIN_WAIT2 ends after fin_wait2_cycles
// (tcp_fin_timeout of the orphaned socket), silently, so the initiator finishes.
TEST(SimPeer, FinWait2TimesOutWithoutPeerFin) {
  P::InitiatorConfig c = base_config();
  c.fin_wait2_cycles = 7 * kRto;
  Exchange x(c);
  ASSERT_NO_FATAL_FAILURE(x.connect());
  auto out = x.tick();  // the reply timeout
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, P::kTcpFin | P::kTcpAck);
  for (const Seg& s : out) x.rsp.take(s);
  EXPECT_TRUE(x.deliver(x.rsp.ack()).empty());
  ASSERT_EQ(x.ini.state(), State::kFinWait2);
  const uint64_t fw2 = x.cycle;
  EXPECT_EQ(x.ini.next_deadline(), fw2 + 7 * kRto);
  EXPECT_TRUE(x.tick().empty());
  EXPECT_EQ(x.ini.state(), State::kFailed);
  EXPECT_TRUE(x.ini.finished());
  EXPECT_EQ(x.ini.outcome().closed_cycle, fw2 + 7 * kRto);
  EXPECT_FALSE(x.ini.outcome().rst_sent);
  EXPECT_NE(x.ini.outcome().error.find("reply"), std::string::npos);  // the first error
  EXPECT_EQ(x.ini.next_deadline(), UINT64_MAX);

  // 0: FIN_WAIT2 waits for the peer's FIN forever
  c.fin_wait2_cycles = 0;
  Exchange y(c);
  ASSERT_NO_FATAL_FAILURE(y.connect());
  out = y.tick();
  for (const Seg& s : out) y.rsp.take(s);
  y.deliver(y.rsp.ack());
  ASSERT_EQ(y.ini.state(), State::kFinWait2);
  EXPECT_EQ(y.ini.next_deadline(), UINT64_MAX);
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
  // siw connects TCP inside rdma_connect(): it returns ETIMEDOUT, no event
  EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kConnectFailed);
  EXPECT_EQ(x.ini.outcome().app_status, P::kETIMEDOUT);
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
    EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kRejected);  // TCP_CLOSE -> PEER_CLOSE
    EXPECT_EQ(x.ini.outcome().app_status, P::kECONNRESET);
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

// ---- personalities ---------------------------------------------------------------------------

P::InitiatorConfig config_for(P::Personality pers) {
  P::InitiatorConfig c = base_config();
  c.personality = pers;
  c.ird_ord = 0x8010'C010;  // P2P, IRD 16, both RTR bits, ORD 16
  return c;
}

Bytes pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>('A' + i % 26);
  return b;
}

// The PD_Length limit and the u8 lengths, around 256. The reject is Bouncer's (golden model)
// to an enhanced rev-2 request (PD_Length = PD + 4) or to a rev-1 request.
TEST(SimPeer, PdLengthLimitsPerPersonality) {
  using E = P::AppEvent;
  struct Case {
    P::Personality pers;
    uint8_t rev;
    size_t pd;  // the reject's ULP PD
    E ev;
    int status;
    Bytes app_pd;  // what the application gets
    bool fault;    // siw: the kernel oopses delivering it
  };
  const P::Personality S = P::Personality::kSiw, I = P::Personality::kIrdma,
                       C = P::Personality::kCxgb4;
  const Bytes junk4(4, P::kAppPdJunk);
  auto pre = [](size_t n) { return pattern(n); };
  auto plus = [](Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<Case> cases = {
      // siw_recv_mpa_rr: PD_Length <= 256; siw_cm_upcall: (u8)pd_len - 4 from pdata + 4
      {S, 2, 251, E::kRejected, P::kECONNRESET, pre(251), false},
      {S, 2, 252, E::kRejected, P::kECONNRESET, pre(252), false},  // (u8)256 - 4 = 252
      {S, 2, 253, E::kConnectError, P::kEINVAL, {}, true},         // 257: NULL + 4, 253 bytes
      {S, 2, 255, E::kConnectError, P::kEINVAL, {}, true},
      {S, 1, 255, E::kRejected, P::kECONNRESET, pre(255), false},
      {S, 1, 256, E::kRejected, P::kECONNRESET, {}, false},  // (u8)256 = 0: nothing
      // irdma_parse_mpa: PD_Length <= 512, (u8)pdata.size bytes from offset 24 (rev 2)
      {I, 2, 251, E::kRejected, P::kECONNREFUSED, plus(pre(251), junk4), false},
      {I, 2, 252, E::kRejected, P::kECONNREFUSED, {}, false},  // 256 wraps to 0
      {I, 2, 253, E::kRejected, P::kECONNREFUSED, pre(1), false},
      {I, 2, 255, E::kRejected, P::kECONNREFUSED, pre(3), false},
      {I, 1, 255, E::kRejected, P::kECONNREFUSED, pre(255), false},
      {I, 1, 256, E::kRejected, P::kECONNREFUSED, {}, false},
      // process_mpa_reply: 20 + 256 bytes of mpa_pkt, (u8)plen - 4 from + 24 (rev 2)
      {C, 2, 251, E::kRejected, P::kECONNREFUSED, pre(251), false},
      {C, 2, 252, E::kRejected, P::kECONNREFUSED, pre(252), false},
      {C, 2, 253, E::kConnectError, P::kEINVAL, {}, false},  // 277 bytes > mpa_pkt
      {C, 2, 255, E::kConnectError, P::kEINVAL, {}, false},
      {C, 1, 255, E::kRejected, P::kECONNREFUSED, pre(255), false},
      {C, 1, 256, E::kRejected, P::kECONNREFUSED, {}, false},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(P::to_string(k.pers)) + " rev " + std::to_string(k.rev) + " PD " +
                 std::to_string(k.pd));
    P::InitiatorConfig c = config_for(k.pers);
    c.mpa_rev = k.rev;
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    auto out = x.reject(pattern(k.pd), false);
    const P::Outcome& o = x.ini.outcome();
    EXPECT_TRUE(o.rejected) << "the wire carries a well-formed reject";
    EXPECT_EQ(o.reject_pd, pattern(k.pd));
    EXPECT_EQ(o.app_event, k.ev) << P::to_string(o.app_event);
    EXPECT_EQ(o.app_status, k.status);
    EXPECT_EQ(o.app_pd.size(), k.app_pd.size());
    EXPECT_EQ(o.app_pd, k.app_pd);
    EXPECT_EQ(o.app_kernel_fault, k.fault);
    if (k.ev == E::kConnectError) {
      ASSERT_FALSE(out.empty());
      EXPECT_EQ(out.back().flags, P::kTcpRst | P::kTcpAck) << "refused with RST";
    }
  }
}

// irdma does not reassemble: a reply over two segments fails on the first (RST, REJECTED -104
// with our own PD); siw and cxgb4 wait for the rest.
TEST(SimPeer, SplitReplyPerPersonality) {
  for (P::Personality pers : kAll) {
    SCOPED_TRACE(P::to_string(pers));
    Exchange x(config_for(pers));
    ASSERT_NO_FATAL_FAILURE(x.connect());
    const golden::RejectParams p = x.rsp.reject_params(bytes_of("two halves"), false);
    const Bytes m = decode(golden::build_mpa_reject_frame(p)).payload;
    const Bytes a(m.begin(), m.begin() + 26), b(m.begin() + 26, m.end());
    auto out = x.deliver(x.rsp.frame(P::kTcpAck, a));
    const P::Outcome& o = x.ini.outcome();
    if (pers == P::Personality::kIrdma) {
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].flags, P::kTcpRst | P::kTcpAck);
      EXPECT_EQ(x.ini.state(), State::kFailed);
      EXPECT_NE(o.error.find("one segment"), std::string::npos) << o.error;
      EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
      EXPECT_EQ(o.app_status, P::kECONNRESET);
      EXPECT_EQ(o.app_pd, bytes_of("conn-req"));
      EXPECT_FALSE(o.rejected);
      continue;
    }
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(is_pure_ack(out[0]));
    x.deliver(x.rsp.frame(P::kTcpAck | P::kTcpPsh, b));
    EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
    EXPECT_EQ(o.app_pd, bytes_of("two halves"));
    EXPECT_EQ(o.app_status, pers == P::Personality::kSiw ? P::kECONNRESET : P::kECONNREFUSED);
  }
}

// irdma_check_seq: a data segment whose ACK is not exactly SND.NXT is dropped without an ACK.
TEST(SimPeer, IrdmaDropsReplyWithOldAck) {
  Exchange x(config_for(P::Personality::kIrdma));
  ASSERT_NO_FATAL_FAILURE(x.connect());
  const Bytes good = x.rsp.reject(bytes_of("acked?"), false);
  --x.rsp.rcv_nxt;
  x.rsp.snd_nxt -= 20 + 4 + 6;
  const Bytes stale = x.rsp.reject(bytes_of("acked?"), false);
  ++x.rsp.rcv_nxt;
  EXPECT_TRUE(x.deliver(stale).empty());
  EXPECT_EQ(x.ini.outcome().stats.irdma_bad_ack, 1u);
  EXPECT_EQ(x.ini.state(), State::kEstablished);
  auto out = x.deliver(good);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(is_pure_ack(out[0]));
  EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kRejected);
}

// The second handshake of an MPA v1 retry: the responder answers the retry's SYN; returns the
// retry's request's segments.
std::vector<Seg> second_connect(Exchange& x, const Seg& syn) {
  x.rsp.iss += 0x1000;
  x.rsp.stream.clear();
  x.cycle += 100;
  x.ini.on_rx(x.rsp.syn_ack(syn), x.cycle);
  auto out = drain(x.ini, x.cycle);
  for (const Seg& s : out) x.rsp.take(s);
  x.cycle += 100;
  x.ini.on_rx(x.rsp.ack(), x.cycle);
  return out;
}

// A RST while the rev-2 request waits for its reply. siw: REJECTED -104, no PD. irdma and
// cxgb4 tell the application nothing and retry from the same port with MPA v1 (irdma's SYN
// continues its sequence numbers, cxgb4's has another ISN); the v1 attempt is rejected with
// ECONNREFUSED and the whole PD; a RST to the v1 attempt ends it with REJECTED -104.
TEST(SimPeer, RstWhileRequestOutstanding) {
  for (P::Personality pers : kAll) {
    for (bool second_rst : {false, true}) {
      SCOPED_TRACE(std::string(P::to_string(pers)) + (second_rst ? ", RST again" : ", reject"));
      Exchange x(config_for(pers));
      ASSERT_NO_FATAL_FAILURE(x.connect());
      const uint32_t req_end = x.syn.seq + 1 + static_cast<uint32_t>(x.ini.request_bytes().size());
      // irdma takes a RST without looking at its sequence number
      const Bytes rst = pers == P::Personality::kIrdma
                            ? x.rsp.frame_at(x.rsp.snd_nxt + 77, P::kTcpRst | P::kTcpAck)
                            : x.rsp.rst();
      auto out = x.deliver(rst);
      const P::Outcome& o = x.ini.outcome();
      EXPECT_TRUE(o.rst_received);
      if (pers == P::Personality::kSiw) {
        EXPECT_TRUE(out.empty());
        EXPECT_EQ(x.ini.state(), State::kReset);
        EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_TRUE(o.app_pd.empty());
        break;
      }
      ASSERT_EQ(out.size(), 1u);
      const Seg syn = out[0];
      EXPECT_EQ(syn.flags, P::kTcpSyn);
      EXPECT_EQ(syn.sport, x.syn.sport);
      EXPECT_EQ(syn.dport, x.syn.dport);
      const uint32_t want_isn =
          pers == P::Personality::kIrdma ? req_end : ((x.syn.seq + 0x4000'0000u) & ~7u) + 3u;
      EXPECT_EQ(syn.seq, want_isn);
      EXPECT_EQ(o.retry_syn_seq, want_isn);
      EXPECT_EQ(o.attempts, 2u);
      EXPECT_EQ(o.retry_cycle, x.cycle);
      EXPECT_EQ(o.app_event, P::AppEvent::kNone) << "nothing reaches the application";
      EXPECT_EQ(x.ini.state(), State::kSynSent);
      auto req = second_connect(x, syn);
      ASSERT_EQ(req.size(), 2u);
      EXPECT_TRUE(is_pure_ack(req[0]));
      EXPECT_EQ(req[1].seq, want_isn + 1);
      // MPA v1: Rev 1, the configured flags without 0x10, no IRD/ORD word
      Bytes v1 = mpa_hdr("MPA ID Req Frame", 0x40, 1, 8);
      for (uint8_t b : bytes_of("conn-req")) v1.push_back(b);
      EXPECT_EQ(req[1].payload, v1);
      EXPECT_EQ(x.ini.request_bytes(), v1);
      EXPECT_EQ(x.ini.retry_request_bytes(), v1);
      EXPECT_EQ(o.request_rev, 1);
      if (second_rst) {
        x.deliver(x.rsp.rst());
        EXPECT_EQ(x.ini.state(), State::kReset);
        EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_EQ(o.app_pd, pers == P::Personality::kIrdma ? bytes_of("conn-req") : Bytes{});
        continue;
      }
      out = x.reject(bytes_of("v1 says no"), false);
      EXPECT_TRUE(o.rejected);
      EXPECT_EQ(o.reply_rev, 1);
      EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
      EXPECT_EQ(o.app_status, P::kECONNREFUSED);
      EXPECT_EQ(o.app_pd, bytes_of("v1 says no"));
    }
  }
}

// A RST to the SYN. siw: rdma_connect() itself fails with ECONNREFUSED. irdma: one retry with
// MPA v1 (SYN at the same sequence number), then REJECTED -104 with our PD. cxgb4:
// REJECTED -104 without PD.
TEST(SimPeer, SynAnsweredByRst) {
  for (P::Personality pers : kAll) {
    SCOPED_TRACE(P::to_string(pers));
    Exchange x(config_for(pers));
    x.ini.start(0);
    const Seg syn = drain(x.ini, 0).at(0);
    x.rsp.rcv_nxt = syn.seq + 1;
    auto out = x.deliver(x.rsp.rst());
    const P::Outcome& o = x.ini.outcome();
    if (pers == P::Personality::kIrdma) {
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].flags, P::kTcpSyn);
      EXPECT_EQ(out[0].seq, syn.seq + 1);
      EXPECT_EQ(o.app_event, P::AppEvent::kNone);
      x.rsp.rcv_nxt = out[0].seq + 1;
      out = x.deliver(x.rsp.rst());
    }
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(x.ini.state(), State::kReset);
    switch (pers) {
      case P::Personality::kSiw:
        EXPECT_EQ(o.app_event, P::AppEvent::kConnectFailed);
        EXPECT_EQ(o.app_status, P::kECONNREFUSED);
        break;
      case P::Personality::kIrdma:
        EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_EQ(o.app_pd, bytes_of("conn-req"));
        EXPECT_EQ(o.attempts, 2u);
        break;
      case P::Personality::kCxgb4:
        EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_TRUE(o.app_pd.empty());
        break;
    }
  }
}

// Nobody answers the SYN. irdma_cm_timer_tick: retransmissions 1, 3, 7, 15, 27, 39, 51, 63
// RTOs after the SYN (the timeout doubles up to 12 RTOs), then irdma_retrans_expired sends a
// RST at 75: REJECTED -104 with our PD. siw/cxgb4: Linux-like doubling, silent end; siw's
// rdma_connect() fails with ETIMEDOUT, cxgb4 reports UNREACHABLE.
TEST(SimPeer, UnansweredSynPerPersonality) {
  for (P::Personality pers : kAll) {
    SCOPED_TRACE(P::to_string(pers));
    P::InitiatorConfig c = config_for(pers);
    c.max_retransmits = 8;
    Exchange x(c);
    x.ini.start(0);
    ASSERT_EQ(drain(x.ini, 0).size(), 1u);
    std::vector<uint64_t> at;
    std::vector<uint8_t> last;
    for (int n = 0; n < 20 && !x.ini.finished(); ++n) {
      auto out = x.tick();
      for (const Seg& g : out) {
        at.push_back(x.cycle / kRto);
        last.push_back(g.flags);
      }
    }
    const P::Outcome& o = x.ini.outcome();
    EXPECT_EQ(x.ini.state(), State::kFailed);
    if (pers == P::Personality::kIrdma) {
      EXPECT_EQ(at, (std::vector<uint64_t>{1, 3, 7, 15, 27, 39, 51, 63, 75}));
      EXPECT_EQ(last.back(), P::kTcpRst | P::kTcpAck);
      EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
      EXPECT_EQ(o.app_status, P::kECONNRESET);
      EXPECT_EQ(o.app_pd, bytes_of("conn-req"));
      continue;
    }
    EXPECT_EQ(at, (std::vector<uint64_t>{1, 3, 7, 15, 31, 63, 127, 255}));
    EXPECT_EQ(o.closed_cycle, 511 * kRto);
    EXPECT_EQ(o.app_status, P::kETIMEDOUT);
    EXPECT_EQ(o.app_event, pers == P::Personality::kSiw ? P::AppEvent::kConnectFailed
                                                        : P::AppEvent::kUnreachable);
  }
}

// No reply to an ACKed request. siw: MPAREQ_TIMEOUT -> UNREACHABLE -110 and FIN. cxgb4:
// ep_timeout -> UNREACHABLE -110 and RST. irdma has no MPA timer: the request's entry keeps
// counting without resending and runs out 75 RTOs after the request (RST, REJECTED -104).
TEST(SimPeer, ReplyTimeoutPerPersonality) {
  for (P::Personality pers : kAll) {
    SCOPED_TRACE(P::to_string(pers));
    P::InitiatorConfig c = config_for(pers);
    c.max_retransmits = 8;
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    const uint64_t sent = x.ini.outcome().request_last_cycle;
    std::vector<Seg> out;
    for (int n = 0; n < 20 && out.empty() && !x.ini.finished(); ++n) out = x.tick();
    ASSERT_EQ(out.size(), 1u);
    const P::Outcome& o = x.ini.outcome();
    EXPECT_EQ(o.retransmits, 0u);
    switch (pers) {
      case P::Personality::kSiw:
        EXPECT_EQ(x.cycle, sent + kReplyTimeout);
        EXPECT_EQ(out[0].flags, P::kTcpFin | P::kTcpAck);
        EXPECT_EQ(o.app_event, P::AppEvent::kUnreachable);
        EXPECT_EQ(o.app_status, P::kETIMEDOUT);
        break;
      case P::Personality::kIrdma:
        EXPECT_EQ(x.cycle, sent + 75 * kRto);
        EXPECT_EQ(out[0].flags, P::kTcpRst | P::kTcpAck);
        EXPECT_EQ(o.app_event, P::AppEvent::kRejected);
        EXPECT_EQ(o.app_status, P::kECONNRESET);
        EXPECT_EQ(o.app_pd, bytes_of("conn-req"));
        break;
      case P::Personality::kCxgb4:
        EXPECT_EQ(x.cycle, sent + kReplyTimeout);
        EXPECT_EQ(out[0].flags, P::kTcpRst | P::kTcpAck);
        EXPECT_EQ(o.app_event, P::AppEvent::kUnreachable);
        EXPECT_EQ(o.app_status, P::kETIMEDOUT);
        break;
    }
  }
}

// set_kernel(): the SYN and the request as each kernel sends them.
TEST(SimPeer, SetKernelWire) {
  struct Want {
    P::Personality pers;
    Bytes syn_options;
    uint16_t window;
    uint8_t flags, retry_flags;
    uint32_t word;
  };
  const std::vector<Want> wants = {
      {P::Personality::kSiw,
       {2, 4, 0x05, 0xB4, 4, 2, 8, 10, 0, 1, 0, 0, 0, 0, 0, 0, 1, 3, 3, 7},
       64240,
       0x10,
       0x00,
       0x0004'0002},
      {P::Personality::kIrdma, {2, 4, 0x05, 0xB4, 3, 3, 2, 0}, 0xFFFF, 0x50, 0x40, 0x8004'C002},
      {P::Personality::kCxgb4, {2, 4, 0x05, 0xB4, 1, 3, 3, 3}, 0xFFFF, 0x50, 0x40, 0x8004'4002},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(P::to_string(w.pers));
    P::InitiatorConfig c = base_config();
    c.set_kernel(w.pers, 4, 2);
    EXPECT_EQ(c.personality, w.pers);
    Exchange x(c);
    ASSERT_NO_FATAL_FAILURE(x.connect());
    EXPECT_EQ(x.syn.options, w.syn_options);
    EXPECT_EQ(x.syn.doff, 5 + w.syn_options.size() / 4);
    EXPECT_EQ(x.syn.window, w.window);
    ASSERT_EQ(x.request.size(), 1u);
    Bytes req = mpa_hdr("MPA ID Req Frame", w.flags, 2, 12);
    wr32(req, w.word);
    for (uint8_t b : bytes_of("conn-req")) req.push_back(b);
    EXPECT_EQ(x.request[0].payload, req);
    Bytes v1 = mpa_hdr("MPA ID Req Frame", w.retry_flags, 1, 8);
    for (uint8_t b : bytes_of("conn-req")) v1.push_back(b);
    EXPECT_EQ(x.ini.retry_request_bytes(), v1);
    // the exchange still works: the reject reaches each application
    x.reject(bytes_of("no"), false);
    EXPECT_EQ(x.ini.outcome().app_event, P::AppEvent::kRejected);
  }
  P::InitiatorConfig c = base_config();
  c.rto_cycles = 100;
  c.set_kernel(P::Personality::kSiw);
  EXPECT_EQ(c.reply_timeout_cycles, 1000u);  // MPAREQ_TIMEOUT 10 s at a 1 s RTO
  c.set_kernel(P::Personality::kCxgb4);
  EXPECT_EQ(c.reply_timeout_cycles, 6000u);  // ep_timeout_secs 60
  EXPECT_FALSE(c.fin_after_reject);
  c.set_kernel(P::Personality::kIrdma, 0, 0);
  EXPECT_EQ(c.ird_ord, 0x8000'C001u);  // irdma_record_ird_ord: ORD 0 -> 1
  EXPECT_EQ(c.max_retransmits, 8u);
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
