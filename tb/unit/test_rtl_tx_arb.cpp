// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/tx/bouncer_tx_arb (2 inputs at DATA_W 64 and 512, 3 inputs at 64).
// Every input sends its own random frames with random tvalid gaps (AXI-Stream rules: a
// beat once valid is held until taken) against random m_axis_tready. Checked: the input
// handshakes never interleave two frames; the output is exactly the accepted beats in
// order, so every frame arrives intact and per-input order holds; frame_done/frame_bytes
// 2 cycles after every output tlast handshake, with the frame's byte count; fairness: while an
// input waits with a frame, every other input starts at most one frame; under saturation the output
// carries a beat every cycle (no bubble between frames or inputs); s_axis_tready does not depend
// combinationally on m_axis_tready.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

// Verilator 5.006's verilated_types.h has an unused parameter; not our code.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vtx_arb_n3.h"
#include "Vtx_arb_w512.h"
#include "Vtx_arb_w64.h"
#include "axis_harness.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

using axis::Beat;
using axis::Frame;
using axis::get_bit;
using axis::set_bit;
using axis::set_byte;

template <typename Model, unsigned DataW, unsigned N>
class Harness : public axis::ClockedModel<Model> {
 public:
  static constexpr unsigned kWb = DataW / 8;
  using axis::ClockedModel<Model>::m_;
  using axis::ClockedModel<Model>::settle;

  explicit Harness(uint64_t seed) : axis::ClockedModel<Model>("arb"), rng_(seed), in_(N) {}

  // A frame of `bytes` bytes: full beats, the last one keeps its low bytes.
  Frame random_frame(unsigned bytes) {
    Frame f((bytes + kWb - 1) / kWb);
    for (size_t b = 0; b < f.size(); ++b) {
      f[b].data.resize(kWb);
      for (auto& x : f[b].data) x = static_cast<uint8_t>(rng_());
      unsigned n = b + 1 == f.size() ? bytes - static_cast<unsigned>(b) * kWb : kWb;
      f[b].keep = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
      f[b].last = b + 1 == f.size();
    }
    return f;
  }

  struct Input {
    std::deque<Frame> frames;
    size_t beat = 0;
    bool valid = false;            // presenting frames.front()[beat]
    int64_t wait_since = -1;       // a frame's first beat is valid and not taken
    std::vector<unsigned> starts;  // frames started by each input during that wait
  };

  // One cycle; each idle input presents its next beat with probability valid_p.
  void step(double valid_p, double ready_p) {
    std::bernoulli_distribution v(valid_p), r(ready_p);
    for (unsigned i = 0; i < N; ++i) {
      Input& in = in_[i];
      if (!in.valid && !in.frames.empty() && v(rng_)) in.valid = true;
      set_bit(m_->s_axis_tvalid, i, in.valid);
      if (in.valid) {
        const Beat& b = in.frames.front()[in.beat];
        for (unsigned k = 0; k < kWb; ++k) set_byte(m_->s_axis_tdata, i * kWb + k, b.data[k]);
        for (unsigned k = 0; k < kWb; ++k)
          set_bit(m_->s_axis_tkeep, i * kWb + k, (b.keep >> k) & 1);
        set_bit(m_->s_axis_tlast, i, b.last);
        if (in.beat == 0 && in.wait_since < 0) {
          in.wait_since = static_cast<int64_t>(cycle_);
          in.starts.assign(N, 0);
        }
      } else {
        for (unsigned k = 0; k < kWb; ++k)
          set_byte(m_->s_axis_tdata, i * kWb + k, static_cast<uint8_t>(rng_()));
        set_bit(m_->s_axis_tlast, i, rng_() & 1);
      }
    }
    const bool ready = r(rng_);
    // s_axis_tready must not follow m_axis_tready combinationally
    m_->m_axis_tready = !ready;
    settle();
    const auto tready_other = m_->s_axis_tready;
    m_->m_axis_tready = ready;
    settle();
    EXPECT_EQ(m_->s_axis_tready, tready_other) << "s_axis_tready follows m_axis_tready";

    // output handshake
    const bool out_hs = m_->m_axis_tvalid && ready;
    // frame_done / frame_bytes: kDoneDelay cycles after the frame's tlast handshake
    const bool due = !done_due_.empty() && done_due_.front().first == cycle_;
    EXPECT_EQ(static_cast<bool>(m_->frame_done), due) << "cycle " << cycle_;
    if (due) {
      EXPECT_EQ(m_->frame_bytes, done_due_.front().second & 0xFFFF) << "frame #" << done_frames_;
      done_due_.pop_front();
      ++done_frames_;
    }
    if (out_hs) {
      const Beat b = this->out_beat(kWb);
      ASSERT_FALSE(accepted_.empty()) << "output beat that was never taken";
      EXPECT_EQ(b, accepted_.front()) << "output beat #" << out_beats_;
      accepted_.pop_front();
      out_bytes_ += std::popcount(b.keep);
      ++out_beats_;
      ++busy_cycles_;
      if (b.last) {
        done_due_.emplace_back(cycle_ + kDoneDelay, out_bytes_);
        out_bytes_ = 0;
        ++out_frames_;
      }
    }
    // input handshakes: at most one, and never inside another input's frame
    unsigned taken = 0;
    for (unsigned i = 0; i < N; ++i) {
      Input& in = in_[i];
      if (!(in.valid && get_bit(m_->s_axis_tready, i))) continue;
      ++taken;
      if (owner_ >= 0) {
        EXPECT_EQ(owner_, static_cast<int>(i)) << "frames interleaved";
      }
      if (in.beat == 0) {
        // fairness bookkeeping: every waiting input counts this start
        for (unsigned j = 0; j < N; ++j) {
          if (j == i || in_[j].wait_since < 0) continue;
          if (++in_[j].starts[i] > 1) {
            ADD_FAILURE() << "input " << j << " waits since cycle " << in_[j].wait_since
                          << " while input " << i << " starts its 2nd frame";
          }
        }
        in.wait_since = -1;
        ++frames_in_[i];
      }
      const Beat& b = in.frames.front()[in.beat];
      accepted_.push_back(b);
      owner_ = b.last ? -1 : static_cast<int>(i);
      in.valid = false;
      if (++in.beat == in.frames.front().size()) {
        in.frames.pop_front();
        in.beat = 0;
      }
    }
    EXPECT_LE(taken, 1u);
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  bool inputs_empty() const {
    for (const Input& in : in_)
      if (!in.frames.empty()) return false;
    return true;
  }

  void run(double valid_p, double ready_p) {
    uint64_t guard = 0;
    while (!inputs_empty()) {
      step(valid_p, ready_p);
      ASSERT_LT(++guard, 10000000u);
    }
    for (int i = 0; i < 10; ++i) step(0.0, 1.0);
    EXPECT_TRUE(accepted_.empty());
    EXPECT_TRUE(done_due_.empty()) << "frame_done missing";
    EXPECT_EQ(done_frames_, out_frames_);
    settle();
    EXPECT_FALSE(m_->m_axis_tvalid);
  }

  void queue_random(unsigned per_input, unsigned max_bytes) {
    std::uniform_int_distribution<unsigned> len(1, max_bytes);
    for (auto& in : in_)
      for (unsigned k = 0; k < per_input; ++k) in.frames.push_back(random_frame(len(rng_)));
  }

  std::mt19937_64 rng_;
  std::vector<Input> in_;
  std::deque<Beat> accepted_;
  int owner_ = -1;
  uint64_t frames_in_[N] = {};
  uint64_t out_beats_ = 0;
  uint64_t out_frames_ = 0;
  uint64_t out_bytes_ = 0;
  static constexpr uint64_t kDoneDelay = 2;
  std::deque<std::pair<uint64_t, uint64_t>> done_due_;  // (cycle, bytes) of each frame_done
  uint64_t done_frames_ = 0;
  uint64_t busy_cycles_ = 0;
  uint64_t cycle_ = 0;
};

template <typename H>
void random_test(uint64_t seed, unsigned max_bytes) {
  H h(seed);
  struct Phase {
    double valid, ready;
  };
  uint64_t frames = 0;
  for (Phase p : {Phase{1.0, 1.0}, Phase{0.5, 0.5}, Phase{0.9, 0.3}, Phase{0.2, 1.0},
                  Phase{1.0, 0.7}, Phase{0.05, 0.05}}) {
    h.queue_random(150, max_bytes);
    frames += 150 * h.in_.size();
    h.run(p.valid, p.ready);
  }
  EXPECT_EQ(h.out_frames_, frames);
}

TEST(TxArb, RandomW64) { random_test<Harness<Vtx_arb_w64, 64, 2>>(1, 200); }
TEST(TxArb, RandomW512) { random_test<Harness<Vtx_arb_w512, 512, 2>>(2, 600); }
TEST(TxArb, RandomThreeInputs) { random_test<Harness<Vtx_arb_n3, 64, 3>>(3, 150); }

// Saturated inputs with ready held: one beat every cycle across frame and input changes,
// and the inputs alternate frame by frame.
template <typename H>
void saturation_test(uint64_t seed, unsigned max_bytes) {
  H h(seed);
  h.queue_random(200, max_bytes);
  uint64_t beats = 0;
  for (auto& in : h.in_)
    for (auto& f : in.frames) beats += f.size();
  const uint64_t c0 = h.cycle_;
  while (!h.inputs_empty()) h.step(1.0, 1.0);
  const uint64_t in_cycles = h.cycle_ - c0;
  EXPECT_EQ(in_cycles, beats) << "bubbles on the input side";
  h.step(0.0, 1.0);
  EXPECT_EQ(h.busy_cycles_, beats);
  EXPECT_EQ(h.out_beats_, beats);
  for (auto n : h.frames_in_) EXPECT_EQ(n, 200u);
}

TEST(TxArb, SaturationW64) { saturation_test<Harness<Vtx_arb_w64, 64, 2>>(4, 100); }
TEST(TxArb, SaturationW512) { saturation_test<Harness<Vtx_arb_w512, 512, 2>>(5, 300); }
TEST(TxArb, SaturationThreeInputs) { saturation_test<Harness<Vtx_arb_n3, 64, 3>>(6, 100); }

// A long frame: frame_bytes counts beyond 255 and up to the 16-bit limit.
TEST(TxArb, LongFrameBytes) {
  Harness<Vtx_arb_w512, 512, 2> h(7);
  h.in_[0].frames.push_back(h.random_frame(9000));
  h.in_[1].frames.push_back(h.random_frame(65535));
  h.in_[0].frames.push_back(h.random_frame(1));
  h.run(1.0, 0.8);
  EXPECT_EQ(h.out_frames_, 3u);
}

}  // namespace
