#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Resource and logic-depth analysis of a flattened Yosys synth_xilinx netlist (scripts/synth.sh).

  synth_report.py analyze --width W --netlist N.json --inst I.json --stat S.txt
                          [--hier-stat H.txt] --out summary.json
  synth_report.py doc --out resources.md --command CMD summary_w64.json summary_w512.json
  synth_report.py check summary.json          (exit 1 when a check failed)
  synth_report.py selftest --workdir DIR      (runs Yosys on small designs with known answers)

Per-instance attribution. The netlist is synthesized flattened (cross-boundary optimisation,
the same totals as a flat synthesis), so the module a cell came from is recovered: a cell
whose name or output net carries a hierarchical name (`hdlname`, written by Yosys' flatten;
input-port aliases are marked `bouncer_in` before flattening and skipped) belongs to the
deepest instance among those names; the remaining cells (LUTs that ABC created inside a
cone) take the owner of the cells they drive (majority), then of the cells that drive them.
Logic merged across a boundary is therefore counted in the consuming instance.

Logic depth. Longest register-to-register path per clock domain, in LUT-level equivalents
(one level = one LUT and the route into it, about 0.5 ns on UltraScale+ -2). Weights are in
WEIGHTS below and explained in docs/resources.md. Paths between two clock domains are not
counted (the CDC paths are asynchronous clock groups); top-level ports are start and end
points in every domain.
"""

import argparse
import collections
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------------------------------
# Timing model (LUT-level equivalents; see docs/resources.md, "Depth budget")
WEIGHTS = {
    "lut": 1.0,  # LUT2..LUT6: LUT delay + the route into it
    "lut1": 0.0,  # LUT1 / INV: Vivado folds them into neighbours ...
    "lut1_carry": 1.0,  # ... except a LUT1 in front of a carry chain (the S input needs a LUT)
    "muxf": 0.25,  # MUXF7/8/9: inside the slice, no route
    "carry_in": 0.5,  # CARRY4 entered on S/DI/CYINIT (the LUT in front is counted separately)
    "carry_ci": 0.125,  # each further CARRY4 along the chain (CI -> CO/O), 4 bits
    "carry8_ci": 0.25,  # each further CARRY8 along the chain
    "lutram": 1.0,  # distributed RAM / SRL read: address -> data is a LUT
    "bram_tco": 2.0,  # RAMB18E2/RAMB36E2 clock-to-out without the output register
    "bram_tco_reg": 0.5,  # ... with DO*_REG = 1
    "uram_tco": 3.0,  # URAM288 clock-to-out
    "dsp_tco": 1.0,  # DSP48E2 treated as a registered block
}
MAX_OFFENDERS = 8  # over budget: cut the worst instance and search again, this many times
# Budget: levels = floor((period - FIXED_NS) / LEVEL_NS)
LEVEL_NS = 0.5  # LUT (0.1-0.15 ns) + average route (0.35-0.4 ns), UltraScale+ -2
FIXED_NS = 0.8  # clock-to-out 0.1 + route into the capturing FF 0.35 + setup 0.1 + uncertainty 0.25

FF_TYPES = {"FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE"}
LUTRAM_LUTS = {  # LUTs a distributed-RAM primitive occupies
    "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
    "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8,
    "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8,
}
SRL_TYPES = {"SRL16E", "SRLC16E", "SRLC32E"}
BRAM_TYPES = {"RAMB18E2", "RAMB36E2"}
URAM_TYPES = {"URAM288", "URAM288_BASE"}
DSP_TYPES = {"DSP48E2"}
MUXF_TYPES = {"MUXF7", "MUXF8", "MUXF9"}
CARRY_TYPES = {"CARRY4", "CARRY8"}
LUT_TYPES = {"LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6"}
IGNORED_TYPES = {"GND", "VCC"}
# Tables holding per-connection state: they must be in block RAM (or URAM)
TABLE_MODULES = ("bouncer_conn_table", "bouncer_cm_ctx_table", "bouncer_cm_timer", "bouncer_id_alloc")


def pval(cell, name, default=0):
    """Integer value of a cell parameter (Yosys JSON writes binary strings)."""
    v = cell.get("parameters", {}).get(name)
    if v is None:
        return default
    if isinstance(v, int):
        return v
    try:
        return int(v, 2)
    except ValueError:
        try:
            return int(v)
        except ValueError:
            return default


def base_module(name):
    """'$paramod$abc\\bouncer_x' or '$paramod\\bouncer_x\\P=1' -> 'bouncer_x'."""
    if name.startswith("$paramod"):
        parts = name.split("\\")
        return parts[1] if len(parts) > 1 else name
    return name.lstrip("\\")


# ---------------------------------------------------------------------------------------
class Netlist:
    """One flattened module of a Yosys JSON netlist, bit-level."""

    def __init__(self, path):
        with open(path) as f:
            d = json.load(f)
        tops = [n for n, m in d["modules"].items()
                if str(m.get("attributes", {}).get("top", "0")).strip("0") != ""]
        if len(tops) != 1:
            raise SystemExit(f"{path}: expected one top module, found {tops}")
        self.top = tops[0]
        m = d["modules"][self.top]
        self.ports = m["ports"]
        self.cells = m["cells"]
        # bit -> list of (name, is_input_alias, instance path)
        self.bitnames = collections.defaultdict(list)
        for name, nn in m["netnames"].items():
            if name.startswith("$"):
                continue
            attrs = nn.get("attributes", {})
            inp = "bouncer_in" in attrs
            # instance: from hdlname; names Yosys made up after the flatten (memories mapped
            # to flip-flops, ...) have none, their dotted prefix is resolved later
            inst = hdl_instance(attrs["hdlname"]) if "hdlname" in attrs else \
                (name.rsplit(".", 1)[0] if "." in name else "")
            for i, b in enumerate(nn["bits"]):
                if isinstance(b, int):
                    label = name if len(nn["bits"]) == 1 else f"{name}[{i + nn.get('offset', 0)}]"
                    self.bitnames[b].append((label, inp, inst))
        self.driver = {}  # bit -> cell name
        self.consumers = collections.defaultdict(list)
        for cn, c in self.cells.items():
            dirs = c.get("port_directions", {})
            for pin, bits in c["connections"].items():
                for b in bits:
                    if not isinstance(b, int):
                        continue
                    if dirs.get(pin) == "output":
                        self.driver[b] = cn
                    else:
                        self.consumers[b].append(cn)

    def name_of(self, bit):
        """A readable name of a net bit (shallowest public non-input name), or None."""
        names = self.bitnames.get(bit, [])
        if not names:
            return None
        best = sorted(names, key=lambda t: (t[1], t[0].count("."), len(t[0]), t[0]))[0]
        return best[0]

    def owner_of_bit(self, bit, clamp):
        """Instance that drives a named net: the deepest of its non-input-port aliases."""
        cands = [clamp(inst) for (_, inp, inst) in self.bitnames.get(bit, []) if not inp]
        if not cands:
            return None
        return sorted(cands, key=lambda s: (-s.count(".") - (1 if s else 0), s))[0]


def hdl_instance(hdlname):
    """hdlname 'u_core u_cm state_q' -> instance path 'u_core.u_cm'; None -> top ''."""
    if not hdlname:
        return ""
    comps = hdlname.split(" ")
    return ".".join(comps[:-1])


def load_instances(path):
    """Instance tree from the pre-flatten dump: {path: module base name}, '' is the top."""
    with open(path) as f:
        d = json.load(f)
    mods = d["modules"]
    top = [n for n, m in mods.items() if str(m.get("attributes", {}).get("top", "0")).strip("0")]
    if len(top) != 1:
        raise SystemExit(f"{path}: expected one top module, found {top}")
    out = {}

    def walk(mname, path):
        out[path] = base_module(mname)
        for cn, c in mods[mname]["cells"].items():
            if c["type"] in mods:
                walk(c["type"], f"{path}.{cn}" if path else cn)

    walk(top[0], "")
    return out, base_module(top[0])


# ---------------------------------------------------------------------------------------
def cell_timing(cn, c, nl):
    """Timing view of a cell: (arcs, starts, ends, clock pins) at bit level.

    arcs:   list of (in_bit, out_bit, weight) combinational arcs
    starts: list of (out_bit, clock_bit, start_weight)
    ends:   list of (in_bit, [clock bits])
    Returns None for a cell type without a model."""
    t = c["type"]
    con = c["connections"]

    def bits(pin):
        return [b for b in con.get(pin, []) if isinstance(b, int)]

    arcs, starts, ends = [], [], []
    if t in LUT_TYPES:
        o = bits("O")[0] if bits("O") else None
        if o is None:
            return arcs, starts, ends
        if t == "LUT1":
            feeds_carry = any(nl.cells[x]["type"] in CARRY_TYPES and any(
                o in nl.cells[x]["connections"].get(p, []) for p in ("S", "DI"))
                for x in nl.consumers.get(o, []))
            w = WEIGHTS["lut1_carry"] if feeds_carry else WEIGHTS["lut1"]
        else:
            w = WEIGHTS["lut"]
        for i in range(6):
            for b in bits(f"I{i}"):
                arcs.append((b, o, w))
        return arcs, starts, ends
    if t == "INV":
        for b in bits("I"):
            for o in bits("O"):
                arcs.append((b, o, WEIGHTS["lut1"]))
        return arcs, starts, ends
    if t in MUXF_TYPES:
        for pin in ("I0", "I1", "S"):
            for b in bits(pin):
                for o in bits("O"):
                    arcs.append((b, o, WEIGHTS["muxf"]))
        return arcs, starts, ends
    if t in CARRY_TYPES:
        n = 4 if t == "CARRY4" else 8
        ci_w = WEIGHTS["carry_ci"] if t == "CARRY4" else WEIGHTS["carry8_ci"]
        s, di = con.get("S", []), con.get("DI", [])
        co, o = con.get("CO", []), con.get("O", [])
        outs = lambda j: [x for x in (co[j] if j < len(co) else None, o[j] if j < len(o) else None)
                          if isinstance(x, int)]
        for pin in ("CI", "CI_TOP"):
            for b in bits(pin):
                for j in range(n):
                    for x in outs(j):
                        arcs.append((b, x, ci_w))
        for b in bits("CYINIT"):
            for j in range(n):
                for x in outs(j):
                    arcs.append((b, x, WEIGHTS["carry_in"]))
        for i in range(n):
            for src in (s, di):
                if i < len(src) and isinstance(src[i], int):
                    for j in range(i, n):
                        for x in outs(j):
                            arcs.append((src[i], x, WEIGHTS["carry_in"]))
        return arcs, starts, ends
    if t in FF_TYPES:
        clk = (bits("C") or bits("G") or [None])[0]
        for b in bits("Q"):
            starts.append((b, clk, 0.0))
        for pin in ("D", "CE", "R", "S", "CLR", "PRE", "GE"):
            for b in bits(pin):
                ends.append((b, [clk]))
        return arcs, starts, ends
    if t in LUTRAM_LUTS:
        clk = (bits("WCLK") or [None])[0]
        outs_by_pin = {}
        for pin, d in c.get("port_directions", {}).items():
            if d == "output":
                outs_by_pin[pin] = bits(pin)
        for pin, d in c.get("port_directions", {}).items():
            if d != "input" or pin == "WCLK":
                continue
            for b in bits(pin):
                ends.append((b, [clk]))
        for opin, obits in outs_by_pin.items():
            if opin.startswith("DO"):  # RAM32M/RAM64M/RAM32M16/RAM64M8: ADDRx -> DOx
                ipins = ["ADDR" + opin[2:]]
            elif opin == "DPO":
                ipins = [p for p in con if p.startswith("DPRA")]
            else:  # SPO, O
                ipins = [p for p in con if re.fullmatch(r"A\d*", p)]
            for ip in ipins:
                for b in bits(ip):
                    for x in obits:
                        arcs.append((b, x, WEIGHTS["lutram"]))
        return arcs, starts, ends
    if t in SRL_TYPES:
        clk = (bits("CLK") or [None])[0]
        for pin in ("D", "CE"):
            for b in bits(pin):
                ends.append((b, [clk]))
        for pin in ("A", "A0", "A1", "A2", "A3"):
            for b in bits(pin):
                ends.append((b, [clk]))
                for x in bits("Q"):
                    arcs.append((b, x, WEIGHTS["lutram"]))
        for x in bits("Q") + bits("Q31") + bits("Q15"):
            starts.append((x, clk, 0.0))
        return arcs, starts, ends
    if t in BRAM_TYPES:
        ca = (bits("CLKARDCLK") or [None])[0]
        cb = (bits("CLKBWRCLK") or [None])[0]
        sdp = pval(c, "READ_WIDTH_A") >= (72 if t == "RAMB36E2" else 36)
        clocks = [x for x in (ca, cb) if x is not None]
        for pin, d in c.get("port_directions", {}).items():
            if d == "output" and pin.startswith("DOUT"):
                port_a = pin.startswith("DOUTA") or pin.startswith("DOUTPA")
                clk = ca if (port_a or sdp) else cb
                reg = pval(c, "DOA_REG" if (port_a or sdp) else "DOB_REG")
                w = WEIGHTS["bram_tco_reg"] if reg else WEIGHTS["bram_tco"]
                for x in bits(pin):
                    starts.append((x, clk, w))
            elif d == "input" and not pin.startswith("CLK"):
                for b in bits(pin):
                    ends.append((b, clocks))
        return arcs, starts, ends
    if t in URAM_TYPES or t in DSP_TYPES:
        clk = (bits("CLK") or [None])[0]
        w = WEIGHTS["uram_tco"] if t in URAM_TYPES else WEIGHTS["dsp_tco"]
        for pin, d in c.get("port_directions", {}).items():
            if pin == "CLK":
                continue
            for b in bits(pin):
                if d == "output":
                    starts.append((b, clk, w))
                else:
                    ends.append((b, [clk]))
        return arcs, starts, ends
    if t in IGNORED_TYPES:
        return arcs, starts, ends
    return None


def analyze_depth(nl, budgets):
    """Per clock domain: deepest path, endpoint-depth histogram, per-instance worst depth."""
    arcs_from = collections.defaultdict(list)  # in_bit -> [(out_bit, w, cell)]
    indeg = collections.Counter()
    starts_by_clk = collections.defaultdict(list)
    ends = []  # (bit, clocks, cell, pin-less)
    unknown = collections.Counter()
    for cn, c in nl.cells.items():
        tv = cell_timing(cn, c, nl)
        if tv is None:
            unknown[c["type"]] += 1
            continue
        arcs, starts, cends = tv
        for a, b, w in arcs:
            arcs_from[a].append((b, w, cn))
            indeg[b] += 1
        for b, clk, w in starts:
            starts_by_clk[clk].append((b, w, cn))
        for b, clks in cends:
            ends.append((b, clks, cn))
    in_ports, out_ports = [], []
    for pn, p in nl.ports.items():
        for b in p["bits"]:
            if isinstance(b, int):
                (in_ports if p["direction"] == "input" else out_ports).append((b, pn))
    # Topological order of the bit graph (Kahn); bits left over are on a combinational loop
    nodes = set(arcs_from) | set(indeg)
    order = []
    queue = collections.deque(sorted(b for b in nodes if indeg[b] == 0))
    deg = dict(indeg)
    while queue:
        b = queue.popleft()
        order.append(b)
        for (o, _, _) in arcs_from.get(b, []):
            deg[o] -= 1
            if deg[o] == 0:
                queue.append(o)
    loop_bits = [b for b in nodes if deg.get(b, 0) > 0]
    clock_bits = sorted(k for k in starts_by_clk if k is not None)
    clk_name = {k: (nl.name_of(k) or f"net{k}") for k in clock_bits}
    def propagate(clk, blocked):
        arr, pred = {}, {}
        for b, pn in in_ports:
            if b not in clk_name:
                arr[b] = 0.0
                pred[b] = ("port", pn)
        for b, w, cn in starts_by_clk[clk]:
            if cn not in blocked and w > arr.get(b, -1.0):
                arr[b] = w
                pred[b] = ("start", cn)
        for b in order:
            if b not in arr:
                continue
            ab = arr[b]
            for (o, w, cn) in arcs_from.get(b, []):
                if cn not in blocked and ab + w > arr.get(o, -1.0) + 1e-9:
                    arr[o] = ab + w
                    pred[o] = ("arc", b, cn, w)
        return arr, pred

    cells_of = collections.defaultdict(set)
    for cn, inst in nl.cell_owner.items():
        cells_of[inst].add(cn)
    domains = {}
    for clk in clock_bits:
        endpoints = [(b, cn) for (b, clks, cn) in ends if clk in clks]
        endpoints += [(b, "port:" + pn) for (b, pn) in out_ports]
        blocked, offenders = set(), []
        for rnd in range(MAX_OFFENDERS):
            arr, pred = propagate(clk, blocked)
            best, hist, per_inst = None, collections.Counter(), {}
            for b, cn in endpoints:
                if b not in arr or cn in blocked:
                    continue
                a = arr[b]
                hist[math.ceil(a - 1e-9)] += 1
                inst = nl.cell_owner.get(cn, "") if not cn.startswith("port:") else ""
                per_inst[inst] = max(per_inst.get(inst, 0.0), a)
                if best is None or a > best[0] + 1e-9:
                    best = (a, b, cn)
            path = trace(nl, pred, best[1], best[2]) if best else []
            depth = round(best[0], 3) if best else 0.0
            if rnd == 0:
                domains[clk_name[clk]] = {
                    "depth": depth, "path": path, "offenders": offenders,
                    "histogram": {str(k): v for k, v in sorted(hist.items())},
                    "per_instance": {k: round(v, 3) for k, v in sorted(per_inst.items())},
                }
            budget = budgets.get(clk_name[clk])
            if not path or (budget is not None and depth <= budget + 1e-9):
                break
            # the instance with the most levels on this path; cut it and look again
            share = collections.Counter()
            for st in path:
                if st["kind"] == "cell":
                    share[st["inst"]] += st["w"]
            worst = sorted(share.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if share else \
                path[-1]["inst"]
            insts = []
            for st in path:
                if st["kind"] == "cell" and st["inst"] not in insts:
                    insts.append(st["inst"])
            offenders.append({"depth": depth, "instance": worst, "levels_in_instance": share.get(worst, 0.0),
                              "from": path[0]["net"], "to": path[-1]["net"], "through": insts,
                              "luts": sum(1 for st in path if st["type"] in LUT_TYPES and st.get("w", 0) > 0),
                              "carry": sum(1 for st in path if st["type"] in CARRY_TYPES),
                              "muxf": sum(1 for st in path if st["type"] in MUXF_TYPES),
                              "path": path})
            blocked |= cells_of[worst]
    return domains, dict(unknown), len(loop_bits)


def trace(nl, pred, end_bit, end_cell):
    """Path from its start point to end_bit, as a list of step dicts (start first)."""
    steps = []
    b = end_bit
    end_desc = end_cell[5:] if end_cell.startswith("port:") else end_cell
    end_type = "port" if end_cell.startswith("port:") else nl.cells[end_cell]["type"]
    end_net = nl.name_of(b)
    if end_net is None and end_type in FF_TYPES:
        q = [x for x in nl.cells[end_cell]["connections"].get("Q", []) if isinstance(x, int)]
        if q and nl.name_of(q[0]):
            end_net = nl.name_of(q[0]) + " (D)"
    steps.append({"kind": "end", "type": end_type, "cell": end_desc,
                  "inst": "" if end_type == "port" else nl.cell_owner.get(end_cell, ""),
                  "net": end_net})
    guard = 0
    while guard < 100000:
        guard += 1
        p = pred.get(b)
        if p is None:
            break
        if p[0] == "arc":
            _, src, cn, w = p
            steps.append({"kind": "cell", "type": nl.cells[cn]["type"], "cell": cn,
                          "inst": nl.cell_owner.get(cn, ""), "net": nl.name_of(b), "w": w})
            b = src
        else:
            cn = p[1]
            typ = "port" if p[0] == "port" else nl.cells[cn]["type"]
            steps.append({"kind": "start", "type": typ, "cell": cn,
                          "inst": "" if typ == "port" else nl.cell_owner.get(cn, ""),
                          "net": nl.name_of(b)})
            break
    steps.reverse()
    return steps


# ---------------------------------------------------------------------------------------
FLATTEN_RE = re.compile(r"\$flatten((?:\\[^\\$]+\.)+)")


def attribute_cells(nl, instances):
    """cell name -> owning instance path (see the module docstring)."""
    owner = {}
    known = set(instances)

    def clamp(path):
        # a name can sit in a generate scope of an instance: keep the longest instance prefix
        while path and path not in known:
            path = path.rsplit(".", 1)[0] if "." in path else ""
        return path

    for cn, c in nl.cells.items():
        hdl = c.get("attributes", {}).get("hdlname")
        if hdl and not cn.startswith("$"):
            owner[cn] = clamp(hdl_instance(hdl))
            continue
        m = FLATTEN_RE.search(cn)
        if m:  # '$flatten\\u_core.\\u_asm.$ge$...' (arithmetic techmapped after the flatten)
            owner[cn] = clamp(".".join(x.rstrip(".") for x in m.group(1).split("\\") if x))
            continue
        if not cn.startswith("$") and "." in cn:  # e.g. memory cells 'u_core.u_ctx.mem.0.0'
            owner[cn] = clamp(cn.rsplit(".", 1)[0])
            # memory_libmap names cells <mem>.<i>.<j>: strip until an instance matches
            continue
        cands = []
        dirs = c.get("port_directions", {})
        for pin, bits in c["connections"].items():
            if dirs.get(pin) == "output":
                for b in bits:
                    if isinstance(b, int):
                        o = nl.owner_of_bit(b, clamp)
                        if o is not None:
                            cands.append(o)
        if cands:
            owner[cn] = sorted(cands, key=lambda s: (-s.count(".") - (1 if s else 0), s))[0]
    # The rest: owner of the cells they drive (majority), deciding a cell only once all its
    # consumers are decided (reverse topological order); then, for cells that drive nothing
    # owned (e.g. only output ports), the owner of their drivers.
    outs, ins = {}, {}
    for cn, c in nl.cells.items():
        dirs = c.get("port_directions", {})
        ob, ib = [], []
        for pin, bits in c["connections"].items():
            (ob if dirs.get(pin) == "output" else ib).extend(b for b in bits if isinstance(b, int))
        outs[cn], ins[cn] = ob, ib
    consumers = {cn: sorted({x for b in outs[cn] for x in nl.consumers.get(b, [])}) for cn in nl.cells
                 if cn not in owner}
    drivers = {cn: sorted({nl.driver[b] for b in ins[cn] if b in nl.driver}) for cn in nl.cells}
    pending = {cn: sum(1 for x in cons if x not in owner) for cn, cons in consumers.items()}
    queue = collections.deque(cn for cn in nl.cells if cn in pending and pending[cn] == 0)
    decided = set()

    def vote(cands):
        votes = collections.Counter(owner[x] for x in cands if x in owner)
        if not votes:
            return None
        return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]

    while queue:
        cn = queue.popleft()
        decided.add(cn)
        v = vote(consumers[cn])
        if v is not None:
            owner[cn] = v
        for p in drivers[cn]:
            if p in pending and p not in decided:
                pending[p] -= 1
                if pending[p] == 0:
                    queue.append(p)
    for neighbours in (consumers, drivers):  # leftovers (cell-level cycles), then drivers
        changed = True
        while changed:
            changed = False
            for cn in nl.cells:
                if cn in owner:
                    continue
                v = vote(neighbours.get(cn, []))
                if v is not None:
                    owner[cn] = v
                    changed = True
    for cn in nl.cells:
        owner.setdefault(cn, "")
    return owner


def resources(nl):
    """Per-instance resource counts."""
    per = collections.defaultdict(collections.Counter)
    for cn, c in nl.cells.items():
        t = c["type"]
        r = per[nl.cell_owner[cn]]
        if t in LUT_TYPES:
            r["LUT"] += 1
        elif t in FF_TYPES:
            r["FF"] += 1
        elif t in CARRY_TYPES:
            r["CARRY"] += 1
        elif t in MUXF_TYPES:
            r["MUXF"] += 1
        elif t in LUTRAM_LUTS:
            r["LUTRAM"] += LUTRAM_LUTS[t]
        elif t in SRL_TYPES:
            r["SRL"] += 1
        elif t == "RAMB36E2":
            r["RAMB36"] += 1
        elif t == "RAMB18E2":
            r["RAMB18"] += 1
        elif t in URAM_TYPES:
            r["URAM"] += 1
        elif t in DSP_TYPES:
            r["DSP"] += 1
        elif t == "INV":
            r["INV"] += 1
        elif t.startswith("$"):
            r["UNMAPPED"] += 1
        else:
            r["OTHER:" + t] += 1
    return {k: dict(v) for k, v in per.items()}


def parse_stat(path):
    """Cell counts and the LC estimate of the top module from a 'stat -tech xilinx' output."""
    text = open(path).read()
    blocks = re.split(r"^=== (.+?) ===\s*$", text, flags=re.M)
    mods = {}
    for i in range(1, len(blocks) - 1, 2):
        name, body = blocks[i], blocks[i + 1]
        cells = {}
        for m in re.finditer(r"^\s{5}(\S+)\s+(\d+)\s*$", body, flags=re.M):
            cells[m.group(1)] = int(m.group(2))
        lc = re.search(r"Estimated number of LCs:\s+(\d+)", body)
        mods[name] = {"cells": cells, "lcs": int(lc.group(1)) if lc else None}
    return mods


def hier_table(path):
    """Per-module figures of a non-flattened synthesis ('stat -tech xilinx')."""
    mods = parse_stat(path)
    out = {}
    for name, m in mods.items():
        if name == "design hierarchy":
            continue
        cells = m["cells"]
        out[name] = {
            "module": base_module(name),
            "LUT": sum(v for k, v in cells.items() if k in LUT_TYPES),
            "FF": sum(v for k, v in cells.items() if k in FF_TYPES),
            "RAMB36": cells.get("RAMB36E2", 0), "RAMB18": cells.get("RAMB18E2", 0),
            "URAM": sum(v for k, v in cells.items() if k in URAM_TYPES),
            "LCs": m["lcs"],
        }
    return out, mods.get("design hierarchy")


def budget_for(mhz):
    return int(math.floor((1000.0 / mhz - FIXED_NS) / LEVEL_NS + 1e-9))


def cmd_analyze(a):
    nl = Netlist(a.netlist)
    instances, topmod = load_instances(a.inst)
    nl.cell_owner = attribute_cells(nl, instances)
    res = resources(nl)
    budgets = {}
    for spec in a.budget:
        name, mhz = spec.split("=")
        budgets[name] = float(mhz)
    domains, unknown, loops = analyze_depth(nl, {k: budget_for(v) for k, v in budgets.items()})
    stat = parse_stat(a.stat)
    top_stat = stat.get(nl.top) or stat.get("\\" + nl.top) or next(iter(stat.values()))
    checks = []
    unmapped = sorted(t for t in top_stat["cells"] if t.startswith("$"))
    checks.append({"name": "everything mapped to UltraScale+ primitives",
                   "ok": not unmapped and not any(k == "UNMAPPED" for r in res.values() for k in r),
                   "detail": ", ".join(unmapped) or "no generic cells left"})
    checks.append({"name": "timing model for every cell type", "ok": not unknown,
                   "detail": ", ".join(f"{k} x{v}" for k, v in sorted(unknown.items())) or "all known"})
    checks.append({"name": "no combinational loop", "ok": loops == 0,
                   "detail": f"{loops} net bits on loops" if loops else "none"})
    for path, mod in sorted(instances.items()):
        if mod in TABLE_MODULES:
            r = res.get(path, {})
            ram = r.get("RAMB36", 0) + r.get("RAMB18", 0) + r.get("URAM", 0)
            limit = 8 << a.ctx_log2  # a table mapped to flip-flops has at least 8 per entry
            ok = ram > 0 and r.get("FF", 0) < limit
            checks.append({"name": f"{path} ({mod}) in block RAM", "ok": ok,
                           "detail": f"{r.get('RAMB36', 0)} RAMB36E2, {r.get('RAMB18', 0)} RAMB18E2, "
                                     f"{r.get('URAM', 0)} URAM288, {r.get('FF', 0)} FF (limit {limit})"})
    if a.require_tables and not any(mod in TABLE_MODULES for mod in instances.values()):
        checks.append({"name": "connection tables present", "ok": False, "detail": "no table instance"})
    for clk, dom in domains.items():
        mhz = budgets.get(clk)
        if mhz is None:
            checks.append({"name": f"depth budget for clock {clk}", "ok": False,
                           "detail": "no frequency given for this clock"})
            continue
        dom["mhz"] = mhz
        dom["budget"] = budget_for(mhz)
        checks.append({"name": f"depth {clk} <= {dom['budget']} levels ({mhz:g} MHz)",
                       "ok": dom["depth"] <= dom["budget"] + 1e-9,
                       "detail": f"{dom['depth']:g} levels"})
    summary = {
        "width": a.width, "ctx_log2": a.ctx_log2, "top": topmod,
        "instances": instances, "resources": res,
        "totals": {"cells": top_stat["cells"], "lcs": top_stat["lcs"]},
        "domains": domains, "checks": checks,
        "weights": WEIGHTS, "level_ns": LEVEL_NS, "fixed_ns": FIXED_NS,
    }
    if a.hier_stat:
        summary["hier"], hier_total = hier_table(a.hier_stat)
        summary["hier_total"] = hier_total
    with open(a.out, "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    print_summary(summary)
    return 0


def print_summary(s):
    t = s["totals"]["cells"]
    luts = sum(v for k, v in t.items() if k in LUT_TYPES)
    ffs = sum(v for k, v in t.items() if k in FF_TYPES)
    print(f"synth w{s['width']}: {s['top']} LCs={s['totals']['lcs']} LUT={luts} FF={ffs} "
          f"RAMB36E2={t.get('RAMB36E2', 0)} RAMB18E2={t.get('RAMB18E2', 0)} URAM288={t.get('URAM288', 0)}")
    for clk, d in s["domains"].items():
        p = d["path"]
        where = sorted({st["inst"] for st in p if st["kind"] == "cell"})
        print(f"  depth {clk}: {d['depth']:g} levels (budget {d.get('budget', '?')}); "
              f"{p[0]['net'] if p else '-'} -> {p[-1]['net'] if p else '-'} in {', '.join(where) or '-'}")
    for c in s["checks"]:
        print(f"  [{'ok' if c['ok'] else 'FAIL'}] {c['name']}: {c['detail']}")


def cmd_check(a):
    s = json.load(open(a.summary))
    bad = [c for c in s["checks"] if not c["ok"]]
    for c in bad:
        print(f"synth w{s['width']}: FAILED {c['name']}: {c['detail']}", file=sys.stderr)
        if c["name"].startswith("depth "):
            clk = c["name"].split()[1]
            d = s["domains"][clk]
            for st in compress(d["path"])[:40]:
                typ = st["type"] if st["n"] == 1 else f"{st['type']} x{st['n']}"
                print(f"    {typ:<12} {st['inst'] or '(top)':<28} {st['net'] or ''}", file=sys.stderr)
            offs = d.get("offenders", [])
            for prev, o in zip(offs, offs[1:]):
                print(f"    next, without {prev['instance'] or '(top)'}: {o['depth']:g} levels, "
                      f"{o['from']} -> {o['to']} (most in {o['instance'] or '(top)'})", file=sys.stderr)
    # ceilings gate even when the budget is advisory: the depth may not grow past them
    ceil_bad = []
    for spec in a.depth_ceiling:
        clk, lv = spec.split("=", 1)
        d = s["domains"].get(clk)
        if d is None:
            ceil_bad.append(f"no clock {clk} in the netlist")
        elif d["depth"] > float(lv) + 1e-9:
            ceil_bad.append(f"depth {clk} {d['depth']:g} levels is above its ceiling {lv} "
                            "(a new long path: see the path above, or docs/resources.md)")
        else:
            print(f"synth w{s['width']}: depth {clk} {d['depth']:g} levels, within the ceiling {lv}")
    for m in ceil_bad:
        print(f"synth w{s['width']}: FAILED {m}", file=sys.stderr)
    if a.depth_advisory:
        gating = [c for c in bad if not c["name"].startswith("depth ")]
        if ceil_bad:
            return 1
        if len(gating) < len(bad):
            print(f"synth w{s['width']}: depth over budget is ADVISORY (--depth-advisory): "
                  "not failing on it (CI runs without the option: the budget gates)",
                  file=sys.stderr)
        return 1 if gating else 0
    return 1 if bad or ceil_bad else 0


# ---------------------------------------------------------------------------------------
def fmt_inst(path):
    return f"`{path}`" if path else "(top)"


def compress(path):
    """Runs of the same cell type in the same instance with unnamed nets become one row."""
    rows = []
    for st in path:
        last = rows[-1] if rows else None
        if (last and st["kind"] == "cell" and last["kind"] == "cell" and last["type"] == st["type"]
                and last["inst"] == st["inst"] and not st["net"] and not last["net"]):
            last["n"] += 1
            last["w"] += st.get("w", 0.0)
            continue
        rows.append(dict(st, n=1, w=st.get("w", 0.0)))
    return rows


def path_table(path, max_rows=60):
    rows = ["| # | cell | levels | instance | net |", "|---|---|---|---|---|"]
    comp = compress(path)
    shown = comp if len(comp) <= max_rows else comp[:max_rows - 10] + [None] + comp[-9:]
    for i, st in enumerate(shown):
        if st is None:
            rows.append(f"| ... | {len(comp) - max_rows + 1} more rows | | | |")
            continue
        if st["kind"] == "cell":
            lv = f"{st['w']:g}"
            typ = st["type"] if st["n"] == 1 else f"{st['type']} x{st['n']}"
        else:
            lv = st["kind"]
            typ = st["type"]
        net = f"`{st['net']}`" if st["net"] else "-"
        rows.append(f"| {i} | {typ} | {lv} | {fmt_inst(st['inst'])} | {net} |")
    return rows


def offender_table(offs):
    rows = ["| depth | path | its module with the most levels (levels on the path) |",
            "|---|---|---|"]
    for o in offs:
        rows.append(f"| {o['depth']:g} | `{o['from']}` -> `{o['to']}` ({o['luts']} LUTs, {o['carry']} carry, "
                    f"{o['muxf']} MUXF; through " + ", ".join(fmt_inst(i) for i in o["through"]) + ") | "
                    f"{fmt_inst(o['instance'])} ({o['levels_in_instance']:g}) |")
    return rows


def cmd_doc(a):
    sums = [json.load(open(p)) for p in a.summaries]
    sums.sort(key=lambda s: s["width"])
    s0 = sums[0]
    L = []
    L.append("# Resource and logic-depth estimates (Yosys)")
    L.append("")
    L.append("Generated by `scripts/synth.sh`; do not edit by hand. Everything here is a Yosys 0.23 "
             "`synth_xilinx -family xcup` estimate of the Vitis kernel top, out of context "
             "(`-noiopad -noclkbuf`), not a Vivado result: expect +-20-30 % on LUT counts and treat "
             "the depth as a ranking of paths, not an Fmax. Real figures need Vivado "
             "(`report_utilization -hierarchical`, `report_design_analysis -logic_level_distribution`); "
             "see docs/lab.md.")
    L.append("")
    L.append(f"- Date: {a.date}")
    L.append(f"- Tool: {a.yosys}")
    L.append(f"- Command: `{a.command}`")
    L.append(f"- RTL: commit {a.rtl} (the last one that changed the RTL)")
    L.append(f"- Design: `{s0['top']}`, CTX_DEPTH_LOG2 = {s0['ctx_log2']}, data widths "
             + ", ".join(str(s["width"]) for s in sums))
    L.append("")
    L.append("## Summary")
    L.append("")
    clks = sorted({c for s in sums for c in s["domains"]})
    hdr = "| DATA_W | LCs (Yosys estimate) | LUT | FF | CARRY4 | MUXF7/8/9 | LUTRAM+SRL (LUTs) | RAMB36E2 | RAMB18E2 | URAM288 | DSP48E2 |"
    L.append(hdr)
    L.append("|" + "---|" * (hdr.count("|") - 1))
    for s in sums:
        t = s["totals"]["cells"]
        lut = sum(v for k, v in t.items() if k in LUT_TYPES)
        ff = sum(v for k, v in t.items() if k in FF_TYPES)
        lr = sum(v * LUTRAM_LUTS[k] for k, v in t.items() if k in LUTRAM_LUTS) + \
            sum(v for k, v in t.items() if k in SRL_TYPES)
        mx = sum(v for k, v in t.items() if k in MUXF_TYPES)
        L.append(f"| {s['width']} | {s['totals']['lcs']} | {lut} | {ff} | {t.get('CARRY4', 0) + t.get('CARRY8', 0)} | "
                 f"{mx} | {lr} | {t.get('RAMB36E2', 0)} | {t.get('RAMB18E2', 0)} | "
                 f"{sum(v for k, v in t.items() if k in URAM_TYPES)} | {t.get('DSP48E2', 0)} |")
    L.append("")
    hdr = "| DATA_W | " + " | ".join(f"depth {c} (budget)" for c in clks) + " | checks |"
    L.append(hdr)
    L.append("|" + "---|" * (hdr.count("|") - 1))
    for s in sums:
        cells = []
        for c in clks:
            d = s["domains"].get(c)
            cells.append(f"{d['depth']:g} ({d.get('budget', '?')})" if d else "-")
        nbad = sum(1 for c in s["checks"] if not c["ok"])
        L.append(f"| {s['width']} | " + " | ".join(cells) + " | "
                 + ("all pass" if nbad == 0 else f"**{nbad} failed**") + " |")
    L.append("")
    L.append("INV cells (Yosys leaves inverters that Vivado absorbs into LUTs and flip-flops) are "
             "not counted as LUTs. \"LCs\" is Yosys' own packing estimate (`stat -tech xilinx`).")
    L.append("")
    for s in sums:
        L.append(f"## DATA_W = {s['width']}")
        L.append("")
        L.append("### Checks (`scripts/synth.sh --check`)")
        L.append("")
        for c in s["checks"]:
            L.append(f"- {'pass' if c['ok'] else '**FAIL**'}: {c['name']} ({c['detail']})")
        L.append("")
        L.append("### Per instance")
        L.append("")
        L.append("Own logic of each instance (sub-instances have their own rows), attributed in the "
                 "flattened netlist; the rows add up to the totals. Depth: deepest path ending in "
                 "the instance.")
        L.append("")
        hdr = ("| instance | module | LUT | FF | CARRY4 | MUXF | LUTRAM+SRL | RAMB36 | RAMB18 | URAM | DSP | depth |")
        L.append(hdr)
        L.append("|" + "---|" * (hdr.count("|") - 1))
        tot = collections.Counter()
        for path in sorted(s["instances"], key=lambda p: (p.split("."))):
            r = s["resources"].get(path, {})
            tot.update(r)
            dep = max((d["per_instance"].get(path, 0.0) for d in s["domains"].values()), default=0.0)
            L.append(f"| {fmt_inst(path)} | {s['instances'][path]} | {r.get('LUT', 0)} | {r.get('FF', 0)} | "
                     f"{r.get('CARRY', 0)} | {r.get('MUXF', 0)} | {r.get('LUTRAM', 0) + r.get('SRL', 0)} | "
                     f"{r.get('RAMB36', 0)} | {r.get('RAMB18', 0)} | {r.get('URAM', 0)} | {r.get('DSP', 0)} | "
                     f"{dep:g} |")
        L.append(f"| total | | {tot['LUT']} | {tot['FF']} | {tot['CARRY']} | {tot['MUXF']} | "
                 f"{tot['LUTRAM'] + tot['SRL']} | {tot['RAMB36']} | {tot['RAMB18']} | {tot['URAM']} | "
                 f"{tot['DSP']} | |")
        L.append("")
        for clk, d in sorted(s["domains"].items()):
            L.append(f"### Deepest path, {clk} ({d.get('mhz', 0):g} MHz, budget {d.get('budget', '?')} levels): "
                     f"{d['depth']:g} levels")
            L.append("")
            p = d["path"]
            if p:
                nl = sum(1 for st in p if st["type"] in LUT_TYPES and st.get("w", 0) > 0)
                nc = sum(1 for st in p if st["type"] in CARRY_TYPES)
                nm = sum(1 for st in p if st["type"] in MUXF_TYPES)
                insts = []
                for st in p:
                    if st["kind"] == "cell" and st["inst"] not in insts:
                        insts.append(st["inst"])
                L.append(f"From `{p[0]['net']}` ({p[0]['type']}) to `{p[-1]['net']}` "
                         f"({p[-1]['type']}): {nl} LUTs, {nc} carry cells, {nm} MUXF; through "
                         + ", ".join(fmt_inst(i) for i in insts) + ".")
                L.append("")
                L.extend(path_table(p))
                L.append("")
            if len(d.get("offenders", [])) > 1:
                L.append("Over budget: the deepest path, then the deepest one left once the module "
                         "with the most levels on the previous path is cut out (repeated):")
                L.append("")
                L.extend(offender_table(d["offenders"]))
                L.append("")
            hist = d["histogram"]
            L.append("Endpoints by depth (levels, rounded up: count): "
                     + ", ".join(f"{k}: {v}" for k, v in sorted(hist.items(), key=lambda kv: int(kv[0]))) + ".")
            L.append("")
        if "hier" in s:
            L.append("### Cross-check: hierarchical synthesis")
            L.append("")
            ht = s.get("hier_total")
            more = ""
            if ht and ht.get("lcs") and s["totals"].get("lcs"):
                more = (f" Its total is {ht['lcs']} LCs, {100.0 * (ht['lcs'] / s['totals']['lcs'] - 1):+.0f} % "
                        f"against the flat synthesis ({s['totals']['lcs']}).")
            L.append("The same design synthesized without `-flatten` (each module on its own, no "
                     "optimisation across boundaries), `stat -tech xilinx` per module (own cells; a "
                     "module instantiated several times, or with different parameters, is listed "
                     "once per variant)." + more)
            L.append("")
            L.append("| module | LUT | FF | RAMB36 | RAMB18 | URAM | LCs |")
            L.append("|---|---|---|---|---|---|---|")
            for name, h in sorted(s["hier"].items(), key=lambda kv: (kv[1]["module"], kv[0])):
                L.append(f"| {h['module']} | {h['LUT']} | {h['FF']} | {h['RAMB36']} | {h['RAMB18']} | "
                         f"{h['URAM']} | {h['LCs']} |")
            ht = s.get("hier_total")
            if ht:
                c = ht["cells"]
                L.append(f"| **design total** | {sum(v for k, v in c.items() if k in LUT_TYPES)} | "
                         f"{sum(v for k, v in c.items() if k in FF_TYPES)} | {c.get('RAMB36E2', 0)} | "
                         f"{c.get('RAMB18E2', 0)} | {sum(v for k, v in c.items() if k in URAM_TYPES)} | "
                         f"{ht['lcs']} |")
            L.append("")
    L.append("## Method")
    L.append("")
    L.extend(METHOD_TEXT.strip("\n").split("\n"))
    L.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(L))
    return 0


METHOD_TEXT = f"""
### One synthesis per width

`scripts/synth.sh` runs one Yosys process per data width (one at a time): read
`rtl/sources.f`, `chparam` the width, `hierarchy`, `proc`, mark every input port
(`setattr -set bouncer_in 1 */i:*`), dump the instance tree, then
`synth_xilinx -family xcup -flatten -noiopad -noclkbuf`, `stat -tech xilinx` (the totals) and
a JSON dump of the mapped top module (`json -o`; the primitive library is left out).
`scripts/synth_report.py` reads the netlist and derives everything else from it, so resources
and depth come from the same run. Almost all of the time is Yosys' (the analysis takes seconds);
`synth.sh` preloads tcmalloc (or jemalloc) into Yosys when it is installed, which saves about a
tenth of the CPU time and gives the same netlist byte for byte (`BOUNCER_SYNTH_MALLOC=glibc`
turns it off).

- **Per instance.** A flat synthesis optimises across module boundaries, which a hierarchical
  one cannot (tied-off inputs, unused outputs), so its totals are the ones that matter (with
  `--hier`, cross-check tables show how much larger the hierarchical netlist is). The
  per-instance figures are therefore attributed in the flat netlist: a cell belongs to the
  deepest instance among the hierarchical names (Yosys' `hdlname`, or the `$flatten` prefix of
  techmapped arithmetic) of its own name or of its output net, input-port aliases excluded;
  the LUTs that ABC created inside a cone take the owner of the cells they feed (majority,
  decided in reverse topological order). Logic that ABC merged across a boundary is counted
  in the instance that consumes it, so a small module next to a large combinational one (a
  client of the DMA arbiters, for instance) can show more LUTs than it has on its own.
  `--hier` adds a non-flattened synthesis of each width for comparison (per module exact,
  but without cross-boundary optimisation).
- **Depth.** `ltp -noff` cannot read a `synth_xilinx` netlist (it does not know FDRE is a
  flip-flop), and the generic `synth -flatten -lut 6; ltp -noff` is no substitute here: it maps
  every memory to flip-flops (`memory_map`: the 512 Kbit context table alone becomes half a
  million FFs and read multiplexers) and turns adders into LUT trees instead of carry chains.
  The script levelizes the mapped netlist itself, bit by bit, per clock domain: start points
  are flip-flop, SRL and block-RAM outputs and the kernel's input ports, end points are their
  inputs and the output ports; paths from one clock domain to another are skipped (they are
  asynchronous clock groups behind the CDC FIFOs). On a pure-LUT test design it gives the
  same depth as `synth -flatten -lut 6; ltp -noff`; `synth_report.py selftest` (ctest
  `rtl.synth_selftest`) checks that, and carry chains, block-RAM starts, clock domains and
  the attribution on a small design with known answers.
- **Over budget.** When the deepest path of a clock is over its budget, the module with the
  most levels on it is cut out of the netlist and the search repeated (up to
  {MAX_OFFENDERS} times), so one long path does not hide the next ones.
- **ABC's mapping is not Vivado's.** Yosys' LUT mapping is area-oriented and does not
  restructure long XOR or compare chains the way Vivado does (a 36-input parity comes out
  3 LUT levels deep where 2 are possible; a Gray-code decode stays a LUT2 ripple), so the
  depth figures are pessimistic for such logic. They rank paths; they do not predict Fmax.

### Levels

One level is one LUT plus the route into it, about {LEVEL_NS} ns on an UltraScale+ -2 part
(LUT 0.1-0.15 ns, route 0.35-0.4 ns at moderate fan-out). Other primitives are counted in those
units:

| element | levels | why |
|---|---|---|
| LUT2..LUT6 | {WEIGHTS['lut']:g} | |
| LUT1, INV | {WEIGHTS['lut1']:g} | inverters and buffers are folded into neighbours by Vivado |
| LUT1 in front of a carry chain | {WEIGHTS['lut1_carry']:g} | the carry's S input is driven by a LUT |
| MUXF7/MUXF8/MUXF9 | {WEIGHTS['muxf']:g} | wide-mux stages inside the slice, no route |
| CARRY4 entered on S/DI/CYINIT | {WEIGHTS['carry_in']:g} | carry entry; the LUT in front counts by itself |
| each further CARRY4 on the chain (CI) | {WEIGHTS['carry_ci']:g} | 4 bits of dedicated carry; a 64-bit add is 0.5 + 15 x 0.125 |
| distributed RAM / SRL read (address to data) | {WEIGHTS['lutram']:g} | a LUT |
| block RAM output (no output register) | {WEIGHTS['bram_tco']:g} at the start | block-RAM clock-to-out without the output register is about 1 ns |
| URAM288 output | {WEIGHTS['uram_tco']:g} at the start | |

Yosys 0.23 maps adders to CARRY4 even for `-family xcup` (Vivado packs two into a CARRY8), hence
the per-CARRY4 weight.

### Depth budget

levels = floor((period - {FIXED_NS} ns) / {LEVEL_NS} ns), where {FIXED_NS} ns is the flip-flop
clock-to-out (0.1 ns), the route into the capturing flip-flop (0.35 ns), its setup (0.1 ns)
and clock uncertainty and skew inside one SLR (0.25 ns). At 250 MHz (4 ns) that is
floor(3.2 / 0.5) = **6 levels**, at 300 MHz 5, and at the CMAC's 322 MHz 4. Paths longer than
that can still close with good placement, and shorter ones can fail on high fan-out or an
SLR crossing; the budget flags the paths a lab engineer should look at first in Vivado's
`report_design_analysis -logic_level_distribution`.
"""


# ---------------------------------------------------------------------------------------
SELFTEST = r"""
module st_par #(parameter int N = 36) (input wire clk, input wire [N-1:0] a, output logic p);
  logic [N-1:0] a_q;
  always_ff @(posedge clk) begin
    a_q <= a;
    p   <= ^a_q;                          // N-input parity: ceil(log6(N)) LUT levels
  end
endmodule
module st_add (input wire clk, input wire [31:0] y, output logic [31:0] s);
  logic [31:0] y_q;
  always_ff @(posedge clk) begin
    y_q <= y;
    s   <= y_q + {y_q[30:0], y_q[31]};    // LUT2 (S) + carry entry + 7 CARRY4 hops
  end
endmodule
module st_ram (input wire clk, input wire [9:0] ra, input wire [9:0] wa, input wire [63:0] wd,
               input wire we, output logic p);
  logic [63:0] mem [1024];
  logic [63:0] rd_q;
  logic [9:0]  ra_q;
  always_ff @(posedge clk) begin
    ra_q <= ra;
    if (we) mem[wa] <= wd;
    rd_q <= mem[ra_q];                    // block RAM, synchronous read
    p    <= ^rd_q;                        // block-RAM clock-to-out + 3 LUT levels
  end
endmodule
module st_cdc (input wire clk, input wire [215:0] w, output logic p);
  always_ff @(posedge clk) p <= ^w;       // fed by clk2 flip-flops only: not a clk path
endmodule
module st_top (
  input wire clk, input wire clk2,
  input wire [63:0] x, input wire [31:0] y, input wire [35:0] z, input wire [215:0] w,
  input wire [9:0] ra, input wire [9:0] wa, input wire [63:0] wd, input wire we,
  output logic [31:0] sum, output logic p0, output logic p1, output logic p2,
  output logic pr, output logic pc
);
  logic [215:0] w_q;
  always_ff @(posedge clk2) w_q <= w;
  st_par #(.N(64)) u_p64 (.clk(clk), .a(x), .p(p0));
  st_par #(.N(6)) u_a (.clk(clk), .a(z[5:0]), .p(p1));
  st_par #(.N(6)) u_b (.clk(clk2), .a(z[11:6]), .p(p2));
  st_add u_add (.clk(clk), .y(y), .s(sum));
  st_ram u_ram (.clk(clk), .ra(ra), .wa(wa), .wd(wd), .we(we), .p(pr));
  st_cdc u_cdc (.clk(clk), .w(w_q), .p(pc));
endmodule
"""

SELFTEST_LTP = r"""
module st_ltp (input wire clk, input wire [63:0] x, output logic p);
  logic [63:0] x_q;
  always_ff @(posedge clk) begin x_q <= x; p <= ^x_q; end
endmodule
"""


def yosys(script, log):
    r = subprocess.run(["yosys", "-q", "-l", log, "-p", script], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"yosys failed ({log}):\n{r.stderr[-2000:]}")
    return open(log).read()


def cmd_selftest(a):
    wd = a.workdir or tempfile.mkdtemp(prefix="synth_selftest_")
    os.makedirs(wd, exist_ok=True)
    fails = []

    def expect(what, got, want):
        ok = (got is not None and abs(got - want) < 1e-9) if isinstance(want, float) else got == want
        print(f"  [{'ok' if ok else 'FAIL'}] {what}: {got} (expected {want})")
        if not ok:
            fails.append(what)

    src = os.path.join(wd, "st_top.sv")
    open(src, "w").write(SELFTEST)
    yosys(f"read_verilog -sv {src}; hierarchy -check -top st_top; proc; "
          f"setattr -set bouncer_in 1 */i:*; design -save rtl; delete */t:$* */t:$paramod* %d; "
          f"write_json {wd}/inst.json; design -load rtl; "
          f"synth_xilinx -family xcup -top st_top -flatten -noiopad -noclkbuf; "
          f"tee -q -o {wd}/stat.txt stat -tech xilinx; json -o {wd}/net.json st_top", f"{wd}/st.log")
    args = argparse.Namespace(width=0, ctx_log2=10, netlist=f"{wd}/net.json", inst=f"{wd}/inst.json",
                              stat=f"{wd}/stat.txt", hier_stat=None, out=f"{wd}/summary.json", require_tables=False,
                              budget=["clk=250", "clk2=322.265625"])
    cmd_analyze(args)
    s = json.load(open(f"{wd}/summary.json"))
    r = s["resources"]
    expect("u_a flip-flops", r.get("u_a", {}).get("FF", 0), 7)
    expect("u_b flip-flops", r.get("u_b", {}).get("FF", 0), 7)
    expect("u_a LUTs (6-input parity)", r.get("u_a", {}).get("LUT", 0), 1)
    expect("u_add carry cells", r.get("u_add", {}).get("CARRY", 0), 8)
    expect("u_ram block RAM (RAMB36 equivalents)",
           r.get("u_ram", {}).get("RAMB36", 0) + r.get("u_ram", {}).get("RAMB18", 0) * 0.5, 2.0)
    expect("top flip-flops (w_q)", r.get("", {}).get("FF", 0), 216)
    d = s["domains"]
    per = d["clk"]["per_instance"]
    expect("depth u_p64 (64-input parity)", per.get("u_p64"), 3.0)
    expect("depth u_a (6-input parity)", per.get("u_a"), 1.0)
    expect("depth u_add (32-bit adder)", per.get("u_add"),
           WEIGHTS["lut"] + WEIGHTS["carry_in"] + 7 * WEIGHTS["carry_ci"])
    expect("depth u_ram (block RAM + 3 LUTs)", per.get("u_ram"), WEIGHTS["bram_tco"] + 3 * WEIGHTS["lut"])
    expect("clk2 -> clk path into u_cdc not counted", per.get("u_cdc"), None)
    expect("clk depth (u_ram)", d["clk"]["depth"], WEIGHTS["bram_tco"] + 3 * WEIGHTS["lut"])
    expect("clk2 depth (u_b)", d["clk2"]["depth"], 1.0)
    expect("clk2 path ends in u_b", d["clk2"]["path"][-1]["inst"], "u_b")
    # pure-LUT logic: the levelizer agrees with Yosys' own ltp on a generic LUT6 mapping
    src2 = os.path.join(wd, "st_ltp.sv")
    open(src2, "w").write(SELFTEST_LTP)
    log = yosys(f"read_verilog -sv {src2}; synth -top st_ltp -flatten -lut 6; ltp -noff", f"{wd}/ltp.log")
    m = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", log)
    ltp_len = int(m.group(1)) if m else -1
    yosys(f"read_verilog -sv {src2}; hierarchy -check -top st_ltp; proc; design -save rtl; "
          f"delete */t:$* */t:$paramod* %d; write_json {wd}/inst2.json; design -load rtl; "
          f"synth_xilinx -family xcup -top st_ltp -flatten -noiopad -noclkbuf; "
          f"tee -q -o {wd}/stat2.txt stat -tech xilinx; json -o {wd}/net2.json st_ltp", f"{wd}/st2.log")
    args2 = argparse.Namespace(width=0, ctx_log2=10, netlist=f"{wd}/net2.json", inst=f"{wd}/inst2.json",
                               stat=f"{wd}/stat2.txt", hier_stat=None, out=f"{wd}/summary2.json", require_tables=False,
                               budget=["clk=250"])
    cmd_analyze(args2)
    s2 = json.load(open(f"{wd}/summary2.json"))
    expect("64-input parity, levelizer", s2["domains"]["clk"]["depth"], 3.0)
    expect("64-input parity, ltp -noff on synth -lut 6", ltp_len, 3)
    expect("budget at 250 MHz", budget_for(250), 6)
    expect("budget at 322.27 MHz", budget_for(322.265625), 4)
    if fails:
        print(f"selftest: {len(fails)} failed: {', '.join(fails)}")
        return 1
    print("selftest: all passed")
    if not a.workdir:
        shutil.rmtree(wd, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("analyze")
    p.add_argument("--width", type=int, required=True)
    p.add_argument("--ctx-log2", type=int, default=10)
    p.add_argument("--netlist", required=True)
    p.add_argument("--inst", required=True)
    p.add_argument("--stat", required=True)
    p.add_argument("--hier-stat")
    p.add_argument("--no-table-check", dest="require_tables", action="store_false",
                   help="do not require the connection-table modules (small test designs)")
    p.add_argument("--budget", action="append", default=[], help="CLOCK=MHZ")
    p.add_argument("--out", required=True)
    p = sub.add_parser("doc")
    p.add_argument("--out", required=True)
    p.add_argument("--command", required=True)
    p.add_argument("--yosys", required=True)
    p.add_argument("--date", required=True)
    p.add_argument("--rtl", default="unknown", help="RTL revision described")
    p.add_argument("summaries", nargs="+")
    p = sub.add_parser("check")
    p.add_argument("summary")
    p.add_argument("--depth-advisory", action="store_true",
                   help="report depth over budget as a warning, do not fail on it")
    p.add_argument("--depth-ceiling", action="append", default=[], metavar="CLOCK=LEVELS",
                   help="fail if the clock's depth exceeds LEVELS, even with --depth-advisory")
    p = sub.add_parser("selftest")
    p.add_argument("--workdir")
    a = ap.parse_args()
    return {"analyze": cmd_analyze, "doc": cmd_doc, "check": cmd_check, "selftest": cmd_selftest}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
