#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Tests of scripts/card/*.sh without Vitis, XRT or a card. One case per run:

  test_card_scripts.py CASE        (test_card_scripts.py --list names them; ctest runs each)

dry_run_*      --dry-run exits 0 and prints the expected commands, in order, with PATH holding
               none of the tools (a dry run checks nothing).
usage_*        bad arguments: exit 1 and a one-line message.
missing_*      the tool is absent from PATH (or is Debian's broken wrapper): exit 2 and one line
               naming it, no stack trace.
fake_run_*     the tools are stand-ins that record their arguments: the script runs exactly the
               commands its dry run printed (and stops at a failing one).
shellcheck     every script is shellcheck-clean.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CARD = os.path.join(ROOT, "scripts", "card")
BUILD = os.path.join(CARD, "build_xclbin.sh")
PROGRAM = os.path.join(CARD, "program_card.sh")
FLASH = os.path.join(CARD, "flash_shell.sh")
# What the scripts themselves need from PATH.
BASE_TOOLS = ["bash", "env", "dirname", "basename", "id", "timeout", "grep", "mkdir", "cat", "rm"]
PLATFORMS = {
    "u250": ("xcu250-figd2104-2L-e", "xilinx_u250_gen3x16_xdma_4_1_202210_1", "SLR2"),
    "u280": ("xcu280-fsvh2892-2L-e", "xilinx_u280_gen3x16_xdma_1_202211_1", "SLR2"),
    "u55c": ("xcu55c-fsvh2892-2L-e", "xilinx_u55c_gen3x16_xdma_3_202210_1", "SLR1"),
}
BDF_USER = "0000:3b:00.1"
BDF_MGMT = "0000:3b:00.0"

# A stand-in for vivado, v++, xbutil, ... : logs "name args" to $FAKE_LOG; answers the version
# probes the scripts make; creates the outputs vivado (-tclargs --xo F) and v++ (-o F) would;
# as the CMAC licence probe (vivado -source check_cmac_license.tcl) writes $FAKE_LICENSE (or
# "ok") to its --result file; as xclbinutil --dump-section CLOCK_FREQ_TOPOLOGY:JSON:F writes F in
# xclbinutil's form with the DATA clock at $FAKE_DATA_MHZ (default 300) and the KERNEL clock at
# $FAKE_KERNEL_MHZ (default 500); fails (exit 3) when its command line starts with $FAKE_FAIL.
FAKE_TOOL = r"""#!/usr/bin/env bash
name=$(basename "$0")
line="$name $*"
case "$1" in
  --version|-version)
    echo "$name"; echo "  Version              : 2.13.466 (fake)"; echo "Vivado v2022.1 (fake)"
    exit 0 ;;
  --help)
    echo "Usage: $name [options]  --primary <MCS>"
    [ "$name" = xbflash.qspi ] && exit 234
    exit 0 ;;
esac
echo "$line" >> "$FAKE_LOG"
if [ -n "${FAKE_FAIL:-}" ] && [[ $line == "$FAKE_FAIL"* ]]; then exit 3; fi
prev=""
for a in "$@"; do
  if { [ "$name" = vivado ] && [ "$prev" = --xo ]; } || { [ "$name" = v++ ] && [ "$prev" = -o ]; }; then
    mkdir -p "$(dirname "$a")"; : > "$a"
  fi
  if [ "$name" = vivado ] && [ "$prev" = --result ]; then
    mkdir -p "$(dirname "$a")"; echo "${FAKE_LICENSE:-ok}" > "$a"
  fi
  if [ "$name" = xclbinutil ] && [ "$prev" = --dump-section ]; then
    f=${a#CLOCK_FREQ_TOPOLOGY:JSON:}
    printf '{\n    "clock_freq_topology": {\n        "m_count": "2",\n        "m_clock_freq": [\n            {\n                "m_freq_Mhz": "%s",\n                "m_type": "DATA",\n                "m_name": "DATA_CLK"\n            },\n            {\n                "m_freq_Mhz": "%s",\n                "m_type": "KERNEL",\n                "m_name": "KERNEL_CLK"\n            }\n        ]\n    }\n}\n' "${FAKE_DATA_MHZ:-300}" "${FAKE_KERNEL_MHZ:-500}" > "$f"
  fi
  prev=$a
done
exit 0
"""
# Debian's libxrt-utils wrapper, as it behaves when installed in /usr/bin (its unwrapped binary
# is missing; it still exits 0). Used when the real one is not installed.
DEBIAN_WRAPPER = """#!/usr/bin/env bash
echo "/usr/bin/$(basename "$0"): line 52: /usr/bin/unwrapped/$(basename "$0")2: No such file or directory" >&2
exit 0
"""


class Failure(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


class Sandbox:
    """A PATH with only the base tools, plus chosen stand-ins; a fake sysfs; a log."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="card_scripts_")
        self.bin = os.path.join(self.dir, "bin")
        os.makedirs(self.bin)
        for t in BASE_TOOLS:
            path = shutil.which(t)
            expect(path is not None, f"base tool {t} missing on this machine")
            os.symlink(path, os.path.join(self.bin, t))
        self.log = os.path.join(self.dir, "fake.log")
        self.sysfs = os.path.join(self.dir, "sys")
        os.makedirs(os.path.join(self.sysfs, "bus", "pci", "devices"))
        self.write_tool("sudo", '#!/usr/bin/env bash\nexec "$@"\n')  # if the tests run as non-root

    def write_tool(self, name, text):
        p = os.path.join(self.bin, name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    def fake(self, *names):
        for n in names:
            self.write_tool(n, FAKE_TOOL)

    def device(self, bdf):
        os.makedirs(os.path.join(self.sysfs, "bus", "pci", "devices", bdf))

    def file(self, rel):
        p = os.path.join(self.dir, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").close()
        return p

    def run(self, args, extra_path="", env=None, cwd=None):
        e = {"PATH": self.bin + (":" + extra_path if extra_path else ""), "FAKE_LOG": self.log,
             "BOUNCER_SYSFS_ROOT": self.sysfs, "HOME": self.dir, "LANG": "C"}
        e.update(env or {})
        p = subprocess.run(args, env=e, capture_output=True, text=True, timeout=60, cwd=cwd)
        return p.returncode, p.stdout, p.stderr

    def logged(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [l.rstrip("\n") for l in f]

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def commands(stdout):
    """The '+ cmd' lines of a script's output, without a leading sudo."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("+ "):
            out.append(re.sub(r"^sudo ", "", line[2:]))
    return out


def expect_sequence(cmds, patterns):
    """Each regex matches one command, in order; no command is left over."""
    expect(len(cmds) == len(patterns), f"{len(cmds)} commands, expected {len(patterns)}:\n  " + "\n  ".join(cmds))
    for c, p in zip(cmds, patterns):
        expect(re.fullmatch(p, c), f"command\n  {c}\ndoes not match\n  {p}")


def q(s):
    return re.escape(s)


def run_ok(sb, args, env=None, cwd=None):
    rc, out, err = sb.run(args, env=env, cwd=cwd)
    expect(rc == 0, f"exit {rc}, expected 0\nstdout:\n{out}\nstderr:\n{err}")
    return out


def run_fail(sb, args, code, pattern, extra_path="", env=None, cwd=None):
    rc, out, err = sb.run(args, extra_path, env, cwd)
    expect(rc == code, f"exit {rc}, expected {code}\nstdout:\n{out}\nstderr:\n{err}")
    lines = [l for l in err.splitlines() if l.strip()]
    expect(len(lines) == 1, f"expected one line on stderr, got:\n{err}")
    expect(re.search(pattern, lines[0]), f"stderr\n  {lines[0]}\ndoes not match\n  {pattern}")
    expect("Traceback" not in out + err and "line " not in lines[0].split(":", 1)[0], "stack trace?")
    return out, lines[0]


# ----------------------------------------------------------------------------- cases
def build_patterns(card, out, xup, target="hw", width="512", async_="0"):
    """The commands of a build, in order: the CMAC licence probe (hw with the CMAC), packaging,
    the link, and the achieved-clock check (hw). xup's layout (Xilinx/xup_vitis_network_example):
    Ethernet/post_sys_link.tcl, and Ethernet/_x.<platform>/cmac_0.xo from Ethernet/Makefile."""
    part, platform, _ = PLATFORMS[card]
    xo = f"{out}/bouncer_kernel.xo"
    mhz = "300" if width == "512" else "250"
    pats = [q(f"mkdir -p {out}")]
    if target == "hw" and xup:
        pats.append(q(f"vivado -mode batch -nojournal -log {out}/license_check.log -source {CARD}/check_cmac_license.tcl "
                      f"-tclargs --part {part} --result {out}/license_check.txt --build-dir {out}/license_check"))
    pats.append(q(f"vivado -mode batch -nojournal -log {out}/package_kernel.log -source {CARD}/package_kernel.tcl "
                  f"-tclargs --root {ROOT} --xo {xo} --part {part} --width {width} --async-streams {async_} "
                  f"--build-dir {out}/package"))
    if target == "hw":
        pats.append(q(f"v++ -l -t hw --platform {platform} --config {CARD}/link_{card}.cfg "
                      f"--kernel_frequency 0:{mhz} --save-temps --temp_dir {out}/_x --jobs 4 "
                      f"--advanced.param compiler.userPostSysLinkOverlayTcl={xup}/Ethernet/post_sys_link.tcl "
                      f"-o {out}/bouncer_{card}.xclbin {xo} "
                      f"{xup}/Ethernet/_x.{platform}/cmac_0.xo"))
        pats.append(q(f"xclbinutil --input {out}/bouncer_{card}.xclbin --dump-section "
                      f"CLOCK_FREQ_TOPOLOGY:JSON:{out}/clock_freq_topology.json --force"))
    else:
        pats.append(q(f"v++ -l -t hw_emu --platform {platform} --config {CARD}/link_loopback.cfg "
                      f"--kernel_frequency 0:{mhz} --save-temps --temp_dir {out}/_x --jobs 4 "
                      f"-o {out}/bouncer_{card}_hw_emu.xclbin {xo}"))
        pats.append(q(f"emconfigutil --platform {platform} --od {out}"))
    return pats


def xup_tree(sb, rel="xup", platform=None):
    """A stand-in checkout of Xilinx/xup_vitis_network_example after
    make -C Ethernet all DEVICE=<platform> INTERFACE=0: the files build_xclbin.sh reads, where
    that repository has them (Ethernet/post_sys_link.tcl; Ethernet/Makefile writes
    _x.<platform>/cmac_0.xo with Ethernet/package_cmac.tcl). No Ethernet/cmac: the current tree
    has no CMAC IP submodule."""
    for f in ("Ethernet/Makefile", "Ethernet/package_cmac.tcl", "Ethernet/bd_cmac.tcl",
              "Ethernet/post_sys_link.tcl", f"Ethernet/_x.{platform}/cmac_0.xo"):
        sb.file(f"{rel}/{f}")
    return os.path.join(sb.dir, rel)


def case_dry_run_build(card):
    def run(sb):
        out = os.path.join(sb.dir, "out")
        text = run_ok(sb, [BUILD, "--card", card, "--xup", "/lab/xup", "--out", out, "--dry-run"])
        expect_sequence(commands(text), build_patterns(card, out, "/lab/xup"))
        expect(f"platform {PLATFORMS[card][1]}" in text, "platform not reported")
    return run


def case_dry_run_build_hw_emu(sb):
    out = os.path.join(sb.dir, "emu")
    text = run_ok(sb, [BUILD, "--card", "u280", "--target", "hw_emu", "--width", "64", "--out", out, "--dry-run"])
    expect_sequence(commands(text), build_patterns("u280", out, None, "hw_emu", "64"))


def case_dry_run_build_async(sb):
    out = os.path.join(sb.dir, "a")
    text = run_ok(sb, [BUILD, "--card", "u55c", "--async-streams", "1", "--loopback", "--out", out, "--dry-run"])
    cmds = commands(text)
    expect(re.search(r"--async-streams 1 ", cmds[1]), cmds[1])
    expect(" --kernel_frequency '0:300|1:322' " in cmds[2], cmds[2])
    run_fail(sb, [BUILD, "--card", "u55c", "--async-streams", "1", "--kernel-mhz", "400", "--loopback", "--dry-run"], 1,
             r"--async-streams 1 needs --kernel-mhz 333 or less")
    expect(re.search(r"--config \S+/link_loopback\.cfg", cmds[2]) and "cmac_0.xo" not in cmds[2], cmds[2])


def program_patterns(xclbin, hostmem=True, validate=True):
    p = [q(f"xbutil examine --device {BDF_USER}")]
    if hostmem:
        p.append(q(f"xbutil configure --host-mem --device {BDF_USER} --size 1G ENABLE"))
    if validate:
        p.append(q(f"xbutil validate --device {BDF_USER}"))
    p += [q(f"xbutil program --device {BDF_USER} --user {xclbin}"),
          q(f"xbutil examine --device {BDF_USER} --report dynamic-regions")]
    return p


def case_dry_run_program(sb):
    text = run_ok(sb, [PROGRAM, "--device", "3b:00.1", "--xclbin", "/lab/b.xclbin", "--dry-run"])
    expect_sequence(commands(text), program_patterns("/lab/b.xclbin"))
    text = run_ok(sb, [PROGRAM, "--device", BDF_USER, "--xclbin", "/lab/b.xclbin", "--no-host-mem",
                       "--skip-validate", "--dry-run"])
    expect_sequence(commands(text), program_patterns("/lab/b.xclbin", False, False))


def case_dry_run_flash(sb):
    base = [q(f"xbmgmt examine --device {BDF_MGMT} --report platform")]
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--base", "--dry-run"])
    expect_sequence(commands(text), base + [q(f"xbmgmt program --device {BDF_MGMT} --base")])
    expect("cold reboot" in text, "no cold-reboot advice")
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--base", "--image", "xilinx-u250-gen3x16-base", "--dry-run"])
    expect_sequence(commands(text), base + [q(f"xbmgmt program --device {BDF_MGMT} --base --image xilinx-u250-gen3x16-base")])
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--mcs", "/lab/s.mcs", "--dry-run"])
    expect_sequence(commands(text), base + [q(f"xbmgmt program --device {BDF_MGMT} --base=shell --image /lab/s.mcs")])
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--shell", "/lab/partition.xsabin", "--dry-run"])
    expect_sequence(commands(text), base + [q(f"xbmgmt program --device {BDF_MGMT} --shell /lab/partition.xsabin")])
    expect("cold reboot" not in text, "--shell needs no reboot")
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--mcs", "/lab/s.mcs", "--xbflash", "--dry-run"])
    expect_sequence(commands(text), [q(f"xbflash.qspi --primary /lab/s.mcs --card {BDF_MGMT}")])
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--mcs", "/lab/o.mcs", "--xbflash", "--bar", "2",
                       "--bar-offset", "0x340000", "--yes", "--dry-run"])
    expect_sequence(commands(text), [q(f"xbflash.qspi --primary /lab/o.mcs --card {BDF_MGMT} --bar 2 --bar-offset 0x340000 --force")])
    text = run_ok(sb, [FLASH, "--device", BDF_MGMT, "--revert-to-golden", "--dry-run"])
    expect_sequence(commands(text), [q(f"xbmgmt program --device {BDF_MGMT} --revert-to-golden")])


def case_help(sb):
    for script, words in ((BUILD, ["--card", "--target", "--width", "--xup", "--dry-run"]),
                          (PROGRAM, ["--device", "--xclbin", "--host-mem", "--dry-run"]),
                          (FLASH, ["--base", "--mcs", "--xbflash", "--revert-to-golden", "--dry-run"])):
        text = run_ok(sb, [script, "--help"])
        expect(text.startswith("Usage: "), f"{script} --help: no Usage line")
        for w in words:
            expect(w in text, f"{script} --help does not mention {w}")


def case_usage(sb):
    run_fail(sb, [BUILD, "--dry-run"], 1, r"--card u250\|u280\|u55c is required")
    run_fail(sb, [BUILD, "--card", "u200"], 1, r"unknown card 'u200'")
    run_fail(sb, [BUILD, "--card", "u250", "--width", "128", "--dry-run"], 1, r"--width must be 512 or 64")
    run_fail(sb, [BUILD, "--card", "u250", "--dry-run"], 1, r"needs xup's CMAC kernel.*--xup DIR")
    run_fail(sb, [PROGRAM, "--device", "3b:0.1", "--xclbin", "x", "--dry-run"], 1, r"bad --device '3b:0\.1'")
    run_fail(sb, [PROGRAM, "--xclbin", "x"], 1, r"--device BDF is required")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--base", "--revert-to-golden"], 1, r"only one of")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--base", "--xbflash"], 1, r"--xbflash goes with --mcs")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--mcs", "a.mcs", "--bar", "2"], 1, r"go with --xbflash")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--nonsense"], 1, r"unknown argument '--nonsense'")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--shell", "p.xsabin", "--base"], 1, r"only one of")
    run_fail(sb, [BUILD, "--card", "u250", "--kernel-mhz", "fast", "--loopback", "--dry-run"], 1,
             r"--kernel-mhz must be a whole number")


def case_missing_build_vivado(sb):
    run_fail(sb, [BUILD, "--card", "u250", "--loopback"], 2, r"^build_xclbin\.sh: vivado not found on PATH\. Fix: install Vitis")


def case_missing_build_vpp(sb):
    sb.fake("vivado")
    run_fail(sb, [BUILD, "--card", "u250", "--loopback"], 2, r"^build_xclbin\.sh: v\+\+ not found on PATH")


def case_missing_build_platform(sb):
    sb.fake("vivado", "v++")
    sb.write_tool("platforminfo", '#!/usr/bin/env bash\n[ "$1" = --help ] && exit 0\necho "ERROR: platform not found" >&2; exit 1\n')
    run_fail(sb, [BUILD, "--card", "u280", "--loopback"], 2, r"platform xilinx_u280_gen3x16_xdma_1_202211_1 is not installed")


def case_missing_build_cmac(sb):
    sb.fake("vivado", "v++", "platforminfo", "xclbinutil")
    run_fail(sb, [BUILD, "--card", "u250", "--xup", os.path.join(sb.dir, "noxup")], 2,
             r"xup CMAC kernel .*not found: .*/noxup/Ethernet/_x\.xilinx_u250_gen3x16_xdma_4_1_202210_1/cmac_0\.xo")


def case_missing_program_xbutil(sb):
    run_fail(sb, [PROGRAM, "--device", BDF_USER, "--xclbin", "/lab/b.xclbin"], 2,
             r"^program_card\.sh: xbutil not found on PATH\. Fix: install AMD's XRT")


def debian_wrapper_path(sb, tool):
    """PATH extra for Debian's real wrapper if installed, else a sandbox copy of its behaviour."""
    real = f"/usr/bin/{tool}"
    if os.path.exists(real) and "unwrapped" in open(real, errors="replace").read():
        return "/usr/bin"  # the sandbox has no xbutil, so /usr/bin's is found
    sb.write_tool(tool, DEBIAN_WRAPPER)
    return ""


def case_missing_program_debian_xbutil(sb):
    extra = debian_wrapper_path(sb, "xbutil")
    run_fail(sb, [PROGRAM, "--device", BDF_USER, "--xclbin", "/lab/b.xclbin"], 2,
             r"^program_card\.sh: xbutil at \S+ does not run: it is a wrapper without its binary", extra)


def case_missing_program_device(sb):
    sb.fake("xbutil")
    xclbin = sb.file("b.xclbin")
    run_fail(sb, [PROGRAM, "--device", BDF_USER, "--xclbin", xclbin], 2, r"no PCI device 0000:3b:00\.1 on this host")
    run_fail(sb, [PROGRAM, "--device", BDF_USER, "--xclbin", xclbin + ".none"], 2, r"xclbin not found")


def case_missing_flash_xbmgmt(sb):
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--base"], 2, r"^flash_shell\.sh: xbmgmt not found on PATH")
    extra = debian_wrapper_path(sb, "xbmgmt")
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--base"], 2,
             r"^flash_shell\.sh: xbmgmt at \S+ does not run: it is a wrapper without its binary", extra)


def case_missing_flash_xbflash(sb):
    run_fail(sb, [FLASH, "--device", BDF_MGMT, "--mcs", "/lab/s.mcs", "--xbflash"], 2,
             r"^flash_shell\.sh: xbflash\.qspi not found on PATH")


def case_fake_run_program(sb):
    sb.fake("xbutil")
    sb.device(BDF_USER)
    xclbin = sb.file("out/bouncer_u250.xclbin")
    args = [PROGRAM, "--device", BDF_USER, "--xclbin", xclbin]
    planned = commands(run_ok(sb, args + ["--dry-run"]))
    expect(sb.logged() == [], "a dry run ran something")
    run_ok(sb, args)
    expect(sb.logged() == planned, "ran:\n  " + "\n  ".join(sb.logged()) + "\nplanned:\n  " + "\n  ".join(planned))
    # a failing step stops the script with its command and exit code; nothing after it runs
    os.remove(sb.log)
    _, line = run_fail(sb, args, 1, r"step failed \(exit 3\): xbutil validate --device 0000:3b:00\.1$",
                       env={"FAKE_FAIL": "xbutil validate"})
    expect(not any(l.startswith("xbutil program") for l in sb.logged()), "ran past the failed step")


def case_fake_run_flash(sb):
    sb.fake("xbmgmt", "xbflash.qspi")
    sb.device(BDF_MGMT)
    mcs = sb.file("img/shell.mcs")
    plp = sb.file("img/partition.xsabin")
    for args in ([FLASH, "--device", BDF_MGMT, "--base"],
                 [FLASH, "--device", BDF_MGMT, "--mcs", mcs],
                 [FLASH, "--device", BDF_MGMT, "--shell", plp],
                 [FLASH, "--device", BDF_MGMT, "--revert-to-golden"]):
        if os.path.exists(sb.log):
            os.remove(sb.log)
        planned = commands(run_ok(sb, args + ["--dry-run"]))
        run_ok(sb, args)
        expect(sb.logged() == planned, f"{args}: ran {sb.logged()}, planned {planned}")
    if os.getuid() == 0:  # xbflash.qspi wants root; the script checks that first
        os.remove(sb.log)
        args = [FLASH, "--device", BDF_MGMT, "--mcs", mcs, "--xbflash", "--yes"]
        planned = commands(run_ok(sb, args + ["--dry-run"]))
        run_ok(sb, args)
        expect(sb.logged() == planned, f"ran {sb.logged()}, planned {planned}")
    else:
        run_fail(sb, [FLASH, "--device", BDF_MGMT, "--mcs", mcs, "--xbflash"], 2, r"must run as root")


BUILD_FAKES = ("vivado", "v++", "platforminfo", "emconfigutil", "xclbinutil")


def case_fake_run_build(sb):
    """A run against a stand-in xup tree laid out as the real one, with --xup and --out given
    relative to the current directory: every path reaches the tools absolute."""
    sb.fake(*BUILD_FAKES)
    platform = PLATFORMS["u55c"][1]
    xup = xup_tree(sb, "xup", platform)
    out = os.path.join(sb.dir, "out")
    args = [BUILD, "--card", "u55c", "--xup", "xup", "--out", "./out"]
    planned = commands(run_ok(sb, args + ["--dry-run"], cwd=sb.dir))
    expect_sequence(planned, build_patterns("u55c", out, xup))
    text = run_ok(sb, args, cwd=sb.dir)
    ran = [l for l in sb.logged() if not l.startswith("platforminfo")]
    expect(ran == planned[1:], "ran:\n  " + "\n  ".join(ran) + "\nplanned:\n  " + "\n  ".join(planned))
    expect(os.path.isfile(os.path.join(out, "bouncer_u55c.xclbin")), "no xclbin")
    expect(f"xclbin: {out}/bouncer_u55c.xclbin" in text, "xclbin path not reported")
    expect("CMAC licence: cmac_usplus synthesised" in text, "licence check not reported")
    expect("kernel clock: ap_clk 300 MHz as requested" in text, "achieved clock not reported")
    expect("--clock-mhz 300" in text, "next steps without the kernel clock")
    # hw_emu needs XILINX_XRT
    run_fail(sb, [BUILD, "--card", "u55c", "--target", "hw_emu", "--out", out], 2, r"XILINX_XRT is not set")


def case_fake_run_build_no_license(sb):
    """No CMAC licence: exit 2 naming it, before the kernel is packaged or linked."""
    sb.fake(*BUILD_FAKES)
    xup = xup_tree(sb, "xup", PLATFORMS["u280"][1])
    out = os.path.join(sb.dir, "out")
    run_fail(sb, [BUILD, "--card", "u280", "--xup", xup, "--out", out], 2,
             r"^build_xclbin\.sh: no licence for the 100G CMAC \(feature cmac_usplus.*: A valid license was not found",
             env={"FAKE_LICENSE": "missing: ERROR: A valid license was not found for feature 'cmac_usplus'"})
    ran = [l for l in sb.logged() if not l.startswith("platforminfo")]
    expect(len(ran) == 1 and "check_cmac_license.tcl" in ran[0], f"ran past the licence check: {ran}")
    # a probe that failed for another reason is a failed step (exit 1), not a missing licence
    os.remove(sb.log)
    run_fail(sb, [BUILD, "--card", "u280", "--xup", xup, "--out", out], 1, r"the licence check failed: error: boom",
             env={"FAKE_LICENSE": "error: boom"})
    # --skip-license-check and --loopback run no probe
    for extra in (["--skip-license-check"], ["--loopback"]):
        os.remove(sb.log)
        run_ok(sb, [BUILD, "--card", "u280", "--xup", xup, "--out", out] + extra,
               env={"FAKE_LICENSE": "missing: x"})
        expect(not any("check_cmac_license" in l for l in sb.logged()), f"{extra}: probe ran")


def case_fake_run_build_lower_clock(sb):
    """v++ closed timing only at a lower kernel clock: exit 1 naming both figures, unless
    --accept-lower-clock, which keeps the xclbin and passes the achieved clock on."""
    sb.fake(*BUILD_FAKES)
    xup = xup_tree(sb, "xup", PLATFORMS["u250"][1])
    out = os.path.join(sb.dir, "out")
    args = [BUILD, "--card", "u250", "--xup", xup, "--out", out]
    run_fail(sb, args, 1, r"v\+\+ lowered the kernel clock: ap_clk 283 MHz \(asked for 300\).*--kernel-mhz 283",
             env={"FAKE_DATA_MHZ": "283"})
    text = run_ok(sb, args + ["--accept-lower-clock"], env={"FAKE_DATA_MHZ": "283"})
    expect("warning: v++ lowered the kernel clock" in text and "--clock-mhz 283" in text, text)
    # an explicit request that was met passes; async streams also check ap_clk_2 (KERNEL clock)
    run_ok(sb, args + ["--kernel-mhz", "250"], env={"FAKE_DATA_MHZ": "250"})
    run_fail(sb, args + ["--async-streams", "1"], 1, r"ap_clk_2 300 MHz \(asked for 322\)",
             env={"FAKE_KERNEL_MHZ": "300"})


def case_shellcheck(sb):
    sc = shutil.which("shellcheck")
    expect(sc is not None, "shellcheck is not installed (scripts/deps.sh installs it)")
    scripts = [os.path.join(CARD, f) for f in sorted(os.listdir(CARD)) if f.endswith(".sh")]
    p = subprocess.run([sc, "-x", *scripts], cwd=ROOT, capture_output=True, text=True)
    expect(p.returncode == 0, p.stdout + p.stderr)
    for s in scripts:
        if not s.endswith("common.sh"):
            expect(os.access(s, os.X_OK), f"{s} is not executable")


CASES = {
    "dry_run_build_u250": case_dry_run_build("u250"),
    "dry_run_build_u280": case_dry_run_build("u280"),
    "dry_run_build_u55c": case_dry_run_build("u55c"),
    "dry_run_build_hw_emu": case_dry_run_build_hw_emu,
    "dry_run_build_async": case_dry_run_build_async,
    "dry_run_program": case_dry_run_program,
    "dry_run_flash": case_dry_run_flash,
    "help": case_help,
    "usage": case_usage,
    "missing_build_vivado": case_missing_build_vivado,
    "missing_build_vpp": case_missing_build_vpp,
    "missing_build_platform": case_missing_build_platform,
    "missing_build_cmac": case_missing_build_cmac,
    "missing_program_xbutil": case_missing_program_xbutil,
    "missing_program_debian_xbutil": case_missing_program_debian_xbutil,
    "missing_program_device": case_missing_program_device,
    "missing_flash_xbmgmt": case_missing_flash_xbmgmt,
    "missing_flash_xbflash": case_missing_flash_xbflash,
    "fake_run_program": case_fake_run_program,
    "fake_run_flash": case_fake_run_flash,
    "fake_run_build": case_fake_run_build,
    "fake_run_build_no_license": case_fake_run_build_no_license,
    "fake_run_build_lower_clock": case_fake_run_build_lower_clock,
    "shellcheck": case_shellcheck,
}


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(CASES))
        return 0
    names = sys.argv[1:] or list(CASES)
    failed = 0
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}")
            return 2
        sb = Sandbox()
        try:
            CASES[n](sb)
            print(f"ok   {n}")
        except Failure as e:
            failed += 1
            print(f"FAIL {n}: {e}")
        finally:
            sb.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
