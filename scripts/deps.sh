#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Install the Debian 12 packages Bouncer needs. Idempotent: asks apt only when something
# is missing. Nothing is fetched from anywhere but Debian's archive.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build ccache python3 git
  verilator yosys
  libsystemc-dev libpcap-dev libcli11-dev libfmt-dev libspdlog-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  tshark clang-format
  libxrt-dev uuid-dev
  shellcheck tcl8.6
  z3
  gnuplot-nox
  clang-14 libclang-rt-14-dev
)
# optional: a faster malloc that scripts/synth.sh preloads into Yosys (same netlist, 10-25 %
# less CPU); a failure to install it is reported and otherwise ignored
optional=(libtcmalloc-minimal4)
# missing NAME...: prints the packages of the list that are not installed
missing() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}
mapfile -t required < <(missing "${pkgs[@]}")
mapfile -t extra < <(missing "${optional[@]}")
if [ ${#required[@]} -eq 0 ] && [ ${#extra[@]} -eq 0 ]; then
  echo "deps: all $((${#pkgs[@]} + ${#optional[@]})) packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  if [ ${#required[@]} -gt 0 ]; then
    echo "deps: run as root (or install these packages yourself): ${required[*]} ${extra[*]}" >&2
    exit 1
  fi
  echo "deps: optional ${extra[*]} not installed (not root; scripts/synth.sh uses glibc malloc)" >&2
  exit 0
fi
echo "deps: installing ${required[*]} ${extra[*]}"
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
if [ ${#required[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${required[@]}"
else
  apt-get update -qq || true
fi
if [ ${#extra[@]} -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${extra[@]}" \
    || echo "deps: optional ${extra[*]} not installed (scripts/synth.sh uses glibc malloc)" >&2
fi
