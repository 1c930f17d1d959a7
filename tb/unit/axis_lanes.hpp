// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Byte-lane helpers shared by the RTL unit tests: read byte `lane` of a Verilator stream
// port (uint64_t for 64-bit ports, VlWide<N> for wider ones; byte 0 in bits [7:0]), test a
// tkeep bit, and turn a golden MAC (first wire byte first) into the 48-bit field layout the
// RTL uses (first wire byte in bits 47:40).
#pragma once

#include <cstddef>
#include <cstdint>

#include "golden/reject_frame.hpp"

// Verilator 5.006's own headers are not -Wextra clean.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "verilated.h"
#pragma GCC diagnostic pop

namespace axis {

inline uint8_t lane_byte(uint64_t data, unsigned lane) {
  return static_cast<uint8_t>(data >> (8 * lane));
}
template <std::size_t N>
uint8_t lane_byte(const VlWide<N>& data, unsigned lane) {
  return static_cast<uint8_t>(data[lane / 4] >> (8 * (lane % 4)));
}
inline bool keep_bit(uint64_t keep, unsigned lane) { return (keep >> lane) & 1; }

inline uint64_t mac_field(const golden::Mac& m) {
  uint64_t v = 0;
  for (uint8_t b : m.b) v = (v << 8) | b;
  return v;
}

}  // namespace axis
