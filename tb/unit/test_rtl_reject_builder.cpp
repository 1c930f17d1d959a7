// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Unit test of rtl/tx/bouncer_mpa_reject_builder at both data widths: random contexts,
// PD lengths and TX backpressure; every frame must equal the golden model byte for byte,
// and the checksums must pass the golden parser's independent check.
#include <gtest/gtest.h>

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
    std::vector<uint8_t> frame;
    uint64_t start_to_first = 0;
    uint32_t seq_advance = 0;
    unsigned frame_len = 0;
  };

  // Load PD and run one frame with the given probability of tready per cycle.
  Out run(const golden::RejectParams& p, double ready_prob) {
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
    m_->start_valid = 1;
    EXPECT_TRUE(m_->start_ready);
    tick();
    m_->start_valid = 0;
    m_->pd_clear = 0;
    const uint64_t t_start = cycle_;
    bool first = true;
    for (int guard = 0; guard < 100000; ++guard) {
      m_->m_axis_tready = ready(rng_);
      m_->clk = 0;
      m_->eval();
      if (m_->m_axis_tvalid && m_->m_axis_tready) {
        if (first) out.start_to_first = cycle_ - t_start;
        first = false;
        const unsigned nbytes = sizeof(m_->m_axis_tkeep) * 8;
        for (unsigned lane = 0; lane < nbytes; ++lane) {
          if (keep_bit(m_->m_axis_tkeep, lane))
            out.frame.push_back(lane_byte(m_->m_axis_tdata, lane));
          else
            EXPECT_EQ(lane_byte(m_->m_axis_tdata, lane), 0) << "data past tkeep not zero";
        }
        if (m_->m_axis_tlast) {
          out.seq_advance = m_->seq_advance;
          out.frame_len = m_->frame_len;
          m_->clk = 1;
          m_->eval();
          ++cycle_;
          m_->m_axis_tready = 0;
          tick();  // done pulse
          EXPECT_TRUE(m_->start_ready);
          return out;
        }
      }
      m_->clk = 1;
      m_->eval();
      ++cycle_;
    }
    ADD_FAILURE() << "builder never finished the frame";
    return out;
  }

 private:
  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;
};

template <typename Model>
void sweep(uint64_t seed, double ready_prob) {
  BuilderHarness<Model> h(seed);
  std::mt19937_64 rng(seed * 7 + 1);
  const size_t lens[] = {0, 1, 3, 4, 5, 7, 8, 9, 31, 32, 33, 63, 64, 65, 255, 256, 508, 511, 512};
  for (int rep = 0; rep < 3; ++rep) {
    for (size_t len : lens) {
      auto p = random_params(rng, len);
      auto want = golden::build_mpa_reject_frame(p);
      ASSERT_FALSE(want.empty());
      auto got = h.run(p, ready_prob);
      ASSERT_EQ(got.frame.size(), want.size()) << "pd_len=" << p.pd.size();
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got.frame[i], want[i]) << "byte " << i << " pd_len=" << p.pd.size()
                                         << " vlan=" << p.vlan_en << " rev=" << int(p.req_rev);
      EXPECT_EQ(got.frame_len, want.size());
      EXPECT_EQ(got.seq_advance, golden::reject_seq_advance(p));
      std::string why;
      auto parsed = golden::parse_mpa_reply(got.frame, &why);
      ASSERT_TRUE(parsed) << why;
      if (ready_prob == 1.0) {
        EXPECT_EQ(got.start_to_first, 3u) << "start to first beat (cycles)";
      }
    }
  }
}

TEST(RtlRejectBuilder, W64MatchesGolden) { sweep<Vbuilder_w64>(1, 1.0); }
TEST(RtlRejectBuilder, W512MatchesGolden) { sweep<Vbuilder_w512>(2, 1.0); }
TEST(RtlRejectBuilder, W64RandomBackpressure) { sweep<Vbuilder_w64>(3, 0.4); }
TEST(RtlRejectBuilder, W512RandomBackpressure) { sweep<Vbuilder_w512>(4, 0.3); }

}  // namespace
