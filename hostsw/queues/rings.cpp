// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/rings.hpp"

#include <atomic>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

namespace bouncer::queues {

namespace {
// Both WQE formats keep the header and its VALID bit in the same place.
static_assert(regs::sq_wqe::VALID.qword == 3 && regs::sq_wqe::VALID.lsb == 63);
static_assert(regs::cqp_wqe::VALID.qword == 3 && regs::cqp_wqe::VALID.lsb == 63);
static_assert(regs::cqe::VALID.qword == 3 && regs::cqe::VALID.lsb == 63);
constexpr size_t kHeaderOff = 24;  // qword 3
constexpr size_t kRingAlign = 64;
}  // namespace

Result<uint32_t> ring_log2(uint32_t entries) {
  const uint32_t lo = 1u << regs::kRingLog2Min;
  const uint32_t hi = 1u << regs::kRingLog2Max;
  if (!std::has_single_bit(entries) || entries < lo || entries > hi) {
    return make_error(Errc::kInvalidArgument,
                      "ring size " + std::to_string(entries) + " is not a power of two in [" +
                          std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<uint32_t>(std::countr_zero(entries));
}

// ------------------------------------------------------------------------------- SqRing

SqRing::SqRing(std::unique_ptr<hal::DmaBuffer> buf, uint32_t log2, size_t wqe_bytes)
    : buf_(std::move(buf)), log2_(log2), size_(1u << log2), wqe_bytes_(wqe_bytes) {}

Result<SqRing> SqRing::create(hal::Device& hal, uint32_t entries, size_t wqe_bytes) {
  auto lg = ring_log2(entries);
  if (!lg) return lg.error();
  if (wqe_bytes < 32 || wqe_bytes % 8 != 0) {
    return make_error(Errc::kInvalidArgument, "WQE size must be a multiple of 8, at least 32");
  }
  auto buf = hal.alloc_dma(size_t{entries} * wqe_bytes, kRingAlign);
  if (!buf) return buf.error();
  return SqRing(std::move(buf).value(), *lg, wqe_bytes);
}

void SqRing::reset() {
  const size_t n = size_t{size_} * wqe_bytes_;
  std::memset(buf_->bytes().data(), 0, n);
  buf_->sync_to_device(0, n);
  head_ = 0;
  tail_ = 0;
  polarity_ = 1;
}

std::optional<WqeSlot> SqRing::get_next_wqe() {
  if (full()) return std::nullopt;
  WqeSlot slot{static_cast<uint16_t>(head_), polarity_};
  head_ = (head_ + 1) % size_;
  if (head_ == 0) polarity_ ^= 1;
  return slot;
}

void SqRing::write_wqe(WqeSlot slot, std::span<const std::byte> image) {
  const size_t off = size_t{slot.wqe_idx} * wqe_bytes_;
  std::byte* dst = buf_->bytes().data() + off;
  const size_t n = std::min(image.size(), wqe_bytes_);
  // Everything but the header first.
  std::memcpy(dst, image.data(), std::min(n, kHeaderOff));
  if (n > kHeaderOff + 8)
    std::memcpy(dst + kHeaderOff + 8, image.data() + kHeaderOff + 8, n - kHeaderOff - 8);
  if (n < wqe_bytes_) std::memset(dst + n, 0, wqe_bytes_ - n);
  // The header, with the valid bit, strictly after the rest (irdma: dma_wmb(); set_64bit_val(wqe,
  // 24, hdr)).
  std::array<std::byte, 8> hdr{};
  if (n >= kHeaderOff + 8) std::memcpy(hdr.data(), image.data() + kHeaderOff, 8);
  uint64_t q = 0;
  std::memcpy(&q, hdr.data(), 8);
  q = (q & ~(uint64_t{1} << 63)) | (uint64_t{slot.polarity & 1u} << 63);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(dst + kHeaderOff, &q, 8);
  buf_->sync_to_device(off, wqe_bytes_);
}

std::span<const std::byte> SqRing::wqe(uint32_t idx) const {
  return buf_->bytes().subspan(size_t{idx % size_} * wqe_bytes_, wqe_bytes_);
}

// ------------------------------------------------------------------------------- CqRing

CqRing::CqRing(std::unique_ptr<hal::DmaBuffer> buf, uint32_t log2)
    : buf_(std::move(buf)), log2_(log2), size_(1u << log2) {}

Result<CqRing> CqRing::create(hal::Device& hal, uint32_t entries) {
  auto lg = ring_log2(entries);
  if (!lg) return lg.error();
  auto buf = hal.alloc_dma(size_t{entries} * regs::kCqeBytes, kRingAlign);
  if (!buf) return buf.error();
  return CqRing(std::move(buf).value(), *lg);
}

std::optional<Cqe> CqRing::peek() {
  const size_t off = size_t{head_} * regs::kCqeBytes;
  buf_->sync_from_device(off, regs::kCqeBytes);
  auto img = std::span<const std::byte>(buf_->bytes()).subspan(off, regs::kCqeBytes);
  if (regs::get(img, regs::cqe::VALID) != polarity_) return std::nullopt;
  std::atomic_thread_fence(std::memory_order_acquire);  // irdma: dma_rmb() after the valid check
  Cqe out;
  std::memcpy(out.data(), img.data(), out.size());
  return out;
}

void CqRing::advance() {
  head_ = (head_ + 1) % size_;
  if (head_ == 0) polarity_ ^= 1;
}

}  // namespace bouncer::queues
