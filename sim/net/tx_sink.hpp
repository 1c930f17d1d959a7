// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// AXI-Stream TX sink: random backpressure on tready, frame assembly from tkeep, protocol checks.
//
// Per-cycle use by the core loop (see platform/core_model.cpp):
//   pre_edge(model, edge)  with the pre-edge outputs: records a beat if tvalid && tready;
//   drive(model)           after the edge: draws tready for the next edge.
// Checks (fatal on violation): tkeep all ones on non-last beats, contiguous low bytes on the
// last beat; while tvalid && !tready, tvalid/tdata/tkeep/tlast stay stable until the handshake.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <vector>

#include "platform/sim_util.hpp"

namespace bouncer::sim {

class TxSink {
 public:
  // on_frame(bytes, first_cycle, last_cycle) is called once per completed frame.
  using FrameFn = std::function<void(std::vector<uint8_t>&&, uint64_t, uint64_t)>;

  TxSink(unsigned data_bytes, uint64_t seed, double ready_prob, FrameFn on_frame);

  void set_ready_prob(double p) { ready_.set(p); }
  uint64_t beats() const { return beats_; }
  uint64_t stall_cycles() const { return stall_cycles_; }
  // First cycle of the frame being received (some beats in, no tlast yet), else UINT64_MAX.
  uint64_t open_first() const { return frame_.empty() ? UINT64_MAX : frame_first_; }
  // The core went into reset (Platform::hold_reset): the frame being received is dropped and
  // a stalled beat forgotten (a source in reset may drop tvalid). True if a frame was open.
  bool abort() {
    const bool open = !frame_.empty() || stalled_;
    frame_.clear();
    stalled_ = false;
    ready_now_ = false;
    return open;
  }

  template <class V>
  void pre_edge(const V& m, uint64_t edge) {
    static_assert(sizeof(m.m_axis_tx_tdata) <= kMaxBytes);
    if (stalled_)
      check_stable(m.m_axis_tx_tvalid, &m.m_axis_tx_tdata, m.m_axis_tx_tkeep, m.m_axis_tx_tlast,
                   edge);
    if (!m.m_axis_tx_tvalid) return;
    if (ready_now_) {
      stalled_ = false;
      take_beat(&m.m_axis_tx_tdata, static_cast<uint64_t>(m.m_axis_tx_tkeep),
                m.m_axis_tx_tlast != 0, edge);
    } else {
      // Remember what is offered: it must not change until the handshake.
      stalled_ = true;
      ++stall_cycles_;
      std::memcpy(held_data_, &m.m_axis_tx_tdata, data_bytes_);
      held_keep_ = static_cast<uint64_t>(m.m_axis_tx_tkeep);
      held_last_ = m.m_axis_tx_tlast != 0;
    }
  }

  template <class V>
  void drive(V& m) {
    ready_now_ = ready_.draw();
    m.m_axis_tx_tready = ready_now_ ? 1 : 0;
  }

 private:
  static constexpr unsigned kMaxBytes = 64;
  static constexpr size_t kMaxFrame = 65535;

  void take_beat(const void* tdata, uint64_t keep, bool last, uint64_t edge);
  void check_stable(uint8_t tvalid, const void* tdata, uint64_t keep, uint8_t last, uint64_t edge);

  unsigned data_bytes_;
  uint64_t full_keep_;
  Bernoulli ready_;
  FrameFn on_frame_;
  bool ready_now_ = false;
  bool stalled_ = false;
  uint8_t held_data_[kMaxBytes] = {};
  uint64_t held_keep_ = 0;
  bool held_last_ = false;
  std::vector<uint8_t> frame_;
  uint64_t frame_first_ = 0;
  uint64_t beats_ = 0;
  uint64_t stall_cycles_ = 0;
};

}  // namespace bouncer::sim
