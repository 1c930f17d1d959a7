// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "net/network.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace bouncer::sim {

namespace {
uint16_t rd16(std::span<const uint8_t> b, size_t o) {
  return static_cast<uint16_t>(b[o] << 8 | b[o + 1]);
}
uint32_t rd32(std::span<const uint8_t> b, size_t o) {
  return static_cast<uint32_t>(rd16(b, o)) << 16 | rd16(b, o + 2);
}
constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherVlan = 0x8100;
constexpr uint8_t kIpProtoTcp = 6;

// Offsets of the IPv4 header (l3) and the TCP header (l4) of an IPv4/TCP frame with at least
// the TCP ports, or nullopt (tcp_destination's rules).
struct Layers {
  size_t l3 = 0, l4 = 0;
};
std::optional<Layers> layers(std::span<const uint8_t> f) {
  if (f.size() < 14) return std::nullopt;
  size_t l3 = 14;
  uint16_t type = rd16(f, 12);
  if (type == kEtherVlan) {
    if (f.size() < 18) return std::nullopt;
    type = rd16(f, 16);
    l3 = 18;
  }
  if (type != kEtherIpv4 || f.size() < l3 + 20) return std::nullopt;
  const uint8_t vihl = f[l3];
  const size_t ihl = (vihl & 0x0Fu) * 4u;
  if ((vihl >> 4) != 4 || ihl < 20 || f.size() < l3 + ihl) return std::nullopt;
  if (f[l3 + 9] != kIpProtoTcp) return std::nullopt;
  if ((rd16(f, l3 + 6) & 0x1FFFu) != 0) return std::nullopt;  // not the first fragment
  const size_t l4 = l3 + ihl;
  if (f.size() < l4 + 4) return std::nullopt;
  return Layers{l3, l4};
}

}  // namespace

std::optional<TcpEndpoint> tcp_destination(std::span<const uint8_t> f) {
  const auto l = layers(f);
  if (!l) return std::nullopt;
  return TcpEndpoint{rd32(f, l->l3 + 16), rd16(f, l->l4 + 2)};
}

std::span<const uint8_t> tcp_payload(std::span<const uint8_t> f) {
  const auto l = layers(f);
  if (!l || f.size() < l->l4 + 20 || (f[l->l4 + 12] >> 4) < 5) return {};
  const size_t start = l->l4 + static_cast<size_t>(f[l->l4 + 12] >> 4) * 4;
  const size_t end = std::min(f.size(), l->l3 + size_t{rd16(f, l->l3 + 2)});
  if (end <= start) return {};
  return f.subspan(start, end - start);
}

Network::Network(const NetworkConfig& cfg, DeliverFn to_bouncer)
    : to_(Direction::kToBouncer, cfg.to_bouncer),
      from_(Direction::kFromBouncer, cfg.from_bouncer),
      deliver_(std::move(to_bouncer)) {}

size_t Network::add_peer(peer::InitiatorConfig cfg, uint64_t start_cycle) {
  const TcpEndpoint ep{cfg.ip, cfg.port};
  if (by_endpoint_.contains(key(ep)))
    throw std::invalid_argument("add_peer: another peer already uses " + std::to_string(cfg.ip) +
                                ":" + std::to_string(cfg.port));
  if (peers_.size() >= UINT32_MAX) throw std::length_error("add_peer: too many peers");
  auto p = std::make_unique<peer::Initiator>(std::move(cfg));  // may throw invalid_argument
  const auto idx = static_cast<uint32_t>(peers_.size());
  peers_.push_back(std::move(p));
  sched_.push_back(kNever);
  started_.push_back(0);
  done_.push_back(0);
  by_endpoint_.emplace(key(ep), idx);
  schedule(idx, std::max(start_cycle, now_));
  update_next();
  return idx;
}

const peer::Initiator& Network::peer(size_t i) const {
  if (i >= peers_.size())
    throw std::out_of_range("peer index " + std::to_string(i) + " of " +
                            std::to_string(peers_.size()));
  return *peers_[i];
}

std::optional<size_t> Network::find_peer(TcpEndpoint ep) const {
  auto it = by_endpoint_.find(key(ep));
  if (it == by_endpoint_.end()) return std::nullopt;
  return it->second;
}

void Network::from_bouncer(std::vector<uint8_t> frame, uint64_t cycle) {
  ++stats_.bouncer_frames;
  if (!from_.offer(std::move(frame), cycle, hook_, dropped_)) ++stats_.dropped_from_bouncer;
  update_next();
}

void Network::advance(uint64_t now) {
  for (;;) {
    const uint64_t t_from = from_.next_delivery();
    const uint64_t t_peer = top_peer_time();
    const uint64_t t_to = to_.next_delivery();
    const uint64_t t = std::min({t_from, t_peer, t_to});
    if (t > now) break;
    now_ = std::max(now_, t);
    if (t_from == t)
      deliver_to_peer();
    else if (t_peer == t)
      run_peer_timer();
    else
      deliver_to_bouncer();
  }
  now_ = std::max(now_, now);
  update_next();
}

uint64_t Network::top_peer_time() {
  while (!heap_.empty() && heap_.front().t != sched_[heap_.front().idx]) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  return heap_.empty() ? kNever : heap_.front().t;
}

void Network::schedule(uint32_t idx, uint64_t t) {
  if (sched_[idx] == t) return;
  sched_[idx] = t;
  if (t == kNever) return;
  heap_.push_back(Sched{t, idx});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

void Network::run_peer_timer() {
  const Sched s = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
  sched_[s.idx] = kNever;
  if (!started_[s.idx]) {
    started_[s.idx] = 1;
    peers_[s.idx]->start(s.t);
  }
  drain(s.idx, s.t);
}

void Network::drain(uint32_t idx, uint64_t t) {
  peer::Initiator& p = *peers_[idx];
  while (auto f = p.poll_tx(t)) {
    ++stats_.peer_frames_sent;
    if (!to_.offer(std::move(*f), t, hook_, dropped_)) ++stats_.dropped_to_bouncer;
  }
  if (!done_[idx] && p.finished()) {
    done_[idx] = 1;
    ++finished_;
  }
  uint64_t nd = p.next_deadline();
  if (nd != kNever && nd <= t) nd = t + 1;  // drained: nothing may be due now any more
  schedule(idx, nd);
}

void Network::deliver_to_peer() {
  Wire::InFlight f = from_.pop();
  const auto ep = tcp_destination(f.bytes);
  const auto it = ep ? by_endpoint_.find(key(*ep)) : by_endpoint_.end();
  if (it == by_endpoint_.end()) {
    ++stats_.unclaimed_tx;
    return;
  }
  ++stats_.delivered_to_peers;
  const uint32_t idx = it->second;
  peers_[idx]->on_rx(f.bytes, f.deliver);
  // A peer that has not started keeps its start event; it ignores the frame.
  if (started_[idx]) drain(idx, f.deliver);
}

void Network::deliver_to_bouncer() {
  Wire::InFlight f = to_.pop();
  ++stats_.delivered_to_bouncer;
  deliver_(std::move(f.bytes), f.deliver);
}

void Network::update_next() {
  next_ = std::min({from_.next_delivery(), top_peer_time(), to_.next_delivery()});
}

}  // namespace bouncer::sim
