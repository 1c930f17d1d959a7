// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Hardware-access layer: the only thing the driver knows about the device.
//
// Two backends implement it: the SystemC/Verilator co-simulation (sim/platform) and XRT on
// a real Alveo card (hostsw/xrt). Everything above this header is identical for both.
//
// Memory ordering: the contract between the driver, the backends and the device
// ------------------------------------------------------------------------------
// The device reads WQEs and writes CQEs, AEQEs, contexts and request PD in host memory while
// the CPU runs; a CPU and a PCIe device see each other's accesses only in the order the
// barriers below give them (docs/operations.md, "Memory ordering"). The rules, as irdma
// (kernel and rdma-core providers/irdma/uk.c) follows them:
//   1. A WQE: qwords 0-2 and 4-7 are stored first, then to_device_barrier(), then qword 3
//      (the header with VALID) with a release store: a device that sees VALID sees the rest.
//   2. Then sync_to_device() of the WQE (a cache clean where DMA is not coherent).
//   3. Any register write that hands memory to the device (SQ_DB, SQ_PUSH_DB, CQP_DB, and
//      CQ_HEAD, CCQ_HEAD, AEQ_HEAD, which give consumed slots back) goes through
//      write_doorbell(): to_device_barrier() first, so every earlier CPU access to DMA memory
//      (the WQE stores, the reads of the entries consumed) is done before the device acts.
//   4. A CQE or AEQE is read VALID first: sync_from_device() of the header qword, an acquire
//      load of it and, only if VALID has the ring's polarity, from_device_barrier(), then
//      sync_from_device() of the whole entry and the other qwords. Never a payload word
//      before VALID. The same holds for what a CQE or AEQE announces (a context read back by
//      READ_CM_CONTEXT, the request PD of a CONNECT_REQUEST): synced from the device and read
//      only after the entry was taken.
//   5. The push page is one write_push() of the WQE as it sits in the ring, after
//      to_device_barrier() and before the push doorbell: one write-combined 64-byte burst
//      where the backend can (wc_flush() on both sides), else per-word register writes.
// Ring words are accessed as naturally aligned little-endian 64-bit words through
// std::atomic_ref (rings.cpp): the header qword with acquire/release, the rest relaxed, so no
// CPU access is torn and the ordering is visible to ThreadSanitizer as well. The barriers
// below are the one place a port to another architecture changes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "bouncer/result.hpp"

namespace bouncer::hal {

// Every in-memory format (regs.hpp) is little-endian and is read and written as native
// 64-bit words; a big-endian port would convert in regs::get/put and in the ring accessors.
static_assert(std::endian::native == std::endian::little,
              "the WQE/CQE/AEQE formats are little-endian; convert in regs.hpp and rings.cpp");

#if defined(__x86_64__)
/// Orders every earlier CPU access to DMA memory (stores, and the loads of consumed entries)
/// before any later store, to memory or to a register (rdma-core's udma_to_device_barrier).
/// x86-64 does not reorder stores with older loads or stores, and uncached MMIO stores stay
/// behind write-back stores: only the compiler must be stopped.
inline void to_device_barrier() noexcept { asm volatile("" ::: "memory"); }
/// After a VALID bit was seen set: later loads see what the device wrote before it
/// (rdma-core's udma_from_device_barrier; lfence on x86-64, as rdma-core does in user space).
inline void from_device_barrier() noexcept { asm volatile("lfence" ::: "memory"); }
/// Drains the write-combining buffers: a WC burst before this is out, as whole TLPs, before
/// any later store (rdma-core's mmio_flush_writes; also its mmio_wc_start, before the burst).
inline void wc_flush() noexcept { asm volatile("sfence" ::: "memory"); }
#elif defined(__aarch64__)
// Outer-shareable barriers: the device is an observer outside the CPU cluster. The full
// (load and store) form for to_device_barrier, since it also releases consumed entries.
inline void to_device_barrier() noexcept { asm volatile("dmb osh" ::: "memory"); }
inline void from_device_barrier() noexcept { asm volatile("dmb oshld" ::: "memory"); }
inline void wc_flush() noexcept { asm volatile("dsb st" ::: "memory"); }
#else
#error "hal.hpp: define to_device_barrier, from_device_barrier and wc_flush for this CPU"
#endif

/// A host-memory buffer the device can DMA to and from. RAII: freed by the destructor.
class DmaBuffer {
 public:
  virtual ~DmaBuffer() = default;
  DmaBuffer(const DmaBuffer&) = delete;
  DmaBuffer& operator=(const DmaBuffer&) = delete;

  /// CPU view of the buffer, aligned like the device address (at least 8 bytes: ring words
  /// are accessed as 64-bit atomics).
  virtual std::span<std::byte> bytes() = 0;
  /// The address the device must be given (bus address; in simulation, the TLM address).
  virtual uint64_t device_addr() const = 0;
  /// Make CPU writes in [off, off+len) visible to the device (cache clean on a card). Before
  /// the register write that tells the device to read them.
  virtual void sync_to_device(size_t off, size_t len) = 0;
  /// Make device writes in [off, off+len) visible to the CPU (cache invalidate on a card).
  /// Only writes the device made before it are guaranteed: the driver syncs a ring entry's
  /// header, checks VALID, then syncs the entry again before reading the rest (rule 4).
  /// Whole cache lines are affected: CPU writes not yet synced to the device in them are lost.
  virtual void sync_from_device(size_t off, size_t len) = 0;

 protected:
  DmaBuffer() = default;
};

/// One device: its register space and its DMA memory.
class Device {
 public:
  virtual ~Device() = default;

  /// 32-bit register read/write at a byte offset in the AXI4-Lite space.
  virtual uint32_t read32(uint32_t offset) = 0;
  virtual void write32(uint32_t offset, uint32_t value) = 0;
  /// Several consecutive 32-bit writes (one TLM transaction in the co-simulation). Every word
  /// is ordered after every earlier register write and before every later one. This default
  /// is one write32 per word, in address order.
  virtual void write_block(uint32_t offset, std::span<const uint32_t> words) {
    for (size_t i = 0; i < words.size(); ++i)
      write32(offset + 4 * static_cast<uint32_t>(i), words[i]);
  }
  /// A 64-byte WQE image to a push page (qword i = bytes 8i..8i+7), as one write-combined
  /// burst where the backend can: a backend that maps the register window write-combining
  /// issues wc_flush(), the eight qwords as 8-byte (or four 16-byte) stores, then wc_flush(),
  /// so the device gets one 64-byte posted write and nothing of it after a later register
  /// write. The page's words may arrive in any order and in pieces: the device takes the page
  /// only at the push doorbell, written after it. The caller orders its WQE stores before it
  /// (to_device_barrier). This default hands the 16 words (word 2i = low half of qword i) to
  /// write_block: one transaction in the co-simulation, 16 register writes on a backend
  /// without a write-combining mapping (XRT, hostsw/xrt/xrt_device.cpp says why).
  virtual void write_push(uint32_t offset, std::span<const uint64_t, 8> qwords) {
    std::array<uint32_t, 16> words{};
    for (size_t i = 0; i < qwords.size(); ++i) {
      words[2 * i] = static_cast<uint32_t>(qwords[i]);
      words[2 * i + 1] = static_cast<uint32_t>(qwords[i] >> 32);
    }
    write_block(offset, words);
  }
  /// Allocate a zeroed DMA buffer; `align` is a power of two.
  virtual Result<std::unique_ptr<DmaBuffer>> alloc_dma(size_t bytes, size_t align) = 0;
  /// Let the device run for at least `cycles` of its core clock (the simulation advances;
  /// on a card this sleeps). For waits measured in device time (a settle period).
  virtual void wait_cycles(uint64_t cycles) = 0;
  /// Core-clock cycles since reset, as far as the backend can tell (simulation: exact; a
  /// card: the core's CYCLE_LO/CYCLE_HI counter). For diagnostics and latency figures only:
  /// no deadline is taken from it, since a hung core, a wrong bitstream or a core reset can
  /// stop it, make it answer a constant or set it back.
  virtual uint64_t now_cycles() = 0;
  /// The host's monotonic clock, which every driver deadline is taken from. It advances
  /// while the host waits whatever the device does. A card: std::chrono::steady_clock; the
  /// co-simulation: the simulated time of the host thread (deterministic); test fakes: their
  /// own counter.
  virtual std::chrono::nanoseconds host_now() = 0;
  /// Let at least `d` of host time pass (a card sleeps or spins; the simulation runs the
  /// core for that long). Pollers call it between looks at a ring.
  virtual void wait_for(std::chrono::nanoseconds d) = 0;
  /// Human-readable backend name ("sim", "xrt").
  virtual const char* name() const = 0;
};

/// A register write that hands host memory to the device (a doorbell, a ring's head): every
/// earlier CPU access to DMA memory is ordered before it (to_device_barrier), then write32.
inline void write_doorbell(Device& dev, uint32_t offset, uint32_t value) {
  to_device_barrier();
  dev.write32(offset, value);
}

/// A deadline on a Device's host clock: `timeout` from construction. A timeout too large to
/// add saturates (it never passes).
class Deadline {
 public:
  Deadline(Device& dev, std::chrono::nanoseconds timeout)
      : dev_(dev), timeout_(std::max(timeout, std::chrono::nanoseconds::zero())) {
    const std::chrono::nanoseconds now = dev_.host_now();
    at_ = timeout_ > std::chrono::nanoseconds::max() - now ? std::chrono::nanoseconds::max()
                                                           : now + timeout_;
  }
  /// The host clock has reached the deadline.
  bool passed() { return dev_.host_now() >= at_; }
  /// Waits `interval`, or only what is left when the deadline is nearer.
  void pause(std::chrono::nanoseconds interval) {
    const std::chrono::nanoseconds left = at_ - dev_.host_now();
    if (left > std::chrono::nanoseconds::zero()) dev_.wait_for(std::min(interval, left));
  }
  std::chrono::nanoseconds timeout() const { return timeout_; }

 private:
  Device& dev_;
  std::chrono::nanoseconds timeout_;
  std::chrono::nanoseconds at_{};
};

}  // namespace bouncer::hal
