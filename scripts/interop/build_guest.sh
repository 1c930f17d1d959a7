#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Builds the interop guest: a Debian 6.1 kernel with an out-of-tree soft-iWARP module (siw.ko),
# booted by QEMU (scripts/interop/run_guest.sh) with an initramfs that holds busybox-static,
# iproute2 (ip, rdma), rdma-core user space with the siw provider, rping and our librdmacm
# client and server (tb/interop/client/, tb/interop/server/). Everything comes from Debian's archive:
#   - host packages via apt-get install (only those missing; the kernel headers of the current
#     ABI are installed as a package, the kernel itself never is);
#   - the kernel image and linux-source-6.1 via apt-get download + dpkg-deb (unpacked only);
#   - the ABI is resolved from the linux-image-amd64 / linux-headers-amd64 metapackages.
# The result is cached in the output folder, keyed by every package version and by the
# sources that go into it: a second run with nothing changed only checks and prints.
#
#   build_guest.sh [--out DIR] [--force]      (default DIR: build/interop/guest)
# Output: DIR/vmlinux, DIR/initramfs.cpio.gz, DIR/kernel/siw.ko, DIR/bouncer_rdma_client,
# DIR/bouncer_rdma_server, DIR/manifest.
# Exit status: 0 built or up to date; 77 cannot be built here (message says why); 1 failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$root/build/interop/guest
force=0
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --force) force=1; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build_guest: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/SKIPPED"
t_start=$(date +%s.%N)
log() { echo "build_guest: $*"; }
skip() { # the tests (tb/interop) print this reason when they skip
  echo "build_guest: SKIP: $*" >&2
  echo "$*" >"$out/SKIPPED"
  exit 77
}
first_file() { # the first argument that exists (unmatched globs stay literal), or nothing
  local f
  for f in "$@"; do
    [ -e "$f" ] && { echo "$f"; return 0; }
  done
  return 0
}
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t_start" "$(date +%s.%N)"; }

[ "$(uname -m)" = x86_64 ] || skip "the guest is built for x86_64 hosts only (this is $(uname -m))"
{ command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; } ||
  skip "needs a Debian host (apt-get, dpkg-query)"

# ---- host packages
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
apt_updated=0
apt_update() {
  if [ $apt_updated = 0 ]; then
    log "apt-get update"
    apt-get update -qq || skip "apt-get update failed (no access to Debian's archive?)"
    apt_updated=1
  fi
}
ensure() {
  local missing=() p
  for p in "$@"; do installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || skip "needs these Debian packages (run as root to install): ${missing[*]}"
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    apt_update >&2
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      skip "apt-get install ${missing[*]} failed"
  fi
}
ensure qemu-system-x86 busybox-static iproute2 libibverbs-dev librdmacm-dev ibverbs-providers \
  rdmacm-utils gcc make cpio xz-utils kmod python3

# ---- versions: the kernel ABI from the metapackages, then everything that goes into the guest
candidate() { apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Version: //p' | head -1; }
dep_of() {
  apt-cache show --no-all-versions "$1" 2>/dev/null | sed -n 's/^Depends: //p' | head -1 |
    tr ',' '\n' | grep -o "$2" | head -1 || true
}
img_pkg=$(dep_of linux-image-amd64 'linux-image-6\.1\.[0-9]*-[0-9]*-amd64')
if [ -z "$img_pkg" ]; then
  apt_update
  img_pkg=$(dep_of linux-image-amd64 'linux-image-6\.1\.[0-9]*-[0-9]*-amd64')
fi
[ -n "$img_pkg" ] || skip "linux-image-amd64 does not name a 6.1 kernel package"
abi=${img_pkg#linux-image-}                 # e.g. 6.1.0-57-amd64
hdr_pkg=linux-headers-$abi
[ "$(dep_of linux-headers-amd64 'linux-headers-6\.1\.[0-9]*-[0-9]*-amd64')" = "$hdr_pkg" ] ||
  skip "linux-headers-amd64 and linux-image-amd64 disagree on the ABI ($abi)"
src_pkg=linux-source-6.1
img_ver=$(candidate "$img_pkg")
src_ver=$(candidate "$src_pkg")
{ [ -n "$img_ver" ] && [ -n "$src_ver" ]; } || skip "$img_pkg or $src_pkg has no candidate version"
[ "$img_ver" = "$src_ver" ] ||
  skip "$img_pkg ($img_ver) and $src_pkg ($src_ver) are different kernel versions"
ensure "$hdr_pkg"
[ -d "/usr/src/$hdr_pkg" ] || skip "/usr/src/$hdr_pkg missing after installing $hdr_pkg"

# Two cache levels: the kernel part (vmlinux, siw.ko, modules) depends only on the kernel
# packages and on this recipe; the initramfs also on the user space and our sources.
kernel_recipe=1 # bump when the kernel steps below change
kernel_mods="virtio_pci virtio_net crc32c_generic libcrc32c ib_core iw_cm ib_cm rdma_cm ib_uverbs rdma_ucm"
kernel_key_text=$(
  echo "recipe $kernel_recipe"
  echo "image $img_pkg $img_ver"
  echo "source $src_pkg $src_ver"
  echo "headers $hdr_pkg $(dpkg-query -W -f='${Version}' "$hdr_pkg")"
  echo "gcc $(dpkg-query -W -f='${Version}' gcc-12 2>/dev/null || echo none)"
  echo "modules $kernel_mods"
)
kernel_key=$(printf '%s\n' "$kernel_key_text" | sha256sum | cut -c1-16)
# the user space packages whose files are copied into the initramfs
user_pkgs=(busybox-static iproute2 libibverbs1 librdmacm1 ibverbs-providers rdmacm-utils libc6
  libgcc-s1 libnl-3-200 libnl-route-3-200 libelf1 libmnl0 libbpf1 libcap2 libbsd0 libmd0 zlib1g)
# our files that go into the initramfs (or make it)
sources=("$here/build_guest.sh" "$here/guest_init.sh" "$root/tb/interop/client/bouncer_rdma_client.c"
  "$root/tb/interop/server/bouncer_rdma_server.c")
key_text=$(
  echo "kernel $kernel_key"
  for p in "${user_pkgs[@]}"; do
    echo "pkg $p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo none)"
  done
  for f in "${sources[@]}"; do
    echo "file ${f#"$root"/} $(sha256sum <"$f" | cut -c1-16)"
  done
)
key=$(printf '%s\n' "$key_text" | sha256sum | cut -c1-16)
if [ $force = 0 ] && [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] &&
  [ -s "$out/vmlinux" ] && [ -s "$out/initramfs.cpio.gz" ]; then
  log "up to date (key $key, kernel $abi $img_ver) in $out ($(elapsed) s)"
  exit 0
fi
rm -f "$out/key"
kdir=$out/kernel
work=$out/work
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

if [ $force = 0 ] && [ -f "$kdir/key" ] && [ "$(cat "$kdir/key")" = "$kernel_key" ]; then
  log "kernel part up to date (key $kernel_key, $abi $img_ver)"
else
  log "building kernel part for $abi ($img_ver), key $kernel_key"
  rm -rf "$kdir"
  mkdir -p "$kdir/modules"
  # ---- downloads (kept in DIR/dl, named by version)
  dl=$out/dl
  mkdir -p "$dl"
  fetch() { # package version
    local f
    f=$(first_file "$dl/$1_${2//:/%3a}_"*.deb)
    if [ -z "$f" ]; then
      log "apt-get download $1=$2" >&2
      (cd "$dl" && apt-get download -qq "$1=$2" 2>&1 | grep -v 'unsandboxed' >&2) || true
      f=$(first_file "$dl/$1_${2//:/%3a}_"*.deb)
      if [ -z "$f" ]; then
        apt_update >&2
        (cd "$dl" && apt-get download -qq "$1=$2" 2>&1 | grep -v 'unsandboxed' >&2) || true
        f=$(first_file "$dl/$1_${2//:/%3a}_"*.deb)
      fi
      [ -n "$f" ] || skip "apt-get download $1=$2 failed"
    fi
    echo "$f"
  }
  img_deb=$(fetch "$img_pkg" "$img_ver")
  src_deb=$(fetch "$src_pkg" "$src_ver")
  for f in "$dl"/*.deb; do # older versions of our downloads are dropped
    [ "$f" = "$img_deb" ] || [ "$f" = "$src_deb" ] || { log "removing stale $(basename "$f")"; rm -f "$f"; }
  done

  # ---- kernel image: unpack, then the uncompressed vmlinux (QEMU boots its PVH entry directly)
  log "unpacking $(basename "$img_deb")"
  dpkg-deb -x "$img_deb" "$work/img"
  moddir=$work/img/lib/modules/$abi
  { [ -f "$work/img/boot/vmlinuz-$abi" ] && [ -f "$moddir/modules.builtin" ]; } ||
    skip "$img_pkg has no boot/vmlinuz-$abi or modules.builtin"
  grep -q '^CONFIG_PVH=y' "$work/img/boot/config-$abi" ||
    skip "kernel $abi has no CONFIG_PVH: QEMU cannot boot its vmlinux directly"
  if grep -q '^CONFIG_RDMA_SIW=' "$work/img/boot/config-$abi"; then
    log "note: $abi ships siw itself; the out-of-tree build is used anyway"
  fi
  depmod -b "$work/img" "$abi" # the package ships no modules.dep (made at install time)
  python3 - "$work/img/boot/vmlinuz-$abi" "$kdir/vmlinux" <<'PYEOF'
import lzma, sys
data = open(sys.argv[1], "rb").read()
off = data.find(b"\xfd7zXZ\x00")
if off < 0:
    sys.exit("vmlinuz: no xz stream found")
d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
elf = d.decompress(data[off:])  # stops at the end of the stream; trailing bytes are ignored
if not d.eof or elf[:4] != b"\x7fELF":
    sys.exit("vmlinuz: the xz stream is not a complete ELF image")
open(sys.argv[2], "wb").write(elf)
PYEOF

  # ---- siw.ko from linux-source-6.1, built against the installed headers
  log "extracting drivers/infiniband/sw/siw from $(basename "$src_deb")"
  mkdir -p "$work/siw"
  dpkg-deb --fsys-tarfile "$src_deb" | tar -xO "./usr/src/linux-source-6.1.tar.xz" | xz -dc |
    tar -x -C "$work/siw" --strip-components=5 --wildcards '*/drivers/infiniband/sw/siw/*'
  [ -f "$work/siw/siw_main.c" ] || skip "linux-source-6.1 has no drivers/infiniband/sw/siw"
  log "building siw.ko (make -C /usr/src/$hdr_pkg M=... CONFIG_RDMA_SIW=m)"
  make -s -C "/usr/src/$hdr_pkg" M="$work/siw" CONFIG_RDMA_SIW=m -j2 modules >"$work/siw.log" 2>&1 ||
    { cat "$work/siw.log" >&2; echo "build_guest: siw.ko failed to build" >&2; exit 1; }
  [ "$(modinfo -F vermagic "$work/siw/siw.ko" | cut -d' ' -f1)" = "$abi" ] ||
    { echo "build_guest: siw.ko vermagic does not match $abi" >&2; exit 1; }
  cp "$work/siw/siw.ko" "$kdir/siw.ko"

  # ---- modules the guest needs, with their dependencies (modules.dep), in load order
  python3 - "$moddir" "$kdir/modules" "$kdir/modules.order" \
    "$kernel_mods $(modinfo -F depends "$kdir/siw.ko" | tr , ' ')" <<'PYEOF'
import os, shutil, sys
moddir, dst, order_file, wanted = sys.argv[1:5]
norm = lambda n: n.replace("-", "_")
base = lambda p: norm(os.path.basename(p).split(".ko")[0])
deps, path_of = {}, {}
for line in open(os.path.join(moddir, "modules.dep")):
    mod, _, rest = line.partition(":")
    path_of[base(mod)] = mod
    deps[base(mod)] = [base(d) for d in rest.split()]
builtin = {base(l.strip()) for l in open(os.path.join(moddir, "modules.builtin")) if l.strip()}
order, seen = [], set()
def visit(n):
    if n in seen or n in builtin:
        return
    if n not in path_of:
        sys.exit(f"module {n} is neither built in nor in modules.dep")
    seen.add(n)
    for d in deps[n]:
        visit(d)
    order.append(n)
for n in wanted.split():
    visit(norm(n))
with open(order_file, "w") as f:
    for n in order:
        src = os.path.join(moddir, path_of[n])
        if not src.endswith(".ko"):
            sys.exit(f"{src}: compressed modules are not handled (Debian 6.1 ships plain .ko)")
        shutil.copy(src, os.path.join(dst, os.path.basename(src)))
        f.write(os.path.basename(src) + "\n")
PYEOF
  cp "$kdir/siw.ko" "$kdir/modules/siw.ko"
  echo siw.ko >>"$kdir/modules.order"
  rm -rf "$work/img" "$work/siw"
  printf '%s\n' "$kernel_key_text" >"$kdir/versions"
  echo "$kernel_key" >"$kdir/key"
fi
log "modules: $(sed 's/\.ko$//' "$kdir/modules.order" | tr '\n' ' ')"

# ---- our client and server
for prog in client server; do
  log "building bouncer_rdma_$prog"
  gcc -std=gnu11 -O2 -Wall -Wextra -Werror -o "$out/bouncer_rdma_$prog" \
    "$root/tb/interop/$prog/bouncer_rdma_$prog.c" -lrdmacm -libverbs
done

# ---- initramfs
log "packing initramfs"
rfs=$work/rootfs
mkdir -p "$rfs"/{bin,sbin,usr/bin,etc/libibverbs.d,lib/modules,proc,sys,dev,tmp,root}
cp /bin/busybox "$rfs/bin/busybox"
ln -s busybox "$rfs/bin/sh"
cp "$here/guest_init.sh" "$rfs/init"
chmod 755 "$rfs/init"
ip_bin=$(command -v /sbin/ip /bin/ip | head -1)
rdma_bin=$(command -v /sbin/rdma /bin/rdma /usr/bin/rdma | head -1)
{ [ -n "$ip_bin" ] && [ -n "$rdma_bin" ]; } || skip "iproute2 has no ip or rdma binary"
cp -L "$ip_bin" "$rfs/sbin/ip"
cp -L "$rdma_bin" "$rfs/sbin/rdma"
cp /usr/bin/rping "$rfs/usr/bin/rping"
cp "$out/bouncer_rdma_client" "$rfs/usr/bin/bouncer_rdma_client"
cp "$out/bouncer_rdma_server" "$rfs/usr/bin/bouncer_rdma_server"
provider=$(first_file /usr/lib/x86_64-linux-gnu/libibverbs/libsiw-rdmav*.so)
{ [ -n "$provider" ] && [ -f /etc/libibverbs.d/siw.driver ]; } || skip "ibverbs-providers has no siw provider"
mkdir -p "$rfs/usr/lib/x86_64-linux-gnu/libibverbs"
cp "$provider" "$rfs/usr/lib/x86_64-linux-gnu/libibverbs/"
cp /etc/libibverbs.d/siw.driver "$rfs/etc/libibverbs.d/"
# shared libraries of every dynamic binary, and libgcc_s (rping's pthread_exit loads it)
copy_lib() {
  local dst=$rfs$1
  [ -e "$dst" ] && return 0
  mkdir -p "$(dirname "$dst")"
  cp -L "$1" "$dst"
}
libgcc=$(first_file /lib/x86_64-linux-gnu/libgcc_s.so.1 /usr/lib/x86_64-linux-gnu/libgcc_s.so.1)
[ -n "$libgcc" ] || skip "libgcc_s.so.1 not found"
copy_lib "$libgcc"
for bin in "$rfs/sbin/ip" "$rfs/sbin/rdma" "$rfs/usr/bin/rping" "$rfs/usr/bin/bouncer_rdma_client" \
  "$rfs/usr/bin/bouncer_rdma_server" "$rfs/usr/lib/x86_64-linux-gnu/libibverbs/$(basename "$provider")"; do
  while read -r lib; do
    copy_lib "$lib"
  done < <(ldd "$bin" | grep -o '/[^ ]*' | sort -u)
done
cp "$kdir"/modules/*.ko "$rfs/lib/modules/"
cp "$kdir/modules.order" "$rfs/etc/bouncer-modules"
(cd "$rfs" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
  gzip -6 >"$out/initramfs.cpio.gz.new"
cp "$kdir/vmlinux" "$out/vmlinux.new"
mv "$out/vmlinux.new" "$out/vmlinux"
mv "$out/initramfs.cpio.gz.new" "$out/initramfs.cpio.gz"
{
  echo "key $key"
  printf '%s\n' "$key_text"
  cat "$kdir/versions"
  echo "vmlinux $(stat -c %s "$out/vmlinux") bytes"
  echo "initramfs $(stat -c %s "$out/initramfs.cpio.gz") bytes, $(find "$rfs" | wc -l) entries"
} >"$out/manifest"
echo "$key" >"$out/key"
log "done in $(elapsed) s: vmlinux $(($(stat -c %s "$out/vmlinux") / 1048576)) MiB," \
  "initramfs $(($(stat -c %s "$out/initramfs.cpio.gz") / 1024)) KiB, manifest $out/manifest"
