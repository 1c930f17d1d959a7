// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/cm/bouncer_id_alloc (16 and 1024 ids) against a std::deque free list:
// every offered id is the model's head (FIFO order, initially 0, 1, 2, ...), is not held by
// anyone, in_use equals the ids held, an id freed into an empty list is offered two cycles
// later (also right after the list ran empty), and otherwise a non-empty list keeps
// m_alloc_valid high (one allocation per cycle).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <utility>
#include <vector>

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vid_alloc_big.h"
#include "Vid_alloc_small.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

template <typename Model, unsigned IdW>
class Harness {
 public:
  static constexpr uint32_t kIds = 1u << IdW;

  explicit Harness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(2);
    m_ = std::make_unique<Model>(&ctx_, "alloc");
    reset();
  }

  uint64_t reset() {
    m_->s_free_valid = 0;
    m_->m_alloc_ready = 1;  // nothing may be taken before init_done
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) tick();
    m_->rst = 0;
    uint64_t n = 0;
    for (;;) {
      settle();
      if (m_->init_done) break;
      EXPECT_FALSE(m_->m_alloc_valid) << "offer before init_done";
      EXPECT_EQ(m_->in_use, 0u);
      edge();
      if (++n > (1u << 20)) {
        ADD_FAILURE() << "init_done never rose";
        break;
      }
    }
    free_.clear();
    for (uint32_t i = 0; i < kIds; ++i) free_.emplace_back(i, 0);
    held_.clear();
    return n;
  }

  void settle() {
    m_->clk = 0;
    m_->eval();
  }
  void edge() {
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }
  void tick() {
    settle();
    edge();
  }

  // One cycle: optionally free `f`, take an offered id if `ready`. Returns the id taken.
  std::optional<uint32_t> step(std::optional<uint32_t> f, bool ready) {
    m_->s_free_valid = f.has_value();
    m_->s_free_id = f ? *f : static_cast<uint32_t>(rng_() & (kIds - 1));
    m_->m_alloc_ready = ready;
    settle();
    EXPECT_EQ(m_->in_use, held_.size()) << "cycle " << cycle_;
    // an id freed in cycle c must be on offer from cycle c + 2 when it is the head
    if (!free_.empty() && free_.front().second <= cycle_) {
      EXPECT_TRUE(m_->m_alloc_valid) << "free ids but no offer, cycle " << cycle_;
    }
    if (free_.empty()) {
      EXPECT_FALSE(m_->m_alloc_valid) << "offer with no free id";
    }
    std::optional<uint32_t> got;
    if (m_->m_alloc_valid) {
      uint32_t id = m_->m_alloc_id;
      EXPECT_FALSE(held_.contains(id)) << "id " << id << " offered while held";
      if (!free_.empty()) {
        EXPECT_EQ(id, free_.front().first) << "not FIFO order";
      }
      if (ready && !free_.empty()) {
        got = id;
        free_.pop_front();
        held_.insert(id);
        ++allocs_;
      }
    }
    if (f) {
      EXPECT_TRUE(held_.contains(*f)) << "test frees an id it does not hold";
      held_.erase(*f);
      free_.emplace_back(*f, cycle_ + 2);
      ++frees_;
    }
    edge();
    return got;
  }

  // A random id this test holds.
  std::optional<uint32_t> random_held() {
    if (held_.empty()) return std::nullopt;
    auto it = held_.begin();
    std::advance(it, static_cast<long>(rng_() % held_.size()));
    return *it;
  }

  void run_random(uint64_t cycles, double free_p, double ready_p) {
    std::bernoulli_distribution fr(free_p), rd(ready_p);
    for (uint64_t i = 0; i < cycles; ++i) {
      std::optional<uint32_t> f;
      if (fr(rng_)) f = random_held();
      step(f, rd(rng_));
    }
  }

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  std::deque<std::pair<uint32_t, uint64_t>> free_;  // id, first cycle it may be offered
  std::set<uint32_t> held_;
  uint64_t cycle_ = 0;
  uint64_t allocs_ = 0;
  uint64_t frees_ = 0;
};

using Small = Harness<Vid_alloc_small, 4>;
using Big = Harness<Vid_alloc_big, 10>;

// Allocate all (0, 1, 2, ... at one per cycle), free in random order, re-allocate: exactly
// the freed ids in the order they were freed.
template <typename H>
void alloc_all_test(uint64_t seed) {
  H h(seed);
  std::vector<uint32_t> got;
  uint64_t first = 0;
  for (uint32_t i = 0; i < H::kIds + 5; ++i) {
    auto id = h.step(std::nullopt, true);
    if (id) {
      if (got.empty()) first = h.cycle_ - 1;
      got.push_back(*id);
    }
  }
  ASSERT_EQ(got.size(), H::kIds);
  for (uint32_t i = 0; i < H::kIds; ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(first, h.cycle_ - H::kIds - 5) << "first id offered right at init_done";
  h.settle();
  EXPECT_FALSE(h.m_->m_alloc_valid);
  EXPECT_EQ(h.m_->in_use, H::kIds);
  // free everything in random order, with allocation attempts (nothing to take until the
  // frees land)
  std::vector<uint32_t> order(got);
  std::shuffle(order.begin(), order.end(), h.rng_);
  for (uint32_t id : order) h.step(id, false);
  for (int i = 0; i < 3; ++i) h.step(std::nullopt, false);
  h.settle();
  EXPECT_EQ(h.m_->in_use, 0u);
  std::vector<uint32_t> again;
  for (uint32_t i = 0; i < H::kIds + 5; ++i) {
    auto id = h.step(std::nullopt, true);
    if (id) again.push_back(*id);
  }
  EXPECT_EQ(again, order);
}

TEST(IdAlloc, AllocAllFreeRandomSmall) { alloc_all_test<Small>(1); }
TEST(IdAlloc, AllocAllFreeRandomBig) { alloc_all_test<Big>(2); }

// A freed id into an empty list is offered two cycles later; alloc and free in one cycle.
TEST(IdAlloc, FreeLatencyAndSameCycle) {
  Small h(3);
  for (uint32_t i = 0; i < Small::kIds; ++i) ASSERT_TRUE(h.step(std::nullopt, true));
  h.step(5, true);  // free into an empty list
  h.settle();
  EXPECT_FALSE(h.m_->m_alloc_valid);
  h.step(std::nullopt, false);
  h.settle();
  EXPECT_TRUE(h.m_->m_alloc_valid);
  EXPECT_EQ(h.m_->m_alloc_id, 5u);
  // take 5 and free 9 in the same cycle, then take 9 while freeing 5 ...
  EXPECT_EQ(h.step(9, true), std::optional<uint32_t>(5));
  h.step(std::nullopt, false);
  EXPECT_EQ(h.step(5, true), std::optional<uint32_t>(9));
  h.step(std::nullopt, false);
  EXPECT_EQ(h.step(std::nullopt, true), std::optional<uint32_t>(5));
  h.settle();
  EXPECT_EQ(h.m_->in_use, Small::kIds);
}

template <typename H>
void random_test(uint64_t seed, uint64_t cycles) {
  H h(seed);
  struct Phase {
    double free_p, ready_p;
  };
  for (Phase p : {Phase{0.5, 0.5}, Phase{0.2, 0.9}, Phase{0.9, 0.3}, Phase{0.95, 1.0},
                  Phase{0.5, 1.0}, Phase{0.05, 0.05}}) {
    h.run_random(cycles, p.free_p, p.ready_p);
  }
  EXPECT_GT(h.allocs_, cycles);
  EXPECT_GT(h.frees_, cycles);
  // free everything held: the list is whole again
  while (auto f = h.random_held()) h.step(f, false);
  for (int i = 0; i < 3; ++i) h.step(std::nullopt, false);
  h.settle();
  EXPECT_EQ(h.m_->in_use, 0u);
  std::set<uint32_t> all;
  for (uint32_t i = 0; i < H::kIds + 3; ++i) {
    if (auto id = h.step(std::nullopt, true)) all.insert(*id);
  }
  EXPECT_EQ(all.size(), H::kIds);
}

TEST(IdAlloc, RandomMixSmall) { random_test<Small>(4, 5000); }
TEST(IdAlloc, RandomMixBig) { random_test<Big>(5, 20000); }

// One allocation per cycle with frees in the same cycles: a saturated stream.
TEST(IdAlloc, Throughput) {
  Big h(6);
  uint64_t taken = 0;
  for (int i = 0; i < 5000; ++i) {
    std::optional<uint32_t> f;
    if (h.held_.size() > 100) f = h.random_held();
    if (h.step(f, true)) ++taken;
  }
  EXPECT_EQ(taken, 5000u);
}

// Reset in the middle of use restores the initial order.
TEST(IdAlloc, ResetRestoresOrder) {
  Small h(7);
  h.run_random(500, 0.5, 0.5);
  uint64_t sweep = h.reset();
  EXPECT_GE(sweep, Small::kIds);
  EXPECT_LE(sweep, Small::kIds + 2u);
  for (uint32_t i = 0; i < Small::kIds; ++i) EXPECT_EQ(h.step(std::nullopt, true), i);
}

}  // namespace
