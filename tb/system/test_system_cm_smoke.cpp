// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Smoke test of the passive CM: one simulated initiator connects to a listener, the host
// rejects its request, the exchange ends and the connection table is empty again. The full
// matrix is in test_system_cm*.cpp; this one is the quickest end-to-end check.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <variant>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/peer/initiator.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
namespace peer = bouncer::peer;

class CmSmoke : public ::testing::TestWithParam<unsigned> {};

TEST_P(CmSmoke, OneRejectEndToEnd) {
  sim::PlatformConfig pc;
  pc.data_width = GetParam();
  pc.pcap_path = std::string("cm_smoke_w") + std::to_string(GetParam()) + ".pcap";
  sim::Platform plat(pc);

  peer::InitiatorConfig ic;
  ic.mac = {0x02, 0, 0, 0, 0, 0x10};
  ic.peer_mac = {0x02, 0, 0, 0, 0, 0x01};
  ic.ip = 0x0A000002;
  ic.peer_ip = 0x0A000001;
  ic.port = 40000;
  ic.peer_port = 4791;
  ic.isn = 0x12345678;
  ic.mpa_rev = 2;
  ic.private_data = {'h', 'e', 'l', 'l', 'o'};
  ic.rto_cycles = 20'000;
  ic.time_wait_cycles = 2'000;

  std::vector<std::byte> reject_pd = {std::byte{'n'}, std::byte{'o'}, std::byte{'!'}};
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc;
    dc.isn_key = std::array<uint32_t, 4>{1, 2, 3, 4};
    bouncer::TimerConfig t;
    t.tick_cycles = 16;
    t.rto_init = 2'000;
    t.rto_max = 16'000;
    t.mpa_timeout = 100'000;
    t.fin_timeout = 100'000;
    t.time_wait = 500;
    dc.timers = t;
    auto dev = bouncer::Device::open(hal, dc);
    ASSERT_TRUE(dev.has_value()) << dev.error().message;
    bouncer::Cm cm(**dev);
    bouncer::ListenOptions lo;
    lo.local_mac = ic.peer_mac;
    auto l = cm.listen(0x0A000001, 4791, lo);
    ASSERT_TRUE(l.has_value()) << l.error().message;
    plat.add_peer(ic, plat.cycles() + 10);
    auto ev = cm.wait_event(1600us);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    auto* req = std::get_if<bouncer::ConnectRequest>(&*ev);
    ASSERT_NE(req, nullptr) << bouncer::event_name(*ev);
    EXPECT_EQ(req->rev, 2);
    ASSERT_EQ(req->private_data.size(), 5u);
    EXPECT_EQ(static_cast<char>(req->private_data[0]), 'h');
    bouncer::RejectOptions ro;
    auto c = cm.reject(req->handle, reject_pd, ro);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    for (int i = 0; i < 200 && !plat.peers_finished(); ++i) {
      auto e = cm.poll_event();
      ASSERT_TRUE(e.has_value());
      EXPECT_FALSE(e->has_value());
      hal.wait_cycles(2'000);
    }
    // our side may still be in TIME_WAIT (500 ticks of 16 cycles): let it run out
    for (int i = 0; i < 100 && hal.read32(R::reg::CM_CONNS) != 0; ++i) {
      hal.wait_cycles(1'000);
      (void)cm.poll_event();
    }
    for (const auto& s : (*dev)->read_stats())
      if (s.value != 0) std::printf("  %-24s %u\n", s.name, s.value);
    EXPECT_EQ(hal.read32(R::reg::CM_CONNS), 0u);
    const auto st = cm.stats();
    EXPECT_EQ(st.nodes_held + st.nodes_awaiting_terminal, 0u);
  });
  for (const auto& f : plat.rx_frames())
    std::printf("rx %5zu B @%llu\n", f.bytes.size(), (unsigned long long)f.first_cycle);
  for (const auto& f : plat.tx_frames())
    std::printf("tx %5zu B @%llu\n", f.bytes.size(), (unsigned long long)f.first_cycle);
  ASSERT_TRUE(plat.peers_finished());
  const auto& o = plat.peer(0).outcome();
  EXPECT_TRUE(o.rejected) << o.error;
  EXPECT_EQ(o.reject_pd.size(), 3u);
  EXPECT_EQ(o.state, peer::State::kDone) << peer::to_string(o.state) << " " << o.error;
}

INSTANTIATE_TEST_SUITE_P(Width, CmSmoke, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
