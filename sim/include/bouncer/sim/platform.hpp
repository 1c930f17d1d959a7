// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Bouncer co-simulation platform: the verilated bouncer_core inside a SystemC/TLM-2.0 system
// (host CPU thread, MMIO initiator, AXI4 DMA adapter, host memory, TX sink, pcap, FST).
//
// This header is free of SystemC and Verilator includes; everything lives behind a pimpl.
//
// Timing model: the device is clocked by the platform's own loop and only advances when the
// host thread asks (an MMIO access, or hal::Device::wait_cycles). Cycle numbers are core-clock
// rising edges counted from the release of reset: the first edge after reset is cycle 1, and
// cycles() is the number of edges so far.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bouncer/hal.hpp"

namespace bouncer::sim {

struct PlatformConfig {
  unsigned data_width = 64;           // 64 or 512: which verilated model
  uint64_t mem_latency_cycles = 200;  // host memory read/write latency (≈0.8 us at 250 MHz)
  uint64_t mem_latency_jitter = 0;    // extra uniform random 0..jitter cycles per DMA burst
  double tx_ready_prob = 1.0;         // probability that m_axis_tx_tready is 1 in a cycle
  uint64_t seed = 1;
  std::string pcap_path;     // "" = no pcap
  std::string fst_path;      // "" = no waveform
  double clock_mhz = 250.0;  // for pcap timestamps and reports
  uint64_t mmio_cycles = 0;  // optional extra host-side cost per MMIO access
                             // (the device runs this many cycles before the
                             // access is presented on AXI4-Lite)
  // --- additions ---
  uint64_t host_mem_base = 0x1'0000'0000ull;  // first DMA address handed out by alloc_dma
  uint64_t host_mem_bytes = 1ull << 30;       // capacity of host memory (reserved lazily)
  unsigned reset_cycles = 16;                 // rst is held for this many cycles at construction
  uint64_t mmio_timeout_cycles = 1'000'000;   // abort if an AXI4-Lite access gets no response
};

struct TxFrame {
  std::vector<uint8_t> bytes;
  uint64_t first_cycle;  // edge at which the first beat was transferred
  uint64_t last_cycle;   // edge at which the tlast beat was transferred
};

// One register write: `cycle` is the edge at which both the AW and the W handshake had completed
// (the edge at which the device registered the write).
struct MmioWrite {
  uint32_t offset;
  uint32_t value;
  uint64_t cycle;
};

// Counters the platform keeps (all since construction).
struct PlatformStats {
  uint64_t mmio_reads = 0;
  uint64_t mmio_writes = 0;
  uint64_t mmio_errors = 0;  // AXI4-Lite responses other than OKAY
  uint64_t dma_read_bursts = 0;
  uint64_t dma_read_beats = 0;
  uint64_t dma_write_bursts = 0;
  uint64_t dma_write_beats = 0;
  uint64_t dma_errors = 0;  // bursts answered with SLVERR or DECERR
  uint64_t tx_beats = 0;
  uint64_t tx_stall_cycles = 0;  // cycles with tvalid=1 and tready=0
};

// Errors: a bad configuration (data_width, clock, memory region, unwritable pcap/FST path) or a
// second Platform in the process throws from the constructor (std::invalid_argument,
// std::runtime_error, std::logic_error). A protocol violation by the RTL during simulation
// (AXI4 / AXI4-Lite / AXI-Stream rules, see sim/platform/axi_dma_adapter.hpp and
// sim/net/tx_sink.hpp) prints "bouncer-sim FATAL: ..." with the cycle, flushes the FST and
// pcap, and aborts.
class Platform {  // one per process (SystemC elaborates once per process)
 public:
  explicit Platform(PlatformConfig cfg);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  // Runs `host` as the host-CPU SC_THREAD with a hal::Device bound to the model; returns when
  // it returns. May be called several times; the device state persists between calls.
  // An exception thrown by `host` is rethrown here.
  void run(const std::function<void(hal::Device&)>& host);

  const std::vector<TxFrame>& tx_frames() const;
  const std::vector<MmioWrite>& mmio_writes() const;  // log of every register write
  uint64_t cycles() const;                            // simulated core cycles so far
  double wall_seconds() const;                        // wall time spent inside run()
  // Extra frames (e.g. peer side) into the same pcap, timestamped at `cycle`.
  void write_pcap_frame(std::span<const uint8_t> frame, uint64_t cycle);
  void set_tx_ready_prob(double p);
  void set_mem_latency(uint64_t cycles, uint64_t jitter);
  // Reads/writes whose burst overlaps [addr_lo, addr_hi) get SLVERR (for fault tests).
  // Several ranges may be active at once.
  void inject_dma_error(uint64_t addr_lo, uint64_t addr_hi);

  // --- additions ---
  void clear_dma_errors();
  const PlatformConfig& config() const;
  PlatformStats stats() const;
  // Direct (untimed, side-effect-free) view of host memory, e.g. for checks after run().
  // Empty span if [addr, addr+len) is not inside allocated host memory.
  std::span<std::byte> host_memory(uint64_t addr, size_t len);
  // Level of the irq output after the last simulated edge.
  bool irq() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace bouncer::sim
