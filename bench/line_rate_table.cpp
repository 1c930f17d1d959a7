// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// line_rate_table PD_LEN...: one JSON object per line, for each PD length, MPA shape (rev 1,
// rev 2 enhanced) and data width: frame bytes, beats, the beat ceiling at the width's clock,
// and the 10G / 100G Ethernet line rates (bench/line_rate.hpp). Read by bench_report.py.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "line_rate.hpp"

int main(int argc, char** argv) {
  using namespace bouncer::bench;
  for (int i = 1; i < argc; ++i) {
    const auto pd = static_cast<uint32_t>(std::strtoul(argv[i], nullptr, 0));
    for (unsigned rev : {1u, 2u}) {
      const bool enh = rev == 2;
      if (enh && pd + kIrdOrdBytes > 512) continue;  // PD_Length over MPA_PD_MAX
      const uint32_t bytes = reject_frame_bytes(pd, enh);
      for (uint32_t w : {64u, 512u}) {
        std::printf(
            "{\"pd_len\": %u, \"rev\": %u, \"width\": %u, \"frame_bytes\": %u, \"beats\": %u, "
            "\"gap_beats\": %u, \"clock_hz\": %.0f, \"beat_ceiling_fps\": %.3f, "
            "\"wire_bytes\": %u, \"eth10g_fps\": %.3f, \"eth100g_fps\": %.3f}\n",
            pd, rev, w, bytes, frame_beats(bytes, w), kRtlInterFrameBeats, default_clock_hz(w),
            beat_ceiling_fps(bytes, w, default_clock_hz(w)), wire_bytes(bytes),
            line_rate_fps(bytes, 10e9), line_rate_fps(bytes, 100e9));
      }
    }
  }
  return 0;
}
