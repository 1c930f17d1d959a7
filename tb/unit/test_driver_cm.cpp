// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The CM API (iw_cm mirror): context encoding, reject validation, state, pipelined use.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bouncer/cm.hpp"
#include "bouncer/cm_diag.hpp"
#include "test_driver_fake_hal.hpp"

using namespace std::chrono_literals;

namespace bouncer {
namespace {

using testing::FakeHal;

std::vector<std::byte> pd_of(size_t n, uint8_t seed = 1) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(static_cast<uint8_t>(seed + i));
  return v;
}

std::vector<uint8_t> u8(std::span<const std::byte> s) {
  std::vector<uint8_t> v(s.size());
  std::transform(s.begin(), s.end(), v.begin(),
                 [](std::byte b) { return std::to_integer<uint8_t>(b); });
  return v;
}

CmContext ctx(uint8_t rev, bool enhanced) {
  CmContext c;
  c.rem_mac = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  c.loc_mac = {0x02, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE};
  c.loc_ip = 0x0A000001;
  c.rem_ip = 0x0A000002;
  c.loc_port = 20049;
  c.rem_port = 50001;
  c.snd_nxt = 0xFFFFFFF0;  // wraps on the reject
  c.rcv_nxt = 0x12345678;
  c.ip_id = 0x1234;
  c.req_rev = rev;
  c.req_flags = enhanced ? 0x50 : 0x40;
  c.req_ird_ord = enhanced ? 0x80104010 : 0;
  return c;
}

TEST(DriverCmContext, PackPutsEveryFieldWhereTheTomlSays) {
  CmContext c = ctx(2, true);
  c.vlan_en = true;
  c.vlan_tci = 0xA00F;
  c.rejected = true;
  c.ttl = 0x40;
  c.tos = 0x10;
  c.rcv_wnd = 0x8000;
  const auto img = c.pack();
  namespace f = regs::cm_ctx;
  EXPECT_EQ(regs::get(img, f::REM_MAC), 0x021122334455ull);  // byte 0 in bits 47:40
  EXPECT_EQ(regs::get(img, f::LOC_MAC), 0x02AABBCCDDEEull);
  EXPECT_EQ(std::to_integer<uint8_t>(img[5]), 0x02) << "first wire byte is image byte 5";
  EXPECT_EQ(regs::get(img, f::VLAN_TCI), 0xA00Fu);
  EXPECT_EQ(regs::get(img, f::VLAN_EN), 1u);
  EXPECT_EQ(regs::get(img, f::CTX_VALID), 1u);
  EXPECT_EQ(regs::get(img, f::REJECTED), 1u);
  EXPECT_EQ(regs::get(img, f::LOC_IP), 0x0A000001u);
  EXPECT_EQ(regs::get(img, f::REM_IP), 0x0A000002u);
  EXPECT_EQ(regs::get(img, f::LOC_PORT), 20049u);
  EXPECT_EQ(regs::get(img, f::REM_PORT), 50001u);
  EXPECT_EQ(regs::get(img, f::RCV_WND), 0x8000u);
  EXPECT_EQ(regs::get(img, f::TTL), 0x40u);
  EXPECT_EQ(regs::get(img, f::TOS), 0x10u);
  EXPECT_EQ(regs::get(img, f::SND_NXT), 0xFFFFFFF0u);
  EXPECT_EQ(regs::get(img, f::RCV_NXT), 0x12345678u);
  EXPECT_EQ(regs::get(img, f::REQ_REV), 2u);
  EXPECT_EQ(regs::get(img, f::REQ_FLAGS), 0x50u);
  EXPECT_EQ(regs::get(img, f::IP_ID), 0x1234u);
  EXPECT_EQ(regs::get(img, f::REQ_IRD_ORD), 0x80104010u);
  for (size_t i = 48; i < 64; ++i) EXPECT_EQ(img[i], std::byte{0}) << "reserved byte " << i;
  EXPECT_EQ(CmContext::unpack(img), c);
  EXPECT_EQ(mac_from_field(mac_to_field(c.rem_mac)), c.rem_mac);
}

TEST(DriverCmContext, EnhancedAndWireLength) {
  EXPECT_TRUE(ctx(2, true).enhanced());
  EXPECT_FALSE(ctx(2, false).enhanced());
  EXPECT_FALSE(ctx(1, false).enhanced());
  CmContext odd = ctx(1, false);
  odd.req_flags = 0x10;  // the flag alone, rev 1: not enhanced
  EXPECT_FALSE(odd.enhanced());
  EXPECT_EQ(ctx(2, true).wire_pd_len(10), 14u);
  EXPECT_EQ(ctx(1, false).wire_pd_len(10), 10u);
}

class CmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = Device::open(hal);
    ASSERT_TRUE(d) << d.error().message;
    dev = std::move(d).value();
    diag = std::make_unique<ContextDiag>(*dev);
  }
  size_t doorbells() const {
    size_t n = 0;
    for (const auto& w : hal.writes) {
      n += w.offset == regs::reg::SQ_DB || w.offset == regs::reg::SQ_PUSH_DB;
    }
    return n;
  }
  FakeHal hal;
  std::unique_ptr<Device> dev;
  std::unique_ptr<ContextDiag> diag;
};

TEST_F(CmTest, RejectSendsAndUpdatesTheContext) {
  ASSERT_TRUE(diag->write_context(7, ctx(2, true)));
  const auto pd = pd_of(40);
  RejectOptions o;
  o.wr_id = 0xABC;
  o.fin_policy = regs::FinPolicy::IRDMA;
  auto c = diag->reject(7, pd, o);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cm_id, 7u);
  EXPECT_EQ(c->wr_id, 0xABCu);
  EXPECT_EQ(c->tcp_seq, 0xFFFFFFF0u);
  EXPECT_EQ(c->frame_len, 14 + 40 + 20 + 44);
  ASSERT_EQ(hal.frames.size(), 1u);
  EXPECT_EQ(hal.frames[0].pd, u8(pd));
  EXPECT_EQ(hal.frames[0].wire_pd_len, 44);
  EXPECT_TRUE(hal.frames[0].fin);
  EXPECT_FALSE(hal.frames[0].ird_ord_valid);
  auto after = diag->read_context(7);
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->rejected);
  EXPECT_EQ(after->snd_nxt, 0xFFFFFFF0u + 20 + 44 + 1);  // M + FIN, mod 2^32
  EXPECT_EQ(after->ip_id, 0x1235);
}

TEST_F(CmTest, OptionsReachTheWqe) {
  ASSERT_TRUE(diag->write_context(1, ctx(2, true)));
  ASSERT_TRUE(diag->write_context(2, ctx(1, false)));
  RejectOptions o;
  o.push = true;
  o.ird_ord = 0x8001C001;
  auto a = diag->reject(1, pd_of(3), o);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->push);
  EXPECT_TRUE(hal.frames.at(0).from_push);
  EXPECT_TRUE(hal.frames.at(0).ird_ord_valid);
  EXPECT_EQ(hal.frames.at(0).ird_ord, 0x8001C001u);
  RejectOptions no_inline;
  no_inline.allow_inline = false;
  ASSERT_TRUE(diag->reject(2, pd_of(3), no_inline));
  const auto w = dev->sq().wqe(1);
  EXPECT_EQ(regs::get(w, regs::sq_wqe::PD_INLINE), 0u);
}

TEST_F(CmTest, ValidationHappensBeforeAnythingIsPosted) {
  ASSERT_TRUE(diag->write_context(0, ctx(2, true)));
  ASSERT_TRUE(diag->write_context(1, ctx(1, false)));
  const size_t db0 = doorbells();

  auto range = diag->reject(64, pd_of(4));
  ASSERT_FALSE(range);
  EXPECT_EQ(range.error().code, Errc::kInvalidArgument);
  EXPECT_NE(range.error().message.find("depth 64"), std::string::npos);

  auto u8max = diag->reject(1, pd_of(256));
  ASSERT_FALSE(u8max);
  EXPECT_EQ(u8max.error().code, Errc::kInvalidArgument);
  EXPECT_NE(u8max.error().message.find("u8"), std::string::npos) << u8max.error().message;

  RejectOptions lng;
  lng.unsafe_wire_pd = true;
  auto enh = diag->reject(0, pd_of(509), lng);  // 509 + 4 > 512
  ASSERT_FALSE(enh);
  EXPECT_EQ(enh.error().code, Errc::kInvalidArgument);
  EXPECT_NE(enh.error().message.find("513"), std::string::npos) << enh.error().message;
  auto rev1 = diag->reject(1, pd_of(513), lng);
  ASSERT_FALSE(rev1);
  EXPECT_EQ(rev1.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(doorbells(), db0) << "nothing may reach the hardware";

  // At the limits: 508 enhanced, 512 rev 1.
  auto ok0 = diag->reject(0, pd_of(508), lng);
  ASSERT_TRUE(ok0) << ok0.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 512);
  auto ok1 = diag->reject(1, pd_of(512), lng);
  ASSERT_TRUE(ok1) << ok1.error().message;
  EXPECT_EQ(hal.frames.back().wire_pd_len, 512);
}

TEST_F(CmTest, SecondRejectIsAStateError) {
  ASSERT_TRUE(diag->write_context(3, ctx(1, false)));
  ASSERT_TRUE(diag->reject(3, pd_of(10)));
  auto again = diag->reject(3, pd_of(10));
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, Errc::kState);
  EXPECT_EQ(hal.frames.size(), 1u);
  // Writing the context again re-arms the connection (new MPA request on the same cm_id).
  ASSERT_TRUE(diag->write_context(3, ctx(1, false)));
  EXPECT_TRUE(diag->reject(3, pd_of(10)));
  EXPECT_EQ(hal.frames.size(), 2u);
}

TEST_F(CmTest, ContextsWrittenElsewhereAreLearnedFromTheHardware) {
  {
    ContextDiag other(*dev);
    ASSERT_TRUE(other.write_context(5, ctx(2, true)));
  }
  RejectOptions lng;
  lng.unsafe_wire_pd = true;
  auto too_long = diag->reject(5, pd_of(510), lng);  // needs the rev to know about the +4
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().code, Errc::kInvalidArgument);
  EXPECT_TRUE(diag->reject(5, pd_of(20)));

  auto none = diag->reject(6, pd_of(4));  // never written anywhere
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, Errc::kState);
}

TEST_F(CmTest, HardwareErrorsComeBackWithTheirCodes) {
  ASSERT_TRUE(diag->write_context(2, ctx(3, false)));  // a rev the hardware refuses
  auto r = diag->reject(2, pd_of(8));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kHardware);
  EXPECT_EQ(r.error().hw_major, static_cast<uint16_t>(regs::CqMajor::CTX));
  EXPECT_EQ(r.error().hw_minor, static_cast<uint16_t>(regs::CqMinor::BAD_REV));
  EXPECT_NE(r.error().message.find("CTX/BAD_REV (0x0200/0x0014)"), std::string::npos)
      << r.error().message;
  auto ctx_err = diag->write_context(64, ctx(1, false));
  ASSERT_FALSE(ctx_err);
  EXPECT_EQ(ctx_err.error().code, Errc::kInvalidArgument);
}

TEST_F(CmTest, PipelinedRejectsEachCompleteOnce) {
  constexpr uint32_t kN = 40;  // all in flight at once (the SQ has 64 slots)
  for (uint32_t i = 0; i < kN; ++i)
    ASSERT_TRUE(diag->write_context(i, ctx(i % 2 ? 1 : 2, i % 2 == 0)));
  hal.hold = true;
  std::vector<std::vector<std::byte>> pds;
  for (uint32_t i = 0; i < kN; ++i) {
    pds.push_back(pd_of(i * 7 % 100, static_cast<uint8_t>(i)));
    RejectOptions o;
    o.wr_id = i;
    o.push = i % 4 == 1;
    auto idx = diag->post_reject(i, pds.back(), o);
    ASSERT_TRUE(idx) << idx.error().message;
    EXPECT_EQ(*idx, i);
  }
  EXPECT_EQ(dev->sq_outstanding(), kN);
  hal.hold = false;
  std::vector<int> seen(kN, 0);
  uint32_t got = 0;
  for (int spins = 0; got < kN && spins < 10000; ++spins) {
    if (auto c = diag->poll()) {
      ASSERT_TRUE(c->ok()) << c->status();
      ++seen.at(c->wr_id);
      ++got;
    } else {
      hal.wait_cycles(16);
    }
  }
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(seen[i], 1) << i;
  EXPECT_FALSE(diag->poll());
  ASSERT_EQ(hal.frames.size(), kN);
  for (uint32_t i = 0; i < kN; ++i) EXPECT_EQ(hal.frames[i].pd, u8(pds[i])) << i;
}

// poll() in one thread while reject() waits in another: the synchronous call keeps its own
// completion, poll() gets only what post_reject() posted. The threaded fake lands each CQE at
// a random moment while both threads read the CQ, so a poll() that took any completion of
// this object would take reject()'s in most of the rounds.
TEST(ContextDiagThreads, PollLeavesTheCompletionASynchronousRejectWaitsFor) {
  FakeHal::Config cfg;
  cfg.memory = testing::FakeMemory::kThreaded;
  FakeHal hal(cfg);
  auto d = Device::open(hal);
  ASSERT_TRUE(d) << d.error().message;
  ContextDiag diag(**d);
  constexpr uint32_t kRounds = 16;
  for (uint32_t round = 0; round < kRounds; ++round) {
    const uint32_t posted_id = 2 * round, sync_id = 2 * round + 1;
    ASSERT_TRUE(diag.write_context(posted_id, ctx(1, false)));
    ASSERT_TRUE(diag.write_context(sync_id, ctx(2, true)));
    RejectOptions posted;
    posted.wr_id = posted_id;
    ASSERT_TRUE(diag.post_reject(posted_id, pd_of(4), posted));
    std::atomic<bool> done{false};
    std::vector<uint64_t> polled;
    std::thread poller([&] {
      while (!done.load()) {
        if (auto c = diag.poll()) polled.push_back(c->wr_id);
      }
    });
    RejectOptions sync;
    sync.wr_id = sync_id;
    sync.timeout = std::chrono::milliseconds(100);
    auto r = diag.reject(sync_id, pd_of(8), sync);
    done = true;
    poller.join();
    ASSERT_TRUE(r) << "round " << round << ": " << r.error().message;
    EXPECT_EQ(r->wr_id, sync_id);
    for (int spins = 0; polled.empty() && spins < 1000; ++spins) {
      if (auto c = diag.poll()) {
        polled.push_back(c->wr_id);
      } else {
        hal.wait_cycles(16);
      }
    }
    ASSERT_EQ(polled, std::vector<uint64_t>{posted_id}) << "round " << round;
  }
  EXPECT_FALSE(diag.poll());
}

TEST_F(CmTest, RingFullIsReturnedToPipelinedCallers) {
  for (uint32_t i = 0; i < 64; ++i) ASSERT_TRUE(diag->write_context(i, ctx(1, false)));
  hal.hold = true;
  for (uint32_t i = 0; i < 63; ++i) ASSERT_TRUE(diag->post_reject(i, pd_of(1)));
  auto full = diag->post_reject(63, pd_of(1));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, Errc::kRingFull);
  hal.hold = false;
  auto c = diag->wait(0, 400us);
  ASSERT_TRUE(c);
  // The connection that hit a full ring was not consumed: it can still be rejected.
  EXPECT_TRUE(diag->post_reject(63, pd_of(1)));
}

TEST_F(CmTest, RejectTimesOut) {
  ASSERT_TRUE(diag->write_context(1, ctx(1, false)));
  hal.hold = true;
  RejectOptions o;
  o.timeout = 4us;
  auto r = diag->reject(1, pd_of(4), o);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, Errc::kTimeout);
}

}  // namespace
}  // namespace bouncer
