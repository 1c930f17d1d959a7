// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A hung device (issue 7, "Driver"): the fake's engines are held (FakeHal::hold, nothing is
// ever consumed or completed, CM_READY never set), and every driver wait must come back with
// kTimeout after its bound instead of hanging: CM_READY, control commands, SQ completions,
// the self-test; event polls find nothing; closing the Device returns. Then the engines run
// again and the same Device works.
#include <gtest/gtest.h>

#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "test_driver_fake_hal.hpp"

namespace bouncer {
namespace {

using testing::FakeHal;

TEST(DriverHung, EveryWaitTimesOut) {
  FakeHal::Config hc;
  hc.cm_ready_cycles = ~uint64_t{0};  // the reset sweep never ends
  FakeHal hal(hc);
  hal.hold = true;
  DeviceConfig cfg;
  cfg.cqp_timeout_cycles = 2000;
  auto d = Device::open(hal, cfg);  // register writes only: no wait
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();

  uint64_t t0 = hal.now_cycles();
  auto ready = dev->wait_cm_ready(3000);
  ASSERT_FALSE(ready);
  EXPECT_EQ(ready.error().code, Errc::kTimeout);
  EXPECT_GE(hal.now_cycles() - t0, 3000u);

  t0 = hal.now_cycles();
  auto nop = dev->cqp_nop();
  ASSERT_FALSE(nop);
  EXPECT_EQ(nop.error().code, Errc::kTimeout);
  EXPECT_GE(hal.now_cycles() - t0, 2000u);

  ListenerConfig l;
  l.index = 0;
  l.loc_port = 20049;
  auto listen = dev->cqp_create_listener(l);
  ASSERT_FALSE(listen);
  EXPECT_EQ(listen.error().code, Errc::kTimeout);

  SelftestOptions so;
  so.timeout_cycles = 5000;
  so.settle_cycles = 100;
  auto st = run_loopback_selftest(*dev, so);
  ASSERT_FALSE(st) << "a held device cannot run the self-test";
  EXPECT_EQ(st.error().code, Errc::kTimeout) << st.error().message;

  auto idx = dev->post_nop(7);
  ASSERT_TRUE(idx) << idx.error().message;  // posting needs no answer
  auto c = dev->wait_completion_for(*idx, 4000);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  auto any = dev->wait_completion(4000);
  ASSERT_FALSE(any);
  EXPECT_EQ(any.error().code, Errc::kTimeout);
  EXPECT_FALSE(dev->poll_aeq());
  EXPECT_EQ(dev->sq_outstanding(), 1u);

  // The engines come back: the late NOP completion is handed out, then new work completes.
  hal.hold = false;
  auto late = dev->wait_completion_for(*idx, 100000);
  ASSERT_TRUE(late) << late.error().message;
  EXPECT_EQ(late->wr_id, 7u);
  EXPECT_TRUE(dev->cqp_nop());
  dev.reset();  // close: bounded wait for idle
}

TEST(DriverHung, CloseReturnsWhileHeld) {
  FakeHal hal;
  auto d = Device::open(hal);
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();
  hal.hold = true;
  ASSERT_TRUE(dev->post_nop(1));
  dev.reset();  // must not hang: the destructor's idle wait is bounded
  SUCCEED();
}

}  // namespace
}  // namespace bouncer
