// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Bouncer co-simulation platform: the verilated bouncer_core inside a SystemC/TLM-2.0 system
// (host CPU thread, MMIO initiator, AXI4 DMA adapter, host memory, TX sink, RX source, pcap,
// FST) and its network side (wire model with loss/delay, simulated iWARP initiators).
//
// This header is free of SystemC and Verilator includes; everything lives behind a pimpl.
//
// Timing model: the device is clocked by the platform's own loop and only advances when the
// host thread asks (an MMIO access, or hal::Device::wait_cycles). Cycle numbers are core-clock
// rising edges counted from the release of reset: the first edge after reset is cycle 1, and
// cycles() is the number of edges so far.
//
// Network side (sim/README.md): frames the core transmits go through the "from Bouncer" wire
// (loss, delay) to the peer whose IPv4 address and TCP port are the frame's destination; frames
// the peers send go through the "to Bouncer" wire into the RX port queue. Peers, wires and the
// RX port advance inside the clock loop, i.e. during MMIO accesses and wait_cycles(). The pcap
// is the capture point at Bouncer's port: TX frames as the core sends them, RX frames as they
// enter the core, written in nondecreasing timestamp order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bouncer/hal.hpp"
#include "bouncer/peer/initiator.hpp"

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
  // What an MMIO read returns while the core is held in reset (Platform::hold_reset): the
  // platform answers in the core's place. Default all ones, what a CPU reads from a PCIe
  // device whose BAR read ends in a completion timeout or completer abort.
  uint32_t reset_read_value = 0xFFFF'FFFFu;
  // --- network side ---
  double loss_to_bouncer = 0.0;     // probability that the wire loses a frame a peer sent
  double loss_from_bouncer = 0.0;   // probability that the wire loses a frame the core sent
  uint64_t delay_to_bouncer = 0;    // cycles from a peer's poll_tx to the frame's arrival at RX
  uint64_t delay_from_bouncer = 0;  // cycles from the core's tlast beat to the peer's on_rx
  uint64_t wire_seed = 1;           // loss PRNG (one stream per direction)
  // Minimum idle cycles between the tlast beat of one RX frame and the first beat of the next.
  // Unset: 12 bytes IFG + 8 bytes preamble at line rate, ceil(20 / (data_width / 8)) cycles
  // (3 at 64 bits, 1 at 512 bits).
  std::optional<uint64_t> rx_ifg_cycles;
  // White-box: record every beat transferred on s_axis_rx_* as read back from the verilated
  // model's pins (Platform::rx_port_beats()). Costs one branch per cycle when off.
  bool record_rx_beats = false;
};

struct TxFrame {
  std::vector<uint8_t> bytes;
  uint64_t first_cycle;  // edge at which the first beat was transferred
  uint64_t last_cycle;   // edge at which the tlast beat was transferred
};
// A frame that entered the core's RX port (s_axis_rx_*): same fields.
using RxFrame = TxFrame;

// One beat on s_axis_rx_* (PlatformConfig::record_rx_beats).
struct RxBeat {
  uint64_t cycle;             // edge of the tvalid && tready handshake
  std::vector<uint8_t> data;  // all data_width/8 bytes of tdata, byte 0 = tdata[7:0]
  uint64_t keep;
  bool last;
};

// Direction of a frame on the wire.
enum class Direction : uint8_t {
  kToBouncer,    // a peer (initiator) -> the core's RX port
  kFromBouncer,  // the core's TX port -> a peer
};

// A frame the wire lost (random loss or the scripted drop hook).
struct DroppedFrame {
  Direction direction;
  std::vector<uint8_t> bytes;
  uint64_t cycle;  // when it was offered to the wire (TX: its tlast cycle; peer: its poll_tx cycle)
  uint64_t index;  // per-direction index of the frame on the wire (see DropHook)
  bool scripted;   // the drop hook said so (else random loss)
};

// Scripted losses: called once for every frame offered to the wire, in order, with a 0-based
// per-direction index: for kFromBouncer the index of the frame in tx_frames(), for kToBouncer
// the count of frames the peers sent before it. Returns true to drop the frame.
using DropHook = std::function<bool(Direction, const std::vector<uint8_t>& frame, uint64_t index)>;

// One register write: `cycle` is the edge at which both the AW and the W handshake had completed
// (the edge at which the device registered the write).
struct MmioWrite {
  uint32_t offset;
  uint32_t value;
  uint64_t cycle;
};

// Host-memory faults for DMA fault tests (Platform::inject_dma_fault).
enum class DmaFault : uint8_t {
  kSlvErr,      // the burst is answered with SLVERR (a write is not committed)
  kDecErr,      // the same with DECERR
  kNoResponse,  // a read is accepted and never answered; a write is not committed and gets no B
  kLate,        // a read is answered `delay` cycles late (in order: later reads wait behind it)
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
  uint64_t dma_errors = 0;      // bursts answered with SLVERR or DECERR
  uint64_t dma_unanswered = 0;  // bursts never answered (DmaFault::kNoResponse)
  // DMA bursts that touched host memory the driver had freed (a destroyed DmaBuffer), and the
  // first such address: a device that outlives its driver's buffers (0 when none)
  uint64_t dma_to_freed = 0;
  uint64_t dma_to_freed_first_addr = 0;
  // --- reset held at run time (Platform::hold_reset) ---
  uint64_t reset_holds = 0;        // hold_reset(true) calls that asserted reset
  uint64_t reset_held_cycles = 0;  // edges with reset held (the construction-time reset excluded)
  uint64_t mmio_in_reset = 0;      // words answered by the platform while held (also counted in
                                   // mmio_reads / mmio_writes, and as errors in mmio_errors)
  uint64_t dma_abandoned = 0;      // DMA bursts the host-memory slave dropped at the assertion
  uint64_t tx_frames_aborted = 0;  // TX frames cut off by the assertion (not in tx_frames())
  uint64_t tx_beats = 0;
  uint64_t tx_stall_cycles = 0;  // cycles with tvalid=1 and tready=0
  // --- network side ---
  uint64_t rx_frames = 0;                  // frames that entered the RX port completely
  uint64_t rx_beats = 0;                   // s_axis_rx handshakes
  uint64_t rx_stall_cycles = 0;            // cycles with s_axis_rx tvalid=1 and tready=0
  uint64_t wire_dropped_to_bouncer = 0;    // peer frames lost on the wire
  uint64_t wire_dropped_from_bouncer = 0;  // core frames lost on the wire
  uint64_t unclaimed_tx = 0;               // core frames delivered by the wire to no peer
  uint64_t peer_frames_sent = 0;           // frames the peers handed out (before the wire)
  uint64_t peer_frames_received = 0;       // core frames delivered to a peer
};

// Errors: a bad configuration (data_width, clock, memory region, unwritable pcap/FST path) or a
// second Platform in the process throws from the constructor (std::invalid_argument,
// std::runtime_error, std::logic_error). A protocol violation by the RTL during simulation
// (AXI4 / AXI4-Lite / AXI-Stream rules, see sim/platform/axi_dma_adapter.hpp and
// sim/net/tx_sink.hpp) prints "bouncer-sim FATAL: ..." with the cycle, flushes the FST and
// pcap, and aborts.
// Speed of the bare verilated core, the reference for the platform's own speed: a fresh model
// of the given width (its own VerilatedContext; no platform, bus models, network or tracing),
// reset for 16 cycles, then clocked `cycles` cycles with every input idle, two evals per
// cycle as the platform clocks it. Call it while no Platform exists (before constructing
// one): two live models of the same design share scope names in Verilator's runtime.
// std::invalid_argument for a width other than 64 or 512.
struct BareCoreSpeed {
  uint64_t cycles = 0;
  double wall_s = 0.0;  // wall time of the clock loop
  double cpu_s = 0.0;   // process CPU time of the clock loop
  double cycles_per_s() const { return wall_s > 0 ? static_cast<double>(cycles) / wall_s : 0.0; }
  double cycles_per_cpu_s() const { return cpu_s > 0 ? static_cast<double>(cycles) / cpu_s : 0.0; }
};
BareCoreSpeed measure_bare_core(unsigned data_width, uint64_t cycles);

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
  // Every frame that entered the RX port (tlast beat transferred), in order.
  const std::vector<RxFrame>& rx_frames() const;
  const std::vector<MmioWrite>& mmio_writes() const;  // log of every register write
  uint64_t cycles() const;                            // simulated core cycles so far
  double wall_seconds() const;                        // wall time spent inside run()
  double cpu_seconds() const;                         // process CPU time spent inside run()

  // Event-driven wait, from inside a host job (run()); std::logic_error elsewhere. Advances
  // the device one cycle at a time, exactly as repeated hal::Device::wait_cycles(1) would,
  // and returns after the first cycle at which the device ended a DMA write burst (the only
  // way it changes host memory), `until` (if set; checked after every cycle) returned true,
  // or max_cycles cycles passed. Returns the cycles advanced (0 only for max_cycles == 0).
  // A host loop that polls host memory every cycle can sleep here instead whenever a poll
  // found nothing and did no MMIO: what it would see changes only at such a wake-up, and the
  // cycles in between cost only the clock loop (no HAL call, no SystemC time bookkeeping).
  uint64_t wait_event(uint64_t max_cycles, const std::function<bool()>& until = {});
  // Extra frames into the same pcap, timestamped at `cycle`. Written at once unless a frame is
  // being transferred on TX or RX that started at or before `cycle` (then after that frame).
  void write_pcap_frame(std::span<const uint8_t> frame, uint64_t cycle);
  // Writes every frame still held for ordering and reports the first pcap write failure of the
  // run ("" if none, or no pcap). Call after the last run(); frames captured later still go out.
  std::string finish_pcap();
  void set_tx_ready_prob(double p);
  void set_mem_latency(uint64_t cycles, uint64_t jitter);
  // Reads/writes whose burst overlaps [addr_lo, addr_hi) get SLVERR (for fault tests).
  // Several ranges may be active at once.
  void inject_dma_error(uint64_t addr_lo, uint64_t addr_hi);
  // The same with a chosen fault (DmaFault). `delay`: extra cycles for kLate. The first range
  // added that overlaps a burst decides; clear_dma_errors() removes them all.
  void inject_dma_fault(uint64_t addr_lo, uint64_t addr_hi, DmaFault kind, uint64_t delay = 0);

  // --- additions ---
  void clear_dma_errors();
  const PlatformConfig& config() const;
  PlatformStats stats() const;
  // Direct (untimed, side-effect-free) view of host memory, e.g. for checks after run().
  // Empty span if [addr, addr+len) is not inside allocated host memory.
  std::span<std::byte> host_memory(uint64_t addr, size_t len);
  // Level of the irq output after the last simulated edge.
  bool irq() const;

  // Holds the core in reset (rst = 1) from the next edge on, with its clock running, until
  // hold_reset(false); a hung or powered-down device for driver tests. Callable from a host
  // job (between MMIO accesses) or between run() calls; std::logic_error from a TX observer.
  // While held:
  //  - MMIO: the core's AXI4-Lite slave does not answer in reset, so the platform answers in
  //    its place (an interconnect's default slave): each word takes 2 cycles (plus
  //    mmio_cycles), a read returns PlatformConfig::reset_read_value, a write is dropped (not in
  //    mmio_writes()); the TLM response is SLVERR (TLM_GENERIC_ERROR_RESPONSE), which the
  //    hal::Device does not report: the driver only sees the value, as on PCIe.
  //  - DMA: at the assertion the host-memory slave drops every burst in flight (reset together
  //    with the core: reads never answered, writes without WLAST not committed, B responses
  //    not given; PlatformStats::dma_abandoned), then drives its AXI inputs idle.
  //  - TX: a frame being transferred is dropped (tx_frames_aborted); tready is 0.
  //  - RX: unchanged. The port's tready is 1 in reset, so frames arriving while held are
  //    taken and lost; a frame still being transferred at the release enters as a fragment.
  //  - cycles() keeps counting (the core's own CYCLE counter restarts at the release).
  // hold_reset(false) releases rst at the next edge, after at least PlatformConfig::
  // reset_cycles edges in reset (the remainder is run first). Repeated calls with the same
  // value do nothing.
  void hold_reset(bool hold);
  bool reset_held() const;

  // --- network side ---
  // A simulated iWARP initiator whose frames go (through the wire) to the RX port and which
  // receives the core's TX frames addressed to (cfg.ip, cfg.port). It starts (sends its SYN)
  // at max(start_cycle, cycles() + 1). Returns its index. Throws std::invalid_argument if
  // another peer already has the same (ip, port), or for an invalid InitiatorConfig.
  size_t add_peer(peer::InitiatorConfig cfg, uint64_t start_cycle);
  const peer::Initiator& peer(size_t index) const;  // std::out_of_range
  size_t num_peers() const;
  // Every peer reached a terminal state and handed out its last frame (true without peers).
  bool peers_finished() const;
  // A hand-made Ethernet frame (no FCS, 1..65535 bytes) straight into the RX queue, bypassing
  // the wire (no loss, no delay). Its first beat is transferred at the first edge
  // >= max(not_before_cycle, cycles() + 1) at which the port is free and the inter-frame gap
  // has passed; frames become due in (due cycle, call order) order. std::invalid_argument for
  // an empty or oversized frame.
  void inject_rx(std::vector<uint8_t> frame, uint64_t not_before_cycle);
  // Called for every TX frame as it completes (after tx_frames()/pcap, before the wire), inside
  // the clock loop: it may call inject_rx, add_peer, set_* but not run a host job.
  void set_tx_observer(std::function<void(const TxFrame&)> observer);
  void set_drop_hook(DropHook hook);
  // Frames the wire lost, both directions, in the order they were offered.
  const std::vector<DroppedFrame>& dropped_frames() const;
  // PlatformConfig::record_rx_beats: every s_axis_rx beat as seen on the model's pins.
  const std::vector<RxBeat>& rx_port_beats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace bouncer::sim
