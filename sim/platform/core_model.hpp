// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Cycle engine around one verilated bouncer_core (--cc model, 64- or 512-bit TX).
//
// The platform's own loop clocks the model; there is no sc_clock and no sc_signal. One cycle is:
//   1. pre-edge: every bus-functional model looks at the handshakes the device sees at this edge
//      (outputs settled after the previous negedge, inputs as driven last cycle);
//   2. rising edge: clk=1, eval;
//   3. drive: the bus-functional models compute their inputs for the next edge; if the network
//      (Network::next_event) has an event due at or before the next edge it is advanced to it
//      (peers, wires; frames arriving for the RX port are queued), then the RX source drives
//      s_axis_rx_* for the next edge;
//   4. falling edge: clk=0, eval (combinational outputs settle).
// Per cycle there are no allocations and no virtual calls: the model type is a template
// parameter of the implementation; the interface below is only crossed once per MMIO access or
// once per wait_cycles() call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bouncer/sim/platform.hpp"

namespace bouncer::sim {

class AxiDmaAdapter;
class TxSink;
class RxSource;
class Network;

struct CoreConfig {
  unsigned data_width = 64;
  std::string fst_path;
  double clock_mhz = 250.0;
  unsigned reset_cycles = 16;
  uint64_t mmio_cycles = 0;
  uint64_t mmio_timeout_cycles = 1'000'000;
  uint32_t reset_read_value = 0xFFFF'FFFFu;  // MMIO read data while reset is held
};

struct AxilResult {
  uint64_t cycles;  // edges from the call to the last response handshake (incl. mmio_cycles)
  uint8_t resp;     // worst BRESP/RRESP seen (0 OKAY, 2 SLVERR, 3 DECERR)
};

class CoreModel {
 public:
  virtual ~CoreModel() = default;
  // Tick the model `n` cycles.
  virtual void run(uint64_t n) = 0;
  // Tick the model one cycle at a time, at most `max` cycles, and stop after the first cycle at
  // which a DMA write burst ended (its WLAST beat) or `until` (if set) returns true. Returns
  // the cycles ticked (0 only for max == 0).
  virtual uint64_t run_until(uint64_t max, const std::function<bool()>& until) = 0;
  // AXI4-Lite writes of n consecutive words starting at addr, pipelined (the next AW/W is
  // offered right after the previous one was accepted); returns when all B responses are in.
  // Every write is appended to the MMIO log.
  virtual AxilResult axil_write(uint32_t addr, const uint32_t* words, size_t n) = 0;
  // AXI4-Lite reads of n consecutive words.
  virtual AxilResult axil_read(uint32_t addr, uint32_t* out, size_t n) = 0;
  virtual bool irq() const = 0;
  // The host queued something for the network or the RX port between clock cycles
  // (add_peer, inject_rx): advance the network to the next edge and re-drive s_axis_rx_* for
  // it (then eval with clk=0), so the change can act at the very next edge. A no-op inside the
  // clock loop (e.g. from a TX observer), where step 3 of the next drive phase does the same.
  virtual void poke() = 0;
  // Reset held at run time (Platform::hold_reset, whose comment is the contract): true asserts
  // rst for the next edge on, drops the DMA slave's bursts in flight and the TX frame being
  // received; false releases it after at least reset_cycles held edges. Must not be called
  // inside the clock loop (in_loop()).
  virtual void set_reset(bool hold) = 0;
  virtual bool reset_held() const = 0;
  // Inside the clock loop (a TX observer or the network's callbacks run there).
  virtual bool in_loop() const = 0;
  // Flush the waveform (e.g. before abort); safe to call repeatedly.
  virtual void flush_trace() = 0;
  // model->final() and close the waveform. No ticks afterwards.
  virtual void finish() = 0;
  // Edges since reset release.
  uint64_t cycle() const { return cycle_; }

 protected:
  uint64_t cycle_ = 0;
};

// rx_beats: if not null, every s_axis_rx handshake is appended (read back from the pins).
std::unique_ptr<CoreModel> make_core_model(const CoreConfig& cfg, AxiDmaAdapter& dma, TxSink& tx,
                                           RxSource& rx, Network& net,
                                           std::vector<MmioWrite>& mmio_log, PlatformStats& stats,
                                           std::vector<RxBeat>* rx_beats);

}  // namespace bouncer::sim
