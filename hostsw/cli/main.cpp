// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer`: command-line front end. `bouncer sim ...` runs the driver against the
// co-simulated hardware; `bouncer bench` measures reject latency there from the RTL probes
// (bench_cmd.cpp); `bouncer card ...` uses an Alveo card through XRT (card_cmd.cpp).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "bench_cmd.hpp"
#include "card_cmd.hpp"
#include "sim_cmd.hpp"

namespace {
// SystemC prints a banner when it starts unless told not to; keep the CLI output ours.
[[maybe_unused]] const int kQuietSystemC = setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
}  // namespace

// libsystemc provides main() and calls sc_main(): the co-simulation backend is linked in.
extern "C" int sc_main(int argc, char** argv) {
  CLI::App app{"Bouncer: FPGA iWARP MPA-reject offload (driver + co-simulation)"};
  app.require_subcommand(1);

  bouncer::cli::SimOptions sim_opts;
  CLI::App* sim = app.add_subcommand("sim", "Reject connections on the co-simulated device");
  bouncer::cli::add_sim_options(*sim, sim_opts);

  bouncer::cli::BenchOptions bench_opts;
  CLI::App* bench = app.add_subcommand(
      "bench", "Reject latency per stage on the co-simulated device, from the RTL probes");
  bouncer::cli::add_bench_options(*bench, bench_opts, /*sim=*/true);

  bouncer::cli::CardOptions card_opts;
  CLI::App* card = app.add_subcommand("card", "Use an Alveo card through XRT (probe, selftest)");
  bouncer::cli::add_card_commands(*card, card_opts);

  CLI11_PARSE(app, argc, argv);

  if (*card) return bouncer::cli::run_card(card_opts);
  if (*bench) return bouncer::cli::run_sim_bench(bench_opts);
  return bouncer::cli::run_sim(sim_opts);
}
