#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""scripts/card/check_cmac_license.tcl under tclsh against the stand-ins of mock_vivado.tcl: it
synthesises one cmac_usplus for the given part and writes "ok", "missing: <the licence
message>" (found in synth_ip's error or in the run's log) or "error: <message>" to --result,
exiting 0 each time; bad arguments exit 1 and run nothing. Whether Vivado's synth_ip fails
without the licence, and with which words, only a lab can check."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from test_package_kernel import tcl_list  # noqa: E402

TCL = os.path.join(ROOT, "scripts", "card", "check_cmac_license.tcl")
MOCK = os.path.join(HERE, "mock_vivado.tcl")
PART = "xcu280-fsvh2892-2L-e"


class LicenseCheck(unittest.TestCase):
    def run_probe(self, *args, fail=None, part=True):
        tmp = tempfile.mkdtemp(prefix="lic_check_")
        self.addCleanup(shutil.rmtree, tmp, True)
        result = os.path.join(tmp, "out", "license_check.txt")
        log = os.path.join(tmp, "log")
        cmd = ["tclsh", MOCK, log, TCL, "--result", result, *(["--part", PART] if part else []), *args]
        env = dict(os.environ)
        env.pop("MOCK_SYNTH_FAIL", None)
        if fail:
            env["MOCK_SYNTH_FAIL"] = fail
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        calls = []
        if os.path.exists(log):
            with open(log) as f:
                calls = [tcl_list(l.rstrip("\n")) for l in f]
        text = None
        if os.path.exists(result):
            with open(result) as f:
                text = f.read().strip()
        return p, calls, text, tmp

    def test_licensed(self):
        p, calls, text, tmp = self.run_probe()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(text, "ok")
        names = [c[0] for c in calls]
        create = [c for c in calls if c[0] == "create_project"][0]
        self.assertEqual(create[-2:], ["-part", PART])
        ip = [c for c in calls if c[0] == "create_ip"][0]
        self.assertEqual(ip[1:7], ["-name", "cmac_usplus", "-vendor", "xilinx.com", "-library", "ip"])
        self.assertLess(names.index("generate_target"), names.index("synth_ip"))
        self.assertIn(["synth_ip", "ip:bouncer_cmac_probe"], calls)

    def test_missing_in_error(self):
        p, _, text, _ = self.run_probe(fail="license")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(text.startswith("missing: "), text)
        self.assertIn("cmac_usplus", text)

    def test_missing_in_run_log(self):
        p, _, text, _ = self.run_probe(fail="license-log")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(text.startswith("missing: "), text)
        self.assertIn("A valid license was not found for feature 'cmac_usplus'", text)

    def test_other_failure(self):
        p, _, text, _ = self.run_probe(fail="other")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(text.startswith("error: "), text)
        self.assertIn("module 'nothing' not found", text)

    def test_bad_arguments(self):
        p, calls, text, _ = self.run_probe(part=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--part is required", p.stderr)
        self.assertEqual((calls, text), ([], None))
        p, calls, _, _ = self.run_probe("--colour", "red")
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown argument '--colour'", p.stderr)
        self.assertEqual(calls, [])


if __name__ == "__main__":
    unittest.main(verbosity=1)
