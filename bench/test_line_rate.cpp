// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The line-rate ceiling model against hand-computed values, and its frame length against the
// golden reject builder.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "golden/reject_frame.hpp"
#include "line_rate.hpp"

namespace {

using namespace bouncer::bench;

TEST(LineRate, RejectFrameBytes) {
  EXPECT_EQ(reject_frame_bytes(0, false), 74u);  // 14 + 20 + 20 + 20
  EXPECT_EQ(reject_frame_bytes(0, true), 78u);   // + IRD/ORD
  EXPECT_EQ(reject_frame_bytes(512, false), 586u);
  EXPECT_EQ(reject_frame_bytes(255, true), 333u);
  EXPECT_EQ(reject_frame_bytes(16, true, true), 98u);  // + 802.1Q
}

TEST(LineRate, RejectFrameBytesMatchGolden) {
  for (uint32_t pd : {0u, 1u, 4u, 16u, 64u, 128u, 255u, 508u, 512u}) {
    for (int shape = 0; shape < 3; ++shape) {  // rev 1, rev 2 plain, rev 2 enhanced
      for (bool vlan : {false, true}) {
        const bool enh = shape == 2;
        if (enh && pd > 508) continue;
        golden::RejectParams p;
        p.req_rev = shape == 0 ? 1 : 2;
        p.req_flags = enh ? golden::kMpaFlagEnhanced : 0;
        p.vlan_en = vlan;
        p.pd.assign(pd, 0x5a);
        EXPECT_EQ(golden::build_mpa_reject_frame(p).size(), reject_frame_bytes(pd, enh, vlan))
            << "pd " << pd << " shape " << shape << " vlan " << vlan;
      }
    }
  }
}

TEST(LineRate, Beats) {
  EXPECT_EQ(frame_beats(74, 64), 10u);  // 9.25
  EXPECT_EQ(frame_beats(80, 64), 10u);
  EXPECT_EQ(frame_beats(81, 64), 11u);
  EXPECT_EQ(frame_beats(586, 64), 74u);  // 73.25
  EXPECT_EQ(frame_beats(64, 512), 1u);
  EXPECT_EQ(frame_beats(74, 512), 2u);
  EXPECT_EQ(frame_beats(586, 512), 10u);  // 9.16
  EXPECT_THROW(frame_beats(74, 0), std::invalid_argument);
  EXPECT_THROW(frame_beats(74, 12), std::invalid_argument);
}

TEST(LineRate, BeatCeiling) {
  EXPECT_DOUBLE_EQ(beat_ceiling_fps(74, 64, 250e6), 25e6);         // 10 beats
  EXPECT_DOUBLE_EQ(beat_ceiling_fps(586, 64, 250e6), 250e6 / 74);  // 3.378 M
  EXPECT_DOUBLE_EQ(beat_ceiling_fps(74, 512, 322e6), 161e6);       // 2 beats
  EXPECT_DOUBLE_EQ(beat_ceiling_fps(586, 512, 322e6), 32.2e6);     // 10 beats
  EXPECT_DOUBLE_EQ(beat_ceiling_fps(74, 64, 250e6, 1), 250e6 / 11);
  EXPECT_DOUBLE_EQ(default_clock_hz(64), 250e6);
  EXPECT_DOUBLE_EQ(default_clock_hz(512), 322e6);
}

TEST(LineRate, Ethernet) {
  EXPECT_EQ(wire_bytes(74), 98u);  // 8 + 78 + 12
  EXPECT_EQ(wire_bytes(40), 84u);  // padded to 64 with FCS
  EXPECT_EQ(wire_bytes(60), 84u);  // 60 + 4 = 64 exactly
  EXPECT_EQ(wire_bytes(61), 85u);
  EXPECT_EQ(wire_bytes(586), 610u);
  EXPECT_NEAR(line_rate_fps(74, 10e9), 12'755'102.04, 0.01);    // 10e9 / 784
  EXPECT_NEAR(line_rate_fps(74, 100e9), 127'551'020.41, 0.01);  // 100e9 / 784
  EXPECT_NEAR(line_rate_fps(586, 100e9), 20'491'803.28, 0.01);  // 100e9 / 4880
  EXPECT_NEAR(line_rate_fps(60, 10e9), 14'880'952.38, 0.01);    // the classic 14.88 Mpps
}

}  // namespace
