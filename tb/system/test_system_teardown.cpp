// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Teardown, crash and re-open, against the verilated core and simulated initiators: the device
// must stop touching a driver's host memory before that memory is freed, a new owner must not
// inherit a vanished owner's listeners and connections, and requests the application never
// answered are released when the Cm goes. The co-simulation's host memory records every buffer
// a driver frees and counts each DMA that touches one afterwards
// (PlatformStats::dma_to_freed).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "system_fixture.hpp"

using namespace std::chrono_literals;

namespace {

using namespace systest;

class SystemTeardown : public ::testing::TestWithParam<unsigned> {};

std::vector<std::byte> bytes_of(const std::string& s) {
  return to_bytes(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

size_t replies_to_peers(const sim::Platform& plat) {
  size_t n = 0;
  for (const auto& f : plat.tx_frames()) {
    if (auto s = decode(f.bytes); s && s->mpa_reply()) ++n;
  }
  return n;
}

// The Device is closed while the CM engine is in the middle of an auto-reject (slow host
// memory: its template read and the copy of the PD into the node's slot are still to come),
// and while other nodes wait for retransmissions. Nothing may touch the freed memory, then or
// later while the peers keep retransmitting.
TEST_P(SystemTeardown, CloseNeverLetsTheDeviceTouchFreedMemory) {
  auto pc_cfg = platform_config(GetParam(), /*pcap=*/false);
  pc_cfg.mem_latency_cycles = 3000;
  sim::Platform plat(pc_cfg);
  // the peers' ACKs of the rejects are lost: the nodes keep retransmitting
  plat.set_drop_hook([](sim::Direction d, const std::vector<uint8_t>& f, uint64_t) {
    if (d != sim::Direction::kToBouncer) return false;
    auto s = decode(f);
    return s && s->payload.empty() && !s->has(kSyn);
  });
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, device_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    auto cm = std::make_unique<Cm>(**dev);
    auto lo = listen_options();
    lo.auto_reject = R::AutoReject::ALL;
    lo.template_pd = bytes_of("closing time: this template lives in host memory");
    ASSERT_TRUE(cm->listen(kLocalIp, kPort, lo).ok());
    // two peers get their reject; the third's request is in the engine when the Device goes
    std::vector<peer::InitiatorConfig> pcs;
    for (unsigned i = 0; i < 3; ++i) {
      pcs.push_back(peer_config(i, 2, true, text_pd("teardown", 8)));
      plat.add_peer(pcs.back(), hal.now_cycles() + 100 + 30'000 * i);
    }
    const uint64_t deadline = hal.now_cycles() + 400'000;
    while (replies_to_peers(plat) < 2 && hal.now_cycles() < deadline) hal.wait_cycles(64);
    ASSERT_GE(replies_to_peers(plat), 2u);
    auto request_in = [&] {
      for (const auto& f : plat.rx_frames()) {
        auto s = decode(f.bytes);
        if (s && s->src_ip == pcs[2].ip && s->mpa_request()) return true;
      }
      return false;
    };
    while (!request_in() && hal.now_cycles() < deadline) hal.wait_cycles(16);
    ASSERT_TRUE(request_in());
    hal.wait_cycles(200);
    const uint32_t st = hal.read32(R::reg::STATUS);
    EXPECT_NE(R::field::STATUS::CM_BUSY.get(st) | R::field::STATUS::DMA_BUSY.get(st), 0u)
        << "the engine should be busy with the third peer's request now";
    cm.reset();
    auto rc = (*dev)->close();
    ASSERT_TRUE(rc.ok()) << rc.error().message;
    dev->reset();  // frees the memory
    const size_t frames = plat.tx_frames().size();
    hal.wait_cycles(20 * kRto);  // the peers retransmit; nobody owns the device
    EXPECT_EQ(plat.stats().dma_to_freed, 0u)
        << "DMA to freed memory, first at 0x" << std::hex << plat.stats().dma_to_freed_first_addr;
    for (size_t i = frames; i < plat.tx_frames().size(); ++i) {
      auto s = decode(plat.tx_frames()[i].bytes);
      ASSERT_TRUE(s.has_value());
      EXPECT_FALSE(s->mpa_reply()) << "a reject after the device was closed";
    }
    EXPECT_EQ(hal.read32(R::reg::CM_CONNS), 0u);
    EXPECT_EQ(R::field::CTRL::ENABLE.get(hal.read32(R::reg::CTRL)), 0u);
  });
}

// An owner vanishes (its Cm and Device are never destroyed) with an auto-reject listener, a
// host listener, requests held and their peers waiting. A new owner opens the device: none of
// the old listeners, connections or templates survive. A SYN to the old auto-reject port gets
// a RST, and the new listener's connection is rejected with the new owner's PD.
TEST_P(SystemTeardown, OpenAfterACrashStartsClean) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  plat.run([&](bouncer::hal::Device& hal) {
    // Never destroyed: their owner "crashed". Held through a pointer that outlives static
    // destructors so that LeakSanitizer still sees them reachable at exit.
    static auto* crashed_devs = new std::vector<Device*>;
    static auto* crashed_cms = new std::vector<Cm*>;
    std::vector<size_t> held_peers;
    {
      auto dev = Device::open(hal, device_config());
      ASSERT_TRUE(dev.ok()) << dev.error().message;
      auto cm = std::make_unique<Cm>(**dev);
      auto lo = listen_options();
      lo.auto_reject = R::AutoReject::ALL;
      lo.template_pd = bytes_of("the old owner's template");
      ASSERT_TRUE(cm->listen(kLocalIp, kPort2, lo).ok());
      ASSERT_TRUE(cm->listen(kLocalIp, kPort, listen_options()).ok());
      {
        Scenario sc(plat, hal, **dev, *cm);
        for (unsigned i = 0; i < 3; ++i) {
          const size_t k =
              sc.add(peer_config(i, 2, true, text_pd("held", 4)), hal.now_cycles() + 100);
          sc.conns[k].hold = true;
          held_peers.push_back(sc.conns[k].peer);
        }
        ASSERT_TRUE(sc.pump([&] { return cm->stats().nodes_held == 3; }, 400'000));
      }
      EXPECT_EQ((*dev)->cm_conns(), 3u);
      crashed_devs->push_back(std::move(dev).value().release());
      crashed_cms->push_back(cm.release());
    }
    hal.wait_cycles(500);

    auto dev = Device::open(hal, device_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    const size_t tx_at_open = plat.tx_frames().size();
    Cm cm(**dev);
    ASSERT_TRUE((*dev)->wait_cm_ready(400us).ok());
    EXPECT_EQ((*dev)->cm_conns(), 0u) << "connections of the old owner survived";
    ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
    Scenario sc(plat, hal, **dev, cm);
    // the old auto-reject port, then the new owner's listener
    const size_t old_port =
        plat.add_peer(peer_config(10, 2, true, text_pd("late", 4), kPort2), hal.now_cycles() + 100);
    const size_t k = sc.add(peer_config(20, 2, true, text_pd("new owner", 9)),
                            hal.now_cycles() + 100, bytes_of("the new owner says no"));
    ASSERT_TRUE(sc.pump([&] { return sc.conns[k].completion.has_value(); }, 800'000));
    hal.wait_cycles(60 * kRto);
    const auto& out = plat.peer(sc.conns[k].peer).outcome();
    EXPECT_TRUE(out.rejected);
    EXPECT_EQ(to_bytes(out.reject_pd), bytes_of("the new owner says no"));
    EXPECT_TRUE(plat.peer(old_port).outcome().rst_received) << "no RST on the old port";
    EXPECT_FALSE(plat.peer(old_port).outcome().rejected) << "the old listener answered";
    for (size_t i = tx_at_open; i < plat.tx_frames().size(); ++i) {
      auto s = decode(plat.tx_frames()[i].bytes);
      ASSERT_TRUE(s.has_value());
      if (s->mpa_reply()) {
        EXPECT_EQ(s->dst_ip, sc.conns[k].cfg.ip) << "a reject for someone else";
      }
    }
    // the old owner's held peers are not answered by a reject any more
    for (size_t p : held_peers) EXPECT_FALSE(plat.peer(p).outcome().rejected) << "peer " << p;
    EXPECT_EQ(cm.stats().requests, 1u) << "only the new owner's own request";
    EXPECT_EQ(plat.stats().dma_to_freed, 0u);
  });
}

// Requests the application never answered are rejected when the Cm goes (iw_cm rejects on a
// listener's or id's destruction); the peers get an MPA reject and the nodes end.
TEST_P(SystemTeardown, CmReleasesHeldRequests) {
  sim::Platform plat(platform_config(GetParam(), /*pcap=*/false));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, device_config());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    std::vector<size_t> peers;
    {
      Cm cm(**dev);
      ASSERT_TRUE(cm.listen(kLocalIp, kPort, listen_options()).ok());
      Scenario sc(plat, hal, **dev, cm);
      for (unsigned i = 0; i < 3; ++i) {
        const size_t k = sc.add(peer_config(i, 2, true, text_pd("hold me", 7)),
                                hal.now_cycles() + 100 + 2000 * i);
        sc.conns[k].hold = true;
        peers.push_back(sc.conns[k].peer);
      }
      ASSERT_TRUE(sc.pump([&] { return cm.stats().nodes_held == 3; }, 400'000));
    }
    const uint64_t deadline = hal.now_cycles() + 2'000'000;
    while (!(plat.peers_finished() && (*dev)->cm_conns() == 0) && hal.now_cycles() < deadline) {
      hal.wait_cycles(256);
    }
    EXPECT_EQ((*dev)->cm_conns(), 0u);
    for (size_t p : peers) {
      const auto& o = plat.peer(p).outcome();
      EXPECT_TRUE(o.rejected) << "peer " << p;
      EXPECT_TRUE(o.reject_pd.empty());
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Width, SystemTeardown, ::testing::Values(64u, 512u), width_name);

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
