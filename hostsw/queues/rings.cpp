// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "bouncer/rings.hpp"

#include <atomic>
#include <bit>
#include <cstring>
#include <new>
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
constexpr uint64_t kValidBit = uint64_t{1} << 63;

// Ring words are naturally aligned 64-bit words of DMA memory, accessed only through these
// (hal.hpp, "Memory ordering"). A DmaBuffer's storage is a byte array, in which a uint64_t
// object is implicitly created where it is accessed.
using Word = std::atomic_ref<uint64_t>;
static_assert(Word::required_alignment <= 8);

uint64_t& word_at(std::byte* p) { return *std::launder(reinterpret_cast<uint64_t*>(p)); }
uint64_t load_relaxed(std::byte* p) { return Word(word_at(p)).load(std::memory_order_relaxed); }
uint64_t load_acquire(std::byte* p) { return Word(word_at(p)).load(std::memory_order_acquire); }
void store_relaxed(std::byte* p, uint64_t v) {
  Word(word_at(p)).store(v, std::memory_order_relaxed);
}
void store_release(std::byte* p, uint64_t v) {
  Word(word_at(p)).store(v, std::memory_order_release);
}

Result<std::unique_ptr<hal::DmaBuffer>> ring_buffer(hal::Device& hal, size_t bytes) {
  auto buf = hal.alloc_dma(bytes, kRingAlign);
  if (!buf) return buf.error();
  if (reinterpret_cast<uintptr_t>((*buf)->bytes().data()) % 8 != 0) {
    return make_error(Errc::kInvalidArgument,
                      std::string(hal.name()) + ": DMA buffer CPU view not 8-byte aligned");
  }
  return buf;
}
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
  auto buf = ring_buffer(hal, size_t{entries} * wqe_bytes);
  if (!buf) return buf.error();
  return SqRing(std::move(buf).value(), *lg, wqe_bytes);
}

void SqRing::reset() {
  const size_t n = size_t{size_} * wqe_bytes_;
  std::byte* p = buf_->bytes().data();
  for (size_t off = 0; off < n; off += 8) store_relaxed(p + off, 0);
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
  // The image, zero-padded to the slot (wqe_bytes_ is a multiple of 8).
  auto qword = [&](size_t q) {
    uint64_t v = 0;
    if (q * 8 < image.size())
      std::memcpy(&v, image.data() + q * 8, std::min<size_t>(8, image.size() - q * 8));
    return v;
  };
  // Every qword but the header first; then the header with VALID, ordered after them
  // (irdma: dma_wmb(), then the header store).
  for (size_t q = 0; q * 8 < wqe_bytes_; ++q) {
    if (q * 8 != kHeaderOff) store_relaxed(dst + q * 8, qword(q));
  }
  const uint64_t hdr = (qword(kHeaderOff / 8) & ~kValidBit) | (uint64_t{slot.polarity & 1u} << 63);
  hal::to_device_barrier();
  store_release(dst + kHeaderOff, hdr);
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
  auto buf = ring_buffer(hal, size_t{entries} * regs::kCqeBytes);
  if (!buf) return buf.error();
  return CqRing(std::move(buf).value(), *lg);
}

std::optional<Cqe> CqRing::peek() {
  const size_t off = size_t{head_} * regs::kCqeBytes;
  std::byte* e = buf_->bytes().data() + off;
  // VALID first: the header qword alone, with an acquire load (irdma: get_64bit_val(cqe, 24)
  // and the polarity check, then udma_from_device_barrier()).
  buf_->sync_from_device(off + kHeaderOff, 8);
  const uint64_t hdr = load_acquire(e + kHeaderOff);
  if (((hdr >> 63) & 1u) != polarity_) return std::nullopt;
  hal::from_device_barrier();
  // Only now the rest: the device wrote it before VALID, and a copy synced before VALID was
  // seen may hold words from before the device's write.
  buf_->sync_from_device(off, regs::kCqeBytes);
  Cqe out;
  for (size_t q = 0; q < out.size() / 8; ++q) {
    const uint64_t v = q * 8 == kHeaderOff ? hdr : load_relaxed(e + q * 8);
    std::memcpy(out.data() + q * 8, &v, 8);
  }
  return out;
}

void CqRing::advance() {
  head_ = (head_ + 1) % size_;
  if (head_ == 0) polarity_ ^= 1;
}

}  // namespace bouncer::queues
