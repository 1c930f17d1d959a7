#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Writes the seed corpus of the fuzz harness (tb/fuzz/corpus/*.bin): operation sequences in
the input format of tb/fuzz/fuzz_core.cpp (README.md there) for the valid exchanges the
fuzzer mutates around: SYN / handshake ACK / MPA request / host reject / ACK / FIN, the
auto-reject listener, RSTs, split requests, a lying PD_Length, raw descriptor posts.

usage: make_corpus.py OUTDIR"""
import os
import struct
import sys

SYN, ACK, MPA, RST, FIN, DATA, MUT, RAW, HOST, WQE, WAIT, KNOB = range(12)


def syn(p, isn=None):
    return bytes([SYN, p, 0]) if isn is None else bytes([SYN, p, 1]) + struct.pack(">I", isn)


def ack(p):
    return bytes([ACK, p])


def mpa(p, rev=2, flags=0x50, pd_units=8, ctl=0, pdl=None, cut=None):
    b = bytes([MPA, p, rev, flags, pd_units, ctl])
    if ctl & 0x40:
        b += struct.pack(">H", pdl)
    if ctl & 0x20:
        b += bytes([cut])
    return b


def rst(p, exact=True, with_ack=True):
    v = (1 if exact else 0) | (2 if with_ack else 0)
    return bytes([RST, p, v]) + (b"" if exact else struct.pack(">H", 5))


def fin(p, adv):
    return bytes([FIN, p]) + struct.pack(">H", adv)


def data(p, adv, n=0):
    return bytes([DATA, p]) + struct.pack(">H", adv) + bytes([n])


def wait(n):
    return bytes([WAIT, n])


def host(*decisions):
    return bytes([HOST, *decisions])


def wqe(cm_id, v, pd_len, opcode=None, pdl=None, addr=None):
    b = bytes([WQE, cm_id, v, pd_len])
    if opcode is not None:
        b += bytes([opcode])
    if pdl is not None:
        b += struct.pack(">H", pdl)
    if addr is not None:
        b += bytes([addr])
    return b


def handshake(p):
    return syn(p) + wait(8) + ack(p)


SEEDS = {
    # the reject exchange, siw-safe: request, reject (24 bytes: IRD/ORD word only), ACK, FIN
    "host_reject_siw": bytes([0]) + handshake(0) + mpa(0) + wait(40) + host(0) + wait(60)
    + data(0, 24) + wait(20) + fin(0, 24) + wait(60),
    # irdma policy (FIN in the reject), rev 1 request with PD, the host's PD
    "host_reject_irdma_rev1": bytes([1]) + handshake(1) + mpa(1, rev=1, flags=0x40, pd_units=20)
    + wait(40) + host(0x08 | (10 << 2)) + wait(60) + fin(1, 1 + 20 + 10 + 1) + wait(60),
    # abort policy, long PD
    "host_reject_abort": bytes([2]) + handshake(2) + mpa(2, pd_units=100) + wait(60)
    + host(0x02, 200) + wait(60),
    # the auto-reject listener (peer 3)
    "auto_reject": bytes([0]) + handshake(3) + mpa(3) + wait(80) + data(3, 28) + fin(3, 28)
    + wait(80),
    # the request split in two segments, then rejected
    "split_request": bytes([0]) + handshake(0) + mpa(0, ctl=0x20, cut=10) + wait(40) + host(0)
    + wait(60),
    # PD_Length larger than the PD sent, then the peer goes quiet
    "lying_pd_length": bytes([0]) + handshake(1) + mpa(1, ctl=0x40, pdl=300) + wait(63),
    # peer RST after the handshake, and after the request while the host holds it
    "rst_after_handshake": bytes([0]) + handshake(0) + rst(0) + wait(40),
    "rst_while_held": bytes([0]) + handshake(2) + mpa(2) + wait(40) + host(1) + rst(2)
    + wait(40) + host(0) + wait(40),
    # FIN before the request, out-of-window RST
    "fin_before_request": bytes([0]) + handshake(1) + fin(1, 0) + rst(1, exact=False) + wait(80),
    # a SYN for every peer, twice (duplicate SYN), different ISNs
    "syn_storm": bytes([0]) + b"".join(syn(p, 0x1000 * (p + 1)) for p in range(4))
    + b"".join(syn(p) for p in range(4)) + wait(60),
    # raw descriptors: unknown opcode, cm_id out of range, PD_LEN over 512, PD address outside
    # host memory (DECERR), an unused cm_id
    "raw_wqes": bytes([0]) + wqe(5, 0x20, 0, opcode=0x7F) + wqe(70, 0, 4)
    + wqe(1, 0x40, 8, pdl=700) + wqe(2, 0x80, 40, addr=3) + wqe(3, 0x04, 10) + wait(60),
    # a mutated SYN and a truncated request, slow DMA and TX backpressure
    "mutations": bytes([0]) + bytes([KNOB, 20]) + struct.pack(">I", 0x5555AAAB)
    + handshake(0) + mpa(0) + bytes([MUT, 2, 14, 0x40, 47, 0x01, 1, 40]) + wait(60)
    + host(0) + wait(60),
    # a raw frame of garbage
    "raw_frame": bytes([0]) + bytes([RAW, 59]) + bytes(range(60)) + wait(10),
}


def main() -> int:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, blob in SEEDS.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(blob)
    print(f"{len(SEEDS)} seeds in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
