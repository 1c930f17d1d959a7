// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include "sim_cmd.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "bouncer/cm_diag.hpp"
#include "bouncer/device.hpp"
#include "bouncer/sim/platform.hpp"
#include "output_file.hpp"

namespace bouncer::cli {

namespace {

constexpr unsigned kDefaultPdLens[] = {7, 33, 64, 200};
constexpr uint16_t kLocalPort = 20049;  // NFS/RDMA
constexpr uint16_t kFirstRemotePort = 49152;
constexpr uint8_t kFlagCrc = 0x40;
constexpr uint8_t kFlagEnhanced = 0x10;
// Request IRD/ORD word for rev 2: ctrl_ird = peer-to-peer (A) | IRD 16, ctrl_ord = RDMA Read
// RTR (D) | ORD 16, as an irdma or siw initiator would send it.
constexpr uint32_t kReqIrdOrd = (uint32_t{0x8000 | 16} << 16) | (0x4000 | 16);

uint32_t ipv4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

CmContext make_context(unsigned i, const SimOptions& o, std::mt19937_64& rng) {
  CmContext c;
  c.loc_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  c.rem_mac = {0x02, 0x00, 0x00, 0x01, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)};
  if (o.vlan) {
    c.vlan_en = true;
    c.vlan_tci = static_cast<uint16_t>(*o.vlan & 0x0FFF);
  }
  c.loc_ip = ipv4(10, 0, 0, 1);
  c.rem_ip = ipv4(10, 0, i / 250, 2 + i % 250);
  c.loc_port = kLocalPort;
  c.rem_port = static_cast<uint16_t>(kFirstRemotePort + i);
  c.rcv_wnd = 0xFFFF;
  c.ttl = 64;
  c.tos = 0;
  c.snd_nxt = static_cast<uint32_t>(rng());
  c.rcv_nxt = static_cast<uint32_t>(rng());
  c.ip_id = static_cast<uint16_t>(rng());
  c.req_rev = static_cast<uint8_t>(o.rev);
  c.req_flags = kFlagCrc;
  if (o.rev == 2) {
    c.req_flags |= kFlagEnhanced;
    c.req_ird_ord = kReqIrdOrd;
  }
  return c;
}

}  // namespace

std::vector<std::byte> peer_template_pd(const SimOptions& o) {
  const std::string base = "bouncer: refused by listener policy";
  const size_t len = std::min<size_t>(o.pd_len.value_or(base.size()), 508);
  std::vector<std::byte> pd(len);
  for (size_t k = 0; k < len; ++k) pd[k] = std::byte(static_cast<uint8_t>(base[k % base.size()]));
  return pd;
}

std::vector<std::byte> reject_pd(unsigned i, const SimOptions& o) {
  const std::string base = o.pd_text ? *o.pd_text : fmt::format("bouncer: go away #{}", i);
  size_t len = base.size();
  if (o.pd_len) {
    len = *o.pd_len;
  } else if (!o.pd_text) {
    len = kDefaultPdLens[i % std::size(kDefaultPdLens)];
  }
  std::vector<std::byte> pd(len);
  for (size_t k = 0; k < len; ++k) {
    // Pad by repeating the text (separated by a space), cut at `len`.
    const size_t period = base.size() + 1;
    const size_t j = base.empty() ? 0 : k % period;
    pd[k] = std::byte(static_cast<uint8_t>(base.empty() || j == base.size() ? ' ' : base[j]));
  }
  return pd;
}

bool prepare_outputs(const SimOptions& o) {
  for (const auto& [opt, path] : {std::pair{"--pcap", o.pcap}, std::pair{"--capture", o.capture},
                                  std::pair{"--fst", o.fst}}) {
    if (auto e = check_output_file(opt, path)) {
      fmt::print(stderr, "bouncer sim: {}\n", *e);
      return false;
    }
  }
  return true;
}

namespace {

struct Totals {
  unsigned ok = 0, failed = 0, push = 0, db = 0, pshdrop = 0, pd_ok = 0;
  uint64_t lat_sum = 0;
  uint32_t lat_min = std::numeric_limits<uint32_t>::max(), lat_max = 0;
};

}  // namespace

void add_sim_options(CLI::App& app, SimOptions& o) {
  app.add_option("--mode", o.mode,
                 "peer: simulated initiators connect, the host rejects their requests; "
                 "context: the host writes the contexts (no peers); bridge: the network port is "
                 "bridged to a QEMU guest (-netdev dgram on 127.0.0.1) and a real initiator "
                 "connects (JSON lines on stdout; see docs/interop.md); selftest: the card's "
                 "loopback self-test (CTRL.LOOPBACK) on the co-simulated core; capi: the C API's "
                 "example server (hostsw/capi/example) rejects simulated initiators")
      ->check(CLI::IsMember({"peer", "context", "bridge", "selftest", "capi"}))
      ->capture_default_str();
  app.add_option("--post", o.post, "push | db | both (alternate per connection)")
      ->check(CLI::IsMember({"push", "db", "both"}))
      ->capture_default_str();
  app.add_option("--connections,-n", o.connections, "Connections to reject")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  app.add_option("--rev", o.rev, "MPA revision of the requests (2: enhanced, RFC 6581)")
      ->check(CLI::IsMember({1u, 2u}))
      ->capture_default_str();
  app.add_option("--pd-len", o.pd_len,
                 "Private data bytes per reject (default: 7, 33, 64, 200 in turn; also the "
                 "auto-reject template length when given)")
      ->check(CLI::Range(0u, 512u));
  app.add_option("--pd", o.pd_text, "Private data text (padded/cut to --pd-len when given)");
  app.add_option("--vlan", o.vlan, "802.1Q VLAN ID to tag the frames with (context mode)")
      ->check(CLI::Range(0u, 4095u));
  app.add_option("--width", o.width, "TX data width in bits")
      ->check(CLI::IsMember({64u, 512u}))
      ->capture_default_str();
  app.add_option("--clock-mhz", o.clock_mhz,
                 "Simulated core clock in MHz (pcap timestamps; --mode selftest measures it)")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  app.add_option("--peer-pd-len", o.peer_pd_len, "Private data bytes of each MPA request (peer)")
      ->check(CLI::Range(0u, 508u))
      ->capture_default_str();
  app.add_option("--initiator", o.initiator,
                 "Peer mode: whose initiator the simulated peers follow, as the Linux sources "
                 "have it (siw, irdma, cxgb4): what they accept and what their application "
                 "gets (docs/interop.md)")
      ->check(CLI::IsMember({"siw", "irdma", "cxgb4"}))
      ->capture_default_str();
  app.add_option("--loss", o.loss, "Probability that the wire loses a frame, both directions")
      ->check(CLI::Range(0.0, 0.9))
      ->capture_default_str();
  app.add_option("--fin-policy", o.fin_policy,
                 "What follows the reject (the listener's default): siw (FIN once the reject "
                 "is ACKed), irdma (FIN in the reject segment), abort (RST behind it)")
      ->check(CLI::IsMember({"siw", "irdma", "abort"}))
      ->capture_default_str();
  app.add_option("--auto-reject", o.auto_reject,
                 "Listener auto-reject: off, all, backlog (over --backlog), ird-ord (IRD/ORD "
                 "above 16; every other peer asks for 64)")
      ->check(CLI::IsMember({"off", "all", "backlog", "ird-ord"}))
      ->capture_default_str();
  app.add_option("--backlog", o.backlog, "Listener backlog (0: no limit)")
      ->check(CLI::Range(0u, 65535u))
      ->capture_default_str();
  app.add_option("--spacing", o.spacing, "Cycles between two peers' SYNs")->capture_default_str();
  app.add_option("--max-cycles", o.max_cycles, "Give up after this many simulated cycles")
      ->capture_default_str();
  app.add_option("--mem-latency", o.mem_latency, "Host memory latency in cycles")
      ->capture_default_str();
  app.add_option("--tx-ready", o.tx_ready, "Probability that TX is ready in a cycle")
      ->check(CLI::Range(1e-6, 1.0))
      ->capture_default_str();
  app.add_option("--pcap", o.pcap, "Capture of the TX frames (empty: none)")->capture_default_str();
  app.add_option("--fst", o.fst, "FST waveform file (empty: none)");
  app.add_option("--capture", o.capture,
                 "At the end of the run, read the core's capture ring (the last frames of each "
                 "direction) through the driver into this pcap file (not in selftest mode)");
  app.add_option("--seed", o.seed, "Random seed (ISNs, ISN key, IP IDs, back-pressure, loss)")
      ->capture_default_str();
  app.add_flag("--unsafe-wire-pd", o.unsafe_wire_pd,
               "Allow a reject or template PD_Length above 255 (up to 512); Linux siw, irdma and "
               "cxgb4 initiators do not take it intact (docs/reject-frame.md)");
  app.add_flag("--mac-filter", o.mac_filter,
               "Take only frames to the listener's MAC and IPv4 address (CM_ROUTE.PROMISC 0, "
               "PORT_MAC, PORT_IP); others are dropped and counted in STAT_RX_FILTERED");
  auto* b = app.add_option_group(
      "bridge", "--mode bridge: Bouncer is 10.0.0.2 / 02:00:00:00:00:02 on the guest's link");
  b->add_option("--bridge-local", o.bridge_local,
                "Our UDP socket, [127.0.0.1:]PORT (QEMU's remote.port)")
      ->capture_default_str();
  b->add_option("--bridge-remote", o.bridge_remote,
                "QEMU's socket, [127.0.0.1:]PORT (its local.port); only 127.0.0.1 is allowed")
      ->capture_default_str();
  b->add_option("--port", o.port, "TCP port of the listener")->capture_default_str();
  b->add_flag("--no-listener", o.no_listener, "Create no listener: every SYN gets a RST");
  b->add_option("--template-pd", o.template_pd, "Auto-reject private data (text)")
      ->capture_default_str();
  b->add_option("--stop-after", o.connections_limit,
                "Stop once this many requests were rejected and settled (0: run until SIGINT/"
                "SIGTERM or --max-wall)")
      ->capture_default_str();
  b->add_option("--max-wall", o.max_wall_s, "Stop after this many wall seconds (0: never)")
      ->capture_default_str();
}

namespace {

// The private data the run will post, against the driver's rule (check_reject_pd): refused
// before anything starts, so nothing reaches the wire. Bridge mode cannot know the revision
// of a real initiator's request ahead: siw, irdma and cxgb4 send rev 2 enhanced, so its
// PDs are held to the enhanced limit; %n is taken at its widest.
std::optional<std::string> pd_option_error(const SimOptions& o) {
  auto check = [&](const char* opt, size_t len, bool enhanced) -> std::optional<std::string> {
    if (auto v = check_reject_pd(len, enhanced, o.unsafe_wire_pd); !v) {
      return fmt::format("{}: {} (--unsafe-wire-pd)", opt, v.error().message);
    }
    return std::nullopt;
  };
  if (o.mode == "bridge") {
    ServeListener l;
    l.pd = o.pd_text.value_or(kServeDefaultPd);
    l.template_pd = o.template_pd;
    l.auto_reject = o.auto_reject;
    return serve_pd_error(l, o.connections_limit, o.unsafe_wire_pd, "--pd", "--template-pd");
  }
  const bool enhanced = o.rev == 2;
  if (o.mode == "capi") {  // the server's reason is --pd as given
    return o.pd_text ? check("--pd", o.pd_text->size(), enhanced) : std::nullopt;
  }
  const unsigned n = o.pd_len || o.pd_text ? 1 : static_cast<unsigned>(std::size(kDefaultPdLens));
  for (unsigned i = 0; i < std::min(n, o.connections); ++i) {
    if (auto e = check(o.pd_len ? "--pd-len" : "--pd", reject_pd(i, o).size(), enhanced)) {
      return e;
    }
  }
  if (o.mode == "peer" && o.auto_reject != "off") {
    if (auto e = check("--pd-len (template)", peer_template_pd(o).size(), true)) return e;
  }
  return std::nullopt;
}

}  // namespace

int run_sim(const SimOptions& opts) {
  SimOptions o = opts;
  if (o.mode == "selftest") return run_selftest_mode(o);  // nothing on the port: no pcap
  if (auto e = pd_option_error(o)) {
    fmt::print(stderr, "bouncer sim: {}\n", *e);
    return 2;
  }
  if (!prepare_outputs(o)) return 2;
  if (o.mode == "bridge") return run_bridge_mode(o);
  if (o.mode == "capi") return run_capi_mode(o);
  return o.mode == "context" ? run_context_mode(o) : run_peer_mode(o);
}

std::unique_ptr<Device> open_device(hal::Device& hal, const DeviceConfig& dc, const char* who) {
  auto dev = Device::open(hal, dc);
  if (!dev) {
    fmt::print(stderr, "{}: open: {}: {}\n", who, errc_name(dev.error().code), dev.error().message);
    return nullptr;
  }
  return std::move(dev).value();
}

SimSpeed::SimSpeed(unsigned data_width)
    : bare_(sim::measure_bare_core(data_width, 50'000)) {}  // ~0.1 s of CPU at 0.5 M/s

double SimSpeed::cost(uint64_t cycles, double cpu_s) const {
  if (cycles == 0 || cpu_s <= 0 || bare_.cycles == 0 || bare_.cpu_s <= 0) return 0.0;
  return (cpu_s / static_cast<double>(cycles)) / (bare_.cpu_s / static_cast<double>(bare_.cycles));
}

std::string SimSpeed::line(uint64_t cycles, double wall_s, double cpu_s) const {
  const auto per = [](uint64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
  return fmt::format(
      "simulated {} cycles in {:.3f} s wall, {:.3f} s CPU: {:.0f} cycles/s ({:.0f} per CPU s; "
      "bare core {:.0f} per CPU s, cost {:.2f}x bare)",
      cycles, wall_s, cpu_s, per(cycles, wall_s), per(cycles, cpu_s), bare_.cycles_per_cpu_s(),
      cost(cycles, cpu_s));
}

sim::PlatformConfig platform_config(const SimOptions& o) {
  sim::PlatformConfig pc;
  pc.data_width = o.width;
  pc.clock_mhz = o.clock_mhz;
  pc.mem_latency_cycles = o.mem_latency;
  pc.tx_ready_prob = o.tx_ready;
  pc.seed = o.seed;
  pc.pcap_path = o.pcap;
  pc.fst_path = o.fst;
  return pc;
}

int run_context_mode(const SimOptions& o) {
  const sim::PlatformConfig pc = platform_config(o);

  int rc = 0;
  Totals t;
  std::string capture_err;
  try {
    const SimSpeed speed(pc.data_width);
    sim::Platform platform(pc);
    platform.run([&](hal::Device& hal) {
      auto dev = open_device(hal, DeviceConfig{}, "bouncer sim");
      if (!dev) {
        rc = 1;
        return;
      }
      const Caps& caps = dev->caps();
      fmt::print("device: {} v{}.{}.{}, {}-bit TX, {} connections, push {}, inline PD {}\n",
                 hal.name(), caps.version_major, caps.version_minor, caps.version_patch,
                 caps.data_bytes * 8, caps.ctx_depth, caps.push ? "yes" : "no",
                 caps.inline_pd ? "yes" : "no");
      if (o.connections > caps.ctx_depth) {
        fmt::print(stderr, "bouncer sim: --connections {} exceeds the connection table ({})\n",
                   o.connections, caps.ctx_depth);
        rc = 1;
        return;
      }
      if (o.post == "push" && !caps.push) {
        fmt::print(stderr, "bouncer sim: --post push, but this build has no push page\n");
        rc = 1;
        return;
      }
      ContextDiag cm(*dev);
      std::mt19937_64 rng(o.seed);
      for (unsigned i = 0; i < o.connections; ++i) {
        if (auto w = cm.write_context(i, make_context(i, o, rng)); !w) {
          fmt::print(stderr, "bouncer sim: write_context({}): {}\n", i, w.error().message);
          rc = 1;
          return;
        }
      }
      for (unsigned i = 0; i < o.connections; ++i) {
        const auto pd = reject_pd(i, o);
        RejectOptions ro;
        ro.push = caps.push && (o.post == "push" || (o.post == "both" && i % 2 == 1));
        ro.unsafe_wire_pd = o.unsafe_wire_pd;
        // siw is today's behaviour: DEFAULT, the context's policy (read as SIW_SAFE).
        ro.fin_policy = o.fin_policy == "irdma"   ? regs::FinPolicy::IRDMA
                        : o.fin_policy == "abort" ? regs::FinPolicy::ABORT
                                                  : regs::FinPolicy::DEFAULT;
        ro.wr_id = i;
        auto r = cm.reject(i, pd, ro);
        const char* mode = ro.push ? "push" : "db";
        std::string status;
        uint32_t latency = 0;
        if (r) {
          latency = r->latency_cycles;
          status = r->pshdrop ? "ok (push dropped: fetched from the ring)" : "ok";
          // The frame must end with exactly the private data posted.
          const auto& frames = platform.tx_frames();
          const bool pd_ok =
              frames.size() == t.ok + 1 && frames.back().bytes.size() >= pd.size() &&
              std::equal(pd.begin(), pd.end(),
                         frames.back().bytes.end() - static_cast<std::ptrdiff_t>(pd.size()),
                         [](std::byte a, uint8_t b) { return std::to_integer<uint8_t>(a) == b; });
          if (pd_ok) {
            ++t.pd_ok;
          } else {
            status += ", BUT the frame on the wire does not carry the posted PD";
            rc = 1;
          }
          ++t.ok;
          t.pshdrop += r->pshdrop;
          t.lat_sum += latency;
          t.lat_min = std::min(t.lat_min, latency);
          t.lat_max = std::max(t.lat_max, latency);
        } else {
          const Error& e = r.error();
          status = e.code == Errc::kHardware ? cq_status_name(e.hw_major, e.hw_minor)
                                             : fmt::format("{}: {}", errc_name(e.code), e.message);
          ++t.failed;
          rc = 1;
        }
        (ro.push ? t.push : t.db) += 1;
        fmt::print("cm_id {:>4}  rev {}  pd_len {:>3}  latency {:>6} cycles  mode {:<4}  {}\n", i,
                   o.rev, pd.size(), latency, mode, status);
      }
      capture_err = save_capture(*dev, o, pc.clock_mhz);
    });
    fmt::print("\n{} rejects: {} ok, {} failed ({} push, {} doorbell, {} push dropped)\n",
               t.ok + t.failed, t.ok, t.failed, t.push, t.db, t.pshdrop);
    if (t.ok > 0) {
      fmt::print("doorbell-to-first-byte latency: min {} / mean {:.1f} / max {} cycles\n",
                 t.lat_min, static_cast<double>(t.lat_sum) / t.ok, t.lat_max);
    }
    fmt::print("{}\n", speed.line(platform));
    fmt::print("TX frames: {} ({} of {} end with exactly the private data posted)\n",
               platform.tx_frames().size(), t.pd_ok, t.ok);
    if (platform.tx_frames().size() != t.ok) rc = 1;  // a frame nobody asked for, or one missing
    if (const std::string err = platform.finish_pcap(); !err.empty()) {
      fmt::print(stderr, "bouncer sim: --pcap: {}\n", err);
      rc = 1;
    } else if (!o.pcap.empty()) {
      fmt::print("pcap: {}\n", o.pcap);
    }
    if (!o.fst.empty()) fmt::print("waveform: {}\n", o.fst);
    if (!capture_err.empty()) rc = 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
