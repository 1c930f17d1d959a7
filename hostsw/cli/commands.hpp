// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// The seam between the `bouncer` front end (main.cpp: the command line, the card commands, the
// dispatch) and the co-simulation's subcommands (`sim`, `bench`). Those live with the simulator
// (sim/cli) so that nothing under hostsw/ depends on SystemC; a build without the simulator
// links no_sim.cpp instead, whose `sim` and `bench` say so and exit 2.
#pragma once

#include <functional>
#include <optional>

namespace CLI {
class App;
}  // namespace CLI

namespace bouncer::cli {

/// Runs whichever of a group's subcommands was parsed and returns its exit code; nothing when
/// none of them was.
using SubcommandRunner = std::function<std::optional<int>()>;

/// Adds `sim` and `bench` to `app`; the runner runs the one that was parsed.
/// Defined by sim/cli/sim_commands.cpp (with the simulator) or no_sim.cpp (without).
SubcommandRunner add_sim_commands(CLI::App& app);

/// Builds the command line, parses it and runs the subcommand; returns the exit code
/// (main.cpp). The entry point calls it: sc_main() with the simulator (libsystemc owns
/// main()), main() without.
int run_cli(int argc, char** argv);

}  // namespace bouncer::cli
