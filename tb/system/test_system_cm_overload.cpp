// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Passive-CM system test under overload: a SYN flood at line rate keeps the CM engine behind
// while initiators connect. The RX port holds new SYNs apart (a small SYN queue, dropped
// first; docs/architecture.md, "RX path"): the segments of connections already in progress
// go ahead of them, so none of those is dropped and every initiator is rejected.
// Helpers: system_fixture.hpp.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "system_fixture.hpp"

namespace {

using namespace systest;

class SystemCmOverload : public ::testing::TestWithParam<unsigned> {};

// For 80 000 cycles a SYN from a new tuple every 12 cycles (64 bits: a 60-byte frame takes 8
// of them) or every 3 (512 bits), to a port without a listener: each one costs the CM engine
// a job and a RST, more than that. Meanwhile 24 initiators start every 1000 cycles from the
// flood's start and are rejected by the host; their SYNs compete with the flood's in the SYN
// queue (an initiator retries a dropped SYN after its RTO), and most have their SYN-ACK while
// the flood lasts.
// - Every initiator is rejected as planned; none gives up.
// - No frame other than a pure SYN is dropped at the port (STAT_RX_OVERFLOW 0): each
//   initiator's MPA request reached the core the first time (one request segment on the
//   wire per initiator), although the flood kept the SYN queue overflowing.
// - The port's SYN drops are counted in STAT_SYN_DROP_QUEUE, and every pure SYN on the wire
//   is accounted for once: dropped at the port, answered with a RST (no listener), created a
//   node, or found its node (a duplicate in SYN_RCVD, or out of window once established).
// - STAT_RX_FRAMES counts every frame on the wire.
TEST_P(SystemCmOverload, InProgressConnectionsGoFirst) {
  const unsigned width = GetParam();
  constexpr unsigned kPeers = 24;
  constexpr uint64_t kFloodCycles = 80'000;
  const uint64_t gap = width == 64 ? 12 : 3;
  const unsigned flood = static_cast<unsigned>(kFloodCycles / gap);
  CmTest ct{.cfg = platform_config(width), .dc = device_config(8)};
  ct.dc.timers->mpa_timeout = 8'000'000 / kTick;
  ct.run([&](sim::Platform& plat, bouncer::hal::Device& hal, Device& dev, Cm&, Scenario& sc) {
    sc.pipelined = true;
    const uint64_t t0 = hal.now_cycles() + 200;
    for (unsigned i = 0; i < flood; ++i) {
      PeerFrame pf;
      pf.src_mac = {0x02, 0x66, 0x00, 0x00, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
      pf.src_ip = 0x0A640000u + i;  // 10.100.x.y: no initiator's address
      pf.sport = static_cast<uint16_t>(1024 + i);
      pf.dport = kPort2;  // no listener
      plat.inject_rx(build_peer_segment(pf, kSyn, 0x10000000u + i, 0, {}, true), t0 + gap * i);
    }
    for (unsigned i = 0; i < kPeers; ++i) {
      auto pc = peer_config(i, 2, true, text_pd("busy #" + std::to_string(i), 8));
      pc.rto_cycles = kRto;
      pc.max_retransmits = 12;
      pc.reply_timeout_cycles = 50'000'000;
      pc.time_wait_cycles = 4 * kRto;
      sc.add(pc, t0 + 1000 * i, to_bytes(text_pd("no #" + std::to_string(i), 12)));
    }
    ASSERT_TRUE(sc.settle(40'000'000)) << sc.status();

    // the flood's end: its last SYN into the port
    uint64_t flood_end = 0;
    unsigned pure_syns = 0;
    for (const auto& f : plat.rx_frames()) {
      const auto s = decode(f.bytes);
      if (!s || (s->flags & (kSyn | kAck | kRst | kFin)) != kSyn) continue;
      ++pure_syns;
      if (s->dport == kPort2) flood_end = std::max(flood_end, f.first_cycle);
    }
    unsigned in_progress = 0;  // initiators that had their SYN-ACK while the flood lasted
    for (const auto& c : sc.conns) {
      const auto& o = plat.peer(c.peer).outcome();
      const auto t = transcript(plat, c.cfg.ip, c.cfg.port);
      SCOPED_TRACE(dump(t));
      expect_request_matches(c);
      expect_rejected_as_planned(sc, c);
      unsigned requests = 0;
      for (const auto& w : t) requests += w.to_bouncer && w.seg.mpa_request();
      EXPECT_EQ(requests, 1u) << ip_str(c.cfg.ip) << ": the MPA request was sent again";
      in_progress += o.synack_cycle != 0 && o.synack_cycle < flood_end;
    }
    const uint32_t syn_drop = reg(hal, R::reg::STAT_SYN_DROP_QUEUE);
    const uint32_t no_listener = reg(hal, R::reg::STAT_SYN_NO_LISTENER);
    std::printf("[ overload ] w%u: %u flood SYNs until cycle %" PRIu64
                ", %u initiators in progress during it, %u pure SYNs on the wire\n",
                width, flood, flood_end, in_progress, pure_syns);
    std::printf("[ stats    ] %s\n", stats_line(dev).c_str());
    // the flood overloaded the port's SYN queue, and initiators were in progress meanwhile
    EXPECT_GT(syn_drop, 0u);
    EXPECT_GE(in_progress, kPeers / 4);
    EXPECT_EQ(reg(hal, R::reg::STAT_RX_OVERFLOW), 0u);
    EXPECT_EQ(reg(hal, R::reg::STAT_RX_FRAMES), plat.rx_frames().size());
    EXPECT_EQ(reg(hal, R::reg::STAT_REJECT_HOST), kPeers);
    EXPECT_EQ(reg(hal, R::reg::STAT_RTX_EXHAUSTED), 0u);
    const uint64_t placed = uint64_t{syn_drop} + no_listener + kPeers +
                            reg(hal, R::reg::STAT_SYN_DUP) + reg(hal, R::reg::STAT_SYN_DROP_FULL) +
                            reg(hal, R::reg::STAT_SYN_DROP_BACKLOG);
    EXPECT_LE(placed, pure_syns);
    EXPECT_GE(placed + reg(hal, R::reg::STAT_OOW), pure_syns);
    EXPECT_GE(uint64_t{syn_drop} + no_listener, flood);
    expect_clean_end(sc);
    ct.wants = pcap_wants(sc);
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemCmOverload, ::testing::Values(64u, 512u), width_name);

}  // namespace

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
