// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// sim_speed: how fast does the co-simulation platform clock bouncer_core?
//   sim_speed [data_width=64] [idle_cycles=20000000] [fst_path|-] [peers=0]
// First the bare verilated core (measure_bare_core: its own model instance, inputs idle, no
// tracing; idle_cycles / 4 cycles), then on the platform: idle cycles (one big wait_cycles, and
// polling in steps of 64 cycles), a host that looks at host memory after every cycle
// (wait_cycles(1), the benches' way) and the same with Platform::wait_event, MMIO register
// reads, and a busy run of NOP WQEs (DMA traffic). Every platform phase is printed with its
// cost relative to the bare core: the ratio of CPU time per simulated cycle (CPU time, not
// wall time, so that other processes on a shared machine do not skew it).
// With peers > 0, that many simulated initiators are added first (distinct addresses, starts
// spread over the first 1000 cycles per 100 peers, RTO 1/4 of idle_cycles): their SYNs and
// retransmissions cross the RX port during the idle runs (the device is not enabled, so
// nobody answers).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "bouncer/regs.hpp"
#include "bouncer/result.hpp"
#include "bouncer/sim/platform.hpp"

namespace {
// libsystemc's main() prints a banner before sc_main unless this is set (also during ctest
// discovery, which runs the binary without the test ENVIRONMENT).
[[maybe_unused]] const int kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// One measured phase: simulated cycles, wall and CPU seconds.
struct Phase {
  uint64_t cycles = 0;
  double wall = 0, cpu = 0;
};
class Meter {
 public:
  explicit Meter(bouncer::hal::Device& dev)
      : dev_(&dev),
        c0_(dev.now_cycles()),
        t0_(std::chrono::steady_clock::now()),
        cpu0_(cpu_now()) {}
  Phase done() const { return {dev_->now_cycles() - c0_, seconds_since(t0_), cpu_now() - cpu0_}; }

 private:
  bouncer::hal::Device* dev_;
  uint64_t c0_;
  std::chrono::steady_clock::time_point t0_;
  double cpu0_;
};
}  // namespace

// libsystemc's main() calls sc_main, declared extern "C" in <sysc/kernel/sc_externs.h>.
extern "C" int sc_main(int argc, char** argv) {
  bouncer::sim::PlatformConfig cfg;
  cfg.data_width = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 0)) : 64;
  const uint64_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 20'000'000;
  if (argc > 3 && std::string(argv[3]) != "-") cfg.fst_path = argv[3];
  const unsigned peers = argc > 4 ? static_cast<unsigned>(std::strtoul(argv[4], nullptr, 0)) : 0;
  if (cfg.data_width != 64 && cfg.data_width != 512) {
    std::fprintf(stderr, "sim_speed: data_width must be 64 or 512\n");
    return 2;
  }
  // the reference, before the platform's model exists
  const bouncer::sim::BareCoreSpeed bare =
      bouncer::sim::measure_bare_core(cfg.data_width, std::max<uint64_t>(n / 4, 1000));
  const auto tc = std::chrono::steady_clock::now();
  bouncer::sim::Platform plat(cfg);
  for (unsigned i = 0; i < peers; ++i) {
    bouncer::peer::InitiatorConfig pc;
    pc.mac = {0x02, 0, 0, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
    pc.peer_mac = {0x02, 0, 0, 0, 0xB0, 0x01};
    pc.ip = 0x0A010000u + i;
    pc.peer_ip = 0x0A000001;
    pc.port = static_cast<uint16_t>(40000 + i % 20000);
    pc.peer_port = 4791;
    pc.isn = 0x1000u * i;
    pc.rto_cycles = std::max<uint64_t>(n / 4, 1);
    plat.add_peer(pc, 1 + 10ull * i);
  }
  const double t_construct = seconds_since(tc);

  Phase big, poll, mmio, step1, event;
  uint64_t mmio_n = 0, busy_wqes = 0;
  plat.run([&](bouncer::hal::Device& dev) {
    Meter m(dev);
    dev.wait_cycles(n);
    big = m.done();

    m = Meter(dev);
    for (uint64_t done = 0; done < n; done += 64) dev.wait_cycles(64);
    poll = m.done();

    m = Meter(dev);
    uint32_t acc = 0;
    for (mmio_n = 0; mmio_n < 200'000; ++mmio_n) acc ^= dev.read32(bouncer::regs::reg::ID);
    mmio = m.done();
    if (acc == 0xFFFFFFFFu) std::puts("");  // keep the loop

    // Busy: NOP WQEs through the SQ (WQE DMA read + CQE DMA write each). The host looks at the
    // CQ after every cycle, first stepping with wait_cycles(1), then sleeping in wait_event
    // between looks (the same cycles: it wakes at every DMA write).
    namespace R = bouncer::regs;
    constexpr uint32_t kLog2 = 8, kN = 1u << kLog2, kHalf = kN / 2 - 1;
    auto sq = dev.alloc_dma(kN * R::sq_wqe::kBytes, 64);
    auto cq = dev.alloc_dma(kN * R::cqe::kBytes, 32);
    if (!sq.ok() || !cq.ok()) return;
    auto w32 = [&](uint32_t off, uint64_t v) {
      dev.write32(off, static_cast<uint32_t>(v));
      dev.write32(off + 4, static_cast<uint32_t>(v >> 32));
    };
    w32(R::reg::SQ_BASE_LO, (*sq)->device_addr());
    dev.write32(R::reg::SQ_SIZE, kLog2);
    w32(R::reg::CQ_BASE_LO, (*cq)->device_addr());
    dev.write32(R::reg::CQ_SIZE, kLog2);
    dev.write32(R::reg::CTRL, 1);
    for (uint32_t i = 0; i < 2 * kHalf; ++i) {
      auto wqe = (*sq)->bytes().subspan(i * R::sq_wqe::kBytes, R::sq_wqe::kBytes);
      R::put(wqe, R::sq_wqe::WR_ID, i);
      R::put(wqe, R::sq_wqe::OPCODE, static_cast<uint64_t>(R::SqOp::NOP));
      R::put(wqe, R::sq_wqe::VALID, 1);
    }
    auto cqe_valid = [&](uint32_t i) {
      return R::get((*cq)->bytes().subspan(i * R::cqe::kBytes, R::cqe::kBytes), R::cqe::VALID) == 1;
    };
    constexpr uint64_t kLimit = 50'000'000;
    m = Meter(dev);
    dev.write32(R::reg::SQ_DB, kHalf);
    for (uint64_t c = 0; !cqe_valid(kHalf - 1) && c < kLimit; ++c) dev.wait_cycles(1);
    step1 = m.done();
    m = Meter(dev);
    dev.write32(R::reg::SQ_DB, 2 * kHalf);
    for (uint64_t c = 0; !cqe_valid(2 * kHalf - 1) && c < kLimit;) c += plat.wait_event(kLimit - c);
    event = m.done();
    busy_wqes = cqe_valid(2 * kHalf - 1) ? kHalf : 0;
  });

  const double bare_cpc = bare.cpu_s / static_cast<double>(bare.cycles);  // CPU s per cycle
  auto line = [&](const char* what, const Phase& p) {
    const double c = static_cast<double>(p.cycles);
    std::printf("  %-44s %6.3f Mcycles/s (%6.3f per CPU s)  cost %.2fx bare\n", what,
                p.wall > 0 ? c / p.wall / 1e6 : 0.0, p.cpu > 0 ? c / p.cpu / 1e6 : 0.0,
                c > 0 && bare_cpc > 0 ? p.cpu / c / bare_cpc : 0.0);
  };
  std::printf("sim_speed: data_width=%u%s\n", cfg.data_width,
              cfg.fst_path.empty() ? "" : " (FST tracing on: the bare core is not traced)");
  if (peers > 0) {
    const auto st = plat.stats();
    std::printf(
        "  %u peers: platform + peers constructed in %.3f s; %llu peer frames, %llu RX frames, "
        "%llu RX beats\n",
        peers, t_construct, static_cast<unsigned long long>(st.peer_frames_sent),
        static_cast<unsigned long long>(st.rx_frames),
        static_cast<unsigned long long>(st.rx_beats));
  }
  std::printf("  %-44s %6.3f Mcycles/s (%6.3f per CPU s)\n",
              "bare verilated core (own instance, idle)", bare.cycles_per_s() / 1e6,
              bare.cycles_per_cpu_s() / 1e6);
  line("idle, one wait_cycles(n)", big);
  line("idle, wait_cycles(64) loop", poll);
  line("MMIO read32 (b_transport + AXI4-Lite)", mmio);
  if (busy_wqes > 0) {
    line("busy NOPs, host looks every cycle (wait 1)", step1);
    line("busy NOPs, host sleeps in wait_event", event);
    std::printf(
        "  MMIO: %.1f cycles/read; busy: %llu NOP WQEs per run (DMA read + CQE write "
        "each, memory latency %llu), %.1f cycles/WQE\n",
        static_cast<double>(mmio.cycles) / static_cast<double>(mmio_n),
        static_cast<unsigned long long>(busy_wqes),
        static_cast<unsigned long long>(cfg.mem_latency_cycles),
        static_cast<double>(step1.cycles) / static_cast<double>(busy_wqes));
  } else {
    std::printf("  busy: the NOP WQEs did not complete (RTL not ready?)\n");
  }
  std::printf("  total simulated cycles %llu in %.3f s wall (%.3f s CPU) inside run()\n",
              static_cast<unsigned long long>(plat.cycles()), plat.wall_seconds(),
              plat.cpu_seconds());
  return 0;
}
