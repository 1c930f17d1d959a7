#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Yosys 0.23 synth_xilinx -family xcup estimate of bouncer_core (out of context: no I/O
# buffers). Usage: rtl_synth.sh [DATA_W] [CTX_DEPTH_LOG2] [outdir]
# Writes <outdir>/synth_w<W>_d<D>.{log,stat.txt}; exits non-zero if Yosys fails, warns about
# anything it could not map, or the connection table is not in block RAM.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
w=${1:-64}
d=${2:-10}
out=${3:-$root/out/synth}
mkdir -p "$out"
cd "$root/rtl"
srcs=$(grep -v '^#' sources.f | tr '\n' ' ')
tag="w${w}_d${d}"
yosys -l "$out/synth_$tag.log" -q -p "
  read_verilog -sv $srcs
  chparam -set DATA_W $w -set CTX_DEPTH_LOG2 $d bouncer_core
  hierarchy -check -top bouncer_core
  synth_xilinx -family xcup -top bouncer_core -flatten -noiopad -noclkbuf
  tee -o $out/synth_$tag.stat.txt stat -tech xilinx
" >/dev/null 2>"$out/synth_$tag.warn"
# BRAM port-width resizing notes are expected; anything else Yosys warns about is shown.
grep -v 'Resizing cell port' "$out/synth_$tag.warn" >&2 || true
stat="$out/synth_$tag.stat.txt"
if grep -qE '\$(mem|dff|_DFF|_SDFF|_MUX_)' "$stat"; then
  echo "synth $tag: unmapped generic cells left:"; grep -E '\$' "$stat"; exit 1
fi
bram=$(awk '/RAMB36E2|RAMB18E2|URAM288/ {s+=$2} END {print s+0}' "$stat")
if [ "$bram" -eq 0 ]; then
  echo "synth $tag: connection table did not map to block RAM"; exit 1
fi
lcs=$(grep -E 'Estimated number of LCs' "$stat" | awk '{print $NF}')
ffs=$(awk '/FDRE|FDSE|FDCE|FDPE/ {s+=$2} END {print s+0}' "$stat")
echo "synth $tag: LCs=${lcs:-?} FFs=$ffs BRAM/URAM primitives=$bram (details: $stat)"
