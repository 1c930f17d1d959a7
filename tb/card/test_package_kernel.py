#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""scripts/card/package_kernel.tcl, run by tclsh against recording stand-ins of the Vivado
commands (mock_vivado.tcl): what it adds to the project, which properties it sets on the kernel
IP, which clock each bus interface gets, the explicit inference of the second clock and reset
with their polarity (the stand-in of ipx::package_project infers only what Vivado infers by
name), and the kernel.xml it hands to package_xo (stream widths rewritten for DATA_W=64 and
checked against the RTL at that width). Vivado's own behaviour (inference of the interfaces,
package_xo) can only be checked in the lab."""
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import test_kernel_xml  # noqa: E402

TCL = os.path.join(ROOT, "scripts", "card", "package_kernel.tcl")
MOCK = os.path.join(HERE, "mock_vivado.tcl")


def tcl_list(line):
    """A line of the mock's log (a Tcl list) as Python words; braces group like Tcl."""
    words, i, s = [], 0, line
    while i < len(s):
        if s[i] == " ":
            i += 1
            continue
        if s[i] == "{":
            depth, j = 0, i
            while True:
                depth += {"{": 1, "}": -1}.get(s[j], 0)
                if depth == 0:
                    break
                j += 1
            words.append(s[i + 1 : j])
            i = j + 1
        else:
            j = s.find(" ", i)
            j = len(s) if j < 0 else j
            words.append(s[i:j])
            i = j
    return words


class Run:
    def __init__(self, *args, env=None):
        self.tmp = tempfile.mkdtemp(prefix="pkg_kernel_")
        self.xo = os.path.join(self.tmp, "out", "bouncer_kernel.xo")
        self.build = os.path.join(self.tmp, "out", "package")
        log = os.path.join(self.tmp, "log")
        cmd = ["tclsh", MOCK, log, TCL, "--root", ROOT, "--xo", self.xo, "--part", "xcu280-fsvh2892-2L-e", *args]
        e = dict(os.environ)
        e.update(env or {})
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=60)
        self.rc, self.out, self.err = p.returncode, p.stdout, p.stderr
        self.calls = []
        if os.path.exists(log):
            with open(log) as f:
                self.calls = [tcl_list(l.rstrip("\n")) for l in f]

    def find(self, *prefix):
        return [c for c in self.calls if c[: len(prefix)] == list(prefix)]

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def sources():
    return test_kernel_xml.read_f(os.path.join(ROOT, "rtl", "sources.f"))


class PackageKernel(unittest.TestCase):
    def run_ok(self, *args):
        r = Run(*args)
        self.addCleanup(r.close)
        self.assertEqual(r.rc, 0, r.err)
        return r

    def common(self, r, width, async_):
        # project: every source, in rtl/sources.f order, the kernel top, the parameters
        adds = r.find("add_files", "-norecurse")
        self.assertEqual(len(adds), 1)
        self.assertEqual(adds[0][2].split(), sources())
        self.assertIn(test_kernel_xml.KERNEL_RTL, adds[0][2].split())
        self.assertTrue(r.find("set_property", "top", "bouncer_kernel", "sources_1"))
        self.assertEqual(r.find("set_property", "generic")[0][2].split(),
                         [f"DATA_W={width}", "CTX_DEPTH_LOG2=10", f"ASYNC_STREAMS={async_}"])
        # the kernel IP properties Vitis wants
        for prop, value in (("sdx_kernel", "true"), ("sdx_kernel_type", "rtl"),
                            ("vitis_drc", "ctrl_protocol user_managed"), ("ipi_drc", "ignore_freq_hz true")):
            self.assertTrue(r.find("set_property", prop, value, "core0"), prop)
        for name, value in (("DATA_W", width), ("CTX_DEPTH_LOG2", 10), ("ASYNC_STREAMS", async_)):
            self.assertTrue(r.find("set_property", "value", str(value), f"up:{name}"), name)
            self.assertTrue(r.find("set_property", "value", str(value), f"hp:{name}"), name)
        self.assertTrue(r.find("set_property", "range", "65536", "ab:reg0"))
        # the second clock and reset are inferred explicitly (the stand-in, like Vivado, infers
        # only ap_clk, ap_rst_n and the AXI interfaces by name), after packaging and before
        # the interfaces are checked; both resets active low
        names = [c[0] for c in r.calls]
        self.assertIn(["ipx::infer_bus_interface", "ap_clk_2", "xilinx.com:signal:clock_rtl:1.0", "core0"], r.calls)
        self.assertIn(["ipx::infer_bus_interface", "ap_rst_n_2", "xilinx.com:signal:reset_rtl:1.0", "core0"], r.calls)
        self.assertLess(names.index("ipx::package_project"), names.index("ipx::infer_bus_interface"))
        for rst in ("ap_rst_n", "ap_rst_n_2"):
            self.assertIn(["ipx::add_bus_parameter", "POLARITY", f"bi:{rst}"], r.calls)
            self.assertTrue(r.find("set_property", "value", "ACTIVE_LOW", f"bp:{rst}:POLARITY"), rst)
        # clocks: AXI on ap_clk; the streams on ap_clk (0) or ap_clk_2 (1); resets
        assoc = [c[1:] for c in r.find("ipx::associate_bus_interfaces")]
        self.assertIn(["-clock", "ap_clk", "-reset", "ap_rst_n", "core0"], assoc)
        self.assertIn(["-clock", "ap_clk_2", "-reset", "ap_rst_n_2", "core0"], assoc)
        for b in ("s_axi_control", "m_axi_host"):
            self.assertIn(["-busif", b, "-clock", "ap_clk", "core0"], assoc)
        stream_clk = "ap_clk_2" if async_ else "ap_clk"
        other = "ap_clk" if async_ else "ap_clk_2"
        for b in ("s_axis_rx", "m_axis_tx"):
            self.assertIn(["-busif", b, "-clock", stream_clk, "core0"], assoc)
            self.assertIn(["-busif", b, "-clock", other, "-remove", "core0"], assoc)
        # order: package, edit, properties, save, then package_xo with the written kernel.xml
        names = [c[0] for c in r.calls]
        self.assertLess(names.index("ipx::package_project"), names.index("ipx::save_core"))
        self.assertTrue(r.find("ipx::check_integrity", "-kernel", "core0"))
        self.assertLess(names.index("ipx::save_core"), names.index("package_xo"))
        xo = r.find("package_xo")[0]
        kxml = os.path.join(r.build, "kernel.xml")
        self.assertEqual(xo[1:], ["-force", "-xo_path", r.xo, "-kernel_name", "bouncer_kernel",
                                  "-ip_directory", os.path.join(r.build, "ip"), "-kernel_xml", kxml])
        self.assertTrue(os.path.isfile(r.xo))
        test_kernel_xml.check_ports(self, ET.parse(kxml).getroot(), width)
        return kxml

    def test_default_512_sync_streams(self):
        r = self.run_ok()
        kxml = self.common(r, 512, 0)
        with open(kxml) as a, open(test_kernel_xml.KERNEL_XML) as b:
            self.assertEqual(a.read(), b.read(), "kernel.xml is used as is at 512 bits")
        self.assertEqual(r.find("add_files", "-fileset", "constrs_1"), [], "no CDC constraints without async streams")
        self.assertIn("DATA_W=512, ASYNC_STREAMS=0", r.out)

    def test_64_async_streams(self):
        r = self.run_ok("--width", "64", "--async-streams", "1")
        self.common(r, 64, 1)
        xdc = os.path.join(ROOT, "constraints", "kernel", "bouncer_kernel.xdc")
        self.assertTrue(os.path.isfile(xdc))
        self.assertEqual(r.find("add_files", "-fileset", "constrs_1"), [["add_files", "-fileset", "constrs_1", "-norecurse", xdc]])
        self.assertTrue(r.find("set_property", "processing_order", "late", "file:bouncer_kernel.xdc"))

    def test_interface_not_inferred(self):
        r = Run(env={"MOCK_MISSING": "s_axis_rx"})
        self.addCleanup(r.close)
        self.assertEqual(r.rc, 1)
        self.assertIn("bus interface s_axis_rx was not inferred", r.err)
        self.assertEqual(r.find("package_xo"), [])

    def test_parameter_not_found(self):
        r = Run(env={"MOCK_MISSING": "ASYNC_STREAMS"})
        self.addCleanup(r.close)
        self.assertEqual(r.rc, 1)
        self.assertIn("parameter ASYNC_STREAMS of bouncer_kernel was not found", r.err)

    def test_bad_arguments(self):
        for args, msg in ((["--width", "128"], "--width must be 64 or 512"),
                          (["--async-streams", "2"], "--async-streams must be 0 or 1"),
                          (["--colour", "red"], "unknown argument '--colour'")):
            r = Run(*args)
            self.addCleanup(r.close)
            self.assertEqual(r.rc, 1, shlex.join(args))
            self.assertIn(msg, r.err)
            self.assertEqual(r.calls, [], "nothing runs after a bad argument")


if __name__ == "__main__":
    unittest.main(verbosity=1)
