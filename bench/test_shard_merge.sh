#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A sweep cut into slices gives the same results as the sweep in one piece:
#   bench/test_shard_merge.sh BIN_DIR WORK_DIR [--quick|--tiny] [SHARDS]
# runs scripts/bench.sh once unsharded and then as SHARDS slices (default 4) one after the
# other, merges the slices (bench/bench_report.py merge) and compares: bench.json exactly,
# the storm and co-simulation meta records without their wall- and CPU-time fields (the
# software baseline is wall time only: only its points are compared).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$1 work=$2 mode=${3:---quick} shards=${4:-4}
rm -rf "$work"
mkdir -p "$work"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
"$root"/scripts/bench.sh "$mode" --bin-dir "$bin" --out "$work/whole" \
  --perf-md "$work/whole/bench-report.md" --no-plots >"$work/whole.log"
dirs=()
for k in $(seq 1 "$shards"); do
  "$root"/scripts/bench.sh "$mode" --shard "$k/$shards" --bin-dir "$bin" --out "$work/slice-$k" \
    >"$work/slice-$k.log"
  dirs+=("$work/slice-$k")
done
python3 "$root"/bench/bench_report.py merge "${dirs[@]}" --out-dir "$work/merged" \
  --perf-md "$work/merged/bench-report.md" --no-plots
python3 - "$work/whole" "$work/merged" <<'PY'
import json, os, sys
a, b = sys.argv[1], sys.argv[2]
TIMING = {"wall_s", "cycles_per_s", "cpu_s", "cycles_per_cpu_s", "bare_cycles_per_s",
          "bare_cycles_per_cpu_s", "cost_vs_bare"}
def load(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)
bad = 0
def same(what, x, y):
    global bad
    if x != y:
        bad += 1
        print(f"test_shard_merge: {what} differ", file=sys.stderr)
wa, wb = load(a, "bench.json"), load(b, "bench.json")
print(f"bench.json: {len(wa['latency'])} latency, {len(wa['throughput'])} throughput records")
same("bench.json", wa, wb)
strip = lambda recs: [{k: v for k, v in r.items() if k not in TIMING} for r in recs or []]
same("storm records", strip(load(a, "bench_storm.json")), strip(load(b, "bench_storm.json")))
ma, mb = load(a, "bench_meta.json"), load(b, "bench_meta.json")
same("meta records", strip(ma["sim"]), strip(mb["sim"]))
same("ceilings", ma["ceilings"], mb["ceilings"])
same("software baseline points", [(s["pd_len"], s["rev"]) for s in ma["software"]],
     [(s["pd_len"], s["rev"]) for s in mb["software"]])
sys.exit(1 if bad else 0)
PY
echo "test_shard_merge: $shards slices merged = the whole sweep"
