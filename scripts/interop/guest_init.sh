#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# /init of the interop guest (busybox-static sh), packed by build_guest.sh.
# Kernel command line parameters (all optional):
#   bt.mode=client|rping               what to run (default client)
#   bt.srv=10.0.0.2  bt.port=20049     the peer (the Bouncer bridge)
#   bt.n=1                             client attempts
#   bt.pd=TEXT | bt.pdhex=HEX          client private data (%n = attempt number)
#   bt.wait=15000 bt.drain=200 bt.gap=0 bt.resolve=2000   client timeouts (ms)
#   bt.ird=1 bt.ord=1                  client responder_resources / initiator_depth
#   bt.dbg=1                           siw dynamic debug to the console
# The guest sends nothing but the test's frames: IPv6 is off on eth0 before the link comes
# up, the peer's MAC is a permanent neighbour entry (no ARP), and nothing else runs.
# Every line the harness reads starts with BOUNCER_; the last one is BOUNCER_GUEST_DONE.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu

up() { cut -d' ' -f1 /proc/uptime; }
mark() { echo "BOUNCER_GUEST $1 t=$(up)${2:+ $2}"; }
finish() {
  sleep 0.2 # the last connection's closing segments leave before the NIC goes away
  echo "BOUNCER_GUEST_DONE rc=$1 t=$(up)"
  sync
  poweroff -f
  sleep 5
}

mode=client srv=10.0.0.2 port=20049 n=1 pd='' pdhex='' wait=15000 drain=200 gap=0 resolve=2000
ird=1 ord=1 dbg=0
for w in $(cat /proc/cmdline); do
  case $w in
    bt.mode=*) mode=${w#*=} ;;
    bt.srv=*) srv=${w#*=} ;;
    bt.port=*) port=${w#*=} ;;
    bt.n=*) n=${w#*=} ;;
    bt.pd=*) pd=${w#*=} ;;
    bt.pdhex=*) pdhex=${w#*=} ;;
    bt.wait=*) wait=${w#*=} ;;
    bt.drain=*) drain=${w#*=} ;;
    bt.gap=*) gap=${w#*=} ;;
    bt.resolve=*) resolve=${w#*=} ;;
    bt.ird=*) ird=${w#*=} ;;
    bt.ord=*) ord=${w#*=} ;;
    bt.dbg=*) dbg=${w#*=} ;;
  esac
done
mark userspace "kernel=$(uname -r) mode=$mode"

# Modules, in dependency order (build_guest.sh wrote the list).
while read -r ko; do
  insmod "/lib/modules/$ko" || { mark "insmod-failed" "$ko"; finish 90; }
done </etc/bouncer-modules
mark modules
if [ "$dbg" = 1 ] && [ -e /sys/kernel/debug ]; then
  mount -t debugfs debugfs /sys/kernel/debug
  echo 'module siw +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
fi

for f in all default eth0; do
  echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6 2>/dev/null
done
/sbin/ip link set lo up
/sbin/ip addr add 10.0.0.1/24 dev eth0 || finish 91
/sbin/ip link set eth0 up || finish 91
/sbin/ip neigh replace "$srv" lladdr 02:00:00:00:00:02 nud permanent dev eth0 || finish 91
/sbin/rdma link add siw0 type siw netdev eth0 || { mark rdma-link-failed; finish 92; }
mark net "$(/sbin/rdma link show | tr '\n' ' ')"

case $mode in
  client)
    set -- -s "$srv" -p "$port" -n "$n" -w "$wait" -D "$drain" -g "$gap" -t "$resolve" \
      -r "$ird" -i "$ord"
    if [ -n "$pdhex" ]; then set -- "$@" -x "$pdhex"; elif [ -n "$pd" ]; then set -- "$@" -d "$pd"; fi
    mark run "bouncer_rdma_client $*"
    /usr/bin/bouncer_rdma_client "$@"
    rc=$?
    ;;
  rping)
    mark run "rping -c -a $srv -p $port -C 1 -v"
    # every line rping prints is tagged; its exit status is kept (pipefail)
    # shellcheck disable=SC3040 # busybox ash has pipefail
    set -o pipefail
    timeout 30 /usr/bin/rping -c -a "$srv" -p "$port" -C 1 -v 2>&1 | sed 's/^/BOUNCER_RPING /'
    rc=$?
    ;;
  *)
    mark "unknown-mode" "$mode"
    rc=93
    ;;
esac
finish "$rc"
