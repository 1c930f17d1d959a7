#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Flash an Alveo card's base shell (the image in its configuration flash) with xbmgmt, or an MCS
# file with xbflash.qspi, which needs no XRT driver; or load the shell partition of a two-stage
# (DFX) platform such as the U250's. Run --help for the options.
# The xbmgmt syntax follows XRT's xbmgmt2 SubCmdProgram.cpp (2.13): --base takes an optional
# value (implicit "all"), which must be attached with '=': "--base shell" would leave "shell" as
# a stray argument.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/card/common.sh
. "$here/common.sh"

usage() {
  cat <<EOF
Usage: $CARD_PROG --device BDF (--base [--image NAME] | --mcs FILE [--xbflash] | --shell XSABIN |
                    --revert-to-golden)

  --base               flash the base shell from the installed deployment platform package:
                         xbmgmt examine --device BDF --report platform
                         xbmgmt program --device BDF --base [--image NAME]
  --image NAME         with --base: which installed shell, when several are (xbmgmt examine
                       lists them, e.g. xilinx-u250-gen3x16-base)
  --mcs FILE           flash this MCS image:
                         xbmgmt program --device BDF --base=shell --image FILE
  --xbflash            with --mcs: use xbflash.qspi instead (no XRT driver needed, root):
                         xbflash.qspi --primary FILE --card BDF [--bar N --bar-offset OFF]
  --bar N, --bar-offset OFF
                       with --xbflash: where the QSPI controller is. The defaults (BAR 0 +
                       0x40000 of the management function) fit XRT shells; an OpenNIC image
                       has it at BAR 2 + 0x340000 (unverified)
  --yes                with --xbflash: no confirmation prompt (xbflash.qspi --force)
  --shell XSABIN       load the shell partition (PLP) of a two-stage platform, e.g. the U250's
                       gen3x16_xdma_4_1 (nothing is flashed; lasts until the next power cycle):
                         xbmgmt program --device BDF --shell XSABIN
                       The partition is in the deployment package (xbmgmt examine --device BDF
                       --report platform --format JSON names it)
  --revert-to-golden   back to the factory (golden) image: xbmgmt program --revert-to-golden
  --device BDF         the card's management function (function 0, e.g. 0000:3b:00.0)
  --dry-run            print the commands and exit 0; checks nothing, runs nothing
  -h, --help           this text

After flashing, power-cycle the host (a cold reboot: a warm reboot does not reload the flash).
--shell needs no reboot.
Exit codes: 0 done, 1 bad arguments or a failed step, 2 a missing tool, device or file, or not root.
EOF
}

device="" mode="" image="" mcs="" plp="" xbflash=0 bar="" bar_off="" yes=0
set_mode() {
  [ -z "$mode" ] || card_die 1 "give only one of --base, --mcs, --shell, --revert-to-golden"
  mode=$1
}
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=${2:-}; shift 2 ;;
    --base) set_mode base; shift ;;
    --image) image=${2:-}; shift 2 ;;
    --mcs) set_mode mcs; mcs=${2:-}; shift 2 ;;
    --shell) set_mode shell; plp=${2:-}; shift 2 ;;
    --xbflash) xbflash=1; shift ;;
    --bar) bar=${2:-}; shift 2 ;;
    --bar-offset) bar_off=${2:-}; shift 2 ;;
    --yes) yes=1; shift ;;
    --revert-to-golden) set_mode golden; shift ;;
    --dry-run) CARD_DRY_RUN=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) card_die 1 "unknown argument '$1' (see --help)" ;;
  esac
done
[ -n "$device" ] || card_die 1 "--device BDF is required (see --help)"
[ -n "$mode" ] || card_die 1 "one of --base, --mcs FILE, --shell XSABIN or --revert-to-golden is required (see --help)"
[ "$mode" = mcs ] && [ -z "$mcs" ] && card_die 1 "--mcs needs a file"
[ "$mode" = shell ] && [ -z "$plp" ] && card_die 1 "--shell needs a partition file (.xsabin)"
mcs=$(card_abspath "$mcs")
plp=$(card_abspath "$plp")
[ -n "$image" ] && [ "$mode" != base ] && card_die 1 "--image goes with --base"
if [ "$xbflash" = 1 ] && [ "$mode" != mcs ]; then card_die 1 "--xbflash goes with --mcs FILE"; fi
if [ "$xbflash" = 0 ] && { [ -n "$bar" ] || [ -n "$bar_off" ] || [ "$yes" = 1 ]; }; then
  card_die 1 "--bar, --bar-offset and --yes go with --xbflash"
fi
[ -z "$bar" ] || [[ $bar =~ ^[0-5]$ ]] || card_die 1 "--bar must be a BAR index 0-5, not '$bar'"
[ -z "$bar_off" ] || [[ $bar_off =~ ^(0x[0-9a-fA-F]+|[0-9]+)$ ]] || card_die 1 "--bar-offset must be a number such as 0x40000, not '$bar_off'"
bdf=$(card_bdf "$device")
if [[ $bdf != *.0 ]]; then
  card_note "warning: $bdf is not function 0; flashing goes through the management function (often .0)"
fi

xrt_hint="install AMD's XRT 2.13.466 or newer (xrt_*.deb and xrt-dkms) and source /opt/xilinx/xrt/setup.sh"
if [ "$CARD_DRY_RUN" != 1 ]; then
  if [ "$xbflash" = 1 ]; then
    # Usage text on stdout, exit status 234 (-EINVAL) for --help: only the text proves it runs.
    card_need_tool xbflash.qspi "Debian's libxrt-utils or AMD's XRT provide it" --help -- '--primary'
    [ "$(id -u)" -eq 0 ] || card_die 2 "xbflash.qspi maps the card's BAR through sysfs and must run as root"
  else
    card_need_tool xbmgmt "$xrt_hint" --version -- '[Vv]ersion'
  fi
  [ "$mode" = mcs ] && card_need_file "$mcs" "MCS image"
  [ "$mode" = shell ] && card_need_file "$plp" "shell partition"
  card_need_device "$bdf" "is the card installed (lspci -d 10ee:)?"
fi

case "$mode" in
  base)
    card_sudo xbmgmt examine --device "$bdf" --report platform
    if [ -n "$image" ]; then
      card_sudo xbmgmt program --device "$bdf" --base --image "$image"
    else
      card_sudo xbmgmt program --device "$bdf" --base
    fi
    ;;
  mcs)
    if [ "$xbflash" = 1 ]; then
      cmd=(xbflash.qspi --primary "$mcs" --card "$bdf")
      [ -n "$bar" ] && cmd+=(--bar "$bar")
      [ -n "$bar_off" ] && cmd+=(--bar-offset "$bar_off")
      [ "$yes" = 1 ] && cmd+=(--force)
      card_sudo "${cmd[@]}"
    else
      card_sudo xbmgmt examine --device "$bdf" --report platform
      card_sudo xbmgmt program --device "$bdf" --base=shell --image "$mcs"
    fi
    ;;
  shell)
    card_sudo xbmgmt examine --device "$bdf" --report platform
    card_sudo xbmgmt program --device "$bdf" --shell "$plp"
    card_note "shell partition loaded; no reboot needed. Then: scripts/card/program_card.sh --device <user BDF> ..."
    exit 0
    ;;
  golden)
    card_sudo xbmgmt program --device "$bdf" --revert-to-golden
    ;;
esac
card_note "now power-cycle the host (cold reboot) so the card loads the new image; then: xbmgmt examine --device $bdf"
