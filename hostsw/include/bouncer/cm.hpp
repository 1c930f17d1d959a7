// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The connection-manager API, mirroring iw_cm: contexts in, MPA rejects out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>

#include "bouncer/cm_context.hpp"
#include "bouncer/device.hpp"
#include "bouncer/result.hpp"

namespace bouncer {

struct RejectOptions {
  bool push = false;                // post through the push page (needs CAPS.PUSH)
  bool allow_inline = true;         // PD of at most 32 bytes goes inline in the WQE
  bool fin = false;                 // FIN in the reject segment (what irdma does; siw loses the PD)
  std::optional<uint32_t> ird_ord;  // reply IRD/ORD word instead of the hardware default
  bool allow_long_pd = false;       // permit 256..512 bytes of PD (rdma_reject's length is a u8)
  uint64_t wr_id = 0;
  uint64_t timeout_cycles = 2'000'000;  // reject(): how long to wait for the completion
};

/// Converts an error completion into an Error (kHardware, with the codes) naming cm_id.
Error completion_error(const Completion& c);

class Cm {
 public:
  /// `dev` must outlive the Cm.
  explicit Cm(Device& dev) : dev_(dev) {}

  Device& device() { return dev_; }

  /// Stores a context for cm_id (CQP WRITE_CM_CONTEXT). Also resets the driver's view of the
  /// connection's state, so a connection can be rejected again after a rewrite.
  Result<void> write_context(uint32_t cm_id, const CmContext& ctx);
  /// Reads the hardware's copy (CQP READ_CM_CONTEXT), including SND_NXT/IP_ID/REJECTED.
  Result<CmContext> read_context(uint32_t cm_id);

  /// iw_cm_reject: validates, posts, waits for the completion. The PD is copied before the
  /// call returns. Error completions come back as Errc::kHardware with the codes set.
  /// Validation (Errc::kInvalidArgument, nothing posted):
  ///  - cm_id < CAPS connection-table depth;
  ///  - pd.size() <= 255 unless opts.allow_long_pd (rdma_reject's private_data_len is a u8);
  ///  - PD_Length on the wire (pd.size(), + 4 when the stored request is rev 2 enhanced)
  ///    <= 512 (MPA_PD_MAX); the hardware checks it again (WQE/PD_TOO_LONG);
  ///  - opts.push only when CAPS.PUSH.
  /// Errc::kState: no valid context for cm_id, or this connection was already rejected
  /// (iw_cm returns -EINVAL for a second reject).
  Result<Completion> reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions opts = {});

  /// Non-blocking reject for pipelined use: same validation, returns the wqe_idx. Collect
  /// the completion with poll() or wait(). opts.timeout_cycles is not used.
  Result<uint16_t> post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                               const RejectOptions& opts = {});
  /// Next SQ completion, if any (Device::poll_cq).
  std::optional<Completion> poll() { return dev_.poll_cq(); }
  /// Waits for the completion of wqe_idx (others are kept for poll()).
  Result<Completion> wait(uint16_t wqe_idx, uint64_t timeout_cycles) {
    return dev_.wait_completion_for(wqe_idx, timeout_cycles);
  }

 private:
  Result<CmContext*> context_for(uint32_t cm_id);

  Device& dev_;
  std::unordered_map<uint32_t, CmContext> shadow_;  // driver's copy of what it wrote/read
};

}  // namespace bouncer
