// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim`: open the co-simulated device and reject connections.
//  --mode peer (default): listen; simulated iWARP initiators connect over the simulated wire;
//    the host receives their CONNECT_REQUESTs and rejects each (or the listener's
//    auto-reject policy does); the pcap holds both directions.
//  --mode context: the diagnostic path: the host writes every connection context and
//    rejects it (no peers, TX only).
//  --mode bridge: the network port is bridged to a QEMU guest (`-netdev dgram` on 127.0.0.1);
//    a real initiator connects, the host rejects every request (sim_bridge.cpp).
//  --mode capi: the C example server (hostsw/capi/example, written against the librdmacm-style
//    C API) rejects simulated initiators' requests (sim_capi.cpp).
//  --mode selftest: the card's loopback self-test (CTRL.LOOPBACK) on the co-simulated core
//    (sim_selftest.cpp); the same code as `bouncer card selftest`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bouncer/device.hpp"
#include "bouncer/regs.hpp"
#include "bouncer/sim/platform.hpp"
#include "serve.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

struct SimOptions {
  std::string mode = "peer";  // peer | context | bridge | selftest | capi
  std::string post = "both";  // push | db | both (alternate per connection)
  unsigned connections = 4;
  unsigned rev = 2;
  std::optional<unsigned> pd_len;  // reject PD; unset: varied per connection
  std::optional<std::string> pd_text;
  std::optional<unsigned> vlan;  // context mode only
  unsigned width = 64;
  double clock_mhz = 250.0;  // the simulated core clock (pcap timestamps, selftest's clock check)
  uint64_t mem_latency = 200;
  double tx_ready = 1.0;
  std::string pcap = "out/demo.pcap";
  std::string fst;
  std::string capture;  // pcap of the core's capture ring, read at the end (empty: none)
  uint64_t seed = 1;
  bool unsafe_wire_pd = false;  // PD_Length above 255 (RejectOptions::unsafe_wire_pd)
  // peer mode
  unsigned peer_pd_len = 16;         // private data of each MPA request
  std::string initiator = "siw";     // siw | irdma | cxgb4: the simulated initiators' rules
  double loss = 0.0;                 // frame loss probability, both directions
  std::string fin_policy = "siw";    // siw | irdma | abort
  std::string auto_reject = "off";   // off | all | backlog | ird-ord
  unsigned backlog = 0;              // listener backlog (0: no limit)
  uint64_t spacing = 2000;           // cycles between two peers' SYNs
  uint64_t max_cycles = 20'000'000;  // give up after this many simulated cycles
  // bridge mode
  std::string bridge_local = "127.0.0.1:17001";   // our UDP socket
  std::string bridge_remote = "127.0.0.1:17002";  // QEMU's -netdev dgram local address
  uint16_t port = 20049;                          // listener port
  bool no_listener = false;                       // SYNs get a RST
  bool mac_filter = false;  // CM_ROUTE.PROMISC 0, PORT_MAC/PORT_IP = the listener's
  std::string template_pd = "bouncer: refused by listener policy";  // auto-reject PD
  unsigned connections_limit = 0;  // stop once this many requests were settled (0: never)
  double max_wall_s = 600;         // stop after this many wall seconds (0: never)
};

void add_sim_options(CLI::App& app, SimOptions& o);
/// The co-simulation settings every mode takes from the options: width, memory latency, TX
/// back-pressure, seed, pcap and FST paths.
sim::PlatformConfig platform_config(const SimOptions& o);
/// Runs the demo; returns the process exit code (0 all rejects ok and every check passed,
/// 1 otherwise, 2 for private data the driver would refuse (nothing is run), 3 if the
/// simulation itself failed).
int run_sim(const SimOptions& o);

// The two modes (sim_cmd.cpp, sim_peer.cpp); `o` is normalized by run_sim.
int run_context_mode(const SimOptions& o);
int run_peer_mode(const SimOptions& o);
int run_bridge_mode(const SimOptions& o);
/// The loopback self-test of `bouncer card selftest` on the co-simulated core (sim_selftest.cpp).
int run_selftest_mode(const SimOptions& o);
/// The C API's example server as the host program (sim_capi.cpp).
int run_capi_mode(const SimOptions& o);

struct BenchOptions;
/// `bouncer bench`: the sweep of bench_cmd.hpp on the co-simulated device (sim_bench.cpp).
int run_sim_bench(const BenchOptions& o);

/// The reject PD of connection i: --pd text (or "bouncer: go away #i"), cut or padded by
/// repetition to --pd-len (default 7, 33, 64, 200 in turn).
std::vector<std::byte> reject_pd(unsigned i, const SimOptions& o);
/// The auto-reject template of peer mode: "bouncer: refused by listener policy", cut or
/// padded by repetition to --pd-len.
std::vector<std::byte> peer_template_pd(const SimOptions& o);
// Bridge mode's --pd default, "%n" and the names below are the serve loop's (serve.hpp):
// kServeDefaultPd, serve_reject_pd, ip_str, fin_policy_of, auto_reject_of.
/// The speed every `bouncer sim` run reports: simulated cycles per wall and per CPU second, and
/// the cost of the platform and driver over the bare verilated core, measured in the same
/// process (docs/performance.md, "Simulation speed"). Construct it before the Platform: the
/// bare core is its own model instance, which must not coexist with the platform's.
class SimSpeed {
 public:
  explicit SimSpeed(unsigned data_width);
  /// CPU seconds per simulated cycle of the run over those of the bare core (0 if unknown).
  double cost(uint64_t cycles, double cpu_s) const;
  /// "simulated N cycles in W s wall, C s CPU: R cycles/s (P per CPU s; bare core B per CPU
  /// s, cost X.XXx bare)".
  std::string line(uint64_t cycles, double wall_s, double cpu_s) const;
  std::string line(const sim::Platform& p) const {
    return line(p.cycles(), p.wall_seconds(), p.cpu_seconds());
  }
  const sim::BareCoreSpeed& bare() const { return bare_; }

 private:
  sim::BareCoreSpeed bare_;
};

/// Device::open(hal, dc); on failure prints "`who`: open: <errc>: <message>" to stderr and
/// returns nullptr.
std::unique_ptr<Device> open_device(hal::Device& hal, const DeviceConfig& dc, const char* who);

/// --capture: reads the core's capture ring through the driver (Device::read_capture) into
/// o.capture as pcap (clock_mhz for the stamps) and prints what it wrote. "" when it did, or
/// had nothing to do (no --capture); else the error, also printed to stderr.
std::string save_capture(Device& dev, const SimOptions& o, double clock_mhz);

/// Checks that --pcap, --capture and --fst can be written (creating their directories). false, with
/// a message naming the option, the path and the reason, if not.
bool prepare_outputs(const SimOptions& o);

}  // namespace bouncer::cli
