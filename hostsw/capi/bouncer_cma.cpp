// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The C API (bouncer/bouncer_cma.h) over one bouncer::Cm: a thin layer that keeps
// librdmacm's shapes (channels, ids, events to acknowledge) and turns Errc into errno.
#include "bouncer/bouncer_cma.h"

#include <fcntl.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "bouncer/capi.hpp"
#include "bouncer/cm.hpp"

namespace {

using namespace bouncer;

struct Channel : bouncer_event_channel {
  ChannelId ch;
  std::atomic<unsigned> ids{0};  // the event thread creates ids, any thread destroys them
};

struct Id : bouncer_cm_id {
  bool bound = false;
  uint32_t ip = 0;  // host order
  uint16_t port = 0;
  std::optional<ListenerId> listener;
  std::optional<ConnHandle> conn;  // a connection's id
};

struct Ev : bouncer_cm_event {
  std::vector<std::byte> pd;
};

struct State {
  State(Device& d, const ListenOptions& l) : cm(d), listen(l) {}
  Cm cm;
  ListenOptions listen;
  std::mutex mu;                                       // guards conns
  std::map<std::pair<uint32_t, uint32_t>, Id*> conns;  // (cm_id, gen) -> connection id
};

std::mutex g_mu;
std::shared_ptr<State> g_state;

std::shared_ptr<State> state() {
  std::lock_guard lk(g_mu);
  return g_state;
}

int fail(int err) {
  errno = err;
  return -1;
}

int errno_of(const Error& e) {
  switch (e.code) {
    case Errc::kInvalidArgument:
    case Errc::kState:
      return EINVAL;
    case Errc::kRingFull:
      return EAGAIN;
    case Errc::kTimeout:
      return ETIMEDOUT;
    case Errc::kHardware:
    case Errc::kQueueError:
      return EIO;
    case Errc::kNoDevice:
      return ENODEV;
    case Errc::kNoMemory:
      return ENOMEM;
    case Errc::kNotSupported:
      return EOPNOTSUPP;
  }
  return EIO;
}

uint8_t cap8(uint32_t v) { return static_cast<uint8_t>(std::min<uint32_t>(v, 255)); }

// The event for `e`, or nullptr for one the C API does not report.
std::unique_ptr<Ev> translate(State& s, const Event& e) {
  auto ev = std::make_unique<Ev>();
  ev->id = nullptr;
  ev->listen_id = nullptr;
  ev->status = 0;
  ev->param.conn = {};
  if (const auto* cr = std::get_if<ConnectRequest>(&e)) {
    auto* listen = static_cast<Id*>(cr->context);
    if (listen == nullptr) return nullptr;
    auto* id = new (std::nothrow) Id();
    if (id == nullptr) return nullptr;
    id->channel = listen->channel;
    id->context = listen->context;
    id->ps = listen->ps;
    id->conn = cr->handle;
    static_cast<Channel*>(listen->channel)->ids++;
    {
      std::lock_guard lk(s.mu);
      s.conns[{cr->handle.cm_id, cr->handle.gen}] = id;
    }
    ev->id = id;
    ev->listen_id = listen;
    ev->event = BOUNCER_CM_EVENT_CONNECT_REQUEST;
    ev->pd = cr->private_data;
    ev->param.conn.private_data = ev->pd.empty() ? nullptr : ev->pd.data();
    ev->param.conn.private_data_len = cap8(static_cast<uint32_t>(ev->pd.size()));
    // iw_cm reports the request's IRD as initiator_depth and its ORD as
    // responder_resources (the MPA v2 IRD/ORD word; 0 without one).
    const uint32_t w = cr->ird_ord.value_or(0);
    ev->param.conn.initiator_depth = cap8((w >> 16) & 0x3FFF);
    ev->param.conn.responder_resources = cap8(w & 0x3FFF);
    return ev;
  }
  if (const auto* pr = std::get_if<PeerReset>(&e)) {
    std::lock_guard lk(s.mu);
    auto it = s.conns.find({pr->handle.cm_id, pr->handle.gen});
    if (it == s.conns.end()) return nullptr;
    ev->id = it->second;
    ev->event = BOUNCER_CM_EVENT_DISCONNECTED;
    ev->status = -ECONNRESET;
    return ev;
  }
  if (const auto* me = std::get_if<MpaError>(&e)) {
    auto* listen = static_cast<Id*>(me->context);
    if (listen == nullptr) return nullptr;
    ev->id = listen;
    ev->listen_id = listen;
    ev->event = BOUNCER_CM_EVENT_CONNECT_ERROR;
    ev->status = -EPROTO;
    return ev;
  }
  return nullptr;  // RejectComplete: the C API's rejects are synchronous
}

}  // namespace

namespace bouncer {

void bouncer_capi_attach(Device& dev, const ListenOptions& listen) {
  auto s = std::make_shared<State>(dev, listen);
  std::lock_guard lk(g_mu);
  g_state = std::move(s);
}

void bouncer_capi_detach() {
  std::shared_ptr<State> old;
  {
    std::lock_guard lk(g_mu);
    old.swap(g_state);
  }
}

}  // namespace bouncer

extern "C" {

bouncer_event_channel* bouncer_create_event_channel(void) {
  auto s = state();
  if (!s) {
    errno = ENODEV;
    return nullptr;
  }
  auto ch = s->cm.create_channel();
  if (!ch) {
    errno = errno_of(ch.error());
    return nullptr;
  }
  auto fd = s->cm.event_fd(*ch);
  if (!fd) {
    (void)s->cm.destroy_channel(*ch);
    errno = errno_of(fd.error());
    return nullptr;
  }
  auto* c = new (std::nothrow) Channel();
  if (c == nullptr) {
    (void)s->cm.destroy_channel(*ch);
    errno = ENOMEM;
    return nullptr;
  }
  // librdmacm's channel fd blocks until the application sets O_NONBLOCK; so does this one
  // (the Cm reads the eventfd only while it holds a count, so its reads never block).
  if (const int fl = ::fcntl(*fd, F_GETFL); fl >= 0) (void)::fcntl(*fd, F_SETFL, fl & ~O_NONBLOCK);
  c->fd = *fd;
  c->ch = *ch;
  return c;
}

void bouncer_destroy_event_channel(bouncer_event_channel* channel) {
  auto* c = static_cast<Channel*>(channel);
  if (c == nullptr || c->ids != 0) return;  // librdmacm: the ids must be destroyed first
  if (auto s = state()) (void)s->cm.destroy_channel(c->ch);
  delete c;
}

int bouncer_create_id(bouncer_event_channel* channel, bouncer_cm_id** id, void* context,
                      bouncer_port_space ps) {
  if (!state()) return fail(ENODEV);
  if (channel == nullptr || id == nullptr || ps != BOUNCER_PS_TCP) return fail(EINVAL);
  auto* i = new (std::nothrow) Id();
  if (i == nullptr) return fail(ENOMEM);
  i->channel = channel;
  i->context = context;
  i->ps = ps;
  static_cast<Channel*>(channel)->ids++;
  *id = i;
  return 0;
}

int bouncer_destroy_id(bouncer_cm_id* id) {
  auto* i = static_cast<Id*>(id);
  if (i == nullptr) return fail(EINVAL);
  if (auto s = state()) {
    if (i->listener) {
      // The id stays (and keeps listening) when the hardware listener could not be removed:
      // the listener's events still name it.
      if (auto r = s->cm.destroy_listener(*i->listener); !r) return fail(errno_of(r.error()));
    }
    if (i->conn) {
      (void)s->cm.destroy(*i->conn);  // a request still held is rejected
      std::lock_guard lk(s->mu);
      s->conns.erase({i->conn->cm_id, i->conn->gen});
    }
  }
  static_cast<Channel*>(i->channel)->ids--;
  delete i;
  return 0;
}

int bouncer_bind_addr(bouncer_cm_id* id, const sockaddr* addr) {
  auto* i = static_cast<Id*>(id);
  if (i == nullptr || addr == nullptr || i->conn || i->listener) return fail(EINVAL);
  if (addr->sa_family != AF_INET) return fail(EAFNOSUPPORT);
  const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
  i->ip = ntohl(in->sin_addr.s_addr);
  i->port = ntohs(in->sin_port);
  if (i->port == 0) return fail(EINVAL);  // no ephemeral ports on a listener-only device
  i->bound = true;
  return 0;
}

int bouncer_listen(bouncer_cm_id* id, int backlog) {
  auto s = state();
  if (!s) return fail(ENODEV);
  auto* i = static_cast<Id*>(id);
  if (i == nullptr || !i->bound || i->listener || backlog < 0) return fail(EINVAL);
  ListenOptions o = s->listen;
  o.backlog = static_cast<uint16_t>(std::min(backlog, 0xFFFF));
  o.context = i;  // events carry the listening id
  o.channel = static_cast<Channel*>(i->channel)->ch;
  auto l = s->cm.listen(i->ip, i->port, o);
  if (!l) return fail(l.error().code == Errc::kState ? EADDRINUSE : errno_of(l.error()));
  i->listener = *l;
  return 0;
}

int bouncer_get_cm_event(bouncer_event_channel* channel, bouncer_cm_event** event) {
  auto s = state();
  if (!s) return fail(ENODEV);
  auto* c = static_cast<Channel*>(channel);
  if (c == nullptr || event == nullptr) return fail(EINVAL);
  const int flags = ::fcntl(c->fd, F_GETFL);
  const bool nonblocking = flags >= 0 && (flags & O_NONBLOCK) != 0;
  for (;;) {
    std::optional<Event> e;
    if (nonblocking) {
      auto p = s->cm.poll_event(c->ch);
      if (!p) return fail(errno_of(p.error()));
      if (!*p) return fail(EAGAIN);
      e = std::move(**p);
    } else {
      auto w = s->cm.wait_event(c->ch, std::chrono::milliseconds(100));
      if (!w) {
        if (w.error().code == Errc::kTimeout) continue;  // blocking: wait on
        return fail(errno_of(w.error()));
      }
      e = std::move(*w);
    }
    auto ev = translate(*s, *e);
    if (ev) {
      *event = ev.release();
      return 0;
    }
  }
}

int bouncer_ack_cm_event(bouncer_cm_event* event) {
  if (event == nullptr) return fail(EINVAL);
  delete static_cast<Ev*>(event);
  return 0;
}

int bouncer_reject(bouncer_cm_id* id, const void* private_data, uint8_t private_data_len) {
  auto s = state();
  if (!s) return fail(ENODEV);
  auto* i = static_cast<Id*>(id);
  if (i == nullptr || !i->conn) return fail(EINVAL);
  if (private_data == nullptr && private_data_len != 0) return fail(EINVAL);
  std::span<const std::byte> pd(static_cast<const std::byte*>(private_data), private_data_len);
  auto r = s->cm.reject(*i->conn, pd);
  if (!r) return fail(errno_of(r.error()));
  return 0;
}

}  // extern "C"
