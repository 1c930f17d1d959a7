// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// Platform: elaborates the SystemC top (HostCpu -> DeviceModel.regs, DeviceModel.dma -> HostMemory)
// and runs host jobs on it.
#include "bouncer/sim/platform.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <systemc>
#include <tlm>
#include <utility>

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
         std::vector<TxFrame>& frames, PlatformStats& stats, PcapWriter* pcap)
      : sc_core::sc_module(name),
        mem("host_mem", cfg.host_mem_base, cfg.host_mem_bytes),
        dev("device", cfg, mmio_log, frames, stats, pcap),
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

}  // namespace

struct Platform::Impl {
  PlatformConfig cfg;
  PlatformStats stats;
  std::vector<TxFrame> frames;
  std::vector<MmioWrite> writes;
  std::unique_ptr<PcapWriter> pcap;
  std::unique_ptr<SimTop> top;
  double wall = 0.0;
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
  im.top = std::make_unique<SimTop>("bouncer_sim", im.cfg, im.writes, im.frames, im.stats,
                                    im.pcap.get());
  set_fatal_hook([this] {
    if (impl_->top) impl_->top->dev.core().flush_trace();
    if (impl_->pcap) impl_->pcap->flush();
  });
}

Platform::~Platform() {
  set_fatal_hook(nullptr);
  Impl& im = *impl_;
  im.top->dev.core().finish();
  im.pcap.reset();
  im.top.reset();
}

void Platform::run(const std::function<void(hal::Device&)>& host) {
  Impl& im = *impl_;
  im.top->cpu.arm(&host);
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start();
  im.wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::exception_ptr e = im.top->cpu.take_exception()) std::rethrow_exception(e);
}

const std::vector<TxFrame>& Platform::tx_frames() const { return impl_->frames; }
const std::vector<MmioWrite>& Platform::mmio_writes() const { return impl_->writes; }
uint64_t Platform::cycles() const { return impl_->top->dev.core().cycle(); }
double Platform::wall_seconds() const { return impl_->wall; }

void Platform::write_pcap_frame(std::span<const uint8_t> frame, uint64_t cycle) {
  if (impl_->pcap) impl_->pcap->write(frame, cycle);
}

void Platform::set_tx_ready_prob(double p) { impl_->top->dev.tx().set_ready_prob(p); }
void Platform::set_mem_latency(uint64_t cycles, uint64_t jitter) {
  impl_->top->dev.dma.set_latency(cycles, jitter);
}
void Platform::inject_dma_error(uint64_t addr_lo, uint64_t addr_hi) {
  impl_->top->dev.dma.add_error_range(addr_lo, addr_hi);
}
void Platform::clear_dma_errors() { impl_->top->dev.dma.clear_error_ranges(); }
const PlatformConfig& Platform::config() const { return impl_->cfg; }

PlatformStats Platform::stats() const {
  PlatformStats s = impl_->stats;
  s.tx_beats = impl_->top->dev.tx().beats();
  s.tx_stall_cycles = impl_->top->dev.tx().stall_cycles();
  return s;
}

std::span<std::byte> Platform::host_memory(uint64_t addr, size_t len) {
  uint8_t* p = impl_->top->mem.ptr(addr, len);
  if (p == nullptr) return {};
  return {reinterpret_cast<std::byte*>(p), len};
}

bool Platform::irq() const { return impl_->top->dev.core().irq(); }

}  // namespace bouncer::sim
