// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// AXI-Stream RX source: serializes queued Ethernet frames (no FCS) onto the core's s_axis_rx_*
// port, DATA_W bits per beat, byte 0 in tdata[7:0], tkeep all ones except on the tlast beat
// (contiguous low bytes), unused tdata bytes zero. One beat per cycle while tready; a beat is
// held (tvalid/tdata/tkeep/tlast stable) while tready is 0. Between the tlast beat of a frame
// and the first beat of the next there are at least `ifg_cycles` idle cycles.
//
// Frames are ordered by (ready cycle, enqueue order); a frame's first beat is offered for the
// first edge >= its ready cycle at which the port is free and the gap has passed.
//
// Per-cycle use by the core loop (see platform/core_model.cpp):
//   pre_edge(model, edge)        with the pre-edge outputs: a beat is transferred if tready;
//   drive(model, next_edge)      after the edge, only if needs_drive(next_edge): next beat,
//                                a new frame, or tvalid=0.
// Both are no-ops in the idle case apart from one or two compares.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "platform/sim_util.hpp"

namespace bouncer::sim {

class RxSource {
 public:
  // on_frame(bytes, first_cycle, last_cycle) once per frame whose tlast beat was transferred.
  using FrameFn = std::function<void(std::vector<uint8_t>&&, uint64_t, uint64_t)>;
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr size_t kMaxFrame = 65535;

  RxSource(unsigned data_bytes, uint64_t ifg_cycles, FrameFn on_frame);

  // Queue a frame (1..kMaxFrame bytes; fatal otherwise) that may start at edge `ready` or later.
  void enqueue(std::vector<uint8_t> frame, uint64_t ready);

  unsigned data_bytes() const { return data_bytes_; }
  uint64_t ifg_cycles() const { return ifg_; }
  uint64_t beats() const { return beats_; }
  uint64_t frames() const { return frames_; }
  uint64_t stall_cycles() const { return stall_cycles_; }
  size_t queued() const { return q_.size(); }
  bool idle() const { return !presenting_ && q_.empty(); }
  // First cycle of the frame being transferred (first beat done, tlast not yet), else kNever.
  uint64_t open_first() const { return presenting_ && off_ > 0 ? first_ : kNever; }
  // Does drive() have anything to do for `next_edge`?
  bool needs_drive(uint64_t next_edge) const {
    return presenting_ ? load_ : (dirty_ || next_edge >= wake_);
  }

  template <class V>
  void pre_edge(const V& m, uint64_t edge) {
    if (!presenting_) return;
    if (!m.s_axis_rx_tready) {
      ++stall_cycles_;
      return;
    }
    accept(edge);
  }

  template <class V>
  void drive(V& m, uint64_t next_edge) {
    static_assert(sizeof(m.s_axis_rx_tdata) <= kMaxBytes);
    using Keep = std::remove_cvref_t<decltype(m.s_axis_rx_tkeep)>;
    if (!presenting_ && !start(next_edge)) {
      if (dirty_) {
        m.s_axis_rx_tvalid = 0;
        m.s_axis_rx_tlast = 0;
        m.s_axis_rx_tkeep = 0;
        std::memset(static_cast<void*>(&m.s_axis_rx_tdata), 0, data_bytes_);
        dirty_ = false;
      }
      return;
    }
    if (!load_) return;  // the same beat is still offered
    load_ = false;
    dirty_ = false;
    const size_t left = cur_.size() - off_;
    const unsigned n = left < data_bytes_ ? static_cast<unsigned>(left) : data_bytes_;
    auto* dst = static_cast<uint8_t*>(static_cast<void*>(&m.s_axis_rx_tdata));
    std::memcpy(dst, cur_.data() + off_, n);
    if (n < data_bytes_) std::memset(dst + n, 0, data_bytes_ - n);
    m.s_axis_rx_tkeep = static_cast<Keep>(n == data_bytes_ ? full_keep_ : (uint64_t{1} << n) - 1);
    m.s_axis_rx_tlast = left <= data_bytes_ ? 1 : 0;
    m.s_axis_rx_tvalid = 1;
  }

 private:
  static constexpr unsigned kMaxBytes = 64;
  struct Item {
    uint64_t ready;
    uint64_t seq;
    std::vector<uint8_t> bytes;
  };
  // Min-heap on (ready, seq) with std::push_heap/pop_heap.
  static bool later(const Item& a, const Item& b) {
    return a.ready != b.ready ? a.ready > b.ready : a.seq > b.seq;
  }

  bool start(uint64_t next_edge);
  void accept(uint64_t edge);
  void update_wake();

  unsigned data_bytes_;
  uint64_t full_keep_;
  uint64_t ifg_;
  FrameFn on_frame_;
  std::vector<Item> q_;
  uint64_t seq_ = 0;
  uint64_t wake_ = kNever;  // earliest next edge at which a queued frame may start
  uint64_t free_at_ = 0;    // earliest first-beat edge after the inter-frame gap
  bool presenting_ = false;
  bool load_ = false;   // drive() must put the beat at off_ on the pins
  bool dirty_ = false;  // the pins still show the last beat of a finished frame
  std::vector<uint8_t> cur_;
  size_t off_ = 0;
  uint64_t first_ = 0;
  uint64_t beats_ = 0;
  uint64_t frames_ = 0;
  uint64_t stall_cycles_ = 0;
};

}  // namespace bouncer::sim
