// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card ...`: the Alveo card through the XRT backend (hostsw/xrt).
//  probe     what this machine has (Xilinx PCI functions, their driver, XRT); exit 0 when XRT
//            can open a device, 2 when not (always the case without a card)
//  selftest  load the xclbin, open the device, run the loopback self-test (selftest.hpp)
//  bench     the probe-measured reject sweep of `bouncer bench` (bench_cmd.hpp) on the card,
//            with CTRL.LOOPBACK set so that nothing leaves it
//  serve     listen and reject every CONNECT_REQUEST until SIGINT/SIGTERM: the serve loop of
//            `bouncer sim --mode bridge` (serve.hpp), JSON lines on stdout
//  stats     every statistics register with its rate, CM_CONNS and the ring indices
//            (card_stats.hpp); register reads only, the device is not reset
//  link      the CMAC kernel's link status, RS-FEC and counters (bouncer/cmac_link.hpp)
#pragma once

#include <cstdint>
#include <string>

#include "bench_cmd.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

struct CardOptions {
  std::string device;               // BDF or index
  std::string xclbin;               // selftest: xclbin to load (empty: the loaded one)
  double clock_mhz = 0;             // kernel clock; 0: the xclbin's (else 250 MHz)
  double timeout_ms = 0;            // selftest: per wait, host time (0: the self-test's default)
  std::string sysfs_root = "/sys";  // probe: where to look (tests point it elsewhere)
  BenchOptions bench_opts;          // bench: the sweep
  // serve: a configuration file, or one listener from the options
  std::string config;
  std::string ip = "0.0.0.0";
  uint16_t port = 20049;
  std::string mac;
  std::string pd = "bouncer: go away #%n";
  std::string template_pd = "bouncer: refused by listener policy";
  std::string fin_policy = "siw";
  std::string auto_reject = "off";
  unsigned backlog = 0;
  unsigned stop_after = 0;
  double max_wall_s = 0;
  bool unsafe_wire_pd = false;
  bool mac_filter = false;
  // stats
  double interval_s = 1.0;
  double watch_s = 0;
  // link
  std::string rs_fec;  // on | off | empty: leave it
  double wait_up_s = 0;
  std::string cmac_ip = "cmac_0:{cmac_0}";
  CLI::App* probe = nullptr;
  CLI::App* selftest = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* serve = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* link = nullptr;
};

/// Adds probe, selftest, bench, serve, stats and link under `card`.
void add_card_commands(CLI::App& card, CardOptions& o);
/// Runs the subcommand that was parsed; returns the exit code (0 ok, 1 self-test failed, serve
/// failed or link down, 2 nothing could run: no card, no driver, no XRT, bad xclbin, bad
/// options or configuration).
int run_card(const CardOptions& o);

}  // namespace bouncer::cli
