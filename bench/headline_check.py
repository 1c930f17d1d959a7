#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Checks the headline cycle counts of the reject paths against the RTL of this tree.

  headline_check.py --bench BUILD/bench/cosim_bench --pinned bench/testdata/headline_pinned.json
  headline_check.py --bench BUILD/bench/cosim_bench --doc docs/bench-report.md

At 1 outstanding reject every sample of a point takes the same number of cycles (the
co-simulation is exact and deterministic), so a few samples per point give the figures the full
sweep publishes. Both modes run cosim_bench at 1 outstanding, once per data width, and require
min == max for every point they read.

--pinned FILE: the cycle counts written in FILE (stage, path, PD length, rev, width, at FILE's
  memory latency) must match exactly: a change of one cycle on any headline path fails here and
  shows up in review together with the new figure.
--doc FILE: the "Headline" table of the generated report (docs/bench-report.md) is regenerated
  from the RTL at this tree and must equal the published one cell by cell, so the report cannot
  keep figures that an RTL change made untrue (scripts/bench.sh regenerates it).
Exit 0 when everything matches, 1 with every difference listed, 2 on a usage or run error.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

SAMPLES = 4


def run(bench, width, mem, paths, pds, revs):
    """cosim_bench's latency records (outstanding 1) for one width, as a list of dicts."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "h.jsonl")
        cmd = [bench, "--width", str(width), "--mem-latency", str(mem), "--outstanding", "1",
               "--samples", str(SAMPLES), "--paths", ",".join(paths),
               "--pd", ",".join(str(p) for p in pds), "--rev", ",".join(str(r) for r in revs),
               "--out", out]
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}")
        with open(out) as f:
            recs = [json.loads(line) for line in f if line.strip()]
    lat = [x for x in recs if x["kind"] == "latency"]
    for x in lat:
        if x["min"] != x["max"]:
            raise RuntimeError(f"not deterministic: {x}")
        if x["source"] != "probes":
            raise RuntimeError(f"point fell back to the testbench's figures: {x}")
    return lat


def find(lat, stage, path, rev, pd):
    m = [x for x in lat if (x["stage"], x["path"], x["rev"], x["pd_len"]) == (stage, path, rev, pd)]
    return m[0]["median"] if m else None


def pinned(bench, path):
    with open(path) as f:
        spec = json.load(f)
    mem = spec["mem_latency"]
    pts = spec["points"]
    errs = []
    for w in sorted({p["width"] for p in pts}):
        mine = [p for p in pts if p["width"] == w]
        lat = run(bench, w, mem, sorted({p["path"] for p in mine}),
                  sorted({p["pd_len"] for p in mine}), sorted({p["rev"] for p in mine}))
        for p in mine:
            got = find(lat, p["stage"], p["path"], p["rev"], p["pd_len"])
            if got != p["cycles"]:
                errs.append(f"{p['stage']} {p['path']} rev {p['rev']} PD {p['pd_len']} "
                            f"{w}-bit, memory latency {mem}: {got} cycles, pinned {p['cycles']}")
    return errs, len(pts)


def parse_headline(text):
    """(memory latency, PD list, {(path, rev, width): [cells]}) of the report's headline."""
    m = re.search(r"^## Headline: .*memory latency (\d+)\)\n\n(\|.*\n)+", text, re.M)
    if not m:
        raise RuntimeError("no headline table found")
    mem = int(m.group(1))
    lines = [ln for ln in m.group(0).splitlines() if ln.startswith("|")]
    hdr = [c.strip() for c in lines[0].strip("|").split("|")]
    pds = [int(h.split()[1]) for h in hdr[3:]]
    rows = {}
    for ln in lines[2:]:
        c = [x.strip() for x in ln.strip("|").split("|")]
        rows[(c[0], int(c[1]), int(c[2]))] = c[3:]
    return mem, pds, rows


def doc(bench, path):
    with open(path, encoding="utf-8") as f:
        mem, pds, rows = parse_headline(f.read())
    errs = []
    fresh = {}
    for w in sorted({k[2] for k in rows}):
        lat = run(bench, w, mem, ["push", "dma_inline", "dma_buffer"], pds, [1, 2])
        for p in ("push", "dma_inline", "dma_buffer"):
            for rev in (1, 2):
                cells = [find(lat, "doorbell_to_first_beat", p, rev, pd) for pd in pds]
                if any(c is not None for c in cells):
                    fresh[(p, rev, w)] = ["–" if c is None else str(c) for c in cells]
    for key in sorted(set(rows) | set(fresh)):
        a, b = rows.get(key), fresh.get(key)
        if a != b:
            errs.append(f"{key[0]} rev {key[1]} {key[2]}-bit: published {a}, RTL at this tree {b}")
    return errs, len(fresh)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True)
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--pinned")
    g.add_argument("--doc")
    a = ap.parse_args()
    try:
        errs, n = pinned(a.bench, a.pinned) if a.pinned else doc(a.bench, a.doc)
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print(f"headline_check: {e}", file=sys.stderr)
        return 2
    what = a.pinned or a.doc
    for e in errs:
        print(f"headline_check: {e}", file=sys.stderr)
    if errs:
        if a.doc:
            print(f"headline_check: {what} does not match the RTL of this tree: regenerate it "
                  "with scripts/bench.sh and commit it with the RTL change", file=sys.stderr)
        else:
            print(f"headline_check: a headline cycle count changed: if intended, update {what} "
                  "in the same commit", file=sys.stderr)
        return 1
    print(f"headline_check: {n} {'points' if a.pinned else 'rows'} match {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
