#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The sources a design needs, picked from a list of sources (rtl/sources.f resolved).

  rtl_needed.py [--file F]... [--module M]... -- SOURCE...

Prints, one a line and in the order given, the SOURCEs the seeds need: a source is needed when
its module or package (the file name without .sv: one module per file, rtl/ convention) is
named, outside comments, in a --file, in the source of a --module, or in another needed source.
Yosys' results (the SMT models of scripts/formal.sh, the netlists of synthesis) depend on what
it has read, not only on the modules it keeps, so its consumers that elaborate one block read
exactly that block's sources, in list order."""
import os
import re
import sys


def words(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", f.read(), flags=re.S)
    return set(re.findall(r"\b[A-Za-z_]\w*\b", text))


def main(argv):
    if "--" not in argv:
        sys.exit("usage: rtl_needed.py [--file F]... [--module M]... -- SOURCE...")
    k = argv.index("--")
    opts, sources = argv[:k], argv[k + 1 :]
    by_name = {os.path.splitext(os.path.basename(s))[0]: s for s in sources}
    seeds, needed = [], set()
    for i in range(0, len(opts), 2):
        if i + 1 >= len(opts) or opts[i] not in ("--file", "--module"):
            sys.exit(f"rtl_needed.py: bad arguments {opts[i:]}")
        if opts[i] == "--file":
            seeds.append(opts[i + 1])
        elif opts[i + 1] in by_name:
            needed.add(opts[i + 1])
            seeds.append(by_name[opts[i + 1]])
        else:
            sys.exit(f"rtl_needed.py: no source of module {opts[i + 1]}")
    while seeds:
        for w in words(seeds.pop()) & by_name.keys():
            if w not in needed:
                needed.add(w)
                seeds.append(by_name[w])
    for s in sources:
        if os.path.splitext(os.path.basename(s))[0] in needed:
            print(s)


if __name__ == "__main__":
    main(sys.argv[1:])
