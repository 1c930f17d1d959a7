// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/cm/bouncer_cm_timer (64 ids with a 4-deep expiry FIFO, 32 ids starting
// `now` just below the 2^32 wrap, 1024 ids). A reference model holds every id's {on,
// deadline} as of the set history and judges every emission:
//  * legal: the id was armed and expired (signed'(now - deadline) >= 0) at some cycle p
//    before the emission, with at most FIFO-depth emissions in between (the FIFO is in
//    order); when m_exp_valid rises from 0 the push cycle is known (the previous cycle) and
//    the id must have been armed and expired exactly then, after all sets up to that cycle;
//  * complete: while m_exp_ready is held, an id that is armed and expired is emitted within
//    one sweep plus the pipeline and FIFO drain.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vcm_timer_big.h"
#include "Vcm_timer_small.h"
#include "Vcm_timer_wrap.h"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

constexpr int64_t kNever = -1;

struct Set {
  uint32_t id = 0;
  bool on = false;
  uint32_t deadline = 0;
};

bool expired(uint32_t now, uint32_t deadline) { return static_cast<int32_t>(now - deadline) >= 0; }

template <typename Model, unsigned IdW, unsigned FifoLog2, uint32_t NowInit>
class Harness {
 public:
  static constexpr uint32_t kIds = 1u << IdW;
  static constexpr uint32_t kDepth = 1u << FifoLog2;
  // an owed emission must come within this many cycles of m_exp_ready being held
  static constexpr int64_t kBound = kIds + kDepth + 8;

  explicit Harness(uint64_t seed, uint32_t tick_cycles = 1) : rng_(seed) {
    ctx_.randReset(2);  // random RAM contents: the reset sweep must clear them
    m_ = std::make_unique<Model>(&ctx_, "timer");
    m_->tick_cycles = tick_cycles;
    reset();
  }

  // Reset pulse and init sweep; returns the cycles from reset release to init_done.
  uint64_t reset() {
    m_->set_valid = 0;
    m_->m_exp_ready = 1;
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) tick();
    m_->rst = 0;
    settle();
    EXPECT_EQ(m_->now, NowInit);
    uint64_t n = 0;
    for (;;) {
      settle();
      if (m_->init_done) break;
      EXPECT_FALSE(m_->m_exp_valid);
      edge();
      if (++n > (1u << 20)) {
        ADD_FAILURE() << "init_done never rose";
        break;
      }
    }
    on_.assign(kIds, false);
    dl_.assign(kIds, 0);
    last_good_.assign(kIds, kNever);
    good_emits_.assign(kIds, 0);
    owed_since_.assign(kIds, kNever);
    was_valid_ = false;
    ready_since_ = kNever;
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

  // One cycle: apply `set` (if any) and m_exp_ready, check an emission, clock.
  // Returns the emitted id, if any.
  std::optional<uint32_t> step(const std::optional<Set>& set, bool ready) {
    m_->set_valid = set.has_value();
    if (set) {
      m_->set_id = set->id;
      m_->set_on = set->on;
      m_->set_deadline = set->deadline;
    } else {
      m_->set_id = static_cast<uint32_t>(rng_()) & (kIds - 1);  // garbage while invalid
      m_->set_on = rng_() & 1;
      m_->set_deadline = static_cast<uint32_t>(rng_());
    }
    m_->m_exp_ready = ready;
    settle();
    const int64_t t = static_cast<int64_t>(cycle_);
    const uint32_t now = m_->now;
    if (ready) {
      if (ready_since_ == kNever) ready_since_ = t;
    } else {
      ready_since_ = kNever;
    }
    std::optional<uint32_t> out;
    if (m_->m_exp_valid && ready) {
      uint32_t id = m_->m_exp_id;
      out = id;
      EXPECT_LT(id, kIds);
      // legal: armed and expired at some cycle p with few emissions since
      EXPECT_NE(last_good_[id], kNever) << "id " << id << " emitted, never armed+expired";
      if (last_good_[id] != kNever) {
        EXPECT_LE(emits_ - good_emits_[id], kDepth)
            << "id " << id << " emitted " << emits_ - good_emits_[id]
            << " emissions after it was last armed and expired (cycle " << t << ")";
      }
      // exact: the FIFO was empty last cycle, so this id was pushed then
      if (!was_valid_) {
        EXPECT_EQ(last_good_[id], t - 1)
            << "id " << id << " pushed at cycle " << t - 1 << " while off or not expired";
        ++exact_checks_;
      }
      ++emits_;
      owed_since_[id] = kNever;
    }
    was_valid_ = m_->m_exp_valid;
    // the set takes effect at this edge
    if (set) {
      on_[set->id] = set->on;
      dl_[set->id] = set->deadline;
      owed_since_[set->id] = kNever;  // any set restarts the obligation
      ++sets_;
    }
    for (uint32_t id = 0; id < kIds; ++id) {
      if (on_[id] && expired(now, dl_[id])) {
        last_good_[id] = t;
        good_emits_[id] = emits_;
        if (owed_since_[id] == kNever) owed_since_[id] = t;
        if (ready_since_ != kNever && t - std::max(owed_since_[id], ready_since_) > kBound) {
          ADD_FAILURE() << "id " << id << " armed+expired since cycle " << owed_since_[id]
                        << " not emitted by cycle " << t;
          owed_since_[id] = t;  // report once per bound
        }
      } else {
        owed_since_[id] = kNever;
      }
    }
    edge();
    return out;
  }

  uint32_t now() {
    settle();
    return m_->now;
  }

  // Random arm/disarm/re-arm with deadlines around `now`.
  void run_random(uint64_t cycles, double set_p, double ready_p, int32_t dl_lo, int32_t dl_hi,
                  uint32_t id_pool) {
    std::bernoulli_distribution do_set(set_p), rdy(ready_p), arm(0.7);
    std::uniform_int_distribution<int32_t> dl(dl_lo, dl_hi);
    std::uniform_int_distribution<uint32_t> pick(0, id_pool - 1);
    for (uint64_t i = 0; i < cycles; ++i) {
      std::optional<Set> s;
      if (do_set(rng_)) {
        uint32_t now = this->now();
        s = Set{pick(rng_), arm(rng_), now + static_cast<uint32_t>(dl(rng_))};
      }
      step(s, rdy(rng_));
    }
  }

  // Disarm everything, then hold ready until the FIFO drains and nothing is owed.
  void drain() {
    for (uint32_t id = 0; id < kIds; ++id) step(Set{id, false, 0}, true);
    for (uint32_t i = 0; i < kIds + kDepth + 8; ++i) step(std::nullopt, true);
    settle();
    EXPECT_FALSE(m_->m_exp_valid);
  }

  VerilatedContext ctx_;  // declared before the model: destroyed after it
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  std::vector<bool> on_;
  std::vector<uint32_t> dl_;
  std::vector<int64_t> last_good_;    // last cycle the id was armed and expired
  std::vector<uint64_t> good_emits_;  // emits_ at that cycle
  std::vector<int64_t> owed_since_;   // armed+expired and not emitted since this cycle
  bool was_valid_ = false;
  int64_t ready_since_ = kNever;
  uint64_t cycle_ = 0;
  uint64_t emits_ = 0;
  uint64_t sets_ = 0;
  uint64_t exact_checks_ = 0;
};

using Small = Harness<Vcm_timer_small, 6, 2, 0>;
using Wrap = Harness<Vcm_timer_wrap, 5, 4, 0xFFFFFF00u>;
using Big = Harness<Vcm_timer_big, 10, 4, 0>;

// `now` advances by one every tick_cycles cycles (0 acts as 1), also when changed on the fly.
TEST(CmTimer, NowTicks) {
  Small h(1);
  for (uint32_t tc : {1u, 5u, 0u, 3u, 1u, 7u}) {
    h.m_->tick_cycles = tc;
    const uint32_t period = tc == 0 ? 1 : tc;
    // align to a change of `now`
    uint32_t n0 = h.now();
    int guard = 0;
    while (h.now() == n0 && ++guard < 100) h.tick();
    n0 = h.now();
    for (uint32_t k = 1; k <= 20; ++k) {
      for (uint32_t c = 0; c < period; ++c) {
        EXPECT_EQ(h.now(), n0 + k - 1) << "tick_cycles " << tc;
        h.settle();
        const uint32_t next = h.m_->now + h.m_->now_inc;
        h.tick();
        EXPECT_EQ(h.now(), next) << "now_inc, tick_cycles " << tc;
      }
      EXPECT_EQ(h.now(), n0 + k) << "tick_cycles " << tc;
    }
  }
}

// The reset sweep takes one cycle per id and clears the (random) RAM: nothing is emitted
// for several sweeps; a second reset forgets every armed timer.
TEST(CmTimer, InitSweep) {
  Small h(2);
  for (int i = 0; i < 4 * 64; ++i) EXPECT_FALSE(h.step(std::nullopt, true).has_value());
  for (uint32_t id = 0; id < 64; ++id) h.step(Set{id, true, h.now() + 500}, true);
  uint64_t sweep = h.reset();
  EXPECT_GE(sweep, 64u);
  EXPECT_LE(sweep, 66u);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(h.step(std::nullopt, true).has_value());
  // and the block works after the second reset
  h.step(Set{17, true, h.now()}, true);
  bool seen = false;
  for (int i = 0; i < 80; ++i) seen |= h.step(std::nullopt, true) == std::optional<uint32_t>(17);
  EXPECT_TRUE(seen);
}

template <typename H>
void random_test(H& h, uint64_t cycles) {
  const uint32_t n = H::kIds;
  // phases: ready held (completeness checked), random ready (FIFO fills, scan stalls),
  // dense sets on a few ids (hazards), sparse sets on all ids
  h.run_random(cycles, 0.3, 1.0, -20, 3 * static_cast<int32_t>(n), n);
  h.run_random(cycles, 0.3, 0.3, -20, 3 * static_cast<int32_t>(n), n);
  h.run_random(cycles, 0.9, 0.8, -5, 20, 4);
  h.run_random(cycles, 0.05, 1.0, -5, 2 * static_cast<int32_t>(n), n);
  h.run_random(cycles, 0.5, 0.05, -50, 50, n);
  h.drain();
  EXPECT_GT(h.emits_, cycles / 20);
  EXPECT_GT(h.exact_checks_, cycles / 50);
}

TEST(CmTimer, RandomTick1) {
  Small h(3, 1);
  random_test(h, 20000);
}

TEST(CmTimer, RandomTick5) {
  Small h(4, 5);
  random_test(h, 20000);
}

TEST(CmTimer, RandomBig) {
  Big h(5, 1);
  random_test(h, 30000);
}

// Sets to an id whose RAM read is in flight: at the read cycle and the two after it the
// result is discarded; a set before the read is seen by the read. Re-synchronises on each
// emission of the id (ready held, so the scan never stalls and revisits the id every 64
// cycles; the id is read 3 cycles before it is emitted).
TEST(CmTimer, InFlightHazard) {
  Small h(6, 1);
  for (uint32_t x : {0u, 1u, 31u, 63u}) {
    for (int k = -2; k <= 3; ++k) {
      for (bool rearm : {false, true}) {
        h.step(Set{x, true, h.now() - 10}, true);
        int64_t t0 = -1;
        for (int i = 0; i < 200 && t0 < 0; ++i) {
          if (h.step(std::nullopt, true) == std::optional<uint32_t>(x)) t0 = h.cycle_ - 1;
        }
        ASSERT_GE(t0, 0);
        const int64_t next_read = t0 - 3 + 64;
        // run up to the set cycle
        while (static_cast<int64_t>(h.cycle_) < next_read + k) {
          EXPECT_FALSE(h.step(std::nullopt, true).has_value());
        }
        // disarm, or re-arm far in the future
        auto e = h.step(Set{x, rearm, h.now() + 100000}, true);
        if (k == 3) {
          // the set comes in the emission cycle: the push was before it
          EXPECT_EQ(e, std::optional<uint32_t>(x)) << "k " << k;
        } else {
          EXPECT_FALSE(e.has_value()) << "k " << k;
        }
        for (int i = 0; i < 3 * 64; ++i) {
          EXPECT_FALSE(h.step(std::nullopt, true).has_value())
              << "id " << x << " set at read offset " << k << " still emitted";
        }
      }
    }
  }
}

// With m_exp_ready low the scan stalls on the id it could not push and resumes there: after
// the FIFO contents, the ids come out in scan order without a gap.
TEST(CmTimer, StallsInsteadOfSkipping) {
  Small h(8, 1);
  for (uint32_t id = 0; id < Small::kIds; ++id) h.step(Set{id, true, h.now()}, false);
  for (int i = 0; i < 300; ++i) h.step(std::nullopt, false);
  std::vector<uint32_t> out;
  for (int i = 0; i < 200; ++i) {
    if (auto e = h.step(std::nullopt, true)) out.push_back(*e);
  }
  // the first kDepth came from the FIFO (pushed while some ids were not armed yet)
  ASSERT_GE(out.size(), 2 * Small::kIds + Small::kDepth);
  for (size_t k = Small::kDepth + 1; k < 2 * Small::kIds + Small::kDepth; ++k) {
    EXPECT_EQ(out[k], (out[k - 1] + 1) % Small::kIds) << "emission " << k;
  }
  h.drain();
}

// `now` starts 256 ticks below 2^32: deadlines after the wrap are not expired before it
// (an unsigned compare would fire at once), deadlines before it fire in time.
TEST(CmTimer, WrapAround) {
  Wrap h(7, 1);
  EXPECT_GE(h.now(), 0xFFFFFF00u);
  // ids 0..7: deadlines 0xFFFFFF80 .. ; ids 8..15 just after the wrap; 16..23 far ahead
  for (uint32_t i = 0; i < 8; ++i) h.step(Set{i, true, 0xFFFFFF80u + 16 * i}, true);
  for (uint32_t i = 0; i < 8; ++i) h.step(Set{8 + i, true, 0x10u + 16 * i}, true);
  // less than 2^31 ticks ahead: not expired
  for (uint32_t i = 0; i < 8; ++i) h.step(Set{16 + i, true, 0x7F000000u}, true);
  std::vector<int64_t> first(32, -1);
  std::vector<uint32_t> now_at(32, 0);
  std::optional<Set> disarm;
  for (int c = 0; c < 600; ++c) {
    uint32_t now = h.now();
    auto e = h.step(disarm, true);
    disarm.reset();
    if (e && first[*e] < 0) {
      first[*e] = c;
      now_at[*e] = now;
      disarm = Set{*e, false, 0};  // the consumer disarms in the next cycle
    }
  }
  for (uint32_t i = 0; i < 16; ++i) {
    uint32_t dl = i < 8 ? 0xFFFFFF80u + 16 * i : 0x10u + 16 * (i - 8);
    ASSERT_GE(first[i], 0) << "id " << i;
    EXPECT_TRUE(expired(now_at[i], dl)) << "id " << i;
    EXPECT_LE(now_at[i] - dl, 32u + 4u) << "id " << i << " late";  // one sweep = 32 ticks
  }
  for (uint32_t i = 16; i < 24; ++i) EXPECT_LT(first[i], 0) << "id " << i;
  EXPECT_LT(h.now(), 0x1000u);  // it did wrap
  // random traffic across the (next) wrap as well
  h.run_random(5000, 0.3, 0.7, -40, 100, 32);
  h.drain();
}

}  // namespace
