// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The hostile-frame matrix (docs/reliability.md "Hostile frames"): the real driver
// against the verilated core at both widths, the test playing a hostile initiator with frames
// built by golden::build_segment (not by the peer model or the RTL). For every class of bad input,
// each case asserts exactly:
//  - which frames leave the TX port (none, or an ACK / RST byte-identical to the golden
//    control-segment builder, with the right seq/ack);
//  - how far every STAT_* counter moved (all of them: the ones not named must not move;
//    STAT_RX_FRAMES, STAT_TX_FRAMES and STAT_TX_BYTES are derived from the frames);
//  - which host event appeared (ConnectRequest, PeerReset, MpaError) and which terminal
//    events the driver consumed, or that there were none;
//  - the node's state afterwards (READ_CM_CONTEXT) and CM_CONNS.
// Every test ends with a normal connection on a fresh tuple (simulated initiator: SYN, MPA
// request, host reject, close) and the connection table drained to 0 by the timers.
//
// Classes: truncated headers (every length, with and without 802.1Q, SYN and MPA request
// segment), bad IHL / data offset, IP fragments, bad IPv4 and TCP checksums, garbage TCP
// options, out-of-window segments, wrong MPA key, lying PD_Length, RST and FIN at every CM
// state (in and out of window), SYN flood beyond the table, frames for other MACs, IPs and
// ports.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using golden::TcpCtrlKind;

// ------------------------------------------------------------------ settings

// Timers of these tests: a long RTO (no retransmission inside a case), an MPA timeout short
// enough to wait for, a TIME_WAIT long enough to inject into.
constexpr uint32_t kHostileRtoTicks = 3200;             // 204 800 cycles
constexpr uint32_t kMpaTimeoutTicks = 120'000 / kTick;  // 1875 ticks
constexpr uint32_t kTimeWaitTicksH = 2000;              // 128 000 cycles

bouncer::DeviceConfig hostile_config() {
  auto dc = device_config();
  dc.timers->rto_init = kHostileRtoTicks;
  dc.timers->rto_max = 2 * kHostileRtoTicks;
  dc.timers->mpa_timeout = kMpaTimeoutTicks;
  dc.timers->time_wait = kTimeWaitTicksH;
  return dc;
}

// ------------------------------------------------------------------ frame builder

// Everything a hostile initiator may set (golden::SegmentSpec). Defaults: a well-formed
// IPv4/TCP segment to kLocalIp:kPort, DF set, IHL from the options, checksums right, padded
// to 60 bytes.
struct Frame : golden::SegmentSpec {
  Frame() {
    dst_mac = kLocalMac;
    dst_ip = kLocalIp;
    dport = kPort;
  }
};

std::vector<uint8_t> build(const Frame& fr) { return golden::build_segment(fr); }

// irdma's SYN options: MSS 1460, NOP, WS 7.
const std::vector<uint8_t> kSynOpts = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};

// ------------------------------------------------------------------ the bench

using Stats = std::map<std::string, uint64_t>;

struct Outcome {
  std::vector<std::vector<uint8_t>> tx;  // every frame the core sent meanwhile
  std::vector<bouncer::Event> events;    // delivered to the application
  std::vector<R::AeqEvent> terminals;    // consumed by the driver
  Stats delta;                           // every STAT_* (not STAT_LAST_LATENCY)
  size_t rx = 0;                         // frames injected
};

std::string frames_text(const std::vector<std::vector<uint8_t>>& got) {
  std::string all;
  for (const auto& g : got) {
    auto s = decode(g);
    all += "  " + (s ? describe(*s) : "undecodable (" + std::to_string(g.size()) + " B)") + "\n";
  }
  return all;
}

class Bench {
 public:
  Bench(sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm)
      : plat(plat), hal(hal), dev(dev), cm(cm), seen_(plat.tx_frames().size()) {
    cm.set_terminal_observer([this](uint32_t, R::AeqEvent e) { terminals_.push_back(e); });
  }
  ~Bench() { cm.set_terminal_observer({}); }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  Stats stats() {
    Stats s;
    for (const auto& v : dev.read_stats()) {
      if (std::string(v.name) != "STAT_LAST_LATENCY") s[v.name] = v.value;
    }
    return s;
  }

  // Injects `frames` (back to back), runs `cycles` while polling events, and reports
  // everything that happened meanwhile.
  Outcome send(const std::vector<std::vector<uint8_t>>& frames, uint64_t cycles = 3000) {
    Outcome o;
    const Stats before = stats();
    terminals_.clear();
    for (const auto& f : frames) plat.inject_rx(f, 0);
    o.rx = frames.size();
    const uint64_t until = hal.now_cycles() + cycles;
    while (hal.now_cycles() < until) {
      hal.wait_cycles(std::min<uint64_t>(256, until - hal.now_cycles()));
      poll(o);
    }
    poll(o);
    for (; seen_ < plat.tx_frames().size(); ++seen_) o.tx.push_back(plat.tx_frames()[seen_].bytes);
    o.terminals = terminals_;
    terminals_.clear();
    const Stats after = stats();
    for (const auto& [k, v] : after) o.delta[k] = static_cast<uint32_t>(v - before.at(k));
    return o;
  }
  Outcome send(const std::vector<uint8_t>& frame, uint64_t cycles = 3000) {
    return send(std::vector<std::vector<uint8_t>>{frame}, cycles);
  }
  Outcome idle(uint64_t cycles) { return send(std::vector<std::vector<uint8_t>>{}, cycles); }

  // Frames sent since the last send()/idle()/take_tx() (e.g. by a reject).
  std::vector<std::vector<uint8_t>> take_tx() {
    std::vector<std::vector<uint8_t>> out;
    for (; seen_ < plat.tx_frames().size(); ++seen_) out.push_back(plat.tx_frames()[seen_].bytes);
    return out;
  }

  sim::Platform& plat;
  bouncer::hal::Device& hal;
  Device& dev;
  Cm& cm;

 private:
  void poll(Outcome& o) {
    for (;;) {
      auto ev = cm.poll_event();
      if (!ev.ok()) {
        ADD_FAILURE() << "poll_event: " << ev.error().message;
        return;
      }
      if (!ev->has_value()) return;
      o.events.push_back(**ev);
    }
  }

  size_t seen_;
  std::vector<R::AeqEvent> terminals_;
};

// Every counter moved exactly as `want` says (names without "STAT_"), the others not at all;
// RX frames = frames injected, TX frames and bytes = what the TX port showed.
void expect_counts(const Outcome& o, std::map<std::string, uint64_t> want,
                   const std::string& what) {
  std::map<std::string, uint64_t> w;
  for (const auto& [k, v] : want) w["STAT_" + k] = v;
  w["STAT_RX_FRAMES"] = o.rx;
  w["STAT_TX_FRAMES"] = o.tx.size();
  uint64_t bytes = 0;
  for (const auto& f : o.tx) bytes += f.size();
  w["STAT_TX_BYTES"] = bytes;
  for (const auto& [k, v] : w) {
    EXPECT_TRUE(o.delta.count(k)) << what << ": no counter " << k;
  }
  for (const auto& [k, v] : o.delta) {
    const uint64_t exp = w.count(k) ? w.at(k) : 0;
    EXPECT_EQ(v, exp) << what << ": " << k << " moved by " << v << ", expected " << exp
                      << "\nframes from Bouncer:\n"
                      << frames_text(o.tx);
  }
}

// Nothing sent, no event, exactly these counters.
void expect_dropped(const Outcome& o, std::map<std::string, uint64_t> want,
                    const std::string& what) {
  EXPECT_TRUE(o.tx.empty()) << what << ": frames from Bouncer:\n" << frames_text(o.tx);
  EXPECT_TRUE(o.events.empty()) << what << ": " << o.events.size() << " events, the first "
                                << (o.events.empty() ? "" : bouncer::event_name(o.events[0]));
  EXPECT_TRUE(o.terminals.empty()) << what << ": terminal events";
  expect_counts(o, std::move(want), what);
}

// Exactly these frames (byte for byte), no event, exactly these counters.
void expect_answer(const Outcome& o, const std::vector<std::vector<uint8_t>>& frames,
                   std::map<std::string, uint64_t> want, const std::string& what) {
  EXPECT_EQ(o.tx.size(), frames.size()) << what << ": frames from Bouncer:\n"
                                        << frames_text(o.tx) << "expected:\n"
                                        << frames_text(frames);
  for (size_t i = 0; i < o.tx.size() && i < frames.size(); ++i) {
    EXPECT_EQ(o.tx[i], frames[i]) << what << ": frame " << i << " vs golden\n"
                                  << frames_text({o.tx[i]}) << "expected\n"
                                  << frames_text({frames[i]});
  }
  EXPECT_TRUE(o.events.empty()) << what << ": " << o.events.size() << " events";
  EXPECT_TRUE(o.terminals.empty()) << what << ": terminal events";
  expect_counts(o, std::move(want), what);
}

// ------------------------------------------------------------------ a hand-played connection

// One initiator played by hand: its addresses (number n), our view of Bouncer's numbers, and
// the golden model of Bouncer's frames to it.
struct Hand {
  Hand(Bench& b, unsigned n, std::optional<uint16_t> vlan = std::nullopt) : b(b) {
    base.src_mac = {0x02, 0x00, 0x00, 0x0b, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
    base.src_ip = 0x0A140000u | n;  // 10.20.x.y
    base.sport = static_cast<uint16_t>(30000 + n);
    base.ip_id = static_cast<uint16_t>(0x1000 + 0x40 * n);
    base.vlan = vlan;
    isn = 0x4000'0000u + n * 0x0103'0507u;
    ex.peer.mac = base.src_mac;
    ex.peer.ip = base.src_ip;
    ex.peer.port = base.sport;
    ex.peer.peer_ip = kLocalIp;
    ex.peer.peer_port = kPort;
    ex.peer.isn = isn;
    ex.peer.mpa_rev = 2;
    ex.peer.enhanced = true;
    ex.peer.ird_ord = ird_ord_word(4, 4);
    ex.vlan = vlan;
    rcv = isn + 1;
  }

  // A segment of this initiator (IP ID advancing).
  Frame seg(uint8_t flags, uint32_t seq, uint32_t ack, std::vector<uint8_t> payload = {}) {
    Frame f = base;
    f.ip_id = base.ip_id++;
    f.flags = flags;
    f.seq = seq;
    f.ack = ack;
    f.payload = std::move(payload);
    if (flags & kSyn) f.tcp_opts = kSynOpts;
    return f;
  }
  std::vector<uint8_t> bytes(uint8_t flags, uint32_t seq, uint32_t ack,
                             std::vector<uint8_t> payload = {}) {
    return build(seg(flags, seq, ack, std::move(payload)));
  }
  std::vector<uint8_t> ctrl(TcpCtrlKind k, uint32_t seq, uint32_t ack) const {
    return ex.ctrl(k, seq, ack, ipid);
  }
  std::vector<uint8_t> ack_now() const { return ctrl(TcpCtrlKind::kAck, snd, rcv); }

  // SYN -> SYN-ACK (golden, ISS checked against the keyed hash): SYN_RCVD.
  void open() {
    const uint64_t t0 = b.hal.now_cycles();
    auto o = b.send(bytes(kSyn, isn, 0));
    ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
    auto s = decode(o.tx[0]);
    ASSERT_TRUE(s && s->flags == (kSyn | kAck)) << frames_text(o.tx);
    ex.iss = s->seq;
    ex.ip_id0 = s->ip_id;
    EXPECT_TRUE(isn_plausible(ex.iss, ex.peer, t0, b.hal.now_cycles()));
    EXPECT_EQ(o.tx[0], ex.synack()) << "SYN-ACK vs golden";
    expect_counts(o, {}, "SYN");  // (no counter for a SYN-ACK)
    snd = ex.iss + 1;
    ipid = static_cast<uint16_t>(ex.ip_id0 + 1);
    acked = ex.iss;
  }
  // ... ACK: ESTABLISHED.
  void establish() {
    auto o = b.send(bytes(kAck, rcv, snd));
    expect_dropped(o, {{"CONN_ESTABLISHED", 1}}, "handshake ACK");
    acked = snd;
  }
  // ... the MPA request: ACK, ConnectRequest: MPAREQ_RCVD, held by the host.
  void request() {
    const auto pd = text_pd("hostile", 11);
    const auto req = mpa_request_payload(2, true, ex.peer.ird_ord, pd);
    ex.req_len = static_cast<uint32_t>(req.size());
    auto o = b.send(bytes(kAck | kPsh, rcv, snd, req));
    rcv += ex.req_len;
    ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
    EXPECT_EQ(o.tx[0], ack_now()) << "ACK of the request vs golden";
    ASSERT_EQ(o.events.size(), 1u);
    const auto* cr = std::get_if<bouncer::ConnectRequest>(&o.events[0]);
    ASSERT_NE(cr, nullptr) << bouncer::event_name(o.events[0]);
    EXPECT_EQ(to_u8(cr->private_data), pd);
    cm_id = cr->cm_id;
    handle = cr->handle;
    expect_counts(o, {{"MPA_REQ", 1}, {"ACK_TX", 1}, {"EVENTS", 1}}, "request");
  }
  // The host rejects (policy), the reject goes out (golden).
  void reject(R::FinPolicy policy) {
    RejectOptions opt;
    opt.fin_policy = policy;
    const auto pd = to_bytes(text_pd("go away", 7));
    auto c = b.cm.reject(handle, pd, opt);
    ASSERT_TRUE(c.ok()) << c.error().message;
    b.hal.wait_cycles(1500);
    auto got = b.take_tx();
    const bool fin = policy == R::FinPolicy::IRDMA;
    auto rp = ex.reject_params(pd, fin, std::nullopt);
    rp.ip_id = ipid;
    rp.rcv_nxt = rcv;
    ASSERT_EQ(got.size(), 1u) << frames_text(got);
    EXPECT_EQ(got[0], golden::build_mpa_reject_frame(rp)) << "reject vs golden";
    snd += static_cast<uint32_t>(golden::mpa_reply_len(rp)) + (fin ? 1 : 0);
    ++ipid;
  }
  // Read the node (READ_CM_CONTEXT) and check its state and numbers.
  void expect_node(R::CmState st) {
    ASSERT_TRUE(cm_id.has_value());
    auto node = b.dev.cqp_read_node(*cm_id);
    ASSERT_TRUE(node.ok()) << node.error().message;
    EXPECT_EQ(node->state, st) << R::name(node->state) << " instead of " << R::name(st);
    EXPECT_EQ(node->ctx.rcv_nxt, rcv);
    EXPECT_EQ(node->ctx.snd_nxt, snd);
  }

  Bench& b;
  Frame base;
  uint32_t isn = 0;
  Expect ex;
  uint32_t rcv = 0;    // Bouncer's RCV_NXT
  uint32_t snd = 0;    // Bouncer's SND_NXT
  uint32_t acked = 0;  // the ACK this initiator sends with RST/FIN (acknowledges nothing new)
  uint16_t ipid = 0;   // Bouncer's next IP ID
  std::optional<uint32_t> cm_id;
  bouncer::ConnHandle handle;
};

// ------------------------------------------------------------------ the test frame

// The core still works after the hostile input: a simulated initiator on a fresh tuple
// connects, its request reaches the host, the host rejects it, the connection closes; then the
// connection table is empty (CM_CONNS 0) and the driver holds nothing.
void still_works(sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm, unsigned n) {
  SCOPED_TRACE("a normal connection after the hostile input");
  Scenario sc(plat, hal, dev, cm);
  auto cfg = peer_config(n, 2, true, text_pd("after the storm", 21));
  cfg.time_wait_cycles = 4000;
  run_one(sc, cfg, to_bytes(text_pd("still standing", 14)), 3'000'000, 0,
          [&](const Conn& c, const std::vector<WireSeg>&) {
            EXPECT_EQ(c.terminals.size(), 1u);
            EXPECT_TRUE(c.completion.has_value());
          });
  expect_clean_end(sc);
  EXPECT_EQ(dev.cm_conns(), 0u);
}

class Hostile : public ::testing::TestWithParam<unsigned> {
 public:  // run() is used by helpers outside the fixture too
  // Runs `body(bench)` on an opened device listening on kLocalIp:kPort (SIW_SAFE), then
  // still_works(); `dc` the device configuration.
  template <class F>
  void run(F&& body, bouncer::DeviceConfig dc = hostile_config()) {
    sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
    with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
      {
        Bench b(plat, hal, dev, cm);
        body(b);
        EXPECT_EQ(cm.stats().unexpected_events, 0u);
      }
      if (::testing::Test::HasFatalFailure()) return;
      still_works(plat, hal, dev, cm, 200);
      std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    });
  }
};

// ------------------------------------------------------------------ truncated headers

// Every length from 1 byte to one short of the whole frame, of a SYN (Ethernet + IPv4 + TCP
// with options) and of an MPA request segment on an established connection (+ the 20-byte
// MPA header), without and with an 802.1Q tag: each is dropped as bad (runt or IPv4 length
// beyond the frame), nothing sent, the connection untouched. The whole frames then work.
TEST_P(Hostile, TruncatedHeadersAtEveryLength) {
  run([&](Bench& b) {
    for (const bool tagged : {false, true}) {
      const std::optional<uint16_t> vlan =
          tagged ? std::optional<uint16_t>(0x2000 | 77) : std::nullopt;
      SCOPED_TRACE(tagged ? "802.1Q" : "untagged");
      Hand h(b, tagged ? 2 : 1, vlan);
      // the SYN
      auto syn = h.seg(kSyn, h.isn, 0);
      syn.pad = false;
      const auto full = build(syn);
      ASSERT_EQ(full.size(), (tagged ? 18u : 14u) + 20 + 28);
      for (size_t len = 1; len < full.size(); ++len) {
        auto o = b.send(std::vector<uint8_t>(full.begin(), full.begin() + len), 400);
        expect_dropped(o, {{"RX_BAD", 1}}, "SYN cut to " + std::to_string(len) + " bytes");
      }
      EXPECT_EQ(b.dev.cm_conns(), 0u);
      h.open();
      h.establish();
      // the MPA request segment
      const auto req = mpa_request_payload(1, false, 0, {});
      auto rf = h.seg(kAck | kPsh, h.rcv, h.snd, req);
      rf.pad = false;
      const auto rfull = build(rf);
      ASSERT_EQ(rfull.size(), (tagged ? 18u : 14u) + 20 + 20 + 20);
      for (size_t len = 1; len < rfull.size(); ++len) {
        auto o = b.send(std::vector<uint8_t>(rfull.begin(), rfull.begin() + len), 400);
        expect_dropped(o, {{"RX_BAD", 1}}, "request cut to " + std::to_string(len) + " bytes");
      }
      EXPECT_EQ(b.dev.cm_conns(), 1u);
      // the whole request: ACK + ConnectRequest (rev 1, no PD)
      auto o = b.send(rfull);
      h.rcv += 20;
      ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
      EXPECT_EQ(o.tx[0], h.ack_now());
      ASSERT_EQ(o.events.size(), 1u);
      const auto* cr = std::get_if<bouncer::ConnectRequest>(&o.events[0]);
      ASSERT_NE(cr, nullptr);
      EXPECT_EQ(cr->rev, 1);
      EXPECT_TRUE(cr->private_data.empty());
      // abort it: reject + RST, node freed, CLOSED consumed
      RejectOptions opt;
      opt.fin_policy = R::FinPolicy::ABORT;
      ASSERT_TRUE(b.cm.reject(cr->handle, {}, opt).ok());
      b.idle(2000);
      EXPECT_EQ(b.dev.cm_conns(), 0u);
    }
  });
}

// ------------------------------------------------------------------ IHL, data offset

// IPv4 version / IHL and TCP data offset that do not describe the frame: dropped as bad
// (STAT_RX_BAD), on a SYN (no node) and on the established connection (a RST that would end
// it). Well-formed IP options (IHL 6) and TCP options padded with NOPs (data offset 15) are
// accepted.
TEST_P(Hostile, BadIhlAndDataOffset) {
  run([&](Bench& b) {
    Hand h(b, 3);
    struct Case {
      std::string name;
      std::function<void(Frame&)> edit;
    };
    const std::vector<Case> cases = {
        {"IHL 0", [](Frame& f) { f.ihl = 0; }},
        {"IHL 1", [](Frame& f) { f.ihl = 1; }},
        {"IHL 4", [](Frame& f) { f.ihl = 4; }},
        {"IHL 6 without options", [](Frame& f) { f.ihl = 6; }},
        {"IHL 15 (past the datagram)", [](Frame& f) { f.ihl = 15; }},
        {"version 6 in an IPv4 frame", [](Frame& f) { f.version = 6; }},
        {"version 0", [](Frame& f) { f.version = 0; }},
        {"total length < IHL*4", [](Frame& f) { f.total_len = 19; }},
        {"total length past the frame", [](Frame& f) { f.total_len = 200; }},
        {"total length < IHL*4 + doff*4", [](Frame& f) { f.total_len = 39; }},
        {"data offset 0", [](Frame& f) { f.doff = 0; }},
        {"data offset 4", [](Frame& f) { f.doff = 4; }},
        {"data offset 15 (past the segment)", [](Frame& f) { f.doff = 15; }},
        {"data offset 7 without options",
         [](Frame& f) {
           if (f.tcp_opts.empty())
             f.doff = 7;
           else
             f.doff = 9;
         }},
    };
    for (const auto& c : cases) {
      auto syn = h.seg(kSyn, h.isn, 0);
      c.edit(syn);
      expect_dropped(b.send(build(syn), 600), {{"RX_BAD", 1}}, "SYN, " + c.name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 0u);
    h.open();
    h.establish();
    for (const auto& c : cases) {
      auto rst = h.seg(kRst | kAck, h.rcv, h.snd);
      c.edit(rst);
      expect_dropped(b.send(build(rst), 600), {{"RX_BAD", 1}}, "RST, " + c.name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 1u);
    // IHL 6 with a NOP/EOL option word: a valid segment (here a duplicate SYN's challenge
    // ACK would be the answer, so use an out-of-window probe: ACK with the current numbers)
    auto probe = h.seg(kAck, h.rcv + 1000, h.snd);
    probe.ip_opts = {1, 1, 1, 0};
    expect_answer(b.send(build(probe)), {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}},
                  "IHL 6 with options");
    auto probe2 = h.seg(kAck, h.rcv + 1000, h.snd);
    probe2.tcp_opts.assign(40, 1);  // data offset 15, all NOPs
    expect_answer(b.send(build(probe2)), {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}},
                  "data offset 15 with NOPs");
    // and the exact RST ends the connection
    expect_dropped(b.send(h.bytes(kRst | kAck, h.rcv, h.snd)), {{"RST_RX", 1}, {"CLOSED", 1}},
                   "exact RST");
    EXPECT_EQ(b.dev.cm_conns(), 0u);
  });
}

// ------------------------------------------------------------------ IP fragments

// Fragments are not reassembled: the first (MF), a middle one and the last (offset != 0) of
// a SYN or of a RST are not TCP (STAT_RX_NOT_TCP), dropped silently, nothing else moves.
TEST_P(Hostile, IpFragments) {
  run([&](Bench& b) {
    Hand h(b, 4);
    const std::vector<std::pair<std::string, uint16_t>> frags = {
        {"first fragment (MF)", 0x2000},
        {"middle fragment (MF, offset 3)", 0x2003},
        {"last fragment (offset 3)", 0x0003},
        {"last fragment (DF, offset 1)", 0x4001},
        {"offset 8191", 0x1FFF},
    };
    for (const auto& [name, frag] : frags) {
      auto syn = h.seg(kSyn, h.isn, 0);
      syn.frag = frag;
      expect_dropped(b.send(build(syn), 600), {{"RX_NOT_TCP", 1}}, "SYN, " + name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 0u);
    h.open();
    h.establish();
    for (const auto& [name, frag] : frags) {
      auto rst = h.seg(kRst | kAck, h.rcv, h.snd);
      rst.frag = frag;
      expect_dropped(b.send(build(rst), 600), {{"RX_NOT_TCP", 1}}, "RST, " + name);
      // a fragment of the MPA request
      auto req = h.seg(kAck | kPsh, h.rcv, h.snd, mpa_request_payload(1, false, 0, {}));
      req.frag = frag;
      expect_dropped(b.send(build(req), 600), {{"RX_NOT_TCP", 1}}, "request, " + name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 1u);
    expect_dropped(b.send(h.bytes(kRst | kAck, h.rcv, h.snd)), {{"RST_RX", 1}, {"CLOSED", 1}},
                   "exact RST");
  });
}

// ------------------------------------------------------------------ checksums

// A wrong IPv4 header checksum or TCP checksum (header, payload or zero): STAT_RX_BAD, nothing
// sent, the connection untouched. Then the same frames with good checksums work.
TEST_P(Hostile, BadChecksums) {
  run([&](Bench& b) {
    Hand h(b, 5);
    struct Case {
      std::string name;
      std::function<void(Frame&)> edit;
    };
    const std::vector<Case> cases = {
        {"IPv4 checksum off by one bit", [](Frame& f) { f.ip_csum_xor = 0x0001; }},
        {"IPv4 checksum all ones flipped", [](Frame& f) { f.ip_csum_xor = 0xFFFF; }},
        {"TCP checksum off by one bit", [](Frame& f) { f.tcp_csum_xor = 0x8000; }},
        {"TCP checksum zero", [](Frame&) {}},
        {"both wrong",
         [](Frame& f) {
           f.ip_csum_xor = 0x0100;
           f.tcp_csum_xor = 0x0100;
         }},
    };
    // "TCP checksum zero": the field is cleared after building
    for (const auto& c : cases) {
      auto syn = h.seg(kSyn, h.isn, 0);
      c.edit(syn);
      auto f = build(syn);
      if (c.name == "TCP checksum zero") {
        f[14 + 20 + 16] = 0;
        f[14 + 20 + 17] = 0;
      }
      expect_dropped(b.send(f, 600), {{"RX_BAD", 1}}, "SYN, " + c.name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 0u);
    h.open();
    h.establish();
    for (const auto& c : cases) {
      auto rst = h.seg(kRst | kAck, h.rcv, h.snd);
      c.edit(rst);
      auto f = build(rst);
      if (c.name == "TCP checksum zero") {
        f[14 + 20 + 16] = 0;
        f[14 + 20 + 17] = 0;
      }
      expect_dropped(b.send(f, 600), {{"RX_BAD", 1}}, "RST, " + c.name);
    }
    // a request whose payload was changed after the checksum: not taken
    const auto req = mpa_request_payload(2, true, h.ex.peer.ird_ord, text_pd("x", 5));
    auto bad = build(h.seg(kAck | kPsh, h.rcv, h.snd, req));
    bad[14 + 20 + 20 + 3] ^= 0x20;  // a key byte: the TCP checksum no longer matches
    expect_dropped(b.send(bad, 600), {{"RX_BAD", 1}}, "request, payload byte flipped");
    EXPECT_EQ(b.dev.cm_conns(), 1u);
    h.request();
    h.expect_node(R::CmState::MPAREQ_RCVD);
    // the host aborts it
    RejectOptions opt;
    opt.fin_policy = R::FinPolicy::ABORT;
    ASSERT_TRUE(b.cm.reject(h.handle, {}, opt).ok());
    b.idle(2000);
    EXPECT_EQ(b.dev.cm_conns(), 0u);
  });
}

// ------------------------------------------------------------------ TCP options

// Options that cannot be walked (length 0 or 1, past the option area, MSS not 4 long, WS not
// 3 long) make the frame bad (STAT_RX_BAD): dropped, unlike Linux, which ignores the rest of
// the option area. Unknown kinds with a sound length, options after EOL and NOP padding are
// accepted.
TEST_P(Hostile, GarbageTcpOptions) {
  run([&](Bench& b) {
    unsigned n = 10;
    const std::vector<std::pair<std::string, std::vector<uint8_t>>> bad = {
        {"length 0", {2, 0, 1, 1}},
        {"length 1", {8, 1, 1, 1}},
        {"length past the option area", {2, 4, 0x05, 0xb4, 8, 10, 0, 0}},
        {"MSS of length 3", {2, 3, 0x05, 1}},
        {"MSS of length 6", {2, 6, 0x05, 0xb4, 0, 0, 1, 1}},
        {"WS of length 4", {3, 4, 7, 0}},
        {"WS of length 2", {3, 2, 1, 1}},
        {"kind 255 length 1", {255, 1, 0, 0}},
        {"one byte of an option at the end", {1, 1, 1, 30}},
    };
    for (const auto& [name, opts] : bad) {
      Hand h(b, n++);
      auto syn = h.seg(kSyn, h.isn, 0);
      syn.tcp_opts = opts;
      expect_dropped(b.send(build(syn), 600), {{"RX_BAD", 1}}, "SYN, options " + name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 0u);
    const std::vector<std::pair<std::string, std::vector<uint8_t>>> good = {
        {"unknown kind 30 length 6", {30, 6, 1, 2, 3, 4, 2, 4, 0x05, 0xb4, 0, 0}},
        {"garbage after EOL", {2, 4, 0x05, 0xb4, 0, 0xEE, 0x01, 0xFF}},
        {"SACK-permitted and timestamps", {4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0}},
        {"40 bytes of NOPs", std::vector<uint8_t>(40, 1)},
    };
    for (const auto& [name, opts] : good) {
      SCOPED_TRACE(name);
      Hand h(b, n++);
      auto syn = h.seg(kSyn, h.isn, 0);
      syn.tcp_opts = opts;
      auto o = b.send(build(syn));
      ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
      auto s = decode(o.tx[0]);
      ASSERT_TRUE(s && s->flags == (kSyn | kAck));
      h.ex.iss = s->seq;
      h.ex.ip_id0 = s->ip_id;
      h.ex.peer_ws = false;  // none of these SYNs has a window-scale option: NOPs instead
      EXPECT_EQ(o.tx[0], h.ex.synack()) << "SYN-ACK vs golden";
      expect_counts(o, {}, name);
      // the initiator resets the half-open connection (exact RST)
      expect_dropped(b.send(h.bytes(kRst, h.isn + 1, 0)), {{"RST_RX", 1}, {"CLOSED", 1}},
                     "RST after " + name);
    }
    EXPECT_EQ(b.dev.cm_conns(), 0u);
  });
}

// ------------------------------------------------------------------ out of window

// Segments outside RCV_NXT / SND_NXT on an established connection and on a held request:
// duplicate or future data, ACK of unsent data, a segment without ACK, a SYN, RSTs not at
// RCV_NXT. Each is counted in STAT_OOW and answered with an ACK carrying the current numbers
// (a RST in the window but not at RCV_NXT gets that challenge ACK, RFC 5961 3.2), or dropped
// (a RST outside the window, no ACK flag); the connection goes on.
TEST_P(Hostile, OutOfWindowSegments) {
  run([&](Bench& b) {
    Hand h(b, 20);
    h.open();
    auto cases = [&](const std::string& where) {
      const std::vector<uint8_t> data(12, 0x5A);
      struct Case {
        std::string name;
        std::vector<uint8_t> frame;
        bool answered;
        bool syn = false;
      };
      const std::vector<Case> cs = {
          {"old data", h.bytes(kAck | kPsh, h.rcv - 12, h.acked, data), true},
          {"future data", h.bytes(kAck | kPsh, h.rcv + 100, h.acked, data), true},
          {"far future data", h.bytes(kAck | kPsh, h.rcv + 0x4000'0000u, h.acked, data), true},
          {"ACK of unsent data", h.bytes(kAck, h.rcv, h.snd + 5000), true},
          {"ACK from the far past", h.bytes(kAck, h.rcv, h.snd + 0x8000'0001u), true},
          {"ACK before ISS + 1", h.bytes(kAck, h.rcv, h.ex.iss - 7), true},
          {"no ACK flag", h.bytes(kPsh, h.rcv, 0, data), false},
          {"SYN in sequence", h.bytes(kSyn, h.rcv, 0), true, true},
          {"RST one past RCV_NXT", h.bytes(kRst | kAck, h.rcv + 1, h.acked), true},
          {"RST at the window's last byte",
           h.bytes(kRst | kAck, h.rcv + h.ex.tcp.window - 1, h.acked), true},
          {"RST just past the window", h.bytes(kRst | kAck, h.rcv + h.ex.tcp.window, h.acked),
           false},
          {"RST one before RCV_NXT", h.bytes(kRst | kAck, h.rcv - 1, h.acked), false},
          {"RST far out", h.bytes(kRst, h.rcv + 0x7000'0000u, 0), false},
      };
      for (const auto& c : cs) {
        auto o = b.send(c.frame);
        if (c.answered) {
          expect_answer(o, {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}}, where + ", " + c.name);
        } else {
          expect_dropped(o, {{"OOW", 1}}, where + ", " + c.name);
        }
      }
    };
    {
      SCOPED_TRACE("SYN_RCVD");
      cases("SYN_RCVD");
      // an ACK of nothing (SEG.ACK = ISS) or of less than the SYN-ACK: not acceptable
      expect_answer(b.send(h.bytes(kAck, h.rcv, h.snd - 1)), {h.ack_now()},
                    {{"OOW", 1}, {"ACK_TX", 1}}, "SYN_RCVD, ACK of ISS");
      expect_answer(b.send(h.bytes(kAck, h.rcv, h.snd - 0x1000)), {h.ack_now()},
                    {{"OOW", 1}, {"ACK_TX", 1}}, "SYN_RCVD, ACK before ISS");
      EXPECT_EQ(b.dev.cm_conns(), 1u);
    }
    {
      SCOPED_TRACE("ESTABLISHED");
      h.establish();
      cases("ESTABLISHED");
      EXPECT_EQ(b.dev.cm_conns(), 1u);
    }
    {
      SCOPED_TRACE("MPAREQ_RCVD");
      h.request();
      cases("MPAREQ_RCVD");
      h.expect_node(R::CmState::MPAREQ_RCVD);
      EXPECT_EQ(b.cm.node_state(*h.cm_id), bouncer::NodeState::kHeld);
    }
    RejectOptions opt;
    opt.fin_policy = R::FinPolicy::ABORT;
    ASSERT_TRUE(b.cm.reject(h.handle, {}, opt).ok());
    b.idle(2000);
    EXPECT_EQ(b.dev.cm_conns(), 0u);
  });
}

// ------------------------------------------------------------------ MPA key, PD_Length

// A wrong MPA key (the reply key, garbage, one byte off; whole or split over two segments):
// RST|ACK acknowledging the segment, MpaError BAD_KEY, node freed.
TEST_P(Hostile, WrongMpaKey) {
  run([&](Bench& b) {
    unsigned n = 30;
    struct Case {
      std::string name;
      std::vector<uint8_t> req;
      size_t split;  // 0: one segment
    };
    auto good = mpa_request_payload(2, true, ird_ord_word(4, 4), text_pd("k", 6));
    auto rep = good;
    std::memcpy(rep.data(), "MPA ID Rep Frame", 16);
    auto garbage = good;
    for (size_t i = 0; i < 16; ++i) garbage[i] = static_cast<uint8_t>(0xA0 + i);
    auto lower = good;
    lower[15] = 'E';  // "Req FramE"
    const std::vector<Case> cases = {
        {"reply key", rep, 0},
        {"garbage key", garbage, 0},
        {"last key byte wrong", lower, 0},
        {"reply key split 10 + rest", rep, 10},
        {"last key byte wrong, split 19 + rest", lower, 19},
    };
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name);
      Hand h(b, n++);
      h.open();
      h.establish();
      uint32_t seq = h.rcv;
      if (c.split != 0) {
        std::vector<uint8_t> head(c.req.begin(), c.req.begin() + c.split);
        auto o = b.send(h.bytes(kAck | kPsh, seq, h.snd, head));
        h.rcv += static_cast<uint32_t>(c.split);
        expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, c.name + ", first part");
        seq = h.rcv;
      }
      std::vector<uint8_t> rest(c.req.begin() + c.split, c.req.end());
      auto o = b.send(h.bytes(kAck | kPsh, seq, h.snd, rest));
      ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
      EXPECT_EQ(o.tx[0],
                h.ctrl(TcpCtrlKind::kRstAck, h.snd, seq + static_cast<uint32_t>(rest.size())))
          << "RST vs golden";
      ASSERT_EQ(o.events.size(), 1u);
      const auto* me = std::get_if<bouncer::MpaError>(&o.events[0]);
      ASSERT_NE(me, nullptr) << bouncer::event_name(o.events[0]);
      EXPECT_EQ(me->reason, R::MpaError::BAD_KEY);
      EXPECT_EQ(me->tuple, (bouncer::Tuple{kLocalIp, kPort, h.base.src_ip, h.base.sport}));
      EXPECT_TRUE(o.terminals.empty());
      expect_counts(o, {{"MPA_ERR", 1}, {"RST_TX", 1}, {"CLOSED", 1}, {"EVENTS", 1}}, c.name);
      EXPECT_EQ(b.dev.cm_conns(), 0u);
    }
  });
}

// PD_Length that lies:
//  - longer than the bytes that come: the request stays incomplete (each part ACKed), and
//    MPA_TIMEOUT after the handshake ends it: RST|ACK, STAT_MPA_TIMEOUT, no event;
//  - longer, then a later segment overshoots it: RST, MpaError TOO_LONG;
//  - shorter than the bytes in the segment: RST, MpaError TOO_LONG;
//  - over 512: RST, MpaError PD_TOO_LONG (also with a 1400-byte segment);
//  - rev 2 enhanced with PD_Length < 4: RST, MpaError BAD_REV.
TEST_P(Hostile, LyingPdLength) {
  run([&](Bench& b) {
    unsigned n = 40;
    auto req_with = [](uint16_t pd_length, size_t pd_bytes) {
      auto r = mpa_request_payload(1, false, 0, text_pd("lie", pd_bytes));
      r[18] = static_cast<uint8_t>(pd_length >> 8);
      r[19] = static_cast<uint8_t>(pd_length);
      return r;
    };
    auto expect_mpa_error = [&](Hand& h, const Outcome& o, uint32_t seg_end, R::MpaError why,
                                const std::string& what) {
      ASSERT_EQ(o.tx.size(), 1u) << what << "\n" << frames_text(o.tx);
      EXPECT_EQ(o.tx[0], h.ctrl(TcpCtrlKind::kRstAck, h.snd, seg_end)) << what << ": RST";
      ASSERT_EQ(o.events.size(), 1u) << what;
      const auto* me = std::get_if<bouncer::MpaError>(&o.events[0]);
      ASSERT_NE(me, nullptr) << what;
      EXPECT_EQ(me->reason, why) << what;
      expect_counts(o, {{"MPA_ERR", 1}, {"RST_TX", 1}, {"CLOSED", 1}, {"EVENTS", 1}}, what);
      EXPECT_EQ(b.dev.cm_conns(), 0u) << what;
    };
    // longer, nothing more comes: MPA timeout
    {
      SCOPED_TRACE("PD_Length 100, 40 bytes come");
      Hand h(b, n++);
      h.open();
      const uint64_t est = b.hal.now_cycles();
      h.establish();
      auto o = b.send(h.bytes(kAck | kPsh, h.rcv, h.snd, req_with(100, 40)));
      h.rcv += 60;
      expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, "partial request");
      // more of it, still short
      o = b.send(h.bytes(kAck | kPsh, h.rcv, h.snd, text_pd("more", 30)));
      h.rcv += 30;
      expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, "second part");
      EXPECT_EQ(b.dev.cm_conns(), 1u);
      // the MPA timer runs from the handshake ACK
      const uint64_t tmo = uint64_t{kMpaTimeoutTicks} * kTick;
      const uint64_t now = b.hal.now_cycles();
      ASSERT_LT(now - est, tmo);
      o = b.idle(tmo - (now - est) + kTick + 2 * kSweep + 500);
      ASSERT_EQ(o.tx.size(), 1u) << frames_text(o.tx);
      EXPECT_EQ(o.tx[0], h.ctrl(TcpCtrlKind::kRstAck, h.snd, h.rcv)) << "RST vs golden";
      EXPECT_TRUE(o.events.empty());
      expect_counts(o, {{"MPA_TIMEOUT", 1}, {"RST_TX", 1}, {"CLOSED", 1}}, "MPA timeout");
      EXPECT_EQ(b.dev.cm_conns(), 0u);
    }
    // longer, then a segment that goes past it
    {
      SCOPED_TRACE("PD_Length 50, 40 + 20 bytes come");
      Hand h(b, n++);
      h.open();
      h.establish();
      auto o = b.send(h.bytes(kAck | kPsh, h.rcv, h.snd, req_with(50, 40)));
      h.rcv += 60;
      expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, "partial request");
      o = b.send(h.bytes(kAck | kPsh, h.rcv, h.snd, text_pd("over", 20)));
      expect_mpa_error(h, o, h.rcv + 20, R::MpaError::TOO_LONG, "overshoot");
    }
    struct One {
      std::string name;
      std::vector<uint8_t> req;
      R::MpaError why;
    };
    auto enh_short = mpa_request_payload(2, true, ird_ord_word(1, 1), {});
    enh_short[19] = 2;  // PD_Length 2 < 4 (the IRD/ORD word)
    enh_short.resize(22);
    const std::vector<One> ones = {
        {"PD_Length 10, 30 bytes", req_with(10, 30), R::MpaError::TOO_LONG},
        {"PD_Length 0, 1 byte", req_with(0, 1), R::MpaError::TOO_LONG},
        {"PD_Length 513", req_with(513, 20), R::MpaError::PD_TOO_LONG},
        {"PD_Length 0xFFFF", req_with(0xFFFF, 20), R::MpaError::PD_TOO_LONG},
        {"PD_Length 512, 1400 bytes", req_with(512, 1380), R::MpaError::TOO_LONG},
        {"PD_Length 600, 1400 bytes", req_with(600, 1380), R::MpaError::PD_TOO_LONG},
        {"rev 2 enhanced, PD_Length 2", enh_short, R::MpaError::BAD_REV},
    };
    for (const auto& c : ones) {
      SCOPED_TRACE(c.name);
      Hand h(b, n++);
      h.open();
      h.establish();
      auto o = b.send(h.bytes(kAck | kPsh, h.rcv, h.snd, c.req));
      expect_mpa_error(h, o, h.rcv + static_cast<uint32_t>(c.req.size()), c.why, c.name);
    }
  });
}

// ------------------------------------------------------------------ RST / FIN at every state

enum class St {
  kSynRcvd,
  kEstablished,
  kMpaReqRcvd,
  kPeerReset,
  kRejSent,
  kFinWait1,
  kFinWait2,
  kClosing,
  kTimeWait,
  kLastAck
};
constexpr St kStates[] = {St::kSynRcvd,  St::kEstablished, St::kMpaReqRcvd, St::kPeerReset,
                          St::kRejSent,  St::kFinWait1,    St::kFinWait2,   St::kClosing,
                          St::kTimeWait, St::kLastAck};

const char* st_name(St s) {
  switch (s) {
    case St::kSynRcvd:
      return "SYN_RCVD";
    case St::kEstablished:
      return "ESTABLISHED";
    case St::kMpaReqRcvd:
      return "MPAREQ_RCVD";
    case St::kPeerReset:
      return "PEER_RESET";
    case St::kRejSent:
      return "REJ_SENT";
    case St::kFinWait1:
      return "FIN_WAIT1";
    case St::kFinWait2:
      return "FIN_WAIT2";
    case St::kClosing:
      return "CLOSING";
    case St::kTimeWait:
      return "TIME_WAIT";
    case St::kLastAck:
      return "LAST_ACK";
  }
  return "?";
}

void PrintTo(St s, std::ostream* os) { *os << st_name(s); }

R::CmState hw_state(St s) {
  switch (s) {
    case St::kSynRcvd:
      return R::CmState::SYN_RCVD;
    case St::kEstablished:
      return R::CmState::ESTABLISHED;
    case St::kMpaReqRcvd:
      return R::CmState::MPAREQ_RCVD;
    case St::kPeerReset:
      return R::CmState::PEER_RESET;
    case St::kRejSent:
      return R::CmState::REJ_SENT;
    case St::kFinWait1:
      return R::CmState::FIN_WAIT1;
    case St::kFinWait2:
      return R::CmState::FIN_WAIT2;
    case St::kClosing:
      return R::CmState::CLOSING;
    case St::kTimeWait:
      return R::CmState::TIME_WAIT;
    case St::kLastAck:
      return R::CmState::LAST_ACK;
  }
  return R::CmState::SYN_RCVD;
}

// Drives h into `s`, checking every frame on the way.
void drive(Hand& h, St s) {
  h.open();
  if (s == St::kSynRcvd) return;
  h.establish();
  if (s == St::kEstablished) return;
  h.request();
  if (s == St::kMpaReqRcvd) return;
  Bench& b = h.b;
  if (s == St::kPeerReset) {
    auto o = b.send(h.bytes(kRst | kAck, h.rcv, h.acked));
    EXPECT_TRUE(o.tx.empty());
    ASSERT_EQ(o.events.size(), 1u);
    EXPECT_TRUE(std::holds_alternative<bouncer::PeerReset>(o.events[0]));
    expect_counts(o, {{"RST_RX", 1}, {"EVENTS", 1}}, "RST while held");
    return;
  }
  if (s == St::kRejSent || s == St::kLastAck) {
    h.reject(R::FinPolicy::SIW_SAFE);
    if (s == St::kRejSent) return;
    // FIN|ACK acknowledging the reject: our FIN (acknowledging theirs), LAST_ACK
    auto o = b.send(h.bytes(kFin | kAck, h.rcv, h.snd));
    h.rcv += 1;
    h.acked = h.snd;
    expect_answer(o, {h.ctrl(TcpCtrlKind::kFinAck, h.snd, h.rcv)}, {{"FIN_TX", 1}},
                  "FIN acknowledging the reject");
    h.snd += 1;
    h.ipid++;
    return;
  }
  h.reject(R::FinPolicy::IRDMA);  // reject + FIN: FIN_WAIT1
  if (s == St::kFinWait1) return;
  if (s == St::kClosing) {
    // their FIN, not acknowledging ours: ACK, CLOSING
    auto o = b.send(h.bytes(kFin | kAck, h.rcv, h.acked));
    h.rcv += 1;
    expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, "simultaneous FIN");
    return;
  }
  // ACK of reject + FIN: FIN_WAIT2
  expect_dropped(b.send(h.bytes(kAck, h.rcv, h.snd)), {}, "ACK of reject + FIN");
  h.acked = h.snd;
  if (s == St::kFinWait2) return;
  auto o = b.send(h.bytes(kFin | kAck, h.rcv, h.acked));
  h.rcv += 1;
  expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, "their FIN: TIME_WAIT");
}

enum class Hit { kRstExact, kRstNotExact, kRstOutOfWindow, kFinInWindow, kFinOutOfWindow };
constexpr Hit kHits[] = {Hit::kRstExact, Hit::kRstNotExact, Hit::kRstOutOfWindow, Hit::kFinInWindow,
                         Hit::kFinOutOfWindow};
const char* hit_name(Hit h) {
  switch (h) {
    case Hit::kRstExact:
      return "RST at RCV_NXT";
    case Hit::kRstNotExact:
      return "RST at RCV_NXT + 1";
    case Hit::kRstOutOfWindow:
      return "RST at RCV_NXT + 65536";
    case Hit::kFinInWindow:
      return "FIN at RCV_NXT";
    case Hit::kFinOutOfWindow:
      return "FIN at RCV_NXT + 65536";
  }
  return "?";
}

using StateParam = std::tuple<unsigned, St>;

class HostileState : public ::testing::TestWithParam<StateParam> {};

// For one state: a fresh connection per input (RST exact / not exact, FIN in / out of
// window), driven into the state, hit, checked (frames, counters, events, node state), then
// ended (exact RST, or the host's reject for a held request) with CM_CONNS back to 0.
TEST_P(HostileState, RstAndFin) {
  const auto [width, st] = GetParam();
  sim::Platform plat(platform_config(width, /*pcap=*/false));
  with_cm(plat, hostile_config(), [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    {
      Bench b(plat, hal, dev, cm);
      unsigned n = 50;
      for (Hit hit : kHits) {
        const std::string what = std::string(st_name(st)) + ", " + hit_name(hit);
        SCOPED_TRACE(what);
        Hand h(b, n++);
        drive(h, st);
        if (::testing::Test::HasFatalFailure()) return;
        if (h.cm_id) h.expect_node(hw_state(st));
        ASSERT_EQ(dev.cm_conns(), 1u);
        const bool hosted = st != St::kSynRcvd && st != St::kEstablished;
        const bool rejected = hosted && st != St::kMpaReqRcvd && st != St::kPeerReset;
        const bool fin_in = st == St::kClosing || st == St::kTimeWait || st == St::kLastAck;
        St after = st;       // the state the frame leaves the connection in
        bool freed = false;  // ... or the connection is gone
        switch (hit) {
          case Hit::kRstExact: {
            auto o = b.send(h.bytes(kRst | kAck, h.rcv, h.acked));
            if (st == St::kPeerReset) {
              expect_dropped(o, {{"OOW", 1}}, what);
            } else if (st == St::kMpaReqRcvd) {
              EXPECT_TRUE(o.tx.empty());
              ASSERT_EQ(o.events.size(), 1u);
              EXPECT_TRUE(std::holds_alternative<bouncer::PeerReset>(o.events[0]));
              expect_counts(o, {{"RST_RX", 1}, {"EVENTS", 1}}, what);
              after = St::kPeerReset;
            } else {
              EXPECT_TRUE(o.tx.empty()) << frames_text(o.tx);
              EXPECT_TRUE(o.events.empty());
              if (rejected) {
                EXPECT_EQ(o.terminals, std::vector<R::AeqEvent>{R::AeqEvent::RESET});
                expect_counts(o, {{"RST_RX", 1}, {"CLOSED", 1}, {"EVENTS", 1}}, what);
              } else {
                EXPECT_TRUE(o.terminals.empty());
                expect_counts(o, {{"RST_RX", 1}, {"CLOSED", 1}}, what);
              }
              freed = true;
            }
            break;
          }
          case Hit::kRstNotExact: {
            // in the window but not exact: a challenge ACK (RFC 5961 3.2), the node stays
            auto o = b.send(h.bytes(kRst | kAck, h.rcv + 1, h.acked));
            if (st == St::kPeerReset) {
              expect_dropped(o, {{"OOW", 1}}, what);
            } else {
              expect_answer(o, {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}}, what);
            }
            break;
          }
          case Hit::kRstOutOfWindow:
            expect_dropped(b.send(h.bytes(kRst | kAck, h.rcv + 0x10000, h.acked)), {{"OOW", 1}},
                           what);
            break;
          case Hit::kFinInWindow: {
            // in SYN_RCVD the only acceptable ACK is the SYN-ACK's: the FIN|ACK completes
            // the handshake, and a FIN before the request ends it with a RST
            const uint32_t ack = st == St::kSynRcvd ? h.snd : h.acked;
            auto o = b.send(h.bytes(kFin | kAck, h.rcv, ack));
            if (st == St::kPeerReset) {
              expect_dropped(o, {{"OOW", 1}}, what);
            } else if (st == St::kSynRcvd || st == St::kEstablished) {
              expect_answer(o, {h.ctrl(TcpCtrlKind::kRstAck, h.snd, h.rcv + 1)},
                            st == St::kSynRcvd
                                ? std::map<std::string, uint64_t>{{"CONN_ESTABLISHED", 1},
                                                                  {"RST_TX", 1},
                                                                  {"CLOSED", 1}}
                                : std::map<std::string, uint64_t>{{"RST_TX", 1}, {"CLOSED", 1}},
                            what);
              freed = true;
            } else if (fin_in) {
              // a second FIN after theirs: sequence space after a FIN is not taken
              expect_answer(o, {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}}, what);
            } else {
              h.rcv += 1;
              expect_answer(o, {h.ack_now()}, {{"ACK_TX", 1}}, what);
              if (st == St::kFinWait1) after = St::kClosing;
              if (st == St::kFinWait2) after = St::kTimeWait;
            }
            break;
          }
          case Hit::kFinOutOfWindow: {
            auto o = b.send(h.bytes(kFin | kAck, h.rcv + 0x10000, h.acked));
            if (st == St::kPeerReset) {
              expect_dropped(o, {{"OOW", 1}}, what);
            } else {
              expect_answer(o, {h.ack_now()}, {{"OOW", 1}, {"ACK_TX", 1}}, what);
            }
            break;
          }
        }
        if (::testing::Test::HasFatalFailure()) return;
        if (freed) {
          EXPECT_EQ(dev.cm_conns(), 0u) << what;
          continue;
        }
        EXPECT_EQ(dev.cm_conns(), 1u) << what;
        if (h.cm_id) h.expect_node(hw_state(after));
        // end it
        if (after == St::kPeerReset) {
          auto r = cm.reject(h.handle, {});
          ASSERT_FALSE(r.ok());
          EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(R::CqMinor::PEER_RESET));
        } else if (after == St::kMpaReqRcvd) {
          RejectOptions opt;
          opt.fin_policy = R::FinPolicy::ABORT;
          ASSERT_TRUE(cm.reject(h.handle, {}, opt).ok());
        } else {
          auto o = b.send(h.bytes(kRst | kAck, h.rcv, h.acked));
          EXPECT_TRUE(o.tx.empty()) << frames_text(o.tx);
          if (rejected) {
            EXPECT_EQ(o.terminals, std::vector<R::AeqEvent>{R::AeqEvent::RESET});
          }
        }
        b.idle(1500);
        EXPECT_EQ(dev.cm_conns(), 0u) << what << ": not freed";
      }
      EXPECT_EQ(cm.stats().unexpected_events, 0u);
    }
    if (::testing::Test::HasFatalFailure()) return;
    still_works(plat, hal, dev, cm, 200);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
  });
}

std::string state_param_name(const ::testing::TestParamInfo<StateParam>& info) {
  return "w" + std::to_string(std::get<0>(info.param)) + "_" + st_name(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Width, HostileState,
                         ::testing::Combine(::testing::Values(64u, 512u),
                                            ::testing::ValuesIn(kStates)),
                         state_param_name);

// ------------------------------------------------------------------ SYN flood

uint32_t rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32 - n)); }

// The connection table's bucket of a tuple under HASH_KEY `key` (rtl/cm/bouncer_conn_table.sv;
// the same equations as tb/unit/test_rtl_conn_table.cpp's model).
uint32_t bucket_of(uint32_t rem_ip, uint32_t loc_ip, uint16_t rem_port, uint16_t loc_port,
                   uint32_t key = kHashKey) {
  constexpr unsigned bucket_log2 = 8;  // 1024 entries, 4 ways
  uint32_t a0 = rem_ip ^ key;
  uint32_t b0 = loc_ip ^ rotl(key, 16);
  uint32_t c0 = ((uint32_t{rem_port} << 16) | loc_port) ^ rotl(key, 8) ^ 0x9E3779B9u;
  uint32_t a1 = a0 + b0;
  uint32_t c1 = c0 ^ rotl(a1, 7);
  uint32_t b1 = b0 + c1;
  uint32_t a2 = a1 ^ rotl(b1, 13);
  uint32_t c2 = c1 + a2;
  uint32_t x = c2 ^ rotl(b1, 17);
  uint32_t idx = 0;
  for (unsigned i = 0; i < 32; ++i) idx ^= ((x >> i) & 1u) << (i % bucket_log2);
  return idx;
}

// More distinct SYNs than the table holds. First five SYNs that hash to one bucket: four get
// a SYN-ACK, the fifth is dropped (bucket full, STAT_SYN_DROP_FULL) while cm_ids are free.
// Then SYNs that fill every other bucket to its four ways (1024 nodes: every cm_id taken),
// then 100 more: all dropped (no cm_id, STAT_SYN_DROP_FULL), no answer, no RX overflow.
// With RTX_MAX 0 every node gives up at its first RTO (nothing sent, STAT_RTX_EXHAUSTED):
// the table drains to 0 and a normal connection works.
TEST_P(Hostile, SynFloodBeyondTheTable) {
  auto dc = hostile_config();
  dc.timers->rtx_max = 0;
  run(
      [&](Bench& b) {
        struct Syn {
          uint32_t ip;
          uint16_t port;
        };
        std::vector<Syn> accepted, dropped;
        std::vector<unsigned> fill(256, 0);
        unsigned k = 0;
        auto next = [&]() {
          Syn s{0x0A800000u | (k >> 4), static_cast<uint16_t>(1024 + (k & 15) * 3000 + k % 7)};
          ++k;
          return s;
        };
        // phase A: one bucket
        const uint32_t b0 = bucket_of(0x0A800000u, kLocalIp, 1024, kPort);
        while (accepted.size() + dropped.size() < 5) {
          Syn s = next();
          if (bucket_of(s.ip, kLocalIp, s.port, kPort) != b0) continue;
          (fill[b0] < 4 ? accepted : dropped).push_back(s);
          ++fill[b0];
        }
        // phase B: every other bucket to 4 ways
        while (accepted.size() < 1024) {
          Syn s = next();
          const uint32_t bk = bucket_of(s.ip, kLocalIp, s.port, kPort);
          if (fill[bk] >= 4) continue;
          ++fill[bk];
          accepted.push_back(s);
        }
        // phase C: 100 more
        for (int i = 0; i < 100; ++i) dropped.push_back(next());
        std::vector<Syn> order(accepted.begin(), accepted.begin() + 4);
        order.push_back(dropped[0]);
        order.insert(order.end(), accepted.begin() + 4, accepted.end());
        order.insert(order.end(), dropped.begin() + 1, dropped.end());
        ASSERT_EQ(order.size(), 1125u);

        const Stats before = b.stats();
        const uint64_t t0 = b.hal.now_cycles() + 10;
        const uint64_t gap = 100;
        for (size_t i = 0; i < order.size(); ++i) {
          Frame f;
          f.src_mac = {
              0x02, 0x00, 0x00, 0x0f, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
          f.src_ip = order[i].ip;
          f.sport = order[i].port;
          f.seq = 0x1234'0000u + static_cast<uint32_t>(i);
          f.flags = kSyn;
          f.tcp_opts = kSynOpts;
          b.plat.inject_rx(build(f), t0 + i * gap);
        }
        b.hal.wait_cycles(order.size() * gap + 3000);
        EXPECT_EQ(b.dev.cm_conns(), 1024u) << "the table is not full after the flood";
        auto o = b.idle(10);
        o.rx = order.size();
        Stats delta;
        const Stats after = b.stats();
        for (const auto& [key, v] : after) delta[key] = v - before.at(key);
        o.delta = delta;
        // every accepted tuple got exactly one SYN-ACK, no dropped one any
        std::map<std::pair<uint32_t, uint16_t>, unsigned> got;
        for (const auto& f : o.tx) {
          auto s = decode(f);
          ASSERT_TRUE(s && s->flags == (kSyn | kAck) && s->src_ip == kLocalIp);
          got[{s->dst_ip, s->dport}]++;
        }
        EXPECT_EQ(got.size(), 1024u);
        for (const auto& s : accepted) EXPECT_EQ((got[{s.ip, s.port}]), 1u);
        for (const auto& s : dropped) EXPECT_EQ(got.count({s.ip, s.port}), 0u);
        expect_counts(o, {{"SYN_DROP_FULL", 101}}, "flood");
        // the table drains: every node gives up at its RTO (no frame, no event)
        const uint64_t rto = uint64_t{kHostileRtoTicks} * kTick;
        auto d = b.idle(rto + order.size() * gap + 4 * kSweep);
        EXPECT_EQ(b.dev.cm_conns(), 0u);
        expect_dropped(d, {{"RTX_EXHAUSTED", 1024}, {"CLOSED", 1024}}, "drain");
      },
      dc);
}

// An attacker who knows the bucket-hash key aims SYNs at one bucket: with that key loaded,
// 8 tuples of one bucket get 4 SYN-ACKs (its 4 ways) and 4 drops. With another key loaded by
// the host (HASH_KEY, taken at open's CTRL.RESET) the same 8 tuples spread over buckets and
// all 8 are answered: the key decides, and without it the flood is no better than random.
// (One Platform per process: one test per key.)
constexpr uint32_t kOtherHashKey = 0x3C6EF372u;

void aim_syns_at_one_bucket(Hostile& t, uint32_t loaded_key) {
  // 8 tuples in one bucket under kHashKey that no bucket holds more than 4 of under the other
  struct Syn {
    uint32_t ip;
    uint16_t port;
  };
  std::vector<Syn> aimed;
  const uint32_t target = bucket_of(0x0A900000u, kLocalIp, 2000, kPort);
  std::map<uint32_t, unsigned> spread;
  for (uint32_t k = 0; aimed.size() < 8; ++k) {
    const Syn s{0x0A900000u | (k >> 6), static_cast<uint16_t>(2000 + (k & 63) * 17)};
    if (bucket_of(s.ip, kLocalIp, s.port, kPort) != target) continue;
    const uint32_t other = bucket_of(s.ip, kLocalIp, s.port, kPort, kOtherHashKey);
    if (spread[other] == 4) continue;
    ++spread[other];
    aimed.push_back(s);
  }
  ASSERT_GT(spread.size(), 1u) << "the tuples collide under both keys";
  auto dc = hostile_config();
  dc.hash_key = loaded_key;
  t.run(
      [&](Bench& b) {
        std::vector<std::vector<uint8_t>> syns;
        for (size_t i = 0; i < aimed.size(); ++i) {
          Frame f;
          f.src_mac = {0x02, 0x00, 0x00, 0x0e, 0x00, static_cast<uint8_t>(i)};
          f.src_ip = aimed[i].ip;
          f.sport = aimed[i].port;
          f.seq = 0x5150'0000u + static_cast<uint32_t>(i);
          f.flags = kSyn;
          f.tcp_opts = kSynOpts;
          syns.push_back(build(f));
        }
        auto o = b.send(syns, 4000);
        size_t synacks = 0;
        for (const auto& fr : o.tx) {
          auto s = decode(fr);
          ASSERT_TRUE(s && s->flags == (kSyn | kAck));
          ++synacks;
        }
        const size_t want = loaded_key == kHashKey ? 4 : 8;
        EXPECT_EQ(synacks, want);
        EXPECT_EQ(b.dev.cm_conns(), want);
        expect_counts(o,
                      loaded_key == kHashKey ? std::map<std::string, uint64_t>{{"SYN_DROP_FULL", 4}}
                                             : std::map<std::string, uint64_t>{},
                      "aimed at one bucket");
      },
      dc);
}

TEST_P(Hostile, SynsAimedAtOneBucketFillItUnderTheKnownKey) {
  aim_syns_at_one_bucket(*this, kHashKey);
}

TEST_P(Hostile, SynsAimedAtOneBucketSpreadUnderTheHostsKey) {
  aim_syns_at_one_bucket(*this, kOtherHashKey);
}

// ------------------------------------------------------------------ other MACs, IPs, ports

// Frames not meant for a listener:
//  - with CM_ROUTE.PROMISC 0 (PORT_MAC = kLocalMac): a group destination MAC (broadcast,
//    multicast) or another host's unicast MAC, TCP or not: STAT_RX_FILTERED; with PROMISC 1
//    the other host's unicast MAC is taken as ours;
//  - other EtherTypes (ARP, IPv6) and other IP protocols (UDP, ICMP): STAT_RX_NOT_TCP (a
//    malformed ARP frame also STAT_ARP_DROPPED);
//  - a SYN to our address on a port without a listener: RST|ACK seq 0, ack SEQ + 1
//    (STAT_SYN_NO_LISTENER); the same to another address: answered from that address while
//    PORT_IP is 0 (the core then knows no addresses but its listeners'); with PORT_IP set,
//    every segment to another address is STAT_RX_FILTERED and a SYN to PORT_IP still answered;
//  - ACK / data / FIN to a listening port without a node: RST|ACK seq = SEG.ACK;
//  - RSTs, segments without ACK, and non-SYNs to ports without a listener: STAT_RX_STRAY.
TEST_P(Hostile, OtherMacsIpsAndPorts) {
  auto dc = hostile_config();
  dc.tcp->promisc = false;
  dc.tcp->port_mac = kLocalMac;
  run(
      [&](Bench& b) {
        Hand h(b, 60);
        // group MACs
        for (const auto& [name, mac] : std::vector<std::pair<std::string, std::array<uint8_t, 6>>>{
                 {"broadcast", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
                 {"IPv4 multicast", {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}},
                 {"any group bit", {0x03, 0xbb, 0xcc, 0xdd, 0xee, 0x01}}}) {
          auto syn = h.seg(kSyn, h.isn, 0);
          syn.dst_mac = mac;
          expect_dropped(b.send(build(syn), 600), {{"RX_FILTERED", 1}}, "SYN to " + name);
        }
        // the unicast MAC of another host (one bit away from ours): SYN, ACK, RST, ARP
        const std::array<uint8_t, 6> other_mac = {0x02, 0xbb, 0xcc, 0xdd, 0xee, 0x03};
        for (uint8_t flags : {kSyn, kAck, uint8_t(kRst | kAck)}) {
          auto f = h.seg(flags, h.isn, 0x5555'0000);
          f.dst_mac = other_mac;
          expect_dropped(b.send(build(f), 600), {{"RX_FILTERED", 1}},
                         "flags " + std::to_string(flags) + " to another host's MAC");
        }
        auto arp_other = h.seg(kSyn, h.isn, 0);
        arp_other.dst_mac = other_mac;
        arp_other.ethertype = 0x0806;
        expect_dropped(b.send(build(arp_other), 600), {{"RX_FILTERED", 1}, {"ARP_DROPPED", 1}},
                       "ARP to another host's MAC");
        // promiscuous: the other host's MAC is taken as ours (the SYN-ACK comes from the
        // listener's MAC); the initiator resets it
        {
          auto tcp = *dc.tcp;
          tcp.promisc = true;
          ASSERT_TRUE(b.dev.set_tcp(tcp).ok());
          Hand u(b, 61);
          u.base.dst_mac = other_mac;
          u.open();
          expect_dropped(b.send(u.bytes(kRst, u.rcv, 0)), {{"RST_RX", 1}, {"CLOSED", 1}},
                         "RST after the SYN to another MAC, promiscuous");
          ASSERT_TRUE(b.dev.set_tcp(*dc.tcp).ok());
          EXPECT_EQ(b.dev.read_tcp(), *dc.tcp);
        }
        // not IPv4/TCP
        auto arp = h.seg(kSyn, h.isn, 0);
        arp.ethertype = 0x0806;
        // (a malformed ARP body: the ARP responder drops and counts it too)
        expect_dropped(b.send(build(arp), 600), {{"RX_NOT_TCP", 1}, {"ARP_DROPPED", 1}}, "ARP");
        auto v6 = h.seg(kSyn, h.isn, 0);
        v6.ethertype = 0x86DD;
        expect_dropped(b.send(build(v6), 600), {{"RX_NOT_TCP", 1}}, "IPv6");
        for (uint8_t proto : {uint8_t{17}, uint8_t{1}, uint8_t{0}}) {
          auto u = h.seg(kSyn, h.isn, 0);
          u.proto = proto;
          expect_dropped(b.send(build(u), 600), {{"RX_NOT_TCP", 1}},
                         "IP protocol " + std::to_string(proto));
        }
        EXPECT_EQ(b.dev.cm_conns(), 0u);

        // SYN to our address, another port: RST|ACK <SEQ=0><ACK=SEG.SEQ+1>
        auto rst_for = [&](const Frame& f, uint32_t seq, uint32_t ack) {
          Expect e = h.ex;
          e.peer.peer_ip = f.dst_ip;
          e.peer.peer_port = f.dport;
          e.loc_mac = f.dst_mac;
          e.ttl = 64;
          e.tos = f.tos;
          e.peer_ws = false;  // no node, no window scaling: TCP_WND as is
          return e.ctrl(TcpCtrlKind::kRstAck, seq, ack, 0);
        };
        auto syn_port = h.seg(kSyn, h.isn, 0);
        syn_port.dport = kPort + 7;
        expect_answer(b.send(build(syn_port)), {rst_for(syn_port, 0, h.isn + 1)},
                      {{"SYN_NO_LISTENER", 1}, {"RST_TX", 1}}, "SYN to another port");
        // SYN to another address on the listening port
        auto syn_ip = h.seg(kSyn, h.isn, 0);
        syn_ip.dst_ip = kLocalIp + 5;
        expect_answer(b.send(build(syn_ip)), {rst_for(syn_ip, 0, h.isn + 1)},
                      {{"SYN_NO_LISTENER", 1}, {"RST_TX", 1}}, "SYN to another address");
        // the same with the IP filter on (PORT_IP = ours): not for us, nothing sent
        {
          auto tcp = *dc.tcp;
          tcp.port_ip = kLocalIp;
          ASSERT_TRUE(b.dev.set_tcp(tcp).ok());
          for (uint8_t flags : {kSyn, kAck, uint8_t(kRst | kAck), uint8_t(kFin | kAck)}) {
            auto f = h.seg(flags, h.isn, 0x5555'0000);
            f.dst_ip = kLocalIp + 5;
            expect_dropped(b.send(build(f), 600), {{"RX_FILTERED", 1}},
                           "flags " + std::to_string(flags) + " to another IP, PORT_IP set");
          }
          expect_answer(b.send(build(syn_port)), {rst_for(syn_port, 0, h.isn + 1)},
                        {{"SYN_NO_LISTENER", 1}, {"RST_TX", 1}},
                        "SYN to PORT_IP on another port, PORT_IP set");
          EXPECT_EQ(b.dev.read_tcp(), tcp);
          ASSERT_TRUE(b.dev.set_tcp(*dc.tcp).ok());
        }
        // ACK / data / FIN to the listening port without a node
        auto ack = h.seg(kAck, h.isn + 1, 0x5555'0000);
        expect_answer(b.send(build(ack)), {rst_for(ack, 0x5555'0000, h.isn + 1)}, {{"RST_TX", 1}},
                      "stray ACK");
        auto data = h.seg(kAck | kPsh, h.isn + 1, 0x5555'0000, text_pd("stray", 10));
        expect_answer(b.send(build(data)), {rst_for(data, 0x5555'0000, h.isn + 11)},
                      {{"RST_TX", 1}}, "stray data");
        auto fin = h.seg(kFin | kAck, h.isn + 1, 0x5555'0000);
        expect_answer(b.send(build(fin)), {rst_for(fin, 0x5555'0000, h.isn + 2)}, {{"RST_TX", 1}},
                      "stray FIN");
        // dropped, STAT_RX_STRAY: RST, no-ACK segments, non-SYNs to unlistened ports
        expect_dropped(b.send(h.bytes(kRst | kAck, h.isn + 1, 0)), {{"RX_STRAY", 1}}, "stray RST");
        expect_dropped(b.send(h.bytes(kPsh, h.isn + 1, 0, text_pd("x", 4))), {{"RX_STRAY", 1}},
                       "stray segment without ACK");
        auto other = h.seg(kAck, h.isn + 1, 0x5555'0000);
        other.dport = kPort + 7;
        expect_dropped(b.send(build(other)), {{"RX_STRAY", 1}}, "ACK to a port without a listener");
        EXPECT_EQ(b.dev.cm_conns(), 0u);
      },
      dc);
}

INSTANTIATE_TEST_SUITE_P(Width, Hostile, ::testing::Values(64u, 512u), width_name);

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
