// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer bench` (on the co-simulated device: sim/cli/sim_bench.cpp) and `bouncer card bench`
// (on a card through XRT): the same probe-measured reject sweep, bouncer/probe_bench.hpp, over
// either backend.
#pragma once

#include <cstdint>
#include <string>

#include "bouncer/cm.hpp"
#include "bouncer/device.hpp"
#include "bouncer/probe_bench.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

struct BenchOptions {
  std::string paths = "push,dma_inline,dma_buffer";
  std::string pd = "0,16,64";
  std::string rev = "1,2";
  std::string outstanding = "1,8";
  std::string sqs = "1";  // SQ counts the rejects are spread over
  unsigned samples = 32;
  std::string out;  // JSON lines; empty: stdout only (a table)
  // co-simulation only
  unsigned width = 64;
  uint64_t mem_latency = 200;
  bool loopback = false;
};

/// The sweep options, for both `bench` and `card bench` (`sim`: also width / memory latency).
void add_bench_options(CLI::App& app, BenchOptions& o, bool sim);
/// Parses the lists into a config; throws CLI::ValidationError on a bad list.
/// The Device must be opened with DeviceConfig::num_sq = the largest of cfg.sqs.
ProbeBenchConfig bench_config(const BenchOptions& o);
/// Runs the sweep on an open device, prints a table, writes --out; returns the exit code.
int run_bench_on(Device& dev, const BenchOptions& o, const ProbeBenchConfig& cfg, const char* who);

}  // namespace bouncer::cli
