#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# libFuzzer on the verilated core (tb/fuzz, docs/reliability.md "Fuzzing").
#
#   scripts/fuzz.sh [SECS]              build the harness (clang-14, ASan + libFuzzer) in
#                                       build-fuzz and fuzz for SECS seconds (default 600)
#   scripts/fuzz.sh --run BIN SECS [--work DIR] [--jobs N] [--workers N]
#                                       fuzz with an already built harness (ctest uses this;
#                                       --workers N: N fuzzing processes side by side on one
#                                       corpus, each for SECS seconds; default 1)
#   scripts/fuzz.sh --coverage [--work DIR]
#                                       build the coverage variant (build-fuzz-cov, verilator
#                                       --coverage-line --coverage-toggle), replay the seed
#                                       corpus and the corpus grown by earlier runs, and print
#                                       the line/toggle points reached
#   scripts/fuzz.sh --repro FILE        run one input (a crash artifact) on the built harness
#
# The seed corpus (tb/fuzz/corpus) is read, never written: new inputs go to WORK/corpus
# (default build-fuzz/fuzz-work), crashes to WORK/artifacts/. A crash (an invariant violation,
# an SV assertion, an ASan report) makes the run fail and prints how to reproduce it.
# Build trees: BOUNCER_FUZZ_BUILD (default build-fuzz), BOUNCER_FUZZ_COV_BUILD (build-fuzz-cov).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BOUNCER_FUZZ_BUILD:-$root/build-fuzz}
cov_build=${BOUNCER_FUZZ_COV_BUILD:-$root/build-fuzz-cov}
jobs=${BOUNCER_JOBS:-2}
corpus=$root/tb/fuzz/corpus
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

configure() {  # dir, extra cmake args...
  local dir=$1
  shift
  if ! command -v clang++-14 >/dev/null; then
    echo "fuzz.sh: clang++-14 not found (scripts/deps.sh installs clang-14 and libclang-rt-14-dev)" >&2
    exit 2
  fi
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBOUNCER_FUZZ=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" --target fuzz_core
}

# run BIN SECS WORK: fuzz with $workers processes side by side (one corpus directory, which
# each of them reads and adds to), then report executions, execs/s, corpus size and what failed
run() {
  local bin=$1 secs=$2 work=$3
  [ -x "$bin" ] || { echo "fuzz.sh: $bin: no such harness (scripts/fuzz.sh SECS builds it in build-fuzz)" >&2; return 2; }
  mkdir -p "$work/corpus" "$work/artifacts"
  echo "fuzz.sh: $bin for $secs s x $workers worker(s), corpus $work/corpus + $corpus (logs $work/fuzz-*.log)"
  local pids=() i
  for ((i = 0; i < workers; i++)); do
    "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=120 -rss_limit_mb=4096 \
      -max_len=2048 -artifact_prefix="$work/artifacts/" "$work/corpus" "$corpus" \
      >"$work/fuzz-$i.log" 2>&1 &
    pids+=($!)
  done
  local failed=() execs=0 e
  for ((i = 0; i < workers; i++)); do
    wait "${pids[$i]}" || failed+=("$i")
    e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz-$i.log" | tail -1)
    execs=$((execs + ${e:-0}))
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$work/fuzz-$i.log" | tail -2 | sed "s/^/worker $i: /" || true
  done
  echo "fuzz.sh: $execs executions in $secs s x $workers ($(awk -v e="$execs" -v s="$secs" \
    -v w="$workers" 'BEGIN{printf "%.1f", e/s/w}') execs/s per worker), corpus $(find "$work/corpus" -type f | wc -l) inputs"
  if [ ${#failed[@]} -ne 0 ]; then
    for i in "${failed[@]}"; do
      echo "fuzz.sh: worker $i failed (log $work/fuzz-$i.log):" >&2
      grep -E 'INVARIANT|Assertion|ERROR: AddressSanitizer|ERROR: libFuzzer|%Error|SUMMARY' \
        "$work/fuzz-$i.log" | head -20 >&2 || true
    done
    local art
    art=$(find "$work/artifacts" -type f -printf '%T@ %f\n' | sort -n | tail -1 | cut -d' ' -f2)
    echo "fuzz.sh: FAILED.${art:+ Reproduce: $bin $work/artifacts/$art}" >&2
    return 1
  fi
  echo "fuzz.sh: no crash"
}

coverage() {
  local work=$1
  configure "$cov_build" -DBOUNCER_FUZZ_COVERAGE=ON
  mkdir -p "$work"
  local inputs=("$corpus")
  [ -d "$build/fuzz-work/corpus" ] && inputs+=("$build/fuzz-work/corpus")
  local dat=$work/coverage.dat
  rm -f "$dat"
  echo "fuzz.sh: replaying ${inputs[*]}"
  BOUNCER_FUZZ_COV=$dat "$cov_build/tb/fuzz/fuzz_core" -runs=0 -max_len=2048 "${inputs[@]}" \
    >"$work/replay.log" 2>&1
  python3 - "$dat" <<'PY'
import collections, re, sys
tot = collections.Counter(); hit = collections.Counter()
for line in open(sys.argv[1], encoding="latin-1"):
    if not line.startswith("C '"):
        continue
    key, count = line[3:].rsplit("' ", 1)
    f = dict(kv.split("\x02", 1) for kv in key.split("\x01") if "\x02" in kv)
    kind = f.get("t") or f.get("page", "?").split("/")[0]
    path = f.get("f", "")
    scope = "rtl" if "/rtl/" in path or path.startswith("rtl/") else "harness"
    for k in ((kind, "all"), (kind, scope)):
        tot[k] += 1
        hit[k] += int(count) > 0
for (kind, scope) in sorted(tot):
    t, h = tot[(kind, scope)], hit[(kind, scope)]
    print(f"coverage: {kind:8s} {scope:8s} {h:6d} of {t:6d} points ({100.0 * h / t:.1f} %)")
PY
}

mode=fuzz secs=600 work="" bin="" workers=1
while [ $# -gt 0 ]; do
  case $1 in
    --run) mode=run bin=$2 secs=$3; shift 3 ;;
    --coverage) mode=coverage; shift ;;
    --repro) mode=repro bin=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --workers) workers=$2; shift 2 ;;
    -h|--help) sed -n '3,21p' "$0"; exit 0 ;;
    [0-9]*) secs=$1; shift ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

case $mode in
  fuzz)
    configure "$build"
    run "$build/tb/fuzz/fuzz_core" "$secs" "${work:-$build/fuzz-work}" ;;
  run)
    run "$bin" "$secs" "${work:-$build/fuzz-work}" ;;
  coverage)
    coverage "${work:-$cov_build/cov-work}" ;;
  repro)
    configure "$build"
    "$build/tb/fuzz/fuzz_core" "$bin" ;;
esac
