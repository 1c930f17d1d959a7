#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The main job: simulated iWARP initiators connect to a co-simulated Bouncer, whose host
# driver rejects every request; both directions of the wire go to a pcap, which the
# independent golden model (pcap_check) and Wireshark's tshark then check frame by frame.
#
#   scripts/demo.sh          three runs: 4 connections with MPA rev 2 (enhanced) requests, FIN
#                            after the reject is ACKed (siw policy) -> out/demo.pcap; then 2
#                            with rev 1 requests and the FIN in the reject (irdma policy)
#                            -> out/demo-rev1.pcap (reject PD lengths 7, 33, 64, 200); then 3
#                            against the C API's example server -> out/demo-capi.pcap.
#   scripts/demo.sh ARGS...  one run, `bouncer sim --pcap out/demo.pcap ARGS...`, e.g.
#                            --width 512 --connections 16 --fst out/demo.fst, --rev 1,
#                            --fin-policy abort, --loss 0.1, --mode context
#                            (`bouncer sim --help` lists them all).
# BOUNCER_BUILD_DIR selects the build tree (default: build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BOUNCER_BUILD_DIR:-build}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
export CCACHE_DIR=${CCACHE_DIR:-$root/.ccache}
scripts/deps.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target bouncer pcap_check
mkdir -p out

# One `bouncer sim` run into PCAP, then pcap_check --tshark on it.
run() {
  local pcap=$1
  shift
  echo
  echo "== bouncer sim --pcap $pcap $*"
  "$build"/hostsw/cli/bouncer sim --pcap "$pcap" "$@"
  echo
  echo "== pcap_check --tshark $pcap"
  "$build"/tb/golden/pcap_check --tshark "$pcap"
}

if [ $# -gt 0 ]; then
  run out/demo.pcap "$@"
else
  run out/demo.pcap --connections 4 --rev 2 --peer-pd-len 16 --fin-policy siw
  run out/demo-rev1.pcap --connections 2 --rev 1 --peer-pd-len 40 --fin-policy irdma \
    --initiator irdma
  # the C example server (hostsw/capi/example), written against the librdmacm-style C API
  run out/demo-capi.pcap --mode capi --connections 3
fi
echo
echo "demo: ok"
