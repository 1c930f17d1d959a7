// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim --mode bridge`: the co-simulated RNIC on a real network port. The RX/TX port of
// the verilated core is bridged to a QEMU guest's NIC (`-netdev dgram` on 127.0.0.1, one UDP
// datagram = one Ethernet frame), so a real initiator (Linux siw + librdmacm) connects to it.
// The host side is the serve loop of `bouncer card serve` (hostsw/cli/serve.hpp): listen, take
// CONNECT_REQUESTs off the event queue, reject each with its own private data. Everything the
// host sees is printed as one JSON object per line on stdout (machine-readable; tb/interop
// parses it); the rest goes to stderr. This file adds the bridge: its hooks move the guest's
// frames into the RX port and let simulated time pass, and its summary fields.
//
// Time: the simulation runs as fast as it can (about 0.3-1 M core cycles per wall second,
// i.e. several hundred times slower than a 250 MHz card) and never waits for wall time,
// except that when no frame has moved for kIdleCycles it sleeps up to kIdleSleepMs in the
// socket between kChunkCycles slices. The guest's timers run on wall time, ours on cycles;
// sim_timers_for_bridge() scales ours so they are of the same order in wall time.
#include <fmt/core.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/sim/dgram_bridge.hpp"
#include "bouncer/sim/platform.hpp"
#include "sim_cmd.hpp"

namespace bouncer::cli {

namespace {

constexpr uint32_t kBridgeIp = 0x0A000002;  // 10.0.0.2 (the guest is 10.0.0.1)
constexpr MacAddr kBridgeMac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr uint64_t kChunkCycles = 4096;
constexpr uint64_t kIdleCycles = 200'000;
constexpr int kIdleSleepMs = 2;

// Ticks of 64 cycles. At ~0.5 M cycles per wall second: RTO ~0.6 s, MPA request ~16 s
// after the handshake, FIN_WAIT2 ~32 s, TIME_WAIT ~0.1 s.
TimerConfig sim_timers_for_bridge() {
  TimerConfig t;
  t.tick_cycles = 64;
  t.rto_init = 300'000 / 64;
  t.rto_max = 2'400'000 / 64;
  t.rtx_max = 6;
  t.mpa_timeout = 8'000'000 / 64;
  t.fin_timeout = 16'000'000 / 64;
  t.time_wait = 50'000 / 64;
  return t;
}

}  // namespace

int run_bridge_mode(const SimOptions& o) {
  std::string err;
  const uint16_t local = sim::parse_loopback_port(o.bridge_local, &err);
  if (local == 0) {
    fmt::print(stderr, "bouncer sim: --bridge-local {}\n", err);
    return 1;
  }
  const uint16_t remote = sim::parse_loopback_port(o.bridge_remote, &err);
  if (remote == 0) {
    fmt::print(stderr, "bouncer sim: --bridge-remote {}\n", err);
    return 1;
  }
  if (o.auto_reject == "backlog" && o.backlog == 0) {
    fmt::print(stderr, "bouncer sim: --auto-reject backlog needs --backlog N (N > 0)\n");
    return 1;
  }
  const std::string pd_text = o.pd_text.value_or(kServeDefaultPd);

  std::optional<sim::DgramBridge> bridge;
  try {
    bridge.emplace(local, remote);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: {}\n", e.what());
    return 1;
  }
  clear_serve_stop();
  install_serve_signals();

  sim::PlatformConfig pc;
  pc.data_width = o.width;
  pc.clock_mhz = o.clock_mhz;
  pc.mem_latency_cycles = o.mem_latency;
  pc.seed = o.seed;
  pc.pcap_path = o.pcap;
  pc.fst_path = o.fst;

  ServeConfig sc;
  ServeListener l;
  l.ip = kBridgeIp;
  l.port = o.port;
  l.mac = kBridgeMac;
  l.pd = pd_text;
  l.template_pd = o.template_pd;
  l.fin_policy = o.fin_policy;
  l.auto_reject = o.auto_reject;
  l.backlog = o.backlog;
  sc.listeners.push_back(l);
  sc.install = !o.no_listener;
  sc.unsafe_wire_pd = o.unsafe_wire_pd;
  sc.stop_after = o.connections_limit;
  sc.max_wall_s = o.max_wall_s;

  int rc = 0;
  uint64_t last_activity = 0;
  try {
    const SimSpeed speed(pc.data_width);
    sim::Platform platform(pc);
    platform.set_tx_observer([&](const sim::TxFrame& f) {
      bridge->send(f.bytes);
      last_activity = f.last_cycle;
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto wall = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    platform.run([&](hal::Device& hal) {
      DeviceConfig dc;
      dc.timers = sim_timers_for_bridge();
      if (o.mac_filter)
        dc.tcp = TcpConfig{.promisc = false, .port_mac = kBridgeMac, .port_ip = kBridgeIp};
      auto dev = open_device(hal, dc, "bouncer sim");
      if (!dev) {
        rc = 1;
        return;
      }
      uint64_t c0 = 0;
      std::clock_t cpu0 = 0;
      ServeHooks h;
      h.who = "bouncer sim";
      h.listening_extra = fmt::format(R"(,"bridge_local":{},"bridge_remote":{},"width":{})",
                                      bridge->local_port(), bridge->remote_port(), o.width);
      h.started = [&] {
        c0 = hal.now_cycles();
        cpu0 = std::clock();
      };
      // Frames from the guest enter the RX port as soon as the port is free.
      h.before_poll = [&] {
        const bool idle = hal.now_cycles() - last_activity > kIdleCycles;
        auto frames = bridge->receive(idle ? kIdleSleepMs : 0);
        if (!frames.empty()) last_activity = hal.now_cycles();
        for (auto& f : frames) platform.inject_rx(std::move(f), 0);
      };
      h.after_request = [&] { last_activity = hal.now_cycles(); };
      h.idle = [&] { hal.wait_cycles(kChunkCycles); };
      h.summary_extra = [&] {
        const sim::DgramBridgeStats& b = bridge->stats();
        const uint64_t cycles = hal.now_cycles() - c0;
        const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
        return fmt::format(R"(,"frames_to_bouncer":{},"frames_from_bouncer":{},)"
                           R"("send_errors":{},"foreign_datagrams":{},"cycles":{},"wall_s":{:.3f},)"
                           R"("cycles_per_s":{:.0f},"cpu_s":{:.3f},"cycles_per_cpu_s":{:.0f},)"
                           R"("bare_cycles_per_cpu_s":{:.0f},"cost_vs_bare":{:.3f})",
                           b.received, b.sent, b.send_errors, b.foreign, cycles, wall(),
                           wall() > 0 ? static_cast<double>(cycles) / wall() : 0.0, cpu,
                           cpu > 0 ? static_cast<double>(cycles) / cpu : 0.0,
                           speed.bare().cycles_per_cpu_s(), speed.cost(cycles, cpu));
      };
      if (serve(*dev, sc, h) != 0) rc = 1;
      if (!save_capture(*dev, o, pc.clock_mhz).empty()) rc = 1;
    });
    if (const std::string err = platform.finish_pcap(); !err.empty()) {
      fmt::print(stderr, "bouncer sim: --pcap: {}\n", err);
      rc = 1;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
