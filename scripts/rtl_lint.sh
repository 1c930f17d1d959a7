#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Verilator -Wall lint of bouncer_core and of the Vitis kernel top bouncer_kernel (with and
# without the async stream FIFOs) at every supported data width, and of blocks verilated on
# their own. Exit 1 on any warning.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/rtl_files.sh
source "$root/scripts/rtl_files.sh"
srcs=()
rtl_f_array srcs "$root/rtl/sources.f"
rc=0
for w in 64 512; do
  if verilator --lint-only -Wall -GDATA_W="$w" --top-module bouncer_core "${srcs[@]}"; then
    echo "lint DATA_W=$w: clean"
  else
    echo "lint DATA_W=$w: FAILED"; rc=1
  fi
  for a in 1 0; do
    if verilator --lint-only -Wall -GDATA_W="$w" -GASYNC_STREAMS="$a" --top-module bouncer_kernel \
        "${srcs[@]}"; then
      echo "lint bouncer_kernel DATA_W=$w ASYNC_STREAMS=$a: clean"
    else
      echo "lint bouncer_kernel DATA_W=$w ASYNC_STREAMS=$a: FAILED"; rc=1
    fi
  done
done
# Blocks also verilated on their own, for their unit tests (tb/unit/test_rtl_*), linted in
# those configurations, and other configurations of the core and kernel:
# "top | parameters | lists, in order (rtl_block_files names; all: rtl/sources.f)".
blocks=(
  "bouncer_rx_parser|-GDATA_W=64|packages rx"
  "bouncer_rx_parser|-GDATA_W=512|packages rx"
  "bouncer_tcp_ctrl_builder|-GDATA_W=64|packages common tx"
  "bouncer_tcp_ctrl_builder|-GDATA_W=512|packages common tx"
  "bouncer_isn_hash||packages cm"
  "bouncer_conn_table|-GDEPTH_LOG2=16|packages cm"
  "bouncer_cm_timer||packages cm"
  "bouncer_cm_timer|-GID_W=16|packages cm"
  "bouncer_id_alloc||packages cm"
  "bouncer_id_alloc|-GID_W=16|packages cm"
  "bouncer_listener_table||packages cm"
  "bouncer_rx_prio_fifo|-GDATA_W=64|packages rx"
  "bouncer_rx_prio_fifo|-GDATA_W=512|packages rx"
  "bouncer_axis_frame_fifo|-GDATA_W=64|common"
  "bouncer_axis_frame_fifo|-GDATA_W=512|common"
  "bouncer_tx_arb|-GDATA_W=64|packages common tx"
  "bouncer_tx_arb|-GDATA_W=512|packages common tx"
  "bouncer_mpa_req_asm|-GDATA_W=64|packages rx"
  "bouncer_mpa_req_asm|-GDATA_W=512|packages rx"
  "bouncer_axil_regs||packages common host"
  "bouncer_axis_async_fifo|-GDATA_W=64 -GFRAME_DROP=0|common common/cdc"
  "bouncer_axis_async_fifo|-GDATA_W=64 -GFRAME_DROP=1 -GDEPTH_LOG2=4|common common/cdc"
  "bouncer_axis_async_fifo|-GDATA_W=512 -GFRAME_DROP=1|common common/cdc"
  "bouncer_eq_sliced|-GW=15|common"
  "bouncer_reset_sync||common/cdc"
  "bouncer_probe|-GDATA_W=64|packages top"
  "bouncer_probe|-GDATA_W=512|packages top"
  # the latency probes compiled out (PROBES = 0)
  "bouncer_core|-GDATA_W=64 -GPROBES=0|all"
  "bouncer_core|-GDATA_W=512 -GPROBES=0|all"
  # one reject SQ (NUM_SQ = 1: no round-robin arbiter), and two
  "bouncer_core|-GDATA_W=64 -GNUM_SQ=1|all"
  "bouncer_core|-GDATA_W=512 -GNUM_SQ=1 -GPROBES=0|all"
  "bouncer_core|-GDATA_W=64 -GNUM_SQ=2|all"
  "bouncer_kernel|-GDATA_W=512 -GNUM_SQ=1|all"
  "bouncer_axil_regs|-GNUM_SQ=1|packages common host"
)
for b in "${blocks[@]}"; do
  IFS='|' read -r top params blocks <<<"$b"
  if [ "$blocks" = all ]; then
    files=("${srcs[@]}")
  else
    # shellcheck disable=SC2086
    rtl_block_array files $blocks
  fi
  # shellcheck disable=SC2086
  if verilator --lint-only -Wall $params --top-module "$top" "${files[@]}"; then
    echo "lint $top $params: clean"
  else
    echo "lint $top $params: FAILED"; rc=1
  fi
done
exit $rc
