// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Passive-CM system tests at scale: 1000 connections in flight at once with random host
// decisions (64-bit build), and an auto-reject listener under a SYN storm while the host
// keeps rejecting another listener's requests. Helpers: system_fixture.hpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;

// 1000 initiators start within 100k cycles (the table holds 1024 cm_ids in 4-way buckets:
// a SYN whose bucket is full is dropped and retried by its initiator); the host answers every
// request with a random PD (0..512 bytes) and FIN policy, rejects pipelined. Every peer ends
// rejected with its PD on the wire; the initiators take turns being siw, irdma and cxgb4,
// and each application gets what its kernel makes of the reject: the rejects a personality
// cannot deliver intact (PD_Length past its limit or u8, siw and a FIN in the reject segment)
// are declared expected losses and counted. The peak table occupancy, cycles and wall time
// are reported.
TEST(SystemCmScale, ThousandConnectionsW64) {
  const auto cfg = platform_config(64);
  constexpr unsigned kN = 1000;
  PcapWants wants;
  const auto wall0 = std::chrono::steady_clock::now();
  uint64_t cycles = 0, first_start = 0, last_end = 0;
  uint32_t peak_conns = 0;
  {
    sim::Platform plat(cfg);
    auto dc = device_config(8);
    dc.timers->mpa_timeout = 8'000'000 / kTick;  // requests may wait behind the storm
    dc.aeq_entries = 1024;
    dc.sq_entries = 256;
    dc.cq_entries = 256;
    with_cm(plat, dc, [&](bouncer::hal::Device& hal, Device& dev, Cm& cm) {
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
      Scenario sc(plat, hal, dev, cm);
      sc.pipelined = true;
      std::mt19937_64 rng(2024);
      const R::FinPolicy pols[3] = {R::FinPolicy::SIW_SAFE, R::FinPolicy::IRDMA,
                                    R::FinPolicy::ABORT};
      first_start = hal.now_cycles() + 100;
      std::map<std::string, unsigned> lost;
      for (unsigned i = 0; i < kN; ++i) {
        const uint8_t rev = (rng() & 1) ? 2 : 1;
        const peer::Personality pers = kPersonalities[i % 3];
        auto pc = peer_config(i, rev, (rng() % 4) != 0,
                              text_pd("peer " + std::to_string(i), rng() % 64), kPort, pers);
        pc.rto_cycles = kRto;
        pc.max_retransmits = 12;
        pc.reply_timeout_cycles = 50'000'000;
        pc.time_wait_cycles = 4 * kRto;
        const size_t max_pd = (rev == 2 && pc.enhanced) ? 508 : 512;
        const size_t len = (rng() % 8 == 0) ? rng() % (max_pd + 1) : rng() % 64;
        RejectOptions o;
        o.fin_policy = pols[rng() % 3];
        o.wr_id = i;
        const auto pd = text_pd("no #" + std::to_string(i), len);
        const size_t k = sc.add(pc, first_start + 100 * i, to_bytes(pd), o);
        const AppWant w = app_for_reject(pc, pd, o.fin_policy == R::FinPolicy::IRDMA,
                                         golden::default_reply_ird_ord(pc.ird_ord));
        sc.conns[k].expect_lost = !delivered_intact(w, pd);
        if (sc.conns[k].expect_lost) ++lost[peer::to_string(pers)];
      }
      // Phase 1: hold every request (the host decides nothing) until all 1000 are held or
      // no new one came for 300k cycles (a SYN whose bucket is full waits for a free way);
      // phase 2: reject them all, pipelined, then everything that comes later at once.
      for (auto& c : sc.conns) c.hold = true;
      size_t held = 0;
      uint64_t last_new = hal.now_cycles();
      ASSERT_TRUE(sc.pump(
          [&] {
            size_t n = 0;
            for (const auto& c : sc.conns) n += !c.requests.empty();
            if (n != held) last_new = hal.now_cycles();
            held = n;
            return held == kN || hal.now_cycles() - last_new > 300'000;
          },
          30'000'000));
      peak_conns = dev.cm_conns();
      std::printf("[ scale    ] phase 1: %zu requests held at once at cycle %" PRIu64
                  ", CM_CONNS %u\n",
                  held, hal.now_cycles() - first_start, peak_conns);
      for (auto& c : sc.conns) {
        c.hold = false;
        if (!c.requests.empty()) sc.reject(c);
      }
      unsigned polls = 0;
      const bool ok = sc.pump(
          [&] {
            if (++polls % 16 == 0) peak_conns = std::max(peak_conns, dev.cm_conns());
            return sc.settled();
          },
          60'000'000);
      ASSERT_TRUE(ok) << sc.status();
      last_end = hal.now_cycles();
      unsigned bad = 0, rejected = 0;
      std::map<std::string, unsigned> ends;
      for (const auto& c : sc.conns) {
        const std::string p = sc.problems(c);
        if (!p.empty() && ++bad <= 5) {
          ADD_FAILURE() << p << "\n" << dump(transcript(plat, c.cfg.ip, c.cfg.port));
        }
        rejected += plat.peer(c.peer).outcome().rejected;
        ++ends[peer::to_string(plat.peer(c.peer).outcome().state)];
      }
      EXPECT_EQ(bad, 0u) << "connections not rejected as planned (first 5 shown)";
      EXPECT_EQ(rejected, kN);
      EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), kN);
      EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), kN);
      EXPECT_EQ(reg(hal, R::reg::STAT_MPA_TIMEOUT), 0u);
      expect_clean_end(sc);
      std::printf("[ scale    ] peer end states:");
      for (const auto& [k, v] : ends) std::printf(" %s %u", k.c_str(), v);
      std::printf("; rejects the application cannot get intact:");
      for (const auto& [k, v] : lost) std::printf(" %s %u", k.c_str(), v);
      std::printf("; peak CM_CONNS %u\n[ stats    ] %s\n", peak_conns, stats_line(dev).c_str());
      wants = pcap_wants(sc);
    });
    cycles = plat.cycles();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::printf("[ scale    ] %u connections: %" PRIu64
                " cycles from the first SYN to the "
                "last close (%.2f ms at 250 MHz), %" PRIu64
                " simulated in all, %.2f s wall "
                "(%.0f cycles/s), %zu frames to Bouncer, %zu from Bouncer\n",
                kN, last_end - first_start, static_cast<double>(last_end - first_start) / 250e3,
                cycles, wall, wall > 0 ? static_cast<double>(cycles) / wall : 0.0,
                plat.rx_frames().size(), plat.tx_frames().size());
    RecordProperty("simulated_cycles", std::to_string(cycles));
    RecordProperty("wall_seconds", std::to_string(wall));
    RecordProperty("peak_cm_conns", std::to_string(peak_conns));
  }
  check_pcap(cfg.pcap_path, wants, /*every=*/false);
}

// ------------------------------------------------------------------ auto-reject storm

class SystemCmScale : public ::testing::TestWithParam<unsigned> {};
class SystemCmScalePeer : public ::testing::TestWithParam<WidthPersonality> {};

// Listener A (AUTO_REJECT ALL, a PD template and a template IRD/ORD word) flooded by 150
// initiators 20 cycles apart; listener B's 20 requests go to the host, which rejects them
// meanwhile. Every peer ends rejected with the right PD; STAT_REJECT_AUTO counts A's. The
// initiators take turns being siw, irdma and cxgb4; A's IRDMA policy (reject + FIN) costs
// the siw ones the PD: asserted.
TEST_P(SystemCmScale, AutoRejectStormWithHostRejects) {
  constexpr unsigned kAuto = 150, kHost = 20;
  CmTest ct{.cfg = platform_config(GetParam()), .listen = std::nullopt};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm, Scenario& sc) {
    const auto tmpl = text_pd("listener policy: no connections here", 40);
    const uint32_t tmpl_io = ird_ord_word(2, 3);
    auto alo = listen_options(R::FinPolicy::IRDMA);
    alo.auto_reject = R::AutoReject::ALL;
    alo.template_pd = to_bytes(tmpl);
    alo.template_ird_ord = tmpl_io;
    auto la = cm.listen(kLocalIp, kPort2, alo);
    ASSERT_TRUE(la.ok()) << la.error().message;
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    std::mt19937_64 rng(GetParam());
    const uint64_t t0 = hal.now_cycles() + 100;
    for (unsigned i = 0; i < kAuto + kHost; ++i) {
      const bool host = i % ((kAuto + kHost) / kHost) == 0 && i / 8 < kHost;
      const uint8_t rev = (rng() & 1) ? 2 : 1;
      const peer::Personality pers = kPersonalities[i % 3];
      auto pc = peer_config(i, rev, true, text_pd("storm #" + std::to_string(i), rng() % 48),
                            host ? kPort : kPort2, pers);
      pc.time_wait_cycles = 4 * kRto;
      RejectOptions o;
      std::vector<std::byte> pd;
      if (host) {
        pd = to_bytes(text_pd("host says no #" + std::to_string(i), 1 + rng() % 80));
      } else {
        pd = to_bytes(tmpl);  // what the peer must get
        if (rev == 2) o.ird_ord = tmpl_io;
      }
      const size_t k = sc.add(pc, t0 + 20 * i, pd, o);
      sc.conns[k].hold = !host;  // a request event for an A peer would be a bug
      sc.conns[k].expect_lost = !host && pers == peer::Personality::kSiw;
    }
    ASSERT_TRUE(sc.settle(8'000'000)) << sc.status();
    unsigned n_host = 0, n_auto = 0;
    for (const auto& c : sc.conns) {
      SCOPED_TRACE(ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + "\n" +
                   dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (c.cfg.peer_port == kPort) {
        ++n_host;
        expect_request_matches(c);
        EXPECT_EQ(c.terminals.size(), 1u);
      } else {
        ++n_auto;
        EXPECT_TRUE(c.requests.empty()) << "auto-rejected request reached the host";
        EXPECT_TRUE(c.terminals.empty());
        ct.wants[{c.cfg.ip, c.cfg.port}] = {tmpl, c.cfg.mpa_rev == 2 && c.cfg.enhanced};
      }
    }
    EXPECT_EQ(n_host, kHost);
    EXPECT_EQ(n_auto, kAuto);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), kAuto);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), kHost);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), kAuto + kHost);
    EXPECT_EQ(cm.stats().requests, kHost);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    expect_clean_end(sc);
    for (const auto& [k, v] : pcap_wants(sc)) ct.wants[k] = v;
  });
}

// AUTO_REJECT IRD_ORD: rev-2 enhanced requests asking for more IRD or ORD than the listener's
// MAX_IRD / MAX_ORD are rejected by hardware with the template; the others (and rev 1) go
// to the host. Every initiator personality takes both kinds of reject (irdma checks the
// reply's IRD/ORD word against its own IRD).
TEST_P(SystemCmScalePeer, AutoRejectIrdOrd) {
  const auto [width, pers] = GetParam();
  const auto tmpl = text_pd("too many reads", 14);
  auto lo = listen_options();
  lo.auto_reject = R::AutoReject::IRD_ORD;
  lo.max_ird = 16;
  lo.max_ord = 8;
  lo.template_pd = to_bytes(tmpl);
  CmTest ct{.cfg = platform_config(width), .listen = lo};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device&, Cm&, Scenario& sc) {
    struct Ask {
      uint8_t rev;
      unsigned ird, ord;
      bool auto_rej;
    };
    const Ask asks[] = {{2, 16, 8, false}, {2, 17, 8, true},   {2, 16, 9, true},
                        {2, 1, 1, false},  {1, 64, 64, false}, {2, 0x3FFF, 0x3FFF, true}};
    unsigned i = 0;
    for (const auto& a : asks) {
      auto pc = peer_config(i, a.rev, true, text_pd("ird/ord", 9), kPort, pers);
      pc.ird_ord = ird_ord_word(a.ird, a.ord);
      std::vector<std::byte> pd = a.auto_rej ? to_bytes(tmpl) : to_bytes(text_pd("host", 4));
      const size_t k = sc.add(pc, hal.now_cycles() + 100 + 3000 * i, pd);
      sc.conns[k].hold = a.auto_rej;  // an event for these would be a bug
      ++i;
    }
    ASSERT_TRUE(sc.settle(2'000'000)) << sc.status();
    unsigned n_auto = 0;
    for (unsigned k = 0; k < sc.conns.size(); ++k) {
      const Conn& c = sc.conns[k];
      SCOPED_TRACE("ird " + std::to_string(asks[k].ird) + " ord " + std::to_string(asks[k].ord) +
                   "\n" + dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (asks[k].auto_rej) {
        ++n_auto;
        EXPECT_TRUE(c.requests.empty());
        ct.wants[{c.cfg.ip, c.cfg.port}] = {tmpl, true};
      } else {
        expect_request_matches(c);
      }
    }
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), n_auto);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), sc.conns.size() - n_auto);
    expect_clean_end(sc);
    for (const auto& [k, v] : pcap_wants(sc)) ct.wants[k] = v;
  });
}

// BACKLOG 2 with AUTO_REJECT BACKLOG: while two requests wait for the host, further
// connections are accepted and auto-rejected with the template; once the host rejected its
// two, the next request reaches the host again. Without auto-reject (BACKLOG 1), a SYN over
// the backlog is dropped (STAT_SYN_DROP_BACKLOG) and its initiator's retransmission is
// served after the host's reject.
TEST_P(SystemCmScale, BacklogAutoRejectAndSynDrop) {
  const auto tmpl = text_pd("busy, try later", 15);
  auto lo = listen_options();
  lo.backlog = 2;
  lo.auto_reject = R::AutoReject::BACKLOG;
  lo.template_pd = to_bytes(tmpl);
  CmTest ct{.cfg = platform_config(GetParam()), .listen = lo};
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm, Scenario& sc) {
    auto lo2 = listen_options();
    lo2.backlog = 1;
    ASSERT_TRUE(cm.listen(kLocalIp, kPort2, lo2).ok());
    const uint64_t t0 = hal.now_cycles() + 100;
    // listener 1: two held by the host, three over the backlog
    for (unsigned i = 0; i < 5; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("backlog", 7));
      const bool over = i >= 2;
      const size_t k =
          sc.add(pc, t0 + 4000 * i, over ? to_bytes(tmpl) : to_bytes(text_pd("host #", 6 + i)));
      sc.conns[k].hold = true;
    }
    // listener 2: one held, one whose SYN is dropped until then
    for (unsigned i = 5; i < 7; ++i) {
      auto pc = peer_config(i, 1, false, text_pd("backlog 1", 9), kPort2);
      const size_t k = sc.add(pc, t0 + 4000 * i, to_bytes(text_pd("later", 5)));
      sc.conns[k].hold = true;
    }
    // wait for: requests of peers 0, 1, 5 held; 2..4 auto-rejected and finished; 6 waiting
    ASSERT_TRUE(sc.pump(
        [&] {
          return !sc.conns[0].requests.empty() && !sc.conns[1].requests.empty() &&
                 !sc.conns[5].requests.empty() && plat.peer(sc.conns[2].peer).finished() &&
                 plat.peer(sc.conns[3].peer).finished() && plat.peer(sc.conns[4].peer).finished();
        },
        2'000'000))
        << sc.status();
    hal.wait_cycles(20'000);
    EXPECT_TRUE(sc.conns[6].requests.empty()) << "request over the backlog reached the host";
    EXPECT_GE(reg(hal, R::reg::STAT_SYN_DROP_BACKLOG), 1u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 3u);
    for (unsigned i : {0u, 1u, 5u}) {
      sc.conns[i].hold = false;
      sc.reject(sc.conns[i]);
    }
    // a sixth initiator on listener 1 after the host's rejects: the host sees it
    const size_t late = sc.add(peer_config(7, 2, true, text_pd("after", 5)), hal.now_cycles() + 10,
                               to_bytes(text_pd("host again", 10)));
    sc.conns[6].hold = false;
    ASSERT_TRUE(sc.settle(3'000'000)) << sc.status();
    for (unsigned k = 0; k < sc.conns.size(); ++k) {
      const Conn& c = sc.conns[k];
      SCOPED_TRACE("peer " + std::to_string(k) + "\n" +
                   dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (k >= 2 && k <= 4) {
        EXPECT_TRUE(c.requests.empty());
        ct.wants[{c.cfg.ip, c.cfg.port}] = {tmpl, true};
      } else {
        expect_request_matches(c);
      }
    }
    EXPECT_FALSE(sc.conns[late].requests.empty());
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 3u);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), 5u);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    expect_clean_end(sc);
    for (const auto& [k, v] : pcap_wants(sc)) ct.wants[k] = v;
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCmScale, ::testing::Values(64u, 512u), width_name);
INSTANTIATE_TEST_SUITE_P(WidthPersonality, SystemCmScalePeer,
                         ::testing::Combine(::testing::Values(64u, 512u),
                                            ::testing::ValuesIn(kPersonalities)),
                         width_personality_name);

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
