// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cm_diag.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace bouncer {

ContextDiag::ContextDiag(Device& dev) : dev_(dev) {}

ContextDiag::~ContextDiag() {
  std::lock_guard lk(mu_);
  for (uint32_t key : mine_) (void)dev_.abandon(key >> 16, static_cast<uint16_t>(key & 0xFFFF));
}

Result<void> ContextDiag::check_idle() {
  std::lock_guard lk(mu_);
  return check_idle_locked();
}

Result<void> ContextDiag::check_idle_locked() {
  if (const unsigned l = dev_.listeners_installed(); l != 0) {
    return make_error(Errc::kState,
                      fmt::format("host-written contexts are a diagnostic path: {} listener(s) "
                                  "installed, whose connections share the connection table "
                                  "(destroy them first)",
                                  l));
  }
  if (const uint32_t conns = dev_.cm_conns(); conns != 0) {
    return make_error(
        Errc::kState,
        conns == 0xFFFF'FFFFu
            ? std::string("host-written contexts: CM_CONNS reads 0xFFFFFFFF (no device answering)")
            : fmt::format("host-written contexts are a diagnostic path: CM_CONNS is {}, live "
                          "connections of the passive CM own cm_ids of the table",
                          conns));
  }
  return {};
}

Result<void> ContextDiag::write_context(uint32_t cm_id, const CmContext& ctx) {
  std::lock_guard lk(mu_);
  if (cm_id >= dev_.caps().ctx_depth) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("cm_id {} is not below the connection-table depth {}", cm_id,
                                  dev_.caps().ctx_depth));
  }
  if (auto idle = check_idle_locked(); !idle) return idle;
  shadow_.erase(cm_id);
  auto r = dev_.cqp_write_context(cm_id, ctx);
  if (!r) return r;
  shadow_[cm_id] = ctx;
  return {};
}

Result<CmContext> ContextDiag::read_context(uint32_t cm_id) {
  std::lock_guard lk(mu_);
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

Result<CmContext*> ContextDiag::context_for(uint32_t cm_id) {
  auto it = shadow_.find(cm_id);
  if (it == shadow_.end()) {
    // Someone else wrote it: ask the hardware once. A node of the passive CM is not a
    // host-written context.
    auto r = dev_.cqp_read_node(cm_id);
    if (!r) return r.error();
    if (r->ctx.valid && (r->hosted || r->auto_rej)) {
      return make_error(Errc::kState, fmt::format("cm_id {} is a passive-CM connection (state {})",
                                                  cm_id, regs::name(r->state)));
    }
    it = shadow_.emplace(cm_id, r->ctx).first;
  }
  return &it->second;
}

Result<uint16_t> ContextDiag::post_locked(uint32_t cm_id, std::span<const std::byte> pd,
                                          const RejectOptions& opts) {
  auto ctx = check_locked(cm_id, pd, opts);
  if (!ctx) return ctx.error();
  const RejectWqe w = reject_wqe(cm_id, pd, opts);
  auto idx = dev_.post_reject(w);
  if (!idx) return idx;
  // iw_cm_reject moves the cm_id to IDLE before calling the provider and leaves it there
  // even when the provider fails: one reject per connection.
  (*ctx)->rejected = true;
  mine_.insert(wqe_key(opts.sq, *idx));
  return idx;
}

Result<std::vector<uint16_t>> ContextDiag::post_rejects(std::span<const RejectRequest> reqs) {
  std::lock_guard lk(mu_);
  std::vector<CmContext*> ctx;
  std::vector<RejectWqe> wqes;
  std::set<uint32_t> ids;
  ctx.reserve(reqs.size());
  wqes.reserve(reqs.size());
  for (size_t i = 0; i < reqs.size(); ++i) {
    const RejectRequest& q = reqs[i];
    auto c = check_locked(q.cm_id, q.pd, q.opts);
    if (c && !ids.insert(q.cm_id).second) {
      c = make_error(Errc::kState, fmt::format("cm_id {} was already rejected", q.cm_id));
    }
    if (!c) {
      return make_error(c.error().code, fmt::format("reject {} of the list: {} (nothing posted)", i,
                                                    c.error().message));
    }
    ctx.push_back(*c);
    wqes.push_back(reject_wqe(q.cm_id, q.pd, q.opts));
  }
  auto idx = dev_.post_rejects(wqes);
  if (!idx) return idx;
  for (size_t i = 0; i < idx->size(); ++i) {
    ctx[i]->rejected = true;
    mine_.insert(wqe_key(reqs[i].opts.sq, (*idx)[i]));
  }
  return idx;
}

Result<CmContext*> ContextDiag::check_locked(uint32_t cm_id, std::span<const std::byte> pd,
                                             const RejectOptions& opts) {
  const Caps& caps = dev_.caps();
  if (cm_id >= caps.ctx_depth) {
    return make_error(
        Errc::kInvalidArgument,
        fmt::format("cm_id {} is not below the connection-table depth {}", cm_id, caps.ctx_depth));
  }
  if (auto v = check_reject_options(dev_, pd, opts); !v) return v.error();
  if (auto idle = check_idle_locked(); !idle) return idle.error();
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
  return &c;
}

Result<uint16_t> ContextDiag::post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                          const RejectOptions& opts) {
  std::lock_guard lk(mu_);
  return post_locked(cm_id, pd, opts);
}

std::optional<Completion> ContextDiag::claim(std::optional<uint32_t> key) {
  auto c = dev_.poll_cq_if([&](const Completion& x) {
    if (x.unexpected) return false;
    const uint32_t k = wqe_key(x.sq, x.wqe_idx);
    return key ? k == *key : mine_.contains(k) && !sync_.contains(k);
  });
  if (c) {
    // Both marks go in the same critical section as the claim: the slot may be posted again
    // as soon as the lock is released.
    mine_.erase(wqe_key(c->sq, c->wqe_idx));
    sync_.erase(wqe_key(c->sq, c->wqe_idx));
  }
  return c;
}

std::optional<Completion> ContextDiag::poll() {
  std::lock_guard lk(mu_);
  return claim(std::nullopt);
}

Result<Completion> ContextDiag::wait(unsigned sq, uint16_t wqe_idx,
                                     std::chrono::nanoseconds timeout) {
  auto c = wait_for(sq, wqe_idx, timeout);
  if (!c && c.error().code == Errc::kTimeout) {
    return make_error(Errc::kTimeout,
                      c.error().message + "; the reject stays posted: wait again or poll()");
  }
  return c;
}

Result<Completion> ContextDiag::wait_for(unsigned sq, uint16_t wqe_idx,
                                         std::chrono::nanoseconds timeout) {
  const uint32_t key = wqe_key(sq, wqe_idx);
  {
    std::lock_guard lk(mu_);
    if (!mine_.contains(key)) {
      return make_error(
          Errc::kInvalidArgument,
          fmt::format("SQ {} wqe_idx {} is no reject of this ContextDiag", sq, wqe_idx));
    }
  }
  const auto start = dev_.host_now();
  for (;;) {
    {
      std::lock_guard lk(mu_);
      if (auto c = claim(key)) return *c;
    }
    const auto waited = dev_.host_now() - start;
    if (waited >= timeout) return dev_.completion_timeout(sq, wqe_idx, timeout);
    dev_.pause(std::min(dev_.config().poll_interval, timeout - waited));
  }
}

Result<Completion> ContextDiag::reject(uint32_t cm_id, std::span<const std::byte> pd,
                                       RejectOptions opts) {
  uint16_t idx = 0;
  {
    std::lock_guard lk(mu_);
    auto p = post_locked(cm_id, pd, opts);
    if (!p) return p.error();
    idx = *p;
    sync_.insert(wqe_key(opts.sq, idx));
  }
  auto c = wait_for(opts.sq, idx, opts.timeout);
  if (!c) {
    std::lock_guard lk(mu_);
    // Nobody waits for it any more (poll() may not take it either): its completion frees the
    // slot when it comes.
    sync_.erase(wqe_key(opts.sq, idx));
    if (mine_.erase(wqe_key(opts.sq, idx)) != 0 && dev_.abandon(opts.sq, idx)) {
      return make_error(c.error().code,
                        c.error().message +
                            "; reject() gave the WQE up: its completion, if it comes, frees its "
                            "slot (Device::poll_abandoned)");
    }
    return c;
  }
  if (!c->ok()) return completion_error(*c);
  return c;
}

}  // namespace bouncer
