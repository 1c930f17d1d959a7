#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Reject benches: installs deps, builds, runs the co-simulation sweep (one process
# per data width and host-memory latency), the software baseline and the line-rate model,
# then writes out/bench.json, out/bench.csv, out/bench_throughput.csv, out/*.png and
# docs/bench-report.md (bench/bench_report.py).
#   scripts/bench.sh            full sweep (PD 0..512, rev 1/2, 3 paths, memory latency
#                               0/100/200/500, width 64/512, outstanding 1/8/64; and SQ
#                               count 4 against 1 for push and dma_buffer at outstanding 8/64)
#   scripts/bench.sh --quick    reduced sweep, same outputs, a few minutes
# Options for tests: --tiny (smallest sweep), --bin-dir DIR (prebuilt bench binaries; skips
# deps and the build), --out DIR, --perf-md FILE, --no-plots.
# --shard K/N: run only the K-th of N disjoint slices of the work (processes i with
# i mod N = K - 1; slice 1 also runs the software baseline, the ceilings and the probe cost)
# into DIR/bench_raw and stop there; `bench/bench_report.py merge DIR1 ... DIRN --out-dir out
# --perf-md docs/bench-report.md` then writes what an unsharded run writes (scripts/cluster/ runs
# the slices as a Slurm array job).
# BOUNCER_BENCH_JOBS: co-simulation processes at once (default 1: the machine is shared).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=full out=$root/out perf=$root/docs/bench-report.md bin="" plots=1 shard=1 shards=1
while [ $# -gt 0 ]; do
  case $1 in
    --quick) mode=quick ;;
    --tiny) mode=tiny ;;
    --bin-dir) bin=$2; shift ;;
    --out) out=$2; shift ;;
    --perf-md) perf=$2; shift ;;
    --no-plots) plots=0 ;;
    --shard)
      [[ ${2:-} =~ ^([0-9]+)/([0-9]+)$ ]] || { echo "bench.sh: --shard K/N" >&2; exit 2; }
      shard=$((10#${BASH_REMATCH[1]})) shards=$((10#${BASH_REMATCH[2]}))
      if [ "$shards" -lt 1 ] || [ "$shard" -lt 1 ] || [ "$shard" -gt "$shards" ]; then
        echo "bench.sh: --shard K/N needs 1 <= K <= N" >&2; exit 2
      fi
      shift ;;
    -h|--help) sed -n 3,19p "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
if [ -z "$bin" ]; then
  "$root"/scripts/deps.sh
  build=${BOUNCER_BENCH_BUILD:-$root/build-bench}
  export CCACHE_DIR=${CCACHE_DIR:-$root/.ccache}
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "${BOUNCER_JOBS:-2}" \
    --target cosim_bench storm_bench sw_reject_bench line_rate_table test_line_rate
  bin=$build/bench
  "$bin"/test_line_rate --gtest_brief=1
fi

case $mode in
  full)
    widths="64 512" mems="0 100 200 500" pds=0,4,16,64,128,255,512 outs=1,8,64 samples=64
    sw_time=0.2 rx_pds=0,4,16,64,128,255 rx_samples=8 storm_peers=4000 storm_cap_peers=1000
    sq_mems="0 200" sq_pds=0,64,255 sq_outs=8,64 ;;
  quick)
    widths="64 512" mems="0 200" pds=0,16,64,255,512 outs=1,8,64 samples=16 sw_time=0.05
    rx_pds=0,64,255 rx_samples=4 storm_peers=1000 storm_cap_peers=1000 sq_mems="200" sq_pds=0,64 sq_outs=8,64 ;;
  tiny)
    widths="64 512" mems="200" pds=0,64 outs=1,4 samples=8 sw_time=0.01 rx_pds=0,64 rx_samples=2
    storm_peers=60 storm_cap_peers=60 sq_mems="200" sq_pds=0 sq_outs=4 ;;
esac
sweep="$mode: width {${widths// /,}}, memory latency {${mems// /,}}, PD {$pds}, rev {1,2}, paths push/dma_inline/dma_buffer, outstanding {$outs}, SQs 1, at least $samples samples per point (2 x outstanding when larger); SQs 4: paths push/dma_buffer, memory latency {${sq_mems// /,}}, PD {$sq_pds}, outstanding {$sq_outs}; RX side: PD {$rx_pds}, $rx_samples connections per point"

mkdir -p "$out"
raw=$out/bench_raw
rm -rf "$raw"
mkdir -p "$raw"
jobs=${BOUNCER_BENCH_JOBS:-1}
# The sweep's processes in a fixed order; a shard takes every N-th from its index on.
cmds=() produces=()
# task COMMAND OUTPUT...: one process of the sweep and the files it writes into $raw
task() { cmds+=("$1"); shift; produces+=("$*"); }
for w in $widths; do
  for m in $mems; do
    task "$bin/cosim_bench --width $w --mem-latency $m --pd $pds --outstanding $outs --samples $samples --out $raw/cosim_w${w}_m${m}.jsonl" "cosim_w${w}_m${m}.jsonl"
    # RX side (simulated initiators, auto-reject and host path) from the latency probes
    task "$bin/cosim_bench --rx --width $w --mem-latency $m --rx-pd $rx_pds --rx-samples $rx_samples --out $raw/cosim_rx_w${w}_m${m}.jsonl" "cosim_rx_w${w}_m${m}.jsonl"
  done
  # SQ count 4 (the sqs-1 twins of these points are in the main sweep above)
  for m in $sq_mems; do
    task "$bin/cosim_bench --width $w --mem-latency $m --paths push,dma_buffer --pd $sq_pds --outstanding $sq_outs --sqs 4 --samples $samples --out $raw/cosim_sq4_w${w}_m${m}.jsonl" "cosim_sq4_w${w}_m${m}.jsonl"
  done
done
# tracing on: one small point set at 64 bits for the simulation-speed comparison
task "$bin/cosim_bench --width 64 --mem-latency 200 --pd 0,64 --rev 1 --outstanding 1,8 --samples $samples --fst $raw/trace.fst --out $raw/fst.jsonl" fst.jsonl
# connection storm: SYNs offered at the target rate, 10 M/s (every 25 cycles at 250 MHz, every
# 32 at 322 MHz), host memory latency 200
for w in 64 512; do
  iv=$([ "$w" = 64 ] && echo 25 || echo 32)
  for sm in auto host; do
    task "$bin/storm_bench --width $w --mode $sm --peers $storm_peers --interval $iv --sample 4000 --out $raw/storm_w${w}_$sm.json" "storm_w${w}_$sm.json"
    # the same at 2x and 10x the run's own capacity (measured first by the script)
    task "python3 $root/bench/storm_sweep.py --bin $bin/storm_bench --width $w --mode $sm --peers $storm_peers --cap-peers $storm_cap_peers --out-dir $raw" "storm_w${w}_${sm}_x2.json" "storm_w${w}_${sm}_x10.json"
  done
done
mine=() expect=()
for i in "${!cmds[@]}"; do
  if [ $((i % shards)) -eq $((shard - 1)) ]; then
    mine+=("${cmds[$i]}")
    read -r -a outs <<<"${produces[$i]}"
    expect+=("${outs[@]}")
  fi
done
echo "== co-simulation sweep ($mode, slice $shard/$shards: ${#mine[@]} of ${#cmds[@]} processes), $jobs process(es) at a time"
if [ ${#mine[@]} -gt 0 ]; then
  printf '%s\n' "${mine[@]}" | xargs -P "$jobs" -I{} sh -c '{} || { echo "bench.sh: failed: {}" >&2; exit 255; }'
fi
rm -f "$raw/trace.fst"

if [ "$shard" = 1 ]; then
  echo "== software baseline"
  "$bin"/sw_reject_bench --benchmark_min_time="$sw_time" --benchmark_format=json \
    --benchmark_out="$raw/sw.json" --benchmark_out_format=json >/dev/null
  IFS=, read -r -a pd_list <<<"$pds"
  "$bin"/line_rate_table "${pd_list[@]}" >"$raw/ceil.jsonl"
  expect+=(sw.json ceil.jsonl)

  # Cost of the latency probes: Yosys synth_xilinx of bouncer_probe alone, per width
  if [ "$mode" != tiny ] && command -v yosys >/dev/null; then
    echo "== probe cost (yosys synth_xilinx -family xcup of bouncer_probe)"
    raw_abs=$(cd "$raw" && pwd)
    # bouncer_probe's own sources only (scripts/rtl_needed.py): the netlist depends on what
    # Yosys read
    # shellcheck source=scripts/rtl_files.sh
    probe_srcs=$(source "$root/scripts/rtl_files.sh" && rtl_f_files "$root/rtl/sources.f" \
      | xargs python3 "$root/scripts/rtl_needed.py" --module bouncer_probe -- | tr '\n' ' ')
    for w in 64 512; do
      yosys -q -p "read_verilog -sv $probe_srcs; chparam -set DATA_W $w bouncer_probe; synth_xilinx -family xcup -top bouncer_probe -flatten -noiopad -noclkbuf; tee -o $raw_abs/probe_stat_w$w.txt stat" >/dev/null
      awk -v w="$w" '$1 ~ /^(LUT|FD|RAM|CARRY|MUXF)/ && $2 ~ /^[0-9]+$/ { print w, $1, $2 }' \
        "$raw/probe_stat_w$w.txt" >>"$raw/probe_cost.txt"
    done
    expect+=(probe_cost.txt)
  fi
fi

# What this slice was to produce, for bench_report.py merge (which checks it is all there).
python3 - "$raw/shard.json" "$mode" "$shard" "$shards" "$sweep" "${expect[@]}" <<'PY'
import json, sys
path, mode, k, n, sweep, *outputs = sys.argv[1:]
with open(path, "w") as f:
    json.dump({"mode": mode, "shard": int(k), "shards": int(n), "sweep": sweep,
               "outputs": outputs}, f, indent=1)
PY

if [ "$shards" -gt 1 ]; then
  echo "bench.sh: slice $shard/$shards done, outputs in $raw; merge all slices with"
  echo "  bench/bench_report.py merge <the N --out directories> --out-dir out --perf-md docs/bench-report.md"
  exit 0
fi

echo "== report"
extra=()
[ "$plots" = 1 ] || extra+=(--no-plots)
python3 "$root"/bench/bench_report.py merge "$out" --out-dir "$out" --perf-md "$perf" \
  ${extra[@]+"${extra[@]}"}
