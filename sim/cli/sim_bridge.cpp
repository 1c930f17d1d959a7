// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim --mode bridge`: the co-simulated RNIC on a real network port. The RX/TX port of
// the verilated core is bridged to a QEMU guest's NIC (`-netdev dgram` on 127.0.0.1, one UDP
// datagram = one Ethernet frame), so a real initiator (Linux siw + librdmacm) connects to it.
// The host side is the ordinary driver: listen, take CONNECT_REQUESTs off the event queue,
// reject each with its own private data. Everything the host sees is printed as one JSON
// object per line on stdout (machine-readable; tb/interop parses it); the rest goes to stderr.
//
// Time: the simulation runs as fast as it can (about 0.3-1 M core cycles per wall second,
// i.e. several hundred times slower than a 250 MHz card) and never waits for wall time,
// except that when no frame has moved for kIdleCycles it sleeps up to kIdleSleepMs in the
// socket between kChunkCycles slices. The guest's timers run on wall time, ours on cycles;
// sim_timers_for_bridge() scales ours so they are of the same order in wall time.
#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <ctime>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "bouncer/cm.hpp"
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

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

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

std::string hex(std::span<const std::byte> b) {
  std::string s;
  s.reserve(b.size() * 2);
  for (std::byte x : b) s += fmt::format("{:02x}", std::to_integer<unsigned>(x));
  return s;
}

std::vector<std::byte> bytes_of(const std::string& s) {
  std::vector<std::byte> v(s.size());
  for (size_t i = 0; i < s.size(); ++i) v[i] = std::byte(static_cast<uint8_t>(s[i]));
  return v;
}

void emit(const std::string& json) {
  fmt::print("{}\n", json);
  std::fflush(stdout);
}

}  // namespace

std::vector<std::byte> bridge_reject_pd(const std::string& text, unsigned n) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 1 < text.size() && text[i + 1] == 'n') {
      out += std::to_string(n);
      ++i;
    } else {
      out += text[i];
    }
  }
  return bytes_of(out);
}

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
  const std::string pd_text = o.pd_text.value_or(kBridgeDefaultPd);
  const std::vector<std::byte> tmpl = bytes_of(o.template_pd);

  std::optional<sim::DgramBridge> bridge;
  try {
    bridge.emplace(local, remote);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: {}\n", e.what());
    return 1;
  }
  g_stop = false;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  sim::PlatformConfig pc;
  pc.data_width = o.width;
  pc.mem_latency_cycles = o.mem_latency;
  pc.seed = o.seed;
  pc.pcap_path = o.pcap;
  pc.fst_path = o.fst;

  int rc = 0;
  unsigned requests = 0, rejects_ok = 0;
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
    std::string stop_reason = "signal";
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
      Device& d = *dev;
      Cm cm(d);
      if (!o.no_listener) {
        ListenOptions lo;
        lo.backlog = static_cast<uint16_t>(o.backlog);
        lo.fin_policy = fin_policy_of(o.fin_policy);
        lo.auto_reject = auto_reject_of(o.auto_reject);
        lo.template_pd = tmpl;
        lo.unsafe_wire_pd = o.unsafe_wire_pd;
        lo.local_mac = kBridgeMac;
        auto lid = cm.listen(kBridgeIp, o.port, lo);
        if (!lid) {
          fmt::print(stderr, "bouncer sim: listen: {}\n", lid.error().message);
          rc = 1;
          return;
        }
      }
      emit(fmt::format(
          R"({{"event":"listening","ip":"{}","mac":"02:00:00:00:00:02","port":{},"listener":{},)"
          R"("fin_policy":"{}","auto_reject":"{}","template_pd_hex":"{}","bridge_local":{},)"
          R"("bridge_remote":{},"width":{}}})",
          ip_str(kBridgeIp), o.port, o.no_listener ? "false" : "true", o.fin_policy, o.auto_reject,
          hex(tmpl), bridge->local_port(), bridge->remote_port(), o.width));

      const uint64_t c0 = hal.now_cycles();
      const std::clock_t cpu0 = std::clock();
      for (;;) {
        // Frames from the guest enter the RX port as soon as the port is free.
        const bool idle = hal.now_cycles() - last_activity > kIdleCycles;
        auto frames = bridge->receive(idle ? kIdleSleepMs : 0);
        if (!frames.empty()) last_activity = hal.now_cycles();
        for (auto& f : frames) platform.inject_rx(std::move(f), 0);

        auto ev = cm.poll_event();
        if (!ev) {
          fmt::print(stderr, "bouncer sim: poll_event: {}\n", ev.error().message);
          rc = 1;
          break;
        }
        if (*ev) {
          Event& e = **ev;
          if (auto* cr = std::get_if<ConnectRequest>(&e)) {
            ++requests;
            const auto pd = bridge_reject_pd(pd_text, requests);
            emit(fmt::format(
                R"({{"event":"connect_request","n":{},"cm_id":{},"remote":"{}:{}","local":"{}:{}",)"
                R"("rev":{},"flags":{},"ird_ord":{},"pd_len":{},"pd_hex":"{}","cycle":{}}})",
                requests, cr->cm_id, ip_str(cr->tuple.remote_ip), cr->tuple.remote_port,
                ip_str(cr->tuple.local_ip), cr->tuple.local_port, cr->rev, cr->flags,
                cr->ird_ord ? fmt::format("{}", *cr->ird_ord) : "null", cr->private_data.size(),
                hex(cr->private_data), hal.now_cycles()));
            RejectOptions ro;
            ro.wr_id = requests;
            ro.unsafe_wire_pd = o.unsafe_wire_pd;
            auto r = cm.reject(cr->handle, pd, ro);
            if (r) ++rejects_ok;
            emit(fmt::format(
                R"({{"event":"reject","n":{},"cm_id":{},"status":"{}","pd_len":{},"pd_hex":"{}",)"
                R"("cycle":{}}})",
                requests, cr->cm_id, r ? "ok" : r.error().message, pd.size(), hex(pd),
                hal.now_cycles()));
            last_activity = hal.now_cycles();
          } else if (auto* pr = std::get_if<PeerReset>(&e)) {
            auto r = cm.reject(pr->handle, {});  // frees the cm_id (CTX/PEER_RESET)
            emit(fmt::format(R"({{"event":"peer_reset","cm_id":{},"cleanup":"{}"}})", pr->cm_id,
                             r ? "ok" : r.error().message));
          } else if (auto* me = std::get_if<MpaError>(&e)) {
            emit(fmt::format(R"({{"event":"mpa_error","cm_id":{},"remote":"{}:{}","reason":"{}"}})",
                             me->cm_id, ip_str(me->tuple.remote_ip), me->tuple.remote_port,
                             regs::name(me->reason)));
          }
          continue;
        }
        if (g_stop) break;
        if (o.connections_limit != 0 && requests >= o.connections_limit) {
          const CmStats s = cm.stats();
          if (s.nodes_held == 0 && s.nodes_awaiting_terminal == 0 && d.cm_conns() == 0) {
            stop_reason = "connections";
            break;
          }
        }
        if (o.max_wall_s > 0 && wall() > o.max_wall_s) {
          stop_reason = "max-wall";
          break;
        }
        hal.wait_cycles(kChunkCycles);
      }
      const CmStats s = cm.stats();
      std::string counters;
      for (const auto& st : d.read_stats()) {
        if (st.offset < regs::reg::STAT_RX_FRAMES || st.value == 0) continue;
        counters += fmt::format("{}\"{}\":{}", counters.empty() ? "" : ",", st.name + 5, st.value);
      }
      const sim::DgramBridgeStats& b = bridge->stats();
      const uint64_t cycles = hal.now_cycles() - c0;
      const double cpu = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
      emit(fmt::format(
          R"({{"event":"summary","stop":"{}","requests":{},"rejects_ok":{},"cm_conns":{},)"
          R"("terminal_closed":{},"terminal_reset":{},"terminal_rtx_exhausted":{},)"
          R"("terminal_timeout":{},"frames_to_bouncer":{},"frames_from_bouncer":{},)"
          R"("send_errors":{},"foreign_datagrams":{},"cycles":{},"wall_s":{:.3f},)"
          R"("cycles_per_s":{:.0f},"cpu_s":{:.3f},"cycles_per_cpu_s":{:.0f},)"
          R"("bare_cycles_per_cpu_s":{:.0f},"cost_vs_bare":{:.3f},"hw":{{{}}}}})",
          stop_reason, requests, rejects_ok, d.cm_conns(), s.terminal.closed, s.terminal.reset,
          s.terminal.rtx_exhausted, s.terminal.timeout, b.received, b.sent, b.send_errors,
          b.foreign, cycles, wall(), wall() > 0 ? static_cast<double>(cycles) / wall() : 0.0, cpu,
          cpu > 0 ? static_cast<double>(cycles) / cpu : 0.0, speed.bare().cycles_per_cpu_s(),
          speed.cost(cycles, cpu), counters));
      if (!save_capture(d, o, pc.clock_mhz).empty()) rc = 1;
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
