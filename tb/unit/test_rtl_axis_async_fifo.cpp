// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/common/bouncer_axis_async_fifo at DATA_W 64 and 512, with FRAME_DROP 0
// (TX: no loss, 16 beats deep) and 1 (RX: whole-frame drops, 128 beats deep: two banks of the
// tlast RAM), driven by two independent clocks
// at several period ratios (250 vs 322.27 MHz both ways, equal clocks in phase and out of
// phase, 1:7 both ways). Time is simulated in picoseconds; each side samples its handshake
// just before its own rising edge.
// Checked everywhere: every frame gets exactly one s_good_frame or s_drop_frame pulse, in
// order; the output is exactly the good frames, intact and in order; a frame's first beat
// leaves only after its tlast beat was taken (store and forward); once a frame has started on
// m_axis, tvalid stays high until its tlast beat (no gap inside a frame); a beat waiting for
// m_axis_tready stays unchanged; with FRAME_DROP 1 s_axis_tready is always 1, with FRAME_DROP
// 0 nothing is ever dropped except a frame longer than the FIFO.
// Dedicated tests: the capacity with the read side stalled (the depth in the RAM + 2 in the
// read pipeline, then tready low / frames dropped), a frame of exactly the depth fitting an
// empty FIFO, one beat more never fitting, and the latency of an idle FIFO in m_clk cycles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

// Verilator 5.006's headers trip -Wunused-parameter; they are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vasync_fifo_drop_w512.h"
#include "Vasync_fifo_drop_w64.h"
#include "Vasync_fifo_w512.h"
#include "Vasync_fifo_w64.h"
#include "axis_harness.hpp"
#include "axis_lanes.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

using axis::Beat;
using axis::Frame;
using axis::set_byte;

struct Clock {
  uint64_t period;  // ps
  uint64_t phase;   // first rising edge
  uint64_t rise = 0, fall = 0;
  void init() {
    rise = phase;
    fall = phase + period / 2;
  }
};

template <typename Model, unsigned DataW, bool kDrop, unsigned Depth>
class Harness {
 public:
  static constexpr unsigned kWb = DataW / 8;
  static constexpr unsigned kDepth = Depth;

  // s_ps, m_ps: clock periods; m_phase: offset of m_clk's first rising edge
  Harness(uint64_t seed, uint64_t s_ps, uint64_t m_ps, uint64_t m_phase) : rng_(seed) {
    ctx_.randReset(2);
    m_ = std::make_unique<Model>(&ctx_, "af");
    s_.period = s_ps;
    s_.phase = s_ps;  // both start low
    mc_.period = m_ps;
    mc_.phase = m_ps + m_phase;
    s_.init();
    mc_.init();
    m_->s_clk = 0;
    m_->m_clk = 0;
    m_->s_axis_tvalid = 0;
    m_->m_axis_tready = 0;
    m_->s_rst = 1;
    m_->m_rst = 1;
    m_->eval();
    advance_until(5 * std::max(s_ps, m_ps));
    m_->s_rst = 0;
    m_->m_rst = 0;
    m_->eval();
  }

  Frame random_frame(unsigned beats) {
    Frame f(beats);
    for (unsigned b = 0; b < beats; ++b) {
      f[b].data.resize(kWb);
      for (auto& x : f[b].data) x = static_cast<uint8_t>(rng_());
      f[b].keep = rng_() & (kWb == 64 ? ~uint64_t{0} : ((uint64_t{1} << kWb) - 1));
      f[b].last = b + 1 == beats;
    }
    return f;
  }
  void queue(const Frame& f) { to_send_.push_back(f); }

  // Run until everything queued has been taken by the FIFO.
  void run(double valid_p, double ready_p) {
    valid_p_ = valid_p;
    ready_p_ = ready_p;
    const uint64_t limit = now_ + 2000000000ull;
    while ((!to_send_.empty() || presenting_) && now_ < limit) step();
    EXPECT_TRUE(to_send_.empty() && !presenting_) << "input stuck at " << now_ << " ps";
  }
  // Run for a while with the given probabilities (no new input if the queue is empty).
  void run_for(uint64_t ps, double valid_p, double ready_p) {
    valid_p_ = valid_p;
    ready_p_ = ready_p;
    advance_until(now_ + ps);
  }
  // Read side always ready until everything committed has left, then reconcile.
  void drain() {
    run(1.0, 1.0);
    run_for(200 * (s_.period + mc_.period), 0.0, 1.0);
    EXPECT_FALSE(m_->m_axis_tvalid);
    reconcile();
  }

  // Every frame decided once, in order; the output is exactly the good frames; each left
  // after its tlast beat was taken.
  void reconcile() {
    ASSERT_EQ(decisions_.size(), in_.size()) << "frames without a decision";
    size_t k = 0;
    for (size_t i = 0; i < in_.size(); ++i) {
      if (!decisions_[i]) continue;
      ASSERT_LT(k, out_.size()) << "good frame #" << i << " never came out";
      EXPECT_EQ(out_[k].beats, in_[i].beats) << "frame #" << i;
      EXPECT_GT(out_[k].first_ps, in_[i].last_ps) << "frame #" << i << " left before its tlast";
      ++k;
    }
    EXPECT_EQ(k, out_.size()) << "more frames out than good frames";
    EXPECT_TRUE(cur_out_.empty()) << "a partial frame came out";
  }

  unsigned goods() const {
    return static_cast<unsigned>(std::count(decisions_.begin(), decisions_.end(), true));
  }
  unsigned drops() const { return static_cast<unsigned>(decisions_.size()) - goods(); }

  struct In {
    Frame beats;
    uint64_t last_ps = 0;
  };
  struct Out {
    Frame beats;
    uint64_t first_ps = 0;
  };

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  Clock s_, mc_;
  uint64_t now_ = 0;
  double valid_p_ = 1.0, ready_p_ = 1.0;
  std::deque<Frame> to_send_;
  bool presenting_ = false;
  size_t send_beat_ = 0;
  std::vector<In> in_;           // frames whose first beat was taken, in order
  std::vector<bool> decisions_;  // true = good
  std::vector<Out> out_;
  Frame cur_out_;
  uint64_t cur_out_first_ps_ = 0;
  std::optional<Beat> waiting_;  // m_axis beat offered but not taken at the last m edge
  uint64_t s_taken_beats_ = 0, m_taken_beats_ = 0;

 private:
  void advance_until(uint64_t t_end) {
    while (std::min(std::min(s_.rise, s_.fall), std::min(mc_.rise, mc_.fall)) <= t_end) step();
    now_ = std::max(now_, t_end);
  }

  // One time step: the earliest pending clock event(s).
  void step() {
    const uint64_t t = std::min(std::min(s_.rise, s_.fall), std::min(mc_.rise, mc_.fall));
    now_ = t;
    bool fell = false;
    if (s_.fall == t) {
      m_->s_clk = 0;
      s_.fall += s_.period;
      fell = true;
    }
    if (mc_.fall == t) {
      m_->m_clk = 0;
      mc_.fall += mc_.period;
      fell = true;
    }
    if (fell) m_->eval();
    const bool s_rise = s_.rise == t, m_rise = mc_.rise == t;
    if (!s_rise && !m_rise) return;
    // sample both sides before the edge
    bool s_took = false;
    if (s_rise && !m_->s_rst) s_took = sample_s(t);
    if (m_rise && !m_->m_rst) sample_m(t);
    if (s_rise) {
      m_->s_clk = 1;
      s_.rise += s_.period;
    }
    if (m_rise) {
      m_->m_clk = 1;
      mc_.rise += mc_.period;
    }
    m_->eval();
    if (s_rise && !m_->s_rst) drive_s(s_took);
    if (m_rise && !m_->m_rst) m_->m_axis_tready = std::bernoulli_distribution(ready_p_)(rng_);
    m_->eval();
  }

  bool sample_s(uint64_t t) {
    EXPECT_TRUE(!kDrop || m_->s_axis_tready);
    EXPECT_FALSE(m_->s_good_frame && m_->s_drop_frame);
    if (m_->s_good_frame || m_->s_drop_frame) {
      EXPECT_LT(decisions_.size(), in_.size()) << "decision pulse without a frame";
      decisions_.push_back(m_->s_good_frame);
    }
    if (!(presenting_ && m_->s_axis_tready)) return false;
    const Frame& f = to_send_.front();
    if (send_beat_ == 0) in_.push_back({f, 0});
    ++s_taken_beats_;
    if (f[send_beat_].last) in_.back().last_ps = t;
    return true;
  }

  void drive_s(bool took) {
    if (took) {
      presenting_ = false;
      if (++send_beat_ == to_send_.front().size()) {
        to_send_.pop_front();
        send_beat_ = 0;
      }
    }
    if (!presenting_ && !to_send_.empty() && std::bernoulli_distribution(valid_p_)(rng_))
      presenting_ = true;
    m_->s_axis_tvalid = presenting_;
    if (presenting_) {
      const Beat& b = to_send_.front()[send_beat_];
      for (unsigned i = 0; i < kWb; ++i) set_byte(m_->s_axis_tdata, i, b.data[i]);
      m_->s_axis_tkeep = static_cast<std::remove_reference_t<decltype(m_->s_axis_tkeep)>>(b.keep);
      m_->s_axis_tlast = b.last;
    } else {
      for (unsigned i = 0; i < kWb; ++i)
        set_byte(m_->s_axis_tdata, i, static_cast<uint8_t>(rng_()));
      m_->s_axis_tlast = rng_() & 1;
    }
  }

  void sample_m(uint64_t t) {
    const bool v = m_->m_axis_tvalid;
    if (waiting_) {
      ASSERT_TRUE(v) << "m_axis withdrew a beat at " << t << " ps";
      EXPECT_EQ(read_beat(), *waiting_) << "m_axis changed a waiting beat";
    }
    waiting_.reset();
    EXPECT_TRUE(cur_out_.empty() || v) << "gap inside a frame at " << t << " ps";
    if (!v) return;
    if (!m_->m_axis_tready) {
      waiting_ = read_beat();
      return;
    }
    if (cur_out_.empty()) cur_out_first_ps_ = t;
    cur_out_.push_back(read_beat());
    ++m_taken_beats_;
    if (cur_out_.back().last) {
      out_.push_back({cur_out_, cur_out_first_ps_});
      cur_out_.clear();
    }
  }

  Beat read_beat() const {
    Beat b;
    b.data.resize(kWb);
    for (unsigned i = 0; i < kWb; ++i) b.data[i] = axis::lane_byte(m_->m_axis_tdata, i);
    b.keep = static_cast<uint64_t>(m_->m_axis_tkeep);
    b.last = m_->m_axis_tlast;
    return b;
  }
};

// The clock pairs (s period, m period, m phase), in ps: 250 MHz and 322.265625 MHz both ways,
// equal clocks in phase and out of phase, and 1:7 both ways.
struct Ratio {
  uint64_t s_ps, m_ps, m_phase;
};
constexpr Ratio kRatios[] = {{4000, 3103, 1234}, {3103, 4000, 777}, {3103, 3103, 0},
                             {3103, 3103, 1500}, {1000, 7001, 333}, {7001, 1000, 250}};

// Random frames against random valid/ready in phases from saturated to a nearly stalled
// read side. FRAME_DROP 0: frames up to the depth, none lost. FRAME_DROP 1: frames up to
// the depth + 3 (those never fit), drops when the read side falls behind.
template <typename H, bool kDrop>
void random_test(uint64_t seed) {
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(::testing::Message() << "s " << r.s_ps << " ps, m " << r.m_ps << " ps");
    H h(seed++, r.s_ps, r.m_ps, r.m_phase);
    std::uniform_int_distribution<unsigned> len(1, kDrop ? H::kDepth + 3 : H::kDepth),
        short_len(1, 3);
    struct Phase {
      double valid, ready;
      bool short_frames;
    };
    for (Phase p : {Phase{1.0, 1.0, false}, Phase{0.8, 0.5, false}, Phase{1.0, 0.2, false},
                    Phase{0.5, 0.9, false}, Phase{1.0, 0.7, true}, Phase{0.9, 0.05, true}}) {
      for (int i = 0; i < 120; ++i)
        h.queue(h.random_frame(p.short_frames ? short_len(h.rng_) : len(h.rng_)));
      h.run(p.valid, p.ready);
    }
    h.drain();
    if (kDrop) {
      EXPECT_GT(h.goods(), 50u);
      EXPECT_GT(h.drops(), 20u);
      for (size_t i = 0; i < h.in_.size(); ++i)
        EXPECT_TRUE(h.in_[i].beats.size() <= H::kDepth || !h.decisions_[i]) << "frame #" << i;
    } else {
      EXPECT_EQ(h.goods(), 720u);
      EXPECT_EQ(h.drops(), 0u);
    }
  }
}

// FRAME_DROP 0 models: 16 beats (one tlast RAM bank); FRAME_DROP 1: 128 (two 64-entry banks)
using NoDrop64 = Harness<Vasync_fifo_w64, 64, false, 16>;
using NoDrop512 = Harness<Vasync_fifo_w512, 512, false, 16>;
using Drop64 = Harness<Vasync_fifo_drop_w64, 64, true, 128>;
using Drop512 = Harness<Vasync_fifo_drop_w512, 512, true, 128>;

TEST(AxisAsyncFifo, RandomNoDropW64) { random_test<NoDrop64, false>(1); }
TEST(AxisAsyncFifo, RandomNoDropW512) { random_test<NoDrop512, false>(11); }
TEST(AxisAsyncFifo, RandomDropW64) { random_test<Drop64, true>(21); }
TEST(AxisAsyncFifo, RandomDropW512) { random_test<Drop512, true>(31); }

// Read side stalled: one-beat frames fill the RAM (the depth) and the read pipeline (RAM
// output register + output register, 2). FRAME_DROP 0 then holds s_axis_tready low for good;
// FRAME_DROP 1 drops every further frame. Released, exactly those depth + 2 frames come out.
template <typename H, bool kDrop>
void capacity_test() {
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(::testing::Message() << "s " << r.s_ps << " ps, m " << r.m_ps << " ps");
    H h(7, r.s_ps, r.m_ps, r.m_phase);
    const uint64_t settle = 20 * (r.s_ps + r.m_ps);
    for (unsigned i = 0; i < H::kDepth + 6; ++i) {
      h.queue(h.random_frame(1));
      if (kDrop) {  // spaced, so that the write side has seen every read
        h.run(1.0, 0.0);
        h.run_for(settle, 0.0, 0.0);
      }
    }
    if (kDrop) {
      EXPECT_EQ(h.goods(), H::kDepth + 2);
      EXPECT_EQ(h.drops(), 4u);
    } else {
      h.run_for(50 * settle, 1.0, 0.0);
      EXPECT_EQ(h.s_taken_beats_, H::kDepth + 2);
      EXPECT_FALSE(h.m_->s_axis_tready);
      EXPECT_EQ(h.to_send_.size(), 4u);
    }
    EXPECT_TRUE(h.m_->m_axis_tvalid);
    EXPECT_EQ(h.m_taken_beats_, 0u);
    h.drain();
    EXPECT_EQ(h.out_.size(), kDrop ? H::kDepth + 2 : H::kDepth + 6);
  }
}

TEST(AxisAsyncFifo, CapacityNoDropW64) { capacity_test<NoDrop64, false>(); }
TEST(AxisAsyncFifo, CapacityNoDropW512) { capacity_test<NoDrop512, false>(); }
TEST(AxisAsyncFifo, CapacityDropW64) { capacity_test<Drop64, true>(); }
TEST(AxisAsyncFifo, CapacityDropW512) { capacity_test<Drop512, true>(); }

// A frame of exactly the depth fits an empty FIFO even with the read side stalled; a frame
// one beat longer never fits, whatever the read side does: FRAME_DROP 1 drops it, and so
// does FRAME_DROP 0 (it cannot be stored) instead of stalling; the stream goes on.
template <typename H, bool kDrop>
void oversize_test() {
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(::testing::Message() << "s " << r.s_ps << " ps, m " << r.m_ps << " ps");
    H h(9, r.s_ps, r.m_ps, r.m_phase);
    h.queue(h.random_frame(H::kDepth));
    h.run(1.0, 0.0);
    h.run_for(20 * (r.s_ps + r.m_ps), 0.0, 0.0);
    ASSERT_EQ(h.decisions_.size(), 1u);
    EXPECT_TRUE(h.decisions_[0]);
    h.drain();
    h.queue(h.random_frame(3));
    h.queue(h.random_frame(H::kDepth + 1));
    h.queue(h.random_frame(H::kDepth + 5));
    h.queue(h.random_frame(2));
    h.run(1.0, 1.0);
    h.drain();
    ASSERT_EQ(h.decisions_.size(), 5u);
    EXPECT_EQ(h.decisions_, (std::vector<bool>{true, true, false, false, true}));
    EXPECT_EQ(h.out_.size(), 3u);
  }
}

TEST(AxisAsyncFifo, OversizeNoDropW64) { oversize_test<NoDrop64, false>(); }
TEST(AxisAsyncFifo, OversizeNoDropW512) { oversize_test<NoDrop512, false>(); }
TEST(AxisAsyncFifo, OversizeDropW64) { oversize_test<Drop64, true>(); }
TEST(AxisAsyncFifo, OversizeDropW512) { oversize_test<Drop512, true>(); }

// Idle FIFO, read side ready: the s_clk edge after the one that took the tlast beat writes
// its tlast bit and the frame count's Gray code; the first beat is then taken at the 6th m_clk
// edge strictly after that edge (2 synchroniser edges, the avail_q edge, the RAM read edge, the
// output register edge, then the handshake edge), so 1 s_clk period + 5 to 6 m_clk periods
// later; an empty FIFO never offers a beat.
template <typename H>
void latency_test() {
  for (const Ratio& r : kRatios) {
    SCOPED_TRACE(::testing::Message() << "s " << r.s_ps << " ps, m " << r.m_ps << " ps");
    H h(5, r.s_ps, r.m_ps, r.m_phase);
    h.run_for(50 * (r.s_ps + r.m_ps), 0.0, 1.0);
    EXPECT_TRUE(h.out_.empty());
    for (unsigned n = 1; n <= 20; ++n) {
      h.queue(h.random_frame(1 + n % 3));
      h.run(1.0, 1.0);
      h.run_for(20 * (r.s_ps + r.m_ps), 0.0, 1.0);
      ASSERT_EQ(h.out_.size(), n);
      const uint64_t lat = h.out_.back().first_ps - h.in_.back().last_ps;
      EXPECT_GT(lat, r.s_ps + 5 * r.m_ps);
      EXPECT_LE(lat, r.s_ps + 6 * r.m_ps);
    }
    h.drain();
  }
}

TEST(AxisAsyncFifo, LatencyNoDropW64) { latency_test<NoDrop64>(); }
TEST(AxisAsyncFifo, LatencyDropW512) { latency_test<Drop512>(); }

}  // namespace
