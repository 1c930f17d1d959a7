// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The driver's side of the memory-ordering contract (hal.hpp, "Memory ordering") on the event
// path, against each memory model of the fake (fake_dma.hpp). With the fake's DMA thread the
// device writes the request PD and then the CONNECT_REQUEST event qword by qword, VALID last,
// after a random delay, while the driver polls; in the non-coherent model the driver sees
// none of it unless it syncs from the device after VALID. Every event and its PD must arrive
// whole, in order, across many laps of a 4-entry AEQ. The device tests (test_driver_device)
// and the thread tests (test_driver_threads) cover the CQ, the CCQ and the contexts the same
// way. Run under ThreadSanitizer by the build-tsan pass as well, where a payload word read
// before VALID is a reported race.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "fake_memory_param.hpp"
#include "test_driver_fake_hal.hpp"

namespace bouncer {
namespace {

using testing::FakeHal;
using testing::FakeMemory;
using testing::FakeRequest;

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 29 + i * 7 + 1);
  return v;
}

class Ordering : public ::testing::TestWithParam<FakeMemory> {
 protected:
  static FakeHal::Config fake_config() {
    FakeHal::Config c;
    c.memory = GetParam();
    return c;
  }
  FakeHal hal{fake_config()};
};

BOUNCER_ALL_FAKE_MEMORIES(Ordering);

// 60 requests, PD 0 .. 480 bytes, through a 4-entry AEQ (3 usable): the fake holds the
// events back while the ring is full and writes each as AEQ_HEAD frees a slot, so the driver
// polls while every one of them is being written.
TEST_P(Ordering, EventsAndTheirPdArriveWholeAcrossAeqLaps) {
  constexpr uint32_t kRequests = 60;
  DeviceConfig cfg;
  cfg.aeq_entries = 4;
  auto d = Device::open(hal, cfg);
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();
  ListenerConfig l;
  l.loc_port = 20049;
  ASSERT_TRUE(dev->cqp_create_listener(l));
  std::vector<FakeRequest> sent;
  for (uint32_t i = 0; i < kRequests; ++i) {
    FakeRequest q;
    q.rev = 1;
    q.flags = 0x40;
    q.rem_port = static_cast<uint16_t>(40000 + i);
    q.rem_ip = 0x0A000100u + i;
    q.pd = pattern((i * 37) % 481, i);
    q.cm_id = i;
    ASSERT_TRUE(hal.inject_connect_request(q)) << i;
    sent.push_back(q);
  }
  uint32_t got = 0;
  for (unsigned spins = 0; got < kRequests && spins < 1'000'000; ++spins) {
    auto e = dev->poll_aeq();
    if (!e) {
      dev->flush_aeq_head();
      hal.wait_cycles(16);  // the fake writes the next events as slots free up
      continue;
    }
    const FakeRequest& q = sent.at(got);
    ASSERT_EQ(e->event, static_cast<uint8_t>(regs::AeqEvent::CONNECT_REQUEST)) << got;
    ASSERT_EQ(e->cm_id, got);
    EXPECT_EQ(e->rem_port, q.rem_port) << got;
    EXPECT_EQ(e->rem_ip, q.rem_ip) << got;
    EXPECT_EQ(e->rev, q.rev) << got;
    ASSERT_EQ(e->pd_len, q.pd.size()) << got;
    EXPECT_EQ(e->pd_offset, got * regs::kPdSlotBytes) << got;
    const auto pd = dev->read_pd_area(e->pd_offset, e->pd_len);
    ASSERT_EQ(pd.size(), q.pd.size()) << got;
    for (size_t i = 0; i < pd.size(); ++i) {
      ASSERT_EQ(std::to_integer<uint8_t>(pd[i]), q.pd[i]) << "request " << got << " PD byte " << i;
    }
    ++got;
  }
  EXPECT_EQ(got, kRequests);
  EXPECT_FALSE(dev->poll_aeq());
  EXPECT_EQ(dev->stats().aeq_consumed, kRequests);
}

}  // namespace
}  // namespace bouncer
