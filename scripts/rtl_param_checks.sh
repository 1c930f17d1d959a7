#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# bouncer_core's elaboration-time parameter checks: each configuration below is outside what
# the core supports and must be refused, with its message, by Verilator (lint) and by Yosys
# 0.23 (read and elaborate); the default configuration must elaborate in both.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/rtl_files.sh
source "$root/scripts/rtl_files.sh"
srcs=()
rtl_f_array srcs "$root/rtl/sources.f"
for tool in verilator yosys; do
  command -v "$tool" >/dev/null || { echo "rtl_param_checks: $tool not found"; exit 1; }
done
rc=0
bad=(
  "DATA_W=128|DATA_W must be 64 or 512"
  "CTX_DEPTH_LOG2=5|CTX_DEPTH_LOG2 must be 6..14"
  "NUM_SQ=5|NUM_SQ must be 1..4"
  "NUM_SQ=0|NUM_SQ must be 1..4"
  "PROBES=2|PROBES must be 0 or 1"
)
yosys_elab() {  # yosys_elab NAME=VALUE: elaborate bouncer_core with that parameter
  local chparam=()
  [ -n "$1" ] && chparam=(-p "chparam -set ${1%%=*} ${1#*=} bouncer_core")
  yosys -q -p "read_verilog -sv ${srcs[*]}" "${chparam[@]}" -p "hierarchy -check -top bouncer_core" 2>&1
}
if ! out=$(verilator --lint-only -Wall --top-module bouncer_core "${srcs[@]}" 2>&1); then
  echo "FAIL default configuration: Verilator: $out"; rc=1
fi
if ! out=$(yosys_elab ""); then echo "FAIL default configuration: Yosys: $out"; rc=1; fi
for b in "${bad[@]}"; do
  param=${b%%|*} msg=${b#*|}
  out=$(verilator --lint-only -Wall -G"$param" --top-module bouncer_core "${srcs[@]}" 2>&1)
  st=$?
  if [ $st -ne 0 ] && grep -q "$msg" <<<"$out"; then echo "ok   $param refused by Verilator"
  else echo "FAIL $param: Verilator exit $st, message '$msg' $(grep -q "$msg" <<<"$out" && echo found || echo missing)"; rc=1; fi
  out=$(yosys_elab "$param")
  st=$?
  if [ $st -ne 0 ] && grep -q "$msg" <<<"$out"; then echo "ok   $param refused by Yosys"
  else echo "FAIL $param: Yosys exit $st, message '$msg' $(grep -q "$msg" <<<"$out" && echo found || echo missing)"; rc=1; fi
done
exit $rc
