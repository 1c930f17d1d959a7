#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# /init of the interop guest (busybox-static sh), packed by build_guest.sh.
# Kernel command line parameters (all optional):
#   bt.mode=client|rping|server        what to run (default client)
#   bt.srv=10.0.0.2  bt.port=20049     the peer on eth0 (client: the Bouncer bridge)
#   bt.ip=10.0.0.1/24                  eth0's address
#   bt.peermac=02:00:00:00:00:02       the peer's MAC on eth0 (a permanent neighbour entry)
#   bt.arp=1                           no neighbour entry on eth0: the kernel resolves bt.srv
#                                      by ARP (bt.peermac is then unused)
#   bt.n=1                             client attempts; server: requests before it exits
#   bt.pd=TEXT | bt.pdhex=HEX          client private data (%n = attempt number)
#   bt.wait=15000 bt.drain=200 bt.gap=0 bt.resolve=2000   client timeouts (ms)
#   bt.ird=1 bt.ord=1                  client responder_resources / initiator_depth
#   bt.dbg=1                           siw dynamic debug to the console
# The Linux reference (tb/interop scenario linux_reference), client side: a second NIC, eth1,
# leads to the server guest; the client runs against it first, then against bt.srv:
#   bt.ref=10.0.1.2  bt.ip1=10.0.1.1/24  bt.refmac=52:54:00:12:34:58
#   bt.probe=PORT                      then one more connect to bt.ref:PORT (the probe port)
# Server side (bt.mode=server; eth0 only; defaults bt.ip=10.0.1.2/24, bt.srv=10.0.1.1,
# bt.peermac=52:54:00:12:34:57): bouncer_rdma_server listens on bt.port and rejects every
# request with bt.rpd=TEXT (%n = request number); bt.probe=PORT with bt.probepd=TEXT adds a
# second listener; it exits after bt.n requests (bt.wait deadline, then bt.linger ms).
# The guest sends nothing but the test's frames: IPv6 is off before the links come up, each
# peer's MAC is a permanent neighbour entry (no ARP; with bt.arp=1 the kernel's ARP for bt.srv
# instead), and nothing else runs.
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

mode=client srv='' port=20049 n=1 pd='' pdhex='' wait='' drain=200 gap=0 resolve=2000
ird=1 ord=1 dbg=0 ip='' peermac='' ref='' ip1=10.0.1.1/24 refmac=52:54:00:12:34:58 probe=''
rpd='' probepd='' linger=1000 arp=0
read -r cmdline </proc/cmdline
for w in $cmdline; do
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
    bt.ip=*) ip=${w#*=} ;;
    bt.peermac=*) peermac=${w#*=} ;;
    bt.ref=*) ref=${w#*=} ;;
    bt.ip1=*) ip1=${w#*=} ;;
    bt.refmac=*) refmac=${w#*=} ;;
    bt.probe=*) probe=${w#*=} ;;
    bt.rpd=*) rpd=${w#*=} ;;
    bt.probepd=*) probepd=${w#*=} ;;
    bt.linger=*) linger=${w#*=} ;;
    bt.arp=*) arp=${w#*=} ;;
  esac
done
if [ "$mode" = server ]; then
  : "${srv:=10.0.1.1}" "${ip:=10.0.1.2/24}" "${peermac:=52:54:00:12:34:57}" "${wait:=60000}"
else
  : "${srv:=10.0.0.2}" "${ip:=10.0.0.1/24}" "${peermac:=02:00:00:00:00:02}" "${wait:=15000}"
fi
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

for f in all default eth0 eth1; do
  echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6 2>/dev/null
done
/sbin/ip link set lo up
# setup_link NETDEV ADDR/PLEN NEIGHBOUR-IP NEIGHBOUR-MAC SIW-NAME [arp]
# (arp: no neighbour entry, the kernel resolves NEIGHBOUR-IP by ARP)
setup_link() {
  /sbin/ip addr add "$2" dev "$1" || finish 91
  /sbin/ip link set "$1" up || finish 91
  if [ "${6:-}" != arp ]; then
    /sbin/ip neigh replace "$3" lladdr "$4" nud permanent dev "$1" || finish 91
  fi
  /sbin/rdma link add "$5" type siw netdev "$1" || { mark rdma-link-failed "$1"; finish 92; }
}
if [ "$arp" = 1 ]; then
  setup_link eth0 "$ip" "$srv" "$peermac" siw0 arp
else
  setup_link eth0 "$ip" "$srv" "$peermac" siw0
fi
if [ -n "$ref" ]; then
  [ -e /sys/class/net/eth1 ] || { mark no-eth1; finish 91; }
  setup_link eth1 "$ip1" "$ref" "$refmac" siw1
fi
macs=''
for d in /sys/class/net/eth*; do macs="$macs ${d##*/}=$(cat "$d/address")"; done
mark net "macs=${macs# } $(/sbin/rdma link show | tr '\n' ' ')"

# client PEER-TAG ADDR PORT N: one run of the client; rc keeps the worst exit status
rc=0
client() {
  tag=$1
  set -- -s "$2" -p "$3" -n "$4" -w "$wait" -D "$drain" -g "$gap" -t "$resolve" -r "$ird" -i "$ord"
  if [ -n "$pdhex" ]; then set -- "$@" -x "$pdhex"; elif [ -n "$pd" ]; then set -- "$@" -d "$pd"; fi
  [ -n "$tag" ] && set -- "$@" -T "$tag"
  mark run "bouncer_rdma_client $*"
  /usr/bin/bouncer_rdma_client "$@"
  r=$?
  [ $r -gt $rc ] && rc=$r
}
case $mode in
  client)
    if [ -n "$ref" ]; then
      client linux "$ref" "$port" "$n"
      [ -n "$probe" ] && client probe "$ref" "$probe" 1
      client bouncer "$srv" "$port" "$n"
    else
      client '' "$srv" "$port" "$n"
    fi
    ;;
  server)
    set -- -p "$port" -n "$n" -w "$wait" -l "$linger"
    [ -n "$rpd" ] && set -- "$@" -d "$rpd"
    [ -n "$probe" ] && set -- "$@" -q "$probe"
    [ -n "$probepd" ] && set -- "$@" -D "$probepd"
    mark run "bouncer_rdma_server $*"
    /usr/bin/bouncer_rdma_server "$@"
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
