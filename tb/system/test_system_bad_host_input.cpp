// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Bad doorbells and ring bases from a rogue host, against the verilated core ("Bad
// input from the host"): a doorbell index at or above the ring size, a producer index that
// laps the consumer, a ring base or completion-ring base that is not aligned. Each puts the
// ring in its queue-error state (QERR, cause named), nothing is fetched or sent for it, the
// WQEs accepted before it still complete exactly once, the driver reports kQueueError, and
// Device::reset_sq()/reset_cqp() bring the ring back (flushing what the hardware never saw).
// The driver never rings such doorbells itself: the tests write the registers raw.
// reset_sq against an engine that starts right after the driver's first look at the device
// (ResetSqLetsAcceptedWqesFinish): the WQEs accepted before the queue error complete, each
// once, with their frames on the wire; only the others are flushed, and no late CQE is
// credited to a WQE that reuses a slot.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "host_context.hpp"

using namespace std::chrono_literals;

namespace {

using bouncer::Device;
using bouncer::Errc;
namespace R = bouncer::regs;
namespace r = bouncer::regs::reg;
namespace sim = bouncer::sim;

constexpr std::chrono::nanoseconds kWait = 80us;  // 20 000 cycles

sim::PlatformConfig config(unsigned width) {
  sim::PlatformConfig cfg;
  cfg.data_width = width;
  return cfg;
}

bouncer::DeviceConfig small_rings() {
  bouncer::DeviceConfig dc;
  dc.sq_entries = 8;
  dc.cq_entries = 8;
  dc.cqp_entries = 4;
  dc.ccq_entries = 4;
  dc.cqp_timeout = kWait;
  return dc;
}

uint8_t sq_cause(Device& d, unsigned sq = 0) { return d.queue_error().sq.at(sq); }
// SQ_DB / SQ_PUSH_DB value naming SQ `sq`.
uint32_t db(unsigned sq, uint32_t pi) {
  return R::field::SQ_DB::SQ.put(sq) | R::field::SQ_DB::PI.put(pi);
}
constexpr uint8_t cause(R::QerrCause c) { return static_cast<uint8_t>(c); }

// A NOP after recovery completes OK: the ring works again.
void nop_ok(Device& d, uint64_t wr_id) {
  auto idx = d.post_nop(wr_id);
  ASSERT_TRUE(idx.ok()) << idx.error().message;
  auto c = d.wait_completion_for(*idx, kWait);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->ok()) << c->status();
  EXPECT_EQ(c->wr_id, wr_id);
}

class SystemBadHostInput : public ::testing::TestWithParam<unsigned> {};

// Doorbell value >= ring size (SQ_DB and SQ_PUSH_DB): ignored, QERR.SQ0 = DB_RANGE, the ring
// keeps ignoring doorbells (a WQE posted after it is flushed by reset_sq, never executed).
TEST_P(SystemBadHostInput, DoorbellPastRingSize) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, small_rings());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    nop_ok(d, 1);
    for (uint32_t reg : {r::SQ_DB, r::SQ_PUSH_DB}) {
      const uint32_t pi = hal.read32(r::sq_pi(0));
      hal.write32(reg, db(0, 8));  // ring of 8: indices 0..7
      hal.wait_cycles(50);
      EXPECT_EQ(sq_cause(d), cause(R::QerrCause::DB_RANGE));
      EXPECT_EQ(hal.read32(r::sq_pi(0)), pi) << "a refused doorbell must not move SQ_PI";
      // posted while in error: the doorbell is ignored, the wait names the queue error
      auto idx = d.post_nop(77);
      ASSERT_TRUE(idx.ok());
      auto c = d.wait_completion_for(*idx, kWait);
      ASSERT_FALSE(c.ok());
      EXPECT_EQ(c.error().code, Errc::kQueueError) << c.error().message;
      EXPECT_NE(c.error().message.find("DB_RANGE"), std::string::npos) << c.error().message;
      auto n = d.reset_sq();
      ASSERT_TRUE(n.ok()) << n.error().message;
      EXPECT_EQ(*n, 1u);
      auto f = d.wait_completion_for(*idx, kWait);
      ASSERT_TRUE(f.ok()) << f.error().message;
      EXPECT_EQ(f->major, static_cast<uint16_t>(R::CqMajor::DRV));
      EXPECT_EQ(f->minor, static_cast<uint16_t>(R::CqMinor::FLUSHED));
      EXPECT_EQ(f->wr_id, 77u);
      EXPECT_EQ(sq_cause(d), 0);
      EXPECT_EQ(hal.read32(r::sq_ci(0)), 0u);
      nop_ok(d, 2);
    }
    EXPECT_EQ(hal.read32(r::STAT_SQ_WQES), 3u) << "only the good NOPs reached the engine";
    EXPECT_EQ(hal.read32(r::STAT_TX_FRAMES), 0u);
    EXPECT_TRUE(plat.tx_frames().empty());
  });
}

// A producer index that laps the consumer: with the engine stopped, three WQEs are posted,
// then a doorbell that would leave only one of them pending. It is refused (DB_LAP); the three
// accepted before it still complete, each exactly once, when the engine runs again.
TEST_P(SystemBadHostInput, ProducerIndexLapsConsumer) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, small_rings());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    hal.write32(r::CTRL, 0);  // the engine holds still; doorbells are still taken
    std::vector<uint16_t> idx;
    for (uint64_t i = 0; i < 3; ++i) {
      auto p = d.post_nop(100 + i);
      ASSERT_TRUE(p.ok());
      idx.push_back(*p);
    }
    EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u);
    hal.write32(r::SQ_DB, db(0, 1));  // 3 pending -> 1: the producer went round the ring
    hal.wait_cycles(20);
    EXPECT_EQ(sq_cause(d), cause(R::QerrCause::DB_LAP));
    EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u);
    hal.write32(r::CTRL, R::field::CTRL::ENABLE.put(1));
    std::set<uint64_t> seen;
    for (uint16_t i : idx) {
      auto c = d.wait_completion_for(i, kWait);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_TRUE(c->ok()) << c->status();
      seen.insert(c->wr_id);
    }
    EXPECT_EQ(seen, (std::set<uint64_t>{100, 101, 102}));
    EXPECT_EQ(d.sq_outstanding(), 0u);
    EXPECT_FALSE(d.poll_cq().has_value()) << "no second completion for any of them";
    auto n = d.reset_sq();
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(*n, 0u);
    EXPECT_EQ(sq_cause(d), 0);
    nop_ok(d, 3);
    EXPECT_EQ(hal.read32(r::STAT_SQ_WQES), 4u);
  });
}

// Ring bases that are not aligned: the SQ base (64 B) and its CQ base (32 B). The doorbell is
// refused before any DMA is issued from the bad address.
TEST_P(SystemBadHostInput, UnalignedRingBases) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, small_rings());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    nop_ok(d, 1);
    struct Case {
      uint32_t reg;
      uint64_t good;
      uint32_t off;
      R::QerrCause want;
    };
    const Case cases[] = {
        {r::sq_base_lo(0), d.sq().device_addr(), 8, R::QerrCause::RING_ALIGN},
        {r::sq_base_lo(0), d.sq().device_addr(), 32, R::QerrCause::RING_ALIGN},
        {r::CQ_BASE_LO, d.cq().device_addr(), 16, R::QerrCause::CQ_ALIGN},
    };
    uint64_t wr = 10;
    for (const Case& k : cases) {
      const uint32_t ci = hal.read32(r::sq_ci(0));
      hal.write32(k.reg, static_cast<uint32_t>(k.good + k.off));
      auto idx = d.post_nop(wr);
      ASSERT_TRUE(idx.ok());
      auto c = d.wait_completion_for(*idx, kWait);
      ASSERT_FALSE(c.ok());
      EXPECT_EQ(c.error().code, Errc::kQueueError) << c.error().message;
      EXPECT_EQ(sq_cause(d), cause(k.want));
      EXPECT_EQ(hal.read32(r::sq_ci(0)), ci) << "nothing fetched from the bad base";
      hal.write32(k.reg, static_cast<uint32_t>(k.good));
      auto n = d.reset_sq();
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(*n, 1u);
      auto f = d.wait_completion_for(*idx, kWait);
      ASSERT_TRUE(f.ok());
      EXPECT_EQ(f->minor, static_cast<uint16_t>(R::CqMinor::FLUSHED));
      nop_ok(d, 1000 + wr);
      ++wr;
    }
    EXPECT_TRUE(plat.tx_frames().empty());
  });
}

// Each SQ has its own queue-error state: a doorbell past SQ 1's ring size puts SQ 1 alone in
// error (QERR.SQ1); SQ 0 keeps completing meanwhile, the wait on SQ 1 names SQ 1, and
// reset_sq(1) flushes only SQ 1's WQE. A doorbell naming an absent SQ is not a queue error.
TEST_P(SystemBadHostInput, BadDoorbellOnOneSqLeavesTheOthers) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    bouncer::DeviceConfig dc = small_rings();
    dc.num_sq = 2;
    auto dev = Device::open(hal, dc);
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_GE(d.caps().num_sq, 2u);
    nop_ok(d, 1);
    hal.write32(r::SQ_DB, db(1, 8));  // SQ 1's ring has 8 entries: indices 0..7
    hal.wait_cycles(20);
    EXPECT_EQ(sq_cause(d, 1), cause(R::QerrCause::DB_RANGE));
    EXPECT_EQ(sq_cause(d, 0), 0) << "SQ 0 is not affected";
    EXPECT_EQ(d.queue_error().cqp, 0);
    EXPECT_EQ(R::field::QERR::SQ1.get(hal.read32(r::QERR)), cause(R::QerrCause::DB_RANGE));
    EXPECT_EQ(hal.read32(r::sq_pi(1)), 0u) << "a refused doorbell must not move SQ 1's PI";

    auto stuck = d.post_nop(77, false, 1);
    ASSERT_TRUE(stuck.ok()) << stuck.error().message;
    // SQ 0 keeps working, ring and push, while SQ 1 holds a WQE it will never fetch
    for (uint64_t i = 0; i < 3; ++i) {
      auto p = d.post_nop(10 + i, i == 1, 0);
      ASSERT_TRUE(p.ok()) << p.error().message;
      auto c = d.wait_completion_for(0u, *p, kWait);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_TRUE(c->ok()) << c->status();
      EXPECT_EQ(c->sq, 0);
      EXPECT_EQ(c->wr_id, 10 + i);
    }
    auto c = d.wait_completion_for(1u, *stuck, kWait);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, Errc::kQueueError) << c.error().message;
    EXPECT_NE(c.error().message.find("SQ 1"), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find("DB_RANGE"), std::string::npos) << c.error().message;
    EXPECT_EQ(d.sq_outstanding(0), 0u);
    EXPECT_EQ(d.sq_outstanding(1), 1u);

    auto n = d.reset_sq(1);
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(*n, 1u) << "only SQ 1's WQE is flushed";
    auto f = d.wait_completion_for(1u, *stuck, kWait);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->sq, 1);
    EXPECT_EQ(f->minor, static_cast<uint16_t>(R::CqMinor::FLUSHED));
    EXPECT_EQ(f->wr_id, 77u);
    EXPECT_FALSE(d.queue_error().any());
    EXPECT_EQ(d.sq_outstanding(), 0u);
    auto p = d.post_nop(78, false, 1);
    ASSERT_TRUE(p.ok()) << p.error().message;
    auto ok = d.wait_completion_for(1u, *p, kWait);
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_TRUE(ok->ok()) << ok->status();
    EXPECT_EQ(ok->sq, 1);

    // an SQ number the build does not have: ignored and counted, not a queue error
    hal.write32(r::SQ_DB, db(R::kNumSqMax + 1, 1));
    hal.wait_cycles(20);
    EXPECT_FALSE(d.queue_error().any());
    EXPECT_EQ(hal.read32(r::STAT_SQ_DB_BAD), 1u);
    EXPECT_EQ(hal.read32(r::STAT_SQ_WQES), 5u) << "1 + 3 NOPs on SQ 0, 1 on SQ 1 after reset";
    EXPECT_TRUE(plat.tx_frames().empty());
  });
}

// The control queue: a CQP doorbell past its ring size and an unaligned CCQ base. The command
// fails with kQueueError naming the cause; reset_cqp() recovers and the next command works.
TEST_P(SystemBadHostInput, ControlQueueDoorbellAndBase) {
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& hal) {
    auto dev = Device::open(hal, small_rings());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_TRUE(d.cqp_nop().ok());
    hal.write32(r::CQP_DB, 4);  // ring of 4
    hal.wait_cycles(20);
    EXPECT_EQ(d.queue_error().cqp, cause(R::QerrCause::DB_RANGE));
    EXPECT_EQ(sq_cause(d), 0) << "the SQ is not affected";
    auto e = d.cqp_nop();
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, Errc::kQueueError) << e.error().message;
    nop_ok(d, 5);  // the SQ goes on meanwhile
    ASSERT_TRUE(d.reset_cqp().ok());
    EXPECT_EQ(d.queue_error().cqp, 0);
    ASSERT_TRUE(d.cqp_nop().ok());

    hal.write32(r::CCQ_BASE_LO, static_cast<uint32_t>(d.ccq().device_addr() + 8));
    e = d.cqp_nop();
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, Errc::kQueueError) << e.error().message;
    EXPECT_EQ(d.queue_error().cqp, cause(R::QerrCause::CQ_ALIGN));
    hal.write32(r::CCQ_BASE_LO, static_cast<uint32_t>(d.ccq().device_addr()));
    ASSERT_TRUE(d.reset_cqp().ok());
    ASSERT_TRUE(d.cqp_nop().ok());
  });
}

// The co-simulation's HAL, except that once armed it sets CTRL.ENABLE right after the next
// register read: the engine starts taking the WQEs it holds the moment the driver has looked.
class StartOnFirstLook final : public bouncer::hal::Device {
 public:
  explicit StartOnFirstLook(bouncer::hal::Device& in) : in_(in) {}
  void arm() { armed_ = true; }
  bool armed() const { return armed_; }
  uint32_t read32(uint32_t off) override {
    const uint32_t v = in_.read32(off);
    if (armed_) {
      armed_ = false;
      in_.write32(r::CTRL, R::field::CTRL::ENABLE.put(1));
    }
    return v;
  }
  void write32(uint32_t off, uint32_t v) override { in_.write32(off, v); }
  void write_block(uint32_t off, std::span<const uint32_t> words) override {
    in_.write_block(off, words);
  }
  bouncer::Result<std::unique_ptr<bouncer::hal::DmaBuffer>> alloc_dma(size_t bytes,
                                                                      size_t align) override {
    return in_.alloc_dma(bytes, align);
  }
  void wait_cycles(uint64_t n) override { in_.wait_cycles(n); }
  uint64_t now_cycles() override { return in_.now_cycles(); }
  std::chrono::nanoseconds host_now() override { return in_.host_now(); }
  void wait_for(std::chrono::nanoseconds d) override { in_.wait_for(d); }
  const char* name() const override { return in_.name(); }

 private:
  bouncer::hal::Device& in_;
  bool armed_ = false;
};

// The TCP destination ports of every frame sent so far, in order.
std::vector<uint16_t> wire_ports(const sim::Platform& plat) {
  std::vector<uint16_t> out;
  for (const auto& f : plat.tx_frames()) {
    out.push_back(f.bytes.size() < 38 ? 0 : static_cast<uint16_t>(f.bytes[36] << 8 | f.bytes[37]));
  }
  return out;
}

// reset_sq's rule against the real engine. With the engine stopped (CTRL.ENABLE 0; doorbells
// are still taken) three rejects are posted and accepted (the first by push, so the engine
// hands it to the CM engine within three cycles of picking it; the push page holds one WQE),
// then a doorbell past the ring size puts SQ 0 in
// queue error and two more are posted, which the hardware ignores. The engine starts right
// after reset_sq's first register read. reset_sq must let the three accepted rejects finish
// (they complete OK and are on the wire) and flush only the other two; every WQE completes
// exactly once, and the NOPs that reuse the slots afterwards each get their own completion.
TEST_P(SystemBadHostInput, ResetSqLetsAcceptedWqesFinish) {
  using bouncer::testing::host_ctx;
  using bouncer::testing::pattern_pd;
  sim::Platform plat(config(GetParam()));
  plat.run([&](bouncer::hal::Device& sim_hal) {
    StartOnFirstLook hal(sim_hal);
    auto dev = Device::open(hal, small_rings());
    ASSERT_TRUE(dev.ok()) << dev.error().message;
    Device& d = **dev;
    ASSERT_TRUE(d.wait_cm_ready(kWait).ok());
    for (uint32_t id = 1; id <= 5; ++id) ASSERT_TRUE(d.cqp_write_context(id, host_ctx(id)).ok());
    hal.write32(r::CTRL, 0);
    const auto pd = pattern_pd(8, 5);
    std::vector<uint16_t> idx;
    auto post = [&](uint32_t id) {
      bouncer::RejectWqe w;
      w.cm_id = id;
      w.pd = pd;
      w.push = d.caps().push && id == 1;
      w.wr_id = 100 + id;
      auto p = d.post_reject(w);
      ASSERT_TRUE(p.ok()) << p.error().message;
      idx.push_back(*p);
    };
    for (uint32_t id = 1; id <= 3; ++id) post(id);
    EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u);
    hal.write32(r::SQ_DB, db(0, 8));  // ring of 8: queue error, the three stay accepted
    hal.wait_cycles(20);
    EXPECT_EQ(sq_cause(d), cause(R::QerrCause::DB_RANGE));
    for (uint32_t id = 4; id <= 5; ++id) post(id);
    EXPECT_EQ(hal.read32(r::sq_pi(0)), 3u) << "doorbells in queue error are ignored";
    EXPECT_EQ(hal.read32(r::sq_ci(0)), 0u) << "the engine took nothing yet";
    EXPECT_TRUE(plat.tx_frames().empty());
    hal.arm();
    auto n = d.reset_sq();
    EXPECT_FALSE(hal.armed());
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(*n, 2u) << "only the WQEs the hardware never accepted are flushed";
    EXPECT_EQ(sq_cause(d), 0);
    for (uint32_t id = 1; id <= 5; ++id) {
      auto c = d.wait_completion_for(idx[id - 1], kWait);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c->wr_id, 100u + id);
      EXPECT_EQ(c->cm_id, id);
      if (id <= 3) {
        EXPECT_TRUE(c->ok()) << "cm_id " << id << ": " << c->status();
      } else {
        EXPECT_EQ(c->minor, static_cast<uint16_t>(R::CqMinor::FLUSHED)) << c->status();
      }
    }
    EXPECT_FALSE(d.poll_cq().has_value()) << "no second completion for any of them";
    for (uint64_t i = 0; i < 10; ++i) {  // more than a lap of the 8-slot ring
      auto p = d.post_nop(200 + i, i % 2 == 0);
      ASSERT_TRUE(p.ok()) << p.error().message;
      auto c = d.wait_completion_for(*p, kWait);
      ASSERT_TRUE(c.ok()) << c.error().message;
      EXPECT_EQ(c->wr_id, 200 + i) << "a completion credited to another WQE";
      EXPECT_TRUE(c->ok()) << c->status();
    }
    EXPECT_FALSE(d.poll_cq().has_value());
    EXPECT_EQ(d.stats().unexpected_cqes, 0u);
    EXPECT_EQ(hal.read32(r::STAT_SQ_WQES), 13u) << "the three accepted rejects and the NOPs";
  });
  EXPECT_EQ(wire_ports(plat), (std::vector<uint16_t>{40001, 40002, 40003}))
      << "a reject is on the wire exactly when it completed OK";
}

INSTANTIATE_TEST_SUITE_P(Widths, SystemBadHostInput, ::testing::Values(64u, 512u),
                         [](const auto& i) { return "w" + std::to_string(i.param); });

}  // namespace

// libsystemc provides main() and calls sc_main().
extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
