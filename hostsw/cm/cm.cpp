// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cm.hpp"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

namespace bouncer {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

bool is_hw(const Completion& c, regs::CqMajor major, regs::CqMinor minor) {
  return c.major == static_cast<uint16_t>(major) && c.minor == static_cast<uint16_t>(minor);
}

// The PD of a rev-2 enhanced reply shares PD_Length with the 4-byte IRD/ORD word.
constexpr uint32_t kIrdOrdBytes = 4;

// A deadline on the Device's host clock (Device::host_now, under the device lock).
class HostDeadline {
 public:
  HostDeadline(Device& dev, std::chrono::nanoseconds timeout) : dev_(dev) {
    const auto now = dev_.host_now();
    timeout = std::max(timeout, std::chrono::nanoseconds::zero());
    at_ = timeout > std::chrono::nanoseconds::max() - now ? std::chrono::nanoseconds::max()
                                                          : now + timeout;
  }
  bool passed() { return dev_.host_now() >= at_; }
  // One poll interval, or what is left when the deadline is nearer. No lock is held.
  void pause() {
    const auto left = at_ - dev_.host_now();
    if (left > std::chrono::nanoseconds::zero()) {
      dev_.pause(std::min(dev_.config().poll_interval, left));
    }
  }

 private:
  Device& dev_;
  std::chrono::nanoseconds at_{};
};

std::optional<ConnHandle> handle_of(const Event& e) {
  return std::visit(Overloaded{[](const ConnectRequest& x) { return std::optional{x.handle}; },
                               [](const PeerReset& x) { return std::optional{x.handle}; },
                               [](const RejectComplete& x) { return std::optional{x.handle}; },
                               [](const MpaError&) { return std::optional<ConnHandle>{}; }},
                    e);
}

void drain_fd(int fd) {
  if (fd < 0) return;
  uint64_t v = 0;
  // non-blocking: EAGAIN when already 0
  while (::read(fd, &v, sizeof v) < 0 && errno == EINTR) {
  }
}

void raise_fd(int fd) {
  if (fd < 0) return;
  const uint64_t one = 1;
  while (::write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace

Error completion_error(const Completion& c) {
  Error e{Errc::kHardware, fmt::format("reject cm_id {} (SQ {} wqe_idx {}): {}", c.cm_id, c.sq,
                                       c.wqe_idx, c.status())};
  e.hw_major = c.major;
  e.hw_minor = c.minor;
  return e;
}

Result<void> check_reject_pd(size_t pd_bytes, bool enhanced, bool unsafe_wire_pd) {
  const size_t word = enhanced ? kIrdOrdBytes : 0;
  const size_t wire = pd_bytes + word;
  const size_t limit = unsafe_wire_pd ? regs::kMpaPdMax : regs::kWirePdSafeMax;
  if (wire <= limit) return {};
  const std::string what =
      enhanced
          ? fmt::format(
                "{} bytes of private data make PD_Length {} on the wire with the "
                "4-byte IRD/ORD word of an enhanced (rev 2) connection",
                pd_bytes, wire)
          : fmt::format("{} bytes of private data make PD_Length {} on the wire", pd_bytes, wire);
  if (unsafe_wire_pd) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("{}: above the MPA limit of {} (at most {} bytes here)", what,
                                  regs::kMpaPdMax, regs::kMpaPdMax - word));
  }
  return make_error(
      Errc::kInvalidArgument,
      fmt::format("{}: above {}, the most every Linux initiator takes intact (at most {} bytes "
                  "here): siw fails a PD_Length over 256, irdma and cxgb4 keep the length in a "
                  "u8; the unsafe_wire_pd option sends up to {}",
                  what, regs::kWirePdSafeMax, regs::kWirePdSafeMax - word, regs::kMpaPdMax));
}

Result<void> check_reply_ird_ord(uint32_t word, std::optional<uint32_t> request) {
  constexpr uint32_t kP2p = 0x8000'0000, kWriteRtr = 0x8000, kReadRtr = 0x4000, kNone = 0x3FFF;
  const uint32_t ird = (word >> 16) & kNone, ord = word & kNone;
  auto bad = [&](std::string why) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("IRD/ORD word 0x{:08X}: {}; an irdma initiator would reset "
                                  "the connection and drop the private data "
                                  "(irdma_negotiate_mpa_v2_ird_ord)",
                                  word, why));
  };
  if ((word & kP2p) == 0) return bad("no peer-to-peer bit (0x80000000)");
  if ((word & (kWriteRtr | kReadRtr)) == 0) {
    return bad("neither the Write (0x8000) nor the Read (0x4000) RTR bit");
  }
  if (ird == kNone || ord == kNone) return {};
  if (ird == 0 && (word & kReadRtr) != 0) return bad("IRD 0 with the Read RTR bit");
  if (request) {
    const uint32_t req_ird = (*request >> 16) & kNone;
    if (ord > req_ird) {
      return bad(fmt::format("ORD {} is above the initiator's IRD {}", ord, req_ird));
    }
  }
  return {};
}

const char* event_name(const Event& e) {
  return std::visit(Overloaded{[](const ConnectRequest&) { return "CONNECT_REQUEST"; },
                               [](const PeerReset&) { return "PEER_RESET"; },
                               [](const MpaError&) { return "MPA_ERROR"; },
                               [](const RejectComplete&) { return "REJECT_COMPLETE"; }},
                    e);
}

uint32_t event_cm_id(const Event& e) {
  return std::visit([](const auto& ev) { return ev.cm_id; }, e);
}

const char* node_state_name(NodeState s) {
  switch (s) {
    case NodeState::kFree:
      return "free";
    case NodeState::kHeld:
      return "held";
    case NodeState::kHeldReset:
      return "held (peer reset)";
    case NodeState::kRejecting:
      return "rejecting";
    case NodeState::kAwaitTerminal:
      return "rejected, awaiting its terminal event";
  }
  return "?";
}

Cm::Cm(Device& dev) : dev_(dev) { channels_[0] = Channel{}; }

Cm::~Cm() {
  stop_poller();
  Lock lk(mu_);
  for (unsigned i = 0; i < listeners_.size(); ++i) {
    if (!listeners_[i]) continue;
    (void)dev_.cqp_destroy_listener(i);
    listeners_[i].reset();
    closed_[i] = true;
  }
  // A request the application never answered would hold its cm_id (a node waiting for the
  // host has no timer) until the core is reset. iw_cm rejects it when the listener goes away
  // or the id is destroyed; so does this: no PD, the listener's FIN policy. Requests read off
  // the AEQ meanwhile are released as they come (their listener is closed), hence the passes.
  to_release_.clear();
  for (int pass = 0; pass < 4; ++pass) {
    pump();
    std::vector<ConnHandle> held_now;
    for (auto& [id, n] : nodes_) {
      if (n.state == NodeState::kHeld || n.state == NodeState::kHeldReset) {
        n.destroyed = false;  // a release that met a full SQ: rejected here instead
        held_now.push_back({id, n.gen});
      }
    }
    if (held_now.empty()) break;
    for (ConnHandle h : held_now) {
      Node* n = node(h.cm_id);
      if (n == nullptr || n->gen != h.gen) continue;
      n->destroyed = true;  // no event for it any more
      const RejectOptions o;
      auto t = post_node_reject(h, *n, {}, o, Kind::kSync);
      if (!t) continue;
      Done d;
      (void)wait_sync(lk, o.sq, *t, o.timeout, d);
      if (d.cleanup != 0) (void)wait_internal(lk, d.cleanup, o.timeout);
    }
  }
  // Rejects still in flight: nobody collects them now; their slots go back when they complete.
  for (const auto& [key, f] : live_) {
    (void)dev_.abandon(key >> 16, static_cast<uint16_t>(key & 0xFFFF));
  }
  for (auto& [id, ch] : channels_) {
    if (ch.fd >= 0) ::close(ch.fd);
  }
}

// ------------------------------------------------------------------------------- listeners

Result<ListenerId> Cm::listen(uint32_t local_ip, uint16_t port, const ListenOptions& o) {
  Lock lk(mu_);
  const unsigned n = std::min<unsigned>(dev_.caps().num_listeners, regs::kNumListeners);
  if (port == 0) return make_error(Errc::kInvalidArgument, "cannot listen on port 0");
  if (o.index && *o.index >= n) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("listener index {} is not below {}", *o.index, n));
  }
  if (channel(o.channel) == nullptr) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("event channel {} does not exist", o.channel.value));
  }
  // the template answers rev 2 enhanced requests too: the IRD/ORD word counts
  if (auto v = check_reject_pd(o.template_pd.size(), true, o.unsafe_wire_pd); !v) {
    return make_error(Errc::kInvalidArgument, "listener template: " + v.error().message);
  }
  if (o.template_ird_ord) {
    if (auto v = check_reply_ird_ord(*o.template_ird_ord, std::nullopt); !v) {
      return make_error(Errc::kInvalidArgument, "listener template: " + v.error().message);
    }
  }
  if (o.max_ird > 0x3FFF || o.max_ord > 0x3FFF) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("max_ird {} / max_ord {} exceed 14 bits", o.max_ird, o.max_ord));
  }
  if (o.auto_reject == regs::AutoReject::BACKLOG && o.backlog == 0) {
    return make_error(Errc::kInvalidArgument,
                      "auto_reject BACKLOG needs a backlog (0 means no limit: it would never "
                      "reject)");
  }
  for (unsigned i = 0; i < n; ++i) {
    if (listeners_[i] && listeners_[i]->ip == local_ip && listeners_[i]->port == port) {
      return make_error(Errc::kState, fmt::format("listener {} already listens on 0x{:08X}:{}", i,
                                                  local_ip, port));
    }
  }
  unsigned index = 0;
  if (o.index) {
    index = *o.index;
    if (listeners_[index]) {
      return make_error(Errc::kState, fmt::format("listener index {} is in use", index));
    }
  } else {
    // An entry never used before first: requests of a destroyed listener's connections that
    // come late would be taken for the new listener's.
    index = n;
    for (unsigned i = 0; i < n && index == n; ++i) {
      if (!listeners_[i] && !closed_[i]) index = i;
    }
    for (unsigned i = 0; i < n && index == n; ++i) {
      if (!listeners_[i]) index = i;
    }
    if (index == n) {
      return make_error(Errc::kState, fmt::format("all {} listener entries are in use", n));
    }
  }
  if (auto r = dev_.wait_cm_ready(dev_.config().cqp_timeout); !r) return r.error();
  ListenerConfig c;
  c.index = index;
  c.loc_ip = local_ip;
  c.loc_port = port;
  c.backlog = o.backlog;
  c.fin_policy = o.fin_policy;
  c.auto_reject = o.auto_reject;
  c.tmpl_ird_ord = o.template_ird_ord;
  c.max_ird = o.max_ird;
  c.max_ord = o.max_ord;
  c.loc_mac = o.local_mac;
  c.ttl = o.ttl;
  c.tos = o.tos;
  c.aeq_full_rst = o.aeq_full_rst;
  if (auto r = dev_.cqp_create_listener(c, o.template_pd); !r) return r.error();
  listeners_[index] = Listener{local_ip, port, o.channel, o.context};
  closed_[index] = false;
  return ListenerId{static_cast<uint8_t>(index)};
}

Result<void> Cm::destroy_listener(ListenerId id) {
  Lock lk(mu_);
  if (id.index >= listeners_.size() || !listeners_[id.index]) {
    return make_error(Errc::kState,
                      fmt::format("listener {} is not a listener of this Cm", id.index));
  }
  auto r = dev_.cqp_destroy_listener(id.index);
  if (r || (r.error().code == Errc::kHardware &&
            r.error().hw_minor == static_cast<uint16_t>(regs::CqMinor::BAD_LISTENER))) {
    listeners_[id.index].reset();
    closed_[id.index] = true;
    // iw_cm: a request that reaches a listener going away is rejected, never delivered.
    std::vector<ConnHandle> undelivered;
    for (auto& [chid, ch] : channels_) {
      for (const Event& e : ch.queue) {
        if (const auto* cr = std::get_if<ConnectRequest>(&e); cr && cr->listener == id) {
          undelivered.push_back(cr->handle);
        }
      }
    }
    for (ConnHandle h : undelivered) {
      Node* n = node(h.cm_id);
      if (n != nullptr && n->gen == h.gen &&
          (n->state == NodeState::kHeld || n->state == NodeState::kHeldReset)) {
        release(h.cm_id, *n);
      }
    }
    // Its MPA errors not yet taken go too: they carry the listener's context, which the
    // caller may free once the listener is gone.
    for (auto& [chid, ch] : channels_) {
      const size_t before = ch.queue.size();
      std::erase_if(ch.queue, [&](const Event& e) {
        const auto* me = std::get_if<MpaError>(&e);
        return me != nullptr && me->listener == id;
      });
      if (before != 0 && ch.queue.empty()) drain_fd(ch.fd);
    }
  }
  return r;
}

// ------------------------------------------------------------------------------- channels

Cm::Channel* Cm::channel(ChannelId ch) {
  auto it = channels_.find(ch.value);
  return it == channels_.end() ? nullptr : &it->second;
}

Result<ChannelId> Cm::create_channel() {
  Lock lk(mu_);
  const ChannelId id{next_channel_++};
  channels_[id.value] = Channel{};
  return id;
}

Result<void> Cm::destroy_channel(ChannelId ch) {
  Lock lk(mu_);
  auto it = channels_.find(ch.value);
  if (ch.value == 0 || it == channels_.end()) {
    return make_error(
        Errc::kInvalidArgument,
        fmt::format("event channel {} is not a channel made by create_channel()", ch.value));
  }
  for (unsigned i = 0; i < listeners_.size(); ++i) {
    if (listeners_[i] && listeners_[i]->channel == ch) {
      return make_error(Errc::kState,
                        fmt::format("event channel {} is in use by listener {}", ch.value, i));
    }
  }
  for (const auto& [id, n] : nodes_) {
    if (n.channel == ch && !n.destroyed &&
        (n.state == NodeState::kHeld || n.state == NodeState::kHeldReset)) {
      return make_error(Errc::kState,
                        fmt::format("event channel {} still has connection cm_id {} (generation "
                                    "{}): reject or destroy it first",
                                    ch.value, id, n.gen));
    }
  }
  if (it->second.fd >= 0) ::close(it->second.fd);
  channels_.erase(it);
  return {};
}

Result<int> Cm::event_fd(ChannelId ch) {
  Lock lk(mu_);
  Channel* c = channel(ch);
  if (c == nullptr) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("event channel {} does not exist", ch.value));
  }
  if (c->fd < 0) {
    const int fd = ::eventfd(c->queue.empty() ? 0 : 1, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
      return make_error(Errc::kNoDevice, fmt::format("eventfd: {}", std::strerror(errno)));
    }
    c->fd = fd;
  }
  return c->fd;
}

void Cm::deliver(ChannelId ch, Event e) {
  Channel* c = channel(ch);
  if (c == nullptr) return;  // its channel was destroyed: nobody takes it
  const bool was_empty = c->queue.empty();
  c->queue.push_back(std::move(e));
  if (was_empty) raise_fd(c->fd);
}

void Cm::purge(ConnHandle h) {
  for (auto& [id, ch] : channels_) {
    const size_t before = ch.queue.size();
    std::erase_if(ch.queue, [&](const Event& e) { return handle_of(e) == h; });
    if (before != 0 && ch.queue.empty()) drain_fd(ch.fd);
  }
}

// ------------------------------------------------------------------------------- events

Cm::Node* Cm::node(uint32_t cm_id) {
  auto it = nodes_.find(cm_id);
  return it == nodes_.end() ? nullptr : &it->second;
}

NodeState Cm::node_state(uint32_t cm_id) const {
  Lock lk(mu_);
  auto it = nodes_.find(cm_id);
  return it == nodes_.end() ? NodeState::kFree : it->second.state;
}

NodeState Cm::node_state(ConnHandle h) const {
  Lock lk(mu_);
  auto it = nodes_.find(h.cm_id);
  return it == nodes_.end() || it->second.gen != h.gen ? NodeState::kFree : it->second.state;
}

void Cm::set_terminal_observer(std::function<void(uint32_t cm_id, regs::AeqEvent code)> f) {
  Lock lk(mu_);
  terminal_observer_ = std::move(f);
}

CmStats Cm::stats() const {
  Lock lk(mu_);
  CmStats s = stats_;
  s.nodes_held = 0;
  s.nodes_awaiting_terminal = 0;
  for (const auto& [id, n] : nodes_) {
    if (n.state == NodeState::kHeld || n.state == NodeState::kHeldReset) ++s.nodes_held;
    if (n.state == NodeState::kAwaitTerminal ||
        (n.state == NodeState::kRejecting && !n.terminal_seen)) {
      ++s.nodes_awaiting_terminal;
    }
  }
  return s;
}

void Cm::count_terminal(uint32_t cm_id, regs::AeqEvent code) {
  if (terminal_observer_) terminal_observer_(cm_id, code);
  switch (code) {
    case regs::AeqEvent::CLOSED:
      ++stats_.terminal.closed;
      break;
    case regs::AeqEvent::RESET:
      ++stats_.terminal.reset;
      break;
    case regs::AeqEvent::RTX_EXHAUSTED:
      ++stats_.terminal.rtx_exhausted;
      break;
    case regs::AeqEvent::TIMEOUT:
      ++stats_.terminal.timeout;
      break;
    default:
      ++stats_.terminal.other;
      break;
  }
}

// A terminal event (CLOSED, RTX_EXHAUSTED, TIMEOUT; RESET of a rejected node).
void Cm::on_terminal(uint32_t cm_id, regs::AeqEvent code) {
  Node* n = node(cm_id);
  if (n == nullptr) {
    ++stats_.unexpected_events;
    return;
  }
  switch (n->state) {
    case NodeState::kRejecting:
      // The completion is still to be seen; the node is over for the hardware.
      if (n->terminal_seen) {
        ++stats_.unexpected_events;
        return;
      }
      n->terminal_seen = true;
      if (code == regs::AeqEvent::RESET) n->reset_seen = true;
      count_terminal(cm_id, code);
      return;
    case NodeState::kAwaitTerminal:
      count_terminal(cm_id, code);
      n->state = NodeState::kFree;
      return;
    case NodeState::kHeld:
    case NodeState::kHeldReset:
      // The hardware keeps a node the host holds until the reject: this breaks the
      // contract. The cm_id is free for the hardware, so it is for us too.
      ++stats_.unexpected_events;
      n->state = NodeState::kFree;
      return;
    case NodeState::kFree:
      ++stats_.unexpected_events;
      return;
  }
}

std::optional<Event> Cm::on_aeqe(const Aeqe& e) {
  if (e.cm_id >= dev_.caps().ctx_depth) {
    ++stats_.unexpected_events;
    return std::nullopt;
  }
  const Tuple tuple{e.loc_ip, e.loc_port, e.rem_ip, e.rem_port};
  const auto code = static_cast<regs::AeqEvent>(e.event);
  const Listener* lst =
      e.listener < listeners_.size() && listeners_[e.listener] ? &*listeners_[e.listener] : nullptr;
  switch (code) {
    case regs::AeqEvent::CONNECT_REQUEST: {
      Node& n = nodes_[e.cm_id];
      switch (n.state) {
        case NodeState::kFree:
          break;
        case NodeState::kRejecting:
        case NodeState::kAwaitTerminal:
          // The hardware writes a node's terminal event before it reuses the cm_id.
          if (!n.terminal_seen) ++stats_.missing_terminal;
          break;
        case NodeState::kHeld:
        case NodeState::kHeldReset:
          ++stats_.unexpected_events;  // a held cm_id reused: the old request is gone
          break;
      }
      Node fresh;
      fresh.state = NodeState::kHeld;
      fresh.rev = e.rev;
      fresh.flags = e.flags;
      fresh.listener = e.listener;
      if (fresh.enhanced()) fresh.ird_ord = e.ird_ord;
      if (++next_gen_ == 0) ++next_gen_;  // 0 names no connection
      fresh.gen = next_gen_;
      if (lst != nullptr) {
        fresh.channel = lst->channel;
        fresh.context = lst->context;
      }
      n = fresh;
      if (e.listener < closed_.size() && closed_[e.listener] && lst == nullptr) {
        release(e.cm_id, n);  // its listener is gone: iw_cm rejects it, nobody hears of it
        return std::nullopt;
      }
      ConnectRequest cr;
      cr.cm_id = e.cm_id;
      cr.handle = ConnHandle{e.cm_id, n.gen};
      cr.listener = ListenerId{e.listener};
      cr.context = n.context;
      cr.tuple = tuple;
      cr.rev = e.rev;
      cr.flags = e.flags;
      if (cr.enhanced()) cr.ird_ord = e.ird_ord;
      if (e.pd_len > 0) {
        auto pd = e.pd_len <= regs::kMpaPdMax ? dev_.read_pd_area(e.pd_offset, e.pd_len)
                                              : std::vector<std::byte>{};
        if (pd.empty()) {
          ++stats_.bad_pd;
        } else {
          cr.private_data = std::move(pd);
        }
      }
      ++stats_.requests;
      return Event{std::move(cr)};
    }
    case regs::AeqEvent::MPA_ERROR: {
      // A node the host never saw. Anything the driver remembers of this cm_id has ended.
      if (Node* n = node(e.cm_id); n != nullptr && n->state != NodeState::kFree) {
        if (n->state == NodeState::kHeld || n->state == NodeState::kHeldReset) {
          ++stats_.unexpected_events;
        } else if (!n->terminal_seen) {
          ++stats_.missing_terminal;
        }
        n->state = NodeState::kFree;
      }
      ++stats_.mpa_errors;
      return Event{MpaError{e.cm_id, ListenerId{e.listener}, lst ? lst->context : nullptr, tuple,
                            static_cast<regs::MpaError>(e.reason)}};
    }
    case regs::AeqEvent::RESET: {
      Node* n = node(e.cm_id);
      if (n != nullptr && n->state == NodeState::kHeld) {
        // Not terminal: the node stays until the application (or the driver) rejects it.
        n->state = NodeState::kHeldReset;
        n->reset_seen = true;
        if (n->destroyed) return std::nullopt;
        ++stats_.peer_resets;
        return Event{PeerReset{e.cm_id, ConnHandle{e.cm_id, n->gen}, n->context}};
      }
      if (n != nullptr && n->state == NodeState::kHeldReset) {
        ++stats_.unexpected_events;
        return std::nullopt;
      }
      on_terminal(e.cm_id, code);
      return std::nullopt;
    }
    case regs::AeqEvent::CLOSED:
    case regs::AeqEvent::RTX_EXHAUSTED:
    case regs::AeqEvent::TIMEOUT:
      on_terminal(e.cm_id, code);
      return std::nullopt;
  }
  ++stats_.unexpected_events;  // an event code this driver does not know
  return std::nullopt;
}

void Cm::pump() {
  // Completions of rejects whose callers gave up (the slots are free already).
  while (auto c = dev_.poll_abandoned()) on_completion(*c, true);
  while (auto e = dev_.poll_aeq()) {
    auto ev = on_aeqe(*e);
    if (!ev) continue;
    ChannelId ch;
    if (const auto* cr = std::get_if<ConnectRequest>(&*ev)) {
      ch = nodes_[cr->cm_id].channel;
    } else if (const auto* pr = std::get_if<PeerReset>(&*ev)) {
      ch = nodes_[pr->cm_id].channel;
    } else if (const auto* me = std::get_if<MpaError>(&*ev)) {
      if (me->listener.index < listeners_.size() && listeners_[me->listener.index]) {
        ch = listeners_[me->listener.index]->channel;
      }
    }
    deliver(ch, std::move(*ev));
  }
  dev_.flush_aeq_head();  // the caller may be about to wait: give the hardware all the room
  // This Cm's completions, and CQEs that match nothing (nobody can own them); the others
  // stay with the Device for the callers that posted them.
  while (auto c = dev_.poll_cq_if([this](const Completion& x) {
    return x.unexpected || live_.contains(wqe_key(x.sq, x.wqe_idx));
  })) {
    on_completion(*c, false);
  }
  if (!to_release_.empty()) {
    std::vector<ConnHandle> again;
    again.swap(to_release_);
    for (ConnHandle h : again) {
      Node* n = node(h.cm_id);
      if (n != nullptr && n->gen == h.gen &&
          (n->state == NodeState::kHeld || n->state == NodeState::kHeldReset)) {
        release(h.cm_id, *n);
      }
    }
  }
}

Result<std::optional<Event>> Cm::poll_event(ChannelId ch) {
  Lock lk(mu_);
  Channel* c = channel(ch);
  if (c == nullptr) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("event channel {} does not exist", ch.value));
  }
  if (c->queue.empty()) {
    pump();
    c = channel(ch);
  }
  if (c->queue.empty()) return std::optional<Event>{};
  Result<std::optional<Event>> out{std::move(c->queue.front())};
  c->queue.pop_front();
  if (c->queue.empty()) drain_fd(c->fd);
  return out;
}

Result<Event> Cm::wait_event(ChannelId ch, std::chrono::nanoseconds timeout) {
  HostDeadline dl(dev_, timeout);
  for (;;) {
    auto e = poll_event(ch);
    if (!e) return e.error();
    if (*e) return std::move(**e);
    if (dl.passed()) {
      return make_error(Errc::kTimeout, fmt::format("no event on channel {} after {}; {}", ch.value,
                                                    format_duration(timeout), dev_.state_text()));
    }
    dl.pause();
  }
}

// ------------------------------------------------------------------------------- reject

Result<void> check_reject_options(Device& dev, std::span<const std::byte> pd,
                                  const RejectOptions& opts) {
  // the connection's revision decides the IRD/ORD word; the smaller limit holds for both
  if (auto v = check_reject_pd(pd.size(), false, opts.unsafe_wire_pd); !v) return v.error();
  if (opts.push && !dev.caps().push) {
    return make_error(Errc::kInvalidArgument,
                      "push mode requested but the device has no push page");
  }
  if (opts.sq >= dev.num_sq()) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} is not in use (num_sq {})", opts.sq, dev.num_sq()));
  }
  return {};
}

RejectWqe reject_wqe(uint32_t cm_id, std::span<const std::byte> pd, const RejectOptions& opts) {
  RejectWqe w;
  w.cm_id = cm_id;
  w.sq = opts.sq;
  w.pd = pd;
  w.push = opts.push;
  w.allow_inline = opts.allow_inline;
  w.fin_policy = opts.fin_policy;
  w.ird_ord = opts.ird_ord;
  w.wr_id = opts.wr_id;
  return w;
}

Result<void> Cm::validate_reject(std::span<const std::byte> pd, const RejectOptions& opts) const {
  return check_reject_options(dev_, pd, opts);
}

Result<Cm::Node*> Cm::held(ConnHandle h, const char* what) {
  Node* n = node(h.cm_id);
  if (h.gen == 0 || n == nullptr || n->gen != h.gen) {
    const std::string now =
        n != nullptr && n->gen != 0 && n->gen != h.gen && n->state != NodeState::kFree
            ? fmt::format("; cm_id {} now belongs to a newer connection (generation {})", h.cm_id,
                          n->gen)
            : std::string();
    return make_error(Errc::kState,
                      fmt::format("{}: stale handle: cm_id {} generation {} names no connection "
                                  "of this Cm (it is over, or was never indicated){}",
                                  what, h.cm_id, h.gen, now));
  }
  if (n->destroyed) {
    return make_error(Errc::kState, fmt::format("{}: cm_id {} (generation {}) was destroyed", what,
                                                h.cm_id, h.gen));
  }
  if (n->state != NodeState::kHeld && n->state != NodeState::kHeldReset) {
    // iw_cm_reject: state != CONN_RECV -> -EINVAL, nothing reaches the provider.
    return make_error(Errc::kState,
                      fmt::format("{}: cm_id {} (generation {}) was already rejected ({})", what,
                                  h.cm_id, h.gen, node_state_name(n->state)));
  }
  return n;
}

Result<void> Cm::check_node_reject(const Node& n, std::span<const std::byte> pd,
                                   const RejectOptions& opts) {
  if (auto v = check_reject_pd(pd.size(), n.enhanced(), opts.unsafe_wire_pd); !v) {
    return v.error();
  }
  if (opts.ird_ord && n.enhanced()) {
    if (auto v = check_reply_ird_ord(*opts.ird_ord, n.ird_ord); !v) return v.error();
  }
  return {};
}

Result<uint64_t> Cm::post_node_reject(ConnHandle h, Node& n, std::span<const std::byte> pd,
                                      const RejectOptions& opts, Kind kind) {
  if (auto v = check_node_reject(n, pd, opts); !v) return v.error();
  RejectWqe w = reject_wqe(h.cm_id, pd, opts);
  w.pd_area = true;
  auto idx = dev_.post_reject(w);
  if (!idx) return idx.error();  // nothing posted: the connection is still held
  return node_rejected(h, n, opts.sq, *idx, kind);
}

uint64_t Cm::node_rejected(ConnHandle h, Node& n, unsigned sq, uint16_t wqe_idx, Kind kind) {
  n.state = NodeState::kRejecting;
  n.terminal_seen = false;
  n.cleanup_done = false;
  const uint64_t ticket = ++next_ticket_;
  live_[wqe_key(sq, wqe_idx)] = Inflight{h.cm_id, h.gen, kind, ticket, n.channel, n.context};
  // iw_cm: no events for this connection once reject returns, not even one already queued.
  purge(h);
  if (kind != Kind::kInternal) ++stats_.rejects;
  return ticket;
}

void Cm::release(uint32_t cm_id, Node& n) {
  const ConnHandle h{cm_id, n.gen};
  n.destroyed = true;
  purge(h);
  auto t = post_node_reject(h, n, {}, RejectOptions{}, Kind::kInternal);
  if (t) {
    ++stats_.released;
  } else if (t.error().code == Errc::kRingFull) {
    to_release_.push_back(h);  // the next pump tries again
  } else {
    ++stats_.cleanup_failed;
  }
}

// The driver's cleanup after the hardware refused a reject WQE: the node still waits for a
// reject, and the application may not be asked again (iw_cm's contract). Reject it once more
// with no PD and ABORT (reject + RST; irdma sends a RST when its reject fails).
uint64_t Cm::cleanup(uint32_t cm_id, Node& n, unsigned sq) {
  n.cleanup_done = true;
  RejectWqe w;
  w.cm_id = cm_id;
  w.sq = sq;
  w.pd_area = true;
  w.fin_policy = regs::FinPolicy::ABORT;
  auto idx = dev_.post_reject(w);
  if (!idx) {
    ++stats_.cleanup_failed;
    n.state = n.terminal_seen ? NodeState::kFree : NodeState::kAwaitTerminal;
    return 0;
  }
  ++stats_.cleanup_rejects;
  const uint64_t ticket = ++next_ticket_;
  live_[wqe_key(sq, *idx)] = Inflight{cm_id, n.gen, Kind::kInternal, ticket, n.channel, n.context};
  return ticket;
}

void Cm::settle(const Inflight& f, const Completion& c, uint64_t* cleanup_ticket) {
  Node* n = node(f.cm_id);
  if (n == nullptr || n->gen != f.gen || n->state != NodeState::kRejecting) return;
  auto done = [&] { n->state = n->terminal_seen ? NodeState::kFree : NodeState::kAwaitTerminal; };
  if (c.ok()) {
    done();
  } else if (is_hw(c, regs::CqMajor::CTX, regs::CqMinor::PEER_RESET)) {
    // The peer's RST came first: nothing was sent, the reject freed the node. Its RESET
    // event is in the AEQ unless it was already consumed.
    ++stats_.late_resets;
    n->state = n->reset_seen ? NodeState::kFree : NodeState::kAwaitTerminal;
  } else if (is_hw(c, regs::CqMajor::CTX, regs::CqMinor::NO_CONTEXT) ||
             is_hw(c, regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE)) {
    n->state = NodeState::kFree;  // no such node in the hardware
  } else if (c.major == static_cast<uint16_t>(regs::CqMajor::CTX)) {
    done();  // BAD_STATE and the like: the hardware's node is past MPAREQ_RCVD
  } else if (!n->cleanup_done) {
    const uint64_t t = cleanup(f.cm_id, *n, c.sq);  // WQE/*, DMA/*: the node still waits
    if (cleanup_ticket != nullptr) *cleanup_ticket = t;
  } else {
    ++stats_.cleanup_failed;
    done();
  }
}

void Cm::on_completion(const Completion& c, bool abandoned) {
  if (c.unexpected) {
    ++stats_.unexpected_completions;
    return;
  }
  const uint32_t key = wqe_key(c.sq, c.wqe_idx);
  if (abandoned) {
    auto it = abandoned_.find(key);
    if (it == abandoned_.end()) return;  // abandoned by another user of the Device
    const Inflight f = it->second.front();
    it->second.pop_front();
    if (it->second.empty()) abandoned_.erase(it);
    settle(f, c, nullptr);
    return;
  }
  auto it = live_.find(key);
  if (it == live_.end()) return;
  const Inflight f = it->second;
  live_.erase(it);  // before settle(): a cleanup may take the same slot
  uint64_t cleanup_ticket = 0;
  settle(f, c, &cleanup_ticket);
  switch (f.kind) {
    case Kind::kSync:
      done_[f.ticket] = Done{c, cleanup_ticket};
      break;
    case Kind::kAsync: {
      // iw_cm: a destroyed id gets no more events. Marked on the WQE itself, since the node
      // may already have ended and its cm_id been reused when the completion comes.
      if (f.dropped) break;
      deliver(f.channel, Event{RejectComplete{f.cm_id, ConnHandle{f.cm_id, f.gen}, f.context, c}});
      break;
    }
    case Kind::kInternal:
      break;
  }
}

std::optional<Cm::Inflight> Cm::live_entry(uint64_t ticket, uint32_t* key) const {
  for (const auto& [k, f] : live_) {
    if (f.ticket != ticket) continue;
    if (key != nullptr) *key = k;
    return f;
  }
  return std::nullopt;
}

// Gives up a kSync WQE: its completion, if it comes, frees its slot and settles its node
// through poll_abandoned() (pump()).
Result<Completion> Cm::abandon_sync(unsigned sq, uint64_t ticket, Error why) {
  uint32_t key = 0;
  if (auto f = live_entry(ticket, &key)) {
    live_.erase(key);
    if (dev_.abandon(sq, static_cast<uint16_t>(key & 0xFFFF))) {
      abandoned_[key].push_back(*f);
      why.message +=
          "; reject() gave the WQE up: its completion, if it comes, frees its slot and is "
          "consumed by the driver";
    }
  }
  return why;
}

Result<Completion> Cm::wait_sync(Lock& lk, unsigned sq, uint64_t ticket,
                                 std::chrono::nanoseconds timeout, Done& out) {
  HostDeadline dl(dev_, timeout);
  for (;;) {
    pump();  // any thread's pump claims this completion for us (done_)
    if (auto it = done_.find(ticket); it != done_.end()) {
      out = it->second;
      done_.erase(it);
      return out.c;
    }
    if (dl.passed()) {
      uint32_t key = 0;
      if (!live_entry(ticket, &key)) {
        return make_error(Errc::kState, "reject: the WQE's completion went to another caller");
      }
      return abandon_sync(
          sq, ticket, dev_.completion_timeout(sq, static_cast<uint16_t>(key & 0xFFFF), timeout));
    }
    lk.unlock();
    dl.pause();
    lk.lock();
  }
}

// Waits until an internal WQE (a cleanup) has completed; gives it up at the deadline.
bool Cm::wait_internal(Lock& lk, uint64_t ticket, std::chrono::nanoseconds timeout) {
  HostDeadline dl(dev_, timeout);
  for (;;) {
    pump();
    uint32_t key = 0;
    auto f = live_entry(ticket, &key);
    if (!f) return true;
    if (dl.passed()) {
      live_.erase(key);
      if (dev_.abandon(key >> 16, static_cast<uint16_t>(key & 0xFFFF))) {
        abandoned_[key].push_back(*f);
      }
      return false;
    }
    lk.unlock();
    dl.pause();
    lk.lock();
  }
}

Result<Completion> Cm::reject(ConnHandle h, std::span<const std::byte> pd, RejectOptions opts) {
  if (auto v = validate_reject(pd, opts); !v) return v.error();
  Lock lk(mu_);
  HostDeadline dl(dev_, opts.timeout);
  uint64_t ticket = 0;
  for (;;) {
    auto n = held(h, "reject");
    if (!n) return n.error();
    auto t = post_node_reject(h, **n, pd, opts, Kind::kSync);
    if (t) {
      ticket = *t;
      break;
    }
    // A full SQ (other threads' rejects): their completions free slots. Anything else is
    // refused with the connection still held.
    if (t.error().code != Errc::kRingFull || dl.passed()) return t.error();
    pump();
    lk.unlock();
    dl.pause();
    lk.lock();
  }
  Done d;
  auto c = wait_sync(lk, opts.sq, ticket, opts.timeout, d);
  if (!c) return c.error();
  // Synchronous caller: finish the cleanup too, so the connection is settled on return.
  if (d.cleanup != 0) (void)wait_internal(lk, d.cleanup, opts.timeout);
  if (!c->ok()) return completion_error(*c);
  return c;
}

Result<void> Cm::post_reject(ConnHandle h, std::span<const std::byte> pd,
                             const RejectOptions& opts) {
  if (auto v = validate_reject(pd, opts); !v) return v.error();
  Lock lk(mu_);
  auto n = held(h, "post_reject");
  if (!n) return n.error();
  auto t = post_node_reject(h, **n, pd, opts, Kind::kAsync);
  if (!t) return t.error();
  return {};
}

Result<size_t> Cm::post_rejects(std::span<const HeldReject> list) {
  Lock lk(mu_);
  std::vector<Node*> nodes;
  std::vector<RejectWqe> wqes;
  std::set<uint32_t> ids;
  nodes.reserve(list.size());
  wqes.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const HeldReject& r = list[i];
    auto fail = [&](const Error& e) {
      return make_error(e.code,
                        fmt::format("reject {} of the list: {} (nothing posted)", i, e.message));
    };
    if (auto v = validate_reject(r.pd, r.opts); !v) return fail(v.error());
    auto n = held(r.handle, "post_rejects");
    if (!n) return fail(n.error());
    if (auto v = check_node_reject(**n, r.pd, r.opts); !v) return fail(v.error());
    if (!ids.insert(r.handle.cm_id).second) {
      return fail(
          Error{Errc::kState, fmt::format("cm_id {} appears twice in the list", r.handle.cm_id)});
    }
    nodes.push_back(*n);
    RejectWqe w = reject_wqe(r.handle.cm_id, r.pd, r.opts);
    w.pd_area = true;
    wqes.push_back(w);
  }
  auto idx = dev_.post_rejects(wqes);
  if (!idx) return idx.error();  // nothing posted: every connection is still held
  for (size_t i = 0; i < idx->size(); ++i) {
    node_rejected(list[i].handle, *nodes[i], list[i].opts.sq, (*idx)[i], Kind::kAsync);
  }
  return idx->size();
}

Result<void> Cm::accept(ConnHandle h, std::span<const std::byte>) {
  Lock lk(mu_);
  auto n = held(h, "accept");
  if (!n) return n.error();
  return make_error(Errc::kNotSupported,
                    fmt::format("accept: Bouncer's passive CM only rejects; cm_id {} (generation "
                                "{}) is still held: reject or destroy it",
                                h.cm_id, h.gen));
}

Result<void> Cm::destroy(ConnHandle h) {
  Lock lk(mu_);
  Node* n = node(h.cm_id);
  if (h.gen == 0 || n == nullptr || n->gen != h.gen) {
    auto r = held(h, "destroy");  // the stale-handle message
    return r.error();
  }
  if (n->destroyed) return {};
  n->destroyed = true;
  for (auto& [key, f] : live_) {
    if (f.kind == Kind::kAsync && f.cm_id == h.cm_id && f.gen == h.gen) f.dropped = true;
  }
  purge(h);
  if (n->state == NodeState::kHeld || n->state == NodeState::kHeldReset) release(h.cm_id, *n);
  return {};
}

// ------------------------------------------------------------------------------- poller

Result<void> Cm::start_poller(const PollerOptions& opts) {
  if (opts.interval <= std::chrono::nanoseconds::zero()) {
    return make_error(Errc::kInvalidArgument, "poller interval must be positive");
  }
  std::lock_guard ctl(poller_ctl_mu_);
  if (poller_.joinable()) return make_error(Errc::kState, "the poller runs already");
  {
    std::lock_guard pl(poller_mu_);
    poller_stop_ = false;
  }
  poller_ = std::thread([this, opts] { poller_loop(opts); });
  return {};
}

void Cm::stop_poller() {
  std::lock_guard ctl(poller_ctl_mu_);  // held across the join: the thread never takes it
  {
    std::lock_guard pl(poller_mu_);
    poller_stop_ = true;
  }
  poller_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void Cm::poller_loop(PollerOptions o) {
  for (;;) {
    {
      Lock lk(mu_);
      pump();
    }
    if (o.wait == PollerOptions::Wait::kSleep) {
      std::unique_lock pl(poller_mu_);
      if (poller_cv_.wait_for(pl, o.interval, [this] { return poller_stop_; })) return;
    } else {
      {
        std::lock_guard pl(poller_mu_);
        if (poller_stop_) return;
      }
      dev_.pause(o.interval);
    }
  }
}

}  // namespace bouncer
