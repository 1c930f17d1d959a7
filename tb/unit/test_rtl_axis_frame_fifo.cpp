// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/common/bouncer_axis_frame_fifo at DATA_W 64 and 512 with a 32-beat FIFO.
// Random frames (random data and tkeep, 1..40 beats, random tvalid gaps) against random
// m_axis_tready. Every frame gets exactly one good_frame or drop_frame pulse, in frame
// order; the output is exactly the good frames, intact and in order (never part of a frame);
// a frame is only dropped when the FIFO really was full (the beats it held, counted from
// the outside, reach the depth), so frames of more than 32 beats are always dropped and
// frames sent into an empty FIFO with at most 32 beats never are.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vframe_fifo_w512.h"
#include "Vframe_fifo_w64.h"
#include "axis_harness.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

constexpr unsigned kDepth = 32;

using axis::Beat;
using axis::Frame;
using axis::set_byte;

template <typename Model, unsigned DataW>
class Harness : public axis::ClockedModel<Model> {
 public:
  static constexpr unsigned kWb = DataW / 8;
  using axis::ClockedModel<Model>::m_;
  using axis::ClockedModel<Model>::settle;

  explicit Harness(uint64_t seed) : axis::ClockedModel<Model>("ff"), rng_(seed) {}

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

  // One cycle: maybe present the next queued beat (probability valid_p), ready as given.
  void step(double valid_p, double ready_p) {
    std::bernoulli_distribution v(valid_p), r(ready_p);
    const bool have = !to_send_.empty();
    const bool valid = have && v(rng_);
    m_->s_axis_tvalid = valid;
    if (valid) {
      const Beat& b = to_send_.front()[send_beat_];
      for (unsigned i = 0; i < kWb; ++i) set_byte(m_->s_axis_tdata, i, b.data[i]);
      m_->s_axis_tkeep = static_cast<std::remove_reference_t<decltype(m_->s_axis_tkeep)>>(b.keep);
      m_->s_axis_tlast = b.last;
    } else {
      for (unsigned i = 0; i < kWb; ++i)
        set_byte(m_->s_axis_tdata, i, static_cast<uint8_t>(rng_()));
      m_->s_axis_tlast = rng_() & 1;
    }
    const bool ready = r(rng_);
    m_->m_axis_tready = ready;
    settle();
    EXPECT_TRUE(m_->s_axis_tready);

    // decisions (registered: about the beat of the previous cycle)
    EXPECT_FALSE(m_->good_frame && m_->drop_frame);
    if (m_->good_frame || m_->drop_frame) {
      ASSERT_FALSE(undecided_.empty()) << "decision pulse without a frame";
      ASSERT_TRUE(prev_beat_.valid) << "decision pulse without a beat in the previous cycle";
      Pending p = undecided_.front();
      undecided_.pop_front();
      EXPECT_EQ(p.id, prev_beat_.frame) << "decision out of frame order";
      if (m_->good_frame) {
        EXPECT_TRUE(prev_beat_.last) << "committed before tlast";
        EXPECT_LE(p.frame.size(), kDepth);
        good_.push_back(p.frame);
        committed_beats_ += p.frame.size();
        ++goods_;
      } else {
        // the FIFO held (from the outside) the committed beats not yet sent out plus the
        // beats of this frame before the one that found it full; up to 2 of the former may
        // already sit in the read pipeline
        const uint64_t held = prev_beat_.committed_unsent + prev_beat_.index;
        EXPECT_GE(held, kDepth) << "frame dropped although the FIFO was not full";
        EXPECT_LE(held, kDepth + 2u);
        ++drops_;
        dropped_beats_sum_ += p.frame.size();
      }
    }
    // output
    if (m_->m_axis_tvalid && ready) {
      const Beat b = this->out_beat(kWb);
      out_.push_back(b);
      if (b.last) {
        ASSERT_FALSE(good_.empty()) << "frame out that was never committed";
        EXPECT_EQ(out_, good_.front()) << "output frame #" << out_frames_;
        good_.pop_front();
        out_.clear();
        ++out_frames_;
      }
    }
    // this cycle's input beat, for the decision seen next cycle
    prev_beat_ = {};
    if (valid) {
      if (send_beat_ == 0) undecided_.push_back({next_id_, to_send_.front()});
      prev_beat_.valid = true;
      prev_beat_.frame = next_id_;
      prev_beat_.index = send_beat_;
      prev_beat_.last = to_send_.front()[send_beat_].last;
      prev_beat_.committed_unsent = committed_beats_ - sent_out_beats_;
      if (++send_beat_ == to_send_.front().size()) {
        to_send_.pop_front();
        send_beat_ = 0;
        ++next_id_;
      }
    }
    if (m_->m_axis_tvalid && ready) ++sent_out_beats_;
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  void run(double valid_p, double ready_p) {
    uint64_t guard = 0;
    while (!to_send_.empty()) {
      step(valid_p, ready_p);
      ASSERT_LT(++guard, 10000000u);
    }
  }

  // Hold ready until everything committed has come out.
  void drain() {
    for (int i = 0; i < 4 * static_cast<int>(kDepth) + 10; ++i) step(0.0, 1.0);
    EXPECT_TRUE(undecided_.empty());
    EXPECT_TRUE(good_.empty());
    EXPECT_TRUE(out_.empty());
    settle();
    EXPECT_FALSE(m_->m_axis_tvalid);
    EXPECT_EQ(goods_ + drops_, next_id_);
  }

  struct Pending {
    uint64_t id;
    Frame frame;
  };
  struct PrevBeat {
    bool valid = false;
    uint64_t frame = 0;
    uint64_t index = 0;
    bool last = false;
    uint64_t committed_unsent = 0;
  };

  std::mt19937_64 rng_;
  std::deque<Frame> to_send_;
  size_t send_beat_ = 0;
  uint64_t next_id_ = 0;
  std::deque<Pending> undecided_;
  std::deque<Frame> good_;
  Frame out_;
  PrevBeat prev_beat_;
  uint64_t committed_beats_ = 0;
  uint64_t sent_out_beats_ = 0;
  uint64_t goods_ = 0;
  uint64_t drops_ = 0;
  uint64_t out_frames_ = 0;
  uint64_t dropped_beats_sum_ = 0;
  uint64_t cycle_ = 0;
};

template <typename H>
void random_test(uint64_t seed) {
  H h(seed);
  std::uniform_int_distribution<unsigned> len(1, 40), short_len(1, 6);
  struct Phase {
    double valid, ready;
    bool short_frames;
  };
  for (Phase p : {Phase{1.0, 1.0, false}, Phase{0.8, 0.5, false}, Phase{1.0, 0.2, false},
                  Phase{0.5, 0.9, false}, Phase{1.0, 0.7, true}, Phase{0.9, 0.05, true}}) {
    for (int i = 0; i < 400; ++i)
      h.queue(h.random_frame(p.short_frames ? short_len(h.rng_) : len(h.rng_)));
    h.run(p.valid, p.ready);
  }
  h.drain();
  EXPECT_GT(h.drops_, 200u);
  EXPECT_GT(h.goods_, 1000u);
  EXPECT_EQ(h.out_frames_, h.goods_);
}

TEST(AxisFrameFifo, RandomW64) { random_test<Harness<Vframe_fifo_w64, 64>>(1); }
TEST(AxisFrameFifo, RandomW512) { random_test<Harness<Vframe_fifo_w512, 512>>(2); }

// A frame of exactly the depth fits an empty FIFO (even with the output stalled); the next
// beat then finds it full. A frame one beat longer never fits.
template <typename H>
void exact_fill_test(uint64_t seed) {
  H h(seed);
  h.queue(h.random_frame(kDepth));
  h.run(1.0, 0.0);
  h.queue(h.random_frame(1));
  h.queue(h.random_frame(3));
  h.run(1.0, 0.0);
  for (int i = 0; i < 3; ++i) h.step(0.0, 0.0);
  EXPECT_EQ(h.goods_, 1u);
  EXPECT_EQ(h.drops_, 2u);
  h.drain();
  EXPECT_EQ(h.out_frames_, 1u);
  // longer than the FIFO: dropped even with the output running
  h.queue(h.random_frame(kDepth + 1));
  h.run(1.0, 1.0);
  h.drain();
  EXPECT_EQ(h.drops_, 3u);
  // and exactly the depth again, output running
  h.queue(h.random_frame(kDepth));
  h.run(1.0, 1.0);
  h.drain();
  EXPECT_EQ(h.goods_, 2u);
  EXPECT_EQ(h.out_frames_, 2u);
}

TEST(AxisFrameFifo, ExactFillW64) { exact_fill_test<Harness<Vframe_fifo_w64, 64>>(3); }
TEST(AxisFrameFifo, ExactFillW512) { exact_fill_test<Harness<Vframe_fifo_w512, 512>>(4); }

// One beat per cycle in and out: back-to-back frames with ready held never drop and the
// output is busy every cycle once it starts.
template <typename H>
void throughput_test(uint64_t seed) {
  H h(seed);
  std::uniform_int_distribution<unsigned> len(1, 12);
  uint64_t beats = 0;
  for (int i = 0; i < 500; ++i) {
    h.queue(h.random_frame(len(h.rng_)));
    beats += h.to_send_.back().size();
  }
  const uint64_t c0 = h.cycle_;
  h.run(1.0, 1.0);
  uint64_t extra = 0;
  while (h.sent_out_beats_ < beats && extra < 100) {
    h.step(0.0, 1.0);
    ++extra;
  }
  EXPECT_EQ(h.drops_, 0u);
  EXPECT_EQ(h.sent_out_beats_, beats);
  // input takes `beats` cycles; the last frame needs its commit + 2 register stages
  EXPECT_LE(h.cycle_ - c0, beats + 12 + 3);
  h.drain();
}

TEST(AxisFrameFifo, ThroughputW64) { throughput_test<Harness<Vframe_fifo_w64, 64>>(5); }
TEST(AxisFrameFifo, ThroughputW512) { throughput_test<Harness<Vframe_fifo_w512, 512>>(6); }

}  // namespace
