#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""scripts/card/kernel.xml against the kernel RTL and the register map.

- well-formed XML, one user-managed kernel named bouncer_kernel whose VLNV is the one
  package_kernel.tcl packages;
- its ports are exactly the bus interfaces of bouncer_kernel.sv (rtl/kernel/kernel.f): every
  port's signals exist in the RTL with the right directions and widths (address width -> range,
  data width -> dataWidth, at DATA_W 512), and every RTL port belongs to one of them or is a
  clock or reset;
- its arguments: the pointer registers are the *_BASE_LO/_HI pairs of regs/bouncer.toml at the
  same offsets, the register range holds the whole map, the stream arguments name the streams
  with their width.
The helpers are shared with test_package_kernel.py (which checks the DATA_W=64 rewrite).
"""
import os
import re
import sys
import tomllib
import unittest
import xml.etree.ElementTree as ET

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNEL_XML = os.path.join(ROOT, "scripts", "card", "kernel.xml")


def read_f(path):
    """The sources of an RTL list file, absolute, as Verilator's -F reads it: # and //
    comments, paths relative to the list, "-F other.f" read in place."""
    out, d = [], os.path.dirname(path)
    with open(path) as f:
        for line in f:
            line = re.sub(r"(#|//).*", "", line).strip()
            if line.startswith("-F"):
                out += read_f(os.path.normpath(os.path.join(d, line[2:].strip())))
            elif line:
                out.append(os.path.normpath(os.path.join(d, line)))
    return out


# the kernel top: bouncer_kernel.sv of the kernel block's list
KERNEL_RTL = next(f for f in read_f(os.path.join(ROOT, "rtl", "kernel", "kernel.f"))
                  if os.path.basename(f) == "bouncer_kernel.sv")
PACKAGE_TCL = os.path.join(ROOT, "scripts", "card", "package_kernel.tcl")
REGS = os.path.join(ROOT, "regs", "bouncer.toml")

AXIL = {"awaddr": "in", "awvalid": "in", "awready": "out", "wdata": "in", "wstrb": "in",
        "wvalid": "in", "wready": "out", "bresp": "out", "bvalid": "out", "bready": "in",
        "araddr": "in", "arvalid": "in", "arready": "out", "rdata": "out", "rresp": "out",
        "rvalid": "out", "rready": "in"}
AXI_MASTER = {}
for ch, sigs in (("aw", "id addr len size burst cache prot valid"), ("ar", "id addr len size burst cache prot valid")):
    for s in sigs.split():
        AXI_MASTER[ch + s] = "out"
    AXI_MASTER[ch + "ready"] = "in"
AXI_MASTER.update({"wdata": "out", "wstrb": "out", "wlast": "out", "wvalid": "out", "wready": "in",
                   "bid": "in", "bresp": "in", "bvalid": "in", "bready": "out",
                   "rid": "in", "rdata": "in", "rresp": "in", "rlast": "in", "rvalid": "in", "rready": "out"})
AXIS = {"tdata": "in", "tkeep": "in", "tlast": "in", "tvalid": "in", "tready": "out"}
CLOCKS = {"ap_clk", "ap_rst_n", "ap_clk_2", "ap_rst_n_2"}


def rtl_ports(data_w, path=KERNEL_RTL):
    """{name: (direction 'in'|'out', width)} of bouncer_kernel at DATA_W = data_w."""
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", f.read(), flags=re.S)
    m = re.search(r"\bmodule\s+bouncer_kernel\b.*?\)\s*\(\s*(.*?)\)\s*;", text, flags=re.S)
    if not m:
        raise AssertionError("no port list of module bouncer_kernel")
    params = dict(re.findall(r"parameter\s+int\s+(\w+)\s*=\s*(\d+)", text[: m.start(1)]))
    params["DATA_W"] = str(data_w)
    ports = {}
    for d, rng, name in re.findall(r"\b(input|output)\s+(?:wire|logic)?\s*(\[[^\]]+\])?\s*(\w+)", m.group(1)):
        width = 1
        if rng:
            msb, lsb = rng[1:-1].split(":")

            def ev(e):
                for k, v in params.items():
                    e = re.sub(rf"\b{k}\b", v, e)
                if not re.fullmatch(r"[0-9+\-*/() ]+", e):
                    raise AssertionError(f"cannot evaluate width expression {e}")
                return eval(e.replace("/", "//"))  # digits and operators only

            width = ev(msb) - ev(lsb) + 1
        ports[name] = ("in" if d == "input" else "out", width)
    return ports


def rtl_parameters(path=KERNEL_RTL):
    with open(path, encoding="utf-8") as f:
        return set(re.findall(r"parameter\s+int\s+(\w+)", f.read()))


def check_ports(tc, root, data_w):
    """The kernel.xml ports of root against the RTL at data_w (tc: a unittest.TestCase)."""
    rtl = rtl_ports(data_w)
    kernel = root.find("kernel")
    covered = set(CLOCKS)
    for c in CLOCKS:
        tc.assertIn(c, rtl, f"RTL lacks {c}")
        tc.assertEqual(rtl[c], ("in", 1), c)
    xml_ports = {p.get("name"): p for p in kernel.find("ports")}
    tc.assertEqual(set(xml_ports), {"s_axi_control", "m_axi_host", "s_axis_rx", "m_axis_tx"})
    for name, p in xml_ports.items():
        mode, ptype = p.get("mode"), p.get("portType")
        if mode == "slave":
            tc.assertEqual(ptype, "addressable")
            sigs, flip = AXIL, False
        elif mode == "master":
            tc.assertEqual(ptype, "addressable")
            sigs, flip = AXI_MASTER, False
        else:
            tc.assertEqual(ptype, "stream", name)
            tc.assertIn(mode, ("read_only", "write_only"), name)
            sigs, flip = AXIS, mode == "write_only"
        for s, d in sigs.items():
            sig = f"{name}_{s}"
            tc.assertIn(sig, rtl, f"kernel.xml port {name}: the RTL has no {sig}")
            want = d if not flip else {"in": "out", "out": "in"}[d]
            tc.assertEqual(rtl[sig][0], want, f"{sig} direction")
            covered.add(sig)
        data = rtl[f"{name}_wdata" if ptype == "addressable" else f"{name}_tdata"][1]
        tc.assertEqual(int(p.get("dataWidth")), data, f"{name} dataWidth vs the RTL")
        if ptype == "addressable":
            aw = rtl[f"{name}_awaddr"][1]
            tc.assertEqual(rtl[f"{name}_araddr"][1], aw)
            tc.assertEqual(int(p.get("range"), 16), (1 << aw) if mode == "slave" else (1 << aw) - 1, f"{name} range")
        else:
            tc.assertEqual(rtl[f"{name}_tkeep"][1], data // 8, f"{name} tkeep")
    tc.assertEqual(sorted(set(rtl) - covered), [], "RTL ports outside every kernel.xml port")
    for a in kernel.find("args"):
        if a.get("addressQualifier") == "4":
            port = xml_ports[a.get("port")]
            m = re.fullmatch(r"stream<ap_axiu<(\d+),0,0,0>>&", a.get("type"))
            tc.assertIsNotNone(m, a.get("type"))
            tc.assertEqual(int(m.group(1)), int(port.get("dataWidth")), a.get("name"))


class KernelXml(unittest.TestCase):
    def setUp(self):
        self.root = ET.parse(KERNEL_XML).getroot()  # raises on malformed XML
        self.kernel = self.root.find("kernel")

    def test_kernel(self):
        k = self.kernel
        self.assertEqual(len(self.root.findall("kernel")), 1)
        self.assertEqual(k.get("name"), "bouncer_kernel")
        self.assertEqual(k.get("hwControlProtocol"), "user_managed")
        self.assertEqual(k.get("interrupt"), "false")
        with open(PACKAGE_TCL) as f:
            tcl = f.read()
        m = re.search(r"ipx::package_project .*-vendor (\S+) -library (\S+)", tcl)
        self.assertIsNotNone(m, "package_project call not found")
        self.assertEqual(k.get("vlnv"), f"{m.group(1)}:{m.group(2)}:bouncer_kernel:1.0")
        self.assertIn("set kernel bouncer_kernel", tcl)

    def test_ports_match_rtl(self):
        check_ports(self, self.root, 512)

    def test_parameters(self):
        with open(PACKAGE_TCL) as f:
            tcl = f.read()
        m = re.search(r"set params \[list (.*?)\]\n", tcl)
        names = set(m.group(1).split()[0::2])
        self.assertEqual(names, {"DATA_W", "CTX_DEPTH_LOG2", "ASYNC_STREAMS"})
        self.assertLessEqual(names, rtl_parameters(), "package_kernel.tcl sets parameters the RTL lacks")

    def test_args_match_registers(self):
        with open(REGS, "rb") as f:
            regs = tomllib.load(f)
        offset = {r["name"]: r["offset"] for r in regs["reg"]}
        ids = []
        for a in self.kernel.find("args"):
            ids.append(int(a.get("id")))
            if a.get("addressQualifier") == "1":
                self.assertEqual(a.get("port"), "m_axi_host")
                self.assertEqual(int(a.get("size"), 16), 8)
                base = a.get("name").upper()
                self.assertIn(base + "_LO", offset, f"arg {a.get('name')}: no register {base}_LO")
                self.assertEqual(int(a.get("offset"), 16), offset[base + "_LO"], a.get("name"))
                self.assertEqual(offset[base + "_HI"], offset[base + "_LO"] + 4, a.get("name"))
            else:
                self.assertEqual(a.get("addressQualifier"), "4", a.get("name"))
                self.assertEqual(a.get("name"), a.get("port"))
        self.assertEqual(ids, list(range(len(ids))), "argument ids 0..n-1 in order")
        pointer_regs = {n[:-3] for n in offset if n.endswith("_BASE_LO")}
        declared = {a.get("name").upper() for a in self.kernel.find("args") if a.get("addressQualifier") == "1"}
        self.assertEqual(declared, pointer_regs, "every *_BASE_LO register is an argument")

    def test_range_holds_register_map(self):
        with open(REGS, "rb") as f:
            regs = tomllib.load(f)
        push = next(c["value"] for c in regs["const"] if c["name"] == "PUSH_PAGE_OFFSET")
        top = max([r["offset"] + 4 * r.get("count", 1) for r in regs["reg"]] + [push + 64])
        ctrl = next(p for p in self.kernel.find("ports") if p.get("name") == "s_axi_control")
        self.assertLessEqual(top, int(ctrl.get("range"), 16))
        self.assertEqual(int(ctrl.get("range"), 16), 0x10000, "xrt::ip addresses at most 64 KiB")


if __name__ == "__main__":
    unittest.main(verbosity=1)
