#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Build the Bouncer xclbin for an Alveo card: package the RTL as a Vitis kernel (Vivado batch,
# package_kernel.tcl) and link it with v++ against the card's platform and xup's 100G CMAC kernel.
# Needs Vitis/Vivado 2022.1 or 2022.2 (not available on the development machine: only --dry-run
# and --help are tested there). Run with --help for the options.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# shellcheck source=scripts/card/common.sh
. "$here/common.sh"

usage() {
  cat <<EOF
Usage: $CARD_PROG --card u250|u280|u55c [options]

Builds out/card/<card>-<target>-w<width>/bouncer_<card>.xclbin in two steps:
  1. vivado -mode batch -source scripts/card/package_kernel.tcl  -> bouncer_kernel.xo
  2. v++ -l --platform <card platform> --config scripts/card/link_<card>.cfg  -> .xclbin

Options:
  --card u250|u280|u55c   the card (selects the platform, the FPGA part and the link config)
  --target hw|hw_emu      hw (default): bitstream for the card, ~2-4 hours.
                          hw_emu: Vivado-simulation xclbin; the CMAC cannot be emulated, so the
                          kernel's TX stream is linked to its own RX (link_loopback.cfg)
  --width 512|64          stream width DATA_W (default 512, the CMAC's width)
  --async-streams 0|1     0 (default): every kernel interface on ap_clk, as Vitis requires; the
                          xup CMAC kernel crosses to the 322 MHz MAC clock itself. 1: streams on
                          ap_clk_2 through the kernel's async FIFOs (constraints/kernel/ packaged
                          in; unverified in Vitis, see docs/lab.md)
  --kernel-mhz N          kernel clock (platform clock 0), default 250 (the register reset
                          values of the timers assume 250 MHz)
  --platform NAME|XPFM    override the platform (default per card, see below)
  --xup DIR               a checkout of Xilinx/xup_vitis_network_example in which the CMAC kernel
                          was built for this platform (make -C DIR/Ethernet all DEVICE=<platform>
                          INTERFACE=0); gives the three paths below
  --cmac-xo FILE          cmac_0.xo             (default DIR/Ethernet/_x.<platform>/cmac_0.xo)
  --post-sys-link FILE    post_sys_link.tcl     (default DIR/post_sys_link.tcl)
  --cmac-ip-repo DIR      CMAC IP repository    (default DIR/Ethernet/cmac)
  --loopback              link without the CMAC: TX stream looped to RX (card bring-up, hw_emu)
  --jobs N                parallel v++/Vivado jobs (default 4)
  --out DIR               output directory (default out/card/<card>-<target>-w<width>)
  --dry-run               print the commands and exit 0; checks nothing, runs nothing
  -h, --help              this text

Default platforms (Vitis 2022.1, XRT 2.13): u250 xilinx_u250_gen3x16_xdma_4_1_202210_1,
u280 xilinx_u280_gen3x16_xdma_1_202211_1, u55c xilinx_u55c_gen3x16_xdma_3_202210_1.
Exit codes: 0 done, 1 bad arguments or a failed step, 2 a missing tool, platform or input file.
EOF
}

card="" target=hw width=512 async=0 kmhz=250 platform="" xup="" cmac_xo="" post_link="" cmac_repo=""
loopback=0 jobs=4 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --card) card=${2:-}; shift 2 ;;
    --target) target=${2:-}; shift 2 ;;
    --width) width=${2:-}; shift 2 ;;
    --async-streams) async=${2:-}; shift 2 ;;
    --kernel-mhz) kmhz=${2:-}; shift 2 ;;
    --platform) platform=${2:-}; shift 2 ;;
    --xup) xup=${2:-}; shift 2 ;;
    --cmac-xo) cmac_xo=${2:-}; shift 2 ;;
    --post-sys-link) post_link=${2:-}; shift 2 ;;
    --cmac-ip-repo) cmac_repo=${2:-}; shift 2 ;;
    --loopback) loopback=1; shift ;;
    --jobs) jobs=${2:-}; shift 2 ;;
    --out) out=${2:-}; shift 2 ;;
    --dry-run) CARD_DRY_RUN=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) card_die 1 "unknown argument '$1' (see --help)" ;;
  esac
done

case "$card" in
  u250) part=xcu250-figd2104-2L-e; def_platform=xilinx_u250_gen3x16_xdma_4_1_202210_1 ;;
  u280) part=xcu280-fsvh2892-2L-e; def_platform=xilinx_u280_gen3x16_xdma_1_202211_1 ;;
  u55c) part=xcu55c-fsvh2892-2L-e; def_platform=xilinx_u55c_gen3x16_xdma_3_202210_1 ;;
  "") card_die 1 "--card u250|u280|u55c is required (see --help)" ;;
  *) card_die 1 "unknown card '$card': u250, u280 or u55c" ;;
esac
case "$target" in hw | hw_emu) ;; *) card_die 1 "--target must be hw or hw_emu, not '$target'" ;; esac
case "$width" in 512 | 64) ;; *) card_die 1 "--width must be 512 or 64, not '$width'" ;; esac
case "$async" in 0 | 1) ;; *) card_die 1 "--async-streams must be 0 or 1, not '$async'" ;; esac
[[ $kmhz =~ ^[1-9][0-9]*$ ]] || card_die 1 "--kernel-mhz must be a whole number of MHz, not '$kmhz'"
if [ "$async" = 1 ] && [ "$kmhz" -gt 333 ]; then
  card_die 1 "--async-streams 1 needs --kernel-mhz 333 or less (constraints/kernel/bouncer_kernel.xdc bounds the crossings at 3 ns)"
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || card_die 1 "--jobs must be a positive number, not '$jobs'"
platform=${platform:-$def_platform}
xsa=$(basename "$platform" .xpfm)
out=${out:-$root/out/card/$card-$target-w$width}
[ "$target" = hw_emu ] && loopback=1

if [ "$loopback" = 1 ]; then
  link_cfg=$here/link_loopback.cfg
else
  link_cfg=$here/link_$card.cfg
  if [ -n "$xup" ]; then
    cmac_xo=${cmac_xo:-$xup/Ethernet/_x.$xsa/cmac_0.xo}
    post_link=${post_link:-$xup/post_sys_link.tcl}
    cmac_repo=${cmac_repo:-$xup/Ethernet/cmac}
  fi
  if [ -z "$cmac_xo" ] || [ -z "$post_link" ] || [ -z "$cmac_repo" ]; then
    card_die 1 "the 100G link needs xup's CMAC kernel: give --xup DIR (or --cmac-xo, --post-sys-link and --cmac-ip-repo), or --loopback for a kernel-only xclbin"
  fi
fi
xo=$out/bouncer_kernel.xo
xclbin=$out/bouncer_$card.xclbin
[ "$target" = hw_emu ] && xclbin=$out/bouncer_${card}_hw_emu.xclbin

vitis_hint="install Vitis 2022.1 or 2022.2 and source <Vitis>/settings64.sh"
if [ "$CARD_DRY_RUN" != 1 ]; then
  card_need_tool vivado "$vitis_hint" -version -- '^Vivado v20'
  card_need_tool v++ "$vitis_hint" --version -- 'v\+\+|Vitis'
  card_need_tool platforminfo "$vitis_hint" --help
  if ! platforminfo --platform "$platform" >/dev/null 2>&1; then
    card_die 2 "platform $platform is not installed (install the card's development platform package from the Alveo download page, or set PLATFORM_REPO_PATHS)"
  fi
  if [ "$target" = hw_emu ]; then
    card_need_tool emconfigutil "$vitis_hint" --help
    [ -n "${XILINX_XRT:-}" ] || card_die 2 "XILINX_XRT is not set (hw_emu needs AMD's XRT: source /opt/xilinx/xrt/setup.sh)"
  fi
  if [ "$loopback" = 0 ]; then
    card_need_file "$cmac_xo" "xup CMAC kernel (build it: make -C <xup>/Ethernet all DEVICE=$platform INTERFACE=0)"
    card_need_file "$post_link" "xup post_sys_link.tcl"
    [ -d "$cmac_repo" ] || card_die 2 "xup CMAC IP repository not found: $cmac_repo"
  fi
fi

card_note "card $card, part $part, platform $platform, target $target, DATA_W $width, ASYNC_STREAMS $async, kernel clock $kmhz MHz"
if [ "$loopback" = 1 ]; then
  card_note "link: $(basename "$link_cfg") (no CMAC; the kernel's TX stream feeds its own RX)"
else
  card_note "link: $(basename "$link_cfg") with $cmac_xo"
fi
card_run mkdir -p "$out"
card_run vivado -mode batch -nojournal -log "$out/package_kernel.log" \
  -source "$here/package_kernel.tcl" -tclargs \
  --root "$root" --xo "$xo" --part "$part" --width "$width" --async-streams "$async" \
  --build-dir "$out/package"
if [ "$CARD_DRY_RUN" != 1 ] && [ ! -f "$xo" ]; then
  card_die 1 "vivado finished but $xo is missing (see $out/package_kernel.log)"
fi

# Platform clock 0 drives ap_clk. With async streams ap_clk_2 is on platform clock 1, 500 MHz
# by default on these platforms: set it to the CMAC user clock's rate (the kernel XDC's 3 ns
# crossing bound assumes both clocks at or below 333 MHz).
kfreq="0:$kmhz"
[ "$async" = 1 ] && kfreq="0:$kmhz|1:322"
vpp=(v++ -l -t "$target" --platform "$platform" --config "$link_cfg"
  --kernel_frequency "$kfreq" --save-temps --temp_dir "$out/_x" --jobs "$jobs")
if [ "$loopback" = 0 ]; then
  vpp+=(--advanced.param "compiler.userPostSysLinkOverlayTcl=$post_link"
    --user_ip_repo_paths "$cmac_repo")
fi
vpp+=(-o "$xclbin" "$xo")
[ "$loopback" = 0 ] && vpp+=("$cmac_xo")
card_run "${vpp[@]}"
if [ "$target" = hw_emu ]; then
  card_run emconfigutil --platform "$platform" --od "$out"
fi
if [ "$CARD_DRY_RUN" != 1 ] && [ ! -f "$xclbin" ]; then
  card_die 1 "v++ finished but $xclbin is missing (see $out/_x)"
fi
card_note "xclbin: $xclbin"
if [ "$target" = hw ]; then
  card_note "next: scripts/card/program_card.sh --device <user BDF> --xclbin $xclbin"
  card_note "then: bouncer card selftest --device <user BDF> --xclbin $xclbin --clock-mhz $kmhz"
else
  card_note "next: XCL_EMULATION_MODE=hw_emu EMCONFIG_PATH=$out bouncer card selftest --device 0 --xclbin $xclbin --clock-mhz $kmhz"
fi
