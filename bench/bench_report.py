#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Merges the bench outputs into out/bench.json (schema: check()), CSV, gnuplot PNGs and
docs/bench-report.md.

  bench_report.py --cosim F.jsonl... --sw sw.json --ceil ceil.jsonl --out-dir out
                  --perf-md docs/bench-report.md [--no-plots] [--sweep "description"]
  bench_report.py --check out/bench.json      # schema check only (exit 1 on a problem)
  bench_report.py merge DIR... --out-dir out --perf-md docs/bench-report.md [--no-plots]
      # the outputs of scripts/bench.sh --shard K/N (DIR/bench_raw of each slice, or of an
      # unsharded run, which reports through the same path) -> the files above, then --check

Inputs: cosim_bench JSON lines (kind latency / throughput / meta), Google Benchmark JSON of
sw_reject_bench, line_rate_table JSON lines (ceilings), and optionally the Yosys cell counts
of bouncer_probe (--probe-cost, lines "<width> <cell> <count>"). bench.json holds exactly the
keys "latency" and "throughput"; every record has the issue's fields plus "source" ("probes":
taken from the RTL latency probes and cross-checked against the testbench; "testbench": a
point whose probe FIFO overflowed) and, for throughput, "path", "mem_latency" and a few
counts.
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import storm_report  # noqa: E402  (bench/storm_report.py)

LAT_FIELDS = {"stage": str, "path": str, "pd_len": int, "rev": int, "width": int,
              "mem_latency": int, "outstanding": int, "sqs": int, "min": int, "median": int,
              "p99": int, "max": int}
TPUT_FIELDS = {"pd_len": int, "width": int, "rev": int, "frames_per_s": (int, float),
               "ceiling_ratio": (int, float)}
PATHS = ("push", "dma_inline", "dma_buffer")
STAGES = ("doorbell_to_desc", "doorbell_to_pd", "doorbell_to_first_beat",
          "doorbell_to_last_beat", "doorbell_to_cqe")
RX_STAGES = ("syn_to_synack_first_beat", "auto_mpa_req_to_first_beat", "mpa_req_to_event",
             "event_to_first_beat", "host_mpa_req_to_first_beat")
CLOCK = {64: 250e6, 512: 322e6}


def check(doc):
    """Problems with a bench.json document (empty list: valid)."""
    errs = []
    if not isinstance(doc, dict) or set(doc.keys()) != {"latency", "throughput"}:
        return ["top level must be an object with exactly the keys latency and throughput"]
    for key, fields in (("latency", LAT_FIELDS), ("throughput", TPUT_FIELDS)):
        recs = doc[key]
        if not isinstance(recs, list) or not recs:
            errs.append(f"{key}: must be a non-empty list")
            continue
        for i, r in enumerate(recs):
            for f, t in fields.items():
                if f not in r:
                    errs.append(f"{key}[{i}]: missing {f}")
                elif not isinstance(r[f], t) or isinstance(r[f], bool):
                    errs.append(f"{key}[{i}]: {f} has type {type(r[f]).__name__}")
            if errs:
                return errs
            if key == "latency":
                if r["path"] not in PATHS:
                    errs.append(f"latency[{i}]: path {r['path']}")
                if not r["min"] <= r["median"] <= r["p99"] <= r["max"]:
                    errs.append(f"latency[{i}]: min <= median <= p99 <= max fails")
                if r["rev"] not in (1, 2) or r["width"] not in (64, 512):
                    errs.append(f"latency[{i}]: rev/width")
            else:
                if r["frames_per_s"] <= 0 or not 0 < r["ceiling_ratio"] <= 1.0 + 1e-9:
                    errs.append(f"throughput[{i}]: frames_per_s/ceiling_ratio out of range")
    return errs


def read_jsonl(paths):
    out = []
    for p in paths:
        with open(p) as f:
            out.extend(json.loads(line) for line in f if line.strip())
    return out


def fmt_rate(x):
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.1f} k"
    return f"{x:.0f}"


def table(header, rows):
    s = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    for r in rows:
        s += "| " + " | ".join(str(c) for c in r) + " |\n"
    return s


def plots(out_dir, lat, tput, ceil):
    gp = shutil.which("gnuplot")
    if not gp:
        print("bench_report: gnuplot not installed, no PNGs", file=sys.stderr)
        return []
    made = []
    # latency vs PD length per path (outstanding 1, median, rev 1, mem latency 200 or the
    # nearest measured)
    mems = sorted({r["mem_latency"] for r in lat})
    mem = 200 if 200 in mems else mems[-1]
    series = []
    for w in (64, 512):
        for p in PATHS:
            pts = sorted((r["pd_len"], r["median"]) for r in lat
                         if r["stage"] == "doorbell_to_first_beat" and r["path"] == p
                         and r["width"] == w and r["outstanding"] == 1 and r["rev"] == 1
                         and r["mem_latency"] == mem)
            if pts:
                fn = os.path.join(out_dir, f"plot_lat_{p}_w{w}.dat")
                with open(fn, "w") as f:
                    f.writelines(f"{x} {y}\n" for x, y in pts)
                series.append((fn, f"{p}, {w}-bit"))
    if series:
        png = os.path.join(out_dir, "bench_latency.png")
        cmds = [
            "set terminal pngcairo size 900,560" if _has_cairo(gp) else "set terminal png size 900,560",
            f"set output '{png}'",
            f"set title 'Doorbell to first TX beat (median, 1 outstanding, rev 1, memory latency {mem})'",
            "set xlabel 'PD length (bytes)'", "set ylabel 'cycles'", "set key top left",
            "set grid",
            "plot " + ", ".join(f"'{fn}' using 1:2 with linespoints title '{t}'" for fn, t in series),
        ]
        subprocess.run([gp], input="\n".join(cmds), text=True, check=True)
        made.append(png)
    # throughput vs PD length, with the beat ceiling and Ethernet line rates
    series = []
    for w in (64, 512):
        pts = sorted((r["pd_len"], r["frames_per_s"] / 1e6) for r in tput
                     if r["width"] == w and r["rev"] == 1 and r.get("path") != "push"
                     and r.get("mem_latency") == mem
                     and r.get("path") == ("dma_buffer"))
        if pts:
            fn = os.path.join(out_dir, f"plot_tput_w{w}.dat")
            with open(fn, "w") as f:
                f.writelines(f"{x} {y}\n" for x, y in pts)
            series.append((fn, f"measured {w}-bit (DMA, PD buffer, memory latency {mem})", "linespoints"))
        cpts = sorted((c["pd_len"], c["beat_ceiling_fps"] / 1e6) for c in ceil
                      if c["width"] == w and c["rev"] == 1)
        fn = os.path.join(out_dir, f"plot_ceil_w{w}.dat")
        with open(fn, "w") as f:
            f.writelines(f"{x} {y}\n" for x, y in cpts)
        series.append((fn, f"beat ceiling {w}-bit @ {CLOCK[w] / 1e6:.0f} MHz", "lines dt 2"))
    for key, name in (("eth10g_fps", "10G Ethernet"), ("eth100g_fps", "100G Ethernet")):
        cpts = sorted((c["pd_len"], c[key] / 1e6) for c in ceil if c["width"] == 64 and c["rev"] == 1)
        fn = os.path.join(out_dir, f"plot_{key}.dat")
        with open(fn, "w") as f:
            f.writelines(f"{x} {y}\n" for x, y in cpts)
        series.append((fn, f"{name} line rate", "lines dt 3"))
    png = os.path.join(out_dir, "bench_throughput.png")
    cmds = [
        "set terminal pngcairo size 900,560" if _has_cairo(gp) else "set terminal png size 900,560",
        f"set output '{png}'",
        "set title 'Back-to-back rejects (rev 1) against the ceilings'",
        "set xlabel 'PD length (bytes)'", "set ylabel 'M frames/s'", "set logscale y",
        "set key outside bottom center horizontal", "set grid",
        "plot " + ", ".join(f"'{fn}' using 1:2 with {st} title '{t}'" for fn, t, st in series),
    ]
    subprocess.run([gp], input="\n".join(cmds), text=True, check=True)
    made.append(png)
    for fn in os.listdir(out_dir):
        if fn.startswith("plot_") and fn.endswith(".dat"):
            os.remove(os.path.join(out_dir, fn))
    return made


_cairo = None


def _has_cairo(gp):
    global _cairo
    if _cairo is None:
        r = subprocess.run([gp, "-e", "set terminal"], capture_output=True, text=True)
        _cairo = "pngcairo" in (r.stdout + r.stderr)
    return _cairo


MARKS_NOTE = ("Marks: `†` the point fell back to the testbench's figures (its probe FIFO "
              "overflowed); `‡n` n rejects of the point posted through the push page were "
              "fetched from the ring (PSHDROP). Unmarked: probes, no push fallback.\n")


def marks(r):
    """The marks of a latency cell: † testbench fallback, ‡n push fallbacks (PSHDROP)."""
    m = "" if r.get("source", "probes") == "probes" else " †"
    if r.get("push_dropped"):
        m += f" ‡{r['push_dropped']}"
    return m


def tput_notes(t):
    """The notes column of a throughput row."""
    n = []
    if t.get("host_limited"):
        n.append(f"**host-limited** ({t.get('host_waits', 0)}/{t.get('frames', 0)})")
    if t.get("push_dropped"):
        n.append(f"PSHDROP {t['push_dropped']}")
    if t.get("source", "probes") != "probes":
        n.append("testbench")
    return ", ".join(n)


def lat_of(lat, **kw):
    return [r for r in lat if all(r.get(k) == v for k, v in kw.items())]


def multi_sq_section(lat, tput):
    """The sqs dimension: the points measured with more than one SQ next to the same points
    with one SQ (markdown lines)."""
    L = []
    multi = sorted({r["sqs"] for r in lat if r["sqs"] > 1})
    if not multi:
        return L
    L.append("## Several SQs\n")
    L.append("The same rejects spread round-robin over `sqs` SQs (reject i on SQ i % sqs, the "
             "Device opened with `num_sq` = sqs). The SQ engine still handles one WQE at a time "
             "and picks the next SQ with work round-robin, so several SQs add queues (host "
             "threads posting without sharing a ring), not parallel rejects: the figures show "
             "what the spreading costs or saves. Medians in cycles; frames/s as in the "
             "throughput table.\n")
    keys = sorted({(r["width"], r["path"], r["mem_latency"], r["rev"], r["pd_len"], r["outstanding"])
                   for r in lat if r["sqs"] > 1 and r["stage"] == "doorbell_to_first_beat"})
    hdr = ["width", "path", "mem lat", "rev", "PD", "outst."]
    for q in [1] + multi:
        hdr += [f"first beat, {q} SQ", f"CQE, {q} SQ", f"frames/s, {q} SQ"]
    rows = []
    for (w, p, m, rev, pd, k) in keys:
        row = [w, p, m, rev, pd, k]
        for q in [1] + multi:
            for st in ("doorbell_to_first_beat", "doorbell_to_cqe"):
                x = lat_of(lat, stage=st, path=p, rev=rev, width=w, mem_latency=m, outstanding=k,
                           pd_len=pd, sqs=q)
                row.append(x[0]["median"] if x else "–")
            t = [t for t in tput if (t["width"], t["path"], t["mem_latency"], t["rev"], t["pd_len"],
                                     t["outstanding"], t.get("sqs", 1)) == (w, p, m, rev, pd, k, q)]
            row.append(fmt_rate(t[0]["frames_per_s"]) if t else "–")
        rows.append(row)
    L.append(table(hdr, rows))
    return L


def source_commit():
    """The commit of the tree the report is generated in (with -dirty for local changes), or
    "unknown" outside a git checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run(["git", "-C", here, "describe", "--always", "--dirty", "--abbrev=7"],
                           capture_output=True, text=True, check=True)
        return r.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def perf_md(args, lat, tput, meta, sw, ceil, pngs, probe_cost=None, storm=None,
            storm_pngs=(), lat_all=None, tput_all=None):
    L = []
    A = L.append
    A("# Reject benches\n")
    A("Generated by `bench/bench_report.py` from `out/bench.json` (`scripts/bench.sh"
      + {"full": "", "quick": " --quick", "tiny": " --tiny"}[args.mode] + "`); do not edit by hand. Everything is "
      "simulated cycles of the co-simulated core (exact and deterministic), except the "
      "software baseline and the simulation speed (wall time on the build machine: 2 cores "
      "shared with other jobs, so lower bounds).\n")
    A(f"Sweep: {args.sweep}. Measured at commit {source_commit()}.\n")
    A("**Source of the latencies: the RTL latency probes.** `bouncer_probe` stamps each event "
      "with the core's cycle counter into a 64-record FIFO that `Device::read_probes()` pops "
      "through the PROBE_* registers (plain register reads: the same code runs over XRT on a "
      "card). Records carry `\"source\": \"probes\"`. `cosim_bench` cross-checks every "
      "sample against the testbench's own view: the doorbell stamp equals the edge at which "
      "the device registered the SQ_DB / SQ_PUSH_DB write (`Platform::mmio_writes()`), first "
      "and last beat equal `Platform::tx_frames()`, the CQE stamp equals the first cycle at "
      "which the testbench, looking at the CQ in host memory every cycle, sees it (at 1 "
      "outstanding; never later with more), and on the RX side SYN / MPA-request stamps equal "
      "the tlast beat in `Platform::rx_frames()`. A point whose FIFO overflowed (the host reads "
      "it while it waits and every 8 posts of a burst) would fall back to the testbench "
      "figures with `\"source\": \"testbench\"`, marked † in the tables: "
      + ("none did" if not sum(m.get("probe_fallback", 0) for m in meta) else
         f"{sum(m.get('probe_fallback', 0) for m in meta)} did")
      + "; rejects posted through the push page that the engine fetched from the ring instead "
      f"(PSHDROP, marked ‡): {sum(m.get('push_dropped', 0) for m in meta)}"
      + f"; {sum(m.get('probe_agree', 0) for m in meta)} samples agreed. At 1 outstanding "
      "reject the CQE's own LATENCY field also equals doorbell → first beat in every sample.\n")
    A("Stages (tags in docs/register-map.md, `probe_stage`): DOORBELL (SQ_DB/SQ_PUSH_DB "
      "registered), DESC_AVAIL (WQE in the SQ engine: push page taken, or last beat of its "
      "DMA read), PD_READY (the reject builder holds the PD and starts: inline PD, or last "
      "beat of the PD DMA read), REJ_FIRST_HOST / REJ_FIRST_AUTO / REJ_LAST (reject beats at "
      "the TX port), CQE_WRITTEN (CQE write handed to host memory), SYN_IN / MPA_REQ_LAST "
      "(tlast beat at the RX port), SYNACK_FIRST, EVENT_WRITTEN (AEQE handed to host "
      "memory).\n")
    A("Every table below except \"Several SQs\" shows the records with `sqs` 1 (all rejects "
      "on SQ 0); `out/bench.json` has every record.\n")

    # headline
    mems = sorted({r["mem_latency"] for r in lat})
    hm = 200 if 200 in mems else mems[-1]
    A(f"## Headline: doorbell → first TX beat (cycles, median, 1 outstanding, memory latency {hm})\n")
    pds = sorted({r["pd_len"] for r in lat})
    hdr = ["path", "rev", "width"] + [f"PD {p}" for p in pds]
    rows = []
    for p in PATHS:
        for rev in (1, 2):
            for w in (64, 512):
                row = [p, rev, w]
                for pd in pds:
                    m = lat_of(lat, stage="doorbell_to_first_beat", path=p, rev=rev, width=w,
                               outstanding=1, mem_latency=hm, pd_len=pd)
                    row.append(m[0]["median"] if m else "–")
                if any(c != "–" for c in row[3:]):
                    rows.append(row)
    A(table(hdr, rows))
    A("`–`: no such point (dma_inline carries at most 32 bytes of PD in the WQE; rev 2 is "
      "enhanced, so PD 512 would make PD_Length 516 > MPA_PD_MAX).\n")

    # verdicts
    A("## Target verdicts\n")
    V = []
    push = [r for r in lat if r["stage"] == "doorbell_to_first_beat" and r["path"] == "push"
            and r["outstanding"] == 1 and r["pd_len"] <= 64]
    inl_ok = None       # push, PD <= 32 (inline): met the 16 cycles
    if push:
        worst = max(push, key=lambda r: r["max"])
        inl = [r for r in push if r["pd_len"] <= 32]
        big = [r for r in push if r["pd_len"] > 32]
        worst_inl = max(inl, key=lambda r: r["max"]) if inl else None
        worst_big = max(big, key=lambda r: r["max"]) if big else None
        inl_ok = worst_inl is not None and worst_inl["max"] <= 16
        ok = worst["max"] <= 16
        verdict = ("met" if ok else
                   "**missed** for PD 33 – 64; met for PD ≤ 32" if inl_ok else "**missed**")
        txt = []
        if worst_inl:
            txt.append(f"PD ≤ 32 (inline): max {worst_inl['max']} over both widths, every memory "
                       "latency and revision")
        if worst_big:
            txt.append(f"PD {worst_big['pd_len']}: max {worst_big['max']} (more than the 32-byte "
                       "inline field holds, so the CM engine fetches it by DMA: memory latency "
                       f"{worst_big['mem_latency']})")
        V.append(["Push, PD ≤ 64 B: doorbell → first beat ≤ 16 cycles", verdict, "; ".join(txt)])
    for p, n_lat, name in (("dma_inline", 1, "DMA, inline PD: ≤ 1 memory latency + 24"),
                           ("dma_buffer", 2, "DMA, PD buffer: ≤ 2 memory latencies + 24")):
        rs = [r for r in lat if r["stage"] == "doorbell_to_first_beat" and r["path"] == p
              and r["outstanding"] == 1]
        if not rs:
            continue
        over = [r["max"] - (n_lat * r["mem_latency"] + 24) for r in rs]
        worst = max(range(len(rs)), key=lambda i: over[i])
        r = rs[worst]
        V.append([name, "met" if over[worst] <= 0 else "**missed**",
                  f"worst: {r['max']} cycles at memory latency {r['mem_latency']}, PD {r['pd_len']}, "
                  f"{r['width']}-bit (limit {n_lat * r['mem_latency'] + 24}, "
                  f"{'margin' if over[worst] <= 0 else 'over by'} {abs(over[worst])})"])
    for w in (64, 512):
        ts = [t for t in tput if t["width"] == w]
        if ts:
            lo = min(ts, key=lambda t: t["ceiling_ratio"])
            hi = max(ts, key=lambda t: t["ceiling_ratio"])
            V.append([f"Back-to-back ≥ 95 % of the beat ceiling, {w}-bit",
                      "met" if lo["ceiling_ratio"] >= 0.95 else "**missed**",
                      f"{lo['ceiling_ratio'] * 100:.1f} % (PD {lo['pd_len']}, {lo['path']}, memory "
                      f"latency {lo['mem_latency']}) to {hi['ceiling_ratio'] * 100:.1f} % (PD "
                      f"{hi['pd_len']}, {hi['path']}, memory latency {hi['mem_latency']})"])
    off = [m for m in meta if not m.get("fst") and not m.get("rx")]
    if off:
        best = max(m["cycles_per_s"] for m in off)
        worst = min(m["cycles_per_s"] for m in off)
        V.append(["Co-simulation ≥ 1 M simulated cycles per wall second, tracing off",
                  "met" if worst >= 1e6 else ("**missed**" if best < 1e6 else "partly"),
                  f"{worst / 1e6:.2f} – {best / 1e6:.2f} M cycles/s over the bench processes "
                  "(host looking at the CQ every cycle; shared machine)"])
        costs = [m["cost_vs_bare"] for m in off if m.get("cost_vs_bare")]
        if costs:
            V.append(["Platform + driver ≤ 1.5x the bare verilated core (CPU time per cycle)",
                      "met" if max(costs) <= 1.5 else "**missed**",
                      f"{min(costs):.2f}x – {max(costs):.2f}x over the bench processes"])
    V.append(storm_report.verdict(storm or []))
    V.append(storm_report.verdict_overload(storm or []))
    ar = [r for r in lat if r["stage"] == "auto_mpa_req_to_first_beat"]
    if ar:
        worst = max(ar, key=lambda r: r["max"])
        nodma = [r for r in ar if r["pd_len"] == 0]   # no template to read: the fixed pipeline
        fixed = max(nodma, key=lambda r: r["max"]) if nodma else None
        V.append(["Auto-reject: last MPA-request beat → first reject beat ≤ 32",
                  "met" if worst["max"] <= 32 else "**missed**",
                  (f"PD 0 (no template read): max {fixed['max']} ({fixed['width']}-bit)"
                   + ("" if fixed["max"] <= 32 else f", over by {fixed['max'] - 32}") + "; "
                   if fixed else "")
                  + f"with a PD template one memory latency more, worst {worst['max']} "
                  f"(memory latency {worst['mem_latency']}, PD {worst['pd_len']}, "
                  f"{worst['width']}-bit)"])
    else:
        V.append(["Auto-reject: last MPA-request beat → first reject beat ≤ 32", "not measured",
                  "no RX-side point in this sweep"])
    A(table(["target", "verdict", "measured"], V))
    fw = [r for r in lat if r["stage"] == "doorbell_to_cqe" and r["path"] == "push"
          and r["pd_len"] == 0 and r["outstanding"] == 1 and r["mem_latency"] == min(mems)]
    fixed_work = max(r["median"] for r in fw) if fw else None
    A("Why the misses, and what would meet them:\n")
    A("- **Throughput:** the SQ engine handles one WQE at a time up to its CQE: fetch the WQE "
      "(one DMA read), read the context, load the PD (inline or one more DMA read), build and "
      "send, and only then fetch the next WQE. The CQE itself is posted (a 4-entry queue in "
      "front of the CQ writer) and the simulated host posts the ring paths in lists with one "
      "doorbell, so neither the CQ write nor the host's doorbells are in the loop any more; "
      "push still costs the host one 64-byte write and doorbell per reject (those points are "
      "marked host-limited where the device waited for it). Each reject therefore costs about "
      "one or two memory latencies plus "
      + (f"~{fixed_work} cycles of fixed work (push, PD 0, memory latency 0: doorbell → CQE "
         f"{fixed_work})" if fixed_work else "a few tens of cycles of fixed work")
      + ", while the frame needs only "
      "ceil(bytes / width) beats (2 – 74). Meeting 95 % needs a WQE prefetch (read several "
      "WQEs per DMA burst and keep a small WQE FIFO) and the PD fetch of WQE n+1 overlapped "
      "with the transmission of frame n (the CM engine).\n")
    if ar:
        A("- **Auto-reject latency:** from the request's last beat the RX FIFO, parser and MPA "
          "assembler take the segment, the CM engine looks up the node and listener, reads and "
          "writes the context, sends the ACK of the request, and reads the listener's PD "
          "template from host memory (one DMA read: one memory latency) before the builder "
          "starts; at memory latency 0 what remains is that fixed pipeline. Meeting 32 cycles "
          "needs the template on chip (a small per-listener PD RAM written by CREATE_LISTENER "
          "instead of a host address), the ACK not ahead of the reject (the reject segment "
          "acknowledges the request itself), and the context read overlapped with the "
          "request's reassembly.\n")
    dma0 = [r for r in lat if r["stage"] == "doorbell_to_first_beat" and r["outstanding"] == 1
            and r["mem_latency"] == min(mems) and r["path"] in ("dma_inline", "dma_buffer")]
    if dma0:
        wi = max((r for r in dma0 if r["path"] == "dma_inline"), key=lambda r: r["max"], default=None)
        wb = max((r for r in dma0 if r["path"] == "dma_buffer"), key=lambda r: r["max"], default=None)
        A("- **DMA latency:** a WQE from the ring costs the push pipeline plus its fetch (the "
          "read request, memory latency, 8 beats of 64 bits; the WQE is checked with its last "
          "beat); with the PD "
          "in a buffer a second read (memory latency + ⌈PD / 8⌉ beats) follows in series. At "
          f"memory latency {min(mems)}: "
          + (f"dma_inline max {wi['max']}" if wi else "")
          + ("; " if wi and wb else "")
          + (f"dma_buffer max {wb['max']} (PD {wb['pd_len']})" if wb else "")
          + ". Meeting + 24 needs the WQE in fewer beats (a 512-bit read path) and, for PD "
          "buffers, the PD read issued from the WQE's first beat and streamed into the builder "
          "while the header is sent.\n")
    if inl_ok:
        A("- **Push latency, PD 33 – 64:** a PD of 32 bytes or less rides in the push page and "
          "meets the target at both widths (PD length does not change the figure: the CM "
          "engine writes the inline words into the builder while it reads the context). From "
          "the doorbell cycle: SQ engine pick (registered round-robin choice) and select (the "
          "push page was checked ahead), hand-off to the CM engine (intake: "
          "the first PD word and pd_clear go to the builder), context read (request, 2-cycle "
          "RAM), plan, builder start (field latch with the checksum partial sums), checksum "
          "totals, fold and header register, the builder's output register, the TX arbiter's "
          "output register, first beat at the port. A PD of 33 – 64 bytes does not fit the "
          "32-byte inline field, so it is read from the PD slot by DMA (one memory latency). "
          "Meeting 16 cycles there needs a 64-byte inline field: a larger WQE and push page "
          "(register map and driver change).\n")
    else:
        A("- **Push latency:** the push path spends a few cycles in the push-page hand-off, "
          "the context read and the builder's header/checksum pipeline. PD of 33 – 64 bytes "
          "would need a 64-byte inline field (a larger push page) to avoid the DMA read.\n")

    # full latency tables
    A("## Latency by stage (cycles: min / median / p99 / max)\n")
    outs = sorted({r["outstanding"] for r in lat})
    for st in STAGES:
        A(f"### {st}\n")
        hdr = ["path", "rev", "width", "mem lat", "outst."] + [f"PD {p}" for p in pds]
        rows = []
        for p in PATHS:
            for rev in (1, 2):
                for w in (64, 512):
                    for m in mems:
                        for k in outs:
                            row = [p, rev, w, m, k]
                            for pd in pds:
                                x = lat_of(lat, stage=st, path=p, rev=rev, width=w, mem_latency=m,
                                           outstanding=k, pd_len=pd)
                                row.append(f"{x[0]['min']}/{x[0]['median']}/{x[0]['p99']}/{x[0]['max']}"
                                           + marks(x[0]) if x else "–")
                            if any(c != "–" for c in row[5:]):
                                rows.append(row)
        A(table(hdr, rows))
    A(MARKS_NOTE)

    rx = [r for r in lat if r["stage"] in RX_STAGES]
    if rx:
        A("## RX side: connection setup and reject (cycles: min / median / p99 / max)\n")
        A("Simulated initiators, one connection at a time, MPA request with 16 bytes of PD in "
          "one segment; `auto_*`: a listener with auto-reject ALL and a PD template of that "
          "length (fetched by DMA: path dma_buffer); the others: the host (this program: AEQ "
          "poll, then `Cm::post_reject`) rejects with that PD, so `event_to_first_beat` "
          "includes the simulated host's reaction.\n")
        rx_pds = sorted({r["pd_len"] for r in rx})
        for st in RX_STAGES:
            rs = [r for r in rx if r["stage"] == st]
            if not rs:
                continue
            A(f"### {st}\n")
            rows = []
            for rev in (1, 2):
                for w in (64, 512):
                    for m in mems:
                        row = [rev, w, m]
                        for pd in rx_pds:
                            x = lat_of(rs, rev=rev, width=w, mem_latency=m, pd_len=pd)
                            row.append(f"{x[0]['min']}/{x[0]['median']}/{x[0]['p99']}/{x[0]['max']}"
                                       if x else "–")
                        if any(c != "–" for c in row[3:]):
                            rows.append(row)
            A(table(["rev", "width", "mem lat"] + [f"PD {p}" for p in rx_pds], rows))

    # probe cost
    A("## Cost of the probes\n")
    if probe_cost:
        A("Yosys 0.23 `synth_xilinx -family xcup -flatten` of `bouncer_probe` alone (run by "
          "`scripts/bench.sh`; the whole kernel's figures are in docs/resources.md). The "
          "parameter `PROBES = 0` of `bouncer_core` removes it (the PROBE_* registers then read 0 "
          "and CAPS.PROBES is 0). Most flip-flops are the ten one-record holding registers "
          "(one per event source, so events of different sources in the same cycle are all "
          "kept); the FIFO (64 x 64 bits) and the RX arrival stamps (32 x 42 bits) are LUT "
          "RAM.\n")
        rows = []
        for w in sorted(probe_cost):
            c = probe_cost[w]
            lut = sum(v for k, v in c.items() if k.startswith("LUT"))
            ff = sum(v for k, v in c.items() if k.startswith("FD"))
            lutram = sum(v for k, v in c.items() if k.startswith("RAM"))
            carry = sum(v for k, v in c.items() if k.startswith("CARRY"))
            muxf = sum(v for k, v in c.items() if k.startswith("MUXF"))
            rows.append([w, lut, ff, lutram, carry, muxf])
        A(table(["width", "LUT", "FF", "LUT-RAM cells (RAM32M16/RAM64M8)", "CARRY", "MUXF"], rows))
    else:
        A("Not measured in this run (yosys not installed).\n")

    L.extend(multi_sq_section(lat_all or lat, tput_all or tput))

    # throughput
    A("## Back-to-back throughput\n")
    A("Rejects posted with the SQ kept full (at most the largest outstanding count of the "
      "sweep in flight; the ring paths in lists of up to 8 with one doorbell, push one WQE "
      "per push write and doorbell); frames/s from first beat to first beat over the last 3/4 of the "
      "frames, at 250 MHz (64-bit) and 322 MHz (512-bit); ceiling = clock / (ceil(frame bytes / "
      "beat bytes) + 0 idle beats: bouncer_tx_arb and the reject builder stream frames back "
      "to back). The Ethernet columns are the line rates with preamble 8, IFG 12 and FCS 4 "
      "bytes, frames padded to 64 (`bench/line_rate.hpp`). Shown: memory latency "
      f"{min(mems)} and {hm}; `out/bench.json` and `out/bench_throughput.csv` have every point.\n")
    hdr = ["width", "rev", "PD", "frame B", "path", "mem lat", "frames/s", "beat ceiling",
           "ratio", "10G line", "100G line", "notes"]
    rows = []
    cmap = {(c["width"], c["rev"], c["pd_len"]): c for c in ceil}
    shown = [t for t in tput if t["mem_latency"] in (min(mems), hm)]
    for t in sorted(shown, key=lambda t: (t["width"], t["rev"], t["path"], t["mem_latency"], t["pd_len"])):
        c = cmap.get((t["width"], t["rev"], t["pd_len"]))
        rows.append([t["width"], t["rev"], t["pd_len"], t.get("frame_bytes", ""), t["path"],
                     t["mem_latency"], fmt_rate(t["frames_per_s"]),
                     fmt_rate(c["beat_ceiling_fps"]) if c else "", f"{t['ceiling_ratio'] * 100:.1f} %",
                     fmt_rate(c["eth10g_fps"]) if c else "", fmt_rate(c["eth100g_fps"]) if c else "",
                     tput_notes(t)])
    A(table(hdr, rows))
    A("Notes: **host-limited**: at least 1/8 of the measured frames were posted by a doorbell "
      "that came after the previous reject's CQE was written (the device had run dry), so the "
      "figure is the simulated host's posting rate, not the device's; PSHDROP n: n rejects "
      "posted through the push page were fetched from the ring instead; testbench: the probe "
      "FIFO overflowed and the point's latencies are the testbench's.\n")

    # software baseline
    A("## Software baseline\n")
    A("`bench/sw_reject_bench` (Google Benchmark): the golden C++ builder used as a software CM "
      "would use it: copy the application's PD, build the Ethernet/IPv4/TCP/MPA headers, copy "
      "the PD into the frame, compute the IPv4 and TCP checksums, advance SND_NXT / IP_ID. One "
      "core of this machine. Hardware/software ratios: the software time over the hardware's "
      "doorbell → first beat (push, 1 outstanding, memory latency "
      f"{hm}; >1: the hardware is faster) and the hardware's back-to-back frames/s over the "
      "software's rejects/s on one core.\n")
    hdr = ["PD", "rev", "software ns/reject", "software rejects/s",
           "HW latency ns 64 / 512", "latency ratio 64 / 512", "HW/SW throughput 64 / 512"]
    rows = []
    for s in sorted(sw, key=lambda s: (s["rev"], s["pd_len"])):
        lat_ns, ratio, tp = [], [], []
        for w in (64, 512):
            x = lat_of(lat, stage="doorbell_to_first_beat", path="push", rev=s["rev"], width=w,
                       outstanding=1, mem_latency=hm, pd_len=s["pd_len"])
            if x:
                ns = x[0]["median"] / CLOCK[w] * 1e9
                lat_ns.append(f"{ns:.0f}")
                ratio.append(f"{s['ns'] / ns:.2f}")
            else:
                lat_ns.append("–")
                ratio.append("–")
            ts = [t for t in tput if t["width"] == w and t["rev"] == s["rev"]
                  and t["pd_len"] == s["pd_len"] and t["mem_latency"] == hm and t["path"] != "push"]
            tp.append(f"{max(t['frames_per_s'] for t in ts) / (1e9 / s['ns']):.2f}" if ts else "–")
        rows.append([s["pd_len"], s["rev"], f"{s['ns']:.0f}", fmt_rate(1e9 / s["ns"]),
                     " / ".join(lat_ns), " / ".join(ratio), " / ".join(tp)])
    A(table(hdr, rows))

    # sim speed
    A("## Simulation speed (bench scenario)\n")
    A("Simulated cycles per wall second of each `cosim_bench` process, and the platform's "
      "cost: CPU time per simulated cycle of the whole process (driver, TLM platform, bus "
      "models, model) over that of the bare verilated core, measured in the same process just "
      "before (`measure_bare_core`, inputs idle, no tracing). The host looks at host memory "
      "after every cycle, sleeping in `Platform::wait_event` where that gives the same cycles, "
      "and reads the probe FIFO over MMIO.\n")
    def cost(m):
        return f"{m['cost_vs_bare']:.2f}x" if m.get("cost_vs_bare") else "–"
    def bare(m):
        return f"{m['bare_cycles_per_s'] / 1e6:.2f} M" if m.get("bare_cycles_per_s") else "–"
    rows = [["RX side" if m.get("rx") else "TX sweep", m["width"], m["mem_latency"],
             "on" if m.get("fst") else "off", m["sim_cycles"],
             f"{m['wall_s']:.2f}", f"{m['cycles_per_s'] / 1e6:.2f} M", bare(m), cost(m)]
            for m in sorted(meta, key=lambda m: (m.get("rx", False), m.get("fst", False),
                                                 m["width"], m["mem_latency"]))]
    A(table(["run", "width", "mem lat", "FST trace", "cycles", "wall s", "cycles/s",
             "bare core cycles/s", "cost vs bare"], rows))

    if pngs:
        A("## Plots\n")
        for p in pngs:
            A(f"- `out/{os.path.basename(p)}`")
        A("")
    for line in storm_report.section(storm or [], list(storm_pngs), table):
        A(line)
    A("## Not measured yet\n")
    A("- On a card: the probes and `Device::read_probes()` are backend-neutral, but no card is "
      "here, so no figure above comes from hardware.")
    if not any(r["sqs"] > 1 for r in (lat_all or lat)):
        A("- More than one SQ (no record in this run has `sqs` > 1).")
    return "\n".join(L) + "\n"


def read_probe_cost(path):
    """{width: {cell type: count}} from lines '<width> <cell> <count>'; {} without a file."""
    cost = {}
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    cost.setdefault(int(parts[0]), {})[parts[1]] = int(parts[2])
    return cost


def merge(argv):
    """bench_report.py merge: the report of the bench.sh slices in argv's directories."""
    ap = argparse.ArgumentParser(prog="bench_report.py merge")
    ap.add_argument("dirs", nargs="+", help="scripts/bench.sh --out directories (with bench_raw/)")
    ap.add_argument("--out-dir", default="out")
    ap.add_argument("--perf-md")
    ap.add_argument("--no-plots", action="store_true")
    m = ap.parse_args(argv)
    shards, files = {}, {}
    for d in m.dirs:
        raw = os.path.join(d, "bench_raw")
        try:
            with open(os.path.join(raw, "shard.json")) as f:
                man = json.load(f)
        except OSError as e:
            print(f"bench_report merge: {raw}: no slice manifest ({e})", file=sys.stderr)
            return 1
        if man["shard"] in shards:
            print(f"bench_report merge: slice {man['shard']} given twice", file=sys.stderr)
            return 1
        shards[man["shard"]] = man
        for name in man["outputs"]:
            path = os.path.join(raw, name)
            if not os.path.exists(path):
                print(f"bench_report merge: slice {man['shard']}/{man['shards']} lacks {name}",
                      file=sys.stderr)
                return 1
            if name in files:
                print(f"bench_report merge: {name} in two slices", file=sys.stderr)
                return 1
            files[name] = path
    first = next(iter(shards.values()))
    n = first["shards"]
    for man in shards.values():
        if (man["mode"], man["shards"], man["sweep"]) != (first["mode"], n, first["sweep"]):
            print("bench_report merge: the slices come from different sweeps", file=sys.stderr)
            return 1
    if sorted(shards) != list(range(1, n + 1)):
        missing = sorted(set(range(1, n + 1)) - set(shards))
        print(f"bench_report merge: slices {missing} of {n} missing", file=sys.stderr)
        return 1
    names = sorted(files)  # one order whatever the slicing: records come out the same
    pick = lambda prefix, suffix: [files[x] for x in names
                                   if x.startswith(prefix) and x.endswith(suffix)]
    args = argparse.Namespace(
        check=None, cosim=pick("cosim_", ".jsonl"), meta_only=pick("fst", ".jsonl"),
        sw=files.get("sw.json"), ceil=files.get("ceil.jsonl"), out_dir=m.out_dir,
        perf_md=m.perf_md, no_plots=m.no_plots, mode=first["mode"], sweep=first["sweep"],
        probe_cost=files.get("probe_cost.txt"), storm=pick("storm_", ".json"))
    rc = report(args)
    if rc:
        return rc
    with open(os.path.join(m.out_dir, "bench.json")) as f:
        errs = check(json.load(f))
    for e in errs:
        print("bench.json:", e, file=sys.stderr)
    return 1 if errs else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "merge":
        return merge(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--check")
    ap.add_argument("--cosim", nargs="*", default=[])
    ap.add_argument("--meta-only", nargs="*", default=[],
                    help="cosim_bench outputs used only for their meta record (tracing on)")
    ap.add_argument("--sw")
    ap.add_argument("--ceil")
    ap.add_argument("--out-dir", default="out")
    ap.add_argument("--perf-md")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--mode", choices=("full", "quick", "tiny"), default="full")
    ap.add_argument("--sweep", default="")
    ap.add_argument("--probe-cost", help="lines '<width> <cell type> <count>' (Yosys stat)")
    ap.add_argument("--storm", nargs="*", default=[], help="storm_bench JSON files")
    args = ap.parse_args()
    if args.check:
        with open(args.check) as f:
            errs = check(json.load(f))
        for e in errs:
            print("bench.json:", e, file=sys.stderr)
        print(f"{args.check}: {'schema ok' if not errs else 'INVALID'}")
        return 1 if errs else 0
    return report(args)


def report(args):
    """bench.json, CSV, plots and bench-report.md from the raw outputs named in args."""
    recs = read_jsonl(args.cosim)
    strip = lambda r: {k: v for k, v in r.items() if k != "kind"}
    lat = [strip(r) for r in recs if r["kind"] == "latency"]
    tput = [strip(r) for r in recs if r["kind"] == "throughput"]
    meta = [strip(r) for r in recs + read_jsonl(args.meta_only) if r["kind"] == "meta"]
    bad = [m for m in meta if not m.get("ok", False)]
    if bad or not meta:
        print("bench_report: a cosim_bench process failed or wrote no meta record", file=sys.stderr)
        return 1
    doc = {"latency": lat, "throughput": tput}
    errs = check(doc)
    storm = storm_report.load(args.storm)
    bad_storm = [r for r in storm if not r.get("ok")]
    if bad_storm:
        for r in bad_storm:
            print(f"bench_report: storm w{r['width']} {r['mode']} failed: {r.get('error', '')}",
                  file=sys.stderr)
        return 1

    if errs:
        for e in errs:
            print("bench_report:", e, file=sys.stderr)
        return 1
    ceil = read_jsonl([args.ceil]) if args.ceil else []
    sw = []
    if args.sw:
        with open(args.sw) as f:
            for b in json.load(f)["benchmarks"]:
                if b.get("run_type", "iteration") != "iteration":
                    continue
                mult = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
                sw.append({"pd_len": int(b["pd_len"]), "rev": int(b["rev"]),
                           "ns": b["real_time"] * mult})
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "bench.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(args.out_dir, "bench.csv"), "w", newline="") as f:
        w = csv.writer(f)
        cols = list(LAT_FIELDS) + ["samples", "source"]
        w.writerow(cols)
        for r in lat:
            w.writerow([r.get(c, "") for c in cols])
    with open(os.path.join(args.out_dir, "bench_throughput.csv"), "w", newline="") as f:
        w = csv.writer(f)
        cols = list(TPUT_FIELDS) + ["path", "mem_latency", "outstanding", "sqs", "frames", "cycles",
                                    "frame_bytes", "source"]
        w.writerow(cols)
        for r in tput:
            w.writerow([r.get(c, "") for c in cols])
    if storm:  # bench.json keeps the two keys; the storm runs have their own file
        with open(os.path.join(args.out_dir, "bench_storm.json"), "w") as f:
            json.dump(storm_report.records(storm), f, indent=1)
    with open(os.path.join(args.out_dir, "bench_meta.json"), "w") as f:
        json.dump({"sim": meta, "software": sw, "ceilings": ceil}, f, indent=1)
    # the tables and plots compare one-SQ points; the sqs dimension has its own section
    lat1 = [r for r in lat if r["sqs"] == 1]
    tput1 = [t for t in tput if t.get("sqs", 1) == 1]
    pngs = [] if args.no_plots else plots(args.out_dir, lat1, tput1, ceil)
    storm_pngs = [] if args.no_plots else storm_report.plot(storm, args.out_dir)
    if args.perf_md:
        with open(args.perf_md, "w") as f:
            f.write(perf_md(args, lat1, tput1, meta, sw, ceil, pngs,
                            read_probe_cost(args.probe_cost), storm, storm_pngs, lat, tput))
    print(f"bench_report: {len(lat)} latency and {len(tput)} throughput records -> "
          f"{args.out_dir}/bench.json, bench.csv, bench_throughput.csv"
          + (", " + ", ".join(os.path.basename(p) for p in pngs) if pngs else "")
          + (f"; {args.perf_md}" if args.perf_md else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
