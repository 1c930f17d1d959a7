// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer`: command-line front end. `bouncer sim ...` runs the driver against the
// co-simulated hardware and `bouncer bench` measures reject latency there from the RTL probes
// (both in sim/cli, registered through commands.hpp); `bouncer card ...` uses an Alveo card
// through XRT (card_cmd.cpp).
#include <CLI/CLI.hpp>

#include "card_capture.hpp"
#include "card_cmd.hpp"
#include "commands.hpp"

int bouncer::cli::run_cli(int argc, char** argv) {
  CLI::App app{"Bouncer: FPGA iWARP MPA-reject offload (driver + co-simulation)"};
  app.require_subcommand(1);

  const SubcommandRunner run_sim_commands = add_sim_commands(app);

  CardOptions card_opts;
  CLI::App* card = app.add_subcommand("card", "Use an Alveo card through XRT (probe, selftest)");
  add_card_commands(*card, card_opts);
  add_card_capture_command(*card);

  CLI11_PARSE(app, argc, argv);

  if (*card) return run_card(card_opts);
  // require_subcommand(1): when it is not `card`, it is one of the co-simulation's
  return run_sim_commands().value_or(2);
}
