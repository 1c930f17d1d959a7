// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The diagnostic path: host-written connection contexts (irdma's software CM), for bring-up,
// hardware-check tests and the benches on an idle device. There is no peer, no SYN, no event:
// the host writes a context (CQP WRITE_CM_CONTEXT) and rejects it.
//
// It shares the connection table with the passive CM, which knows nothing of these cm_ids:
// a context written over a live hardware node would overwrite it, and a reject posted to a
// cm_id still in its handshake would reach a node the hardware owns. So every call that
// writes a context or posts a reject first checks that the device is idle for the passive
// CM: no listener installed through the Device and CM_CONNS == 0 (else Errc::kState, nothing
// done). read_context() is a plain read and always allowed.
//
// Threads: every member may be called from any thread. poll() and wait() hand out only the
// completions of this object's own rejects.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <unordered_map>

#include "bouncer/cm.hpp"
#include "bouncer/cm_context.hpp"
#include "bouncer/device.hpp"
#include "bouncer/result.hpp"

namespace bouncer {

class ContextDiag {
 public:
  /// `dev` must outlive the ContextDiag.
  explicit ContextDiag(Device& dev);
  /// Abandons its rejects still in flight (their completions free their slots).
  ~ContextDiag();
  ContextDiag(const ContextDiag&) = delete;
  ContextDiag& operator=(const ContextDiag&) = delete;

  Device& device() { return dev_; }

  /// ok when the device is idle for the passive CM, else kState naming the listeners
  /// installed or CM_CONNS (all ones: no device answering).
  Result<void> check_idle();

  /// Stores a context for cm_id (CQP WRITE_CM_CONTEXT) and forgets that it was rejected, so
  /// the cm_id can be rejected again. kInvalidArgument: cm_id >= the table depth. kState:
  /// the device is not idle (check_idle).
  Result<void> write_context(uint32_t cm_id, const CmContext& ctx);
  /// Reads the hardware's copy (CQP READ_CM_CONTEXT), including SND_NXT/IP_ID/REJECTED.
  Result<CmContext> read_context(uint32_t cm_id);

  /// Validates, posts, waits for the completion (Cm::reject's options and PD rules, with the
  /// context's revision). Error completions come back as Errc::kHardware with the codes set;
  /// a completion that does not come within opts.timeout is abandoned (kTimeout).
  /// kInvalidArgument (nothing posted): cm_id >= depth, and Cm::reject's option checks.
  /// kState (nothing posted): the device is not idle; no valid context (one written
  /// elsewhere is read from the hardware once); already rejected (one reject per context
  /// write, as iw_cm); a node of the passive CM.
  Result<Completion> reject(uint32_t cm_id, std::span<const std::byte> pd, RejectOptions opts = {});
  /// Non-blocking: the same checks, returns the wqe_idx within SQ opts.sq. Collect the
  /// completion with poll() or wait(). kRingFull when that SQ has no free slot.
  Result<uint16_t> post_reject(uint32_t cm_id, std::span<const std::byte> pd,
                               const RejectOptions& opts = {});
  /// post_reject() for a list, with one doorbell per SQ (Device::post_rejects). Every request
  /// is checked as post_reject() checks it (a cm_id may appear once); the first bad one fails
  /// the call, naming its position, with nothing posted. Returns the wqe_idx of each request
  /// posted, in order: all, or a prefix when an SQ filled (the rest stay unposted and
  /// unrejected). kRingFull when not even the first fits.
  Result<std::vector<uint16_t>> post_rejects(std::span<const RejectRequest> reqs);
  /// The next completion of this object's post_reject()s, if any. Never one that a
  /// reject() in another thread is waiting for: that one goes to its caller.
  std::optional<Completion> poll();
  /// Waits for the completion of (sq, wqe_idx), one of this object's. kTimeout after
  /// `timeout` of host time: the WQE stays posted (wait again or poll()).
  Result<Completion> wait(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout);
  Result<Completion> wait(uint16_t wqe_idx, std::chrono::nanoseconds timeout) {
    return wait(0u, wqe_idx, timeout);
  }

 private:
  Result<void> check_idle_locked();
  Result<Completion> wait_for(unsigned sq, uint16_t wqe_idx, std::chrono::nanoseconds timeout);
  Result<CmContext*> context_for(uint32_t cm_id);
  Result<uint16_t> post_locked(uint32_t cm_id, std::span<const std::byte> pd,
                               const RejectOptions& opts);
  // post_reject's checks: the context to mark rejected once the WQE is posted.
  Result<CmContext*> check_locked(uint32_t cm_id, std::span<const std::byte> pd,
                                  const RejectOptions& opts);
  std::optional<Completion> claim(std::optional<uint32_t> key);
  static uint32_t wqe_key(unsigned sq, uint16_t wqe_idx) { return sq << 16 | wqe_idx; }

  Device& dev_;
  std::mutex mu_;
  std::unordered_map<uint32_t, CmContext> shadow_;  // driver's copy of what it wrote/read
  std::set<uint32_t> mine_;                         // wqe_keys of its rejects in flight
  std::set<uint32_t> sync_;  // those a reject() call waits for (poll() leaves them)
};

}  // namespace bouncer
