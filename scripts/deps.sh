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
missing=()
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
n_optional=${#missing[@]}
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all $((${#pkgs[@]} + ${#optional[@]})) packages present"
  exit 0
fi
required=("${missing[@]:$n_optional}")
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ] && [ ${#required[@]} -eq 0 ]; then
  echo "deps: optional ${missing[*]} not installed (not root; scripts/synth.sh uses glibc malloc)" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: run as root (or install these packages yourself): ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
if [ ${#required[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${required[@]}"
else
  apt-get update -qq || true
fi
if [ "$n_optional" -gt 0 ]; then
  apt-get install -y -qq --no-install-recommends "${missing[@]:0:$n_optional}" \
    || echo "deps: optional ${missing[*]:0:$n_optional} not installed (scripts/synth.sh uses glibc malloc)" >&2
fi
