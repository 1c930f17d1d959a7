#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Boots the interop guest (build_guest.sh) under QEMU (TCG, no KVM needed). Its NIC is a
# virtio-net backed by `-netdev dgram` on 127.0.0.1: QEMU binds 127.0.0.1:QPORT and sends every
# frame as one UDP datagram to 127.0.0.1:BPORT (where `bouncer sim --mode bridge` listens, or
# another guest's QPORT). Nothing else: -nodefaults, no other device, no address but 127.0.0.1.
#
#   run_guest.sh [--guest DIR] [--qport N] [--bport N] [--mac MAC] [--dump FILE]
#                [--nic1 QPORT1:BPORT1] [--mac1 MAC] [--dump1 FILE]
#                [--log LOG] [--timeout S] [bt.KEY=VALUE...]
# Defaults: DIR build/interop/guest, QPORT 17002, BPORT 17001, MAC 52:54:00:12:34:56,
# LOG DIR/guest.log, S 120. --nic1 adds a second NIC (eth1, MAC1 default 52:54:00:12:34:57)
# the same way. --dump/--dump1 write a pcap of that NIC's frames, both directions (QEMU's
# filter-dump object).
# The bt.* parameters go on the kernel command line; scripts/interop/guest_init.sh lists them
# (bt.mode=client|rping|server, bt.n, bt.pd, bt.port, ...).
# The serial console goes to stdout and to LOG. Exit status: QEMU's (0 after the guest's
# poweroff), 124 when the timeout killed it, 77 when QEMU or the guest is not there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
guest=$root/build/interop/guest
qport=17002 bport=17001 mac=52:54:00:12:34:56 dump='' nic1='' mac1=52:54:00:12:34:57 dump1=''
log='' timeout_s=120
params=()
while [ $# -gt 0 ]; do
  case $1 in
    --guest) guest=$2; shift 2 ;;
    --qport) qport=$2; shift 2 ;;
    --bport) bport=$2; shift 2 ;;
    --mac) mac=$2; shift 2 ;;
    --dump) dump=$2; shift 2 ;;
    --nic1) nic1=$2; shift 2 ;;
    --mac1) mac1=$2; shift 2 ;;
    --dump1) dump1=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
    bt.*=*) params+=("$1"); shift ;;
    *) echo "run_guest: unknown argument $1 (guest parameters are bt.KEY=VALUE)" >&2; exit 2 ;;
  esac
done
log=${log:-$guest/guest.log}
ports=("$qport" "$bport")
if [ -n "$nic1" ]; then
  [[ $nic1 =~ ^[0-9]+:[0-9]+$ ]] || { echo "run_guest: --nic1 wants QPORT:BPORT" >&2; exit 2; }
  ports+=("${nic1%:*}" "${nic1#*:}")
fi
for p in "${ports[@]}"; do
  if ! [[ $p =~ ^[0-9]+$ ]] || [ "$p" -lt 1 ] || [ "$p" -gt 65535 ]; then
    echo "run_guest: bad port $p" >&2
    exit 2
  fi
done
for m in "$mac" "$mac1"; do
  [[ $m =~ ^([0-9a-f]{2}:){5}[0-9a-f]{2}$ ]] || { echo "run_guest: bad MAC $m" >&2; exit 2; }
done
for f in "$dump" "$dump1"; do
  [[ $f != *,* ]] || { echo "run_guest: no commas in dump paths ($f)" >&2; exit 2; }
done
[ -z "$dump1" ] || [ -n "$nic1" ] || { echo "run_guest: --dump1 needs --nic1" >&2; exit 2; }
for p in "${params[@]}"; do
  [[ $p =~ ^bt\.[a-z0-9]+=[^[:space:]\"]*$ ]] ||
    { echo "run_guest: bad parameter '$p' (no spaces or quotes)" >&2; exit 2; }
done
qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run_guest: SKIP: qemu-system-x86_64 not installed" >&2; exit 77; }
if ! [ -s "$guest/vmlinux" ] || ! [ -s "$guest/initramfs.cpio.gz" ]; then
  echo "run_guest: SKIP: no guest in $guest (run scripts/interop/build_guest.sh)" >&2
  exit 77
fi
mkdir -p "$(dirname "$log")"
: >"$log"
accel=tcg
dgram() { # ID QPORT BPORT
  local loc="local.type=inet,local.host=127.0.0.1,local.port=$2"
  echo "dgram,id=$1,$loc,remote.type=inet,remote.host=127.0.0.1,remote.port=$3"
}
nics=(-netdev "$(dgram n0 "$qport" "$bport")" -device "virtio-net-pci,netdev=n0,mac=$mac")
if [ -n "$dump" ]; then
  rm -f "$dump"
  nics+=(-object "filter-dump,id=d0,netdev=n0,file=$dump")
fi
if [ -n "$nic1" ]; then
  nics+=(-netdev "$(dgram n1 "${nic1%:*}" "${nic1#*:}")")
  nics+=(-device "virtio-net-pci,netdev=n1,mac=$mac1")
  if [ -n "$dump1" ]; then
    rm -f "$dump1"
    nics+=(-object "filter-dump,id=d1,netdev=n1,file=$dump1")
  fi
fi
set +e
timeout --kill-after=5 "$timeout_s" "$qemu" -accel $accel -display none -nodefaults -no-reboot \
  -machine pc -m 512M -smp 1 -cpu max \
  -chardev stdio,id=con0,signal=off,logfile="$log" -serial chardev:con0 -monitor none \
  -kernel "$guest/vmlinux" -initrd "$guest/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 loglevel=4 ${params[*]}" \
  "${nics[@]}" </dev/null
rc=$?
set -e
[ $rc -eq 124 ] && echo "run_guest: timeout after $timeout_s s" >&2
exit $rc
