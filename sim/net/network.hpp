// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The network side of the co-simulation, without the core: the simulated peers (sim/peer
// initiators), the two wire directions and the dispatcher, driven by a cycle count. Plain C++
// (no SystemC, no Verilator), so it is unit-tested on its own.
//
//   core TX frame --from_bouncer()--> Wire(kFromBouncer) --(dst IPv4, dst TCP port)--> peer
//   peer poll_tx --> Wire(kToBouncer) --> deliver(bytes, arrival) (the platform: RX queue)
//
// Events (wire deliveries, peer starts and timers) are processed by advance(now) in time
// order, each at its own cycle; equal cycles: deliveries to peers, then peer timers (peer index
// order), then deliveries to Bouncer. A peer is touched only when one of its events is due or
// a frame arrives for it; its frames are drained at once (poll_tx until empty). Peer deadlines
// live in a min-heap (stale entries are skipped), so the cost per event is O(log peers) and an
// idle network costs the caller one compare per cycle (next_event()).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "bouncer/peer/initiator.hpp"
#include "bouncer/sim/platform.hpp"
#include "bouncer/sim/tcp_frame.hpp"
#include "net/wire.hpp"

namespace bouncer::sim {

struct NetworkConfig {
  WireConfig to_bouncer;
  WireConfig from_bouncer;
};

struct NetworkStats {
  uint64_t peer_frames_sent = 0;      // frames the peers handed out (offered to the wire)
  uint64_t delivered_to_bouncer = 0;  // peer frames that came out of the wire
  uint64_t bouncer_frames = 0;        // core frames offered to the wire
  uint64_t delivered_to_peers = 0;    // core frames that came out of the wire to a peer
  uint64_t unclaimed_tx = 0;          // core frames that came out of the wire for no peer
  uint64_t dropped_to_bouncer = 0;
  uint64_t dropped_from_bouncer = 0;
};

class Network {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  // Receives every frame that leaves the kToBouncer wire, with its arrival cycle.
  using DeliverFn = std::function<void(std::vector<uint8_t>&&, uint64_t arrival)>;

  Network(const NetworkConfig& cfg, DeliverFn to_bouncer);

  // Adds a peer that starts (Initiator::start + its SYN) at max(start_cycle, the latest cycle
  // already processed). Throws std::invalid_argument for a duplicate (cfg.ip, cfg.port) or an
  // invalid configuration.
  size_t add_peer(peer::InitiatorConfig cfg, uint64_t start_cycle);
  const peer::Initiator& peer(size_t i) const;  // std::out_of_range
  size_t num_peers() const { return peers_.size(); }
  bool peers_finished() const { return finished_ == peers_.size(); }
  // Index of the peer that owns (ip, port), if any.
  std::optional<size_t> find_peer(TcpEndpoint ep) const;

  // A frame the core transmitted, complete at `cycle` (nondecreasing): offered to the
  // kFromBouncer wire.
  void from_bouncer(std::vector<uint8_t> frame, uint64_t cycle);
  // Processes every event due at or before `now`.
  void advance(uint64_t now);
  // Earliest pending event (kNever if none): call advance() when the clock reaches it.
  uint64_t next_event() const { return next_; }

  void set_drop_hook(DropHook hook) { hook_ = std::move(hook); }
  const std::vector<DroppedFrame>& dropped() const { return dropped_; }
  const NetworkStats& stats() const { return stats_; }
  const Wire& wire(Direction d) const { return d == Direction::kToBouncer ? to_ : from_; }

 private:
  struct Sched {
    uint64_t t;
    uint32_t idx;
  };
  // std::push_heap/pop_heap comparator for a min-heap on (t, idx).
  static bool later(const Sched& a, const Sched& b) {
    return a.t != b.t ? a.t > b.t : a.idx > b.idx;
  }
  static uint64_t key(TcpEndpoint ep) { return uint64_t{ep.ip} << 16 | ep.port; }

  uint64_t top_peer_time();  // earliest live heap entry (drops stale ones), kNever if none
  void run_peer_timer();
  void deliver_to_peer();
  void deliver_to_bouncer();
  void drain(uint32_t idx, uint64_t t);  // poll_tx until empty, reschedule
  void schedule(uint32_t idx, uint64_t t);
  void update_next();

  Wire to_, from_;
  DeliverFn deliver_;
  DropHook hook_;
  std::vector<std::unique_ptr<peer::Initiator>> peers_;
  std::vector<uint64_t> sched_;  // the live heap entry of each peer (kNever: none)
  std::vector<uint8_t> started_, done_;
  std::vector<Sched> heap_;
  std::unordered_map<uint64_t, uint32_t> by_endpoint_;
  std::vector<DroppedFrame> dropped_;
  NetworkStats stats_;
  size_t finished_ = 0;
  uint64_t now_ = 0;  // latest cycle processed
  uint64_t next_ = kNever;
};

}  // namespace bouncer::sim
