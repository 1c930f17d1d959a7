#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The whole test suite, from a fresh Debian 12 machine: install, configure, build, run.
#   scripts/test.sh            everything (release build, then the sanitizer build)
#   BOUNCER_NO_ASAN=1 scripts/test.sh   skip the ASan/UBSan pass
#   BOUNCER_NO_FUZZ=1 scripts/test.sh   skip the libFuzzer pass (60 s, tb/fuzz)
#   BOUNCER_NO_TSAN=1 scripts/test.sh   skip the ThreadSanitizer pass (driver tests, build-tsan)
# Build trees: build/, build-fuzz/ (clang) and build-asan/ (ccache makes rebuilds cheap).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${BOUNCER_JOBS:-$(nproc)}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
export CCACHE_DIR=${CCACHE_DIR:-$root/.ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

scripts/deps.sh

echo "== format check"
mapfile -t cxx < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null | grep -v '^hostsw/include/bouncer/regs.hpp$' || true)
if [ ${#cxx[@]} -gt 0 ]; then
  clang-format --dry-run -Werror "${cxx[@]}"
fi

echo "== release build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DBOUNCER_TEST_CXXFLAGS=-O1 -g1" >/dev/null
cmake --build build -j "$jobs"
echo "== release tests"
(cd build && ctest -j "$jobs" --output-on-failure --timeout 1500)

if [ -z "${BOUNCER_NO_FUZZ:-}" ]; then
  echo "== libFuzzer pass (tb/fuzz: clang build in build-fuzz, 2 workers x 30 s from the seed corpus)"
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBOUNCER_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j "$jobs" --target fuzz_core
  (cd build-fuzz && ctest --output-on-failure -L fuzz)
fi

if [ -z "${BOUNCER_NO_TSAN:-}" ]; then
  echo "== ThreadSanitizer pass (driver + fake-HAL tests only, build-tsan)"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBOUNCER_TSAN=ON \
    "-DBOUNCER_TEST_CXXFLAGS=-O1 -g1" >/dev/null
  cmake --build build-tsan -j "$jobs"
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
     ctest -j "$jobs" --output-on-failure --timeout 300)
fi

if [ -z "${BOUNCER_NO_ASAN:-}" ]; then
  echo "== ASan/UBSan build (driver, golden model, co-simulation)"
  # the core models come from the release build (same -O2, uninstrumented code either way)
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBOUNCER_SANITIZE=ON \
    -DBOUNCER_RTL_PREBUILT="$root/build" >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== ASan/UBSan tests"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest -j "$jobs" --output-on-failure --timeout 1500 -LE 'synth|interop|formal|card|script')
fi
echo "== all tests passed"
