// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A hung device ("Driver"): the fake's engines are held (FakeHal::hold, nothing is
// ever consumed or completed, CM_READY never set), and every driver wait must come back with
// kTimeout after its bound instead of hanging: CM_READY, control commands, SQ completions,
// the self-test; event polls find nothing; closing the Device returns. Then the engines run
// again and the same Device works.
//
// The bounds are host time (hal::Device::host_now): a core whose cycle counter is stuck (a
// hung core, a wrong bitstream) or read torn across a CYCLE_LO wrap (two threads) must not
// stretch or shorten any wait (DriverClock.*).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
using Ns = std::chrono::nanoseconds;

const Ns kPoll = DeviceConfig{}.poll_interval;

// `r` is kTimeout after `bound` of host time, at most one poll interval more.
template <class Res>
void expect_deadline(FakeHal& hal, const std::string& what, Ns t0, const Res& r, Ns bound) {
  const Ns t = hal.host_now() - t0;
  ASSERT_FALSE(r) << what << " succeeded on a held device";
  EXPECT_EQ(r.error().code, Errc::kTimeout) << what << ": " << r.error().message;
  EXPECT_GE(t, bound) << what << " ended early";
  EXPECT_LE(t, bound + kPoll) << what << " ended late";
}

TEST(DriverHung, EveryWaitTimesOut) {
  FakeHal::Config hc;
  hc.cm_ready_cycles = ~uint64_t{0};  // the reset sweep never ends
  FakeHal hal(hc);
  hal.hold = true;
  DeviceConfig cfg;
  cfg.cqp_timeout = 8us;
  auto d = Device::open(hal, cfg);  // register writes only: no wait
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();

  Ns t0 = hal.host_now();
  auto ready = dev->wait_cm_ready(12us);
  expect_deadline(hal, "wait_cm_ready", t0, ready, 12us);

  t0 = hal.host_now();
  auto nop = dev->cqp_nop();
  expect_deadline(hal, "cqp_nop", t0, nop, 8us);

  ListenerConfig l;
  l.index = 0;
  l.loc_port = 20049;
  auto listen = dev->cqp_create_listener(l);
  ASSERT_FALSE(listen);
  EXPECT_EQ(listen.error().code, Errc::kTimeout);

  SelftestOptions so;
  so.timeout = 20us;
  so.settle_cycles = 100;
  auto st = run_loopback_selftest(*dev, so);
  ASSERT_FALSE(st) << "a held device cannot run the self-test";
  EXPECT_EQ(st.error().code, Errc::kTimeout) << st.error().message;

  auto idx = dev->post_nop(7);
  ASSERT_TRUE(idx) << idx.error().message;  // posting needs no answer
  t0 = hal.host_now();
  auto c = dev->wait_completion_for(*idx, 16us);
  expect_deadline(hal, "wait_completion_for", t0, c, 16us);
  EXPECT_NE(c.error().message.find("the engine has not finished it"), std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("abandon"), std::string::npos) << c.error().message;
  t0 = hal.host_now();
  auto any = dev->wait_completion(16us);
  expect_deadline(hal, "wait_completion", t0, any, 16us);
  EXPECT_FALSE(dev->poll_aeq());
  EXPECT_EQ(dev->sq_outstanding(), 1u);

  // The engines come back: the late NOP completion is handed out, then new work completes.
  hal.hold = false;
  auto late = dev->wait_completion_for(*idx, 400us);
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

// Every wait of the driver, on a held device whose cycle counter misbehaves, must end after
// its bound of host time. `skew` extra reads of the counter first shift which read a torn
// counter gets wrong (the wait's start or one of its checks).
void every_wait_on_its_host_deadline(FakeHal::Config::Cycles cycles, unsigned skew) {
  SCOPED_TRACE("skew " + std::to_string(skew));
  FakeHal::Config hc;
  hc.cm_ready_cycles = ~uint64_t{0};
  hc.cycles = cycles;
  // A wait that followed the counter would never end (stuck), or wait 2^32 cycles (torn).
  hc.host_time_limit = 50ms;
  FakeHal hal(hc);
  DeviceConfig cfg;
  cfg.cqp_timeout = 8us;
  auto d = Device::open(hal, cfg);
  ASSERT_TRUE(d) << d.error().message;
  auto dev = std::move(d).value();
  auto cmp = std::make_unique<Cm>(*dev);
  auto diagp = std::make_unique<ContextDiag>(*dev);
  Cm& cm = *cmp;
  ContextDiag& diag = *diagp;
  ASSERT_TRUE(diag.write_context(1, CmContext{}));
  hal.hold = true;
  auto skewed = [&] {
    for (unsigned i = 0; i < skew; ++i) (void)hal.now_cycles();
    return hal.host_now();
  };

  Ns t0 = skewed();
  expect_deadline(hal, "wait_cm_ready", t0, dev->wait_cm_ready(12us), 12us);
  t0 = skewed();
  expect_deadline(hal, "cqp_nop (cqp_timeout)", t0, dev->cqp_nop(), 8us);
  SelftestOptions so;
  so.timeout = 20us;
  t0 = skewed();
  expect_deadline(hal, "self-test (CREATE_LISTENER: cqp_timeout)", t0,
                  run_loopback_selftest(*dev, so), 8us);
  auto idx = dev->post_nop(1);
  ASSERT_TRUE(idx);
  t0 = skewed();
  expect_deadline(hal, "wait_completion_for", t0, dev->wait_completion_for(*idx, 16us), 16us);
  t0 = skewed();
  expect_deadline(hal, "wait_completion", t0, dev->wait_completion(16us), 16us);
  t0 = skewed();
  expect_deadline(hal, "reset_sq (cqp_timeout)", t0, dev->reset_sq(0), 8us);
  t0 = skewed();
  expect_deadline(hal, "Cm::wait_event", t0, cm.wait_event(20us), 20us);
  RejectOptions o;
  o.timeout = 24us;
  t0 = skewed();
  expect_deadline(hal, "ContextDiag::reject", t0, diag.reject(1, {}, o), 24us);
  t0 = skewed();
  auto pidx = diag.post_reject(2, {});  // a context it must read first: cqp_timeout
  expect_deadline(hal, "ContextDiag::post_reject (READ_CM_CONTEXT)", t0, pidx, 8us);
  // close: CTRL.RESET never happens (reset_timeout). The Cm and ContextDiag go first (the
  // Device must outlive them).
  diagp.reset();
  cmp.reset();
  hal.cfg.reset_hangs = true;
  t0 = skewed();
  expect_deadline(hal, "Device::close (reset_timeout)", t0, dev->close(),
                  DeviceConfig{}.reset_timeout);
}

TEST(DriverClock, StuckCycleCounterDoesNotStopAWait) {
  every_wait_on_its_host_deadline(FakeHal::Config::Cycles::kStuck, 0);
}

TEST(DriverClock, TornCycleReadsNeitherStretchNorShortenAWait) {
  for (unsigned skew = 0; skew < 3; ++skew) {
    every_wait_on_its_host_deadline(FakeHal::Config::Cycles::kTorn, skew);
  }
}

// open() waits for CTRL.RESET on the host clock too.
TEST(DriverClock, OpenResetWaitUsesTheHostClock) {
  FakeHal::Config hc;
  hc.cycles = FakeHal::Config::Cycles::kStuck;
  hc.reset_hangs = true;
  hc.host_time_limit = 50ms;
  FakeHal hal(hc);
  DeviceConfig cfg;
  cfg.reset_timeout = 40us;
  const Ns t0 = hal.host_now();
  expect_deadline(hal, "Device::open (reset_timeout)", t0, Device::open(hal, cfg), 40us);
}

}  // namespace
}  // namespace bouncer
