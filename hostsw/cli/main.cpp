// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer`: command-line front end. `bouncer sim ...` runs the driver against the
// co-simulated hardware; `bouncer card ...` is reserved for the XRT backend.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

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

  CLI::App* card = app.add_subcommand("card", "Use an Alveo card through XRT (not built yet)");
  card->allow_extras();
  card->prefix_command();

  CLI11_PARSE(app, argc, argv);

  if (*card) {
    fmt::print(stderr,
               "bouncer card: the XRT backend is not built yet (it is tracked as its own "
               "issue); nothing was done. Use `bouncer sim` for the co-simulation.\n");
    return 2;
  }
  return bouncer::cli::run_sim(sim_opts);
}
