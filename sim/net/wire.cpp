// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/wire.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace bouncer::sim {

Wire::Wire(Direction dir, const WireConfig& cfg)
    : dir_(dir), delay_(cfg.delay), loss_(cfg.seed, cfg.loss) {
  if (!(cfg.loss >= 0.0 && cfg.loss <= 1.0))
    throw std::invalid_argument("wire loss probability must be in [0, 1] (got " +
                                std::to_string(cfg.loss) + ")");
}

bool Wire::offer(std::vector<uint8_t>&& frame, uint64_t cycle, const DropHook& hook,
                 std::vector<DroppedFrame>& dropped) {
  if (cycle < last_cycle_)
    throw std::logic_error("Wire::offer: cycle " + std::to_string(cycle) + " after cycle " +
                           std::to_string(last_cycle_));
  last_cycle_ = cycle;
  const uint64_t index = offered_++;
  const bool lost = loss_.draw();
  const bool scripted = hook && hook(dir_, frame, index);
  if (lost || scripted) {
    ++dropped_;
    dropped.push_back(DroppedFrame{dir_, std::move(frame), cycle, index, scripted});
    return false;
  }
  q_.push_back(InFlight{std::move(frame), cycle + delay_, index});
  return true;
}

Wire::InFlight Wire::pop() {
  InFlight f = std::move(q_.front());
  q_.pop_front();
  return f;
}

}  // namespace bouncer::sim
