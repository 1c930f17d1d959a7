// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Ring primitives shared by the SQ/CQ pair and the control queue (CQP/CCQ), after irdma's
// IRDMA_RING_* helpers: a producer ring of 64-byte WQEs and a consumer ring of 32-byte CQEs,
// both in host DMA memory, both with a VALID bit (qword 3 bit 63) whose expected value, the
// polarity, starts at 1 and flips each time the ring index wraps to 0. Every access to a
// ring word is a 64-bit std::atomic_ref access ordered as hal.hpp's "Memory ordering" says.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "bouncer/hal.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/result.hpp"

namespace bouncer::queues {

/// log2 of a ring size in entries: a power of two in [2^RING_LOG2_MIN, 2^RING_LOG2_MAX].
Result<uint32_t> ring_log2(uint32_t entries);

/// A slot handed out by SqRing::get_next_wqe (irdma_qp_get_next_send_wqe).
struct WqeSlot {
  uint16_t wqe_idx;
  uint8_t polarity;  // the VALID value this WQE carries
};

/// Producer ring of WQEs (SQ and CQP). One slot is always kept free: full means
/// (head + 1) % size == tail, where tail (the consumer index) is learned from completions.
class SqRing {
 public:
  /// Allocates `entries` * `wqe_bytes` of zeroed, 64-byte aligned DMA memory.
  static Result<SqRing> create(hal::Device& hal, uint32_t entries, size_t wqe_bytes);

  SqRing(SqRing&&) noexcept = default;
  SqRing& operator=(SqRing&&) noexcept = default;

  uint32_t size() const { return size_; }
  uint32_t log2_size() const { return log2_; }
  size_t wqe_bytes() const { return wqe_bytes_; }
  uint64_t device_addr() const { return buf_->device_addr(); }
  /// Producer index (pi): where the next WQE goes; the value a doorbell carries.
  uint32_t head() const { return head_; }
  /// Consumer index (ci) as learned from completions.
  uint32_t tail() const { return tail_; }
  /// The VALID value the WQE at head() will carry.
  uint8_t polarity() const { return polarity_; }
  uint32_t used() const { return (head_ + size_ - tail_) % size_; }
  bool empty() const { return head_ == tail_; }
  bool full() const { return (head_ + 1) % size_ == tail_; }

  /// Claims the slot at head(), advances head (flipping the polarity when it wraps to 0).
  /// nullopt when the ring is full.
  std::optional<WqeSlot> get_next_wqe();
  /// Writes `image` (wqe_bytes long; shorter is zero-padded) into the slot with VALID =
  /// slot.polarity: every qword but the header (qword 3) first, then
  /// hal::to_device_barrier() (irdma's dma_wmb) and qword 3 with a release store, then
  /// sync_to_device. The doorbell that follows goes through hal::write_doorbell. `image`
  /// itself is not modified.
  void write_wqe(WqeSlot slot, std::span<const std::byte> image);
  /// CPU view of a slot as written (tests and diagnostics).
  std::span<const std::byte> wqe(uint32_t idx) const;
  /// Sets the consumer index, e.g. wqe_idx + 1 of a completion.
  void set_tail(uint32_t ci) { tail_ = ci % size_; }
  /// Back to the state after create() (head = tail = 0, polarity 1, every slot zeroed), as
  /// the hardware is after the ring's SIZE register is written.
  void reset();

 private:
  SqRing(std::unique_ptr<hal::DmaBuffer> buf, uint32_t log2, size_t wqe_bytes);

  std::unique_ptr<hal::DmaBuffer> buf_;
  uint32_t log2_ = 0;
  uint32_t size_ = 0;
  size_t wqe_bytes_ = 0;
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
  uint8_t polarity_ = 1;
};

using Cqe = std::array<std::byte, regs::kCqeBytes>;

/// Consumer ring of 32-byte CQEs (CQ and CCQ).
class CqRing {
 public:
  static Result<CqRing> create(hal::Device& hal, uint32_t entries);

  CqRing(CqRing&&) noexcept = default;
  CqRing& operator=(CqRing&&) noexcept = default;

  uint32_t size() const { return size_; }
  uint32_t log2_size() const { return log2_; }
  uint64_t device_addr() const { return buf_->device_addr(); }
  /// Consumer index: the slot the next CQE is expected in; the value written to *_HEAD.
  uint32_t head() const { return head_; }
  /// The VALID value the CQE at head() must carry to be new.
  uint8_t polarity() const { return polarity_; }

  /// The CQE at head() if its VALID bit equals polarity(), else nullopt. VALID first: the
  /// header qword is synced from the device and loaded with acquire; only when it is new,
  /// hal::from_device_barrier(), the whole entry synced again and the other qwords read
  /// (hal.hpp, "Memory ordering", rule 4).
  std::optional<Cqe> peek();
  /// Consumes the CQE at head(): head advances, the polarity flips when it wraps to 0.
  /// The caller then tells the hardware (write head() to CQ_HEAD / CCQ_HEAD).
  void advance();

 private:
  CqRing(std::unique_ptr<hal::DmaBuffer> buf, uint32_t log2);

  std::unique_ptr<hal::DmaBuffer> buf_;
  uint32_t log2_ = 0;
  uint32_t size_ = 0;
  uint32_t head_ = 0;
  uint8_t polarity_ = 1;
};

}  // namespace bouncer::queues
