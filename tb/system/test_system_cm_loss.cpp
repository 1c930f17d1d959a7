// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Passive-CM system tests, loss in each direction: a dropped reject, SYN-ACK or handshake
// ACK (the wire's scripted drop hook), random loss on both wires with several seeds, and a
// peer that goes silent after its request (RTX_MAX retransmissions on the RTO schedule,
// then RST and RTX_EXHAUSTED). Helpers: system_fixture.hpp. One process per TEST.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;
using golden::TcpCtrlKind;

class SystemCmLoss : public ::testing::TestWithParam<unsigned> {};
class SystemCmLossPeer : public ::testing::TestWithParam<WidthPersonality> {};

// A timer expiry is seen between its deadline's tick boundary and one scanner sweep later,
// and the deadline is rounded to the tick: retransmission gaps are the RTO within one tick +
// one sweep (+ a few cycles of job). The first retransmission of a reject also re-reads the
// PD from host memory (the original may have been inline): `extra` allows for that.
void expect_gap(uint64_t gap, uint64_t rto, const std::string& what, uint64_t extra = 0) {
  const uint64_t slack = kTick + kSweep + 64;
  EXPECT_GE(gap + slack, rto) << what << ": gap " << gap << " vs RTO " << rto;
  EXPECT_LE(gap, rto + slack + extra) << what << ": gap " << gap << " vs RTO " << rto;
  std::printf("[ rto      ] %-34s gap %7" PRIu64 " cycles, RTO %7" PRIu64 " (%+" PRId64 ")\n",
              what.c_str(), gap, rto, static_cast<int64_t>(gap) - static_cast<int64_t>(rto));
}

std::vector<const WireSeg*> rejects_of(const std::vector<WireSeg>& t) {
  std::vector<const WireSeg*> v;
  for (const auto& w : t) {
    if (!w.to_bouncer && w.seg.mpa_reply()) v.push_back(&w);
  }
  return v;
}

// ------------------------------------------------------------------ scripted drops

// The first reject of each connection is lost on the way to the peer: Bouncer sends it again
// after RTO_INIT, byte for byte (SIW_SAFE: reject alone; IRDMA: reject + FIN), and the peer
// still ends rejected with the host's PD and a clean close (cxgb4: its RST; siw loses the PD
// of the reject + FIN: asserted).
TEST_P(SystemCmLossPeer, DropFirstReject) {
  const auto [width, pers] = GetParam();
  CmTest ct{.cfg = platform_config(width)};
  std::set<std::pair<uint32_t, uint16_t>> dropped;
  ct.drop = [&](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != sim::Direction::kFromBouncer) return false;
    auto s = decode(f);
    if (!s || !s->mpa_reply()) return false;
    return dropped.insert({s->dst_ip, s->dport}).second;
  };
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    const R::FinPolicy pol[2] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA};
    const size_t pd[2] = {24, 100};  // inline, and from the PD area
    for (unsigned i = 0; i < 2; ++i) {
      RejectOptions o;
      o.fin_policy = pol[i];
      const size_t k = sc.add(peer_config(i, 2, true, text_pd("lossy", 30), kPort, pers),
                              hal.now_cycles() + 100 + 4000 * i,
                              to_bytes(text_pd("reject, take two", pd[i])), o);
      sc.conns[k].expect_lost = pers == peer::Personality::kSiw && pol[i] == R::FinPolicy::IRDMA;
    }
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    for (unsigned i = 0; i < 2; ++i) {
      const Conn& c = sc.conns[i];
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE(std::string("policy ") + R::name(pol[i]) + "\n" + dump(t));
      expect_request_matches(c);
      expect_rejected_as_planned(sc, c);
      const auto rej = rejects_of(t);
      ASSERT_EQ(rej.size(), 2u);
      EXPECT_EQ(rej[0]->bytes, rej[1]->bytes) << "retransmission not byte-identical";
      EXPECT_EQ(rej[0]->seg.has(kFin), pol[i] == R::FinPolicy::IRDMA);
      expect_gap(rej[1]->first - rej[0]->first, kRto, std::string("reject rtx, ") + R::name(pol[i]),
                 600);
      // nothing else from Bouncer between the two (no FIN before the reject is ACKed)
      for (const auto& w : t) {
        if (!w.to_bouncer && w.first > rej[0]->first && w.first < rej[1]->first) {
          ADD_FAILURE() << "frame between the reject and its retransmission: " << describe(w.seg);
        }
      }
      const auto& o = plat.peer(c.peer).outcome();
      EXPECT_EQ(o.state,
                peer_resets_after_reject(pers, pol[i]) ? peer::State::kAborted : peer::State::kDone)
          << o.error;
      EXPECT_EQ(c.terminals, std::vector<R::AeqEvent>{expected_terminal(pers, pol[i])});
    }
    ASSERT_EQ(plat.dropped_frames().size(), 2u);
    for (const auto& d : plat.dropped_frames()) EXPECT_TRUE(d.scripted);
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 2u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 2u);
    expect_clean_end(sc);
    ct.wants = pcap_wants(sc);
  });
}

// The SYN-ACK is lost: Bouncer's own RTO sends it again (the peer's SYN RTO is 3x longer),
// byte-identical, and the connection goes on.
TEST_P(SystemCmLoss, DropSynAck) {
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.drop = drop_first(sim::Direction::kFromBouncer,
                       [](const Seg& s) { return s.flags == (kSyn | kAck); });
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    run_one(sc, peer_config(0, 1, false, text_pd("again?", 6)), to_bytes(text_pd("no", 2)),
            2'000'000, 0, [&](const Conn& c, const std::vector<WireSeg>& t) {
              std::vector<const WireSeg*> sa;
              size_t syns = 0;
              for (const auto& w : t) {
                if (!w.to_bouncer && w.seg.flags == (kSyn | kAck)) sa.push_back(&w);
                if (w.to_bouncer && w.seg.flags == kSyn) ++syns;
              }
              EXPECT_EQ(syns, 1u) << "the peer should not have needed to resend its SYN";
              ASSERT_EQ(sa.size(), 2u);
              EXPECT_EQ(sa[0]->bytes, sa[1]->bytes) << "SYN-ACK retransmission not byte-identical";
              expect_gap(sa[1]->first - sa[0]->first, kRto, "SYN-ACK rtx");
              EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kDone);
              EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 1u);
              EXPECT_EQ(reg(hal, R::reg::STAT_SYN_DUP), 0u);
              EXPECT_EQ(reg(hal, R::reg::STAT_CONN_ESTABLISHED), 1u);
              expect_clean_end(sc);
              ct.wants = pcap_wants(sc);
            });
  });
}

// The handshake ACK is lost: the request segment (which carries the same ACK) completes the
// handshake; no SYN-ACK retransmission, one ConnectRequest.
TEST_P(SystemCmLoss, DropHandshakeAck) {
  CmTest ct{.cfg = platform_config(GetParam())};
  ct.drop = drop_first(sim::Direction::kToBouncer, [](const Seg& s) { return s.bare(kAck); });
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    run_one(sc, peer_config(0, 2, true, text_pd("no handshake ack", 48)),
            to_bytes(text_pd("rejected anyway", 15)), 2'000'000, 0,
            [&](const Conn& c, const std::vector<WireSeg>& t) {
              ASSERT_GE(t.size(), 4u);
              EXPECT_TRUE(t[0].to_bouncer && t[0].seg.flags == kSyn);
              EXPECT_TRUE(!t[1].to_bouncer && t[1].seg.flags == (kSyn | kAck));
              EXPECT_TRUE(t[2].to_bouncer && t[2].seg.mpa_request())
                  << "the request follows the SYN";
              EXPECT_EQ(t[2].seg.ack, t[1].seg.seq + 1);
              size_t synacks = 0;
              for (const auto& w : t) synacks += !w.to_bouncer && w.seg.flags == (kSyn | kAck);
              EXPECT_EQ(synacks, 1u);
              ASSERT_EQ(plat.dropped_frames().size(), 1u);
              EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kDone);
              EXPECT_EQ(reg(hal, R::reg::STAT_CONN_ESTABLISHED), 1u);
              EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 0u);
              EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), 1u);
              expect_clean_end(sc);
              ct.wants = pcap_wants(sc);
            });
  });
}

// ------------------------------------------------------------------ random loss

// 10% loss on both wires, several seeds: every connection still ends with its peer rejected
// (the host's PD) and the table empty. FIN policies SIW_SAFE and IRDMA (ABORT sends its
// reject once by design: a lost ABORT reject is not recovered); the initiators take turns
// being siw, irdma and cxgb4 (siw loses the PD of a reject + FIN: asserted).
class SystemCmRandomLoss : public ::testing::TestWithParam<std::tuple<unsigned, uint64_t>> {};

TEST_P(SystemCmRandomLoss, EveryPeerRejected) {
  const auto [width, seed] = GetParam();
  // a lost request is not in the capture: the heuristic may not decode that conversation
  CmTest ct{.cfg = platform_config(width), .dc = device_config(8), .every = false};
  ct.cfg.loss_to_bouncer = 0.10;
  ct.cfg.loss_from_bouncer = 0.10;
  ct.cfg.wire_seed = seed;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm&, Scenario& sc) {
    std::mt19937_64 rng(seed * 7919);
    const unsigned n = 20;
    for (unsigned i = 0; i < n; ++i) {
      const uint8_t rev = (rng() & 1) ? 2 : 1;
      const peer::Personality pers = kPersonalities[i % 3];
      auto pc = peer_config(i, rev, true, text_pd("lossy #" + std::to_string(i), rng() % 120),
                            kPort, pers);
      pc.request_segments = 1 + static_cast<unsigned>(rng() % 3);
      pc.time_wait_cycles = 5 * kRto;  // re-ACKs a retransmitted FIN of ours
      pc.max_retransmits = 10;
      RejectOptions o;
      o.fin_policy = (rng() & 1) ? R::FinPolicy::IRDMA : R::FinPolicy::SIW_SAFE;
      const auto rej = text_pd("no #" + std::to_string(i), rng() % 64);
      const size_t k = sc.add(pc, hal.now_cycles() + 100 + 1500 * i, to_bytes(rej), o);
      sc.conns[k].expect_lost =
          pers == peer::Personality::kSiw && o.fin_policy == R::FinPolicy::IRDMA && !rej.empty();
    }
    ASSERT_TRUE(sc.settle(12'000'000)) << sc.status();
    size_t closed = 0;
    for (const auto& c : sc.conns) {
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE(dump(t));
      expect_request_matches(c);
      expect_rejected_as_planned(sc, c);
      // one terminal event per rejected node, whichever way it ended
      EXPECT_EQ(c.terminals.size(), 1u);
      closed += !c.terminals.empty() && c.terminals[0] == R::AeqEvent::CLOSED;
      // every reject frame of a connection is the same bytes
      const auto rej = rejects_of(t);
      ASSERT_FALSE(rej.empty());
      for (const auto* r : rej) EXPECT_EQ(r->bytes, rej[0]->bytes);
    }
    const auto ps = plat.stats();
    std::printf("[ loss     ] seed %" PRIu64 ": %" PRIu64 " + %" PRIu64
                " frames lost, %zu of %u closed with CLOSED, %" PRIu64 " cycles\n",
                seed, ps.wire_dropped_to_bouncer, ps.wire_dropped_from_bouncer, closed, n,
                plat.cycles());
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    EXPECT_GT(ps.wire_dropped_to_bouncer + ps.wire_dropped_from_bouncer, 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), n);
    expect_clean_end(sc);
    ct.wants = pcap_wants(sc);
  });
}

INSTANTIATE_TEST_SUITE_P(WidthSeed, SystemCmRandomLoss,
                         ::testing::Combine(::testing::Values(64u, 512u),
                                            ::testing::Values(1ull, 2ull, 3ull)),
                         [](const auto& info) {
                           return "w" + std::to_string(std::get<0>(info.param)) + "_seed" +
                                  std::to_string(std::get<1>(info.param));
                         });

// ------------------------------------------------------------------ silent peer

// Everything the peer sends after its request is lost: the reject (SIW_SAFE; and reject +
// FIN for IRDMA) goes out 1 + RTX_MAX times, the gaps doubling from RTO_INIT and capped at
// RTO_MAX, then a RST; the driver consumes RTX_EXHAUSTED. The IRDMA policy's initiator is
// irdma (siw would answer the reject + FIN with RST: the PD lost).
TEST_P(SystemCmLoss, SilentPeerRtxExhausted) {
  constexpr uint8_t kRtxMax = 4;
  constexpr uint32_t kRtoMaxTicks = 4 * kRtoTicks;
  CmTest ct{.cfg = platform_config(GetParam()), .dc = device_config(kRtxMax)};
  ct.dc.timers->rto_max = kRtoMaxTicks;
  std::map<std::pair<uint32_t, uint16_t>, bool> past_request;
  ct.drop = [&](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != sim::Direction::kToBouncer) return false;
    auto s = decode(f);
    if (!s) return false;
    bool& past = past_request[{s->src_ip, s->sport}];
    if (past) return true;
    if (s->mpa_request()) past = true;
    return false;
  };
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm& cm, Scenario& sc) {
    const R::FinPolicy pol[2] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA};
    for (unsigned i = 0; i < 2; ++i) {
      RejectOptions o;
      o.fin_policy = pol[i];
      auto pc = peer_config(
          i, 2, true, text_pd("then silence", 20), kPort,
          pol[i] == R::FinPolicy::IRDMA ? std::optional(peer::Personality::kIrdma) : std::nullopt);
      pc.max_retransmits = 20;  // it keeps trying (in vain) until our RST
      sc.add(pc, hal.now_cycles() + 100 + 3000 * i, to_bytes(text_pd("are you there?", 40)), o);
    }
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    for (unsigned i = 0; i < 2; ++i) {
      const Conn& c = sc.conns[i];
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE(std::string("policy ") + R::name(pol[i]) + "\n" + dump(t));
      expect_request_matches(c);
      expect_rejected_as_planned(sc, c);
      const auto rej = rejects_of(t);
      ASSERT_EQ(rej.size(), 1u + kRtxMax);
      for (const auto* r : rej) EXPECT_EQ(r->bytes, rej[0]->bytes);
      const auto tx = tx_only(t);
      ASSERT_FALSE(tx.empty());
      const WireSeg& rst = *tx.back();
      ASSERT_TRUE(rst.seg.has(kRst)) << "the last frame must be the RST";
      // the schedule: RTO_INIT << k, capped at RTO_MAX, then the RST after the last one
      for (unsigned k = 1; k <= kRtxMax; ++k) {
        const uint64_t rto = std::min<uint64_t>(kRto << (k - 1), uint64_t{kTick} * kRtoMaxTicks);
        expect_gap(rej[k]->first - rej[k - 1]->first, rto,
                   std::string(R::name(pol[i])) + " rtx " + std::to_string(k), k == 1 ? 600 : 0);
      }
      expect_gap(rst.first - rej[kRtxMax]->first,
                 std::min<uint64_t>(kRto << kRtxMax, uint64_t{kTick} * kRtoMaxTicks),
                 std::string(R::name(pol[i])) + " RST", 0);
      // RST|ACK at the sequence after the reject (+FIN), golden bytes
      Expect ex;
      ex.peer = c.cfg;
      ex.req_len = request_len(c.cfg);
      ex.iss = tx[0]->seg.seq;
      ex.ip_id0 = tx[0]->seg.ip_id;
      EXPECT_EQ(rst.bytes, ex.ctrl(TcpCtrlKind::kRstAck, rej[0]->seg.end(), ex.rcv_after_request(),
                                   static_cast<uint16_t>(ex.ip_id0 + 2)))
          << "RST vs golden";
      // only rejects between the first reject and the RST
      for (const auto* w : tx) {
        if (w->first > rej[0]->first && w != &rst) {
          EXPECT_TRUE(w->seg.mpa_reply()) << describe(w->seg);
        }
      }
      EXPECT_EQ(c.terminals, std::vector<R::AeqEvent>{R::AeqEvent::RTX_EXHAUSTED});
      EXPECT_EQ(plat.peer(c.peer).outcome().state, peer::State::kReset);
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX), 2u * kRtxMax);
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX_EXHAUSTED), 2u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_TX), 2u);
    EXPECT_EQ(cm.stats().terminal.rtx_exhausted, 2u);
    expect_clean_end(sc);
    ct.wants = pcap_wants(sc);
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCmLoss, ::testing::Values(64u, 512u), width_name);
INSTANTIATE_TEST_SUITE_P(WidthPersonality, SystemCmLossPeer,
                         ::testing::Combine(::testing::Values(64u, 512u),
                                            ::testing::ValuesIn(kPersonalities)),
                         width_personality_name);

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
