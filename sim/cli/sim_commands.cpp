// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The co-simulation's subcommands of `bouncer` (hostsw/cli/commands.hpp): `sim` (sim_cmd.hpp)
// and `bouncer bench` (sim_bench.cpp), and the program's entry point, sc_main(): libsystemc
// provides main() and calls it.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>

#include "bench_cmd.hpp"
#include "commands.hpp"
#include "sim_cmd.hpp"

namespace {
// SystemC prints a banner when it starts unless told not to; keep the CLI output ours.
[[maybe_unused]] const int kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
}  // namespace

namespace bouncer::cli {

SubcommandRunner add_sim_commands(CLI::App& app) {
  // CLI11 writes the parsed values into these after this returns: the runner owns them.
  auto sim_opts = std::make_shared<SimOptions>();
  CLI::App* sim = app.add_subcommand("sim", "Reject connections on the co-simulated device");
  add_sim_options(*sim, *sim_opts);

  auto bench_opts = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Reject latency per stage on the co-simulated device, from the RTL probes");
  add_bench_options(*bench, *bench_opts, /*sim=*/true);

  return [=]() -> std::optional<int> {
    if (*bench) return run_sim_bench(*bench_opts);
    if (*sim) return run_sim(*sim_opts);
    return std::nullopt;
  };
}

}  // namespace bouncer::cli

extern "C" int sc_main(int argc, char** argv) { return bouncer::cli::run_cli(argc, argv); }
