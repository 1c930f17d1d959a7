#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The demo's capture check as a test (ctest demo.*_pcap*): a real `bouncer sim` run writes a
# pcap, and `pcap_check --tshark` must pass on it. Then two negative controls on copies of
# that capture, each of which pcap_check must reject for the right reason:
#   - one byte of the first MPA reject's private data flipped (TCP checksum bad);
#   - peer mode without loss: every frame the listener sent on the first connection after
#     its reject left out (the connection no longer ends cleanly).
# Usage: demo_pcap_test.sh BOUNCER PCAP_CHECK PCAP [bouncer sim arguments...]
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 BOUNCER PCAP_CHECK PCAP [bouncer sim arguments...]" >&2
  exit 2
fi
bouncer=$1 pcap_check=$2 pcap=$3
shift 3
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
rm -f "$pcap" "$pcap".*.pcap

echo "== bouncer sim --pcap $pcap $*"
"$bouncer" sim --pcap "$pcap" "$@"
echo
echo "== pcap_check --tshark $pcap"
"$pcap_check" --tshark "$pcap"

peer_no_loss=1
for a in "$@"; do
  case $a in --loss | --loss=* | --mode=context | context | push | db | both) peer_no_loss=0 ;; esac
done

# Writes the negative-control copies (plain pcap records; no checksum is recomputed).
python3 - "$pcap" "$peer_no_loss" <<'EOF'
import struct, sys

path, peer_no_loss = sys.argv[1], sys.argv[2] == "1"
data = open(path, "rb").read()
head, recs, off = data[:24], [], 24
endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"  # micro- or nanosecond
while off < len(data):
    ts, tu, cl, ln = struct.unpack(endian + "IIII", data[off:off + 16])
    recs.append([data[off:off + 16], bytearray(data[off + 16:off + 16 + cl])])
    off += 16 + cl

def tcp(f):
    l3 = 18 if f[12:14] == b"\x81\x00" else 14
    ihl = (f[l3] & 15) * 4
    t = l3 + ihl
    ip_len = struct.unpack("!H", f[l3 + 2:l3 + 4])[0]
    payload = bytes(f[t + (f[t + 12] >> 4) * 4:l3 + ip_len])
    src = (bytes(f[l3 + 12:l3 + 16]), f[t:t + 2])
    dst = (bytes(f[l3 + 16:l3 + 20]), f[t + 2:t + 4])
    return src, dst, payload

def write(suffix, records):
    with open(path + suffix, "wb") as out:
        out.write(head)
        for h, f in records:
            out.write(h + f)

first = next(i for i, (_, f) in enumerate(recs) if tcp(f)[2].startswith(b"MPA ID Rep Frame"))
listener, peer, _ = tcp(recs[first][1])
flipped = [[h, bytearray(f)] for h, f in recs]
flipped[first][1][-1] ^= 0x01
write(".flipped.pcap", flipped)
if peer_no_loss:
    kept = [r for i, r in enumerate(recs)
            if i <= first or tcp(r[1])[:2] != (listener, peer)]
    write(".unclosed.pcap", kept)
EOF

# A negative control passes when pcap_check exits 1 and names the expected problem.
expect_fail() {
  local file=$1 reason=$2 out
  echo
  echo "== negative control: pcap_check --tshark $file must fail with \"$reason\""
  set +e
  out=$("$pcap_check" --tshark "$file" 2>&1)
  local rc=$?
  set -e
  printf '%s\n' "$out" | grep -E "INVALID|!!|FAILED|^tshark: frame" || true
  if [ $rc -ne 1 ] || ! grep -qF "$reason" <<<"$out"; then
    echo "negative control FAILED: exit $rc" >&2
    exit 1
  fi
  echo "negative control ok (exit 1)"
}
expect_fail "$pcap.flipped.pcap" "TCP checksum bad"
if [ $peer_no_loss = 1 ]; then
  expect_fail "$pcap.unclosed.pcap" "did not end cleanly"
fi
echo
echo "demo_pcap_test: ok"
