// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/tx/bouncer_mpa_reject_builder at both data widths: random contexts,
// PD lengths, peer MSS values and TX backpressure; every frame (one per reject, or one per
// MSS-sized segment) must equal the golden model byte for byte, and the checksums must pass
// the golden parser's independent check. Cycle counts are pinned with tready always high.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// Verilator 5.006's own headers are not -Wextra clean.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vbuilder_w512.h"
#include "Vbuilder_w64.h"
#pragma GCC diagnostic pop
#include "axis_lanes.hpp"
#include "bouncer/regs.hpp"
#include "golden/frame_parser.hpp"
#include "golden/reject_frame.hpp"
#include "verilated.h"

namespace {

using axis::keep_bit;
using axis::lane_byte;
using axis::mac_field;

namespace R = bouncer::regs;

// ---- helpers to move bytes in and out of Verilator's port types
template <typename T>
void set_wide(T& port, const std::array<std::byte, 64>& img) {
  std::memcpy(&port[0], img.data(), 64);
}

std::array<std::byte, 64> ctx_image(const golden::RejectParams& p) {
  std::array<std::byte, 64> img{};
  std::span<std::byte> s(img);
  R::put(s, R::cm_ctx::REM_MAC, mac_field(p.rem_mac));
  R::put(s, R::cm_ctx::VLAN_TCI, p.vlan_tci);
  R::put(s, R::cm_ctx::LOC_MAC, mac_field(p.loc_mac));
  R::put(s, R::cm_ctx::VLAN_EN, p.vlan_en);
  R::put(s, R::cm_ctx::CTX_VALID, 1);
  R::put(s, R::cm_ctx::LOC_IP, p.loc_ip);
  R::put(s, R::cm_ctx::REM_IP, p.rem_ip);
  R::put(s, R::cm_ctx::LOC_PORT, p.loc_port);
  R::put(s, R::cm_ctx::REM_PORT, p.rem_port);
  R::put(s, R::cm_ctx::RCV_WND, p.rcv_wnd);
  R::put(s, R::cm_ctx::TTL, p.ttl);
  R::put(s, R::cm_ctx::TOS, p.tos);
  R::put(s, R::cm_ctx::SND_NXT, p.snd_nxt);
  R::put(s, R::cm_ctx::RCV_NXT, p.rcv_nxt);
  R::put(s, R::cm_ctx::REQ_REV, p.req_rev);
  R::put(s, R::cm_ctx::REQ_FLAGS, p.req_flags);
  R::put(s, R::cm_ctx::IP_ID, p.ip_id);
  R::put(s, R::cm_ctx::REQ_IRD_ORD, p.req_ird_ord);
  return img;
}

golden::RejectParams random_params(std::mt19937_64& rng, size_t pd_len) {
  golden::RejectParams p;
  for (auto& b : p.rem_mac.b) b = static_cast<uint8_t>(rng());
  for (auto& b : p.loc_mac.b) b = static_cast<uint8_t>(rng());
  p.vlan_en = rng() & 1;
  p.vlan_tci = static_cast<uint16_t>(rng());
  p.loc_ip = static_cast<uint32_t>(rng());
  p.rem_ip = static_cast<uint32_t>(rng());
  p.tos = static_cast<uint8_t>(rng());
  p.ttl = static_cast<uint8_t>(rng());
  p.ip_id = static_cast<uint16_t>(rng());
  p.loc_port = static_cast<uint16_t>(rng());
  p.rem_port = static_cast<uint16_t>(rng());
  p.snd_nxt = static_cast<uint32_t>(rng());
  p.rcv_nxt = static_cast<uint32_t>(rng());
  p.rcv_wnd = static_cast<uint16_t>(rng() | 1);
  p.req_rev = (rng() & 1) ? 2 : 1;
  p.req_flags = static_cast<uint8_t>(rng() & 0xD0);
  p.req_ird_ord = static_cast<uint32_t>(rng());
  if (rng() % 4 == 0) p.ird_ord_override = static_cast<uint32_t>(rng());
  p.fin = (rng() % 4) == 0;
  p.pd.resize(pd_len);
  for (auto& b : p.pd) b = static_cast<uint8_t>(rng());
  if (golden::is_enhanced(p.req_rev, p.req_flags) && pd_len > 508) p.pd.resize(508);
  return p;
}

// Cycle pins with tready always high (docs/reject-frame.md, "Timing"): start handshake ->
// first beat handshake for one frame and for several, and the cycles from the handshake of a
// segment's last beat to the handshake of the next segment's first beat.
constexpr uint64_t kFirstOne = 3;
constexpr uint64_t kFirstSplit = 11;
constexpr uint64_t kSegmentGap = 13;

template <typename Model>
class BuilderHarness {
 public:
  explicit BuilderHarness(uint64_t seed) : rng_(seed) {
    ctx_.randReset(0);
    m_ = std::make_unique<Model>(&ctx_, "builder");
    m_->rst = 1;
    for (int i = 0; i < 4; ++i) tick();
    m_->rst = 0;
    tick();
  }

  void tick() {
    m_->clk = 0;
    m_->eval();
    m_->clk = 1;
    m_->eval();
    ++cycle_;
  }

  struct Out {
    std::vector<std::vector<uint8_t>> frames;
    uint64_t start_to_first = 0;
    std::vector<uint64_t> gaps;  // last-beat handshake of a frame -> first of the next
    uint32_t seq_advance = 0;
    unsigned frame_len = 0, seg_count = 0;
    // seq_advance and frame_len from 1 cycle after start, seg_count from 2, until done
    bool outputs_held = true;
    int dones = 0, first_beats = 0;
    bool done_after_last = false, first_beat_after_first = false;
  };

  // Load the PD and run one reject with the given peer MSS and probability of tready per
  // cycle, until done and two cycles more.
  Out run(const golden::RejectParams& p, unsigned mss, double ready_prob) {
    std::bernoulli_distribution ready(ready_prob);
    Out out;
    // PD load: pd_clear then 64-bit words; every other frame (at random) writes the first
    // word in the pd_clear cycle, as the CM engine does for an inline PD
    m_->pd_len = static_cast<uint16_t>(p.pd.size());
    const bool first_with_clear = !p.pd.empty() && (rng_() & 1) != 0;
    // an empty PD starts, at random, in its pd_clear cycle, as the CM engine does
    // (E_REJ_LOAD -> E_REJ_START): the previous frame's PD checksum must not leak into it
    const bool start_with_clear = p.pd.empty() && (rng_() & 1) != 0;
    m_->pd_clear = 1;
    if (!first_with_clear && !start_with_clear) {
      tick();
      m_->pd_clear = 0;
    }
    for (size_t w = 0; w * 8 < p.pd.size(); ++w) {
      uint64_t q = 0;
      for (size_t i = 0; i < 8 && w * 8 + i < p.pd.size(); ++i)
        q |= uint64_t{p.pd[w * 8 + i]} << (8 * i);
      // garbage past the end must not reach the checksum or the wire
      for (size_t i = p.pd.size() - w * 8; i < 8 && w * 8 + i >= p.pd.size(); ++i)
        q |= (rng_() & 0xFFull) << (8 * i);
      m_->pd_wr_en = 1;
      m_->pd_wr_idx = static_cast<uint8_t>(w);
      m_->pd_wr_data = q;
      tick();
      m_->pd_clear = 0;
    }
    m_->pd_wr_en = 0;
    // start
    auto img = ctx_image(p);
    set_wide(m_->start_ctx, img);
    m_->start_fin = p.fin;
    m_->start_ird_ord_valid = p.ird_ord_override.has_value();
    m_->start_ird_ord = p.ird_ord_override.value_or(0);
    m_->start_mss = static_cast<uint16_t>(mss);
    m_->start_valid = 1;
    EXPECT_TRUE(m_->start_ready);
    tick();
    m_->start_valid = 0;
    m_->pd_clear = 0;
    m_->start_mss = static_cast<uint16_t>(rng_());  // only sampled with start
    const uint64_t t_start = cycle_;
    // valid from the cycle after start (seg_count: the cycle after that)
    out.seq_advance = m_->seq_advance;
    out.frame_len = m_->frame_len;
    std::vector<uint8_t> cur;
    uint64_t first_hs = 0, last_hs = 0, done_at = 0;
    for (int guard = 0; guard < 100000; ++guard) {
      m_->m_axis_tready = ready(rng_);
      m_->clk = 0;
      m_->eval();
      if (cycle_ == t_start + 1) out.seg_count = m_->seg_count;
      if (m_->seq_advance != out.seq_advance || m_->frame_len != out.frame_len ||
          (cycle_ > t_start && m_->seg_count != out.seg_count))
        out.outputs_held = false;
      if (m_->first_beat) {
        ++out.first_beats;
        out.first_beat_after_first =
            !out.frames.empty() || !cur.empty() ? cycle_ == first_hs + 1 : false;
      }
      if (m_->done) {
        ++out.dones;
        done_at = cycle_;
        out.done_after_last = !out.frames.empty() && cycle_ == last_hs + 1 && cur.empty() &&
                              out.frames.size() == out.seg_count;
      }
      if (m_->m_axis_tvalid && m_->m_axis_tready) {
        if (cur.empty()) {
          if (out.frames.empty()) {
            out.start_to_first = cycle_ - t_start;
            first_hs = cycle_;
          } else {
            out.gaps.push_back(cycle_ - last_hs);
          }
        }
        const unsigned nbytes = sizeof(m_->m_axis_tkeep) * 8;
        for (unsigned lane = 0; lane < nbytes; ++lane) {
          if (keep_bit(m_->m_axis_tkeep, lane))
            cur.push_back(lane_byte(m_->m_axis_tdata, lane));
          else
            EXPECT_EQ(lane_byte(m_->m_axis_tdata, lane), 0) << "data past tkeep not zero";
        }
        if (m_->m_axis_tlast) {
          out.frames.push_back(std::move(cur));
          cur.clear();
          last_hs = cycle_;
        }
      }
      m_->clk = 1;
      m_->eval();
      ++cycle_;
      if (out.dones > 0 && cycle_ > done_at + 2) {
        EXPECT_TRUE(cur.empty()) << "beats after done";
        EXPECT_TRUE(m_->start_ready);
        m_->m_axis_tready = 0;
        return out;
      }
    }
    ADD_FAILURE() << "builder never finished the reject";
    return out;
  }

  // The counts of one reject, without running it: the PD is not written (its length alone
  // decides them); seg_count 2 cycles after start, frame_len and seq_advance 1 cycle after
  // start; then a reset cycle drops the reject.
  struct Counts {
    unsigned seg_count = 0, frame_len = 0, seq_advance = 0;
  };
  Counts run_counts(const std::array<std::byte, 64>& img, unsigned pd_len, unsigned mss) {
    Counts out;
    m_->pd_len = static_cast<uint16_t>(pd_len);
    m_->pd_clear = 1;
    tick();
    m_->pd_clear = 0;
    set_wide(m_->start_ctx, img);
    m_->start_fin = 0;
    m_->start_ird_ord_valid = 0;
    m_->start_mss = static_cast<uint16_t>(mss);
    m_->start_valid = 1;
    EXPECT_TRUE(m_->start_ready);
    tick();
    m_->start_valid = 0;
    out.frame_len = m_->frame_len;
    out.seq_advance = m_->seq_advance;
    tick();
    out.seg_count = m_->seg_count;
    m_->rst = 1;
    tick();
    m_->rst = 0;
    return out;
  }

 private:
  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
};

// One reject through the RTL against the golden segments; `why` names the case.
template <typename Model>
void check_reject(BuilderHarness<Model>& h, const golden::RejectParams& p, unsigned mss,
                  double ready_prob, const std::string& why) {
  SCOPED_TRACE(why);
  const auto want = golden::build_mpa_reject_segments(p, mss);
  ASSERT_FALSE(want.empty());
  const auto got = h.run(p, mss, ready_prob);
  ASSERT_EQ(got.frames.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(got.frames[k].size(), want[k].size()) << "segment " << k;
    for (size_t i = 0; i < want[k].size(); ++i)
      ASSERT_EQ(got.frames[k][i], want[k][i]) << "segment " << k << " byte " << i;
    std::string err;
    ASSERT_TRUE(golden::parse_tcp_segment(got.frames[k], &err)) << "segment " << k << ": " << err;
  }
  if (want.size() == 1) {
    std::string err;
    ASSERT_TRUE(golden::parse_mpa_reply(got.frames[0], &err)) << err;
  }
  EXPECT_EQ(got.seg_count, want.size());
  EXPECT_EQ(got.seg_count, golden::reject_segment_count(p, mss));
  EXPECT_EQ(got.seq_advance, golden::reject_seq_advance(p));
  EXPECT_EQ(got.frame_len, want[0].size());
  EXPECT_TRUE(got.outputs_held) << "seq_advance, frame_len or seg_count changed before done";
  EXPECT_EQ(got.dones, 1);
  EXPECT_TRUE(got.done_after_last) << "done not in the cycle after the last segment's tlast";
  EXPECT_EQ(got.first_beats, 1);
  EXPECT_TRUE(got.first_beat_after_first) << "first_beat not after the first handshake";
  if (ready_prob == 1.0) {
    EXPECT_EQ(got.start_to_first, want.size() == 1 ? kFirstOne : kFirstSplit)
        << "start to first beat (cycles)";
    for (uint64_t g : got.gaps) EXPECT_EQ(g, kSegmentGap) << "between segments (cycles)";
  }
}

std::string describe(const golden::RejectParams& p, unsigned mss) {
  return "pd_len=" + std::to_string(p.pd.size()) + " rev=" + std::to_string(p.req_rev) +
         " flags=" + std::to_string(p.req_flags) + " vlan=" + std::to_string(p.vlan_en) +
         " fin=" + std::to_string(p.fin) + " mss=" + std::to_string(mss);
}

// One frame per reject: the MSS is 0 (no bound) or at least the MPA reply's length.
template <typename Model>
void sweep(uint64_t seed, double ready_prob) {
  BuilderHarness<Model> h(seed);
  std::mt19937_64 rng(seed * 7 + 1);
  const size_t lens[] = {0, 1, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 508, 511, 512};
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t len : lens) {
      auto p = random_params(rng, len);
      const auto m = static_cast<unsigned>(golden::mpa_reply_len(p));
      const unsigned choices[] = {0, m, m + 1, 1460, 65535};
      const unsigned mss = choices[rng() % 5];
      check_reject(h, p, mss, ready_prob, describe(p, mss));
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

// Rejects longer than the MSS: PD lengths 0..512, MSS from 48 to past the reply's length.
template <typename Model>
void segment_sweep(uint64_t seed, double ready_prob, int count) {
  BuilderHarness<Model> h(seed);
  std::mt19937_64 rng(seed * 13 + 5);
  int split = 0;
  for (int i = 0; i < count; ++i) {
    const size_t len = (i % 8 == 0) ? 512 - rng() % 8 : rng() % 513;
    auto p = random_params(rng, len);
    const auto m = static_cast<unsigned>(golden::mpa_reply_len(p));
    unsigned mss = 48 + static_cast<unsigned>(rng() % (m + 16 > 48 ? m + 16 - 48 + 1 : 1));
    switch (rng() % 8) {
      case 0:
        mss = 48;
        break;
      case 1:
        mss = 49;
        break;
      case 2:
        mss = m > 49 ? m - 1 : 48;
        break;
      default:
        break;
    }
    if (golden::reject_segment_count(p, mss) > 1) ++split;
    check_reject(h, p, mss, ready_prob, describe(p, mss));
    if (testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(split, count / 2);
}

// The largest reply at the smallest MSS: 532 bytes in 12 segments, enhanced and not.
template <typename Model>
void twelve_segments(uint64_t seed) {
  BuilderHarness<Model> h(seed);
  std::mt19937_64 rng(seed);
  for (bool enh : {false, true}) {
    auto p = random_params(rng, enh ? 508 : 512);
    p.req_rev = enh ? 2 : 1;
    p.req_flags = enh ? 0x50 : 0x40;
    p.pd.resize(enh ? 508 : 512);
    p.fin = true;
    ASSERT_EQ(golden::mpa_reply_len(p), 532u);
    ASSERT_EQ(golden::reject_segment_count(p, 48), 12u);
    check_reject(h, p, 48, 1.0, describe(p, 48));
  }
}

// Every MPA reply length (PD 0..512, enhanced or not) against every MSS from 48 to past the
// longest reply: seg_count, frame_len and seq_advance against the golden model (the frames
// themselves: the sweeps above).
template <typename Model>
void all_counts() {
  BuilderHarness<Model> h(11);
  std::mt19937_64 rng(12);
  int checked = 0;
  for (bool enh : {false, true}) {
    auto p = random_params(rng, 0);
    p.req_rev = enh ? 2 : 1;
    p.req_flags = enh ? 0x50 : 0x40;
    p.fin = false;
    p.ird_ord_override.reset();
    const auto img = ctx_image(p);
    const unsigned hdr = p.vlan_en ? 58 : 54;
    for (unsigned pd_len = 0; pd_len <= (enh ? 508u : 512u); ++pd_len) {
      p.pd.assign(pd_len, 0);
      const auto m = static_cast<unsigned>(golden::mpa_reply_len(p));
      for (unsigned mss = 48; mss <= 534; ++mss) {
        const auto c = h.run_counts(img, pd_len, mss);
        const auto n = static_cast<unsigned>(golden::reject_segment_count(p, mss));
        ASSERT_EQ(c.seg_count, n) << "pd_len=" << pd_len << " enh=" << enh << " mss=" << mss;
        ASSERT_EQ(c.frame_len, hdr + std::min(m, mss)) << "pd_len=" << pd_len << " mss=" << mss;
        ASSERT_EQ(c.seq_advance, m);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, (513 + 509) * 487);
}

TEST(RtlRejectBuilder, W64MatchesGolden) { sweep<Vbuilder_w64>(1, 1.0); }
TEST(RtlRejectBuilder, W512MatchesGolden) { sweep<Vbuilder_w512>(2, 1.0); }
TEST(RtlRejectBuilder, W64RandomBackpressure) { sweep<Vbuilder_w64>(3, 0.4); }
TEST(RtlRejectBuilder, W512RandomBackpressure) { sweep<Vbuilder_w512>(4, 0.3); }
TEST(RtlRejectBuilder, W64Segments) { segment_sweep<Vbuilder_w64>(5, 1.0, 1500); }
TEST(RtlRejectBuilder, W512Segments) { segment_sweep<Vbuilder_w512>(6, 1.0, 1500); }
TEST(RtlRejectBuilder, W64SegmentsBackpressure) { segment_sweep<Vbuilder_w64>(7, 0.35, 1000); }
TEST(RtlRejectBuilder, W512SegmentsBackpressure) { segment_sweep<Vbuilder_w512>(8, 0.3, 1000); }
TEST(RtlRejectBuilder, W64TwelveSegments) { twelve_segments<Vbuilder_w64>(9); }
TEST(RtlRejectBuilder, W512TwelveSegments) { twelve_segments<Vbuilder_w512>(10); }
TEST(RtlRejectBuilder, W512AllCounts) { all_counts<Vbuilder_w512>(); }
TEST(RtlRejectBuilder, W64AllCounts) { all_counts<Vbuilder_w64>(); }

}  // namespace
