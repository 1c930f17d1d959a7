// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
// `bouncer` built without the simulator (the ThreadSanitizer and libFuzzer builds): `sim` and
// `bench` are still on the command line, so that a user learns why they cannot run, and say so
// (exit 2); the card commands are unchanged. The entry point is an ordinary main().
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>

#include "commands.hpp"

namespace bouncer::cli {

SubcommandRunner add_sim_commands(CLI::App& app) {
  constexpr const char* kNone = " (not in this build: it has no simulator)";
  CLI::App* sim = app.add_subcommand(
      "sim", std::string("Reject connections on the co-simulated device") + kNone);
  CLI::App* bench = app.add_subcommand(
      "bench",
      std::string("Reject latency per stage on the co-simulated device, from the RTL probes") +
          kNone);
  for (CLI::App* c : {sim, bench}) c->allow_extras();  // the options of the simulator build
  return [sim, bench]() -> std::optional<int> {
    for (const CLI::App* c : {sim, bench}) {
      if (*c) {
        fmt::print(stderr,
                   "bouncer {}: this build has no simulator (SystemC co-simulation not built); "
                   "use a build configured without -DBOUNCER_TSAN=ON\n",
                   c->get_name());
        return 2;
      }
    }
    return std::nullopt;
  };
}

}  // namespace bouncer::cli

int main(int argc, char** argv) { return bouncer::cli::run_cli(argc, argv); }
