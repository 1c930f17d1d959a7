// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The memory side of the fake device (test_driver_fake_hal.hpp): how its DMA buffers look to
// the CPU and to the device, and how the device's writes reach them.
//
// FakeMemory::kInline is the plain fake: one copy of memory, and every device write lands at
// once, inside the driver call that ran the engine. The device then never writes while the
// CPU reads, so no ordering mistake of the driver can show.
//
// kThreaded gives the device a DMA engine of its own: a std::thread that takes the device's
// writes (CQEs, CCQEs, AEQEs, contexts read back, request PD) in order and lands each after a
// random delay, qword by qword in a random order, the entry's VALID qword last with a release
// store, while the driver polls. Payload qwords are plain stores: a driver that reads them
// before it has seen VALID with an acquire load races with them, which ThreadSanitizer
// reports, and may read them before they are written.
//
// kNonCoherent is kThreaded with caches that do not snoop: the CPU and the device each have
// their own copy of every buffer. DmaBuffer::sync_to_device copies the CPU's copy of the
// 64-byte lines touched to the device's; sync_from_device copies the device's lines to the
// CPU, qword by qword in a random order with yields in between (a refill is not atomic against
// the device's writes). Nothing moves otherwise: a missing sync loses data, and a sync made
// before VALID was seen may hand the CPU words from before the device's write.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <thread>
#include <vector>

namespace bouncer::testing {

enum class FakeMemory : uint8_t { kInline, kThreaded, kNonCoherent };

/// "inline", "threaded", "noncoherent" (test names).
const char* fake_memory_name(FakeMemory m);

/// One DMA buffer's storage. Coherent: one copy. Non-coherent: the CPU's and the device's.
class FakeDmaMemory {
 public:
  static constexpr size_t kLine = 64;

  FakeDmaMemory(size_t bytes, bool coherent, uint32_t seed);
  /// What DmaBuffer::bytes() hands the driver.
  std::span<std::byte> cpu() { return {cpu_.data(), bytes_}; }
  /// What the device reads and writes.
  std::span<std::byte> device() { return {coherent() ? cpu_.data() : dev_.data(), bytes_}; }
  bool coherent() const { return dev_.empty(); }
  /// Non-coherent: the CPU's copy of every line touching [off, off+len) to the device's.
  void to_device(size_t off, size_t len);
  /// Non-coherent: the device's copy of every line touching [off, off+len) to the CPU's.
  void from_device(size_t off, size_t len);

 private:
  size_t bytes_;
  std::vector<std::byte> cpu_;  // rounded up to whole lines
  std::vector<std::byte> dev_;  // empty when coherent
  std::minstd_rand rng_;
};

/// The device's DMA write engine of kThreaded / kNonCoherent: one thread, writes landed in the
/// order posted. The poster (the fake's engines, on the driver's thread) and the thread share
/// only the job queue, published with release and taken with acquire; the thread hands
/// nothing back except through the memory it writes, so what the driver sees of a write is
/// ordered only by the VALID qword, as on a bus.
class FakeDmaEngine {
 public:
  struct Options {
    bool coherent = true;  // payload qwords as plain stores (else relaxed atomics, since the
                           // non-coherent sync copies the device's lines concurrently)
    uint32_t seed = 1;
    std::chrono::microseconds max_delay{20};  // before a write starts (random, up to this)
  };
  explicit FakeDmaEngine(Options o);
  ~FakeDmaEngine();  // lands every posted write, then stops the thread
  FakeDmaEngine(const FakeDmaEngine&) = delete;
  FakeDmaEngine& operator=(const FakeDmaEngine&) = delete;

  /// Posts a write of `data` (at most kMaxJob bytes) to `dst` (8-byte aligned device memory).
  /// `valid_qword` >= 0: that qword is written last, with a release store.
  void post(std::byte* dst, std::span<const std::byte> data, int valid_qword);
  static constexpr size_t kMaxJob = 64;
  /// Waits until every posted write has landed; the caller then sees all of them.
  void drain();
  /// Writes posted and not yet landed, as far as a relaxed look tells (no view of the data).
  bool busy() const { return done_.load(std::memory_order_relaxed) < posted_; }
  /// A posted write not yet known to have landed touches [p, p+len).
  bool pending(const std::byte* p, size_t len) const;
  uint64_t posted() const { return posted_; }

 private:
  struct Job {
    std::byte* dst = nullptr;
    uint16_t len = 0;
    int8_t valid = -1;
    std::array<std::byte, kMaxJob> data{};
  };
  static constexpr size_t kChunkJobs = 1024;
  static constexpr size_t kMaxChunks = 4096;
  Job& job(uint64_t n) { return chunks_[n / kChunkJobs][n % kChunkJobs]; }
  void run();
  void land(const Job& j, std::mt19937& rng);

  Options o_;
  std::array<std::unique_ptr<Job[]>, kMaxChunks> chunks_;
  uint64_t posted_ = 0;                 // poster only
  std::atomic<uint64_t> published_{0};  // poster: release; thread: acquire
  std::atomic<uint64_t> done_{0};       // thread: release; drain(): acquire
  std::atomic<bool> stop_{false};
  struct Range {
    uintptr_t lo, hi;
  };
  std::vector<Range> unsettled_;  // poster only: writes since the last drain()
  std::thread thread_;
};

}  // namespace bouncer::testing
