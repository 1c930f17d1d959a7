// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Hardware-access layer: the only thing the driver knows about the device.
//
// Two backends implement it: the SystemC/Verilator co-simulation (sim/platform) and XRT on
// a real Alveo card (its own issue). Everything above this header is identical for both.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "bouncer/result.hpp"

namespace bouncer::hal {

/// A host-memory buffer the device can DMA to and from. RAII: freed by the destructor.
class DmaBuffer {
 public:
  virtual ~DmaBuffer() = default;
  DmaBuffer(const DmaBuffer&) = delete;
  DmaBuffer& operator=(const DmaBuffer&) = delete;

  /// CPU view of the buffer.
  virtual std::span<std::byte> bytes() = 0;
  /// The address the device must be given (bus address; in simulation, the TLM address).
  virtual uint64_t device_addr() const = 0;
  /// Make CPU writes in [off, off+len) visible to the device (cache flush on a card).
  virtual void sync_to_device(size_t off, size_t len) = 0;
  /// Make device writes in [off, off+len) visible to the CPU (cache invalidate on a card).
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
  /// Several consecutive 32-bit writes that the host may combine (a write-combining
  /// mapping on a card; one burst of AXI4-Lite writes in simulation). Used for the push page.
  virtual void write_block(uint32_t offset, std::span<const uint32_t> words) {
    for (size_t i = 0; i < words.size(); ++i)
      write32(offset + 4 * static_cast<uint32_t>(i), words[i]);
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
