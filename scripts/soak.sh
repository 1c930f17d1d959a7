#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Soak: seeded randomized co-simulation, 20 000 connections per seed by default, 5 % loss
# both ways, random host decisions, backpressure, DMA latency and peer RSTs
# (tb/soak/soak.cpp; docs/reliability.md "Soak").
#
#   scripts/soak.sh [--seeds "1 2 3"] [--connections N] [--width 64|512] [--gap CYCLES]
#                   [--loss PCT]   (% of frames lost on the wire each way, default 5)
#
# Builds the `soak` target in BOUNCER_SOAK_BUILD (default build/, the release tree), runs one
# process per seed and prints its summary. A failing seed is appended to
# out/soak-failures.txt with the command that reproduces it (by the program for a failed
# check, by this script for a crash). Exit 1 if any seed failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BOUNCER_SOAK_BUILD:-$root/build}
jobs=${BOUNCER_JOBS:-2}
seeds="1" connections=20000 width=64 gap=1600 loss=5
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --width) width=$2; shift 2 ;;
    --gap) gap=$2; shift 2 ;;
    --loss) loss=$2; shift 2 ;;
    -h|--help) sed -n '3,13p' "$0"; exit 0 ;;
    *) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
failures=$root/out/soak-failures.txt
mkdir -p "$root/out"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$jobs" --target soak
bin=$build/tb/soak/soak
failed=0
for seed in $seeds; do
  args=(--seed "$seed" --connections "$connections" --width "$width" --gap "$gap" --loss "$loss")
  log=$root/out/soak-seed$seed-w$width.log
  set +e
  "$bin" "${args[@]}" --failures "$failures" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^\[ (soak|stats) ' "$log" || true
  if [ $rc -ne 0 ]; then
    failed=1
    grep -E 'Failure|Failed|FATAL|INVARIANT' -A2 "$log" | head -20 || true
    if [ $rc -ge 128 ] || ! grep -q "^\[  FAILED  \]" "$log"; then
      echo "seed $seed width $width connections $connections: CRASHED (exit $rc); reproduce with: $bin ${args[*]}" >>"$failures"
    fi
    echo "soak.sh: seed $seed FAILED (exit $rc), log $log, recorded in $failures" >&2
  else
    echo "soak.sh: seed $seed passed (log $log)"
  fi
done
exit $failed
