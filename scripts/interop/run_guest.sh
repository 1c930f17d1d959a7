#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Boots the interop guest (build_guest.sh) under QEMU (TCG, no KVM needed). Its only NIC is a
# virtio-net backed by `-netdev dgram` on 127.0.0.1: QEMU binds 127.0.0.1:QPORT and sends every
# frame as one UDP datagram to 127.0.0.1:BPORT (where `bouncer sim --mode bridge` listens).
# Nothing else: -nodefaults, no other device, no address but 127.0.0.1.
#
#   run_guest.sh [--guest DIR] [--qport N] [--bport N] [--log FILE] [--timeout S] [bt.KEY=VALUE...]
# Defaults: DIR build/interop/guest, QPORT 17002, BPORT 17001, FILE DIR/guest.log, S 120.
# The bt.* parameters go on the kernel command line; scripts/interop/guest_init.sh lists them
# (bt.mode=client|rping, bt.n, bt.pd, bt.port, ...).
# The serial console goes to stdout and to FILE. Exit status: QEMU's (0 after the guest's
# poweroff), 124 when the timeout killed it, 77 when QEMU or the guest is not there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
guest=$root/build/interop/guest
qport=17002 bport=17001 log='' timeout_s=120
params=()
while [ $# -gt 0 ]; do
  case $1 in
    --guest) guest=$2; shift 2 ;;
    --qport) qport=$2; shift 2 ;;
    --bport) bport=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    bt.*=*) params+=("$1"); shift ;;
    *) echo "run_guest: unknown argument $1 (guest parameters are bt.KEY=VALUE)" >&2; exit 2 ;;
  esac
done
log=${log:-$guest/guest.log}
for p in "$qport" "$bport"; do
  [[ $p =~ ^[0-9]+$ ]] && [ "$p" -ge 1 ] && [ "$p" -le 65535 ] ||
    { echo "run_guest: bad port $p" >&2; exit 2; }
done
for p in "${params[@]}"; do
  [[ $p =~ ^bt\.[a-z]+=[^[:space:]\"]*$ ]] ||
    { echo "run_guest: bad parameter '$p' (no spaces or quotes)" >&2; exit 2; }
done
qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run_guest: SKIP: qemu-system-x86_64 not installed" >&2; exit 77; }
[ -s "$guest/vmlinux" ] && [ -s "$guest/initramfs.cpio.gz" ] ||
  { echo "run_guest: SKIP: no guest in $guest (run scripts/interop/build_guest.sh)" >&2; exit 77; }
mkdir -p "$(dirname "$log")"
: >"$log"
accel=tcg
net=dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port=$qport
net=$net,remote.type=inet,remote.host=127.0.0.1,remote.port=$bport
set +e
timeout --kill-after=5 "$timeout_s" "$qemu" -accel $accel -display none -nodefaults -no-reboot \
  -machine pc -m 512M -smp 1 -cpu max \
  -chardev stdio,id=con0,signal=off,logfile="$log" -serial chardev:con0 -monitor none \
  -kernel "$guest/vmlinux" -initrd "$guest/initramfs.cpio.gz" \
  -append "console=ttyS0 panic=-1 loglevel=4 ${params[*]}" \
  -netdev "$net" -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56 </dev/null
rc=$?
set -e
[ $rc -eq 124 ] && echo "run_guest: timeout after $timeout_s s" >&2
exit $rc
