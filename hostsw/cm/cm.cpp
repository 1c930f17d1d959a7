// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/cm.hpp"

#include <fmt/format.h>

namespace bouncer {

Error completion_error(const Completion& c) {
  Error e{Errc::kHardware,
          fmt::format("reject cm_id {} (wqe_idx {}): {}", c.cm_id, c.wqe_idx, c.status())};
  e.hw_major = c.major;
  e.hw_minor = c.minor;
  return e;
}

Result<void> Cm::write_context(uint32_t cm_id, const CmContext& ctx) {
  if (cm_id >= dev_.caps().ctx_depth) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("cm_id {} is not below the connection-table depth {}", cm_id,
                                  dev_.caps().ctx_depth));
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
    auto r = read_context(cm_id);  // someone else wrote it: ask the hardware once
    if (!r) return r.error();
    it = shadow_.find(cm_id);
  }
  return &it->second;
}

Result<uint16_t> Cm::post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                                 const RejectOptions& opts) {
  const Caps& caps = dev_.caps();
  if (cm_id >= caps.ctx_depth) {
    return make_error(
        Errc::kInvalidArgument,
        fmt::format("cm_id {} is not below the connection-table depth {}", cm_id, caps.ctx_depth));
  }
  if (pd.size() > regs::kApiPdSoftMax && !opts.allow_long_pd) {
    return make_error(Errc::kInvalidArgument,
                      fmt::format("{} bytes of private data: rdma_reject()'s private_data_len is "
                                  "a u8 (at most {}); set allow_long_pd for up to {} on the wire",
                                  pd.size(), regs::kApiPdSoftMax, regs::kMpaPdMax));
  }
  if (opts.push && !caps.push) {
    return make_error(Errc::kInvalidArgument,
                      "push mode requested but the device has no push page");
  }
  auto ctx = context_for(cm_id);
  if (!ctx) return ctx.error();
  CmContext& c = **ctx;
  if (!c.valid) {
    return make_error(Errc::kState, fmt::format("cm_id {} has no valid context", cm_id));
  }
  if (c.rejected) {
    return make_error(Errc::kState, fmt::format("cm_id {} was already rejected", cm_id));
  }
  const uint32_t wire = c.wire_pd_len(pd.size());
  if (wire > regs::kMpaPdMax) {
    return make_error(
        Errc::kInvalidArgument,
        fmt::format("PD_Length on the wire would be {} ({} bytes{}), above the MPA "
                    "limit {}",
                    wire, pd.size(), c.enhanced() ? " + 4 IRD/ORD" : "", regs::kMpaPdMax));
  }
  RejectWqe w;
  w.cm_id = cm_id;
  w.pd = pd;
  w.push = opts.push;
  w.allow_inline = opts.allow_inline;
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

Result<Completion> Cm::reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions opts) {
  auto idx = post_reject(cm_id, pd, opts);
  if (!idx) return idx.error();
  auto c = dev_.wait_completion_for(*idx, opts.timeout_cycles);
  if (!c) return c;
  if (!c->ok()) return completion_error(*c);
  return c;
}

}  // namespace bouncer
