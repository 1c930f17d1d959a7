#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Bounded model checks of the RTL interfaces with Yosys + yosys-smtbmc (z3), no SymbiYosys.
# One harness per design in tb/formal/formal_<name>.sv: it instantiates the design, assumes
# the input protocol and asserts the output protocol and invariants (docs/reliability.md,
# "Formal", lists the properties and the depths).
#
#   scripts/formal.sh [--quick] [--only NAME] [--list] [--work DIR]
#     --quick     smaller depths (a smoke run while editing)
#     --only NAME run one check: a harness name, or mutant.<name> (see below)
#     --list      print the check names and depths
#     --work DIR  keep the SMT2 models, logs and counterexample VCDs in DIR
#
# Mutants: a copy of one RTL file with one deliberate bug (sed), checked with the same
# harness at its full depth; the check must FAIL (with an assertion, not a tool error),
# proving the harness catches that class of bug. The RTL in rtl/ is never modified.
#
# Flow per check: read_verilog -formal -sv (defines FORMAL); prep -flatten; memory_map;
# async2sync; dffunmap; write_smt2; yosys-smtbmc -s z3 --unroll -t DEPTH. (--unroll: z3 4.8.12
# from Debian stalls on the default uninterpreted-function encoding of the states; Debian's
# boolector 1.5.118 rejects set-option and cannot be used by yosys-smtbmc 0.23.)
# Reachability: a harness with `cover` statements is run a second time in cover mode
# (yosys-smtbmc -c) at the same depth (or cover_depth below) and passes only if every cover
# is reached.
# Exit 0 when every harness passes and every mutant fails; prints one line per check.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/rtl_files.sh
source "$root/scripts/rtl_files.sh"

# name | top | depth | quick depth | extra modules
# The RTL a harness reads: the sources of rtl/sources.f its top needs (scripts/rtl_needed.py),
# in list order, plus the sources of the extra modules. Only those: the SMT model Yosys writes,
# and z3's time on it, depend on everything Yosys has read.
checks=(
  "axis_frame_fifo|formal_axis_frame_fifo|16|8|"
  "tx_arb|formal_tx_arb|12|7|"
  "rr_arbiter|formal_rr_arbiter|12|6|"
  "cq_writer|formal_cq_writer|16|8|"
  "sq_engine|formal_sq_engine|12|6|"
  "sq_cqe_queue|formal_sq_cqe_queue|10|6|"
  "axil_regs|formal_axil_regs|10|5|bouncer_util_pkg"
  "axil_db|formal_axil_db|7|4|bouncer_util_pkg"
  "tcp_ctrl_builder|formal_tcp_ctrl_builder|14|7|"
  "mpa_reject_builder|formal_mpa_reject_builder|14|7|"
)
# mutant name | harness | RTL file (its name among the harness's sources) | sed expression |
# what it breaks
# Cover runs deeper than the assertion run where a state the assertions are about needs more
# cycles to reach than the BMC depth affords (cover mode is cheaper: it stops at each hit).
declare -A cover_depth=(
  [cq_writer]=24  # a write on lap 1 (polarity 0) needs a 4-entry ring written once
)
mutants=(
  "tx_arb_no_skid|tx_arb|bouncer_tx_arb.sv|s/assign in_ready = !skid_v_q;/assign in_ready = 1'b1;/|input taken while the skid register is full: the held output beat is overwritten"
  "cq_writer_no_full|cq_writer|bouncer_cq_writer.sv|s/assign dma_valid = s_cqe_valid \&\& !busy_q \&\& !full_q \&\&/assign dma_valid = s_cqe_valid \&\& !busy_q \&\&/|writes while the ring is full: overruns an entry the host has not consumed"
  "cq_writer_no_settle|cq_writer|bouncer_cq_writer.sv|s/ \&\& (settle_q == 2'd0);/;/|offers a write in the cycle after the tail moved, on a full flag computed from the old tail: overruns the ring when that completion filled it"
  "rr_arbiter_repeat|rr_arbiter|bouncer_rr_arbiter.sv|s/(W'(i) > last_q)/(W'(i) >= last_q)/|the last winner may win again while others wait: not round robin"
  "sq_engine_pol_early|sq_engine|bouncer_sq_engine.sv|s/\& cur_mask_q) == 15'd0) pol_q\[n\]/\& cur_mask_q) == 15'd1) pol_q[n]/|the expected polarity flips at index 1 instead of at the wrap to 0: good WQEs are taken as stale"
  "sq_engine_overrun|sq_engine|bouncer_sq_engine.sv|s/assign pending\[n\] = !pi_eq;/assign pending[n] = 1'b1;/|an SQ counts as pending without a posted WQE: the engine consumes slots past PI"
  "sq_cqe_queue_overrun|sq_cqe_queue|bouncer_sq_cqe_queue.sv|s/assign s_cqe_ready = (count_q != (DEPTH_LOG2+1)'(DEPTH));/assign s_cqe_ready = 1'b1;/|takes a CQE while full: the oldest queued completion is overwritten and lost"
  "sq_cqe_queue_dead_ci|sq_cqe_queue|bouncer_sq_cqe_queue.sv|s/if (pop \&\& live_q\[rd_q\] \&\& head_sq == 2'(n))/if (pop \&\& head_sq == 2'(n))/|a CQE queued before its SQ was reset still moves that SQ's new CI: SQ_CI claims WQEs of the new ring done"
  "sq_engine_push_stale|sq_engine|bouncer_sq_engine.sv|s/push_chk_q\[n\]  <= wqe_verdict(push_cond_q\[n\], pol_q\[n\]);/push_chk_q[n]  <= wqe_verdict(push_cond_q[n], ~pol_q[n]);/|the push-ahead check compares VALID with the inverted polarity: a good pushed WQE completes as stale, a stale one goes out"
  "axil_regs_no_lap|axil_db|bouncer_axil_regs.sv|s/lap    = !in_iv;/lap    = 1'b0;/|no lap check: a doorbell that posts more WQEs than the ring has free slots is accepted, the pending count wraps and WQEs are lost"
  "axil_regs_bvalid_drop|axil_regs|bouncer_axil_regs.sv|s/if (s_axil_bready) bvalid_q <= 1'b0;/bvalid_q <= 1'b0;/|bvalid dropped without bready: a write response is lost"
  "reject_builder_fin_every_segment|mpa_reject_builder|bouncer_mpa_reject_builder.sv|s/tfin_q <= last_q \&\& fin_q;/tfin_q <= fin_q;/|the FIN goes in every segment of a split reject: the peer takes the first as the end of the stream"
  "axis_frame_fifo_no_drop_pulse|axis_frame_fifo|bouncer_axis_frame_fifo.sv|s/drop_d     = 1'b1;/drop_d     = 1'b0;/|a frame that finds the FIFO full is discarded without its drop_frame pulse: the RX counters and the parser never learn of it"
  "tcp_ctrl_builder_no_tlast|tcp_ctrl_builder|bouncer_tcp_ctrl_builder.sv|s/out_last_q <= (k_q + KW'(1) == nb_q);/out_last_q <= (k_q == nb_q);/|tlast never set on the last beat: frames run into each other on the TX stream"
  "axil_soft_reset_stale_limit|axil_db|bouncer_axil_regs.sv|s/sq_lim_q\[n\]      <= 16'd1 << (any_rst ?/sq_lim_q[n]      <= 16'd1 << (rst ?/|CTRL.RESET's state reset leaves the old ring size in the doorbell check for a cycle: a doorbell passes against a ring that is gone"
)

quick=0; only=""; list=0; work=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --only) only="${2:?--only needs a name}"; shift ;;
    --list) list=1 ;;
    --work) work="${2:?--work needs a directory}"; shift ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "formal: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [ "$list" -eq 1 ]; then
  for c in "${checks[@]}"; do IFS='|' read -r n _ d q _ <<<"$c"; echo "$n depth $d (quick $q)"; done
  for m in "${mutants[@]}"; do IFS='|' read -r n h _ _ why <<<"$m"; echo "mutant.$n on $h: $why"; done
  exit 0
fi

for tool in yosys yosys-smtbmc z3; do
  if ! command -v "$tool" >/dev/null; then
    echo "formal: $tool not found (install with scripts/deps.sh)" >&2
    exit 1
  fi
done

if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/bouncer-formal.XXXXXX")
  trap 'rm -rf "$work"' EXIT
else
  mkdir -p "$work"
fi

# harness_sources ARRAY TOP "EXTRA MODULES": the array ARRAY = the RTL sources harness TOP reads
all_srcs=()
rtl_f_array all_srcs "$root/rtl/sources.f"
harness_sources() {
  local out m seeds=(--file "$root/tb/formal/$2.sv")
  for m in $3; do seeds+=(--module "$m"); done
  out=$(python3 "$root/scripts/rtl_needed.py" "${seeds[@]}" -- "${all_srcs[@]}") || exit 2
  mapfile -t "$1" <<<"$out"
}

# run_check NAME TOP DEPTH SOURCES... -> prints PASSED / FAILED / ERROR, log in $work/NAME.log
run_check() {
  local covers=$1 name=$2 top=$3 depth=$4; shift 4
  local srcs=("$@") smt="$work/$name.smt2" log="$work/$name.log"
  if ! yosys -q -l "$work/$name.yosys.log" -p "read_verilog -formal -sv ${srcs[*]} $root/tb/formal/formal_axis_check.sv $root/tb/formal/formal_axil_check.sv $root/tb/formal/$top.sv; prep -flatten -top $top; memory_map; opt -fast; async2sync; dffunmap; write_smt2 -wires $smt" \
      >/dev/null 2>&1; then
    echo ERROR; return
  fi
  yosys-smtbmc -s z3 --unroll -t "$depth" --dump-vcd "$work/$name.vcd" "$smt" 2>&1 \
    | tr '\b' '\r' | tr '\r' '\n' | sed -n 's/.*\(##  .*\)/\1/p' > "$log" || true
  if grep -q 'Status: PASSED' "$log"; then :
  elif grep -q 'Status: FAILED' "$log" && grep -q 'Assert failed' "$log"; then echo FAILED; return
  else echo ERROR; return; fi
  # Reachability: a harness with cover statements must reach every one within the same depth
  # (a property about a state that is never reached holds vacuously). Mutants skip this.
  if [ "$covers" -eq 1 ] && grep -q 'cover *(' "$root/tb/formal/$top.sv"; then
    yosys-smtbmc -s z3 --unroll -c -t "${cover_depth[$name]:-$depth}" "$smt" 2>&1 \
      | tr '\b' '\r' | tr '\r' '\n' | sed -n 's/.*\(##  .*\)/\1/p' > "$work/$name.cover.log" || true
    if grep -q 'Status: PASSED' "$work/$name.cover.log"; then
      echo "PASSED, $(grep -c 'Reached cover statement' "$work/$name.cover.log") covers reached"
    else
      echo UNREACHED
    fi
    return
  fi
  echo PASSED
}

rc=0; ran=0
for c in "${checks[@]}"; do
  IFS='|' read -r name top depth qdepth extra <<<"$c"
  [ -n "$only" ] && [ "$only" != "$name" ] && continue
  [ "$quick" -eq 1 ] && depth=$qdepth
  harness_sources paths "$top" "$extra"
  t0=$SECONDS
  res=$(run_check 1 "$name" "$top" "$depth" "${paths[@]}")
  ran=$((ran + 1))
  echo "formal $name: depth $depth: $res ($((SECONDS - t0)) s)"
  if [ "${res%%,*}" != PASSED ]; then
    rc=1
    if [ "$res" = FAILED ]; then
      grep -E 'Assert failed|BMC failed|Writing trace' "$work/$name.log" | sed 's/^/  /'
    elif [ "$res" = UNREACHED ]; then
      grep -E 'Unreached cover|Reached cover' "$work/$name.cover.log" | sed 's/^/  /'
    else
      tail -n 20 "$work/$name.yosys.log" "$work/$name.log" 2>/dev/null | sed 's/^/  /'
    fi
  fi
done

for m in "${mutants[@]}"; do
  IFS='|' read -r mname harness file expr why <<<"$m"
  [ -n "$only" ] && [ "$only" != "mutant.$mname" ] && continue
  found=0
  for c in "${checks[@]}"; do
    IFS='|' read -r name top depth qdepth extra <<<"$c"
    [ "$name" = "$harness" ] && { found=1; break; }
  done
  [ "$found" -eq 1 ] || { echo "formal mutant.$mname: no harness $harness"; rc=1; continue; }
  # mutants always run at the full depth (--quick too): a full ring needs it
  files=()
  harness_sources files "$top" "$extra"
  orig=""
  for f in "${files[@]}"; do [ "$(basename "$f")" = "$file" ] && orig=$f; done
  if [ -z "$orig" ]; then
    echo "formal mutant.$mname: $file is not among the sources of harness $harness"
    rc=1; continue
  fi
  mkdir -p "$work/mutant.$mname"
  mut="$work/mutant.$mname/$file"
  sed "$expr" "$orig" > "$mut"
  if cmp -s "$orig" "$mut"; then
    echo "formal mutant.$mname: the sed expression no longer matches $file (update the mutant)"
    rc=1; continue
  fi
  paths=()
  for f in "${files[@]}"; do
    if [ "$f" = "$orig" ]; then paths+=("$mut"); else paths+=("$f"); fi
  done
  t0=$SECONDS
  res=$(run_check 0 "mutant.$mname" "$top" "$depth" "${paths[@]}")
  ran=$((ran + 1))
  if [ "$res" = FAILED ]; then
    echo "formal mutant.$mname ($why): caught, check FAILED as it must ($((SECONDS - t0)) s)"
    grep -E 'Assert failed' "$work/mutant.$mname.log" | head -n 3 | sed 's/^/  /'
  else
    echo "formal mutant.$mname ($why): NOT caught: $res"
    rc=1
  fi
done

if [ "$ran" -eq 0 ]; then echo "formal: no check named $only (see --list)" >&2; exit 2; fi
exit $rc
