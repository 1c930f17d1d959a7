#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Verilator -Wall lint of bouncer_core and of the Vitis kernel top bouncer_kernel (with and
# without the async stream FIFOs) at every supported data width, and of blocks verilated on
# their own. Exit 1 on any warning.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/rtl"
mapfile -t srcs < <(grep -v '^#' sources.f)
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
# those configurations: "top | parameters | sources".
blocks=(
  "bouncer_rx_parser|-GDATA_W=64|host/bouncer_regs_pkg.sv common/bouncer_util_pkg.sv rx/bouncer_rx_parser.sv"
  "bouncer_rx_parser|-GDATA_W=512|host/bouncer_regs_pkg.sv common/bouncer_util_pkg.sv rx/bouncer_rx_parser.sv"
  "bouncer_tcp_ctrl_builder|-GDATA_W=64|common/bouncer_util_pkg.sv tx/bouncer_tcp_ctrl_builder.sv"
  "bouncer_tcp_ctrl_builder|-GDATA_W=512|common/bouncer_util_pkg.sv tx/bouncer_tcp_ctrl_builder.sv"
  "bouncer_isn_hash||cm/bouncer_isn_hash.sv"
  "bouncer_conn_table|-GDEPTH_LOG2=16|cm/bouncer_conn_table.sv"
  "bouncer_cm_timer||cm/bouncer_cm_timer.sv"
  "bouncer_cm_timer|-GID_W=16|cm/bouncer_cm_timer.sv"
  "bouncer_id_alloc||cm/bouncer_id_alloc.sv"
  "bouncer_id_alloc|-GID_W=16|cm/bouncer_id_alloc.sv"
  "bouncer_listener_table||host/bouncer_regs_pkg.sv cm/bouncer_listener_table.sv"
  "bouncer_axis_frame_fifo|-GDATA_W=64|common/bouncer_axis_frame_fifo.sv"
  "bouncer_axis_frame_fifo|-GDATA_W=512|common/bouncer_axis_frame_fifo.sv"
  "bouncer_tx_arb|-GDATA_W=64|common/bouncer_rr_arbiter.sv tx/bouncer_tx_arb.sv"
  "bouncer_tx_arb|-GDATA_W=512|common/bouncer_rr_arbiter.sv tx/bouncer_tx_arb.sv"
  "bouncer_mpa_req_asm|-GDATA_W=64|rx/bouncer_mpa_req_asm.sv"
  "bouncer_mpa_req_asm|-GDATA_W=512|rx/bouncer_mpa_req_asm.sv"
  "bouncer_axil_regs||host/bouncer_regs_pkg.sv common/bouncer_util_pkg.sv host/bouncer_axil_regs.sv"
  "bouncer_axis_async_fifo|-GDATA_W=64 -GFRAME_DROP=0|common/bouncer_eq_sliced.sv common/bouncer_axis_async_fifo.sv"
  "bouncer_axis_async_fifo|-GDATA_W=64 -GFRAME_DROP=1 -GDEPTH_LOG2=4|common/bouncer_eq_sliced.sv common/bouncer_axis_async_fifo.sv"
  "bouncer_axis_async_fifo|-GDATA_W=512 -GFRAME_DROP=1|common/bouncer_eq_sliced.sv common/bouncer_axis_async_fifo.sv"
  "bouncer_eq_sliced|-GW=15|common/bouncer_eq_sliced.sv"
  "bouncer_reset_sync||common/bouncer_reset_sync.sv"
  "bouncer_probe|-GDATA_W=64|host/bouncer_regs_pkg.sv top/bouncer_probe.sv"
  "bouncer_probe|-GDATA_W=512|host/bouncer_regs_pkg.sv top/bouncer_probe.sv"
  # the latency probes compiled out (PROBES = 0)
  "bouncer_core|-GDATA_W=64 -GPROBES=0|${srcs[*]}"
  "bouncer_core|-GDATA_W=512 -GPROBES=0|${srcs[*]}"
  # one reject SQ (NUM_SQ = 1: no round-robin arbiter), and two
  "bouncer_core|-GDATA_W=64 -GNUM_SQ=1|${srcs[*]}"
  "bouncer_core|-GDATA_W=512 -GNUM_SQ=1 -GPROBES=0|${srcs[*]}"
  "bouncer_core|-GDATA_W=64 -GNUM_SQ=2|${srcs[*]}"
  "bouncer_kernel|-GDATA_W=512 -GNUM_SQ=1|${srcs[*]}"
  "bouncer_axil_regs|-GNUM_SQ=1|host/bouncer_regs_pkg.sv common/bouncer_util_pkg.sv host/bouncer_axil_regs.sv"
)
for b in "${blocks[@]}"; do
  IFS='|' read -r top params files <<<"$b"
  # shellcheck disable=SC2086
  if verilator --lint-only -Wall $params --top-module "$top" $files; then
    echo "lint $top $params: clean"
  else
    echo "lint $top $params: FAILED"; rc=1
  fi
done
exit $rc
