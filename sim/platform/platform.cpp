// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Platform: elaborates the SystemC top (HostCpu -> DeviceModel.regs, DeviceModel.dma -> HostMemory)
// and runs host jobs on it; owns the network side (Network: peers + wires), the frame logs and
// the ordered pcap capture.
#include "bouncer/sim/platform.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>

#include "net/network.hpp"
#include "net/pcap_writer.hpp"
#include "platform/device_model.hpp"
#include "platform/host_memory.hpp"
#include "platform/sim_device.hpp"
#include "platform/sim_util.hpp"

namespace bouncer::sim {

namespace {

std::atomic<bool> g_platform_exists{false};

class SimTop : public sc_core::sc_module {
 public:
  HostMemory mem;
  DeviceModel dev;
  HostCpu cpu;

  SimTop(sc_core::sc_module_name name, const PlatformConfig& cfg, std::vector<MmioWrite>& mmio_log,
         PlatformStats& stats, TxSink::FrameFn on_tx, RxSource::FrameFn on_rx, Network& net,
         std::vector<RxBeat>* rx_beats)
      : sc_core::sc_module(name),
        mem("host_mem", cfg.host_mem_base, cfg.host_mem_bytes),
        dev("device", cfg, mmio_log, stats, std::move(on_tx), std::move(on_rx), net, rx_beats),
        cpu("host_cpu", dev.core(), mem, dev.period()) {
    cpu.mmio.bind(dev.regs);
    dev.dma.mem_socket.bind(mem.socket);
  }
};

PlatformConfig checked(PlatformConfig cfg) {
  if (cfg.data_width != 64 && cfg.data_width != 512)
    throw std::invalid_argument("PlatformConfig::data_width must be 64 or 512 (got " +
                                std::to_string(cfg.data_width) + ")");
  if (!(cfg.clock_mhz > 0.0)) throw std::invalid_argument("PlatformConfig::clock_mhz must be > 0");
  if (!(cfg.tx_ready_prob >= 0.0 && cfg.tx_ready_prob <= 1.0))
    throw std::invalid_argument("PlatformConfig::tx_ready_prob must be in [0, 1]");
  if (!(cfg.loss_to_bouncer >= 0.0 && cfg.loss_to_bouncer <= 1.0) ||
      !(cfg.loss_from_bouncer >= 0.0 && cfg.loss_from_bouncer <= 1.0))
    throw std::invalid_argument("PlatformConfig::loss_to/from_bouncer must be in [0, 1]");
  if (!cfg.rx_ifg_cycles) {
    // 12 bytes inter-frame gap + 8 bytes preamble/SFD at line rate, rounded up to whole beats.
    const uint64_t beat = cfg.data_width / 8;
    cfg.rx_ifg_cycles = (20 + beat - 1) / beat;
  }
  if (cfg.host_mem_base % 4096 != 0 || cfg.host_mem_bytes == 0 || cfg.host_mem_bytes % 4096 != 0 ||
      cfg.host_mem_base + cfg.host_mem_bytes < cfg.host_mem_base)
    throw std::invalid_argument(
        "PlatformConfig::host_mem_base/host_mem_bytes must be 4 KiB multiples");
  if (!cfg.fst_path.empty()) {  // fail here, not inside Verilator's trace writer
    std::FILE* f = std::fopen(cfg.fst_path.c_str(), "wb");
    if (f == nullptr) throw std::runtime_error("cannot create FST file '" + cfg.fst_path + "'");
    std::fclose(f);
  }
  return cfg;
}

NetworkConfig network_config(const PlatformConfig& c) {
  NetworkConfig n;
  n.to_bouncer =
      WireConfig{c.loss_to_bouncer, c.delay_to_bouncer, c.wire_seed ^ 0x70B0'0000'0000'0001ull};
  n.from_bouncer =
      WireConfig{c.loss_from_bouncer, c.delay_from_bouncer, c.wire_seed ^ 0xF0B0'0000'0000'0002ull};
  return n;
}

}  // namespace

struct Platform::Impl {
  PlatformConfig cfg;
  PlatformStats stats;
  std::vector<TxFrame> frames;
  std::vector<RxFrame> rx_frames;
  std::vector<RxBeat> rx_beats;
  std::vector<MmioWrite> writes;
  std::unique_ptr<PcapWriter> pcap;
  std::unique_ptr<Network> net;
  std::unique_ptr<SimTop> top;
  std::function<void(const TxFrame&)> tx_observer;
  double wall = 0.0;
  double cpu = 0.0;

  // Frames stamped at or before this cycle can be written: nothing still being transferred
  // started earlier.
  uint64_t capture_horizon() {
    return std::min(top->dev.tx().open_first(), top->dev.rx().open_first());
  }
  void capture(const std::vector<uint8_t>& bytes, uint64_t cycle) {
    if (!pcap) return;
    pcap->enqueue(bytes, cycle);
    pcap->release(capture_horizon());
  }
  void on_tx(std::vector<uint8_t>&& bytes, uint64_t first, uint64_t last) {
    frames.push_back(TxFrame{std::move(bytes), first, last});
    capture(frames.back().bytes, first);
    if (tx_observer) tx_observer(frames.back());
    net->from_bouncer(frames.back().bytes, last);
  }
  void on_rx(std::vector<uint8_t>&& bytes, uint64_t first, uint64_t last) {
    rx_frames.push_back(RxFrame{std::move(bytes), first, last});
    capture(rx_frames.back().bytes, first);
  }
};

Platform::Platform(PlatformConfig cfg) : impl_(std::make_unique<Impl>()) {
  if (g_platform_exists.load()) {
    throw std::logic_error(
        "only one bouncer::sim::Platform per process (SystemC elaborates once per process)");
  }
  impl_->cfg = checked(std::move(cfg));
  Impl& im = *impl_;
  if (!im.cfg.pcap_path.empty())
    im.pcap = std::make_unique<PcapWriter>(im.cfg.pcap_path, im.cfg.clock_mhz);
  g_platform_exists = true;  // from here on SystemC objects are created
  // Temporal decoupling: the host syncs SystemC time at most once per microsecond of device time.
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(1, sc_core::SC_US));
  Impl* p = &im;
  im.net = std::make_unique<Network>(network_config(im.cfg),
                                     [p](std::vector<uint8_t>&& bytes, uint64_t arrival) {
                                       p->top->dev.rx().enqueue(std::move(bytes), arrival);
                                     });
  im.top = std::make_unique<SimTop>(
      "bouncer_sim", im.cfg, im.writes, im.stats,
      [p](std::vector<uint8_t>&& b, uint64_t first, uint64_t last) {
        p->on_tx(std::move(b), first, last);
      },
      [p](std::vector<uint8_t>&& b, uint64_t first, uint64_t last) {
        p->on_rx(std::move(b), first, last);
      },
      *im.net, im.cfg.record_rx_beats ? &im.rx_beats : nullptr);
  set_fatal_hook([this] {
    if (impl_->top) impl_->top->dev.core().flush_trace();
    if (impl_->pcap) impl_->pcap->release_all();
  });
}

Platform::~Platform() {
  set_fatal_hook(nullptr);
  Impl& im = *impl_;
  im.top->dev.core().finish();
  if (im.pcap) im.pcap->release_all();  // frames held behind one that never completed
  im.pcap.reset();
  im.top.reset();
  im.net.reset();
}

void Platform::run(const std::function<void(hal::Device&)>& host) {
  Impl& im = *impl_;
  im.top->cpu.arm(&host);
  const CpuWallClock t0;
  sc_core::sc_start();
  im.wall += t0.wall();
  im.cpu += t0.cpu();
  if (std::exception_ptr e = im.top->cpu.take_exception()) std::rethrow_exception(e);
}

const std::vector<TxFrame>& Platform::tx_frames() const { return impl_->frames; }
const std::vector<MmioWrite>& Platform::mmio_writes() const { return impl_->writes; }
uint64_t Platform::cycles() const { return impl_->top->dev.core().cycle(); }
double Platform::wall_seconds() const { return impl_->wall; }
double Platform::cpu_seconds() const { return impl_->cpu; }

uint64_t Platform::wait_event(uint64_t max_cycles, const std::function<bool()>& until) {
  HostCpu& cpu = impl_->top->cpu;
  if (!cpu.in_job() || impl_->top->dev.core().in_loop())
    throw std::logic_error("Platform::wait_event: only from a host job (Platform::run)");
  return cpu.device().wait_event(max_cycles, until);
}

const std::vector<RxFrame>& Platform::rx_frames() const { return impl_->rx_frames; }

std::string Platform::finish_pcap() {
  if (!impl_->pcap) return {};
  impl_->pcap->release_all();
  return impl_->pcap->error();
}

void Platform::write_pcap_frame(std::span<const uint8_t> frame, uint64_t cycle) {
  impl_->capture(std::vector<uint8_t>(frame.begin(), frame.end()), cycle);
}

void Platform::set_tx_ready_prob(double p) { impl_->top->dev.tx().set_ready_prob(p); }
void Platform::set_mem_latency(uint64_t cycles, uint64_t jitter) {
  impl_->top->dev.dma.set_latency(cycles, jitter);
}
void Platform::inject_dma_error(uint64_t addr_lo, uint64_t addr_hi) {
  impl_->top->dev.dma.add_error_range(addr_lo, addr_hi);
}
void Platform::inject_dma_fault(uint64_t addr_lo, uint64_t addr_hi, DmaFault kind, uint64_t delay) {
  impl_->top->dev.dma.add_fault(addr_lo, addr_hi, kind, delay);
}
void Platform::clear_dma_errors() { impl_->top->dev.dma.clear_error_ranges(); }
const PlatformConfig& Platform::config() const { return impl_->cfg; }

PlatformStats Platform::stats() const {
  PlatformStats s = impl_->stats;
  s.dma_to_freed = impl_->top->mem.freed_accesses();
  s.dma_to_freed_first_addr = impl_->top->mem.first_freed_access();
  s.tx_beats = impl_->top->dev.tx().beats();
  s.tx_stall_cycles = impl_->top->dev.tx().stall_cycles();
  const RxSource& rx = impl_->top->dev.rx();
  s.rx_frames = rx.frames();
  s.rx_beats = rx.beats();
  s.rx_stall_cycles = rx.stall_cycles();
  const NetworkStats& n = impl_->net->stats();
  s.wire_dropped_to_bouncer = n.dropped_to_bouncer;
  s.wire_dropped_from_bouncer = n.dropped_from_bouncer;
  s.unclaimed_tx = n.unclaimed_tx;
  s.peer_frames_sent = n.peer_frames_sent;
  s.peer_frames_received = n.delivered_to_peers;
  return s;
}

std::span<std::byte> Platform::host_memory(uint64_t addr, size_t len) {
  uint8_t* p = impl_->top->mem.ptr(addr, len);
  if (p == nullptr) return {};
  return {reinterpret_cast<std::byte*>(p), len};
}

bool Platform::irq() const { return impl_->top->dev.core().irq(); }

void Platform::hold_reset(bool hold) {
  CoreModel& core = impl_->top->dev.core();
  if (core.in_loop())
    throw std::logic_error(
        "Platform::hold_reset: not callable inside the clock loop (TX observer)");
  core.set_reset(hold);
  // Frames held back behind a TX frame that the assertion cut off can be written now.
  if (hold && impl_->pcap) impl_->pcap->release(impl_->capture_horizon());
}

bool Platform::reset_held() const { return impl_->top->dev.core().reset_held(); }

size_t Platform::add_peer(peer::InitiatorConfig cfg, uint64_t start_cycle) {
  Impl& im = *impl_;
  const size_t idx = im.net->add_peer(std::move(cfg), std::max(start_cycle, cycles() + 1));
  im.top->dev.core().poke();
  return idx;
}

const peer::Initiator& Platform::peer(size_t index) const { return impl_->net->peer(index); }
size_t Platform::num_peers() const { return impl_->net->num_peers(); }
bool Platform::peers_finished() const { return impl_->net->peers_finished(); }

void Platform::inject_rx(std::vector<uint8_t> frame, uint64_t not_before_cycle) {
  if (frame.empty() || frame.size() > RxSource::kMaxFrame)
    throw std::invalid_argument("inject_rx: frame of " + std::to_string(frame.size()) +
                                " bytes (must be 1.." + std::to_string(RxSource::kMaxFrame) + ")");
  Impl& im = *impl_;
  im.top->dev.rx().enqueue(std::move(frame), std::max(not_before_cycle, cycles() + 1));
  im.top->dev.core().poke();
}

void Platform::set_tx_observer(std::function<void(const TxFrame&)> observer) {
  impl_->tx_observer = std::move(observer);
}
void Platform::set_drop_hook(DropHook hook) { impl_->net->set_drop_hook(std::move(hook)); }
const std::vector<DroppedFrame>& Platform::dropped_frames() const { return impl_->net->dropped(); }
const std::vector<RxBeat>& Platform::rx_port_beats() const { return impl_->rx_beats; }

}  // namespace bouncer::sim
