#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Yosys 0.23 synth_xilinx -family xcup estimates of the Vitis kernel top (bouncer_kernel), out
# of context (no I/O or clock buffers): resources per instance and in total, and the logic
# depth of the deepest register-to-register path per clock, against a budget for the clock.
# One Yosys run per data width gives both (scripts/synth_report.py reads the netlist).
# Method, weights and the budget: docs/resources.md ("Method").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  cat <<'EOF'
Usage: scripts/synth.sh [--width 64|512|both] [--check [--depth-advisory]
                        [--depth-ceiling CLOCK=LEVELS]...] [--hier] [--out DIR]

  --width W   data width(s) to synthesize (default: both, one after the other)
  --check     fail (exit 1) if the depth exceeds the budget, anything is left unmapped,
              or a connection table is not in block RAM/URAM; docs/resources.md is
              not touched (the report goes to DIR/resources[_wW].md)
  --depth-advisory
              with --check: depth over budget is printed as a warning and does not
              fail (for experiments; CI gates on the budget)
  --depth-ceiling CLOCK=LEVELS
              with --check: fail if the clock's deepest path is longer than LEVELS,
              even with --depth-advisory (a ratchet for work above the budget)
  --hier      also run a non-flattened synthesis per width, for the per-module
              cross-check table (doubles the CPU time)
  --out DIR   work directory for logs, netlists and summaries (default: out/synth)
  --keep      keep the mapped netlist (DIR/wW.netlist.json, 90-190 MB)

Without --check and with both widths, docs/resources.md is rewritten.
Clock budgets: ap_clk at 250 MHz, ap_clk_2 (CMAC stream clock) at 322.265625 MHz.
Needs yosys and python3. About 5 (DATA_W 64) and 7 (DATA_W 512) CPU minutes per width.
EOF
}

widths="64 512"
width_arg=both
check=0
depth_advisory=0
ceilings=()
hier=0
keep=0
out="$root/out/synth"
ctx_log2=10
top=bouncer_kernel
while [ $# -gt 0 ]; do
  case "$1" in
    --width)
      [ $# -ge 2 ] || { echo "synth.sh: --width needs a value" >&2; exit 2; }
      width_arg=$2
      case "$2" in
        64|512) widths=$2 ;;
        both) widths="64 512" ;;
        *) echo "synth.sh: --width must be 64, 512 or both" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --check) check=1; shift ;;
    --depth-advisory) depth_advisory=1; shift ;;
    --depth-ceiling)
      [ $# -ge 2 ] || { echo "synth.sh: --depth-ceiling needs CLOCK=LEVELS" >&2; exit 2; }
      ceilings+=(--depth-ceiling "$2"); shift 2 ;;
    --hier) hier=1; shift ;;
    --keep) keep=1; shift ;;
    --out)
      [ $# -ge 2 ] || { echo "synth.sh: --out needs a directory" >&2; exit 2; }
      out=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "synth.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
done
for tool in yosys python3; do
  command -v "$tool" >/dev/null || { echo "synth.sh: $tool not found (scripts/deps.sh installs it)" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Yosys spends much of its time in malloc/free: with tcmalloc (or jemalloc) preloaded it needs
# about a tenth less CPU. The netlist is byte-for-byte the same (Yosys' output does not depend
# on addresses). BOUNCER_SYNTH_MALLOC=glibc keeps the system allocator; =PATH preloads PATH.
preload=""
case "${BOUNCER_SYNTH_MALLOC:-auto}" in
  glibc) ;;
  auto)
    for lib in libtcmalloc_minimal.so.4 libjemalloc.so.2; do
      for dir in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
        if [ -z "$preload" ] && [ -f "$dir/$lib" ]; then preload="$dir/$lib"; fi
      done
    done ;;
  *)
    [ -f "$BOUNCER_SYNTH_MALLOC" ] || { echo "synth.sh: BOUNCER_SYNTH_MALLOC=$BOUNCER_SYNTH_MALLOC: no such file" >&2; exit 2; }
    preload=$BOUNCER_SYNTH_MALLOC ;;
esac
run_yosys() {
  if [ -n "$preload" ]; then
    LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}" yosys "$@"
  else
    yosys "$@"
  fi
}
# shellcheck source=scripts/rtl_files.sh
source "$root/scripts/rtl_files.sh"
src_list=()
rtl_f_array src_list "$root/rtl/sources.f"
srcs="${src_list[*]}"

rc=0
summaries=()
for w in $widths; do
  tag="w$w"
  hier_cmds=""
  if [ "$hier" -eq 1 ]; then
    hier_cmds="
  design -load rtl
  synth_xilinx -family xcup -top $top -noiopad -noclkbuf
  tee -q -o $out/$tag.hier.stat.txt stat -tech xilinx"
  fi
  echo "synth $tag: yosys synth_xilinx -family xcup -flatten (log: $out/$tag.log${preload:+, allocator ${preload##*/}})"
  t0=$SECONDS
  # proc first (synth_xilinx starts with it anyway), so input ports can be marked before the
  # flatten and the instance tree dumped (internal cells deleted, instances kept).
  if ! run_yosys -q -l "$out/$tag.log" -p "
  read_verilog -sv $srcs
  chparam -set DATA_W $w -set CTX_DEPTH_LOG2 $ctx_log2 $top
  hierarchy -check -top $top
  proc
  setattr -set bouncer_in 1 */i:*
  design -save rtl
  delete */t:\$* */t:\$paramod* %d
  write_json $out/$tag.inst.json
  design -load rtl
  synth_xilinx -family xcup -top $top -flatten -noiopad -noclkbuf
  tee -q -o $out/$tag.stat.txt stat -tech xilinx
  json -o $out/$tag.netlist.json $top$hier_cmds
" >/dev/null 2>"$out/$tag.warn"; then
    echo "synth $tag: yosys failed:" >&2
    tail -20 "$out/$tag.warn" >&2
    exit 1
  fi
  # BRAM port-width resizing notes are expected; anything else Yosys warns about is shown.
  grep -v 'Resizing cell port' "$out/$tag.warn" >&2 || true
  t1=$SECONDS
  hier_arg=()
  [ "$hier" -eq 1 ] && hier_arg=(--hier-stat "$out/$tag.hier.stat.txt")
  python3 "$root/scripts/synth_report.py" analyze --width "$w" --ctx-log2 "$ctx_log2" \
    --netlist "$out/$tag.netlist.json" --inst "$out/$tag.inst.json" --stat "$out/$tag.stat.txt" \
    "${hier_arg[@]}" --budget ap_clk=250 --budget ap_clk_2=322.265625 --out "$out/$tag.summary.json"
  echo "synth $tag: yosys $((t1 - t0)) s, analysis $((SECONDS - t1)) s (wall)"
  # the netlist is large (90-190 MB) and fully described by the summary
  [ "$keep" -eq 1 ] || rm -f "$out/$tag.netlist.json"
  summaries+=("$out/$tag.summary.json")
  if [ "$check" -eq 1 ]; then
    adv=()
    [ "$depth_advisory" -eq 1 ] && adv=(--depth-advisory)
    python3 "$root/scripts/synth_report.py" check "${adv[@]}" "${ceilings[@]}" \
      "$out/$tag.summary.json" || rc=1
    # A variable index on the left of an assignment (x[i] <= ..., x[8*i +: 8] <= ...) is
    # lowered by Yosys into a shifter behind a 32-bit negation: a carry chain in front of
    # the write enables (it cost up to 2.5 levels on the deepest paths). Write such
    # assignments as a loop over the constant indices with an equality compare.
    # shellcheck disable=SC2016  # the $ are literal: Yosys cell names
    negs=$(grep 'creating \$alu cell for .*\$neg\$[^ ]*:0\$' "$out/$tag.log" || true)
    if [ -n "$negs" ]; then
      echo "synth $tag: FAILED variable-index assignment(s) lowered through a negation:" >&2
      printf '%s\n' "$negs" >&2
      rc=1
    else
      echo "synth $tag: no variable-index assignment lowered through a negation"
    fi
  fi
done

cmd="scripts/synth.sh --width $width_arg"
[ "$hier" -eq 1 ] && cmd="$cmd --hier"
report="$out/resources.md"
[ "$width_arg" = both ] || report="$out/resources_w$width_arg.md"
if [ "$check" -eq 0 ] && [ "$width_arg" = both ]; then
  report="$root/docs/resources.md"
fi
# the RTL the report describes: the last commit under rtl/ (and whether rtl/ has local changes)
rtl_rev=$(git -C "$root" log -1 --format=%h -- rtl ':!rtl/CMakeLists.txt' 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain -- rtl ':!rtl/CMakeLists.txt' 2>/dev/null)" ]; then
  rtl_rev="$rtl_rev + uncommitted changes"
fi
python3 "$root/scripts/synth_report.py" doc --out "$report" --command "$cmd" --rtl "$rtl_rev" \
  --yosys "$(yosys -V)" --date "$(date -u +%Y-%m-%d)" "${summaries[@]}"
echo "synth: report $report"
exit $rc
