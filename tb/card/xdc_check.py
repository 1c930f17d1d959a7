#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Static checker for Bouncer's XDC files (no Vivado on the CI machine).

  xdc_check.py board --facts board_facts.json --card u250 constraints/board/u250.xdc
  xdc_check.py kernel constraints/kernel/bouncer_kernel.xdc --rtl rtl/common/x.sv ...

Both modes parse the file as Vivado does, as Tcl: commands split at newlines and ';', words,
{braces}, "quotes" and [command substitution] balanced, '#' comments, backslash-newline. Every
command and every [substitution] must be one of the XDC commands below, with known options and
the right number of arguments; numbers (periods, delays) must be positive.

board: the file of a standalone top. PACKAGE_PIN values must be balls of the part's package, no
pin or port located twice, every located port has an IOSTANDARD unless it is a GT reference-clock
pin; then everything is compared with the card's facts: each port on its pin with its
IOSTANDARD and pull, every fact present, each reference clock's create_clock period equal to
1000/MHz, the bitstream properties and the power budget as listed.

kernel: the constraints packaged into the Vitis kernel. No pins, I/O standards, clocks or
bitstream settings (the platform owns them), no set_clock_groups (it would override the
set_max_delay bounds on the clock-domain crossings); every get_cells -hier -filter pattern must
match a register or module of the given RTL files, so a renamed synchroniser breaks the test
instead of silently dropping a constraint; every Gray-coded crossing bounded by set_max_delay
also carries set_bus_skew on the same start and end points.

Exit 0 when clean, 1 with one line per problem.
"""
import argparse
import fnmatch
import json
import re
import sys
from dataclasses import dataclass, field


class XdcError(Exception):
    pass


# ----------------------------------------------------------------------------- Tcl-ish parser
@dataclass
class Word:
    text: str  # source text of the word, braces/quotes stripped
    kind: str  # 'bare', 'brace', 'quote'
    line: int
    subs: list = field(default_factory=list)  # [Command] substituted inside the word

    def literal(self):
        """The word's value when it has no [substitution]."""
        return None if self.subs else self.text


@dataclass
class Command:
    words: list
    line: int

    @property
    def name(self):
        return self.words[0].text if self.words else ""


class Parser:
    def __init__(self, text):
        self.s = text.replace("\\\n", " ")  # backslash-newline: one space, as in Tcl
        self.i = 0
        self.open_line = 1
        # line numbers: count newlines of the original text up to each offset
        self._nl = [m.start() for m in re.finditer("\n", self.s)]

    def lineno(self, pos):
        lo, hi = 0, len(self._nl)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._nl[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo + 1

    def script(self, close=None):
        """Commands until end of text (close=None) or the closing ']' (close=']')."""
        cmds = []
        s = self.s
        while True:
            # skip blanks and command separators
            while self.i < len(s) and s[self.i] in " \t\r\n;":
                self.i += 1
            if self.i >= len(s):
                if close:
                    raise XdcError(f"line {self.open_line}: '[' is never closed")
                return cmds
            if close and s[self.i] == close:
                self.i += 1
                return cmds
            if s[self.i] == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
                continue
            cmds.append(self.command(close))

    def command(self, close):
        s = self.s
        start = self.i
        words = []
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r":
                self.i += 1
                continue
            if c in "\n;":
                break
            if close and c == close:
                break
            if c == "]" and not close:
                raise XdcError(f"line {self.lineno(self.i)}: ']' without '['")
            words.append(self.word(close))
        return Command(words, self.lineno(start))

    def word(self, close):
        s = self.s
        start = self.i
        line = self.lineno(start)
        if s[self.i] == "{":
            depth = 0
            while self.i < len(s):
                c = s[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        self.i += 1
                        break
                self.i += 1
            else:
                raise XdcError(f"line {line}: '{{' is never closed")
            if self.i < len(s) and s[self.i] not in " \t\r\n;" and not (close and s[self.i] == close):
                raise XdcError(f"line {line}: extra characters after close-brace")
            return Word(s[start + 1 : self.i - 1], "brace", line)
        if s[self.i] == '"':
            self.i += 1
            subs = []
            buf_start = self.i
            while self.i < len(s):
                c = s[self.i]
                if c == "\\":
                    self.i += 2
                    continue
                if c == "[":
                    subs.extend(self.substitution())
                    continue
                if c == '"':
                    break
                self.i += 1
            else:
                raise XdcError(f"line {line}: '\"' is never closed")
            text = s[buf_start : self.i]
            self.i += 1
            if self.i < len(s) and s[self.i] not in " \t\r\n;" and not (close and s[self.i] == close):
                raise XdcError(f"line {line}: extra characters after close-quote")
            return Word(text, "quote", line, subs)
        subs = []
        while self.i < len(s):
            c = s[self.i]
            if c in " \t\r\n;" or (close and c == close):
                break
            if c == "\\":
                self.i += 2
                continue
            if c == "[":
                subs.extend(self.substitution())
                continue
            if c == "]":
                raise XdcError(f"line {self.lineno(self.i)}: ']' without '['")
            if c in "{}":
                raise XdcError(f"line {self.lineno(self.i)}: stray '{c}' inside a word")
            self.i += 1
        return Word(s[start : self.i], "bare", line, subs)

    def substitution(self):
        saved = self.open_line
        self.open_line = self.lineno(self.i)
        self.i += 1  # '['
        cmds = self.script("]")
        self.open_line = saved
        return cmds


def parse(text):
    return Parser(text).script()


# ----------------------------------------------------------------------------- command table
# name: (flags, valued options, min positional, max positional); options may repeat.
QUERY = {
    "get_ports": ({"-quiet", "-regexp", "-nocase"}, {"-filter", "-of_objects"}, 0, 1),
    "get_cells": ({"-hierarchical", "-hier", "-quiet", "-regexp", "-nocase"}, {"-filter", "-of_objects"}, 0, 1),
    "get_pins": ({"-hierarchical", "-hier", "-quiet", "-regexp", "-nocase", "-leaf"}, {"-filter", "-of_objects"}, 0, 1),
    "get_nets": ({"-hierarchical", "-hier", "-quiet", "-regexp", "-nocase", "-segments"}, {"-filter", "-of_objects"}, 0, 1),
    "get_clocks": ({"-quiet", "-include_generated_clocks", "-regexp", "-nocase"}, {"-filter", "-of_objects"}, 0, 1),
    "current_design": (set(), set(), 0, 0),
    "get_property": ({"-quiet"}, set(), 2, 2),
    "expr": (set(), set(), 1, 99),
    "list": (set(), set(), 0, 99),
}
TOP = {
    "set_property": ({"-quiet"}, {"-dict"}, 1, 3),
    "create_clock": ({"-add"}, {"-period", "-name", "-waveform"}, 0, 1),
    "set_false_path": ({"-setup", "-hold"}, {"-from", "-to", "-through"}, 0, 0),
    "set_max_delay": ({"-datapath_only"}, {"-from", "-to", "-through"}, 1, 1),
    "set_min_delay": (set(), {"-from", "-to", "-through"}, 1, 1),
    "set_bus_skew": (set(), {"-from", "-to", "-through"}, 1, 1),
    "set_clock_groups": ({"-asynchronous", "-logically_exclusive", "-physically_exclusive"}, {"-name", "-group"}, 0, 0),
    "set_input_delay": ({"-max", "-min", "-add_delay"}, {"-clock"}, 2, 2),
    "set_output_delay": ({"-max", "-min", "-add_delay"}, {"-clock"}, 2, 2),
    "set_operating_conditions": (set(), {"-design_power_budget", "-ambient_temp", "-airflow", "-heatsink"}, 0, 0),
}
BOARD_PROPS = {"PACKAGE_PIN", "IOSTANDARD", "PULLUP", "PULLDOWN", "DRIVE", "SLEW"}
CONFIG_PROPS = re.compile(r"^(CONFIG_VOLTAGE|CONFIG_MODE|BITSTREAM\.[A-Z0-9_.]+)$")
KERNEL_PROPS = {"ASYNC_REG"}
IOSTANDARDS = {"LVCMOS12", "LVCMOS15", "LVCMOS18", "LVDS", "DIFF_SSTL12", "SSTL12", "LVDS_25"}
FILTER_PROPS = {"NAME", "REF_NAME", "ORIG_REF_NAME", "IS_SEQUENTIAL", "IS_PRIMITIVE", "PRIMITIVE_GROUP", "PARENT", "REF_PIN_NAME"}
# Package ball rows: A..Y then AA..AY, BA..BY, skipping I, O, Q, S, X, Z.
ROW_LETTERS = [c for c in "ABCDEFGHJKLMNPRTUVWY"]
ROWS = ROW_LETTERS + ["A" + c for c in ROW_LETTERS] + ["B" + c for c in ROW_LETTERS]


def positive_number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


class Checker:
    def __init__(self, path):
        self.path = path
        self.errors = []

    def err(self, line, msg):
        self.errors.append(f"{self.path}:{line}: {msg}")

    def check_syntax(self, cmd, table):
        """Options and arity of one command; returns (options {opt: [Word]}, positional [Word])."""
        name = cmd.name
        if name not in table:
            self.err(cmd.line, f"unknown or unexpected command '{name}'")
            return None
        flags, valued, lo, hi = table[name]
        opts, pos = {}, []
        words = cmd.words[1:]
        i = 0
        while i < len(words):
            w = words[i]
            t = w.text if w.kind == "bare" and not w.subs else None
            if t is not None and re.match(r"^-[A-Za-z_]", t):
                if t in flags:
                    opts.setdefault(t, []).append(None)
                elif t in valued:
                    if i + 1 >= len(words):
                        self.err(cmd.line, f"{name}: option {t} needs a value")
                        return None
                    opts.setdefault(t, []).append(words[i + 1])
                    i += 1
                else:
                    self.err(cmd.line, f"{name}: unknown option {t}")
                    return None
            else:
                pos.append(w)
            i += 1
        if name == "set_property":
            lo, hi = (1, 1) if "-dict" in opts else (3, 3)
        if not lo <= len(pos) <= hi:
            self.err(cmd.line, f"{name}: {len(pos)} arguments, expected {lo}" + (f"..{hi}" if hi != lo else ""))
            return None
        for w in cmd.words[1:]:
            for sub in w.subs:
                self.check_query(sub)
        return opts, pos

    def check_query(self, cmd):
        r = self.check_syntax(cmd, QUERY)
        if r is None:
            return
        opts, pos = r
        for f in opts.get("-filter", []):
            self.check_filter(cmd, f)

    def check_filter(self, cmd, word):
        expr = word.text
        for term in re.split(r"&&|\|\|", expr):
            term = term.strip().strip("()! ").strip()
            m = re.match(r"^([A-Z_]+)\s*(=~|!~|==|!=)?\s*(.*)$", term)
            if not m or m.group(1) not in FILTER_PROPS:
                self.err(cmd.line, f"{cmd.name} -filter: unknown property or term '{term}'")
            elif m.group(2) and not m.group(3):
                self.err(cmd.line, f"{cmd.name} -filter: '{term}' has no value")

    def run(self, text, table):
        try:
            cmds = parse(text)
        except XdcError as e:
            self.errors.append(f"{self.path}:{e}")
            return []
        out = []
        for c in cmds:
            r = self.check_syntax(c, table)
            if r is not None:
                out.append((c, r[0], r[1]))
        return out


def single_query(word, qname):
    """The one literal argument list of [qname ARGS] in word, or None."""
    if len(word.subs) != 1 or word.subs[0].name != qname or word.text.strip()[0] != "[":
        return None
    args = [w.text for w in word.subs[0].words[1:] if not w.text.startswith("-")]
    if len(args) != 1:
        return None
    return args[0].split()


def set_property_pairs(opts, pos):
    """[(property, value Word)] and the objects Word of a set_property command."""
    if "-dict" in opts:
        d = opts["-dict"][0]
        items = d.text.split()
        if len(items) % 2:
            return None, pos[0]
        pairs = [(items[k], Word(items[k + 1], "bare", d.line)) for k in range(0, len(items), 2)]
        return pairs, pos[0]
    return [(pos[0].text, pos[1])], pos[2]


def valid_ball(pin, package):
    m = re.match(r"^([A-Z]{1,2})([0-9]{1,2})$", pin)
    if not m:
        return False
    row, col = m.group(1), int(m.group(2))
    return row in ROWS[: package["rows"]] and 1 <= col <= package["cols"]


# ----------------------------------------------------------------------------- board mode
def check_board(path, text, facts):
    ck = Checker(path)
    cmds = ck.run(text, TOP)
    pkg = facts["package"]
    port_props = {}  # port -> {prop: value}
    pin_of = {}
    clocks = {}  # port -> period
    config = {}
    power = None
    for c, opts, pos in cmds:
        if c.name == "set_property":
            pairs, objw = set_property_pairs(opts, pos)
            if pairs is None:
                ck.err(c.line, "set_property -dict: odd number of words")
                continue
            props = [p for p, _ in pairs]
            if all(CONFIG_PROPS.match(p) for p in props):
                if len(objw.subs) != 1 or objw.subs[0].name != "current_design":
                    ck.err(c.line, f"{props[0]} belongs on [current_design]")
                for p, v in pairs:
                    config[p] = v.text
                continue
            ports = single_query(objw, "get_ports")
            if ports is None or len(ports) != 1:
                ck.err(c.line, "pin properties must name one port: [get_ports NAME]")
                continue
            port = ports[0]
            for p, v in pairs:
                if p not in BOARD_PROPS:
                    ck.err(c.line, f"unexpected property {p} in a board file")
                    continue
                if p in port_props.get(port, {}) and port_props[port][p] != v.text:
                    ck.err(c.line, f"{port}: {p} set twice ({port_props[port][p]} and {v.text})")
                port_props.setdefault(port, {})[p] = v.text
                if p == "PACKAGE_PIN":
                    if not valid_ball(v.text, pkg):
                        ck.err(c.line, f"{port}: {v.text} is not a ball of package {pkg['name']}")
                    elif v.text in pin_of and pin_of[v.text] != port:
                        ck.err(c.line, f"pin {v.text} used by {pin_of[v.text]} and {port}")
                    pin_of[v.text] = port
                elif p == "IOSTANDARD" and v.text not in IOSTANDARDS:
                    ck.err(c.line, f"{port}: unknown IOSTANDARD {v.text}")
                elif p in ("PULLUP", "PULLDOWN") and v.text.upper() not in ("TRUE", "FALSE"):
                    ck.err(c.line, f"{port}: {p} must be TRUE or FALSE")
        elif c.name == "create_clock":
            period = opts.get("-period", [None])[0]
            if period is None or positive_number(period.text) is None:
                ck.err(c.line, "create_clock needs a positive -period")
                continue
            ports = single_query(pos[0], "get_ports") if pos else None
            if not ports or len(ports) != 1:
                ck.err(c.line, "create_clock must name one port: [get_ports NAME]")
                continue
            if ports[0] in clocks:
                ck.err(c.line, f"two clocks on {ports[0]}")
            clocks[ports[0]] = float(period.text)
        elif c.name == "set_operating_conditions":
            v = opts.get("-design_power_budget", [None])[0]
            if v is None or positive_number(v.text) is None:
                ck.err(c.line, "set_operating_conditions needs a positive -design_power_budget")
            else:
                power = float(v.text)
        elif c.name in ("set_max_delay", "set_min_delay", "set_input_delay", "set_output_delay", "set_bus_skew"):
            if positive_number(pos[0].text) is None and pos[0].text != "0":
                ck.err(c.line, f"{c.name}: delay must be a number >= 0")
    want = facts["ports"]
    for port, props in sorted(port_props.items()):
        pin = props.get("PACKAGE_PIN")
        if pin is None:
            ck.err(0, f"{port}: properties but no PACKAGE_PIN")
            continue
        fact = want.get(port)
        if fact is None:
            ck.err(0, f"{port} on {pin}: not a port of the card's facts")
            continue
        if fact["pin"] != pin:
            ck.err(0, f"{port}: on {pin}, the card has it on {fact['pin']}")
        if fact["kind"] == "gt_refclk":
            if "IOSTANDARD" in props:
                ck.err(0, f"{port}: a GT reference-clock pin takes no IOSTANDARD")
        else:
            if "IOSTANDARD" not in props:
                ck.err(0, f"{port}: located on {pin} without an IOSTANDARD")
            elif props["IOSTANDARD"] != fact["iostandard"]:
                ck.err(0, f"{port}: IOSTANDARD {props['IOSTANDARD']}, the bank needs {fact['iostandard']}")
        pull = [p for p in ("PULLUP", "PULLDOWN") if props.get(p, "FALSE").upper() == "TRUE"]
        if pull != ([fact["pull"]] if "pull" in fact else []):
            ck.err(0, f"{port}: pull {pull or 'none'}, expected {fact.get('pull', 'none')}")
    for port, fact in sorted(want.items()):
        if port not in port_props:
            ck.err(0, f"{port} ({fact['pin']}) is not located")
        if "freq_mhz" in fact:
            period = 1000.0 / fact["freq_mhz"]
            if port not in clocks:
                ck.err(0, f"{port}: no create_clock ({fact['freq_mhz']} MHz)")
            elif abs(clocks[port] - period) > 0.0015:
                ck.err(0, f"{port}: period {clocks[port]} ns, {fact['freq_mhz']} MHz is {period:.3f} ns")
    for port in clocks:
        if "freq_mhz" not in want.get(port, {}):
            ck.err(0, f"create_clock on {port}, which is not a clock input of the card")
    for p, v in sorted(facts["bitstream"].items()):
        if p not in config:
            ck.err(0, f"{p} is not set (expected {v})")
        elif config[p].upper() != v.upper():
            ck.err(0, f"{p} is {config[p]}, expected {v}")
    for p in sorted(set(config) - set(facts["bitstream"])):
        ck.err(0, f"{p} is set but not in the card's facts")
    if power != facts["design_power_budget"]:
        ck.err(0, f"design power budget {power}, expected {facts['design_power_budget']}")
    return ck.errors


# ----------------------------------------------------------------------------- kernel mode
def rtl_names(paths):
    """Names the RTL gives Vivado to match: the modules, and for each declared signal of a
    module, the flop names Vivado derives from it (<signal>_reg, <signal>_reg[0]) both bare and
    under every instance name of that module (<instance>/<signal>_reg[0])."""
    regs_of, instances_of = {}, {}
    texts = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            texts.append(re.sub(r"//[^\n]*|/\*.*?\*/", " ", f.read(), flags=re.S))
    for text in texts:
        for m in re.finditer(r"\bmodule\s+(\w+)(.*?)\bendmodule\b", text, flags=re.S):
            regs = regs_of.setdefault(m.group(1), set())
            for decl in re.finditer(r"\b(?:logic|reg|bit)\b(?:\s*\[[^\]]*\])*\s+([^;=]+)", m.group(2)):
                regs.update(re.findall(r"\b([A-Za-z_]\w*)\b(?:\s*\[[^\]]*\])*\s*(?:,|$)", decl.group(1)))
    inst_re = re.compile(r"\b(\w+)\s*(?:#\s*\((?:[^()]|\([^()]*\))*\))?\s*(\w+)\s*\(")
    for text in texts:
        for m in inst_re.finditer(text):
            if m.group(1) in regs_of:
                instances_of.setdefault(m.group(1), set()).add(m.group(2))
    cells = set()
    for mod, regs in regs_of.items():
        for r in regs:
            for inst in [""] + [i + "/" for i in sorted(instances_of.get(mod, ()))]:
                cells.add(f"top/{inst}{r}_reg")
                cells.add(f"top/{inst}{r}_reg[0]")
    return cells, set(regs_of)


def check_kernel(path, text, rtl_paths):
    ck = Checker(path)
    cmds = ck.run(text, TOP)
    cells, modules = rtl_names(rtl_paths)
    gray, skews = [], set()
    for c, opts, pos in cmds:
        if c.name in ("create_clock", "set_operating_conditions"):
            ck.err(c.line, f"{c.name} in a kernel file: the platform owns clocks and power")
        elif c.name == "set_clock_groups":
            ck.err(c.line, "set_clock_groups in the kernel file would override the set_max_delay bounds of the crossings")
        elif c.name == "set_property":
            pairs, objw = set_property_pairs(opts, pos)
            for p, _ in pairs or []:
                if p not in KERNEL_PROPS:
                    ck.err(c.line, f"property {p} does not belong in a kernel file")
        elif c.name in ("set_max_delay", "set_bus_skew") and positive_number(pos[0].text) is None:
            if not pos[0].subs:
                ck.err(c.line, f"{c.name}: delay must be a positive number")
        if c.name == "set_max_delay" and is_gray_crossing(opts):
            gray.append((c, span(opts)))
        elif c.name == "set_bus_skew":
            skews.add(span(opts))
        # every filter pattern on cells must name something of the RTL
        stack = [w for w in c.words]
        while stack:
            w = stack.pop()
            for sub in w.subs:
                stack.extend(sub.words)
                if sub.name != "get_cells":
                    continue
                for fw in [sub.words[k + 1] for k in range(len(sub.words) - 1) if sub.words[k].text == "-filter"]:
                    for prop, op, pat in re.findall(r"\b(NAME|REF_NAME|ORIG_REF_NAME)\s*(=~|==)\s*\"?([^\s\"&|)]+)", fw.text):
                        pool = cells if prop == "NAME" else modules
                        match = (lambda n: fnmatch.fnmatchcase(n, pat)) if op == "=~" else (lambda n: n == pat)
                        if not any(match(n) for n in pool):
                            ck.err(sub.line, f"get_cells -filter {prop} {op} {pat}: matches nothing in the RTL")
    # A platform that declares the kernel's clocks asynchronous (set_clock_groups) overrides
    # set_max_delay, but not set_bus_skew (UG903, "Exceptions Priority"): a Gray-coded bus keeps
    # its skew bound only through set_bus_skew on the same start and end points.
    for c, key in gray:
        if key not in skews:
            ck.err(c.line, "set_max_delay on a Gray-coded crossing without set_bus_skew on the same -from/-to: "
                   "a platform's set_clock_groups would leave the bus without a skew bound")
    return ck.errors


def span(opts):
    """The -from and -to texts of a timing exception, for matching two exceptions' paths."""
    def text(o):
        return " ".join(opts[o][0].text.split()) if o in opts and opts[o] and opts[o][0] is not None else ""
    return text("-from"), text("-to")


def is_gray_crossing(opts):
    """A crossing whose start points are Gray-coded registers (named *gray*_q)."""
    return "-from" in opts and re.search(r"gray\w*_q", opts["-from"][0].text or "") is not None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    b = sub.add_parser("board")
    b.add_argument("--facts", required=True)
    b.add_argument("--card", required=True)
    b.add_argument("xdc")
    k = sub.add_parser("kernel")
    k.add_argument("--rtl", nargs="+", required=True)
    k.add_argument("xdc")
    a = ap.parse_args(argv)
    with open(a.xdc, encoding="utf-8") as f:
        text = f.read()
    if a.mode == "board":
        with open(a.facts, encoding="utf-8") as f:
            facts = json.load(f)
        if a.card not in facts:
            print(f"xdc_check: no facts for card {a.card}", file=sys.stderr)
            return 1
        errors = check_board(a.xdc, text, facts[a.card])
    else:
        errors = check_kernel(a.xdc, text, a.rtl)
    for e in errors:
        print(e)
    print(f"xdc_check {a.mode} {a.xdc}: {'clean' if not errors else f'{len(errors)} problem(s)'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
