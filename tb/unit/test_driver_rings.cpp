// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Ring primitives: sizes, head/tail/full, polarity over several laps, WQE write order.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bouncer/rings.hpp"
#include "test_driver_fake_hal.hpp"

namespace bouncer {
namespace {

using queues::CqRing;
using queues::SqRing;

uint64_t qword(std::span<const std::byte> img, unsigned q) {
  uint64_t v = 0;
  std::memcpy(&v, img.data() + q * 8, 8);
  return v;
}

TEST(DriverRings, Log2AcceptsPowersOfTwoInRange) {
  EXPECT_EQ(queues::ring_log2(4).value(), 2u);
  EXPECT_EQ(queues::ring_log2(64).value(), 6u);
  EXPECT_EQ(queues::ring_log2(32768).value(), 15u);
  for (uint32_t bad : {0u, 1u, 2u, 3u, 6u, 100u, 65536u}) {
    auto r = queues::ring_log2(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  }
}

TEST(DriverRings, SqStartsEmptyWithPolarityOne) {
  testing::FakeHal hal;
  auto sq = SqRing::create(hal, 8, 64);
  ASSERT_TRUE(sq);
  EXPECT_EQ(sq->size(), 8u);
  EXPECT_EQ(sq->log2_size(), 3u);
  EXPECT_EQ(sq->head(), 0u);
  EXPECT_EQ(sq->tail(), 0u);
  EXPECT_EQ(sq->polarity(), 1);
  EXPECT_TRUE(sq->empty());
  EXPECT_FALSE(sq->full());
  EXPECT_EQ(sq->device_addr() % 64, 0u);
}

TEST(DriverRings, SqFullKeepsOneSlotFree) {
  testing::FakeHal hal;
  auto sq = SqRing::create(hal, 4, 64);
  ASSERT_TRUE(sq);
  for (uint16_t i = 0; i < 3; ++i) {
    auto s = sq->get_next_wqe();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->wqe_idx, i);
  }
  EXPECT_TRUE(sq->full());
  EXPECT_EQ(sq->used(), 3u);
  EXPECT_FALSE(sq->get_next_wqe());
  sq->set_tail(1);  // completion of wqe_idx 0 -> ci = 1
  EXPECT_FALSE(sq->full());
  auto s = sq->get_next_wqe();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wqe_idx, 3);
  EXPECT_EQ(sq->head(), 0u);  // wrapped
  EXPECT_TRUE(sq->full());
}

TEST(DriverRings, SqPolarityFlipsEachLap) {
  testing::FakeHal hal;
  auto sq = SqRing::create(hal, 4, 64);
  ASSERT_TRUE(sq);
  // Five laps, consuming as we go: slot i of lap L carries polarity 1 - (L % 2).
  for (unsigned n = 0; n < 20; ++n) {
    auto s = sq->get_next_wqe();
    ASSERT_TRUE(s);
    EXPECT_EQ(s->wqe_idx, n % 4);
    EXPECT_EQ(s->polarity, (n / 4) % 2 == 0 ? 1 : 0) << n;
    sq->set_tail(s->wqe_idx + 1u);
    EXPECT_TRUE(sq->empty());
  }
  EXPECT_EQ(sq->polarity(), 0);  // 5 wraps
}

TEST(DriverRings, WriteWqeSetsValidAndKeepsBody) {
  testing::FakeHal hal;
  auto sq = SqRing::create(hal, 4, 64);
  ASSERT_TRUE(sq);
  std::array<std::byte, 64> img;
  for (size_t i = 0; i < img.size(); ++i) img[i] = std::byte(i + 1);
  const auto copy = img;
  for (unsigned lap = 0; lap < 2; ++lap) {
    for (unsigned k = 0; k < 4; ++k) {
      auto s = sq->get_next_wqe();
      ASSERT_TRUE(s);
      sq->write_wqe(*s, img);
      sq->set_tail(s->wqe_idx + 1u);
      auto w = sq->wqe(s->wqe_idx);
      EXPECT_EQ(img, copy);  // the caller's image is not modified
      for (unsigned q : {0u, 1u, 2u, 4u, 5u, 6u, 7u}) EXPECT_EQ(qword(w, q), qword(copy, q));
      const uint64_t hdr = qword(w, 3);
      EXPECT_EQ(hdr & ~(uint64_t{1} << 63), qword(copy, 3) & ~(uint64_t{1} << 63));
      EXPECT_EQ(regs::get(w, regs::sq_wqe::VALID), lap == 0 ? 1u : 0u);
      // and made visible to the device
      ASSERT_FALSE(hal.syncs_to_device.empty());
      EXPECT_EQ(hal.syncs_to_device.back().addr, sq->device_addr() + s->wqe_idx * 64u);
      EXPECT_EQ(hal.syncs_to_device.back().len, 64u);
    }
  }
}

TEST(DriverRings, CqSeesOnlyEntriesOfTheCurrentPolarity) {
  testing::FakeHal hal;
  auto cq = CqRing::create(hal, 4);
  ASSERT_TRUE(cq);
  EXPECT_EQ(cq->polarity(), 1);
  EXPECT_FALSE(cq->peek());  // zeroed memory: VALID 0 is not new
  auto write = [&](uint32_t idx, uint8_t valid, uint64_t tag) {
    std::array<std::byte, 32> e{};
    regs::put(e, regs::cqe::WR_ID, tag);
    regs::put(e, regs::cqe::VALID, valid);
    ASSERT_TRUE(hal.dma_write(cq->device_addr() + idx * 32u, e));
  };
  uint64_t tag = 100;
  for (unsigned lap = 0; lap < 4; ++lap) {
    const uint8_t pol = lap % 2 == 0 ? 1 : 0;
    for (uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(cq->head(), i);
      EXPECT_EQ(cq->polarity(), pol);
      EXPECT_FALSE(cq->peek()) << "stale entry from the previous lap seen as new";
      write(i, pol, tag);
      auto e = cq->peek();
      ASSERT_TRUE(e);
      EXPECT_EQ(regs::get(*e, regs::cqe::WR_ID), tag);
      ++tag;
      cq->advance();
    }
  }
  EXPECT_EQ(cq->head(), 0u);
  EXPECT_EQ(cq->polarity(), 1);
}

TEST(DriverRings, AllocationFailureIsReported) {
  testing::FakeHal hal;
  hal.fail_alloc_after = 0;
  auto sq = SqRing::create(hal, 4, 64);
  ASSERT_FALSE(sq);
  EXPECT_EQ(sq.error().code, Errc::kNoMemory);
  auto cq = CqRing::create(hal, 4);
  ASSERT_FALSE(cq);
  EXPECT_EQ(cq.error().code, Errc::kNoMemory);
}

TEST(DriverRings, BuffersAreFreedWithTheRing) {
  testing::FakeHal hal;
  {
    auto sq = SqRing::create(hal, 4, 64);
    auto cq = CqRing::create(hal, 4);
    ASSERT_TRUE(sq && cq);
    SqRing moved = std::move(sq).value();
    EXPECT_EQ(hal.live_buffers(), 2u);
  }
  EXPECT_EQ(hal.live_buffers(), 0u);
}

TEST(DriverRings, ErrcNamesAreDistinct) {
  std::vector<std::string> names;
  for (Errc e : {Errc::kInvalidArgument, Errc::kRingFull, Errc::kTimeout, Errc::kHardware,
                 Errc::kNoDevice, Errc::kState, Errc::kNoMemory}) {
    names.emplace_back(errc_name(e));
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::unique(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace bouncer
