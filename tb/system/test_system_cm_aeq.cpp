// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A host that stops polling cannot stop the CM (AEQ admission, bouncer_cm_engine): the
// engine hands a request to the host only while the AEQ has room for it, its terminal event
// and every terminal event already owed. Requests beyond that get the listener's AEQ-full
// policy (auto-reject with the template, or a RST) while the host sleeps, and every
// connection the host was promised still ends with its event once it polls again.
// Helpers: system_fixture.hpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "system_fixture.hpp"

namespace {

using namespace systest;

class SystemCmAeq : public ::testing::TestWithParam<unsigned> {};

constexpr uint32_t kAeqEntries = 16;  // holds 15 events

// 4 requests are held by the host; then the host stops polling and 30 initiators connect.
// The AEQ takes exactly as many new requests as leave room for every owed terminal event
// (15 free, 4 owed: 5 more, each taking one slot and owing one); the other 25 are
// auto-rejected with the template and close while the host still sleeps. Then the host
// polls again and rejects what it holds: every node ends with exactly one terminal event.
TEST_P(SystemCmAeq, HostThatStopsPollingStallsNothing) {
  constexpr unsigned kFirst = 4, kStorm = 30;
  constexpr unsigned kAdmitted = 5;  // (15 - 4 - 2) / 2 + 1: free > owed + 2 before each
  CmTest ct{.cfg = platform_config(GetParam()), .listen = std::nullopt};
  ct.dc.aeq_entries = kAeqEntries;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm& cm, Scenario& sc) {
    // The host rejects with the template's bytes too, so a peer gets the same reject
    // whichever way its request went.
    const auto tmpl = text_pd("busy: try again later", 24);
    auto lo = listen_options();
    lo.template_pd = to_bytes(tmpl);
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo).ok());
    const uint64_t t0 = hal.now_cycles() + 100;
    for (unsigned i = 0; i < kFirst + kStorm; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("peer " + std::to_string(i), 8), kPort,
                            kPersonalities[i % 3]);
      pc.time_wait_cycles = 4 * kRto;
      const uint64_t start = i < kFirst ? t0 + 200 * i : t0 + 200'000 + 300 * (i - kFirst);
      const size_t k = sc.add(pc, start, to_bytes(tmpl));
      sc.conns[k].hold = i < kFirst;
      // siw loses the PD when a FIN rides with the reject; SIW_SAFE never does that
      sc.conns[k].expect_lost = false;
    }
    // phase 1: the host takes the first requests' events and holds them
    ASSERT_TRUE(sc.pump(
        [&] {
          unsigned n = 0;
          for (unsigned i = 0; i < kFirst; ++i) n += !sc.conns[i].requests.empty();
          return n == kFirst;
        },
        190'000))
        << sc.status();
    // phase 2: the host sleeps (no driver call at all) while the storm comes and goes
    hal.wait_cycles(200'000 + 300 * kStorm + 1'500'000 - (hal.now_cycles() - t0));
    const uint32_t refused = reg(hal, R::reg::STAT_AEQ_REFUSED);
    EXPECT_EQ(refused, kStorm - kAdmitted);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), refused) << "policy: auto-reject";
    EXPECT_EQ(reg(hal, R::reg::STAT_EVT_COALESCED), 0u);
    // the refused connections ran to their end while the host slept; only the nodes the host
    // was promised are left
    EXPECT_EQ(dev.cm_conns(), kFirst + kAdmitted) << stats_line(dev);
    // phase 3: the host wakes up, rejects what it held, and takes everything else as it comes
    for (unsigned i = 0; i < kFirst; ++i) sc.reject(sc.conns[i]);
    ASSERT_TRUE(sc.settle(8'000'000)) << sc.status();
    unsigned hosted = 0;
    for (const auto& c : sc.conns) {
      SCOPED_TRACE(ip_str(c.cfg.ip) + ":" + std::to_string(c.cfg.port) + "\n" +
                   dump(transcript(plat, c.cfg.ip, c.cfg.port)));
      expect_rejected_as_planned(sc, c);
      if (!c.requests.empty()) {
        ++hosted;
        EXPECT_EQ(c.requests.size(), 1u);
        EXPECT_EQ(c.terminals.size(), 1u) << "one terminal event per request handed over";
      } else {
        EXPECT_TRUE(c.terminals.empty());
      }
      ct.wants[{c.cfg.ip, c.cfg.port}] = {tmpl, true};
    }
    EXPECT_EQ(hosted, kFirst + kAdmitted);
    EXPECT_EQ(cm.stats().requests, kFirst + kAdmitted);
    EXPECT_EQ(reg(hal, R::reg::STAT_MPA_REQ), kFirst + kStorm);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), kFirst + kAdmitted);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    expect_clean_end(sc);
  });
}

// The same storm against a listener whose AEQ-full policy is a RST: the refused initiators
// get a RST for their request (the application sees the connection reset), nothing is
// written to the AEQ for them, and the table is left with the promised nodes only.
TEST_P(SystemCmAeq, AeqFullRstPolicyResetsTheRequest) {
  constexpr unsigned kFirst = 4, kStorm = 12, kAdmitted = 5;
  CmTest ct{.cfg = platform_config(GetParam()), .listen = std::nullopt};
  ct.dc.aeq_entries = kAeqEntries;
  ct.every = false;  // the reset peers get no reject
  ct.run([&](sim::Platform&, bouncer::hal::Device& hal, Device& dev, Cm& cm, Scenario& sc) {
    auto lo = listen_options();
    lo.aeq_full_rst = true;
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, lo).ok());
    const uint64_t t0 = hal.now_cycles() + 100;
    for (unsigned i = 0; i < kFirst + kStorm; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("peer " + std::to_string(i), 8), kPort,
                            peer::Personality::kSiw);
      pc.time_wait_cycles = 4 * kRto;
      const uint64_t start = i < kFirst ? t0 + 200 * i : t0 + 200'000 + 300 * (i - kFirst);
      const size_t k = sc.add(pc, start, to_bytes(text_pd("no", 2)));
      sc.conns[k].hold = true;
    }
    ASSERT_TRUE(sc.pump(
        [&] {
          unsigned n = 0;
          for (unsigned i = 0; i < kFirst; ++i) n += !sc.conns[i].requests.empty();
          return n == kFirst;
        },
        190'000))
        << sc.status();
    const uint32_t rst0 = reg(hal, R::reg::STAT_RST_TX);
    hal.wait_cycles(200'000 + 300 * kStorm + 1'000'000 - (hal.now_cycles() - t0));
    const uint32_t refused = reg(hal, R::reg::STAT_AEQ_REFUSED);
    EXPECT_EQ(refused, kStorm - kAdmitted);
    EXPECT_EQ(reg(hal, R::reg::STAT_RST_TX) - rst0, refused);
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_AUTO), 0u);
    EXPECT_EQ(dev.cm_conns(), kFirst + kAdmitted) << stats_line(dev);
    // the host wakes up: it gets exactly the promised requests and rejects them
    unsigned reset_peers = 0;
    for (auto& c : sc.conns) {
      c.hold = false;
      if (!c.requests.empty()) sc.reject(c);
    }
    ASSERT_TRUE(sc.pump(
        [&] {
          return dev.cm_conns() == 0 && cm.stats().nodes_held == 0 &&
                 cm.stats().nodes_awaiting_terminal == 0;
        },
        8'000'000))
        << sc.status();
    for (const auto& c : sc.conns) reset_peers += c.requests.empty();
    EXPECT_EQ(reset_peers, refused);
    EXPECT_EQ(cm.stats().requests, kFirst + kAdmitted);
    for (const auto& [k, v] : pcap_wants(sc)) ct.wants[k] = v;
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCmAeq, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
