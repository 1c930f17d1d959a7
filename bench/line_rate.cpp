// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "line_rate.hpp"

#include <algorithm>
#include <stdexcept>

namespace bouncer::bench {

uint32_t reject_frame_bytes(uint32_t pd_len, bool enhanced, bool vlan) {
  return kRejectHeaderBytes + (vlan ? kVlanTagBytes : 0) + (enhanced ? kIrdOrdBytes : 0) + pd_len;
}

uint32_t frame_beats(uint32_t frame_bytes, uint32_t data_width) {
  if (data_width == 0 || data_width % 8 != 0) {
    throw std::invalid_argument("data_width must be a positive multiple of 8");
  }
  const uint32_t wb = data_width / 8;
  return (frame_bytes + wb - 1) / wb;
}

double beat_ceiling_fps(uint32_t frame_bytes, uint32_t data_width, double clock_hz,
                        uint32_t gap_beats) {
  return clock_hz / static_cast<double>(frame_beats(frame_bytes, data_width) + gap_beats);
}

uint32_t wire_bytes(uint32_t frame_bytes) {
  return kEthPreambleBytes + std::max(frame_bytes + kEthFcsBytes, kEthMinFrameBytes) + kEthIfgBytes;
}

double line_rate_fps(uint32_t frame_bytes, double bits_per_s) {
  return bits_per_s / (8.0 * static_cast<double>(wire_bytes(frame_bytes)));
}

double default_clock_hz(uint32_t data_width) { return data_width >= 512 ? 322e6 : 250e6; }

}  // namespace bouncer::bench
