// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// One direction of the wire between Bouncer's port and the peers: random loss (Bernoulli,
// seeded, one PRNG draw per frame unless the probability is 0 or 1), a scripted drop hook and
// a fixed delay. Frames are offered in nondecreasing cycle order and delivered in that order
// at offer cycle + delay (a FIFO: the delay is the same for every frame).
//
// For every offered frame, in order: the loss PRNG is drawn, then the hook (if any) is called
// with the frame's per-direction index (so a hook sees every frame and the random pattern does
// not depend on the hook). Dropped frames are appended to the caller's log.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "bouncer/sim/platform.hpp"
#include "platform/sim_util.hpp"

namespace bouncer::sim {

struct WireConfig {
  double loss = 0.0;   // [0, 1]
  uint64_t delay = 0;  // cycles
  uint64_t seed = 1;
};

class Wire {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  struct InFlight {
    std::vector<uint8_t> bytes;
    uint64_t deliver;  // cycle at which the far side receives it
    uint64_t index;    // per-direction index (as seen by the drop hook)
  };

  // Throws std::invalid_argument for a loss probability outside [0, 1].
  Wire(Direction dir, const WireConfig& cfg);

  // Offers a frame at `cycle` (nondecreasing; std::logic_error otherwise). Returns true if it
  // is in flight (delivered at cycle + delay), false if it was dropped (logged in `dropped`).
  bool offer(std::vector<uint8_t>&& frame, uint64_t cycle, const DropHook& hook,
             std::vector<DroppedFrame>& dropped);

  uint64_t next_delivery() const { return q_.empty() ? kNever : q_.front().deliver; }
  InFlight pop();  // the front frame; only when next_delivery() != kNever

  Direction direction() const { return dir_; }
  uint64_t delay() const { return delay_; }
  uint64_t offered() const { return offered_; }
  uint64_t dropped() const { return dropped_; }
  size_t in_flight() const { return q_.size(); }

 private:
  Direction dir_;
  uint64_t delay_;
  Bernoulli loss_;
  std::deque<InFlight> q_;
  uint64_t offered_ = 0;
  uint64_t dropped_ = 0;
  uint64_t last_cycle_ = 0;
};

}  // namespace bouncer::sim
