#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The whole test suite, from a fresh Debian 12 machine: install, configure, build, run.
#   scripts/test.sh            everything (release build, then the sanitizer build)
#   BOUNCER_NO_ASAN=1 scripts/test.sh   skip the ASan/UBSan pass
#   BOUNCER_NO_FUZZ=1 scripts/test.sh   skip the libFuzzer pass (60 s, tb/fuzz)
#   BOUNCER_NO_TSAN=1 scripts/test.sh   skip the ThreadSanitizer pass (driver tests, CLI, build-tsan)
# Build trees: build/, build-fuzz/ (clang) and build-asan/ (ccache makes rebuilds cheap).
# A test that cannot run here (a tool missing, no QEMU guest) is reported skipped, and the
# last line lists every skip; with CI=true a skip fails the run (CI must run everything).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${BOUNCER_JOBS:-$(nproc)}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
export CCACHE_DIR=${CCACHE_DIR:-$root/.ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

scripts/deps.sh

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
skipped=()
# run_ctest NAME DIR [ctest args...]: runs ctest in DIR, keeps its output, and records the
# tests it reports skipped (exit 77 / "[  SKIPPED ]") and the number of tests it ran
run_ctest() {
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && ctest "$@") 2>&1 | tee "$logs/$name.log"
  local n
  n=$(sed -n 's/.*tests passed, [0-9]* tests failed out of \([0-9]*\).*/\1/p' "$logs/$name.log" | tail -1)
  if [ -z "$n" ] || [ "$n" -eq 0 ]; then
    echo "== $name: ctest ran no test" >&2
    exit 1
  fi
  while IFS= read -r t; do skipped+=("$name: $t"); done \
    < <(grep -E '\*\*\*Skipped|\*\*\*Not Run' "$logs/$name.log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+).*/\1/' || true)
}

echo "== format check"
mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null | grep -v '^hostsw/include/bouncer/regs.hpp$' || true)
if [ ${#cxx[@]} -gt 0 ]; then
  clang-format --dry-run -Werror "${cxx[@]}"
fi

echo "== release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DBOUNCER_TEST_CXXFLAGS=-O1 -g1" >/dev/null
cmake --build build -j "$jobs"
echo "== release tests"
run_ctest release build -j "$jobs" --output-on-failure --timeout 1500

if [ -z "${BOUNCER_NO_FUZZ:-}" ]; then
  echo "== libFuzzer pass (tb/fuzz: clang build in build-fuzz, 2 workers x 30 s from the seed corpus)"
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBOUNCER_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_core
  run_ctest fuzz build-fuzz --output-on-failure -L fuzz
fi

if [ -z "${BOUNCER_NO_TSAN:-}" ]; then
  echo "== ThreadSanitizer pass (driver + fake-HAL tests, CLI without the simulator, build-tsan)"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBOUNCER_TSAN=ON \
    "-DBOUNCER_TEST_CXXFLAGS=-O1 -g1" >/dev/null
  cmake --build build-tsan -j "$jobs"
  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
    run_ctest tsan build-tsan -j "$jobs" --output-on-failure --timeout 300
fi

if [ -z "${BOUNCER_NO_ASAN:-}" ]; then
  echo "== ASan/UBSan build (driver, golden model, co-simulation)"
  # the core models come from the release build (same -O2, uninstrumented code either way)
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBOUNCER_SANITIZE=ON \
    -DBOUNCER_RTL_PREBUILT="$root/build" >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== ASan/UBSan tests"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest asan build-asan -j "$jobs" --output-on-failure --timeout 1500 \
    -LE 'synth|interop|formal|card|script'
fi
if [ ${#skipped[@]} -gt 0 ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "== FAILED: CI=true and ${#skipped[@]} test(s) skipped (a tool or the guest is missing):"
    printf '   %s\n' "${skipped[@]}"
    exit 1
  fi
  echo "== all tests that ran passed; ${#skipped[@]} skipped (their output says why):"
  printf '   %s\n' "${skipped[@]}"
else
  echo "== all tests passed (none skipped)"
fi
