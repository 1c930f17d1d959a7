#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Dependencies point down: the driver library, the C API and the CLI's front end and card
# commands (hostsw/) build without the co-simulation. No source under hostsw/ may include a
# header of sim/ (bouncer/sim/, bouncer/peer/), SystemC, TLM or Verilator, and no CMakeLists.txt
# there may link the simulator library or SystemC itself; the co-simulation's subcommands live
# in sim/cli and reach the CLI through hostsw/cli/commands.hpp. Exit 1, naming each line, if
# one does.
#   scripts/check_layout.sh [ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
rc=0
if hits=$(grep -rnE --include='*.[ch]' --include='*.[ch]pp' \
    '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](bouncer/sim/|bouncer/peer/|systemc|tlm|verilated)' \
    "$root/hostsw"); then
  printf '%s\n' "$hits"
  echo "check_layout: hostsw/ includes simulator headers (above); move that code to sim/" >&2
  rc=1
fi
if hits=$(grep -rnE --include=CMakeLists.txt '^[^#]*(\<bouncer_sim\>|SYSTEMC_LIB|bouncer_rtl)' \
    "$root/hostsw"); then
  printf '%s\n' "$hits"
  echo "check_layout: hostsw/ links the simulator (above); link it from sim/ instead" >&2
  rc=1
fi
[ "$rc" -eq 0 ] && echo "check_layout: hostsw/ includes and links nothing of sim/, SystemC or Verilator"
exit "$rc"
