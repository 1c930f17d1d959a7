// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Soak: a seeded randomized co-simulation of many connections ("Soak"). The real
// driver (hostsw/) against the verilated bouncer_core in the co-simulation (sim/), with
// simulated initiators (sim/peer) on a wire that loses --loss % (default 5) of the frames in
// each direction.
//
//   soak [--seed S] [--connections N] [--width 64|512] [--gap CYCLES] [--loss PCT]
//        [--pcap FILE] [--failures FILE] [gtest flags]
//
// Everything random comes from --seed (the platform's TX-ready and DMA-jitter PRNG, the wire's
// loss PRNG and the plan below), so a seed reproduces a run exactly.
//
// Per connection (random): the host rejects the request at once (pipelined post_reject, random
// PD 0..512 bytes, random FIN policy); or the host holds it for a random time ("accept":
// Bouncer only rejects, so the nearest thing to accepting is an application that keeps the
// request while it decides, sometimes past the peer's own reply timeout, after which the peer
// resets it; the host then releases the cm_id with reject(), which completes with CTX/PEER_RESET
// when the peer's RST came first); or the request goes to an AUTO_REJECT ALL listener (the
// hardware rejects it with the template); or the peer resets the connection after the handshake
// or right after its request; or the peer never sends its request (Bouncer's MPA timer ends it).
// The run changes TX backpressure (m_axis_tx tready probability) and host-memory latency and
// jitter every 50 000 cycles. RX: s_axis_rx_tready is always 1 by design (the core drops whole
// frames when its FIFO is full), so RX pressure comes from the arrival pattern (wire delay per
// seed, peers starting GAP cycles apart with jitter, retransmissions).
//
// Invariants checked (every failure is listed; the run fails on any):
//  - every TX frame decodes as Ethernet/IPv4/TCP with good checksums, goes to a tuple of a peer
//    of this run, from the listener that peer called, after that tuple's first RX frame (no TX
//    frame for a tuple the core never saw);
//  - every TX frame is byte-identical to the golden model's frame (tb/golden) for its kind:
//    SYN-ACK (ISS plausible under the keyed hash, IP ID = ISS[31:16]), ACK, FIN|ACK, RST|ACK,
//    and the MPA reject with the PD the host posted (or the listener's template), the request's
//    revision/flags/IRD-ORD and the right SND/RCV sequence numbers; a reject only for a request
//    the host rejected (or the auto-reject listener's);
//  - every posted descriptor has exactly one completion (none missing, none twice, none unknown);
//  - every request the host saw is exactly what its peer sent; a peer that got a reject got the
//    planned PD; every node rejected by the host ends with exactly one terminal event;
//  - at the end the connection table is empty (CM_CONNS 0), the driver holds no node and waits
//    for no terminal event, and no event or frame comes during a linger period.
// A failure appends "seed ... : reproduce with: ..." to the failures file (default
// out/soak-failures.txt).
#include <gtest/gtest.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using golden::TcpCtrlKind;

struct Options {
  uint64_t seed = 1;
  unsigned connections = 20000;
  unsigned width = 64;
  uint64_t gap = 1600;  // mean cycles between two peers' starts (sustained by the core)
  unsigned loss = 5;    // % of frames lost on the wire, each direction
  std::string pcap;
  std::string failures = "out/soak-failures.txt";
  std::string command;  // how to reproduce this run
};
Options g_opt;

enum class Kind : uint8_t { kReject, kHold, kAuto, kRstAfterSynAck, kRstAfterRequest, kNoRequest };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kReject:
      return "reject";
    case Kind::kHold:
      return "hold";
    case Kind::kAuto:
      return "auto";
    case Kind::kRstAfterSynAck:
      return "rst-after-synack";
    case Kind::kRstAfterRequest:
      return "rst-after-request";
    case Kind::kNoRequest:
      return "no-request";
  }
  return "?";
}

struct Plan {
  Kind kind = Kind::kReject;
  uint64_t hold_cycles = 0;
};

// A peer number i: its own MAC, IP 10.0.(1 + i/250).(2 + i%250) (10.x.y.z beyond), port
// 1024 + i % 60000.
peer::InitiatorConfig soak_peer(unsigned i, uint16_t listen_port, std::mt19937_64& rng) {
  const uint8_t rev = (rng() % 3 == 0) ? 1 : 2;
  const size_t max_pd = 508;
  const size_t pd_len = (rng() % 10 == 0) ? rng() % (max_pd + 1) : rng() % 48;
  auto pc = peer_config(0, rev, rng() % 4 != 0, text_pd("soak peer " + std::to_string(i), pd_len),
                        listen_port);
  pc.mac = {0x02,
            0x00,
            static_cast<uint8_t>(i >> 16),
            0x01,
            static_cast<uint8_t>(i >> 8),
            static_cast<uint8_t>(i)};
  pc.ip = 0x0A000000u + ((1 + i / 250) << 8) + (2 + i % 250);
  pc.port = static_cast<uint16_t>(1024 + i % 60000);
  pc.isn = static_cast<uint32_t>(rng());
  pc.ip_id = static_cast<uint16_t>(rng());
  pc.ird_ord = ird_ord_word(1 + rng() % 64, 1 + rng() % 64);
  pc.request_segments = 1 + static_cast<unsigned>(rng() % 3);
  pc.rto_cycles = kRto + rng() % kRto;
  pc.max_retransmits = 6;
  pc.time_wait_cycles = 4 * kRto;
  // Linux's tcp_fin_timeout and Bouncer's FIN_TIMEOUT are both 60 s: the core's test value
  pc.fin_wait2_cycles = uint64_t{test_timers().fin_timeout} * kTick;
  pc.reply_timeout_cycles = 10 * kRto;
  pc.close_delay_cycles = (rng() % 4 == 0) ? rng() % 20000 : 0;
  pc.fin_after_reject = rng() % 8 != 0;
  return pc;
}

// The share (%) of well-behaved peers that must get their reject at `loss` % per direction
// with `connections` peers.
// A peer sends its request up to 7 times and the core its reject up to RTX_MAX + 1 times, so
// the reject is lost for good only when a whole run of transmissions is. What the bounds leave:
// rejects with FIN policy ABORT, sent once with the RST right behind them (about a third of the
// host's rejects, so about loss / 4 of the well-behaved peers), and requests that get through
// only after the peer's reply timeout because their segments found all MPA reassembly buffers
// taken (STAT_OOW): with 8 shared buffers that grows steeply with loss and load, a limit of
// the current CM engine. The bounds sit just under the shares measured at 300 and at 1000
// connections (docs/reliability.md "Soak").
unsigned liveness_bound(unsigned loss, unsigned connections) {
  const bool heavy = connections > 300;
  if (loss == 0) return 100;
  if (loss <= 5) return 95;  // measured 96.8 - 99.5 % over seeds 1-6, 64, 512 at 300
  if (loss <= 10) return heavy ? 75 : 95;
  return heavy ? 40 : 60;
}

struct Failures {
  std::vector<std::string> list;
  void add(const std::string& s) { list.push_back(s); }
};

using TupleKey = std::pair<uint32_t, uint16_t>;

TEST(Soak, Run) {
  const Options o = g_opt;
  std::mt19937_64 rng(o.seed);
  sim::PlatformConfig pc;
  pc.data_width = o.width;
  pc.pcap_path = o.pcap;
  pc.seed = o.seed;
  pc.wire_seed = o.seed * 0x9E3779B97F4A7C15ull + 1;
  pc.loss_to_bouncer = o.loss / 100.0;
  pc.loss_from_bouncer = o.loss / 100.0;
  pc.delay_to_bouncer = rng() % 400;
  pc.delay_from_bouncer = rng() % 400;
  pc.mem_latency_cycles = 200;
  pc.mem_latency_jitter = 50;
  const auto wall0 = std::chrono::steady_clock::now();

  const auto tmpl = text_pd("soak: this listener takes no connections", 41);
  const uint32_t tmpl_io = ird_ord_word(2, 3);
  std::map<Kind, unsigned> kinds;
  std::map<std::string, unsigned> peer_states;
  unsigned rejected_peers = 0;
  // liveness: the peers that behave (the host rejects at once, or the auto-reject listener
  // does) and how many of them got their reject
  unsigned behaving = 0, behaving_rejected = 0;
  Failures fail;
  uint64_t cycles = 0, first_start = 0;
  std::string stats;
  sim::PlatformStats ps;

  sim::Platform plat(pc);
  auto dc = device_config(8);
  dc.aeq_entries = 1024;
  dc.sq_entries = 256;
  dc.cq_entries = 256;
  // MPA_REASM_TIMEOUT scaled like the other timers. test_timers() leaves it at its reset tick
  // count, which is past MPA_TIMEOUT, so a request abandoned after its first piece (the
  // initiator's RST lies beyond the missing piece and only draws a challenge ACK) would keep
  // one of the shared reassembly buffers until MPA_TIMEOUT and starve the requests behind it.
  // Deployed, 2 s covers a Linux initiator's first three retransmissions of a lost piece
  // (RTO 200 ms after the handshake: 0.2, 0.6, 1.4 s); here 6 RTO_INIT covers a soak peer's
  // first two (RTO 1-2 RTO_INIT: at most 2 and 6 RTO_INIT after the piece).
  dc.timers->mpa_reasm_timeout = 6 * kRtoTicks;
  with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
    auto lo_host = listen_options();
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo_host).ok());
    const R::FinPolicy pols[3] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA, R::FinPolicy::ABORT};
    auto lo_auto = listen_options(pols[rng() % 2]);
    lo_auto.auto_reject = R::AutoReject::ALL;
    lo_auto.template_pd = to_bytes(tmpl);
    lo_auto.template_ird_ord = tmpl_io;
    auto la = cm.listen(kLocalIp, kPort2, lo_auto);
    ASSERT_TRUE(la.ok()) << la.error().message;

    Scenario sc(plat, hal, dev, cm);
    sc.pipelined = true;
    std::vector<Plan> plans;
    std::map<TupleKey, size_t> idx_of;
    using Release = std::pair<uint64_t, size_t>;
    std::priority_queue<Release, std::vector<Release>, std::greater<>> releases;
    first_start = hal.now_cycles() + 100;
    unsigned next = 0;
    uint64_t next_start = first_start;
    uint64_t next_knob = 0;
    const double readies[4] = {1.0, 0.9, 0.7, 0.5};
    const uint64_t latencies[4] = {0, 50, 200, 500};

    auto on_event = [&](const bouncer::Event& e) {
      sc.handle(e);
      if (const auto* cr = std::get_if<bouncer::ConnectRequest>(&e)) {
        auto it = idx_of.find({cr->tuple.remote_ip, cr->tuple.remote_port});
        if (it == idx_of.end()) return;
        const Conn& c = sc.conns[it->second];
        if (c.hold && c.requests.size() == 1 && !c.completion && !c.reject_error) {
          releases.push({hal.now_cycles() + plans[it->second].hold_cycles, it->second});
        }
      }
    };
    // Adds the peers that start within the next 20 000 cycles, releases held requests that
    // are due, turns the backpressure knobs; true when everything is over.
    auto step = [&]() {
      const uint64_t now = hal.now_cycles();
      while (next < o.connections && next_start <= now + 20'000) {
        const uint64_t r = rng() % 100;
        Plan p;
        p.kind = r < 55   ? Kind::kReject
                 : r < 70 ? Kind::kHold
                 : r < 85 ? Kind::kAuto
                 : r < 91 ? Kind::kRstAfterRequest
                 : r < 97 ? Kind::kRstAfterSynAck
                          : Kind::kNoRequest;
        p.hold_cycles = rng() % (15 * kRto);  // past the peer's reply timeout (10 RTO) at times
        auto cfg = soak_peer(next, p.kind == Kind::kAuto ? kPort2 : kPort, rng);
        using F = peer::InitiatorConfig::Fault;
        if (p.kind == Kind::kRstAfterSynAck) cfg.fault = F::kRstAfterSynAck;
        if (p.kind == Kind::kRstAfterRequest) cfg.fault = F::kRstAfterRequest;
        if (p.kind == Kind::kNoRequest) cfg.fault = F::kNoRequest;
        RejectOptions ro;
        ro.fin_policy = pols[rng() % 3];
        ro.wr_id = next;
        std::vector<std::byte> pd;
        if (p.kind == Kind::kAuto) {
          pd = to_bytes(tmpl);
          // the template's word where it fits this request, else the hardware's default
          if (cfg.mpa_rev == 2 && cfg.enhanced &&
              bouncer::check_reply_ird_ord(tmpl_io, cfg.ird_ord)) {
            ro.ird_ord = tmpl_io;
          }
        } else {
          const size_t max_pd = (cfg.mpa_rev == 2 && cfg.enhanced) ? 508 : 512;
          const size_t len = (rng() % 8 == 0) ? rng() % (max_pd + 1) : rng() % 64;
          pd = to_bytes(text_pd("soak says no #" + std::to_string(next), len));
        }
        const size_t k = sc.add(cfg, next_start, pd, ro);
        idx_of[{cfg.ip, cfg.port}] = k;
        sc.conns[k].hold = p.kind != Kind::kReject && p.kind != Kind::kRstAfterRequest;
        plans.push_back(p);
        ++kinds[p.kind];
        ++next;
        next_start += 1 + rng() % (2 * o.gap);
      }
      while (!releases.empty() && releases.top().first <= now) {
        Conn& c = sc.conns[releases.top().second];
        releases.pop();
        if (!c.completion && !c.reject_error) sc.reject(c);
      }
      if (now >= next_knob) {
        plat.set_tx_ready_prob(readies[rng() % 4]);
        plat.set_mem_latency(latencies[rng() % 4], rng() % 200);
        next_knob = now + 50'000;
      }
      return next == o.connections && releases.empty() && sc.settled();
    };
    const uint64_t budget = uint64_t{o.connections} * (2 * o.gap) + 40'000'000;
    const bool done = sc.pump(step, budget, on_event);
    if (!done) fail.add("not settled after " + std::to_string(budget) + " cycles: " + sc.status());
    // linger: nothing more may happen
    const size_t tx_before = plat.tx_frames().size();
    const auto unknown_before = sc.unknown.size();
    ASSERT_FALSE(sc.pump([] { return false; }, 4 * kRto, on_event));
    if (done && plat.tx_frames().size() != tx_before) {
      fail.add(std::to_string(plat.tx_frames().size() - tx_before) +
               " TX frames after the run had settled");
    }
    if (sc.unknown.size() != unknown_before) fail.add("events after the run had settled");
    cycles = hal.now_cycles();
    stats = stats_line(dev);
    expect_clean_end(sc);
    if (dev.cm_conns() != 0) fail.add("CM_CONNS " + std::to_string(dev.cm_conns()) + " at the end");

    // ---- frame checks
    std::map<TupleKey, size_t> by_tuple;
    for (size_t k = 0; k < sc.conns.size(); ++k) {
      by_tuple[{sc.conns[k].cfg.ip, sc.conns[k].cfg.port}] = k;
    }
    std::vector<uint64_t> first_rx(sc.conns.size(), UINT64_MAX);
    std::vector<std::vector<size_t>> rx_of(sc.conns.size());
    for (size_t i = 0; i < plat.rx_frames().size(); ++i) {
      const auto& f = plat.rx_frames()[i];
      auto s = decode(f.bytes);
      if (!s) continue;
      auto it = by_tuple.find({s->src_ip, s->sport});
      if (it == by_tuple.end()) continue;
      rx_of[it->second].push_back(i);
      if (first_rx[it->second] == UINT64_MAX) first_rx[it->second] = f.first_cycle;
    }
    std::vector<std::vector<size_t>> tx_of(sc.conns.size());
    const auto& txf = plat.tx_frames();
    for (size_t i = 0; i < txf.size(); ++i) {
      std::string why;
      auto s = decode(txf[i].bytes, &why);
      const std::string at =
          "TX frame " + std::to_string(i) + " (cycle " + std::to_string(txf[i].first_cycle) + ")";
      if (!s) {
        fail.add(at + " does not decode: " + why);
        continue;
      }
      if (!s->ip_csum_ok || !s->tcp_csum_ok) fail.add(at + " bad checksum: " + describe(*s));
      auto it = by_tuple.find({s->dst_ip, s->dport});
      if (it == by_tuple.end()) {
        fail.add(at + " for a tuple no peer of this run has: " + describe(*s));
        continue;
      }
      const Conn& c = sc.conns[it->second];
      if (s->src_ip != kLocalIp || s->sport != c.cfg.peer_port) {
        fail.add(at + " not from the peer's listener: " + describe(*s));
      }
      if (first_rx[it->second] >= txf[i].first_cycle) {
        fail.add(at + " before any frame from its tuple reached the core: " + describe(*s));
      }
      tx_of[it->second].push_back(i);
    }

    for (size_t k = 0; k < sc.conns.size(); ++k) {
      const Conn& c = sc.conns[k];
      const Plan& p = plans[k];
      const std::string who =
          ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + " (" + kind_name(p.kind) + ")";
      const auto& out = plat.peer(c.peer).outcome();
      ++peer_states[peer::to_string(out.state)];
      rejected_peers += out.rejected;
      if (p.kind == Kind::kReject || p.kind == Kind::kAuto) {
        ++behaving;
        behaving_rejected += out.rejected;
      }
      const bool enh = c.cfg.mpa_rev == 2 && c.cfg.enhanced;
      // the request and the host's side
      if (c.requests.size() > 1)
        fail.add(who + ": " + std::to_string(c.requests.size()) + " requests");
      if (p.kind == Kind::kAuto && !c.requests.empty())
        fail.add(who + ": request reached the host");
      if (!c.requests.empty()) {
        const auto& r = c.requests[0];
        if (to_u8(r.private_data) != c.cfg.private_data || r.rev != c.cfg.mpa_rev ||
            r.ird_ord != (enh ? std::optional<uint32_t>(c.cfg.ird_ord) : std::nullopt) ||
            r.tuple != bouncer::Tuple{c.cfg.peer_ip, c.cfg.peer_port, c.cfg.ip, c.cfg.port}) {
          fail.add(who + ": the request differs from what the peer sent");
        }
        if (!c.completion && !c.reject_error) fail.add(who + ": request never rejected");
        if (c.completion && c.terminals.size() != 1) {
          fail.add(who + ": " + std::to_string(c.terminals.size()) + " terminal events");
        }
        if (c.reject_error &&
            !(c.reject_error->hw_minor == static_cast<uint16_t>(R::CqMinor::PEER_RESET))) {
          fail.add(who + ": reject failed: " + c.reject_error->message);
        }
      }
      if (out.accepted) fail.add(who + ": the peer saw an accept");
      if (out.rejected && out.reject_pd != to_u8(c.reject_pd)) {
        fail.add(who + ": the peer got the wrong reject PD");
      }
      // every TX frame of the connection against the golden model
      Expect ex;
      ex.peer = c.cfg;
      ex.req_len = request_len(c.cfg);
      bool have_iss = false;
      for (size_t i : tx_of[k]) {
        const auto& f = txf[i];
        const auto s = *decode(f.bytes);
        const std::string at = who + " TX frame " + std::to_string(i) + " " + describe(s);
        if (s.flags == (kSyn | kAck)) {
          if (!have_iss || s.seq != ex.iss) {
            ex.iss = s.seq;
            ex.ip_id0 = s.ip_id;
            have_iss = true;
            if (!isn_plausible(ex.iss, c.cfg, 0, f.first_cycle)) fail.add(at + ": ISS not keyed");
            if (s.ip_id != static_cast<uint16_t>(ex.iss >> 16))
              fail.add(at + ": IP ID != ISS[31:16]");
          }
          if (f.bytes != ex.synack()) fail.add(at + ": SYN-ACK differs from golden");
          continue;
        }
        if (!have_iss) {
          fail.add(at + ": before any SYN-ACK");
          continue;
        }
        if (s.ip_id == 0 && s.flags == (kRst | kAck) && s.ttl == 64) {
          // RST|ACK for a segment that found no node (the node had ended): seq SEG.ACK, ack
          // SEG.SEQ + SEG.LEN (+1 for FIN), IP ID 0, TTL 64, the segment's TOS
          bool cause = false;
          for (size_t r : rx_of[k]) {
            const auto& rf = plat.rx_frames()[r];
            if (rf.last_cycle >= f.first_cycle) break;
            const auto rs = decode(rf.bytes);
            cause = cause || (rs && rs->has(kAck) && !rs->has(kRst) && !rs->has(kSyn) &&
                              rs->ack == s.seq && rs->seq + rs->seq_len() == s.ack);
          }
          if (!cause) fail.add(at + ": no-node RST|ACK without a segment that asks for it");
          Expect nx = ex;
          nx.ttl = 64;
          nx.tos = c.cfg.tos;
          nx.peer_ws = false;  // no node: no window scaling, TCP_WND as is
          if (f.bytes != nx.ctrl(TcpCtrlKind::kRstAck, s.seq, s.ack, 0)) {
            fail.add(at + ": no-node RST|ACK differs from golden\n    got  " + hex(f.bytes, 80) +
                     "\n    want " + hex(nx.ctrl(TcpCtrlKind::kRstAck, s.seq, s.ack, 0), 80));
          }
          continue;
        }
        if (static_cast<uint16_t>(s.ip_id - ex.ip_id0) > 8) fail.add(at + ": IP ID out of range");
        if (s.mpa_reply()) {
          if (p.kind == Kind::kAuto) {
            if (!c.requests.empty()) fail.add(at + ": auto-reject of a request the host saw");
          } else if (!c.completion || c.requests.empty() || f.first_cycle < c.event_cycle) {
            fail.add(at + ": a reject the host did not post");
          }
          auto rp = ex.reject_params(c.reject_pd, s.has(kFin), c.opts.ird_ord);
          rp.ip_id = s.ip_id;
          // a peer that gave up waiting (siw closes with a FIN after its reply timeout) may
          // have had its FIN taken before the host rejected: the reject acknowledges it
          if (s.ack == rp.rcv_nxt + 1) {
            bool fin_before = false;
            for (const auto& rf : plat.rx_frames()) {
              if (rf.last_cycle >= f.first_cycle) break;
              const auto rs = decode(rf.bytes);
              fin_before = fin_before || (rs && rs->src_ip == c.cfg.ip && rs->sport == c.cfg.port &&
                                          rs->has(kFin));
            }
            if (fin_before) rp.rcv_nxt = s.ack;
          }
          if (f.bytes != golden::build_mpa_reject_frame(rp)) {
            fail.add(at + ": reject differs from golden\n    got  " + hex(f.bytes, 600) +
                     "\n    want " + hex(golden::build_mpa_reject_frame(rp), 600));
          }
          continue;
        }
        TcpCtrlKind kind;
        if (s.flags == kAck) {
          kind = TcpCtrlKind::kAck;
        } else if (s.flags == (kFin | kAck)) {
          kind = TcpCtrlKind::kFinAck;
        } else if (s.flags == (kRst | kAck)) {
          kind = TcpCtrlKind::kRstAck;
        } else {
          fail.add(at + ": unexpected flags");
          continue;
        }
        if (!s.payload.empty()) fail.add(at + ": control segment with payload");
        if (s.seq - ex.iss > 1 + 20 + 512 + 4 + 1) fail.add(at + ": seq out of range");
        if (s.ack - c.cfg.isn - 1 > ex.req_len + 1) fail.add(at + ": ack out of range");
        if (f.bytes != ex.ctrl(kind, s.seq, s.ack, s.ip_id)) fail.add(at + ": differs from golden");
      }
    }
    ps = plat.stats();
  });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::string k, st;
  for (const auto& [kk, n] : kinds)
    k += std::string(kind_name(kk)) + " " + std::to_string(n) + ", ";
  for (const auto& [s, n] : peer_states) st += s + " " + std::to_string(n) + ", ";
  std::printf("[ soak     ] seed %" PRIu64 " width %u: %u connections (%s)\n", o.seed, o.width,
              o.connections, k.c_str());
  std::printf("[ soak     ] peer end states: %s%u peers got their reject\n", st.c_str(),
              rejected_peers);
  // Safety alone would pass a core that answers nothing: nearly every well-behaved peer must
  // get its reject (its retransmissions and ours cover the losses).
  const unsigned bound = liveness_bound(o.loss, o.connections);
  std::printf(
      "[ soak     ] liveness at %u %% loss: %u of %u well-behaved peers rejected (bound "
      "%u %%)\n",
      o.loss, behaving_rejected, behaving, bound);
  if (behaving == 0 || behaving_rejected * 100 < behaving * bound) {
    fail.add("liveness: " + std::to_string(behaving_rejected) + " of " + std::to_string(behaving) +
             " well-behaved peers were rejected (at least " + std::to_string(bound) +
             " % must be at " + std::to_string(o.loss) + " % loss)");
  }
  std::printf("[ soak     ] frames: %zu to Bouncer (%" PRIu64
              " lost on the wire), %zu from Bouncer (%" PRIu64 " lost)\n",
              plat.rx_frames().size(), ps.wire_dropped_to_bouncer, plat.tx_frames().size(),
              ps.wire_dropped_from_bouncer);
  std::printf("[ stats    ] %s\n", stats.c_str());
  std::printf("[ soak     ] %" PRIu64 " cycles, %.1f s wall: %.0f connections/s, %.0f cycles/s\n",
              cycles, wall, o.connections / wall, static_cast<double>(cycles) / wall);
  for (size_t i = 0; i < fail.list.size() && i < 40; ++i) {
    ADD_FAILURE() << fail.list[i];
  }
  EXPECT_TRUE(fail.list.empty()) << fail.list.size() << " invariant violations";
}

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  std::string cmd = argv[0];
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto val = [&](const char* name) -> const char* {
      if (a != name) return nullptr;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "soak: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (const char* v = val("--seed")) {
      g_opt.seed = std::strtoull(v, nullptr, 0);
    } else if (const char* v2 = val("--connections")) {
      g_opt.connections = static_cast<unsigned>(std::strtoul(v2, nullptr, 0));
    } else if (const char* v3 = val("--width")) {
      g_opt.width = static_cast<unsigned>(std::strtoul(v3, nullptr, 0));
    } else if (const char* v4 = val("--gap")) {
      g_opt.gap = std::max<uint64_t>(1, std::strtoull(v4, nullptr, 0));
    } else if (const char* v7 = val("--loss")) {
      g_opt.loss = static_cast<unsigned>(std::strtoul(v7, nullptr, 0));
      if (g_opt.loss > 20) {
        std::fprintf(stderr,
                     "soak: --loss %u: at most 20 (%% per direction; the liveness "
                     "bounds are measured up to 20)\n",
                     g_opt.loss);
        std::exit(2);
      }
    } else if (const char* v5 = val("--pcap")) {
      g_opt.pcap = v5;
    } else if (const char* v6 = val("--failures")) {
      g_opt.failures = v6;
    } else if (a == "--help" || a == "-h") {
      std::printf(
          "soak [--seed S] [--connections N] [--width 64|512] [--gap CYCLES] [--loss PCT]\n"
          "     [--pcap FILE] [--failures FILE] [gtest flags]\n");
      return 0;
    } else {
      rest.push_back(argv[i]);
    }
  }
  g_opt.command = cmd + " --seed " + std::to_string(g_opt.seed) + " --connections " +
                  std::to_string(g_opt.connections) + " --width " + std::to_string(g_opt.width) +
                  " --gap " + std::to_string(g_opt.gap) + " --loss " + std::to_string(g_opt.loss);
  int n = static_cast<int>(rest.size());
  ::testing::InitGoogleTest(&n, rest.data());
  const int rc = RUN_ALL_TESTS();
  if (rc != 0 && !g_opt.failures.empty()) {
    const auto dir = std::filesystem::path(g_opt.failures).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    std::ofstream f(g_opt.failures, std::ios::app);
    f << "seed " << g_opt.seed << " width " << g_opt.width << " connections " << g_opt.connections
      << ": FAILED; reproduce with: " << g_opt.command << "\n";
    std::fprintf(stderr, "soak: seed %" PRIu64 " failed, recorded in %s\n", g_opt.seed,
                 g_opt.failures.c_str());
  }
  return rc;
}
