// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer::Device against the fake hardware: bring-up, control queue, SQ doorbell and push,
// ring wrap, full detection, PD placement and lifetime, error CQEs, duplicate CQEs; several
// SQs (num_sq validation, per-SQ registers, doorbell values, push pages, ring-full and
// completions per SQ, round-robin service).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/device_faults.hpp"
#include "fake_memory_param.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;
namespace r = regs::reg;

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(),
                 [](char c) { return std::byte(static_cast<uint8_t>(c)); });
  return v;
}

std::vector<uint8_t> u8(std::span<const std::byte> s) {
  std::vector<uint8_t> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(),
                 [](std::byte b) { return std::to_integer<uint8_t>(b); });
  return v;
}

CmContext ctx_rev(uint8_t rev, bool enhanced) {
  CmContext c;
  c.rem_mac = {0x02, 0, 0, 0, 1, 2};
  c.loc_mac = {0x02, 0, 0, 0, 0, 1};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000002;
  c.loc_port = 20049;
  c.rem_port = 50000;
  c.snd_nxt = 1000;
  c.rcv_nxt = 2000;
  c.req_rev = rev;
  c.req_flags = enhanced ? 0x50 : 0x40;
  return c;
}

class DeviceTest : public ::testing::TestWithParam<testing::FakeMemory> {
 protected:
  void open(DeviceConfig cfg = {}) {
    auto d = Device::open(hal, cfg);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
  }
  Completion wait(uint16_t idx) {
    auto c = dev->wait_completion_for(idx, 400us);
    EXPECT_TRUE(c) << (c ? "" : c.error().message);
    return c ? *c : Completion{};
  }
  FakeHal hal{testing::fake_config(GetParam())};
  std::unique_ptr<Device> dev;
};

BOUNCER_ALL_FAKE_MEMORIES(DeviceTest);

// ------------------------------------------------------------------------------- bring-up

TEST_P(DeviceTest, OpenProgramsRingsAndEnablesLast) {
  open();
  EXPECT_EQ(dev->caps().ctx_depth, 64u);
  EXPECT_TRUE(dev->caps().push);
  EXPECT_TRUE(dev->caps().inline_pd);
  auto base = [&](uint32_t lo) {
    return uint64_t{hal.reg(lo)} | (uint64_t{hal.reg(lo + 4)} << 32);
  };
  EXPECT_EQ(base(r::SQ_BASE_LO), dev->sq().device_addr());
  EXPECT_EQ(base(r::CQ_BASE_LO), dev->cq().device_addr());
  EXPECT_EQ(base(r::CQP_BASE_LO), dev->cqp().device_addr());
  EXPECT_EQ(base(r::CCQ_BASE_LO), dev->ccq().device_addr());
  EXPECT_GT(dev->sq().device_addr(), 0xFFFFFFFFull);  // the HI words are really used
  EXPECT_EQ(hal.reg(r::SQ_SIZE), 6u);
  EXPECT_EQ(hal.reg(r::CQ_SIZE), 6u);
  EXPECT_EQ(hal.reg(r::CQP_SIZE), 4u);
  EXPECT_EQ(hal.reg(r::CCQ_SIZE), 4u);
  ASSERT_GE(hal.writes.size(), 2u);
  // the bucket-hash key, then the takeover that loads it: CTRL.RESET, ENABLE 0
  EXPECT_EQ(hal.writes[0].offset, r::HASH_KEY);
  EXPECT_EQ(hal.writes[1].offset, r::CTRL);
  EXPECT_EQ(hal.writes[1].value, regs::field::CTRL::RESET.put(1));
  EXPECT_EQ(hal.resets(), 1u);
  EXPECT_EQ(hal.writes.back().offset, r::CTRL);
  EXPECT_EQ(hal.writes.back().value, 1u);
  EXPECT_EQ(hal.last_write(r::CQ_HEAD), 0u);
  EXPECT_EQ(hal.last_write(r::CCQ_HEAD), 0u);
}

TEST_P(DeviceTest, OpenRejectsWrongIdAndVersion) {
  hal.cfg.id = 0xDEADBEEF;
  auto d = Device::open(hal);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::kNoDevice);
  EXPECT_NE(d.error().message.find("0xDEADBEEF"), std::string::npos);
  hal.cfg.id = regs::kIdValue;
  hal.cfg.version = (1u << 16);
  d = Device::open(hal);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::kNoDevice);
  EXPECT_TRUE(hal.writes.empty()) << "nothing may be written to a device we do not know";
}

TEST_P(DeviceTest, OpenRejectsBadConfig) {
  DeviceConfig c;
  c.sq_entries = 48;
  auto d = Device::open(hal, c);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::kInvalidArgument);
  c = {};
  c.sq_entries = 128;  // CQ (64) smaller than SQ
  d = Device::open(hal, c);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::kInvalidArgument);
  hal.fail_alloc_after = 2;
  d = Device::open(hal);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, Errc::kNoMemory);
  EXPECT_EQ(hal.live_buffers(), 0u);
}

TEST_P(DeviceTest, CloseStopsTheEnginesAndFreesMemory) {
  open();
  dev.reset();
  EXPECT_EQ(hal.writes.back().offset, r::CTRL);
  EXPECT_EQ(hal.writes.back().value, regs::field::CTRL::RESET.put(1));
  EXPECT_EQ(hal.resets(), 2u) << "open and close each reset the core";
  EXPECT_EQ(hal.live_buffers(), 0u);
}

// A core that never carries CTRL.RESET out may still read or write the Device's memory: close
// says so, and the memory is never handed back.
TEST_P(DeviceTest, CloseKeepsTheMemoryWhenTheCoreDoesNotReset) {
  DeviceConfig c;
  c.reset_timeout = 2us;
  open(c);
  const size_t live = hal.live_buffers();
  ASSERT_GT(live, 0u);
  hal.cfg.reset_hangs = true;
  auto rc = dev->close();
  ASSERT_FALSE(rc);
  EXPECT_EQ(rc.error().code, Errc::kTimeout);
  EXPECT_NE(rc.error().message.find("CTRL.RESET"), std::string::npos) << rc.error().message;
  EXPECT_NE(rc.error().message.find("kept"), std::string::npos) << rc.error().message;
  EXPECT_TRUE(dev->close()) << "close is idempotent";
  dev.reset();
  EXPECT_EQ(hal.live_buffers(), live) << "freed while the core may still use it";
}

// open() takes a device over from an owner that vanished without closing it: listeners,
// connections and rings it left are gone before anything is programmed.
TEST_P(DeviceTest, OpenTakesOverADeviceLeftDirty) {
  open();
  hal.listeners[2] = testing::FakeListener{};
  hal.nodes[5] = testing::FakeNode{};
  hal.write32(r::CTRL, regs::field::CTRL::ENABLE.put(1));
  // Never destroyed: its owner "crashed". Held through a pointer that outlives static
  // destructors so that LeakSanitizer still sees it reachable at exit.
  static auto* crashed = new std::vector<Device*>;
  crashed->push_back(dev.release());
  open();
  EXPECT_EQ(hal.resets(), 2u);
  EXPECT_FALSE(hal.listeners[2].has_value());
  EXPECT_TRUE(hal.nodes.empty());
  EXPECT_EQ(hal.read32(r::CM_CONNS), 0u);
}

// ------------------------------------------------------------------------------- CQP

TEST_P(DeviceTest, ContextWriteReadRoundTrip) {
  open();
  CmContext c = ctx_rev(2, true);
  c.vlan_en = true;
  c.vlan_tci = 0x6123;
  c.req_ird_ord = 0x80104010;
  c.ip_id = 0xBEEF;
  ASSERT_TRUE(dev->cqp_write_context(5, c));
  ASSERT_TRUE(hal.contexts.count(5));
  // The hardware's view, decoded with the TOML fields only.
  const auto& img = hal.contexts[5];
  EXPECT_EQ(regs::get(img, regs::cm_ctx::REM_MAC), 0x020000000102ull);
  EXPECT_EQ(regs::get(img, regs::cm_ctx::LOC_PORT), 20049u);
  EXPECT_EQ(regs::get(img, regs::cm_ctx::CTX_VALID), 1u);
  auto back = dev->cqp_read_context(5);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, c);
  // An entry never written reads as zeros: not valid.
  auto empty = dev->cqp_read_context(6);
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->valid);
}

TEST_P(DeviceTest, CqpWrapsSeveralLapsAndUpdatesCcqHead) {
  open();
  const uint32_t n = dev->cqp().size();
  for (uint32_t i = 0; i < 3 * n + 5; ++i) {
    ASSERT_TRUE(dev->cqp_nop()) << i;
    EXPECT_EQ(hal.last_write(r::CCQ_HEAD), (i + 1) % dev->ccq().size());
    EXPECT_EQ(hal.last_write(r::CQP_DB), (i + 1) % n);
    EXPECT_TRUE(dev->cqp().empty());
  }
  EXPECT_EQ(dev->stats().cqp_ops, 3 * n + 5);
  EXPECT_EQ(dev->stats().unexpected_ccqes, 0u);
  EXPECT_EQ(dev->cqp().polarity(), 0);  // 3 wraps
}

TEST_P(DeviceTest, CqpErrorsNameTheCodes) {
  open();
  auto w = dev->cqp_write_context(64, ctx_rev(1, false));  // depth is 64
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, Errc::kHardware);
  EXPECT_EQ(w.error().hw_major, 0x0200);
  EXPECT_EQ(w.error().hw_minor, 0x0011);
  EXPECT_NE(w.error().message.find("CTX/CM_ID_RANGE (0x0200/0x0011)"), std::string::npos)
      << w.error().message;
  auto b = testing::DeviceFaults::cqp_raw(*dev, 0x3F, 0);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message.find("WQE/BAD_OPCODE (0x0100/0x0001)"), std::string::npos);
  EXPECT_EQ(dev->stats().cqp_errors, 2u);
  EXPECT_TRUE(dev->cqp_nop());  // the queue keeps working
}

TEST_P(DeviceTest, CqpTimeoutThenRecovery) {
  DeviceConfig cfg;
  cfg.cqp_timeout = 2us;
  open(cfg);
  hal.hold = true;
  const auto t0 = hal.host_now();
  auto r1 = dev->cqp_nop();
  ASSERT_FALSE(r1);
  EXPECT_EQ(r1.error().code, Errc::kTimeout);
  EXPECT_GE(hal.host_now() - t0, 2us);
  hal.hold = false;
  // The late CCQE of the timed-out NOP is consumed on the way to this one's.
  ASSERT_TRUE(dev->cqp_write_context(1, ctx_rev(1, false)));
  EXPECT_EQ(dev->stats().unexpected_ccqes, 0u);
  EXPECT_TRUE(dev->cqp().empty());
}

// ------------------------------------------------------------------------------- SQ

TEST_P(DeviceTest, DoorbellPostWritesWqeAndCompletes) {
  open();
  ASSERT_TRUE(dev->cqp_write_context(3, ctx_rev(2, true)));
  const auto pd = bytes_of("hello");
  RejectWqe w;
  w.cm_id = 3;
  w.pd = pd;
  w.wr_id = 0x1122334455667788ull;
  w.ird_ord = 0x8000BFFF;
  w.fin_policy = regs::FinPolicy::IRDMA;
  auto idx = dev->post_reject(w);
  ASSERT_TRUE(idx) << idx.error().message;
  EXPECT_EQ(*idx, 0);
  EXPECT_EQ(hal.last_write(r::SQ_DB), 1u);
  EXPECT_FALSE(hal.last_write(r::SQ_PUSH_DB));
  auto img = dev->sq().wqe(0);
  namespace f = regs::sq_wqe;
  EXPECT_EQ(regs::get(img, f::CM_ID), 3u);
  EXPECT_EQ(regs::get(img, f::PD_LEN), 5u);
  EXPECT_EQ(regs::get(img, f::WR_ID), w.wr_id);
  EXPECT_EQ(regs::get(img, f::OPCODE), 0x20u);
  EXPECT_EQ(regs::get(img, f::PD_INLINE), 1u);
  EXPECT_EQ(regs::get(img, f::IRD_ORD_VALID), 1u);
  EXPECT_EQ(regs::get(img, f::IRD_ORD), 0x8000BFFFu);
  EXPECT_EQ(regs::get(img, f::FIN_POLICY), static_cast<uint64_t>(regs::FinPolicy::IRDMA));
  EXPECT_EQ(regs::get(img, f::PUSHWQE), 0u);
  EXPECT_EQ(regs::get(img, f::VALID), 1u);
  EXPECT_EQ(dev->sq_outstanding(), 1u);
  EXPECT_FALSE(dev->poll_cq()) << "nothing before the hardware ran";

  Completion c = wait(0);
  EXPECT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c.status(), "ok");
  EXPECT_EQ(c.cm_id, 3u);
  EXPECT_EQ(c.wr_id, w.wr_id);
  EXPECT_EQ(c.op, 0x20);
  EXPECT_EQ(c.tcp_seq, 1000u);
  EXPECT_EQ(c.frame_len, 14 + 40 + 20 + 4 + 5);
  EXPECT_GT(c.latency_cycles, 0u);
  EXPECT_FALSE(c.push);
  EXPECT_EQ(hal.last_write(r::CQ_HEAD), 1u);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  ASSERT_EQ(hal.frames.size(), 1u);
  EXPECT_EQ(hal.frames[0].pd, u8(pd));
  EXPECT_TRUE(hal.frames[0].fin);
}

TEST_P(DeviceTest, PushWritesTheSameImageToThePushPage) {
  open();
  ASSERT_TRUE(dev->cqp_write_context(1, ctx_rev(1, false)));
  const auto pd = bytes_of("pushed private data, longer than thirty-two bytes");
  RejectWqe w;
  w.cm_id = 1;
  w.pd = pd;
  w.push = true;
  w.wr_id = 77;
  auto idx = dev->post_reject(w);
  ASSERT_TRUE(idx);
  // one write_push (the backend's one burst) to SQ 0's page, which the default splits into
  // the 16 words of write_block
  ASSERT_EQ(hal.push_bursts, std::vector<uint32_t>{r::push_page(0)});
  ASSERT_EQ(hal.push_images.size(), 1u);
  const auto ring = dev->sq().wqe(*idx);
  std::array<uint32_t, 16> expect{};
  for (size_t i = 0; i < 16; ++i) {
    expect[i] = std::to_integer<uint32_t>(ring[4 * i]) |
                std::to_integer<uint32_t>(ring[4 * i + 1]) << 8 |
                std::to_integer<uint32_t>(ring[4 * i + 2]) << 16 |
                std::to_integer<uint32_t>(ring[4 * i + 3]) << 24;
  }
  EXPECT_EQ(hal.push_images[0], expect);
  EXPECT_EQ(regs::get(ring, regs::sq_wqe::PUSHWQE), 1u);
  EXPECT_EQ(regs::get(ring, regs::sq_wqe::VALID), 1u);
  // push page first, then the push doorbell with the new producer index
  ASSERT_GE(hal.writes.size(), 17u);
  EXPECT_EQ(hal.writes.back().offset, r::SQ_PUSH_DB);
  EXPECT_EQ(hal.writes.back().value, 1u);
  EXPECT_EQ(hal.writes[hal.writes.size() - 2].offset, r::PUSH_PAGE + 60);
  EXPECT_FALSE(hal.last_write(r::SQ_DB));
  Completion c = wait(*idx);
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.push);
  EXPECT_FALSE(c.pshdrop);
  ASSERT_EQ(hal.frames.size(), 1u);
  EXPECT_TRUE(hal.frames[0].from_push);
  EXPECT_EQ(hal.frames[0].pd, u8(pd));
}

TEST_P(DeviceTest, DroppedPushIsReported) {
  hal.cfg.accept_push = false;
  open();
  ASSERT_TRUE(dev->cqp_write_context(1, ctx_rev(1, false)));
  const auto pd = bytes_of("x");
  RejectWqe w;
  w.cm_id = 1;
  w.pd = pd;
  w.push = true;
  auto idx = dev->post_reject(w);
  ASSERT_TRUE(idx);
  Completion c = wait(*idx);
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c.pshdrop);
  EXPECT_EQ(dev->stats().push_dropped, 1u);
  EXPECT_FALSE(hal.frames.at(0).from_push);
}

TEST_P(DeviceTest, PushNeedsThePushPage) {
  hal.cfg.push = false;
  open();
  RejectWqe w;
  w.push = true;
  auto idx = dev->post_reject(w);
  ASSERT_FALSE(idx);
  EXPECT_EQ(idx.error().code, Errc::kInvalidArgument);
}

TEST_P(DeviceTest, SqWrapsSeveralLapsMixingPushAndDoorbell) {
  DeviceConfig cfg;
  cfg.sq_entries = 4;
  cfg.cq_entries = 4;
  open(cfg);
  for (uint32_t id = 0; id < 40; ++id) ASSERT_TRUE(dev->cqp_write_context(id, ctx_rev(2, true)));
  std::vector<uint16_t> idxs;
  for (uint32_t i = 0; i < 40; ++i) {
    const std::string s = "reject " + std::to_string(i);
    const auto pd = bytes_of(s);
    RejectWqe w;
    w.cm_id = i;
    w.pd = pd;
    w.push = i % 3 == 0;
    w.wr_id = i;
    auto idx = dev->post_reject(w);
    ASSERT_TRUE(idx) << i << ": " << idx.error().message;
    EXPECT_EQ(*idx, i % 4);
    // The VALID bit written for this lap.
    EXPECT_EQ(regs::get(dev->sq().wqe(*idx), regs::sq_wqe::VALID), (i / 4) % 2 == 0 ? 1u : 0u);
    Completion c = wait(*idx);
    EXPECT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(c.wr_id, i);
    EXPECT_EQ(c.wqe_idx, i % 4);
    EXPECT_EQ(hal.last_write(r::CQ_HEAD), (i + 1) % 4);
  }
  EXPECT_EQ(hal.frames.size(), 40u);
  EXPECT_EQ(dev->stats().sq_completed, 40u);
  EXPECT_EQ(dev->stats().unexpected_cqes, 0u);
}

TEST_P(DeviceTest, FullRingIsDetectedAndDrains) {
  DeviceConfig cfg;
  cfg.sq_entries = 8;
  cfg.cq_entries = 8;
  open(cfg);
  for (uint64_t lap = 0; lap < 3; ++lap) {
    hal.hold = true;
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(dev->post_nop(lap * 100 + i)) << i;
    auto full = dev->post_nop(999);
    ASSERT_FALSE(full);
    EXPECT_EQ(full.error().code, Errc::kRingFull);
    EXPECT_EQ(dev->sq_outstanding(), 7u);
    hal.hold = false;
    for (int i = 0; i < 7; ++i) {
      auto c = dev->wait_completion(400us);
      ASSERT_TRUE(c) << c.error().message;
      EXPECT_EQ(c->wr_id, lap * 100 + i);  // in order, each exactly once
      EXPECT_EQ(c->op, 0x0C);
    }
    EXPECT_FALSE(dev->poll_cq());
    EXPECT_TRUE(dev->sq().empty());
  }
}

// post_rejects: a list of WQEs, one SQ_DB for the list (its PI covering every WQE); every
// WQE completes once, in order. A bad WQE anywhere in the list posts nothing; a list longer
// than the free room posts the prefix that fits (and still rings the doorbell for it).
TEST_P(DeviceTest, PostRejectsRingsOneDoorbellPerList) {
  DeviceConfig cfg;
  cfg.sq_entries = 8;
  cfg.cq_entries = 8;
  open(cfg);
  for (uint32_t id = 1; id <= 7; ++id) ASSERT_TRUE(dev->cqp_write_context(id, ctx_rev(1, false)));
  const auto pd = bytes_of("batch");
  auto sq_dbs = [&] {
    return std::count_if(hal.writes.begin(), hal.writes.end(),
                         [](const auto& w) { return w.offset == r::SQ_DB; });
  };
  std::vector<RejectWqe> ws(5);
  for (uint32_t i = 0; i < 5; ++i) {
    ws[i].cm_id = i + 1;
    ws[i].pd = pd;
    ws[i].wr_id = 100 + i;
  }
  // a bad WQE in the middle: nothing posted, the message names it
  ws[3].cm_id = 0x1000000;
  const auto dbs0 = sq_dbs();
  auto bad = dev->post_rejects(ws);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("WQE 3 of the batch"), std::string::npos)
      << bad.error().message;
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  EXPECT_EQ(sq_dbs(), dbs0);
  ws[3].cm_id = 4;
  ws[1].push = true;
  auto push = dev->post_rejects(ws);
  ASSERT_FALSE(push);
  EXPECT_EQ(push.error().code, Errc::kInvalidArgument);
  ws[1].push = false;

  hal.hold = true;
  auto idx = dev->post_rejects(ws);
  ASSERT_TRUE(idx) << idx.error().message;
  EXPECT_EQ(*idx, (std::vector<uint16_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sq_dbs(), dbs0 + 1) << "one doorbell for the list";
  EXPECT_EQ(hal.last_write(r::SQ_DB), 5u) << "its PI covers every WQE";
  EXPECT_EQ(dev->stats().sq_doorbells, 1u);
  EXPECT_EQ(dev->sq_outstanding(), 5u);
  // 2 slots left of 7: a list of 3 posts 2, with its doorbell
  std::vector<RejectWqe> more(3, ws[0]);
  for (uint32_t i = 0; i < 3; ++i) {
    more[i].cm_id = 6 + i;
    more[i].wr_id = 200 + i;
  }
  auto part = dev->post_rejects(more);
  ASSERT_TRUE(part) << part.error().message;
  EXPECT_EQ(*part, (std::vector<uint16_t>{5, 6}));
  EXPECT_EQ(sq_dbs(), dbs0 + 2);
  EXPECT_EQ(hal.last_write(r::SQ_DB), 7u);
  auto none = dev->post_rejects(more);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::kRingFull);
  EXPECT_EQ(sq_dbs(), dbs0 + 2) << "no doorbell when nothing was posted";
  hal.hold = false;
  const uint64_t want[] = {100, 101, 102, 103, 104, 200, 201};
  for (uint64_t w : want) {
    auto c = dev->wait_completion(400us);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->wr_id, w);  // in order, each exactly once
    EXPECT_TRUE(c->ok()) << c->status() << " wr_id " << w;
  }
  EXPECT_FALSE(dev->poll_cq());
}

TEST_P(DeviceTest, HardwareHoldsBackWhenCqHeadIsNotAdvanced) {
  DeviceConfig cfg;
  cfg.sq_entries = 4;
  cfg.cq_entries = 4;
  open(cfg);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev->post_nop(i));
  hal.run();
  hal.settle();                  // the CQEs have landed before the one-shot polls below
  EXPECT_EQ(hal.cq_tail(), 3u);  // CQ of 4 holds at most 3 before the host moves CQ_HEAD
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev->poll_cq());
  EXPECT_EQ(hal.last_write(r::CQ_HEAD), 3u);
}

TEST_P(DeviceTest, InlineOrBufferPlacement) {
  open();
  ASSERT_TRUE(dev->cqp_write_context(0, ctx_rev(1, false)));
  ASSERT_TRUE(dev->cqp_write_context(1, ctx_rev(1, false)));
  ASSERT_TRUE(dev->cqp_write_context(2, ctx_rev(1, false)));
  std::vector<std::byte> pd32(32), pd33(33), pd5(5);
  for (size_t i = 0; i < 33; ++i) {
    if (i < 32) pd32[i] = std::byte(0xA0 + i);
    pd33[i] = std::byte(i);
    if (i < 5) pd5[i] = std::byte(0x55);
  }
  RejectWqe w;
  w.cm_id = 0;
  w.pd = pd32;
  auto i0 = dev->post_reject(w);
  w.cm_id = 1;
  w.pd = pd33;
  auto i1 = dev->post_reject(w);
  w.cm_id = 2;
  w.pd = pd5;
  w.allow_inline = false;
  auto i2 = dev->post_reject(w);
  ASSERT_TRUE(i0 && i1 && i2);
  namespace f = regs::sq_wqe;
  auto a = dev->sq().wqe(*i0);
  EXPECT_EQ(regs::get(a, f::PD_INLINE), 1u);
  EXPECT_EQ(regs::get(a, f::PD_ADDR), 0u);
  EXPECT_EQ(0, std::memcmp(a.data() + 32, pd32.data(), 32));
  auto b = dev->sq().wqe(*i1);
  EXPECT_EQ(regs::get(b, f::PD_INLINE), 0u);
  EXPECT_EQ(regs::get(b, f::PD_ADDR), dev->pd_slot_addr(*i1));
  EXPECT_EQ(regs::get(b, f::PD_ADDR) % 8, 0u);
  auto c = dev->sq().wqe(*i2);
  EXPECT_EQ(regs::get(c, f::PD_INLINE), 0u);
  EXPECT_EQ(regs::get(c, f::PD_ADDR), dev->pd_slot_addr(*i2));
  for (uint16_t i : {*i0, *i1, *i2}) EXPECT_TRUE(wait(i).ok());
  ASSERT_EQ(hal.frames.size(), 3u);
  EXPECT_EQ(hal.frames[0].pd, u8(pd32));
  EXPECT_EQ(hal.frames[1].pd, u8(pd33));
  EXPECT_EQ(hal.frames[2].pd, u8(pd5));
}

TEST_P(DeviceTest, NoInlineWhenTheBuildLacksIt) {
  hal.cfg.inline_pd = false;
  open();
  ASSERT_TRUE(dev->cqp_write_context(0, ctx_rev(1, false)));
  const auto pd = bytes_of("tiny");
  RejectWqe w;
  w.pd = pd;
  auto idx = dev->post_reject(w);
  ASSERT_TRUE(idx);
  EXPECT_EQ(regs::get(dev->sq().wqe(*idx), regs::sq_wqe::PD_INLINE), 0u);
  EXPECT_TRUE(wait(*idx).ok());
  EXPECT_EQ(hal.frames.at(0).pd, u8(pd));
}

TEST_P(DeviceTest, PdIsCopiedAndStaysValidUntilTheCompletion) {
  open();
  for (uint32_t id = 0; id < 3; ++id) ASSERT_TRUE(dev->cqp_write_context(id, ctx_rev(1, false)));
  hal.hold = true;
  std::vector<std::byte> user(100);  // one caller buffer, reused after every post
  std::vector<std::vector<uint8_t>> sent;
  std::vector<uint16_t> idxs;
  for (uint32_t k = 0; k < 3; ++k) {
    std::fill(user.begin(), user.end(), std::byte(0x10 + k));
    sent.push_back(u8(user));
    RejectWqe w;
    w.cm_id = k;
    w.pd = user;
    auto idx = dev->post_reject(w);
    ASSERT_TRUE(idx);
    idxs.push_back(*idx);
  }
  std::fill(user.begin(), user.end(), std::byte{0xEE});
  hal.hold = false;
  for (uint16_t i : idxs) EXPECT_TRUE(wait(i).ok());
  ASSERT_EQ(hal.frames.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(hal.frames[k].pd, sent[k]) << k;
}

// The hardware's own checks: WQEs the Cm layer would refuse, posted through Device.
TEST_P(DeviceTest, HardwareErrorCompletions) {
  open();
  ASSERT_TRUE(dev->cqp_write_context(1, ctx_rev(1, false)));
  ASSERT_TRUE(dev->cqp_write_context(2, ctx_rev(2, true)));
  ASSERT_TRUE(dev->cqp_write_context(3, ctx_rev(3, false)));
  CmContext freed = ctx_rev(1, false);
  freed.valid = false;
  ASSERT_TRUE(dev->cqp_write_context(4, freed));
  std::vector<std::byte> pd509(509), pd512(512), pd8(8);

  testing::RejectWqeFaults x;  // raw fields the hardware must refuse
  auto post = [&](RejectWqe w) {
    auto idx = testing::DeviceFaults::post_reject(*dev, w, x);
    EXPECT_TRUE(idx) << idx.error().message;
    return idx ? wait(*idx) : Completion{};
  };
  auto expect = [](const Completion& c, uint16_t major, uint16_t minor, const char* text) {
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(c.error);
    EXPECT_EQ(c.major, major);
    EXPECT_EQ(c.minor, minor);
    EXPECT_EQ(c.status(), text);
    EXPECT_EQ(c.frame_len, 0);
  };
  RejectWqe w;
  w.cm_id = 9;  // never written
  expect(post(w), 0x0200, 0x0012, "CTX/NO_CONTEXT (0x0200/0x0012)");
  w.cm_id = 4;  // written with CTX_VALID = 0
  expect(post(w), 0x0200, 0x0012, "CTX/NO_CONTEXT (0x0200/0x0012)");
  w.cm_id = 64;  // beyond the table
  expect(post(w), 0x0200, 0x0011, "CTX/CM_ID_RANGE (0x0200/0x0011)");
  w.cm_id = 3;  // rev 3
  expect(post(w), 0x0200, 0x0014, "CTX/BAD_REV (0x0200/0x0014)");
  w.cm_id = 2;  // enhanced: 509 + 4 > 512
  w.pd = pd509;
  expect(post(w), 0x0100, 0x0002, "WQE/PD_TOO_LONG (0x0100/0x0002)");
  w.cm_id = 1;  // rev 1: PD_LEN 600 claimed
  w.pd = pd8;
  x.pd_len = 600;
  expect(post(w), 0x0100, 0x0002, "WQE/PD_TOO_LONG (0x0100/0x0002)");
  x.pd_len = 40;  // inline longer than 32
  x.force_inline = true;
  expect(post(w), 0x0100, 0x0002, "WQE/PD_TOO_LONG (0x0100/0x0002)");
  x.pd_len.reset();
  x.force_inline = false;
  x.pd_addr = dev->pd_slot_addr(0) + 4;
  expect(post(w), 0x0100, 0x0004, "WQE/ADDR_MISALIGNED (0x0100/0x0004)");
  x.pd_addr.reset();
  x.opcode = 0x3F;
  expect(post(w), 0x0100, 0x0001, "WQE/BAD_OPCODE (0x0100/0x0001)");
  x.opcode.reset();
  EXPECT_TRUE(hal.frames.empty());

  // rev 1 takes exactly 512; after it, a second reject is BAD_STATE.
  w.pd = pd512;
  Completion ok = post(w);
  EXPECT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok.frame_len, 14 + 40 + 20 + 512);
  w.pd = pd8;
  expect(post(w), 0x0200, 0x0013, "CTX/BAD_STATE (0x0200/0x0013)");
  EXPECT_EQ(dev->stats().sq_errors, 10u);
}

TEST_P(DeviceTest, DuplicateAndUnknownCqesAreReported) {
  open();
  auto idx = dev->post_nop(5);
  ASSERT_TRUE(idx);
  Completion c = wait(*idx);
  EXPECT_TRUE(c.ok());
  hal.inject_cqe(hal.last_cqe());  // the same CQE again
  hal.settle();
  auto dup = dev->poll_cq();
  ASSERT_TRUE(dup);
  EXPECT_TRUE(dup->unexpected);
  EXPECT_FALSE(dup->ok());
  EXPECT_EQ(dup->wqe_idx, *idx);
  EXPECT_NE(dup->status().find("unexpected CQE for wqe_idx 0"), std::string::npos);
  EXPECT_EQ(dev->stats().unexpected_cqes, 1u);
  EXPECT_EQ(hal.last_write(r::CQ_HEAD), 2u) << "consumed all the same";
  // A CQE for a slot that never had a WQE.
  std::array<std::byte, 32> bogus{};
  regs::put(bogus, regs::cqe::WQEIDX, 17);
  regs::put(bogus, regs::cqe::SQ, 1);
  hal.inject_cqe(bogus);
  auto w = dev->wait_completion(4us);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->unexpected);
  EXPECT_EQ(w->wqe_idx, 17);
  EXPECT_EQ(dev->stats().unexpected_cqes, 2u);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  // and the ring still works
  auto again = dev->post_nop(6);
  ASSERT_TRUE(again);
  EXPECT_TRUE(wait(*again).ok());
}

TEST_P(DeviceTest, WaitForOneKeepsTheOthersInOrder) {
  open();
  hal.hold = true;
  std::vector<uint16_t> idxs;
  for (int i = 0; i < 4; ++i) idxs.push_back(dev->post_nop(100 + i).value());
  hal.hold = false;
  Completion c = wait(idxs[2]);
  EXPECT_EQ(c.wr_id, 102u);
  for (uint64_t want : {100u, 101u, 103u}) {
    auto n = dev->wait_completion(400us);
    ASSERT_TRUE(n);
    EXPECT_EQ(n->wr_id, want);
  }
  EXPECT_FALSE(dev->poll_cq());
  auto none = dev->wait_completion_for(idxs[0], 400ns);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::kInvalidArgument);
}

// A completion reaped by a wait for another WQE waits in the stash with its slot reserved:
// no later post may take the same wqe_idx (and PD buffer) before the owner collects it, or
// the owner's wait_completion_for(idx) could return the newer WQE's completion (seen as a
// wr_id mix-up between threads in DriverThreads).
TEST_P(DeviceTest, StashedCompletionKeepsItsSlot) {
  DeviceConfig cfg;
  cfg.sq_entries = 8;
  cfg.cq_entries = 8;
  open(cfg);
  hal.hold = true;
  std::vector<uint16_t> idxs;
  for (int i = 0; i < 4; ++i) idxs.push_back(dev->post_nop(100 + i).value());
  hal.hold = false;
  EXPECT_EQ(wait(idxs[3]).wr_id, 103u);  // 100..102 are reaped on the way and stashed
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  for (int i = 0; i < 3; ++i) {
    auto p = dev->post_nop(200 + i);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(*p, 4 + i);
    EXPECT_EQ(wait(*p).wr_id, 200u + i);
  }
  auto full = dev->post_nop(999);  // slots 0..2 still hold uncollected completions
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, Errc::kRingFull);
  EXPECT_EQ(wait(idxs[0]).wr_id, 100u);
  auto p7 = dev->post_nop(300);
  ASSERT_TRUE(p7) << p7.error().message;
  EXPECT_EQ(*p7, 7u);
  EXPECT_EQ(wait(*p7).wr_id, 300u);
  EXPECT_FALSE(dev->post_nop(998)) << "the ring keeps one slot free: 1..7 are taken";
  EXPECT_EQ(wait(idxs[1]).wr_id, 101u);
  auto p0 = dev->post_nop(301);  // idx 0 again: its old completion was collected
  ASSERT_TRUE(p0) << p0.error().message;
  EXPECT_EQ(*p0, 0u);
  EXPECT_EQ(wait(*p0).wr_id, 301u);
  auto p1 = dev->post_nop(302);  // idx 1 would need idx 2 (102, uncollected) free
  ASSERT_FALSE(p1);
  EXPECT_EQ(p1.error().code, Errc::kRingFull);
  auto c2 = dev->poll_cq();
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->wr_id, 102u);
  auto p1b = dev->post_nop(303);
  ASSERT_TRUE(p1b);
  EXPECT_EQ(*p1b, 1u);
  EXPECT_EQ(wait(*p1b).wr_id, 303u);
  EXPECT_FALSE(dev->poll_cq());
  EXPECT_TRUE(dev->sq().empty());
  EXPECT_EQ(dev->stats().sq_completed, dev->stats().sq_posted);
}

TEST_P(DeviceTest, SqTimeout) {
  open();
  hal.hold = true;
  auto idx = dev->post_nop();
  ASSERT_TRUE(idx);
  auto c = dev->wait_completion_for(*idx, 1200ns);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, Errc::kTimeout);
  hal.hold = false;
  EXPECT_TRUE(wait(*idx).ok()) << "the WQE stays outstanding and completes later";
}

// ------------------------------------------------------------------------------- several SQs

TEST_P(DeviceTest, NumSqMustFitTheDevice) {
  hal.cfg.num_sq = 2;
  for (unsigned n : {0u, 3u, 4u}) {
    DeviceConfig cfg;
    cfg.num_sq = n;
    auto d = Device::open(hal, cfg);
    ASSERT_FALSE(d) << n;
    EXPECT_EQ(d.error().code, Errc::kInvalidArgument) << n;
    EXPECT_NE(d.error().message.find("CAPS.NUM_SQ"), std::string::npos) << d.error().message;
  }
  DeviceConfig cfg;
  cfg.num_sq = 2;
  cfg.sq_entries = 16;
  open(cfg);
  EXPECT_EQ(dev->caps().num_sq, 2u);
  EXPECT_EQ(dev->num_sq(), 2u);
  for (unsigned n = 0; n < 2; ++n) {
    EXPECT_EQ(hal.reg(r::sq_base_lo(n)) | uint64_t{hal.reg(r::sq_base_hi(n))} << 32,
              dev->sq(n).device_addr())
        << n;
    EXPECT_EQ(hal.reg(r::sq_size(n)), 4u) << n;
  }
  EXPECT_NE(dev->sq(0).device_addr(), dev->sq(1).device_addr());
  EXPECT_NE(dev->pd_slot_addr(0, 0), dev->pd_slot_addr(0, 1));
  EXPECT_EQ(dev->pd_slot_addr(0, 1), dev->pd_slot_addr(16, 0)) << "SQ 1's PD buffers follow SQ 0's";
  // an SQ that is not in use: refused, nothing written
  const size_t writes = hal.writes.size();
  RejectWqe w;
  w.sq = 2;
  auto bad = dev->post_reject(w);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, Errc::kInvalidArgument);
  auto nop = dev->post_nop(0, false, 7);
  ASSERT_FALSE(nop);
  EXPECT_EQ(nop.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(hal.writes.size(), writes);
  EXPECT_EQ(dev->sq_outstanding(), 0u);
  // the default is one SQ, whatever the device has
  dev.reset();
  hal.cfg.num_sq = 4;
  open();
  EXPECT_EQ(dev->num_sq(), 1u);
  EXPECT_EQ(dev->caps().num_sq, 4u);
}

TEST_P(DeviceTest, DoorbellsAndPushPagesNameTheSq) {
  DeviceConfig cfg;
  cfg.num_sq = 4;
  cfg.cq_entries = 256;
  open(cfg);
  namespace db = regs::field::SQ_DB;
  for (unsigned q : {3u, 1u, 0u, 2u}) {
    auto idx = dev->post_nop(100 + q, false, q);
    ASSERT_TRUE(idx);
    EXPECT_EQ(*idx, 0u) << "each SQ has its own indices";
    EXPECT_EQ(hal.writes.back().offset, r::SQ_DB);
    EXPECT_EQ(db::SQ.get(hal.writes.back().value), q);
    EXPECT_EQ(db::PI.get(hal.writes.back().value), 1u);
    RejectWqe w;
    w.sq = q;
    w.push = true;
    w.cm_id = 70;  // out of range for the fake (64 cm_ids): an error CQE, the push still used
    auto pidx = dev->post_reject(w);
    ASSERT_TRUE(pidx);
    EXPECT_EQ(*pidx, 1u);
    EXPECT_EQ(hal.writes.back().offset, r::SQ_PUSH_DB);
    EXPECT_EQ(hal.writes.back().value, db::SQ.put(q) | db::PI.put(2));
    EXPECT_EQ(hal.writes[hal.writes.size() - 2].offset, r::push_page(q) + 60);
    ASSERT_FALSE(hal.push_bursts.empty());
    EXPECT_EQ(hal.push_bursts.back(), r::push_page(q)) << "one write_push to SQ " << q << "'s page";
  }
  hal.run();
  for (unsigned q = 0; q < 4; ++q) {
    auto a = dev->wait_completion_for(q, 0, 400us);
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->sq, q);
    EXPECT_EQ(a->wr_id, 100 + q);
    auto b = dev->wait_completion_for(q, 1, 400us);
    ASSERT_TRUE(b) << b.error().message;
    EXPECT_EQ(b->sq, q);
    EXPECT_FALSE(b->pshdrop) << "the push page of SQ " << q << " held its WQE";
    EXPECT_EQ(b->minor, static_cast<uint16_t>(regs::CqMinor::CM_ID_RANGE));
    EXPECT_EQ(hal.sq_ci(q), 2u);
  }
  EXPECT_EQ(hal.read32(r::STAT_PUSH_USED), 4u);
  EXPECT_EQ(hal.read32(r::STAT_SQ_DB_BAD), 0u);
}

TEST_P(DeviceTest, RingFullIsPerSq) {
  DeviceConfig cfg;
  cfg.num_sq = 2;
  cfg.sq_entries = 4;
  cfg.cq_entries = 16;
  open(cfg);
  hal.hold = true;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev->post_nop(i, false, 0)) << i;
  auto full = dev->post_nop(99, false, 0);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, Errc::kRingFull);
  EXPECT_NE(full.error().message.find("SQ 0 full"), std::string::npos) << full.error().message;
  EXPECT_EQ(dev->sq_outstanding(0), 3u);
  EXPECT_EQ(dev->sq_outstanding(1), 0u);
  // SQ 1 still has every slot
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(dev->post_nop(10 + i, false, 1)) << i;
  EXPECT_FALSE(dev->post_nop(99, false, 1));
  EXPECT_EQ(dev->sq_outstanding(), 6u);
  // the fake serves the SQs round-robin: 0, 1, 0, 1, ...
  hal.hold = false;
  std::vector<std::pair<unsigned, uint64_t>> order;
  for (int i = 0; i < 6; ++i) {
    auto c = dev->wait_completion(400us);
    ASSERT_TRUE(c) << c.error().message;
    order.emplace_back(c->sq, c->wr_id);
  }
  const std::vector<std::pair<unsigned, uint64_t>> want = {{0, 0},  {1, 10}, {0, 1},
                                                           {1, 11}, {0, 2},  {1, 12}};
  EXPECT_EQ(order, want);
  EXPECT_EQ(dev->sq_outstanding(0), 0u);
  EXPECT_EQ(dev->sq_outstanding(1), 0u);
  EXPECT_TRUE(dev->sq(0).empty());
  EXPECT_TRUE(dev->sq(1).empty());
}

// The fake models the doorbell decode: an SQ number >= CAPS.NUM_SQ changes nothing.
TEST_P(DeviceTest, FakeIgnoresADoorbellForAnAbsentSq) {
  hal.cfg.num_sq = 2;
  DeviceConfig cfg;
  cfg.num_sq = 2;
  open(cfg);
  ASSERT_TRUE(dev->post_nop(1, false, 1));
  hal.write32(r::SQ_DB, regs::field::SQ_DB::SQ.put(2) | regs::field::SQ_DB::PI.put(3));
  hal.write32(r::SQ_PUSH_DB, regs::field::SQ_DB::SQ.put(9) | regs::field::SQ_DB::PI.put(3));
  EXPECT_EQ(hal.read32(r::STAT_SQ_DB_BAD), 2u);
  auto c = dev->wait_completion(400us);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sq, 1u);
  EXPECT_FALSE(dev->poll_cq()) << "no completion for the ignored doorbells";
  EXPECT_EQ(hal.read32(r::sq_pi(0)), 0u);
  EXPECT_EQ(hal.read32(r::sq_pi(1)), 1u);
}

}  // namespace
}  // namespace bouncer
