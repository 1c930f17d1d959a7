// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The common part of the AXI-Stream RTL unit-test harnesses (test_rtl_axis_frame_fifo.cpp,
// test_rtl_tx_arb.cpp): writing bytes and bits of a verilated input port (integer for
// <= 64 bits, VlWide above), a beat and a frame as the tests model them, and a clocked
// verilated model whose construction resets it (inputs idle, rst high for 3 cycles).
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "axis_lanes.hpp"

namespace axis {

// Byte `i` of a verilated port.
template <typename T>
void set_byte(T& p, unsigned i, uint8_t v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t m = uint64_t{0xFF} << (8 * i);
    p = static_cast<T>((static_cast<uint64_t>(p) & ~m) | (uint64_t{v} << (8 * i)));
  } else {
    const unsigned s = 8 * (i % 4);
    p[i / 4] = (p[i / 4] & ~(0xFFu << s)) | (uint32_t{v} << s);
  }
}

// Bit `i` of a verilated port.
template <typename T>
void set_bit(T& p, unsigned i, bool v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t m = uint64_t{1} << i;
    p = static_cast<T>((static_cast<uint64_t>(p) & ~m) | (v ? m : 0));
  } else {
    const uint32_t m = 1u << (i % 32);
    p[i / 32] = (p[i / 32] & ~m) | (v ? m : 0);
  }
}
template <typename T>
bool get_bit(const T& p, unsigned i) {
  if constexpr (std::is_integral_v<T>) {
    return (static_cast<uint64_t>(p) >> i) & 1;
  } else {
    return (p[i / 32] >> (i % 32)) & 1;
  }
}

struct Beat {
  std::vector<uint8_t> data;
  uint64_t keep = 0;
  bool last = false;
  bool operator==(const Beat&) const = default;
};
using Frame = std::vector<Beat>;

// A verilated model with clk, rst, s_axis_tvalid and m_axis_tready (named `name` in its
// context, RAMs and registers randomized before reset).
template <typename Model>
class ClockedModel {
 public:
  explicit ClockedModel(const char* name) {
    ctx_.randReset(2);
    m_ = std::make_unique<Model>(&ctx_, name);
    m_->s_axis_tvalid = 0;
    m_->m_axis_tready = 0;
    m_->rst = 1;
    for (int i = 0; i < 3; ++i) tick();
    m_->rst = 0;
  }

  // Evaluates with clk low (combinational outputs of the current inputs).
  void settle() {
    m_->clk = 0;
    m_->eval();
  }
  // One cycle: clk low, then the rising edge.
  void tick() {
    settle();
    m_->clk = 1;
    m_->eval();
  }

  // The output beat on m_axis_* (`bytes` data lanes).
  Beat out_beat(unsigned bytes) const {
    Beat b;
    b.data.resize(bytes);
    for (unsigned i = 0; i < bytes; ++i) b.data[i] = lane_byte(m_->m_axis_tdata, i);
    b.keep = static_cast<uint64_t>(m_->m_axis_tkeep);
    b.last = m_->m_axis_tlast;
    return b;
  }

  VerilatedContext ctx_;
  std::unique_ptr<Model> m_;
};

}  // namespace axis
