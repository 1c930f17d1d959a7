// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer card ...`: the Alveo card through the XRT backend (hostsw/xrt).
//  probe     what this machine has (Xilinx PCI functions, their driver, XRT); exit 0 when XRT
//            can open a device, 2 when not (always the case without a card)
//  selftest  load the xclbin, open the device, run the loopback self-test (selftest.hpp)
//  bench     the probe-measured reject sweep of `bouncer bench` (bench_cmd.hpp) on the card,
//            with CTRL.LOOPBACK set so that nothing leaves it
#pragma once

#include <string>

#include "bench_cmd.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

struct CardOptions {
  std::string device;               // BDF or index
  std::string xclbin;               // selftest: xclbin to load (empty: the loaded one)
  double clock_mhz = 250.0;         // kernel clock
  double timeout_ms = 0;            // selftest: per wait, host time (0: the self-test's default)
  std::string sysfs_root = "/sys";  // probe: where to look (tests point it elsewhere)
  BenchOptions bench_opts;          // bench: the sweep
  CLI::App* probe = nullptr;
  CLI::App* selftest = nullptr;
  CLI::App* bench = nullptr;
};

/// Adds probe, selftest and bench under `card`.
void add_card_commands(CLI::App& card, CardOptions& o);
/// Runs the subcommand that was parsed; returns the exit code (0 ok, 1 self-test failed,
/// 2 nothing could run: no card, no driver, no XRT, bad xclbin).
int run_card(const CardOptions& o);

}  // namespace bouncer::cli
