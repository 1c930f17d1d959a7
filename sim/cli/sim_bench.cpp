// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer bench`: the probe-measured reject sweep of bench_cmd.hpp on the co-simulated device.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>

#include "bench_cmd.hpp"
#include "bouncer/sim/platform.hpp"
#include "output_file.hpp"
#include "sim_cmd.hpp"

namespace bouncer::cli {

int run_sim_bench(const BenchOptions& o) {
  ProbeBenchConfig cfg;
  try {
    cfg = bench_config(o);
  } catch (const CLI::Error& e) {
    fmt::print(stderr, "bouncer bench: {}\n", e.what());
    return 2;
  }
  if (auto e = check_output_file("--out", o.out)) {
    fmt::print(stderr, "bouncer bench: {}\n", *e);
    return 2;
  }
  cfg.mem_latency = o.mem_latency;
  sim::PlatformConfig pc;
  pc.data_width = o.width;
  pc.mem_latency_cycles = o.mem_latency;
  cfg.clock_mhz = pc.clock_mhz;
  int rc = 0;
  try {
    sim::Platform platform(pc);
    platform.run([&](hal::Device& hal) {
      DeviceConfig dc;
      dc.num_sq = *std::max_element(cfg.sqs.begin(), cfg.sqs.end());
      auto dev = open_device(hal, dc, "bouncer bench");
      if (!dev) {
        rc = 1;
        return;
      }
      rc = run_bench_on(*dev, o, cfg, "bouncer bench");
    });
    fmt::print("simulated {} cycles in {:.2f} s ({} frames on the port)\n", platform.cycles(),
               platform.wall_seconds(), platform.tx_frames().size());
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer bench: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
