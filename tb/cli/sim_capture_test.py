#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The on-card capture ring against the co-simulation's own capture, at one width:

  1. a short run (one connection, every frame under the 128-byte snap length, fewer frames than
     the ring's slots): `bouncer sim --pcap SIM --capture RING` must write two identical files,
     byte for byte (same frames, same order, same nanosecond stamps, same pcap header);
  2. a run with a 200-byte reject PD (the reject is longer than the snap length) and more
     frames than the ring holds: every ring record is a record of the simulation's capture
     (same stamp and original length), cut to 128 bytes where longer, and the ring holds exactly
     the last 2**LOG2 frames of each direction, in stamp order.

usage: sim_capture_test.py BOUNCER OUTDIR WIDTH. Exit 0 pass, 1 fail.
"""
import os
import struct
import subprocess
import sys

SLOTS = 16  # 2**CAPTURE_LOG2 of the default build
SNAP = 128
LISTENER_MAC = bytes.fromhex("020000000001")  # `bouncer sim` peer mode's listener


def records(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x4d\x3c\xb2\xa1":
        raise SystemExit(f"FAIL: {path}: not a little-endian nanosecond pcap")
    out, off = [], 24
    while off + 16 <= len(data):
        sec, ns, caplen, length = struct.unpack("<IIII", data[off:off + 16])
        out.append((sec * 10**9 + ns, length, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return out


def run(bouncer, args):
    cmd = [bouncer, "sim"] + args
    print("$ " + " ".join(cmd))
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    for line in r.stdout.splitlines():
        if line.startswith(("capture ring:", "check:", "pcap", "bouncer sim:")):
            print("  | " + line)
    if r.returncode != 0:
        print(r.stdout)
        raise SystemExit(f"FAIL: bouncer sim exited {r.returncode}")


def check(cond, what):
    if not cond:
        raise SystemExit(f"FAIL: {what}")
    print(f"  ok: {what}")


def main():
    bouncer, outdir, width = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    sim, ring = (os.path.join(outdir, f"w{width}_{n}.pcap") for n in ("sim", "ring"))
    run(bouncer, ["--width", width, "--connections", "1", "--pd-len", "7", "--peer-pd-len", "16",
                  "--pcap", sim, "--capture", ring])
    a, b = records(sim), records(ring)
    check(len(a) >= 10 and len(a) <= 2 * SLOTS and all(len(f) < SNAP for _, _, f in a),
          f"short run: {len(a)} frames, each under the snap length, fewer than the slots")
    check(open(sim, "rb").read() == open(ring, "rb").read(),
          f"short run: the ring's pcap equals the simulation's byte for byte ({len(b)} records)")

    sim2, ring2 = (os.path.join(outdir, f"w{width}_{n}_long.pcap") for n in ("sim", "ring"))
    run(bouncer, ["--width", width, "--connections", "4", "--pd-len", "200", "--pcap", sim2,
                  "--capture", ring2])
    a, b = records(sim2), records(ring2)
    by_stamp = {}
    for rec in a:
        by_stamp.setdefault(rec[0], []).append(rec)
    cut = 0
    for ts, length, data in b:
        full = [r for r in by_stamp.get(ts, []) if r[1] == length]
        check(len(full) >= 1 and any(data == r[2][:SNAP] for r in full),
              f"ring record at {ts} ns ({length} B) is a simulation record, cut to "
              f"{min(length, SNAP)} bytes")
        cut += length > SNAP
    check(cut > 0 and all(len(d) == min(n, SNAP) for _, n, d in b),
          f"long frames are kept as their first {SNAP} bytes with their length ({cut} cut)")
    # the simulation's frames by direction: TX from the listener's MAC, RX from the peers'
    tx = [r for r in a if r[2][6:12] == LISTENER_MAC]
    rx = [r for r in a if r[2][6:12] != LISTENER_MAC]
    want = sorted((r[0], r[1]) for r in rx[-SLOTS:] + tx[-SLOTS:])
    check(len(rx) > SLOTS and len(tx) > SLOTS,
          f"more frames than slots in each direction ({len(rx)} RX, {len(tx)} TX)")
    check(sorted((ts, n) for ts, n, _ in b) == want,
          f"the ring holds exactly the last {SLOTS} frames of each direction")
    check([r[0] for r in b] == sorted(r[0] for r in b), "the ring's records are in stamp order")
    print("PASS")


if __name__ == "__main__":
    main()
