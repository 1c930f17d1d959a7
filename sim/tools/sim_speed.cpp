// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// sim_speed: how fast does the co-simulation platform clock bouncer_core?
//   sim_speed [data_width=64] [idle_cycles=20000000] [fst_path|-] [peers=0]
// Prints simulated cycles per wall second for idle cycles (one big wait_cycles, and polling in
// steps of 64 cycles), MMIO register reads per second, and a busy run of NOP WQEs (DMA traffic).
// With peers > 0, that many simulated initiators are added first (distinct addresses, starts
// spread over the first 1000 cycles per 100 peers, RTO 1/4 of idle_cycles): their SYNs and
// retransmissions cross the RX port during the idle runs (the device is not enabled, so
// nobody answers).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

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
}  // namespace

// libsystemc's main() calls sc_main, declared extern "C" in <sysc/kernel/sc_externs.h>.
extern "C" int sc_main(int argc, char** argv) {
  bouncer::sim::PlatformConfig cfg;
  cfg.data_width = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 0)) : 64;
  const uint64_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : 20'000'000;
  if (argc > 3 && std::string(argv[3]) != "-") cfg.fst_path = argv[3];
  const unsigned peers = argc > 4 ? static_cast<unsigned>(std::strtoul(argv[4], nullptr, 0)) : 0;
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

  double t_big = 0, t_poll = 0, t_mmio = 0;
  uint64_t mmio_n = 0, mmio_cycles = 0;
  double t_busy = 0;
  uint64_t busy_cycles = 0, busy_wqes = 0;
  plat.run([&](bouncer::hal::Device& dev) {
    auto t0 = std::chrono::steady_clock::now();
    dev.wait_cycles(n);
    t_big = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    for (uint64_t done = 0; done < n; done += 64) dev.wait_cycles(64);
    t_poll = seconds_since(t0);

    const uint64_t c0 = dev.now_cycles();
    t0 = std::chrono::steady_clock::now();
    uint32_t acc = 0;
    for (mmio_n = 0; mmio_n < 200'000; ++mmio_n) acc ^= dev.read32(bouncer::regs::reg::ID);
    t_mmio = seconds_since(t0);
    mmio_cycles = dev.now_cycles() - c0;
    if (acc == 0xFFFFFFFFu) std::puts("");  // keep the loop

    // Busy: NOP WQEs through the SQ (WQE DMA read + CQE DMA write each), polled like a driver.
    namespace R = bouncer::regs;
    constexpr uint32_t kLog2 = 8, kN = 1u << kLog2;
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
    const uint64_t b0 = dev.now_cycles();
    t0 = std::chrono::steady_clock::now();
    for (uint32_t i = 0; i < kN - 1; ++i) {
      auto wqe = (*sq)->bytes().subspan(i * R::sq_wqe::kBytes, R::sq_wqe::kBytes);
      R::put(wqe, R::sq_wqe::WR_ID, i);
      R::put(wqe, R::sq_wqe::OPCODE, static_cast<uint64_t>(R::SqOp::NOP));
      R::put(wqe, R::sq_wqe::VALID, 1);
    }
    dev.write32(R::reg::SQ_DB, kN - 1);
    auto last = (*cq)->bytes().subspan((kN - 2) * R::cqe::kBytes, R::cqe::kBytes);
    while (R::get(last, R::cqe::VALID) != 1 && dev.now_cycles() - b0 < 100'000'000)
      dev.wait_cycles(16);
    t_busy = seconds_since(t0);
    busy_cycles = dev.now_cycles() - b0;
    busy_wqes = R::get(last, R::cqe::VALID) == 1 ? kN - 1 : 0;
  });

  std::printf("sim_speed: data_width=%u%s\n", cfg.data_width,
              cfg.fst_path.empty() ? "" : " (FST tracing on)");
  if (peers > 0) {
    const auto st = plat.stats();
    std::printf(
        "  %u peers: platform + peers constructed in %.3f s; %llu peer frames, %llu RX frames, "
        "%llu RX beats\n",
        peers, t_construct, static_cast<unsigned long long>(st.peer_frames_sent),
        static_cast<unsigned long long>(st.rx_frames),
        static_cast<unsigned long long>(st.rx_beats));
  }
  std::printf("  idle, one wait_cycles(%llu):  %.2f Mcycles/s\n",
              static_cast<unsigned long long>(n), static_cast<double>(n) / t_big / 1e6);
  std::printf("  idle, wait_cycles(64) loop:   %.2f Mcycles/s\n",
              static_cast<double>(n) / t_poll / 1e6);
  std::printf(
      "  MMIO read32 (TLM b_transport + AXI4-Lite handshake): %.2f M reads/s, %.1f cycles/read, "
      "%.2f Mcycles/s\n",
      static_cast<double>(mmio_n) / t_mmio / 1e6,
      static_cast<double>(mmio_cycles) / static_cast<double>(mmio_n),
      static_cast<double>(mmio_cycles) / t_mmio / 1e6);
  if (busy_wqes > 0) {
    std::printf(
        "  busy, %llu NOP WQEs (DMA read + CQE write each, latency %llu): %.2f Mcycles/s, %.1f "
        "cycles/WQE\n",
        static_cast<unsigned long long>(busy_wqes),
        static_cast<unsigned long long>(cfg.mem_latency_cycles),
        static_cast<double>(busy_cycles) / t_busy / 1e6,
        static_cast<double>(busy_cycles) / static_cast<double>(busy_wqes));
  } else {
    std::printf("  busy: the NOP WQEs did not complete (RTL not ready?)\n");
  }
  std::printf("  total simulated cycles %llu in %.3f s wall inside run()\n",
              static_cast<unsigned long long>(plat.cycles()), plat.wall_seconds());
  return 0;
}
