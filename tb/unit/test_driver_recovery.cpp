// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// After a wait times out, against the fake device: the error says why the device stopped
// (STATUS and QERR by name: AEQ_FULL, CQ_FULL, DMA_WR_ERR, CTRL.ENABLE), and the driver does
// not wedge itself. A synchronous reject that timed out gives its WQE up (Device::abandon): its
// completion, when it comes, frees the slot and settles the node, so the SQ still takes work a
// lap later; a WQE flushed by reset_sq after it was abandoned gets its slot back too. reset_sq
// flushes only what the hardware never accepted: the WQEs it accepted before a queue error
// still complete, each once.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
using testing::FakeRequest;
namespace r = regs::reg;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

std::unique_ptr<Device> open(FakeHal& hal, DeviceConfig cfg = {}) {
  auto d = Device::open(hal, cfg);
  EXPECT_TRUE(d) << d.error().message;
  return d ? std::move(d).value() : nullptr;
}

DeviceConfig small_sq() {
  DeviceConfig c;
  c.sq_entries = 4;  // 3 usable slots: a lap is 4 WQEs
  c.cq_entries = 4;
  return c;
}

// ------------------------------------------------------------------ the timeout's message

// A reject behind a full AEQ: the CM engine, and the SQ engine with it, waits for the host to
// consume events. A Device-level wait (which does not read the AEQ) says so.
TEST(TimeoutReport, NamesAeqFull) {
  FakeHal hal;
  DeviceConfig cfg;
  cfg.aeq_entries = 4;
  auto dev = open(hal, cfg);
  ASSERT_TRUE(dev);
  Cm cm(*dev);
  ASSERT_TRUE(cm.listen(0, 20049));
  ASSERT_TRUE(dev->cqp_write_context(60, CmContext{}));
  for (uint8_t k = 0; k < 5; ++k) {
    FakeRequest q;
    q.rem_port = static_cast<uint16_t>(40000 + k);
    ASSERT_TRUE(hal.inject_connect_request(q));
  }
  ASSERT_GT(hal.aeq_backlog(), 0u);
  RejectWqe w;
  w.cm_id = 60;
  auto idx = dev->post_reject(w);
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(*idx, 20us);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  EXPECT_TRUE(has(c.error().message, "AEQ_FULL (the CM engine")) << c.error().message;
  EXPECT_TRUE(has(c.error().message, "Cm::poll_event")) << c.error().message;
  // Consuming the events lets the reject go out.
  while (true) {
    auto e = cm.poll_event();
    ASSERT_TRUE(e);
    if (!*e) break;
  }
  auto done = dev->wait_completion_for(*idx, 20us);
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(done->ok()) << done->status();
}

// CQ_HEAD never reaches the device: the SQ engine waits for room in the CQ.
TEST(TimeoutReport, NamesCqFull) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  hal.freeze_cq_head = true;
  for (uint64_t i = 0; i < 3; ++i) {
    auto idx = dev->post_nop(i);
    ASSERT_TRUE(idx);
    ASSERT_TRUE(dev->wait_completion_for(*idx, 20us));
  }
  auto idx = dev->post_nop(3);  // the CQ holds 3: the device sees it full
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(*idx, 20us);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  EXPECT_TRUE(has(c.error().message, "CQ_FULL (the SQ engine waits for room in the CQ"))
      << c.error().message;
  EXPECT_TRUE(has(c.error().message, "the engine has not finished it")) << c.error().message;
  Cm cm(*dev);
  auto e = cm.wait_event(4us);
  ASSERT_FALSE(e);
  EXPECT_TRUE(has(e.error().message, "CQ_FULL")) << e.error().message;
}

// A CQE write fails: the completion is lost, STATUS.DMA_WR_ERR stays set; the engine is past
// the WQE. The message says the CQE is missing and what to do.
TEST(TimeoutReport, NamesDmaWriteError) {
  FakeHal hal;
  auto dev = open(hal);
  ASSERT_TRUE(dev);
  const uint64_t cq = dev->cq().device_addr();
  hal.dma_write_errors.push_back({cq, cq + regs::kCqeBytes});
  auto idx = dev->post_nop(1);
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(*idx, 20us);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  EXPECT_TRUE(has(c.error().message, "DMA_WR_ERR")) << c.error().message;
  EXPECT_TRUE(has(c.error().message, "the engine is past it, its CQE is missing"))
      << c.error().message;
  EXPECT_TRUE(has(c.error().message, "close and reopen the Device")) << c.error().message;
  // The control queue's timeouts and CM_READY say the same.
  hal.hold = true;
  auto nop = dev->cqp_nop();
  ASSERT_FALSE(nop);
  EXPECT_TRUE(has(nop.error().message, "DMA_WR_ERR")) << nop.error().message;
}

// Engines stopped behind the driver's back, and a ring in queue error elsewhere: both named.
TEST(TimeoutReport, NamesEnableAndQueueErrors) {
  FakeHal hal;
  DeviceConfig cfg;
  cfg.num_sq = 2;
  auto dev = open(hal, cfg);
  ASSERT_TRUE(dev);
  hal.write32(r::CTRL, 0);
  hal.qerr = regs::field::QERR::SQ1.put(static_cast<uint32_t>(regs::QerrCause::DB_LAP));
  auto idx = dev->post_nop(1);
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(0u, *idx, 20us);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  EXPECT_TRUE(has(c.error().message, "CTRL.ENABLE 0")) << c.error().message;
  EXPECT_TRUE(has(c.error().message, "SQ 1 DB_LAP")) << c.error().message;
}

// ------------------------------------------------------------------ no wedge after a timeout

// A synchronous reject times out; its CQE comes later. The caller never polls: the SQ must
// still take a lap and more of rejects.
TEST(TimedOutReject, DoesNotWedgeTheSqALapLater) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  ContextDiag diag(*dev);
  for (uint32_t id = 0; id < 10; ++id) ASSERT_TRUE(diag.write_context(id, CmContext{}));
  hal.hold = true;
  RejectOptions o;
  o.timeout = 8us;
  o.wr_id = 100;
  auto r = diag.reject(0, {}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kTimeout);
  EXPECT_TRUE(has(r.error().message, "reject() gave the WQE up")) << r.error().message;
  hal.hold = false;
  for (uint32_t id = 1; id < 10; ++id) {  // three laps of the 4-slot ring
    o.wr_id = 100 + id;
    auto c = diag.reject(id, {}, o);
    ASSERT_TRUE(c) << "reject " << id << ": " << c.error().message;
    EXPECT_EQ(c->wr_id, 100u + id);
    EXPECT_EQ(c->cm_id, id);
  }
  EXPECT_EQ(dev->stats().sq_abandoned, 1u);
  EXPECT_EQ(dev->stats().abandoned_completed, 1u);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  EXPECT_FALSE(diag.poll()) << "the abandoned completion is never handed out";
  EXPECT_TRUE(dev->poll_abandoned()) << "reported at the Device level only";
  EXPECT_EQ(hal.frames.size(), 10u) << "the timed-out reject went out once it could";
}

// The same for a request the application held: the late completion settles the node.
TEST(TimedOutReject, LateCompletionSettlesTheNode) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  Cm cm(*dev);
  ASSERT_TRUE(cm.listen(0, 20049));
  std::vector<ConnHandle> ids;
  for (uint8_t k = 0; k < 6; ++k) {
    FakeRequest q;
    q.rem_port = static_cast<uint16_t>(40000 + k);
    ASSERT_TRUE(hal.inject_connect_request(q));
    auto e = cm.wait_event(4us);
    ASSERT_TRUE(e) << e.error().message;
    ASSERT_TRUE(std::holds_alternative<ConnectRequest>(*e));
    ids.push_back(std::get<ConnectRequest>(*e).handle);
  }
  hal.hold = true;
  RejectOptions o;
  o.timeout = 8us;
  auto r = cm.reject(ids[0], {}, o);
  ASSERT_FALSE(r);
  EXPECT_EQ(cm.node_state(ids[0]), NodeState::kRejecting);
  hal.hold = false;
  for (size_t k = 1; k < ids.size(); ++k) {
    auto c = cm.reject(ids[k], {}, o);
    ASSERT_TRUE(c) << c.error().message;
  }
  EXPECT_EQ(cm.node_state(ids[0]), NodeState::kAwaitTerminal)
      << "its completion (OK) was consumed by the driver";
  EXPECT_EQ(cm.stats().rejects, ids.size());
  EXPECT_EQ(cm.stats().nodes_held, 0u);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  ASSERT_TRUE(hal.finish_node(ids[0].cm_id, regs::AeqEvent::CLOSED));
  EXPECT_TRUE(cm.poll_event());
  EXPECT_EQ(cm.node_state(ids[0]), NodeState::kFree);
}

// Device level: a timed-out wait leaves the WQE posted (wait again, or abandon). Abandoned, its
// completion frees the slot as soon as it is reaped and goes to poll_abandoned().
TEST(Abandon, FreesTheSlotWhenTheCompletionComes) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  hal.hold = true;
  auto idx = dev->post_nop(7);
  ASSERT_TRUE(idx);
  ASSERT_FALSE(dev->wait_completion_for(*idx, 4us));
  ASSERT_TRUE(dev->abandon(0, *idx));
  EXPECT_EQ(dev->abandon(0, *idx).error().code, Errc::kInvalidArgument) << "once";
  EXPECT_EQ(dev->wait_completion_for(*idx, 4us).error().code, Errc::kInvalidArgument);
  hal.hold = false;
  for (uint64_t i = 0; i < 8; ++i) {  // two laps
    auto p = dev->post_nop(10 + i);
    ASSERT_TRUE(p) << p.error().message;
    auto c = dev->wait_completion_for(*p, 20us);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->wr_id, 10 + i);
  }
  auto late = dev->poll_abandoned();
  ASSERT_TRUE(late);
  EXPECT_EQ(late->wr_id, 7u);
  EXPECT_TRUE(late->ok());
  EXPECT_FALSE(dev->poll_abandoned());
  EXPECT_FALSE(dev->poll_cq());
  EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
}

// A completion already reaped (stashed for its owner) when the owner gives up: it moves to
// poll_abandoned() at once and the slot is free.
TEST(Abandon, ACompletionAlreadyReapedMovesAtOnce) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  auto a = dev->post_nop(1);
  auto b = dev->post_nop(2);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(dev->wait_completion_for(*b, 20us));  // reaps a's CQE into the stash
  ASSERT_TRUE(dev->abandon(0, *a));
  auto late = dev->poll_abandoned();
  ASSERT_TRUE(late);
  EXPECT_EQ(late->wr_id, 1u);
  EXPECT_FALSE(dev->poll_cq());
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(dev->post_nop(3 + i)) << "every slot is free";
}

// A WQE abandoned while its SQ is in queue error: reset_sq flushes it straight to
// poll_abandoned(), and its slot is free.
TEST(Abandon, ResetSqGivesAnAbandonedSlotBack) {
  FakeHal hal;
  auto dev = open(hal, small_sq());
  ASSERT_TRUE(dev);
  hal.qerr = regs::field::QERR::SQ0.put(static_cast<uint32_t>(regs::QerrCause::DB_RANGE));
  auto idx = dev->post_nop(9);
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(*idx, 4us);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kQueueError);
  ASSERT_TRUE(dev->abandon(0, *idx));
  auto n = dev->reset_sq(0);
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(hal.qerr, 0u);
  EXPECT_FALSE(dev->poll_cq()) << "the flushed completion is not handed out";
  auto f = dev->poll_abandoned();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->wr_id, 9u);
  EXPECT_EQ(f->minor, static_cast<uint16_t>(regs::CqMinor::FLUSHED));
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(dev->post_nop(20 + i));
}

// ------------------------------------------------------------------ reset_sq's rule

// The engine is stopped with three WQEs accepted, then the SQ goes into queue error and two
// more are posted (never accepted). The engine starts again right after reset_sq's first look
// at the device. reset_sq must let the accepted three complete (OK) and flush only the other
// two; every WQE gets exactly one completion, and the slots reused afterwards get their own.
TEST(ResetSq, FlushesOnlyWhatTheHardwareNeverAccepted) {
  FakeHal hal;
  DeviceConfig cfg;
  cfg.sq_entries = 8;
  cfg.cq_entries = 8;
  auto dev = open(hal, cfg);
  ASSERT_TRUE(dev);
  hal.write32(r::CTRL, 0);
  std::vector<uint16_t> idx;
  for (uint64_t i = 0; i < 3; ++i) idx.push_back(dev->post_nop(100 + i).value());
  EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u);
  hal.qerr = regs::field::QERR::SQ0.put(static_cast<uint32_t>(regs::QerrCause::DB_RANGE));
  for (uint64_t i = 3; i < 5; ++i) idx.push_back(dev->post_nop(100 + i).value());
  EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u) << "doorbells in queue error are ignored";
  bool started = false;
  hal.on_read = [&](uint32_t) {
    if (started) return;
    started = true;
    hal.write32(r::CTRL, regs::field::CTRL::ENABLE.put(1));
  };
  auto n = dev->reset_sq(0);
  hal.on_read = nullptr;
  ASSERT_TRUE(n) << n.error().message;
  EXPECT_EQ(*n, 2u) << "only the WQEs the hardware never accepted are flushed";
  std::multiset<uint64_t> ok, flushed;
  for (size_t k = 0; k < idx.size(); ++k) {
    auto c = dev->wait_completion_for(idx[k], 20us);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->wr_id, 100 + k);
    (c->ok() ? ok : flushed).insert(c->wr_id);
  }
  EXPECT_EQ(ok, (std::multiset<uint64_t>{100, 101, 102}));
  EXPECT_EQ(flushed, (std::multiset<uint64_t>{103, 104}));
  EXPECT_FALSE(dev->poll_cq()) << "no second completion for any of them";
  for (uint64_t i = 0; i < 10; ++i) {
    auto p = dev->post_nop(200 + i);
    ASSERT_TRUE(p) << p.error().message;
    auto c = dev->wait_completion_for(*p, 20us);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->wr_id, 200 + i) << "a completion credited to another WQE";
  }
  EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
}

// An engine that never finishes the WQEs it accepted: reset_sq gives up after cqp_timeout,
// flushes nothing and says what the device shows.
TEST(ResetSq, TimesOutWhileTheEngineHoldsAcceptedWqes) {
  FakeHal hal;
  DeviceConfig cfg;
  cfg.cqp_timeout = 8us;
  auto dev = open(hal, cfg);
  ASSERT_TRUE(dev);
  hal.write32(r::CTRL, 0);
  auto idx = dev->post_nop(5);
  ASSERT_TRUE(idx);
  const auto t0 = hal.host_now();
  auto n = dev->reset_sq(0);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, Errc::kTimeout);
  EXPECT_GE(hal.host_now() - t0, 8us);
  EXPECT_TRUE(has(n.error().message, "SQ_CI 0, SQ_PI 1")) << n.error().message;
  EXPECT_TRUE(has(n.error().message, "CTRL.ENABLE 0")) << n.error().message;
  EXPECT_EQ(dev->sq_outstanding(), 1u) << "nothing flushed";
  hal.write32(r::CTRL, regs::field::CTRL::ENABLE.put(1));
  auto c = dev->wait_completion_for(*idx, 20us);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->ok());
}

}  // namespace
}  // namespace bouncer
