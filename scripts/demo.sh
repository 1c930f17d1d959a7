#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The main job: a co-simulated Bouncer whose host driver rejects a few connections, with
# the frames written to out/demo.pcap and checked. Extra arguments go to `bouncer sim`
# (e.g. --fst out/demo.fst for a waveform, --width 512, --connections 16).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
export CCACHE_DIR=${CCACHE_DIR:-$root/.ccache}
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target bouncer pcap_check
mkdir -p out
build/hostsw/cli/bouncer sim --pcap out/demo.pcap "$@"
echo
build/tb/golden/pcap_check out/demo.pcap
