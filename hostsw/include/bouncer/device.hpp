// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// bouncer::Device: one opened device. Owns the rings (SQ/CQ for rejects, CQP/CCQ for
// control commands) and the driver-side DMA pools, and speaks the raw WQE/CQE formats.
// Mirrors irdma's sc layer: irdma_sc_cqp_post_sq / irdma_sc_poll_for_cqp_op_done for the
// control queue, irdma_uk_* post + doorbell/push for the SQ, irdma_uk_cq_poll_cmpl for CQEs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bouncer/cm_context.hpp"
#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/result.hpp"
#include "bouncer/rings.hpp"

namespace bouncer {

struct DeviceConfig {
  uint32_t sq_entries = 64;  // powers of two in [4, 32768]; cq >= sq, ccq >= cqp
  uint32_t cq_entries = 64;
  uint32_t cqp_entries = 16;
  uint32_t ccq_entries = 16;
  uint64_t poll_interval_cycles = 32;       // wait_cycles() between looks at a CQ
  uint64_t cqp_timeout_cycles = 1'000'000;  // per control command
};

/// What VERSION and CAPS say.
struct Caps {
  uint8_t version_major = 0;
  uint8_t version_minor = 0;
  uint8_t version_patch = 0;
  unsigned data_bytes = 0;  // TX stream width in bytes
  unsigned ctx_log2 = 0;
  uint32_t ctx_depth = 0;  // 1 << ctx_log2: valid cm_ids are [0, ctx_depth)
  unsigned num_sq = 0;
  bool push = false;       // push page present
  bool inline_pd = false;  // inline private data supported
};

/// Bytes of driver-owned PD buffer per SQ slot (slot i at pd_pool + i * kPdSlotBytes).
inline constexpr size_t kPdSlotBytes = regs::kMpaPdMax;

/// One MPA_REJECT SQ WQE, before it is written. The PD is copied by post_reject() (inline or
/// into the slot's PD buffer), so the caller's buffer may be reused on return (iw_cm_reject).
struct RejectWqe {
  uint32_t cm_id = 0;
  std::span<const std::byte> pd;  // at most kPdSlotBytes
  bool push = false;              // also write the WQE to the push page, ring SQ_PUSH_DB
  bool allow_inline = true;       // inline when pd.size() <= 32 and CAPS.INLINE
  bool fin = false;
  std::optional<uint32_t> ird_ord;  // ctrl_ird << 16 | ctrl_ord; sets IRD_ORD_VALID
  uint64_t wr_id = 0;
  // Raw overrides that bypass the driver's own choices, so tests can post WQEs the hardware
  // must reject. Not used by the Cm layer.
  std::optional<uint16_t> pd_len_override;   // PD_LEN field regardless of pd.size()
  std::optional<uint64_t> pd_addr_override;  // PD_ADDR (forces PD_INLINE = 0)
  std::optional<uint8_t> opcode_override;    // OPCODE instead of MPA_REJECT
  bool force_inline = false;                 // PD_INLINE = 1 even if pd.size() > 32
  bool stale = false;                        // write VALID with the wrong polarity
};

/// One SQ completion, decoded (regs cqe) plus what the driver knows about the WQE.
struct Completion {
  uint16_t wqe_idx = 0;
  uint32_t cm_id = 0;
  uint64_t wr_id = 0;
  uint16_t major = 0;  // regs::CqMajor
  uint16_t minor = 0;  // regs::CqMinor
  bool error = false;
  bool pshdrop = false;         // push requested but the engine fetched the WQE from the ring
  uint8_t op = 0;               // regs::SqOp
  uint32_t latency_cycles = 0;  // doorbell/push to first TX byte (0 when nothing was sent)
  uint16_t frame_len = 0;
  uint32_t tcp_seq = 0;
  bool push = false;        // the driver posted this WQE in push mode
  bool unexpected = false;  // the CQE named a wqe_idx with nothing outstanding (dup/unknown)

  bool ok() const { return !error && major == 0 && !unexpected; }
  /// "ok", "CTX/NO_CONTEXT (0x0200/0x0012)", or "unexpected CQE ...".
  std::string status() const;
};

struct DeviceStats {
  uint64_t sq_posted = 0;
  uint64_t sq_pushed = 0;
  uint64_t sq_completed = 0;
  uint64_t sq_errors = 0;
  uint64_t push_dropped = 0;     // completions with PSHDROP
  uint64_t unexpected_cqes = 0;  // SQ CQEs for a wqe_idx with nothing outstanding
  uint64_t cqp_ops = 0;
  uint64_t cqp_errors = 0;
  uint64_t unexpected_ccqes = 0;  // CCQEs that matched no outstanding control WQE
};

/// Names of the completion codes ("CTX", "NO_CONTEXT"; "?" when unknown).
const char* cq_major_name(uint16_t major);
const char* cq_minor_name(uint16_t minor);
/// "CTX/NO_CONTEXT (0x0200/0x0012)".
std::string cq_status_name(uint16_t major, uint16_t minor);

class Device {
 public:
  /// Checks ID and VERSION, reads CAPS, stops the engines (CTRL = 0), allocates and
  /// programs the four rings, zeroes CQ_HEAD/CCQ_HEAD and enables (CTRL.ENABLE = 1).
  /// `hal` must outlive the Device.
  static Result<std::unique_ptr<Device>> open(hal::Device& hal, DeviceConfig cfg = {});
  /// Writes CTRL = 0 and waits (bounded) for the engines to go idle before freeing memory.
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Caps& caps() const { return caps_; }
  const DeviceConfig& config() const { return cfg_; }
  const DeviceStats& stats() const { return stats_; }
  hal::Device& hal() { return hal_; }

  // ---- control queue (irdma CQP). Synchronous: post, CQP_DB, poll the CCQ.
  Result<void> cqp_write_context(uint32_t cm_id, const CmContext& ctx);
  Result<CmContext> cqp_read_context(uint32_t cm_id);
  Result<void> cqp_nop();
  /// Any opcode, for tests of the hardware's checks. The context buffer of the slot is
  /// passed as CTX_ADDR (after copying `ctx_image` in when given).
  Result<void> cqp_raw(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_image = {});

  // ---- SQ
  /// Writes one MPA_REJECT WQE and rings the doorbell (or the push page + push doorbell).
  /// Returns the wqe_idx; exactly one completion follows. kRingFull when no slot is free.
  Result<uint16_t> post_reject(const RejectWqe& wqe);
  /// An SQ NOP (completes with success, sends nothing).
  Result<uint16_t> post_nop(uint64_t wr_id = 0, bool push = false);
  /// The next completion, or nullopt. Consumes the CQE and writes CQ_HEAD.
  std::optional<Completion> poll_cq();
  /// poll_cq() until something arrives; kTimeout after `timeout_cycles`.
  Result<Completion> wait_completion(uint64_t timeout_cycles);
  /// Waits for the completion of one wqe_idx; completions of other WQEs seen meanwhile are
  /// kept and handed out by later poll_cq()/wait_completion() calls, in order.
  Result<Completion> wait_completion_for(uint16_t wqe_idx, uint64_t timeout_cycles);
  /// SQ WQEs posted whose completion has not been polled yet.
  uint32_t sq_outstanding() const { return sq_outstanding_; }

  // ---- introspection (tests, diagnostics)
  const queues::SqRing& sq() const { return sq_; }
  const queues::CqRing& cq() const { return cq_; }
  const queues::SqRing& cqp() const { return cqp_; }
  const queues::CqRing& ccq() const { return ccq_; }
  /// Device address of SQ slot i's PD buffer.
  uint64_t pd_slot_addr(uint16_t wqe_idx) const;

 private:
  struct SqSlot {
    bool busy = false;
    bool push = false;
    uint64_t wr_id = 0;
    uint32_t cm_id = 0;
  };
  struct CqpSlot {
    bool busy = false;
    uint64_t scratch = 0;
    uint8_t op = 0;
  };
  struct CqpDone {
    uint16_t major = 0, minor = 0;
  };

  Device(hal::Device& hal, DeviceConfig cfg, Caps caps, queues::SqRing sq, queues::CqRing cq,
         queues::SqRing cqp, queues::CqRing ccq, std::unique_ptr<hal::DmaBuffer> pd_pool,
         std::unique_ptr<hal::DmaBuffer> ctx_pool);

  void publish_sq(queues::WqeSlot slot, std::span<const std::byte> image, bool push, uint64_t wr_id,
                  uint32_t cm_id);
  std::optional<Completion> reap_one();
  Result<uint16_t> cqp_post(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_image);
  Result<CqpDone> cqp_poll_for_done(uint16_t wqe_idx, uint8_t opcode, uint32_t cm_id);
  Result<void> cqp_exec(uint8_t opcode, uint32_t cm_id, std::span<const std::byte> ctx_in,
                        std::span<std::byte> ctx_out);

  hal::Device& hal_;
  DeviceConfig cfg_;
  Caps caps_;
  DeviceStats stats_;
  queues::SqRing sq_;
  queues::CqRing cq_;
  queues::SqRing cqp_;
  queues::CqRing ccq_;
  std::unique_ptr<hal::DmaBuffer> pd_pool_;   // sq_entries * kPdSlotBytes
  std::unique_ptr<hal::DmaBuffer> ctx_pool_;  // cqp_entries * kCmCtxBytes
  std::vector<SqSlot> sq_slots_;
  std::vector<CqpSlot> cqp_slots_;
  std::deque<Completion> stash_;  // reaped but not handed out yet
  uint32_t sq_outstanding_ = 0;
  uint64_t next_scratch_ = 1;
};

}  // namespace bouncer
