// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The loopback self-test (hostsw/device/selftest.cpp, the code `bouncer card selftest` runs on
// a card) on the co-simulated core at 64 and 512 bits: the real driver, the verilated RTL
// with CTRL.LOOPBACK. Every frame and counter the self-test predicts must match exactly; the
// port itself must stay quiet while the loop is on, and work normally once it is off.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/sim/platform.hpp"
#include "system_fixture.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
using systest::build_peer_segment;
using systest::decode;
using systest::kAck;
using systest::kRst;
using systest::kSyn;
using systest::PeerFrame;

class Selftest : public ::testing::TestWithParam<unsigned> {};

// A SYN from 10.255.66.9 to `dst_ip`:`dst_port` (the self-test's borrowed listener listens on
// 10.255.66.2:50000; with the loop off nobody listens anywhere).
constexpr bouncer::MacAddr kPortMac = {0x02, 0x42, 0x4E, 0x43, 0x52, 0x02};

std::vector<uint8_t> syn(uint32_t dst_ip, uint16_t dst_port, uint16_t sport) {
  PeerFrame pf;
  pf.src_mac = {0x02, 0x00, 0x00, 0x00, 0x66, 0x09};
  pf.dst_mac = kPortMac;
  pf.src_ip = 0x0AFF4209;
  pf.dst_ip = dst_ip;
  pf.sport = sport;
  pf.dport = dst_port;
  return build_peer_segment(pf, kSyn, 0x77770000u + sport, 0, {}, true);
}

uint32_t stat(const std::vector<bouncer::StatValue>& v, uint32_t off) {
  for (const auto& s : v) {
    if (s.offset == off) return s.value;
  }
  return 0;
}

TEST_P(Selftest, PassesAndLeavesThePortQuiet) {
  sim::PlatformConfig pc = systest::platform_config(GetParam());
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = bouncer::Device::open(hal, systest::device_config());
    ASSERT_TRUE(dev) << dev.error().message;
    ASSERT_TRUE((*dev)->wait_cm_ready(400us));
    // Twice: the first run must leave nothing behind that the second would trip over. The
    // second runs on a port with the destination filters on (the looped frames are not
    // addressed to PORT_MAC / PORT_IP: the test turns them off while it runs, then on again).
    for (int round = 0; round < 2; ++round) {
      bouncer::TcpConfig tcp = (*dev)->read_tcp();
      if (round == 1) {
        tcp.promisc = false;
        tcp.port_mac = kPortMac;   // the SYN at the end is sent to it
        tcp.port_ip = 0x0A000001;  // and to this address
        ASSERT_TRUE((*dev)->set_tcp(tcp).ok());
      }
      auto rep = bouncer::run_loopback_selftest(**dev);
      ASSERT_TRUE(rep) << rep.error().message;
      std::printf("%s", bouncer::format_selftest_report(*rep).c_str());
      EXPECT_TRUE(rep->passed()) << rep->failures();
      EXPECT_TRUE(rep->loopback_restored);
      EXPECT_EQ(rep->caps.data_bytes, GetParam() / 8);
      EXPECT_EQ(rep->frames.size(), 4u);
      EXPECT_EQ(rep->checks.size(), 62u);  // 3 of them the STAT_DMA_* counters
      EXPECT_EQ((*dev)->read_tcp(), tcp) << "CM_ROUTE, PORT_MAC and PORT_IP as before";
    }
    EXPECT_EQ(hal.read32(R::reg::CTRL), R::field::CTRL::ENABLE.mask());
    // While looping, nothing left on m_axis_tx and nothing came in on s_axis_rx.
    EXPECT_TRUE(plat.tx_frames().empty()) << plat.tx_frames().size() << " frames on the wire";
    EXPECT_TRUE(plat.rx_frames().empty());

    // With the loop off the port is the network's again (its filters on again, the SYN
    // addressed to PORT_MAC and PORT_IP): a SYN to a port nobody listens on is answered on
    // m_axis_tx with RST|ACK, seq 0, ack SEG.SEQ + 1.
    plat.inject_rx(syn(0x0A000001, 4444, 40001), hal.now_cycles() + 10);
    for (int i = 0; i < 200 && plat.tx_frames().empty(); ++i) hal.wait_cycles(100);
  });
  ASSERT_EQ(plat.rx_frames().size(), 1u);
  ASSERT_EQ(plat.tx_frames().size(), 1u);
  auto rst = decode(plat.tx_frames()[0].bytes);
  ASSERT_TRUE(rst);
  EXPECT_EQ(rst->flags, kRst | kAck) << systest::describe(*rst);
  EXPECT_EQ(rst->seq, 0u);
  EXPECT_EQ(rst->ack, 0x77770000u + 40001 + 1);
  EXPECT_EQ(rst->dport, 40001);
  EXPECT_TRUE(rst->ip_csum_ok && rst->tcp_csum_ok);
}

// Frames that arrive from the network while the loop is on are discarded whole (no SYN-ACK
// although they are addressed to the borrowed listener) and counted in STAT_RX_OVERFLOW: the
// self-test reports exactly that and nothing else.
TEST_P(Selftest, WireFramesDuringTheLoopAreDiscardedAndReported) {
  sim::PlatformConfig pc = systest::platform_config(GetParam());
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = bouncer::Device::open(hal, systest::device_config());
    ASSERT_TRUE(dev) << dev.error().message;
    ASSERT_TRUE((*dev)->wait_cm_ready(400us));
    const auto before = (*dev)->read_stats();
    // Well inside the test: the loop is switched on within its first few hundred cycles,
    // and it lasts at least settle_cycles (20000) after the completions.
    const uint64_t t = hal.now_cycles() + 5'000;
    for (uint16_t i = 0; i < 3; ++i) plat.inject_rx(syn(0x0AFF4202, 50000, 41000 + i), t);
    auto rep = bouncer::run_loopback_selftest(**dev);
    ASSERT_TRUE(rep) << rep.error().message;
    std::printf("%s", rep->failures().c_str());
    EXPECT_FALSE(rep->passed());
    size_t failed = 0;
    for (const auto& c : rep->checks) {
      if (c.ok) continue;
      ++failed;
      EXPECT_EQ(c.name, "STAT_RX_OVERFLOW delta");
      EXPECT_EQ(c.expected, "0");
      EXPECT_EQ(c.actual, "3");
    }
    EXPECT_EQ(failed, 1u);
    const auto after = (*dev)->read_stats();
    EXPECT_EQ(stat(after, R::reg::STAT_RX_OVERFLOW) - stat(before, R::reg::STAT_RX_OVERFLOW), 3u);
    EXPECT_EQ((*dev)->cm_conns(), 0u);
  });
  EXPECT_EQ(plat.rx_frames().size(), 3u);  // they did reach the port's pins
  EXPECT_TRUE(plat.tx_frames().empty());   // and got no answer
}

INSTANTIATE_TEST_SUITE_P(Width, Selftest, ::testing::Values(64u, 512u), systest::width_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
