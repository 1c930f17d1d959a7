// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer sim --mode selftest`: the loopback self-test that `bouncer card selftest` runs on a
// card (bouncer/selftest.hpp), on the co-simulated core instead. Exit 0 pass, 1 fail, 3 if
// the simulation itself failed.
#include <fmt/core.h>

#include <exception>

#include "bouncer/device.hpp"
#include "bouncer/selftest.hpp"
#include "bouncer/sim/platform.hpp"
#include "sim_cmd.hpp"

namespace bouncer::cli {

int run_selftest_mode(const SimOptions& o) {
  sim::PlatformConfig pc = platform_config(o);
  pc.pcap_path.clear();  // with the loop on, nothing crosses the port
  int rc = 0;
  try {
    const SimSpeed speed(pc.data_width);
    sim::Platform platform(pc);
    platform.run([&](hal::Device& hal) {
      auto dev = open_device(hal, DeviceConfig{}, "bouncer sim");
      if (!dev) {
        rc = 1;
        return;
      }
      if (auto ready = dev->wait_cm_ready(std::chrono::milliseconds(4)); !ready) {
        fmt::print(stderr, "bouncer sim: {}\n", ready.error().message);
        rc = 1;
        return;
      }
      // The simulated time base is exact: the measured clock is the configured one.
      auto clk = measure_core_clock(hal, std::chrono::microseconds(100));
      if (!clk) {
        fmt::print(stderr, "bouncer sim: {}\n", clk.error().message);
        rc = 1;
        return;
      }
      fmt::print("core clock: measured {:.3f} MHz ({} cycles in {} ns), configured {:.3f} MHz\n",
                 clk->mhz, clk->cycles, clk->host.count(), pc.clock_mhz);
      if (auto mm = clock_mismatch(clk->mhz, pc.clock_mhz)) {
        fmt::print(stderr, "bouncer sim: {}\n", *mm);
        rc = 1;
        return;
      }
      auto rep = run_loopback_selftest(*dev);
      if (!rep) {
        fmt::print(stderr, "bouncer sim: {}\n", rep.error().message);
        rc = 1;
        return;
      }
      fmt::print("{}", format_selftest_report(*rep));
      rc = rep->passed() ? 0 : 1;
    });
    if (rc == 0 && (!platform.tx_frames().empty() || !platform.rx_frames().empty())) {
      fmt::print(stderr, "bouncer sim: {} frame(s) crossed the port while looping\n",
                 platform.tx_frames().size() + platform.rx_frames().size());
      rc = 1;
    }
    fmt::print("{}\n", speed.line(platform));
  } catch (const std::exception& e) {
    fmt::print(stderr, "bouncer sim: simulation failed: {}\n", e.what());
    return 3;
  }
  return rc;
}

}  // namespace bouncer::cli
