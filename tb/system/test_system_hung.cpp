// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// A hung device on the real core ("Driver"): the real driver against the verilated
// bouncer_core, first held in reset with its clock running (sim::Platform::hold_reset), then
// with the core running but its engines wedged (a DMA read that is never answered with the
// watchdog off, CTRL.ENABLE cleared behind the driver, write responses that never come).
//
// Every driver wait must end within its configured bound, measured on the host's clock, which
// in the co-simulation is simulated time (4 ns per core cycle at 250 MHz): wait_cm_ready,
// control commands (cqp_timeout), wait_completion[_for], the Cm layer's reject
// (RejectOptions::timeout), the loopback self-test; poll_aeq finds nothing;
// destroying the Device returns. Then the documented recovery works: after a reset, the Device
// is closed and opened again; after a wedge, the fault is removed (DMA_TIMEOUT written, the
// engines re-enabled, or a reset) and the work completes, each WQE exactly once.
//
// While held, the platform answers MMIO in the core's place: reads return
// PlatformConfig::reset_read_value (all ones by default, as a PCIe read of a device that does
// not answer), writes are dropped, each word takes 2 cycles.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/sim/platform.hpp"
#include "host_context.hpp"

using namespace std::chrono_literals;

namespace {

namespace R = bouncer::regs;
namespace sim = bouncer::sim;
using bouncer::CmContext;
using bouncer::Device;
using bouncer::Errc;
using bouncer::RejectWqe;
using bouncer::testing::host_ctx;
using bouncer::testing::pattern_pd;

using Ns = std::chrono::nanoseconds;
constexpr Ns kCycle = 4ns;                   // the co-simulation's core clock: 250 MHz
constexpr Ns kCqpTimeout = 20'000 * kCycle;  // DeviceConfig::cqp_timeout of these tests
constexpr Ns kPoll = 32 * kCycle;            // DeviceConfig::poll_interval
constexpr Ns kWait = 30'000 * kCycle;        // bound of the other waits under test
constexpr Ns kLong = 400'000 * kCycle;       // bound of waits that must succeed
// A timed-out wait may take longer than its bound by the MMIO reads its error message makes
// (2 to 4 cycles each, or 2 while held) and the last poll's register reads.
constexpr Ns kSlack = 64 * kCycle;
// Closing a device that is not wedged: CTRL.RESET happens once nothing has been in flight for
// 128 cycles, at worst after a DMA read the watchdog ends (dma_timeout_cycles 2 000), plus the
// polls that see it.
constexpr Ns kQuietClose = (2'000 + 128) * kCycle + 4 * kPoll + kSlack;

bouncer::DeviceConfig base_config() {
  bouncer::DeviceConfig dc;
  dc.isn_key = std::array<uint32_t, 4>{1, 2, 3, 4};
  dc.cqp_entries = 8;
  dc.ccq_entries = 8;
  dc.cqp_timeout = kCqpTimeout;
  dc.reset_timeout = kCqpTimeout;  // open() and close(): the bound of CTRL.RESET
  dc.poll_interval = kPoll;
  dc.dma_timeout_cycles = 2'000;
  return dc;
}

sim::PlatformConfig platform_config(unsigned width = 64) {
  sim::PlatformConfig pc;
  pc.data_width = width;
  return pc;
}

// The TCP destination ports of every frame sent so far, in order.
std::vector<uint16_t> wire_ports(const sim::Platform& plat) {
  std::vector<uint16_t> out;
  for (const auto& f : plat.tx_frames()) {
    out.push_back(f.bytes.size() < 38 ? 0 : static_cast<uint16_t>(f.bytes[36] << 8 | f.bytes[37]));
  }
  return out;
}

// Posts an MPA_REJECT of cm_id's host-written context (PD read by DMA when longer than 32 B).
uint16_t post(Device& d, uint32_t cm_id, size_t pd_len = 16) {
  const auto pd = pattern_pd(pd_len, static_cast<uint8_t>(cm_id));
  RejectWqe w;
  w.cm_id = cm_id;
  w.pd = pd;
  w.wr_id = 1000 + cm_id;
  auto r = d.post_reject(w);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : 0;
}

void expect_ok(Device& d, uint16_t idx, uint32_t cm_id) {
  auto c = d.wait_completion_for(idx, kLong);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->wqe_idx, idx);
  EXPECT_EQ(c->cm_id, cm_id);
  EXPECT_EQ(c->wr_id, 1000u + cm_id);
  EXPECT_TRUE(c->ok()) << c->status();
}

// Host time from construction to elapsed(): one measured wait.
class Span {
 public:
  explicit Span(bouncer::hal::Device& hal) : hal_(hal), t0_(hal.host_now()) {}
  Ns elapsed() const { return hal_.host_now() - t0_; }

 private:
  bouncer::hal::Device& hal_;
  Ns t0_;
};

unsigned long long cycles_of(Ns t) { return static_cast<unsigned long long>(t / kCycle); }

// `what` ended with `code` after bound .. bound + kSlack (bound 0: at once, within kSlack).
// The figure is printed, in core cycles, for docs/reliability.md.
template <class Res>
void expect_bounded_error(const char* what, const Res& r, const Span& s, Ns bound,
                          Errc code = Errc::kTimeout) {
  const Ns t = s.elapsed();
  std::printf("[ bounded  ] %-40s %-8s after %6llu cycles (bound %llu)\n", what,
              r.ok() ? "ok" : bouncer::errc_name(r.error().code), cycles_of(t), cycles_of(bound));
  ASSERT_FALSE(r.ok()) << what << " succeeded on a hung device";
  EXPECT_EQ(r.error().code, code) << what << ": " << r.error().message;
  EXPECT_GE(t, bound) << what;
  EXPECT_LE(t, bound + kSlack) << what << ": " << r.error().message;
}

// Destroying the Device returns within [lo, hi].
void expect_close_bounded(std::unique_ptr<Device>& dev, bouncer::hal::Device& hal, Ns lo, Ns hi) {
  const Span s(hal);
  dev.reset();
  const Ns t = s.elapsed();
  std::printf("[ bounded  ] %-40s returned after %6llu cycles (bound %llu)\n", "~Device",
              cycles_of(t), cycles_of(hi));
  EXPECT_GE(t, lo);
  EXPECT_LE(t, hi);
}

std::unique_ptr<Device> open_ready(bouncer::hal::Device& hal,
                                   bouncer::DeviceConfig dc = base_config()) {
  auto d = Device::open(hal, dc);
  EXPECT_TRUE(d.ok()) << d.error().message;
  if (!d.ok()) return nullptr;
  auto dev = std::move(d).value();
  auto ready = dev->wait_cm_ready(kLong);
  EXPECT_TRUE(ready.ok()) << ready.error().message;
  return dev;
}

class HeldInReset : public ::testing::TestWithParam<unsigned> {};

// The core held in reset under an opened Device: every wait ends with kTimeout after its
// bound (or with the documented error at once), nothing is sent; after the release the
// Device is opened again and a reject completes.
TEST_P(HeldInReset, EveryWaitIsBoundedThenReopen) {
  sim::Platform plat(platform_config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = open_ready(hal);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(1, host_ctx(1)).ok());
    auto cm = std::make_unique<bouncer::ContextDiag>(*dev);
    ASSERT_TRUE(cm->write_context(2, host_ctx(2)).ok());  // known to it: reject posts at once
    const uint64_t held_at = hal.now_cycles();
    plat.hold_reset(true);
    ASSERT_TRUE(plat.reset_held());
    {
      const Span s(hal);
      EXPECT_EQ(hal.read32(R::reg::ID), 0xFFFF'FFFFu);
      EXPECT_EQ(s.elapsed(), 2 * kCycle) << "a read while held takes 2 cycles";
    }
    {
      const Span s(hal);
      auto r = dev->wait_cm_ready(kWait);
      expect_bounded_error("wait_cm_ready", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = dev->cqp_nop();
      expect_bounded_error("CQP NOP (cqp_timeout)", r, s, kCqpTimeout);
    }
    {
      const Span s(hal);
      auto r = dev->cqp_write_context(2, host_ctx(2));
      expect_bounded_error("CQP WRITE_CM_CONTEXT", r, s, kCqpTimeout);
    }
    {
      // Preconditions read all ones (CM_CONNS 0xFFFFFFFF): kState at once, nothing posted.
      bouncer::SelftestOptions so;
      so.timeout = kWait;
      const Span s(hal);
      auto r = bouncer::run_loopback_selftest(*dev, so);
      expect_bounded_error("loopback self-test", r, s, Ns{0}, Errc::kState);
    }
    const uint16_t idx = post(*dev, 1);
    {
      const Span s(hal);
      auto r = dev->wait_completion_for(idx, kWait);
      expect_bounded_error("post_reject + wait_completion_for", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = dev->wait_completion(kWait);
      expect_bounded_error("wait_completion", r, s, kWait);
    }
    bouncer::RejectOptions o;
    o.timeout = kWait;
    const auto pd = pattern_pd(8, 9);
    {
      // The diagnostic path is fenced: CM_CONNS reads all ones, so it refuses at once and
      // posts nothing (a held core might still own every cm_id).
      const Span s(hal);
      auto r = cm->reject(2, pd, o);
      expect_bounded_error("ContextDiag::reject (fence)", r, s, Ns{0}, Errc::kState);
      EXPECT_NE(r.error().message.find("CM_CONNS reads 0xFFFFFFFF"), std::string::npos)
          << r.error().message;
    }
    cm.reset();
    EXPECT_FALSE(dev->poll_aeq().has_value());
    EXPECT_EQ(dev->sq_outstanding(), 1u);
    {
      // A second open while held: ID reads all ones.
      const Span s(hal);
      auto r = Device::open(hal, base_config());
      expect_bounded_error("Device::open", r, s, Ns{0}, Errc::kNoDevice);
    }
    // Close: CTRL = 0 is dropped, STATUS reads busy, the idle wait gives up after its bound.
    expect_close_bounded(dev, hal, kCqpTimeout, kCqpTimeout + kSlack);
    EXPECT_TRUE(plat.tx_frames().empty()) << "nothing may be sent while held";
    const uint64_t released_at = hal.now_cycles();
    plat.hold_reset(false);
    ASSERT_FALSE(plat.reset_held());
    const auto st = plat.stats();
    EXPECT_EQ(st.reset_holds, 1u);
    EXPECT_EQ(st.reset_held_cycles, released_at - held_at);
    EXPECT_GT(st.mmio_in_reset, 0u);
    EXPECT_EQ(st.tx_frames_aborted, 0u);
    std::printf(
        "[ reset    ] held %llu cycles, %llu MMIO words answered by the platform, %llu DMA "
        "bursts dropped at the assertion\n",
        static_cast<unsigned long long>(st.reset_held_cycles),
        static_cast<unsigned long long>(st.mmio_in_reset),
        static_cast<unsigned long long>(st.dma_abandoned));

    // Recovery: open again (the reset wiped rings, contexts and settings) and reject.
    const Span s(hal);
    auto again = Device::open(hal, base_config());
    ASSERT_TRUE(again.ok()) << again.error().message;
    dev = std::move(again).value();
    ASSERT_TRUE(dev->wait_cm_ready(kLong).ok());
    std::printf("[ recovery ] open + CM_READY %llu cycles after the release\n",
                cycles_of(s.elapsed()));
    EXPECT_EQ(hal.read32(R::reg::CM_CONNS), 0u);
    ASSERT_TRUE(dev->cqp_write_context(1, host_ctx(1)).ok());
    expect_ok(*dev, post(*dev, 1, 100), 1);
    EXPECT_TRUE(dev->cqp_nop().ok());
    EXPECT_FALSE(dev->poll_cq().has_value());
    EXPECT_EQ(dev->sq_outstanding(), 0u);
    EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001}));
}

INSTANTIATE_TEST_SUITE_P(Width, HeldInReset, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

// The device is held from the start: open says there is no device (ID reads all ones) at
// once; after the release it opens.
TEST(HeldInResetAtOpen, NoDeviceThenOpens) {
  sim::Platform plat(platform_config());
  plat.hold_reset(true);
  plat.run([&](bouncer::hal::Device& hal) {
    {
      const Span s(hal);
      auto r = Device::open(hal, base_config());
      expect_bounded_error("Device::open (held from the start)", r, s, Ns{0}, Errc::kNoDevice);
      EXPECT_NE(r.error().message.find("0xFFFFFFFF"), std::string::npos) << r.error().message;
    }
    plat.hold_reset(false);
    auto dev = open_ready(hal);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(3, host_ctx(3)).ok());
    expect_ok(*dev, post(*dev, 3), 3);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40003}));
}

// Reads of a core in reset as 0 instead (PlatformConfig::reset_read_value): the same waits
// time out; open says no device (ID 0); closing finds the engines idle at once.
TEST(HeldInResetZeroReads, WaitsTimeOut) {
  sim::PlatformConfig pc = platform_config();
  pc.reset_read_value = 0;
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = open_ready(hal);
    ASSERT_TRUE(dev);
    plat.hold_reset(true);
    EXPECT_EQ(hal.read32(R::reg::ID), 0u);
    {
      const Span s(hal);
      auto r = dev->wait_cm_ready(kWait);
      expect_bounded_error("wait_cm_ready (reads 0)", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = dev->cqp_nop();
      expect_bounded_error("CQP NOP (reads 0)", r, s, kCqpTimeout);
    }
    {
      const Span s(hal);
      auto r = bouncer::run_loopback_selftest(*dev);
      expect_bounded_error("loopback self-test (reads 0)", r, s, Ns{0}, Errc::kState);
    }
    const uint16_t idx = post(*dev, 1);
    {
      const Span s(hal);
      auto r = dev->wait_completion_for(idx, kWait);
      expect_bounded_error("wait_completion_for (reads 0)", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = Device::open(hal, base_config());
      expect_bounded_error("Device::open (reads 0)", r, s, Ns{0}, Errc::kNoDevice);
    }
    expect_close_bounded(dev, hal, Ns{0}, kQuietClose);
    plat.hold_reset(false);
    dev = open_ready(hal);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(1, host_ctx(1)).ok());
    expect_ok(*dev, post(*dev, 1), 1);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001}));
}

// Reset asserted in the middle of the work: a TX frame half sent (slow TX port) and DMA reads
// in flight. The platform drops them (reset together with the core); nothing of the old work
// is sent after the release; the waits for it time out; re-opened, the device works.
TEST(HeldInResetMidFrame, DropsWorkInFlight) {
  sim::PlatformConfig pc = platform_config();
  pc.tx_ready_prob = 0.02;
  sim::Platform plat(pc);
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = open_ready(hal);
    ASSERT_TRUE(dev);
    for (uint32_t id = 1; id <= 4; ++id) ASSERT_TRUE(dev->cqp_write_context(id, host_ctx(id)).ok());
    std::vector<uint16_t> idx;
    for (uint32_t id = 1; id <= 4; ++id) idx.push_back(post(*dev, id, 200));
    // Until the first frame is on its way out (some beats taken, no tlast yet).
    for (int i = 0; i < 200'000 && plat.stats().tx_beats == 0; ++i) hal.wait_cycles(1);
    ASSERT_GT(plat.stats().tx_beats, 0u);
    ASSERT_TRUE(plat.tx_frames().empty());
    plat.hold_reset(true);
    plat.set_tx_ready_prob(1.0);
    const auto st = plat.stats();
    EXPECT_EQ(st.tx_frames_aborted, 1u);
    std::printf("[ reset    ] DMA bursts dropped at the assertion: %llu\n",
                static_cast<unsigned long long>(st.dma_abandoned));
    for (uint16_t i : idx) {
      const Span s(hal);
      auto r = dev->wait_completion_for(i, kWait);
      expect_bounded_error("wait_completion_for (work in flight)", r, s, kWait);
    }
    expect_close_bounded(dev, hal, kCqpTimeout, kCqpTimeout + kSlack);
    plat.hold_reset(false);
    hal.wait_cycles(50'000);
    EXPECT_TRUE(plat.tx_frames().empty()) << "the old work must not be sent after the reset";
    dev = open_ready(hal);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(2, host_ctx(2)).ok());
    expect_ok(*dev, post(*dev, 2, 200), 2);
    EXPECT_FALSE(dev->poll_cq().has_value());
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40002}));
}

// Engines wedged, clock running: the control WQE fetch is never answered and the DMA read
// watchdog is off (DMA_TIMEOUT 0), so no DMA read can start (SQ WQE fetches wait behind it).
// Every wait times out; the CM engine is not wedged (CM_READY stays). Recovery as
// docs/reliability.md "DMA faults" says: the fault gone, writing DMA_TIMEOUT ends the stuck
// read with DMA/DMA_WQE, and the waiting work completes, each once.
TEST(Wedged, DmaReadNeverAnswered) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.dma_timeout_cycles = 0;
    auto dev = open_ready(hal, dc);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(1, host_ctx(1)).ok());
    auto cm = std::make_unique<bouncer::ContextDiag>(*dev);
    ASSERT_TRUE(cm->write_context(2, host_ctx(2)).ok());
    const uint64_t cqp = dev->cqp().device_addr();
    plat.inject_dma_fault(cqp, cqp + uint64_t{dc.cqp_entries} * R::kCqpWqeBytes,
                          sim::DmaFault::kNoResponse);
    {
      const Span s(hal);
      auto r = dev->cqp_nop();
      expect_bounded_error("CQP NOP (read never answered)", r, s, kCqpTimeout);
    }
    EXPECT_EQ(R::field::STATUS::CQP_BUSY.get(hal.read32(R::reg::STATUS)), 1u);
    const uint16_t a = post(*dev, 1);
    {
      const Span s(hal);
      auto r = dev->wait_completion_for(a, kWait);
      expect_bounded_error("wait_completion_for (wedged)", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = dev->wait_completion(kWait);
      expect_bounded_error("wait_completion (wedged)", r, s, kWait);
    }
    {
      bouncer::RejectOptions o;
      o.timeout = kWait;
      const auto pd = pattern_pd(8, 2);
      const Span s(hal);
      auto r = cm->reject(2, pd, o);
      expect_bounded_error("ContextDiag::reject (wedged)", r, s, kWait);
    }
    EXPECT_FALSE(dev->poll_aeq().has_value());
    EXPECT_TRUE(dev->wait_cm_ready(kPoll).ok()) << "the CM engine is not wedged";
    EXPECT_TRUE(plat.tx_frames().empty());
    EXPECT_EQ(plat.stats().dma_unanswered, 1u);

    // Recovery: remove the fault, turn the watchdog on.
    plat.clear_dma_errors();
    hal.write32(R::reg::DMA_TIMEOUT, 2'000);
    expect_ok(*dev, a, 1);
    {
      // ContextDiag::reject gave its WQE (cm_id 2) up when it timed out: the completion frees its
      // slot when it is reaped and goes to Device::poll_abandoned, never to poll_cq.
      for (int i = 0; i < 10'000 && dev->stats().abandoned_completed == 0; ++i) {
        EXPECT_FALSE(dev->poll_cq().has_value());
        hal.wait_cycles(32);
      }
      auto c = dev->poll_abandoned();
      ASSERT_TRUE(c.has_value());
      EXPECT_EQ(c->cm_id, 2u);
      EXPECT_EQ(c->wqe_idx, a + 1);
      EXPECT_TRUE(c->ok()) << c->status();
      EXPECT_EQ(dev->stats().sq_abandoned, 1u);
    }
    cm.reset();
    ASSERT_TRUE(dev->cqp_nop().ok()) << "the late CCQE (DMA/DMA_WQE) is consumed on the way";
    EXPECT_EQ(hal.read32(R::reg::STAT_DMA_TIMEOUT), 1u);
    EXPECT_EQ(dev->sq_outstanding(), 0u);
    EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
    EXPECT_EQ(dev->stats().unexpected_ccqes, 0u);
    expect_close_bounded(dev, hal, Ns{0}, kQuietClose);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001, 40002}));
}

// The self-test on wedged engines: its first control command never completes; it ends with
// kTimeout (each command bounded by cqp_timeout) and restores CTRL.
TEST(Wedged, SelftestTimesOut) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.dma_timeout_cycles = 0;
    auto dev = open_ready(hal, dc);
    ASSERT_TRUE(dev);
    const uint64_t cqp = dev->cqp().device_addr();
    plat.inject_dma_fault(cqp, cqp + uint64_t{dc.cqp_entries} * R::kCqpWqeBytes,
                          sim::DmaFault::kNoResponse);
    bouncer::SelftestOptions so;
    so.timeout = kWait;
    const Span s(hal);
    auto r = bouncer::run_loopback_selftest(*dev, so);
    const Ns t = s.elapsed();
    std::printf("[ bounded  ] %-40s %-8s after %6llu cycles\n", "loopback self-test (wedged)",
                r.ok() ? "ok" : bouncer::errc_name(r.error().code), cycles_of(t));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kTimeout) << r.error().message;
    // CREATE_LISTENER times out; nothing else was posted, the clean-up only restores CTRL.
    EXPECT_GE(t, kCqpTimeout);
    EXPECT_LE(t, kCqpTimeout + 4 * kSlack);
    EXPECT_EQ(R::field::CTRL::LOOPBACK.get(hal.read32(R::reg::CTRL)), 0u);
    EXPECT_TRUE(plat.tx_frames().empty());
    // Close while wedged: the idle wait gives up after its bound.
    expect_close_bounded(dev, hal, kCqpTimeout, kCqpTimeout + kSlack);
  });
}

// CTRL.ENABLE cleared behind the driver's back: the engines take nothing; the waits time out.
// Enabling again runs the waiting work, each WQE once.
TEST(Wedged, EnableCleared) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = open_ready(hal);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(1, host_ctx(1)).ok());
    const uint32_t ctrl = hal.read32(R::reg::CTRL);
    hal.write32(R::reg::CTRL, 0);
    const uint16_t a = post(*dev, 1);
    {
      const Span s(hal);
      auto r = dev->wait_completion_for(a, kWait);
      expect_bounded_error("wait_completion_for (ENABLE 0)", r, s, kWait);
      EXPECT_NE(r.error().message.find("CTRL.ENABLE 0"), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find("the engine has not finished it"), std::string::npos)
          << r.error().message;
    }
    {
      const Span s(hal);
      auto r = dev->cqp_nop();
      expect_bounded_error("CQP NOP (ENABLE 0)", r, s, kCqpTimeout);
    }
    EXPECT_TRUE(plat.tx_frames().empty());
    hal.write32(R::reg::CTRL, ctrl);
    expect_ok(*dev, a, 1);
    EXPECT_TRUE(dev->cqp_nop().ok());
    EXPECT_EQ(dev->stats().unexpected_ccqes, 0u);
    EXPECT_FALSE(dev->poll_cq().has_value());
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001}));
}

// A synchronous reject times out (CTRL.ENABLE cleared behind the driver) and its CQE comes
// once the engines run again. The caller only ever calls reject(): the late completion must
// not keep its slot, or the 4-slot SQ would be full one lap later (kRingFull).
TEST(Wedged, TimedOutRejectDoesNotWedgeTheSq) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.sq_entries = 4;
    dc.cq_entries = 4;
    auto dev = open_ready(hal, dc);
    ASSERT_TRUE(dev);
    bouncer::ContextDiag cm(*dev);
    for (uint32_t id = 1; id <= 9; ++id) ASSERT_TRUE(cm.write_context(id, host_ctx(id)).ok());
    const uint32_t ctrl = hal.read32(R::reg::CTRL);
    hal.write32(R::reg::CTRL, 0);
    const auto pd = pattern_pd(8, 1);
    bouncer::RejectOptions o;
    o.timeout = kWait;
    {
      const Span s(hal);
      auto r = cm.reject(1, pd, o);
      expect_bounded_error("ContextDiag::reject (ENABLE 0)", r, s, kWait);
      EXPECT_NE(r.error().message.find("gave the WQE up"), std::string::npos) << r.error().message;
    }
    hal.write32(R::reg::CTRL, ctrl);
    for (uint32_t id = 2; id <= 9; ++id) {  // two laps and more of the 4-slot SQ
      auto c = cm.reject(id, pd, o);
      ASSERT_TRUE(c.ok()) << "reject " << id << ": " << c.error().message;
      EXPECT_EQ(c->cm_id, id);
    }
    EXPECT_EQ(dev->stats().sq_abandoned, 1u);
    EXPECT_EQ(dev->stats().abandoned_completed, 1u);
    EXPECT_EQ(dev->sq_outstanding(), 0u);
    EXPECT_FALSE(cm.poll().has_value()) << "the late completion is never handed out";
    EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
  });
  EXPECT_EQ(wire_ports(plat),
            (std::vector<uint16_t>{40001, 40002, 40003, 40004, 40005, 40006, 40007, 40008, 40009}));
}

// Write responses that never come (docs/reliability.md "DMA faults": "the device must be
// reset"): after 8 bursts without B no DMA write starts; the waits time out. Recovery: reset
// (hold and release), fault gone, open again; the device works.
TEST(Wedged, WriteResponseLostNeedsReset) {
  sim::Platform plat(platform_config());
  plat.run([&](bouncer::hal::Device& hal) {
    auto dc = base_config();
    dc.sq_entries = 16;
    dc.cq_entries = 16;
    auto dev = open_ready(hal, dc);
    ASSERT_TRUE(dev);
    const uint64_t cq = dev->cq().device_addr();
    plat.inject_dma_fault(cq, cq + 16 * R::kCqeBytes, sim::DmaFault::kNoResponse);
    for (int i = 0; i < 12; ++i) ASSERT_TRUE(dev->post_nop(static_cast<uint64_t>(i)).ok());
    {
      const Span s(hal);
      auto r = dev->wait_completion(kWait);
      expect_bounded_error("wait_completion (B never comes)", r, s, kWait);
    }
    {
      const Span s(hal);
      auto r = dev->cqp_nop();
      expect_bounded_error("CQP NOP (B never comes)", r, s, kCqpTimeout);
    }
    EXPECT_EQ(plat.stats().dma_unanswered, 8u);
    expect_close_bounded(dev, hal, kCqpTimeout, kCqpTimeout + kSlack);
    plat.clear_dma_errors();
    plat.hold_reset(true);
    plat.hold_reset(false);
    dev = open_ready(hal, dc);
    ASSERT_TRUE(dev);
    ASSERT_TRUE(dev->cqp_write_context(5, host_ctx(5)).ok());
    expect_ok(*dev, post(*dev, 5), 5);
    EXPECT_TRUE(dev->cqp_nop().ok());
    EXPECT_FALSE(dev->poll_cq().has_value());
    EXPECT_EQ(hal.read32(R::reg::CQ_TAIL), 1u);
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40005}));
}

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
