#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Connection storm at multiples of the core's own capacity, for one width and mode.

1. Capacity: storm_bench runs at decreasing SYN intervals (CAPACITY_INTERVALS, --cap-peers
   initiators) until a run is overloaded: a frame dropped at the RX port (RX_OVERFLOW or
   SYN_DROP_QUEUE), a SYN dropped for a full table, or an initiator not rejected. The capacity
   is the steady-state rate (middle 80 % of the rejects) of the fastest run that was not.
2. Overload: one run at 2x and one at 10x that capacity (interval = clock / (factor x
   capacity), at least 1 cycle), --peers initiators each.

Writes storm_w<W>_<mode>_x2.json and _x10.json into --out-dir: storm_bench's record plus
"load_factor", "capacity_per_s" and "capacity_interval". Exit 1 if a storm_bench run fails or
no interval was free of overload. Timing is reported, never asserted.

  storm_sweep.py --bin build/bench/storm_bench --width 64 --mode auto --peers 4000 --out-dir DIR
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

CAPACITY_INTERVALS = (2000, 1000, 700, 500, 400, 300, 250, 200, 150, 120, 100, 80, 60, 50, 40,
                      32, 25)
FACTORS = (2, 10)


def clock_hz(width):
    return 322.265625e6 if width == 512 else 250e6


def run(binary, width, mode, peers, interval, mem_latency, out):
    cmd = [binary, "--width", str(width), "--mode", mode, "--peers", str(peers), "--interval",
           str(interval), "--mem-latency", str(mem_latency), "--sample", "4000", "--out", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0 and not os.path.exists(out):
        sys.stderr.write(r.stderr)
        raise SystemExit(f"storm_sweep: failed: {' '.join(cmd)}")
    with open(out) as f:
        rec = json.load(f)
    if not rec.get("ok"):
        raise SystemExit(f"storm_sweep: run not ok: {' '.join(cmd)}: {rec.get('error', '')}")
    return rec


def overloaded(rec):
    return (rec["rx_overflow_frames"] != 0 or rec.get("syn_drop_queue", 0) != 0
            or rec["syn_drop_full"] != 0 or rec["not_rejected_peers"] != 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="storm_bench executable")
    ap.add_argument("--width", type=int, choices=(64, 512), required=True)
    ap.add_argument("--mode", choices=("auto", "host"), required=True)
    ap.add_argument("--peers", type=int, default=4000, help="initiators of the overload runs")
    ap.add_argument("--cap-peers", type=int, default=1000,
                    help="initiators of the capacity runs")
    ap.add_argument("--mem-latency", type=int, default=200)
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args()

    best = None
    with tempfile.TemporaryDirectory() as tmp:
        for iv in CAPACITY_INTERVALS:
            rec = run(a.bin, a.width, a.mode, a.cap_peers, iv, a.mem_latency,
                      os.path.join(tmp, f"cap_{iv}.json"))
            if overloaded(rec):
                break
            if best is None or rec["rejects_per_s_mid80"] > best["rejects_per_s_mid80"]:
                best = rec
    if best is None:
        raise SystemExit(f"storm_sweep: w{a.width} {a.mode}: every interval was overloaded")
    cap = best["rejects_per_s_mid80"]
    print(f"storm_sweep: w{a.width} {a.mode}: capacity {cap / 1e6:.3f} M/s "
          f"(interval {best['interval_cycles']})")
    os.makedirs(a.out_dir, exist_ok=True)
    for k in FACTORS:
        iv = max(1, round(clock_hz(a.width) / (k * cap)))
        out = os.path.join(a.out_dir, f"storm_w{a.width}_{a.mode}_x{k}.json")
        rec = run(a.bin, a.width, a.mode, a.peers, iv, a.mem_latency, out)
        rec["load_factor"] = k
        rec["capacity_per_s"] = cap
        rec["capacity_interval"] = best["interval_cycles"]
        with open(out, "w") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
