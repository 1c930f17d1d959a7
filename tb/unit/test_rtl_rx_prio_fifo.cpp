// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/rx/bouncer_rx_prio_fifo (with bouncer_rx_syn_class and two
// bouncer_rx_frame_ring) at DATA_W 64 and 512, with a 64-beat main queue and a 16-beat SYN
// queue. Frames: pure SYNs (IPv4/TCP, untagged or 802.1Q, IHL 5..15, SYN with other flags
// than ACK/RST/FIN), near misses (SYN|ACK, RST, FIN, another EtherType, QinQ, IPv6 version,
// UDP, a frame cut before its flags byte) and random bytes, back to back or with gaps,
// against random m_axis_tready. Checked against a classifier written here from the header
// layout (not from the RTL):
// - every frame gets exactly one of good_frame / syn_drop / drop_frame, two cycles after its
//   tlast beat; syn_drop only for pure SYNs, drop_frame only for the others;
// - a frame is dropped only when its queue (its class's beats kept and not yet out, from the
//   outside) could not hold it, and kept only when it could;
// - the output is exactly the kept frames, whole; each queue's frames in their order;
// - a waiting non-SYN frame goes out before a waiting SYN; last beat in -> first beat out is
//   3 cycles for either class; back-to-back frames at one beat per cycle drop nothing.
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
#include "Vrx_prio_fifo_w512.h"
#include "Vrx_prio_fifo_w64.h"
#include "axis_harness.hpp"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace {

constexpr unsigned kMainDepth = 64, kSynDepth = 16;  // beats (DEPTH_LOG2 6, SYN_DEPTH_LOG2 4)

using axis::Beat;
using axis::Frame;
using axis::set_byte;
using Bytes = std::vector<uint8_t>;

// The reference: a pure SYN is Ethernet [one 802.1Q tag] IPv4 (version 4, IHL >= 5) TCP with
// the flags byte present, SYN set and ACK, RST, FIN clear.
bool pure_syn(const Bytes& f) {
  if (f.size() < 14) return false;
  size_t off = 14;
  unsigned et = f[12] << 8 | f[13];
  if (et == 0x8100) {
    if (f.size() < 18) return false;
    et = f[16] << 8 | f[17];
    off = 18;
  }
  if (et != 0x0800 || f.size() < off + 10) return false;
  const unsigned ver = f[off] >> 4, ihl = f[off] & 15;
  if (ver != 4 || ihl < 5 || f[off + 9] != 6) return false;
  const size_t fl = off + 4 * ihl + 13;
  if (fl >= f.size()) return false;
  return (f[fl] & 0x17) == 0x02;
}

enum class Kind { kSyn, kNearMiss, kRandom };

template <typename Model, unsigned DataW>
class Harness : public axis::ClockedModel<Model> {
 public:
  static constexpr unsigned kWb = DataW / 8;
  using axis::ClockedModel<Model>::m_;
  using axis::ClockedModel<Model>::settle;

  explicit Harness(uint64_t seed) : axis::ClockedModel<Model>("pf"), rng_(seed) {}

  uint8_t rb() { return static_cast<uint8_t>(rng_()); }
  unsigned ru(unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng_);
  }

  // An IPv4/TCP frame: [802.1Q], IHL ihl, TCP header of doff words, payload, padded to 60.
  Bytes tcp_frame(bool vlan, unsigned ihl, uint8_t flags, unsigned payload) {
    Bytes f;
    for (int i = 0; i < 12; ++i) f.push_back(rb());
    if (vlan) {
      f.insert(f.end(), {0x81, 0x00, rb(), rb()});
    }
    f.insert(f.end(), {0x08, 0x00});
    const size_t ip = f.size();
    f.resize(ip + 4 * ihl);
    for (size_t i = ip; i < f.size(); ++i) f[i] = rb();
    f[ip] = static_cast<uint8_t>(0x40 | ihl);
    f[ip + 9] = 6;
    const unsigned doff = ru(5, 10);
    const size_t tcp = f.size();
    f.resize(tcp + 4 * doff + payload);
    for (size_t i = tcp; i < f.size(); ++i) f[i] = rb();
    f[tcp + 13] = flags;
    if (f.size() < 60) f.resize(60, 0);
    return f;
  }

  Bytes make(Kind k) {
    const bool vlan = rng_() & 1;
    const unsigned ihl = ru(5, 15);
    const unsigned pl = (rng_() % 3 == 0) ? ru(0, 300) : 0;
    if (k == Kind::kSyn) {
      // SYN, perhaps with PSH/URG/ECE/CWR: still pure
      return tcp_frame(vlan, ihl, static_cast<uint8_t>(0x02 | (rb() & 0xE8)), pl);
    }
    if (k == Kind::kRandom) {
      Bytes f(ru(1, 200));
      for (auto& x : f) x = rb();
      return f;
    }
    const uint8_t bad_flags[] = {0x12, 0x04, 0x01, 0x03, 0x06, 0x10, 0x00, 0x18};
    Bytes f = tcp_frame(vlan, ihl, 0x02, pl);
    const size_t ip = vlan ? 18 : 14;
    switch (ru(0, 6)) {
      case 0:
        f[ip + 4 * ihl + 13] = bad_flags[ru(0, 7)];
        break;  // not a pure SYN
      case 1:
        f[ip - 2] = 0x86, f[ip - 1] = 0xDD;
        break;  // another EtherType
      case 2:   // QinQ outer tag
        if (vlan)
          f[12] = 0x88, f[13] = 0xA8;
        else
          f[12] = 0x08, f[13] = 0x06;
        break;
      case 3:
        f[ip] = static_cast<uint8_t>(0x60 | ihl);
        break;  // version 6
      case 4:
        f[ip + 9] = 17;
        break;  // UDP
      case 5:
        f.resize(ip + 4 * ihl + 13);
        break;  // cut before the flags
      default:
        f[ip] = static_cast<uint8_t>(0x40 | ru(0, 4));
        break;  // IHL < 5
    }
    return f;
  }

  Frame to_beats(const Bytes& b) {
    Frame f((b.size() + kWb - 1) / kWb);
    for (size_t i = 0; i < f.size(); ++i) {
      f[i].data.resize(kWb);
      for (unsigned j = 0; j < kWb; ++j) {
        const size_t k = i * kWb + j;
        f[i].data[j] = k < b.size() ? b[k] : 0;
        if (k < b.size()) f[i].keep |= uint64_t{1} << j;
      }
      f[i].last = i + 1 == f.size();
    }
    return f;
  }

  void queue(const Bytes& b) { to_send_.push_back({to_beats(b), pure_syn(b)}); }
  void queue_kind(Kind k) { queue(make(k)); }
  void queue_random() {
    const unsigned r = ru(0, 9);
    queue_kind(r < 5 ? Kind::kSyn : r < 9 ? Kind::kNearMiss : Kind::kRandom);
  }

  struct In {
    Frame frame;
    bool syn;
  };
  struct Pending {
    In in;
    uint64_t due;   // step of its accounting pulse
    uint64_t held;  // its class's beats kept and not yet out, at its first beat
  };

  uint64_t& held(bool syn) { return syn ? held_syn_ : held_main_; }

  void step(double valid_p, double ready_p) {
    std::bernoulli_distribution v(valid_p), r(ready_p);
    const bool valid = !to_send_.empty() && v(rng_);
    m_->s_axis_tvalid = valid;
    if (valid) {
      const Beat& b = to_send_.front().frame[send_beat_];
      for (unsigned i = 0; i < kWb; ++i) set_byte(m_->s_axis_tdata, i, b.data[i]);
      m_->s_axis_tkeep = static_cast<std::remove_reference_t<decltype(m_->s_axis_tkeep)>>(b.keep);
      m_->s_axis_tlast = b.last;
    } else {
      for (unsigned i = 0; i < kWb; ++i) set_byte(m_->s_axis_tdata, i, rb());
      m_->s_axis_tlast = rng_() & 1;
    }
    const bool ready = r(rng_);
    m_->m_axis_tready = ready;
    settle();
    EXPECT_TRUE(m_->s_axis_tready);

    // accounting pulses, for the frame whose tlast beat was two steps ago
    const int pulses = m_->good_frame + m_->drop_frame + m_->syn_drop;
    EXPECT_LE(pulses, 1);
    const bool due = !undecided_.empty() && undecided_.front().due == cycle_;
    EXPECT_EQ(pulses == 1, due) << "accounting pulse at step " << cycle_;
    if (due && pulses == 1) {
      Pending p = undecided_.front();
      undecided_.pop_front();
      const uint64_t len = p.in.frame.size(), depth = p.in.syn ? kSynDepth : kMainDepth;
      if (m_->good_frame) {
        EXPECT_LE(held(p.in.syn) + len, depth + 2) << "kept although its queue was full";
        (p.in.syn ? good_syn_ : good_main_).push_back(p.in.frame);
        held(p.in.syn) += len;
        ++goods_;
      } else {
        EXPECT_EQ(bool(m_->syn_drop), p.in.syn) << "dropped as the wrong class";
        EXPECT_GT(p.held + len, depth) << "dropped although its queue had room";
        ++(p.in.syn ? syn_drops_ : drops_);
      }
    }
    // output
    if (m_->m_axis_tvalid && ready) {
      const Beat b = this->out_beat(kWb);
      if (out_.empty()) {
        // which queue: the head whose first beat this is (main first)
        if (!good_main_.empty() && good_main_.front()[0] == b) {
          out_syn_ = false;
        } else {
          ASSERT_FALSE(good_syn_.empty()) << "a frame out that was never kept";
          ASSERT_EQ(good_syn_.front()[0], b) << "a frame out of order";
          out_syn_ = true;
        }
        out_order_.push_back(out_syn_);
      }
      out_.push_back(b);
      --held(out_syn_);
      if (b.last) {
        auto& q = out_syn_ ? good_syn_ : good_main_;
        EXPECT_EQ(out_, q.front()) << "output frame #" << out_frames_;
        q.pop_front();
        out_.clear();
        ++out_frames_;
      }
    }
    if (m_->m_axis_tvalid && first_out_ == 0) first_out_ = cycle_;
    if (valid) {
      In& in = to_send_.front();
      if (send_beat_ == 0) {
        // its class's beats kept and not yet out, counting the frames still undecided
        first_held_ = held(in.syn);
        for (const auto& u : undecided_)
          if (u.in.syn == in.syn) first_held_ += u.in.frame.size();
      }
      if (in.frame[send_beat_].last) {
        undecided_.push_back({in, cycle_ + 2, first_held_});
        last_in_ = cycle_;
      }
      if (++send_beat_ == in.frame.size()) {
        to_send_.pop_front();
        send_beat_ = 0;
        ++frames_in_;
      }
    }
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

  void drain() {
    for (unsigned i = 0; i < 4 * (kMainDepth + kSynDepth) + 10; ++i) step(0.0, 1.0);
    EXPECT_TRUE(undecided_.empty());
    EXPECT_TRUE(good_main_.empty());
    EXPECT_TRUE(good_syn_.empty());
    EXPECT_TRUE(out_.empty());
    EXPECT_EQ(held_main_, 0u);
    EXPECT_EQ(held_syn_, 0u);
    settle();
    EXPECT_FALSE(m_->m_axis_tvalid);
    EXPECT_EQ(goods_ + drops_ + syn_drops_, frames_in_);
  }

  std::mt19937_64 rng_;
  std::deque<In> to_send_;
  size_t send_beat_ = 0;
  std::deque<Pending> undecided_;
  std::deque<Frame> good_main_, good_syn_;
  Frame out_;
  bool out_syn_ = false;
  std::vector<bool> out_order_;  // per output frame: from the SYN queue
  uint64_t held_main_ = 0, held_syn_ = 0, first_held_ = 0;
  uint64_t goods_ = 0, drops_ = 0, syn_drops_ = 0, out_frames_ = 0, frames_in_ = 0;
  uint64_t cycle_ = 0, last_in_ = 0, first_out_ = 0;
};

using H64 = Harness<Vrx_prio_fifo_w64, 64>;
using H512 = Harness<Vrx_prio_fifo_w512, 512>;

// Random frames of every kind, first one at a time with the output running, then in phases
// of load from line rate with the output stalled to gaps with the output free.
template <typename H>
void random_test(uint64_t seed) {
  H h(seed);
  unsigned syns = 0;
  for (int i = 0; i < 600; ++i) {
    h.queue_random();
    syns += h.to_send_.back().syn;
  }
  EXPECT_GT(syns, 200u);
  EXPECT_LT(syns, 400u);
  h.run(0.3, 1.0);
  struct Phase {
    double valid, ready;
  };
  for (Phase p :
       {Phase{1.0, 1.0}, Phase{0.8, 0.5}, Phase{1.0, 0.2}, Phase{0.5, 0.9}, Phase{1.0, 0.05}}) {
    for (int i = 0; i < 400; ++i) h.queue_random();
    h.run(p.valid, p.ready);
  }
  h.drain();
  EXPECT_GT(h.syn_drops_, 50u);
  EXPECT_GT(h.drops_, 20u);
  EXPECT_GT(h.goods_, 1000u);
  EXPECT_EQ(h.out_frames_, h.goods_);
}

TEST(RxPrioFifo, RandomW64) { random_test<H64>(1); }
TEST(RxPrioFifo, RandomW512) { random_test<H512>(2); }

// A waiting non-SYN frame overtakes a waiting SYN: X (non-SYN) sits in the output register,
// then SYN A and non-SYN B are kept while the output is stalled; out: X, B, A.
template <typename H>
void precedence_test(uint64_t seed) {
  H h(seed);
  h.queue(h.tcp_frame(false, 5, 0x10, 0));   // ACK
  h.queue(h.tcp_frame(true, 9, 0x02, 0));    // SYN, tagged, IP options
  h.queue(h.tcp_frame(false, 6, 0x18, 20));  // PSH|ACK with data
  ASSERT_FALSE(h.to_send_[0].syn);
  ASSERT_TRUE(h.to_send_[1].syn);
  h.run(1.0, 0.0);
  for (int i = 0; i < 6; ++i) h.step(0.0, 0.0);
  EXPECT_EQ(h.goods_, 3u);
  h.drain();
  EXPECT_EQ(h.out_order_, (std::vector<bool>{false, false, true}));
}

TEST(RxPrioFifo, PrecedenceW64) { precedence_test<H64>(3); }
TEST(RxPrioFifo, PrecedenceW512) { precedence_test<H512>(4); }

// Last beat in -> first beat out: 3 cycles into an idle FIFO, for a SYN and for another frame.
template <typename H>
void latency_test(uint64_t seed) {
  for (Kind k : {Kind::kSyn, Kind::kNearMiss}) {
    H h(seed);
    h.queue(h.tcp_frame(k == Kind::kNearMiss, 15, k == Kind::kSyn ? 0x02 : 0x12, 0));
    ASSERT_EQ(h.to_send_[0].syn, k == Kind::kSyn);
    h.run(1.0, 1.0);
    for (int i = 0; i < 6; ++i) h.step(0.0, 1.0);
    EXPECT_EQ(h.first_out_, h.last_in_ + 3) << (k == Kind::kSyn ? "SYN" : "other frame");
    h.drain();
  }
}

TEST(RxPrioFifo, LatencyW64) { latency_test<H64>(5); }
TEST(RxPrioFifo, LatencyW512) { latency_test<H512>(6); }

// Line rate: frames back to back, one beat per cycle in, the output always ready: nothing is
// dropped. A store-and-forward queue holds the frame coming in and the one going out, so
// the frames here are at most half the SYN queue (at 64 bits: the shortest SYNs, 60 bytes).
template <typename H>
void line_rate_test(uint64_t seed) {
  H h(seed);
  unsigned syns = 0;
  while (h.to_send_.size() < 400) {
    h.queue_kind(h.to_send_.size() % 2 ? Kind::kSyn : Kind::kNearMiss);
    if (h.to_send_.back().frame.size() > kSynDepth / 2)
      h.to_send_.pop_back();
    else
      syns += h.to_send_.back().syn;
  }
  EXPECT_GT(syns, 100u);
  h.run(1.0, 1.0);
  h.drain();
  EXPECT_EQ(h.drops_ + h.syn_drops_, 0u);
  EXPECT_EQ(h.out_frames_, h.frames_in_);
}

TEST(RxPrioFifo, LineRateW64) { line_rate_test<H64>(7); }
TEST(RxPrioFifo, LineRateW512) { line_rate_test<H512>(8); }

}  // namespace
