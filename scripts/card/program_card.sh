#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Prepare an Alveo card for Bouncer and load the xclbin, with AMD's XRT tools (xbutil 2.13+).
# Debian's xbutil is a wrapper without its binary: this script detects it and says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/card/common.sh
. "$here/common.sh"

usage() {
  cat <<EOF
Usage: $CARD_PROG --device BDF --xclbin FILE [options]

Runs, in this order (each command is printed before it runs):
  1. xbutil examine  --device BDF                 the card, its shell and driver are up
  2. xbutil configure --host-mem --device BDF --size SIZE ENABLE   (as root)
                     reserves host memory for the kernel's HOST[0] port; before any xclbin load
  3. xbutil validate --device BDF                 platform self-tests. They load the platform's
                     own test xclbins, which is why they run before step 4
  4. xbutil program  --device BDF --user FILE     loads the Bouncer xclbin
  5. xbutil examine  --device BDF --report dynamic-regions   shows the bouncer_1 compute unit

Options:
  --device BDF        the card's user function (xbutil examine lists it, e.g. 0000:3b:00.1)
  --xclbin FILE       the xclbin from build_xclbin.sh
  --host-mem-size S   host memory to enable (default 1G; more than 1G needs 1 GiB hugepages)
  --no-host-mem       skip step 2 (host memory already enabled)
  --skip-validate     skip step 3
  --dry-run           print the commands and exit 0; checks nothing, runs nothing
  -h, --help          this text

Next: bouncer card selftest --device BDF --xclbin FILE
Exit codes: 0 done, 1 bad arguments or a failed step, 2 a missing tool, device or file.
EOF
}

device="" xclbin="" hm_size=1G hostmem=1 validate=1
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=${2:-}; shift 2 ;;
    --xclbin) xclbin=${2:-}; shift 2 ;;
    --host-mem-size) hm_size=${2:-}; shift 2 ;;
    --no-host-mem) hostmem=0; shift ;;
    --skip-validate) validate=0; shift ;;
    --dry-run) CARD_DRY_RUN=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) card_die 1 "unknown argument '$1' (see --help)" ;;
  esac
done
[ -n "$device" ] || card_die 1 "--device BDF is required (see --help)"
[ -n "$xclbin" ] || card_die 1 "--xclbin FILE is required (see --help)"
[[ $hm_size =~ ^[1-9][0-9]*[MG]$ ]] || card_die 1 "--host-mem-size must look like 256M or 1G, not '$hm_size'"
xclbin=$(card_abspath "$xclbin")
bdf=$(card_bdf "$device")
if [[ $bdf == *.0 ]]; then
  card_note "warning: $bdf is function 0, usually the management function; xbutil wants the user function (often .1)"
fi

xrt_hint="install AMD's XRT 2.13.466 or newer (xrt_*.deb and xrt-dkms) and source /opt/xilinx/xrt/setup.sh"
if [ "$CARD_DRY_RUN" != 1 ]; then
  card_need_tool xbutil "$xrt_hint" --version -- '[Vv]ersion'
  card_need_file "$xclbin" "xclbin"
  card_need_device "$bdf" "is the card installed and its XRT driver (xocl) loaded?"
fi

card_run xbutil examine --device "$bdf"
if [ "$hostmem" = 1 ]; then
  card_sudo xbutil configure --host-mem --device "$bdf" --size "$hm_size" ENABLE
fi
if [ "$validate" = 1 ]; then
  card_run xbutil validate --device "$bdf"
fi
card_run xbutil program --device "$bdf" --user "$xclbin"
card_run xbutil examine --device "$bdf" --report dynamic-regions
card_note "next: bouncer card selftest --device $bdf --xclbin $xclbin"
