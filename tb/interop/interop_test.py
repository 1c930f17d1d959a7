#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Interop tests: a real Linux soft-iWARP initiator (siw + librdmacm in a QEMU guest) against
the co-simulated RNIC (`bouncer sim --mode bridge`). One scenario per run (ctest interop.*):

  reject_siw   rev 2 requests, host reject, siw-safe FIN policy: several connects, each with its
               own private data; the host sees it (IRD/ORD parsed), the guest gets REJECTED/-104
               and exactly the host's reject private data
  fin_irdma    FIN in the reject segment: siw loses the private data (len 0) and answers with RST
  fin_abort    RST behind the reject: the private data arrives intact
  auto_reject  listener auto-reject: the guest gets the template private data, the host no event
  no_listener  no listener on the port: RST to the SYN; rdma_connect() fails with ECONNREFUSED
  rping        the stock `rping -c` gets RDMA_CM_EVENT_REJECTED, error -104

Every scenario also checks the capture of both directions: containment (the guest sent only
IPv4/TCP to the bridge, as many frames as the bridge counted), the MPA request bytes on the
wire, and `pcap_check --tshark` (golden model + Wireshark). Exit 0 pass, 1 fail, 77 skip (no
QEMU, or the guest could not be built here: the reason is printed).
"""
import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

SKIP = 77
GUEST_MAC = bytes.fromhex("525400123456")
BRIDGE_MAC = bytes.fromhex("020000000002")
GUEST_IP = bytes([10, 0, 0, 1])
BRIDGE_IP = bytes([10, 0, 0, 2])
PORT = 20049
ECONNRESET, ECONNREFUSED = 104, 111


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)
    print(f"  ok: {what}")


def free_udp_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Bridge:
    """`bouncer sim --mode bridge` as a child process; its JSON lines are collected."""

    def __init__(self, bouncer, local, remote, pcap, args, log_path):
        cmd = [bouncer, "sim", "--mode", "bridge", "--bridge-local", f"127.0.0.1:{local}",
               "--bridge-remote", f"127.0.0.1:{remote}", "--pcap", pcap, "--max-wall", "150"]
        cmd += args
        print("$ " + " ".join(cmd))
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        self.log = open(log_path, "w")
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True, env=env)
        self.events = []
        self.summary = None
        self.cv = threading.Condition()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.log.write(line)
            self.log.flush()
            try:
                ev = json.loads(line)
            except json.JSONDecodeError:
                continue
            with self.cv:
                self.events.append(ev)
                self.cv.notify_all()

    def wait_for(self, name, timeout):
        deadline = time.monotonic() + timeout
        with self.cv:
            while not any(e.get("event") == name for e in self.events):
                left = deadline - time.monotonic()
                if left <= 0 or self.p.poll() is not None:
                    return None
                self.cv.wait(min(left, 0.2))
            return next(e for e in self.events if e.get("event") == name)

    def stop(self, timeout=20):
        """Waits up to `timeout` for the bridge to stop by itself (--stop-after), else SIGTERM."""
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.t.join(timeout=5)
        self.log.close()
        return self.p.returncode

    def of(self, name):
        return [e for e in self.events if e.get("event") == name]


def run_guest(run_guest_sh, guest, qport, bport, log, params, timeout=120):
    cmd = [run_guest_sh, "--guest", guest, "--qport", str(qport), "--bport", str(bport),
           "--log", log, "--timeout", str(timeout)] + params
    print("$ " + " ".join(cmd))
    t0 = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    lines = r.stdout.splitlines()
    for line in lines:
        if line.startswith("BOUNCER_"):
            print("  guest| " + line)
    return r.returncode, lines, wall


def client_results(lines):
    out = []
    for line in lines:
        if line.startswith("BOUNCER_CLIENT {"):
            out.append(json.loads(line[len("BOUNCER_CLIENT "):]))
    return out


def guest_marks(lines):
    """{mark: uptime} from the BOUNCER_GUEST lines."""
    marks = {}
    for line in lines:
        parts = line.split()
        if len(parts) >= 3 and parts[0] in ("BOUNCER_GUEST", "BOUNCER_GUEST_DONE"):
            key = parts[1] if parts[0] == "BOUNCER_GUEST" else "done"
            for p in parts[1:]:
                if p.startswith("t="):
                    marks[key] = float(p[2:])
    return marks


# ---- pcap: containment and the MPA requests on the wire
def read_pcap(path):
    data = open(path, "rb").read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        endian = "<"
    elif magic == b"\xa1\xb2\xc3\xd4":
        endian = ">"
    else:
        raise Fail(f"{path}: not a pcap file")
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, caplen, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


def tcp_of(f):
    """(src_ip, dst_ip, sport, dport, flags, payload) of an untagged IPv4/TCP frame, else None."""
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
        return None
    ihl = (f[14] & 15) * 4
    tot = struct.unpack("!H", f[16:18])[0]
    t = 14 + ihl
    doff = (f[t + 12] >> 4) * 4
    sport, dport = struct.unpack("!HH", f[t:t + 4])
    return f[26:30], f[30:34], sport, dport, f[t + 13], bytes(f[t + doff:14 + tot])


def check_capture(pcap, summary, sent_pds):
    frames = read_pcap(pcap)
    from_guest = [f for f in frames if f[6:12] == GUEST_MAC]
    from_bridge = [f for f in frames if f[6:12] == BRIDGE_MAC]
    check(len(from_guest) + len(from_bridge) == len(frames),
          f"capture: all {len(frames)} frames are between the guest and Bouncer")
    bad = [f for f in from_guest
           if f[0:6] != BRIDGE_MAC or not tcp_of(f) or tcp_of(f)[0] != GUEST_IP
           or tcp_of(f)[1] != BRIDGE_IP or tcp_of(f)[3] != PORT]
    check(not bad, f"capture: the guest sent only IPv4/TCP to 10.0.0.2:{PORT} "
          f"({len(from_guest)} frames, no ARP, no IPv6)")
    check(len(from_guest) == summary["frames_to_bouncer"],
          f"capture: guest frames = datagrams the bridge received ({len(from_guest)})")
    check(len(from_bridge) == summary["frames_from_bouncer"],
          f"capture: Bouncer frames = datagrams the bridge sent ({len(from_bridge)})")
    reqs = [tcp_of(f)[5] for f in from_guest if tcp_of(f)[5].startswith(b"MPA ID Req Frame")]
    check(len(reqs) == len(sent_pds), f"capture: {len(sent_pds)} MPA requests on the wire")
    for i, (req, pd) in enumerate(zip(reqs, sent_pds), 1):
        flags, rev, pd_len = req[16], req[17], struct.unpack("!H", req[18:20])[0]
        check(flags == 0x10 and rev == 2 and pd_len == 4 + len(pd) and req[24:] == pd
              and len(req) == 20 + pd_len,
              f"capture: request {i}: rev 2, flags 0x10 (enhanced), PD_Length {pd_len} = "
              f"IRD/ORD word + the guest's {len(pd)} bytes")


def run_pcap_check(pcap_check, pcap, expect_pass=True):
    r = subprocess.run([pcap_check, "--tshark", pcap], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    lines = r.stdout.splitlines()
    conns = [line for line in lines if line[:1] == "c" and line[1:2].isdigit()]
    for line in lines:
        if line in conns or line.startswith(("check:", "pcap_check:")):
            print("  pcap| " + line)
    if expect_pass:
        check(r.returncode == 0, f"pcap_check --tshark {os.path.basename(pcap)}: PASS")
    return r.returncode, lines, conns


# ---- scenarios
class Ctx:
    def __init__(self, a, name):
        self.a, self.name = a, name
        self.dir = os.path.join(a.workdir, name)
        os.makedirs(self.dir, exist_ok=True)
        self.pcap = os.path.join(self.dir, f"{name}.pcap")
        if os.path.exists(self.pcap):
            os.remove(self.pcap)

    def run(self, bridge_args, guest_params, stop_after=None):
        bport, qport = free_udp_ports(2)
        if stop_after:
            bridge_args = bridge_args + ["--stop-after", str(stop_after)]
        b = Bridge(self.a.bouncer, bport, qport, self.pcap, bridge_args,
                   os.path.join(self.dir, "bridge.log"))
        if not b.wait_for("listening", 60):
            b.stop(0)
            raise Fail("the bridge did not start (see bridge.log)")
        rc, lines, wall = run_guest(self.a.run_guest, self.a.guest, qport, bport,
                                    os.path.join(self.dir, "guest.log"), guest_params)
        brc = b.stop(20 if stop_after else 1)
        summary = b.wait_for("summary", 1)
        b.summary = summary
        print(f"  bridge exit {brc}; summary: {json.dumps(summary)}")
        check(brc == 0 and summary is not None, "the bridge stopped cleanly with a summary")
        check(any(line.startswith("BOUNCER_GUEST_DONE") for line in lines),
              f"the guest ran to its end marker (run_guest exit {rc})")
        marks = guest_marks(lines)
        if "userspace" in marks and "done" in marks:
            print(f"  timing: guest userspace at {marks['userspace']:.2f} s, siw ready at "
                  f"{marks.get('net', 0):.2f} s, done at {marks['done']:.2f} s (guest uptime); "
                  f"QEMU wall {wall:.2f} s; bridge {summary['cycles']} cycles in "
                  f"{summary['wall_s']:.2f} s = {summary['cycles_per_s']:.0f} cycles/s")
        check(summary["foreign_datagrams"] == 0 and summary["send_errors"] == 0,
              "the bridge saw no foreign datagram and no send error")
        return b, lines, summary


def expect_client(results, n, event, status, stage="connect"):
    check(len(results) == n, f"the client printed {n} attempt lines")
    for r in results:
        check(r["stage"] == stage and r["event"] == event and r["status"] == status,
              f"attempt {r['attempt']}: {stage} ended with {event} status {status} "
              f"({r['status_name']}) in {r['ms_connect']:.1f} ms")
        check(r["extra"] == [], f"attempt {r['attempt']}: no further CM event")


def host_rejects(ctx, b, results, fin_policy):
    """The host side of a host reject: one CONNECT_REQUEST per attempt with the guest's PD."""
    check(b.of("listening")[0]["fin_policy"] == fin_policy, f"the listener's FIN policy is {fin_policy}")
    reqs, rejs = b.of("connect_request"), b.of("reject")
    check(len(reqs) == len(results) and len(rejs) == len(results),
          f"the host saw {len(results)} CONNECT_REQUESTs and rejected each")
    for q, j, r in zip(reqs, rejs, results):
        w = q["ird_ord"]
        check(q["rev"] == 2 and w is not None and q["pd_hex"] == r["sent_hex"],
              f"request {q['n']}: rev 2, the guest's {q['pd_len']} PD bytes "
              f"({bytes.fromhex(q['pd_hex'])!r})")
        ird, ord_ = (w >> 16) & 0x3FFF, w & 0x3FFF
        check((ird, ord_) == (ctx.a_ird, ctx.a_ord),
              f"request {q['n']}: IRD/ORD word 0x{w:08x} parsed: IRD {ird}, ORD {ord_}")
        check(j["status"] == "ok" and j["n"] == q["n"], f"reject {j['n']}: posted ok")
    check(b.summary["hw"].get("REJECT_HOST") == len(results),
          f"the hardware counted {len(results)} host rejects")
    pds = [j["pd_hex"] for j in rejs]
    check(len(set(pds)) == len(pds), "every reject carries its own private data")
    return rejs


def sc_reject_siw(ctx):
    n, ctx.a_ird, ctx.a_ord = 5, 4, 2
    b, lines, summary = ctx.run(
        ["--fin-policy", "siw", "--pd", "interop reject #%n from the host"],
        ["bt.n=%d" % n, "bt.pd=guest-pd-%n", "bt.ird=4", "bt.ord=2"], stop_after=n)
    res = client_results(lines)
    expect_client(res, n, "RDMA_CM_EVENT_REJECTED", -ECONNRESET)
    rejs = host_rejects(ctx, b, res, "siw")
    for r, j in zip(res, rejs):
        check(r["pd_hex"] == j["pd_hex"],
              f"attempt {r['attempt']}: the guest got exactly the host's {j['pd_len']} bytes "
              f"({bytes.fromhex(r['pd_hex'])!r})")
    check(summary["terminal_closed"] == n and summary["terminal_reset"] == 0
          and summary["cm_conns"] == 0, f"all {n} connections closed by FIN both ways")
    check_capture(ctx.pcap, summary, [bytes.fromhex(r["sent_hex"]) for r in res])
    _, _, conns = run_pcap_check(ctx.a.pcap_check, ctx.pcap)
    check(len(conns) == n and all("[rejected, FIN both ways]" in c and " REJ(" in c
                                  and "+FIN" not in c for c in conns),
          f"pcap: {n} connections, reject without FIN, then FIN both ways")


def sc_fin_irdma(ctx):
    n, ctx.a_ird, ctx.a_ord = 3, 1, 1
    b, lines, summary = ctx.run(["--fin-policy", "irdma"], ["bt.n=%d" % n, "bt.pd=irdma-%n"],
                                stop_after=n)
    res = client_results(lines)
    expect_client(res, n, "RDMA_CM_EVENT_REJECTED", -ECONNRESET)
    host_rejects(ctx, b, res, "irdma")
    # Documented siw behaviour: with the FIN in the reply segment, tcp_fin() moves the socket to
    # CLOSE_WAIT before siw's data_ready runs, so siw drops the reply and reports the reset
    # without private data, then resets the connection (unread data).
    for r in res:
        check(r["pd_len"] == 0, f"attempt {r['attempt']}: siw lost the private data (len 0)")
    check(summary["terminal_reset"] == n and summary["cm_conns"] == 0,
          f"all {n} connections ended by the guest's RST")
    check_capture(ctx.pcap, summary, [bytes.fromhex(r["sent_hex"]) for r in res])
    _, _, conns = run_pcap_check(ctx.a.pcap_check, ctx.pcap)
    check(len(conns) == n and all("+FIN" in c and "[rejected, RST from the peer]" in c
                                  for c in conns),
          f"pcap: {n} connections, FIN in the reject, RST from the guest")


def sc_fin_abort(ctx):
    n, ctx.a_ird, ctx.a_ord = 3, 1, 1
    b, lines, summary = ctx.run(["--fin-policy", "abort"], ["bt.n=%d" % n, "bt.pd=abort-%n"],
                                stop_after=n)
    res = client_results(lines)
    expect_client(res, n, "RDMA_CM_EVENT_REJECTED", -ECONNRESET)
    rejs = host_rejects(ctx, b, res, "abort")
    for r, j in zip(res, rejs):
        check(r["pd_hex"] == j["pd_hex"],
              f"attempt {r['attempt']}: the RST behind the reject keeps the private data "
              f"({j['pd_len']} bytes, exact)")
    check(summary["cm_conns"] == 0, "no connection left")
    check_capture(ctx.pcap, summary, [bytes.fromhex(r["sent_hex"]) for r in res])
    _, _, conns = run_pcap_check(ctx.a.pcap_check, ctx.pcap)
    check(len(conns) == n and all("[rejected, RST from the listener]" in c and "+FIN" not in c
                                  for c in conns),
          f"pcap: {n} connections, reject then RST from Bouncer")


def sc_auto_reject(ctx):
    n = 2
    tmpl = "interop: refused by listener policy"
    b, lines, summary = ctx.run(["--auto-reject", "all", "--template-pd", tmpl],
                                ["bt.n=%d" % n, "bt.pd=auto-%n"])
    res = client_results(lines)
    expect_client(res, n, "RDMA_CM_EVENT_REJECTED", -ECONNRESET)
    check(not b.of("connect_request") and summary["requests"] == 0,
          "the host got no CONNECT_REQUEST (the listener refused by itself)")
    for r in res:
        check(bytes.fromhex(r["pd_hex"]) == tmpl.encode(),
              f"attempt {r['attempt']}: the guest got the template private data ({tmpl!r})")
    hw = summary["hw"]
    check(hw.get("REJECT_AUTO") == n and "REJECT_HOST" not in hw,
          f"the hardware counted {n} auto-rejects and no host reject")
    check(summary["cm_conns"] == 0, "no connection left")
    check_capture(ctx.pcap, summary, [bytes.fromhex(r["sent_hex"]) for r in res])
    _, _, conns = run_pcap_check(ctx.a.pcap_check, ctx.pcap)
    check(len(conns) == n and all("[rejected, FIN both ways]" in c for c in conns),
          f"pcap: {n} connections, template reject, FIN both ways")


def sc_no_listener(ctx):
    n = 2
    b, lines, summary = ctx.run(["--no-listener"], ["bt.n=%d" % n, "bt.pd=nobody-%n"])
    res = client_results(lines)
    # siw connects its TCP socket inside rdma_connect(); the RST to the SYN makes that call
    # fail synchronously with ECONNREFUSED. No CM event is reported for the id.
    expect_client(res, n, "ERROR", -ECONNREFUSED)
    for r in res:
        check(r["status_name"] == "ECONNREFUSED", f"attempt {r['attempt']}: errno ECONNREFUSED")
    check(not b.of("connect_request"), "the host got no event")
    hw = summary["hw"]
    check(hw.get("SYN_NO_LISTENER") == n and hw.get("RST_TX") == n,
          f"the hardware answered {n} SYNs without a listener with {n} RSTs")
    check_capture(ctx.pcap, summary, [])
    # no reject in this capture: pcap_check fails exactly its "holds MPA rejects" check
    rc, lines_pc, conns = run_pcap_check(ctx.a.pcap_check, ctx.pcap, expect_pass=False)
    failed = [x for x in lines_pc if x.startswith("check:") and not x.rstrip().endswith("ok")]
    check(rc == 1 and len(failed) == 1 and "MPA rejects (0 frames)" in failed[0],
          "pcap_check --tshark: every frame valid, tshark clean; only 'holds MPA rejects' fails")
    check(len(conns) == n and all("SYN > RST <" in c and "[no reject, RST from the listener]" in c
                                  for c in conns), f"pcap: {n} connections, SYN answered by RST")


def sc_rping(ctx):
    ctx.a_ird, ctx.a_ord = None, None
    b, lines, summary = ctx.run([], ["bt.mode=rping"], stop_after=1)
    rp = [x for x in lines if x.startswith("BOUNCER_RPING ")]
    check(any("cma event RDMA_CM_EVENT_REJECTED, error -104" in x for x in rp),
          "rping: 'cma event RDMA_CM_EVENT_REJECTED, error -104'")
    reqs = b.of("connect_request")
    check(len(reqs) == 1 and reqs[0]["rev"] == 2 and reqs[0]["pd_len"] == 0
          and reqs[0]["ird_ord"] is not None,
          "the host saw one rev 2 CONNECT_REQUEST with only the IRD/ORD word (no ULP data)")
    check(len(b.of("reject")) == 1 and b.of("reject")[0]["status"] == "ok", "the host rejected it")
    check(summary["cm_conns"] == 0, "no connection left")
    check_capture(ctx.pcap, summary, [b""])
    run_pcap_check(ctx.a.pcap_check, ctx.pcap)


SCENARIOS = {
    "reject_siw": sc_reject_siw,
    "fin_irdma": sc_fin_irdma,
    "fin_abort": sc_fin_abort,
    "auto_reject": sc_auto_reject,
    "no_listener": sc_no_listener,
    "rping": sc_rping,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--bouncer", required=True)
    ap.add_argument("--pcap-check", required=True)
    ap.add_argument("--guest", required=True, help="build_guest.sh output folder")
    ap.add_argument("--run-guest", required=True, help="scripts/interop/run_guest.sh")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()

    skipped = os.path.join(a.guest, "SKIPPED")
    if os.path.exists(skipped):
        print(f"SKIP: the guest could not be built here: {open(skipped).read().strip()}")
        return SKIP
    for f in ("vmlinux", "initramfs.cpio.gz"):
        if not os.path.exists(os.path.join(a.guest, f)):
            print(f"SKIP: no guest in {a.guest} (interop.guest_build did not produce {f})")
            return SKIP
    try:
        subprocess.run(["qemu-system-x86_64", "-version"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"SKIP: QEMU cannot run here: {e}")
        return SKIP

    print(f"== interop scenario {a.scenario}")
    t0 = time.monotonic()
    try:
        SCENARIOS[a.scenario](Ctx(a, a.scenario))
    except Fail as e:
        print(f"FAIL: {e}")
        return 1
    print(f"PASS: {a.scenario} in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
