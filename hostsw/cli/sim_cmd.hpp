// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim`: open the co-simulated device, write contexts, reject every connection.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace bouncer::cli {

struct SimOptions {
  unsigned connections = 4;
  unsigned rev = 2;
  std::optional<unsigned> pd_len;  // unset: varied per connection
  std::optional<std::string> pd_text;
  std::optional<unsigned> vlan;
  unsigned width = 64;
  std::string mode = "both";  // push | db | both
  uint64_t mem_latency = 200;
  double tx_ready = 1.0;
  std::string pcap = "out/demo.pcap";
  std::string fst;
  uint64_t seed = 1;
  bool fin = false;
};

void add_sim_options(CLI::App& app, SimOptions& o);
/// Runs the demo; returns the process exit code (0 all rejects ok, 1 otherwise).
int run_sim(const SimOptions& o);

}  // namespace bouncer::cli
