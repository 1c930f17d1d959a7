# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The Linux reference diff (interop scenario linux_reference, docs/interop.md).

The same siw initiator sends the same MPA requests to two passive sides that both reject with
the same private data: Linux siw (a second QEMU guest running bouncer_rdma_server) and Bouncer
(`bouncer sim --mode bridge`). This module cuts each capture into TCP connections, reads the
MPA request and reply of each, reduces its closing to a sequence of tokens, and compares the
two sides field by field. Every difference must match one of the expected differences below,
each with its reason; any other difference is a failure.

Close tokens, in capture order, from the MPA reply on, one per segment (pure ACKs are left out
except the initiator's first ACK that covers the whole reply; retransmissions are left out and
listed; "+" joins what one segment carries):
  P:reply   the passive side's MPA reply segment ("P:reply+FIN" if the FIN rides in it)
  P:FIN, P:RST, I:FIN, I:RST       a FIN or RST from the passive side (P) or the initiator (I)
  I:ACK(reply)                     the initiator's first acknowledgement of the whole reply
"""
import struct
import textwrap

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10
REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
MPA_FLAG_ENHANCED, MPA_FLAG_REJECT = 0x10, 0x20
P2P, RTR_WRITE, RTR_READ, IRD_ORD_MASK = 0x8000, 0x8000, 0x4000, 0x3FFF
SIW_MAX_IRD_ORD = 128  # SIW_MAX_IRD_QP / SIW_MAX_ORD_QP (drivers/infiniband/sw/siw/siw.h)


def position_pattern(n):
    """n printable bytes in which every position can be checked: 4-byte blocks "ddd-" where ddd
    is the block's offset ("000-004-008-...-248"), cut at n. A lost, repeated or shifted byte
    changes the digits, so a comparison names the first wrong position."""
    return "".join(f"{i:03d}-" for i in range(0, n + 4, 4))[:n]


def first_difference(got, want):
    """Index of the first byte where got and want differ (len of the shorter if one is a
    prefix of the other), or None when equal."""
    if got == want:
        return None
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return i
    return min(len(got), len(want))


def tcp_segment(frame):
    """(src_ip, dst_ip, sport, dport, flags, seq, ack, payload) of an untagged IPv4/TCP frame."""
    f = frame
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
        return None
    ihl = (f[14] & 15) * 4
    tot = struct.unpack("!H", f[16:18])[0]
    t = 14 + ihl
    doff = (f[t + 12] >> 4) * 4
    sport, dport, seq, ack = struct.unpack("!HHII", f[t:t + 12])
    return f[26:30], f[30:34], sport, dport, f[t + 13], seq, ack, bytes(f[t + doff:14 + tot])


def seq_ge(a, b):
    return ((a - b) & 0xFFFFFFFF) < 0x80000000


def connections(records, listen_port):
    """TCP connections to listen_port in order of their SYN: [{"port": initiator port,
    "segs": [{"side": "I"|"P", "flags", "seq", "ack", "payload", "ts", "frame"}]}]."""
    conns, by_port = [], {}
    for i, (ts, frame) in enumerate(records, 1):
        t = tcp_segment(frame)
        if not t:
            continue
        _, _, sport, dport, flags, seq, ack, payload = t
        if dport == listen_port:
            side, port = "I", sport
        elif sport == listen_port:
            side, port = "P", dport
        else:
            continue
        if side == "I" and flags & SYN and not flags & ACK:
            c = by_port.get(port)
            if c is None or c["segs"][0]["seq"] != seq:  # a new connection (or a port reused)
                c = {"port": port, "segs": []}
                by_port[port] = c
                conns.append(c)
        c = by_port.get(port)
        if c is None:
            continue
        c["segs"].append({"side": side, "flags": flags, "seq": seq, "ack": ack,
                          "payload": payload, "ts": ts, "frame": i})
    return conns


def mpa_frame(payload):
    """The fields of an MPA request or reply at the start of a segment's payload."""
    body = payload[20:]
    flags, rev = payload[16], payload[17]
    enhanced = rev == 2 and flags & MPA_FLAG_ENHANCED and len(body) >= 4
    return {
        "key": payload[:16].decode("latin-1"),
        "flags": flags,
        "rev": rev,
        "pd_length": struct.unpack("!H", payload[18:20])[0],
        "ird_ord": struct.unpack("!I", body[:4])[0] if enhanced else None,
        "pd": body[4:] if enhanced else body,
        "after_header": len(body),
    }


def flag_names(flags):
    names = [n for b, n in ((SYN, "SYN"), (ACK, "ACK"), (PSH, "PSH"), (FIN, "FIN"), (RST, "RST"))
             if flags & b]
    return ",".join(names)


def summarize(conn):
    """Request, reply and close sequence of one connection (None fields when missing)."""
    segs = conn["segs"]
    req = next((s for s in segs if s["side"] == "I" and s["payload"].startswith(REQ_KEY)), None)
    rep_i = next((i for i, s in enumerate(segs)
                  if s["side"] == "P" and s["payload"].startswith(REP_KEY)), None)
    out = {"port": conn["port"], "request": mpa_frame(req["payload"]) if req else None,
           "reply": None, "reply_segment": None, "tokens": [], "retransmissions": []}
    if rep_i is None:
        return out
    rep = segs[rep_i]
    out["reply"] = mpa_frame(rep["payload"])
    out["reply_segment"] = rep
    rep_end = (rep["seq"] + len(rep["payload"])) & 0xFFFFFFFF
    seen, acked = set(), False
    for s in segs[rep_i:]:
        key = (s["side"], s["flags"] & (FIN | RST), s["seq"], len(s["payload"]))
        if (s["payload"] or s["flags"] & (FIN | RST)) and key in seen:
            out["retransmissions"].append(f"{s['side']}:{flag_names(s['flags'])} #{s['frame']}")
            continue
        seen.add(key)
        parts = []
        if s is rep:
            parts.append("reply")
        elif s["payload"]:
            parts.append("data")
        if s["side"] == "I" and not acked and s["flags"] & ACK and seq_ge(s["ack"], rep_end):
            parts.append("ACK(reply)")
            acked = True
        if s["flags"] & FIN:
            parts.append("FIN")
        if s["flags"] & RST:
            parts.append("RST")
        if parts:
            out["tokens"].append(f"{s['side']}:" + "+".join(parts))
    return out


def linux_siw_reject_word(req_word):
    """The IRD/ORD word Linux siw puts in its reply (siw_proc_mpareq): its IRD is the
    initiator's ORD and its ORD the initiator's IRD, each capped at 128; the peer-to-peer bit
    and one RTR bit (Write preferred) only if the request set the peer-to-peer bit."""
    r_ird, r_ord = req_word >> 16, req_word & 0xFFFF
    ird = min(r_ord & IRD_ORD_MASK, SIW_MAX_IRD_ORD)
    ord_ = min(r_ird & IRD_ORD_MASK, SIW_MAX_IRD_ORD)
    if r_ird & P2P:
        ird |= P2P
        ord_ |= RTR_WRITE if r_ord & RTR_WRITE else RTR_READ if r_ord & RTR_READ else RTR_WRITE
    return ird << 16 | ord_


def bouncer_reject_word(req_word):
    """Bouncer's default reply IRD/ORD word (docs/reject-frame.md): IRD 0x3FFF with the
    peer-to-peer bit; ORD 0x3FFF with the request's Read RTR bit if set, else its Write RTR bit
    if set, else the Read RTR bit."""
    r_ord = req_word & 0xFFFF
    rtr = RTR_READ if r_ord & RTR_READ else RTR_WRITE if r_ord & RTR_WRITE else RTR_READ
    return (P2P | IRD_ORD_MASK) << 16 | rtr | IRD_ORD_MASK


def word_text(w):
    if w is None:
        return "none"
    ird, ord_ = w >> 16, w & 0xFFFF
    return (f"0x{w:08x} (IRD {ird & IRD_ORD_MASK}{'+P2P' if ird & P2P else ''}, "
            f"ORD {ord_ & IRD_ORD_MASK}{'+W-RTR' if ord_ & RTR_WRITE else ''}"
            f"{'+R-RTR' if ord_ & RTR_READ else ''})")


def pd_text(b):
    if b is None:
        return "none"
    if all(32 <= c < 127 for c in b):
        return f'{len(b)} B "{b.decode()}"'
    return f"{len(b)} B 0x{b.hex()}"


def initiator_text(r):
    """What the initiator reported for one attempt (its BOUNCER_CLIENT line)."""
    if r is None:
        return "none"
    pd = bytes.fromhex(r["pd_hex"])
    return f"{r['event'].replace('RDMA_CM_EVENT_', '')} {r['status']}, PD {pd_text(pd)}"


# ---- the expected differences, each with its reason (docs/interop.md lists the same)
REASON_WORD = (
    "IRD/ORD word: Linux siw answers with the request's values swapped (its IRD = the "
    "initiator's ORD, its ORD = the initiator's IRD, at most 128) and no P2P/RTR bit unless "
    "the request asked for peer-to-peer mode; Bouncer's default reply word is IRD 0x3FFF with "
    "the P2P bit and ORD 0x3FFF with an RTR bit, which irdma initiators need to accept a "
    "reject (a siw initiator ignores the word of a reject)")
REASON_FIN = (
    "FIN position: Linux siw closes its socket right after sending the reject (siw_reject -> "
    "sock_release), so its FIN leaves without waiting for anything and lands anywhere after "
    "the reply depending on scheduling; Bouncer's siw-safe policy sends its FIN only once the "
    "initiator has ACKed the whole reject. The initiator closes by itself as soon as it has "
    "reported the reject, so its own ACK and FIN are the same on both sides (its ACK may ride "
    "on its FIN: same kernel, a matter of timing)")
REASON_RACE = (
    "initiator reset: with Linux's FIN right behind the reply, the siw initiator can see the "
    "peer's close before it reads the reply; it then reports the reject without private data "
    "and resets the connection because the reply was left unread (the race that Bouncer's "
    "siw-safe FIN policy exists to avoid; docs/interop.md)")


def split_tokens(tokens):
    """The tokens with a FIN that rides in another segment written as a token of its own:
    "P:reply+FIN" -> P:reply P:FIN, "I:ACK(reply)+FIN" -> I:ACK(reply) I:FIN."""
    out = []
    for t in tokens:
        if t in ("P:reply+FIN", "I:ACK(reply)+FIN"):
            out += [t[:-4], t[:2] + "FIN"]
        else:
            out.append(t)
    return out


def classify_close(lin, bnc, linux_initiator_pd_len):
    """'same'; 'fin' when the sequences differ only in where the passive side's FIN falls (or
    whether a FIN rides in the segment before it); 'fin+reset' when, in addition, the initiator
    reset the Linux connection after reporting the reject without private data; None for any
    other difference."""
    if lin == bnc:
        return "same"
    ln, bn = split_tokens(lin), split_tokens(bnc)
    if ln.count("P:FIN") != 1 or bn.count("P:FIN") != 1:
        return None
    lf = [t for t in ln if t != "P:FIN"]
    bf = [t for t in bn if t != "P:FIN"]
    if lf == bf:
        return "fin"
    l_init = {p for t in lf if t.startswith("I:") for p in t[2:].split("+")}
    if (linux_initiator_pd_len == 0 and "RST" in l_init and l_init <= {"ACK(reply)", "RST"}
            and [t for t in lf if t[0] != "I"] == [t for t in bf if t[0] != "I"]
            and [t for t in bf if t.startswith("I:")] == ["I:ACK(reply)", "I:FIN"]):
        return "fin+reset"
    return None


def sides_with(tokens, flag):
    sides = sorted({"initiator" if t[0] == "I" else "passive" for t in split_tokens(tokens)
                    if flag in t.split(":", 1)[1].split("+")})
    return ", ".join(sides) or "nobody"


def compare(lin, bnc, lin_init, bnc_init):
    """Rows (field, linux value, bouncer value, verdict, reason) for one connection; verdict is
    'same', 'expected' or 'DIFFERENT'."""
    rows = []
    lq, bq, lr, br = lin["request"], bnc["request"], lin["reply"], bnc["reply"]

    def add(field, lv, bv, allowed=False, reason=""):
        if lv == bv:
            rows.append((field, lv, bv, "same", ""))
        elif allowed:
            rows.append((field, lv, bv, "expected", reason))
        else:
            rows.append((field, lv, bv, "DIFFERENT", ""))

    for name, key, fmt in (("key", "key", str), ("flags", "flags", lambda v: f"0x{v:02x}"),
                           ("Rev", "rev", str), ("PD_Length", "pd_length", str),
                           ("IRD/ORD word", "ird_ord", word_text), ("private data", "pd", pd_text)):
        add(f"request {name}", fmt(lq[key]) if lq else "none", fmt(bq[key]) if bq else "none")
    req_word = lq["ird_ord"] if lq else None
    word_ok = (req_word is not None and lr is not None and br is not None
               and lr["ird_ord"] == linux_siw_reject_word(req_word)
               and br["ird_ord"] == bouncer_reject_word(req_word))
    for name, key, fmt in (("key", "key", str), ("flags", "flags", lambda v: f"0x{v:02x}"),
                           ("Rev", "rev", str), ("PD_Length", "pd_length", str),
                           ("IRD/ORD word", "ird_ord", word_text), ("private data", "pd", pd_text)):
        add(f"reply {name}", fmt(lr[key]) if lr else "none", fmt(br[key]) if br else "none",
            allowed=key == "ird_ord" and word_ok, reason=REASON_WORD if key == "ird_ord" else "")

    def seg_text(s):
        return flag_names(s["flags"]) if s else "none"
    kind = classify_close(lin["tokens"], bnc["tokens"], len(bytes.fromhex(lin_init["pd_hex"]))
                          if lin_init else -1)
    ls, bs = lin["reply_segment"], bnc["reply_segment"]
    add("reply TCP segment", seg_text(ls), seg_text(bs),
        allowed=kind in ("fin", "fin+reset") and ls is not None and bs is not None
        and ls["flags"] & ~FIN == bs["flags"] & ~FIN, reason=REASON_FIN)
    add("FIN sent by", sides_with(lin["tokens"], "FIN"), sides_with(bnc["tokens"], "FIN"),
        allowed=kind == "fin+reset", reason=REASON_RACE)
    add("RST sent by", sides_with(lin["tokens"], "RST"), sides_with(bnc["tokens"], "RST"),
        allowed=kind == "fin+reset", reason=REASON_RACE)
    add("close sequence", " ".join(lin["tokens"]), " ".join(bnc["tokens"]),
        allowed=kind in ("fin", "fin+reset"),
        reason=REASON_FIN + ("; " + REASON_RACE if kind == "fin+reset" else ""))
    add("initiator reported", initiator_text(lin_init), initiator_text(bnc_init),
        allowed=kind == "fin+reset", reason=REASON_RACE)
    return rows


def side_by_side(rows, title_l="Linux siw (passive)", title_b="Bouncer", width=38):
    """The rows as a text table, long values wrapped, reasons under the table."""
    out = [f"  {'field':<22} {title_l:<{width}} {title_b:<{width}} verdict"]
    reasons = []
    for field, lv, bv, verdict, reason in rows:
        lw = textwrap.wrap(lv, width) or [""]
        bw = textwrap.wrap(bv, width) or [""]
        tag = verdict
        if verdict != "same" and reason:
            if reason not in reasons:
                reasons.append(reason)
            tag += f" [{reasons.index(reason) + 1}]"
        for i in range(max(len(lw), len(bw))):
            out.append(f"  {field if i == 0 else '':<22} {lw[i] if i < len(lw) else '':<{width}} "
                       f"{bw[i] if i < len(bw) else '':<{width}} {tag if i == 0 else ''}".rstrip())
    for i, r in enumerate(reasons, 1):
        out += textwrap.wrap(f"[{i}] {r}", 100, initial_indent="  ", subsequent_indent="      ")
    return "\n".join(out)
