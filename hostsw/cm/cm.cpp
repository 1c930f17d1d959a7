// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

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
                               [](const MpaError&) { return "MPA_ERROR"; }},
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

Cm::Cm(Device& dev) : dev_(dev) {}

Cm::~Cm() {
  for (unsigned i = 0; i < listeners_.size(); ++i) {
    if (listeners_[i]) (void)dev_.cqp_destroy_listener(i);
  }
  // A request the application never answered would hold its cm_id (a node waiting for the
  // host has no timer) until the core is reset. iw_cm rejects it when the listener goes away
  // or the id is destroyed; so does this: no PD, the listener's FIN policy. Requests read off
  // the AEQ meanwhile are held too, hence the passes (bounded: no listener takes new ones).
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<uint32_t> held;
    for (const auto& [id, n] : nodes_) {
      if (n.state == NodeState::kHeld || n.state == NodeState::kHeldReset) held.push_back(id);
    }
    if (held.empty()) break;
    for (uint32_t id : held) (void)reject(id, {});
  }
}

// ------------------------------------------------------------------------------- listeners

Result<ListenerId> Cm::listen(uint32_t local_ip, uint16_t port, const ListenOptions& o) {
  const unsigned n = std::min<unsigned>(dev_.caps().num_listeners, regs::kNumListeners);
  if (port == 0) return make_error(Errc::kInvalidArgument, "cannot listen on port 0");
  if (o.index && *o.index >= n) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("listener index {} is not below {}", *o.index, n));
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
    while (index < n && listeners_[index]) ++index;
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
  if (auto r = dev_.cqp_create_listener(c, o.template_pd); !r) return r.error();
  listeners_[index] = Listener{local_ip, port};
  return ListenerId{static_cast<uint8_t>(index)};
}

Result<void> Cm::destroy_listener(ListenerId id) {
  if (id.index >= listeners_.size() || !listeners_[id.index]) {
    return make_error(Errc::kState,
                      fmt::format("listener {} is not a listener of this Cm", id.index));
  }
  auto r = dev_.cqp_destroy_listener(id.index);
  if (r || (r.error().code == Errc::kHardware &&
            r.error().hw_minor == static_cast<uint16_t>(regs::CqMinor::BAD_LISTENER))) {
    listeners_[id.index].reset();
  }
  return r;
}

// ------------------------------------------------------------------------------- events

Cm::Node* Cm::node(uint32_t cm_id) {
  auto it = nodes_.find(cm_id);
  return it == nodes_.end() ? nullptr : &it->second;
}

NodeState Cm::node_state(uint32_t cm_id) const {
  auto it = nodes_.find(cm_id);
  return it == nodes_.end() ? NodeState::kFree : it->second.state;
}

CmStats Cm::stats() const {
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
      fresh.gen = n.gen + 1;
      n = fresh;
      shadow_.erase(e.cm_id);  // any host-written context of this cm_id is gone
      ConnectRequest cr;
      cr.cm_id = e.cm_id;
      cr.listener = ListenerId{e.listener};
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
      return Event{
          MpaError{e.cm_id, ListenerId{e.listener}, tuple, static_cast<regs::MpaError>(e.reason)}};
    }
    case regs::AeqEvent::RESET: {
      Node* n = node(e.cm_id);
      if (n != nullptr && n->state == NodeState::kHeld) {
        // Not terminal: the node stays until the application rejects it.
        n->state = NodeState::kHeldReset;
        n->reset_seen = true;
        ++stats_.peer_resets;
        return Event{PeerReset{e.cm_id}};
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

Result<std::optional<Event>> Cm::poll_event() {
  if (!ready_.empty()) {  // read off the AEQ while a reject waited for its completion
    Result<std::optional<Event>> out{std::move(ready_.front())};
    ready_.pop_front();
    return out;
  }
  for (;;) {
    auto e = dev_.poll_aeq();
    if (!e) {
      dev_.flush_aeq_head();  // the caller is about to wait: give the hardware all the room
      return std::optional<Event>{};
    }
    if (auto ev = on_aeqe(*e)) return std::optional<Event>{std::move(*ev)};
  }
}

Result<Event> Cm::wait_event(std::chrono::nanoseconds timeout) {
  hal::Device& hal = dev_.hal();
  hal::Deadline dl(hal, timeout);
  for (;;) {
    auto e = poll_event();
    if (!e) return e.error();
    if (*e) return std::move(**e);
    if (dl.passed()) {
      return make_error(
          Errc::kTimeout,
          fmt::format("no event after {} (AEQ head {}, AEQ_TAIL {}); {}", format_duration(timeout),
                      dev_.aeq().head(), hal.read32(regs::reg::AEQ_TAIL), dev_.state_text()));
    }
    dl.pause(dev_.config().poll_interval);
  }
}

// ------------------------------------------------------------------------------- contexts

Result<void> Cm::write_context(uint32_t cm_id, const CmContext& ctx) {
  if (cm_id >= dev_.caps().ctx_depth) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("cm_id {} is not below the connection-table depth {}", cm_id,
                                  dev_.caps().ctx_depth));
  }
  if (NodeState s = node_state(cm_id); s != NodeState::kFree) {
    return make_error(Errc::kState, fmt::format("cm_id {} is a passive-CM connection ({})", cm_id,
                                                node_state_name(s)));
  }
  shadow_.erase(cm_id);
  auto r = dev_.cqp_write_context(cm_id, ctx);
  if (!r) return r;
  shadow_[cm_id] = ctx;
  return {};
}

Result<CmContext> Cm::read_context(uint32_t cm_id) {
  if (cm_id >= dev_.caps().ctx_depth) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("cm_id {} is not below the connection-table depth {}", cm_id,
                                  dev_.caps().ctx_depth));
  }
  auto r = dev_.cqp_read_context(cm_id);
  if (!r) return r;
  shadow_[cm_id] = *r;
  return r;
}

Result<CmContext*> Cm::context_for(uint32_t cm_id) {
  auto it = shadow_.find(cm_id);
  if (it == shadow_.end()) {
    // Someone else wrote it: ask the hardware once. A node of the passive CM is not a
    // host-written context, and this Cm did not indicate it: not ours to reject.
    auto r = dev_.cqp_read_node(cm_id);
    if (!r) return r.error();
    if (r->ctx.valid && (r->hosted || r->auto_rej)) {
      return make_error(Errc::kState,
                        fmt::format("cm_id {} is a passive-CM connection this Cm did not "
                                    "indicate (state {})",
                                    cm_id, regs::name(r->state)));
    }
    it = shadow_.emplace(cm_id, r->ctx).first;
  }
  return &it->second;
}

// ------------------------------------------------------------------------------- reject

Result<void> Cm::validate_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                 const RejectOptions& opts) const {
  const Caps& caps = dev_.caps();
  if (cm_id >= caps.ctx_depth) {
    return make_error(
        Errc::kInvalidArgument,
        fmt::format("cm_id {} is not below the connection-table depth {}", cm_id, caps.ctx_depth));
  }
  // the connection's revision decides the IRD/ORD word; the smaller limit holds for both
  if (auto v = check_reject_pd(pd.size(), false, opts.unsafe_wire_pd); !v) return v.error();
  if (opts.push && !caps.push) {
    return make_error(Errc::kInvalidArgument,
                      "push mode requested but the device has no push page");
  }
  if (opts.sq >= dev_.num_sq()) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("SQ {} is not in use (num_sq {})", opts.sq, dev_.num_sq()));
  }
  if (opts.fin && opts.fin_policy != regs::FinPolicy::DEFAULT &&
      opts.fin_policy != regs::FinPolicy::IRDMA) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("fin (= fin_policy IRDMA) contradicts fin_policy {}",
                                  regs::name(opts.fin_policy)));
  }
  return {};
}

Result<uint16_t> Cm::post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                 const RejectOptions& opts) {
  if (auto v = validate_reject(cm_id, pd, opts); !v) return v.error();
  if (Node* n = node(cm_id); n != nullptr && n->state != NodeState::kFree) {
    if (n->state == NodeState::kHeld || n->state == NodeState::kHeldReset) {
      return post_node_reject(cm_id, *n, pd, opts);
    }
    // iw_cm_reject: state != CONN_RECV -> -EINVAL, nothing reaches the provider.
    return make_error(Errc::kState, fmt::format("cm_id {} was already rejected ({})", cm_id,
                                                node_state_name(n->state)));
  }
  return post_context_reject(cm_id, pd, opts);
}

Result<uint16_t> Cm::post_node_reject(uint32_t cm_id, Node& n, std::span<const std::byte> pd,
                                      const RejectOptions& opts) {
  if (auto v = check_reject_pd(pd.size(), n.enhanced(), opts.unsafe_wire_pd); !v) {
    return v.error();
  }
  if (opts.ird_ord && n.enhanced()) {
    if (auto v = check_reply_ird_ord(*opts.ird_ord, n.ird_ord); !v) return v.error();
  }
  RejectWqe w;
  w.cm_id = cm_id;
  w.sq = opts.sq;
  w.pd = pd;
  w.pd_area = true;
  w.push = opts.push;
  w.allow_inline = opts.allow_inline;
  w.fin_policy = opts.fin_policy;
  w.fin = opts.fin;
  w.ird_ord = opts.ird_ord;
  w.wr_id = opts.wr_id;
  auto idx = dev_.post_reject(w);
  if (!idx) return idx;  // nothing posted: the application still holds the request
  n.state = NodeState::kRejecting;
  n.terminal_seen = false;
  n.cleanup_done = false;
  inflight_[wqe_key(opts.sq, *idx)].push_back(Inflight{cm_id, n.gen, false});
  // iw_cm: no events for this cm_id once reject returns, not even one already queued here.
  std::erase_if(ready_, [&](const Event& e) {
    return std::holds_alternative<PeerReset>(e) && event_cm_id(e) == cm_id;
  });
  ++stats_.rejects;
  return idx;
}

Result<uint16_t> Cm::post_context_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                         const RejectOptions& opts) {
  auto ctx = context_for(cm_id);
  if (!ctx) return ctx.error();
  CmContext& c = **ctx;
  if (!c.valid) {
    return make_error(Errc::kState, fmt::format("cm_id {} has no valid context", cm_id));
  }
  if (c.rejected) {
    return make_error(Errc::kState, fmt::format("cm_id {} was already rejected", cm_id));
  }
  if (auto v = check_reject_pd(pd.size(), c.enhanced(), opts.unsafe_wire_pd); !v) {
    return v.error();
  }
  if (opts.ird_ord && c.enhanced()) {
    if (auto v = check_reply_ird_ord(*opts.ird_ord, c.req_ird_ord); !v) return v.error();
  }
  RejectWqe w;
  w.cm_id = cm_id;
  w.sq = opts.sq;
  w.pd = pd;
  w.push = opts.push;
  w.allow_inline = opts.allow_inline;
  w.fin_policy = opts.fin_policy;
  w.fin = opts.fin;
  w.ird_ord = opts.ird_ord;
  w.wr_id = opts.wr_id;
  auto idx = dev_.post_reject(w);
  if (!idx) return idx;
  // iw_cm_reject moves the cm_id to IDLE before calling the provider and leaves it there
  // even when the provider fails: one reject per connection.
  c.rejected = true;
  return idx;
}

// The driver's cleanup after the hardware refused a reject WQE: the node still waits for a
// reject, and the application may not be asked again (iw_cm's contract). Reject it once more
// with no PD and ABORT (reject + RST; irdma sends a RST when its reject fails).
void Cm::cleanup(uint32_t cm_id, Node& n, unsigned sq) {
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
    return;
  }
  ++stats_.cleanup_rejects;
  inflight_[wqe_key(sq, *idx)].push_back(Inflight{cm_id, n.gen, true});
  pending_cleanup_ = std::pair<unsigned, uint16_t>{sq, *idx};
}

bool Cm::on_completion(const Completion& c) {
  if (c.unexpected) return false;
  auto it = inflight_.find(wqe_key(c.sq, c.wqe_idx));
  if (it == inflight_.end()) return false;  // a host-written-context reject, or a NOP
  const Inflight f = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) inflight_.erase(it);
  Node* n = node(f.cm_id);
  if (n == nullptr || n->gen != f.gen || n->state != NodeState::kRejecting) return f.internal;
  auto settle = [&] { n->state = n->terminal_seen ? NodeState::kFree : NodeState::kAwaitTerminal; };
  if (c.ok()) {
    settle();
  } else if (is_hw(c, regs::CqMajor::CTX, regs::CqMinor::PEER_RESET)) {
    // The peer's RST came first: nothing was sent, the reject freed the node. Its RESET
    // event is in the AEQ unless it was already consumed.
    ++stats_.late_resets;
    n->state = n->reset_seen ? NodeState::kFree : NodeState::kAwaitTerminal;
  } else if (is_hw(c, regs::CqMajor::CTX, regs::CqMinor::NO_CONTEXT) ||
             is_hw(c, regs::CqMajor::CTX, regs::CqMinor::CM_ID_RANGE)) {
    n->state = NodeState::kFree;  // no such node in the hardware
  } else if (c.major == static_cast<uint16_t>(regs::CqMajor::CTX)) {
    settle();  // BAD_STATE and the like: the hardware's node is past MPAREQ_RCVD
  } else if (!n->cleanup_done) {
    cleanup(f.cm_id, *n, c.sq);  // WQE/*, DMA/*: the node still waits for a reject
  } else {
    ++stats_.cleanup_failed;
    settle();
  }
  return f.internal;
}

void Cm::collect_abandoned() {
  while (auto c = dev_.poll_abandoned()) (void)on_completion(*c);
}

std::optional<Completion> Cm::poll() {
  collect_abandoned();
  for (;;) {
    auto c = dev_.poll_cq();
    if (!c) return std::nullopt;
    if (!on_completion(*c)) return c;
  }
}

// Waits for the completion of wqe_idx while keeping the AEQ drained: the hardware hands a
// reject to its CM engine, which waits while the AEQ is full, so a host that only watched the
// CQ could wait for a completion that waits for it.
Result<Completion> Cm::wait_draining(unsigned sq, uint16_t wqe_idx,
                                     std::chrono::nanoseconds timeout) {
  hal::Deadline dl(dev_.hal(), timeout);
  for (;;) {
    auto c = dev_.poll_completion_for(sq, wqe_idx);
    if (!c) return c.error();
    if (*c) return **c;
    collect_abandoned();
    drain_aeq();
    if (dl.passed()) return dev_.completion_timeout(sq, wqe_idx, timeout);
    dl.pause(dev_.config().poll_interval);
  }
}

void Cm::drain_aeq() {
  while (auto e = dev_.poll_aeq()) {
    if (auto ev = on_aeqe(*e)) ready_.push_back(std::move(*ev));
  }
  dev_.flush_aeq_head();
}

Result<Completion> Cm::wait(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
  auto c = wait_draining(sq, wqe_idx, timeout);
  if (c) {
    (void)on_completion(*c);
  } else if (c.error().code == Errc::kTimeout) {
    return make_error(Errc::kTimeout,
                      c.error().message + "; the reject stays posted: wait again or poll()");
  }
  return c;
}

Result<Completion> Cm::reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions opts) {
  auto idx = post_reject(cm_id, pd, opts);
  if (!idx) return idx.error();
  pending_cleanup_.reset();
  auto c = wait_draining(opts.sq, *idx, opts.timeout);
  if (!c) {
    // Nobody waits for it any more: its completion frees the slot when it comes and settles
    // the node through collect_abandoned().
    if (dev_.abandon(opts.sq, *idx)) {
      return make_error(c.error().code,
                        c.error().message +
                            "; reject() gave the WQE up: its completion, if it comes, frees its "
                            "slot and is consumed by the driver");
    }
    return c;
  }
  (void)on_completion(*c);
  if (pending_cleanup_) {
    // Synchronous caller: finish the cleanup too, so the cm_id is settled on return.
    const auto [csq, cidx] = *pending_cleanup_;
    pending_cleanup_.reset();
    if (auto cc = wait_draining(csq, cidx, opts.timeout)) {
      (void)on_completion(*cc);
    } else {
      (void)dev_.abandon(csq, cidx);
    }
  }
  if (!c->ok()) return completion_error(*c);
  return c;
}

}  // namespace bouncer
