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

Builds out/card/<card>-<target>-w<width>/bouncer_<card>.xclbin in these steps:
  0. vivado -mode batch -source scripts/card/check_cmac_license.tcl   (hw with the CMAC only)
                          synthesises a CMAC (cmac_usplus) alone, a few minutes, so that a
                          missing licence stops the build now and not hours into the link
  1. vivado -mode batch -source scripts/card/package_kernel.tcl  -> bouncer_kernel.xo
  2. v++ -l --platform <card platform> --config scripts/card/link_<card>.cfg  -> .xclbin
  3. xclbinutil --dump-section CLOCK_FREQ_TOPOLOGY (hw only): the kernel clock v++ achieved.
     v++ lowers the clock when timing does not close at the request instead of failing; the
     script fails then (exit 1) unless --accept-lower-clock is given

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
  --kernel-mhz N          kernel clock ap_clk (platform clock 0). Default 300 at --width 512:
                          a line-rate flood of 65-byte frames is 140 Mpps of 2-beat frames,
                          281 M beats/s, more than 250 MHz can take (xup's CMAC kernel runs its
                          side at 300 MHz). Default 250 at --width 64. Give the same figure to
                          bouncer card selftest/serve --clock-mhz (the driver converts its
                          timeouts to cycles with it)
  --accept-lower-clock    if v++ lowered the kernel clock, keep the xclbin and report the clock
                          (exit 0) instead of failing
  --platform NAME|XPFM    override the platform (default per card, see below)
  --xup DIR               a checkout of Xilinx/xup_vitis_network_example in which the CMAC kernel
                          was built for this platform (make -C DIR/Ethernet all DEVICE=<platform>
                          INTERFACE=0, which runs xup's Ethernet/package_cmac.tcl); gives:
  --cmac-xo FILE          cmac_0.xo             (default DIR/Ethernet/_x.<platform>/cmac_0.xo)
  --post-sys-link FILE    post_sys_link.tcl     (default DIR/Ethernet/post_sys_link.tcl)
  --cmac-ip-repo DIR      an extra IP repository for v++ (--user_ip_repo_paths); none by
                          default: xup's current cmac_0.xo carries its IP. Older xup trees
                          (with the Ethernet/cmac submodule) needed DIR/Ethernet/cmac
  --skip-license-check    do not run step 0 (a licence server known to serve cmac_usplus)
  --loopback              link without the CMAC: TX stream looped to RX (card bring-up, hw_emu)
  --jobs N                parallel v++/Vivado jobs (default 4)
  --out DIR               output directory (default out/card/<card>-<target>-w<width>)
  --dry-run               print the commands and exit 0; checks nothing, runs nothing
Every path option may be relative to the current directory: it is made absolute before any
tool sees it (Vivado and v++ run Tcl from their own directories).
  -h, --help              this text

Default platforms (Vitis 2022.1, XRT 2.13): u250 xilinx_u250_gen3x16_xdma_4_1_202210_1,
u280 xilinx_u280_gen3x16_xdma_1_202211_1, u55c xilinx_u55c_gen3x16_xdma_3_202210_1.
Exit codes: 0 done, 1 bad arguments, a failed step or a lowered kernel clock, 2 a missing tool,
platform, input file or CMAC licence.
EOF
}

card="" target=hw width=512 async=0 kmhz="" platform="" xup="" cmac_xo="" post_link="" cmac_repo=""
loopback=0 jobs=4 out="" lic_check=1 accept_lower=0
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
    --skip-license-check) lic_check=0; shift ;;
    --accept-lower-clock) accept_lower=1; shift ;;
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
if [ -z "$kmhz" ]; then
  kmhz=250
  [ "$width" = 512 ] && kmhz=300
fi
[[ $kmhz =~ ^[1-9][0-9]*$ ]] || card_die 1 "--kernel-mhz must be a whole number of MHz, not '$kmhz'"
if [ "$async" = 1 ] && [ "$kmhz" -gt 333 ]; then
  card_die 1 "--async-streams 1 needs --kernel-mhz 333 or less (constraints/kernel/bouncer_kernel.xdc bounds the crossings at 3 ns)"
fi
[[ $jobs =~ ^[1-9][0-9]*$ ]] || card_die 1 "--jobs must be a positive number, not '$jobs'"
platform=${platform:-$def_platform}
# A platform given as a file (.xpfm) is a path; a bare name is looked up by v++.
if [[ $platform == */* || $platform == *.xpfm ]]; then
  platform=$(card_abspath "$platform")
fi
xsa=$(basename "$platform" .xpfm)
out=$(card_abspath "${out:-$root/out/card/$card-$target-w$width}")
xup=$(card_abspath "$xup")
cmac_xo=$(card_abspath "$cmac_xo")
post_link=$(card_abspath "$post_link")
cmac_repo=$(card_abspath "$cmac_repo")
[ "$target" = hw_emu ] && loopback=1

if [ "$loopback" = 1 ]; then
  link_cfg=$here/link_loopback.cfg
else
  link_cfg=$here/link_$card.cfg
  if [ -n "$xup" ]; then
    cmac_xo=${cmac_xo:-$xup/Ethernet/_x.$xsa/cmac_0.xo}
    post_link=${post_link:-$xup/Ethernet/post_sys_link.tcl}
  fi
  if [ -z "$cmac_xo" ] || [ -z "$post_link" ]; then
    card_die 1 "the 100G link needs xup's CMAC kernel: give --xup DIR (or --cmac-xo and --post-sys-link), or --loopback for a kernel-only xclbin"
  fi
fi
[ "$loopback" = 1 ] || [ "$target" != hw ] && lic_check=0
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
  if [ "$target" = hw ]; then
    card_need_tool xclbinutil "$vitis_hint" --version -- '[Vv]ersion'
  fi
  if [ "$loopback" = 0 ]; then
    card_need_file "$cmac_xo" "xup CMAC kernel (build it: make -C <xup>/Ethernet all DEVICE=$platform INTERFACE=0)"
    card_need_file "$post_link" "xup post_sys_link.tcl (xup_vitis_network_example/Ethernet/post_sys_link.tcl)"
    if [ -n "$cmac_repo" ] && [ ! -d "$cmac_repo" ]; then
      card_die 2 "IP repository not found: $cmac_repo"
    fi
  fi
fi

card_note "card $card, part $part, platform $platform, target $target, DATA_W $width, ASYNC_STREAMS $async, kernel clock $kmhz MHz"
if [ "$loopback" = 1 ]; then
  card_note "link: $(basename "$link_cfg") (no CMAC; the kernel's TX stream feeds its own RX)"
else
  card_note "link: $(basename "$link_cfg") with $cmac_xo"
fi
card_run mkdir -p "$out"

# Step 0: the CMAC licence. Vivado checks IP licences at synthesis, implementation and
# write_bitstream; in the v++ link the CMAC is synthesised an hour or more in. The probe
# synthesises one cmac_usplus for the card's part and writes "ok" or "missing: <message>".
if [ "$lic_check" = 1 ]; then
  lic_result=$out/license_check.txt
  [ "$CARD_DRY_RUN" = 1 ] || rm -f "$lic_result"
  card_run vivado -mode batch -nojournal -log "$out/license_check.log" \
    -source "$here/check_cmac_license.tcl" -tclargs \
    --part "$part" --result "$lic_result" --build-dir "$out/license_check"
  if [ "$CARD_DRY_RUN" != 1 ]; then
    [ -f "$lic_result" ] || card_die 1 "the licence check wrote no result (see $out/license_check.log)"
    lic=$(<"$lic_result")
    case "$lic" in
      ok) card_note "CMAC licence: cmac_usplus synthesised for $part" ;;
      missing*) card_die 2 "no licence for the 100G CMAC (feature cmac_usplus, 'UltraScale+ Integrated 100G Ethernet Subsystem', free from AMD; see docs/lab.md): ${lic#missing: } (log: $out/license_check.log)" ;;
      *) card_die 1 "the licence check failed: $lic (see $out/license_check.log)" ;;
    esac
  fi
fi

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
  vpp+=(--advanced.param "compiler.userPostSysLinkOverlayTcl=$post_link")
  [ -n "$cmac_repo" ] && vpp+=(--user_ip_repo_paths "$cmac_repo")
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

# Step 3: the kernel clock v++ achieved. When timing does not close at the request, v++ scales
# the clock down and finishes without an error (UG1315, "Kernel Clock ... Frequency": automatic
# frequency scaling); the xclbin's CLOCK_FREQ_TOPOLOGY section holds what it chose: DATA is
# platform clock 0 (ap_clk), KERNEL clock 1 (ap_clk_2).
if [ "$target" = hw ]; then
  clk_json=$out/clock_freq_topology.json
  card_run xclbinutil --input "$xclbin" --dump-section "CLOCK_FREQ_TOPOLOGY:JSON:$clk_json" --force
  if [ "$CARD_DRY_RUN" != 1 ]; then
    [ -f "$clk_json" ] || card_die 1 "xclbinutil wrote no $clk_json"
    got=$(card_clock_mhz "$clk_json" DATA)
    [ -n "$got" ] || card_die 1 "no DATA clock in $clk_json"
    low=""
    [ "$got" -lt "$kmhz" ] && low="ap_clk $got MHz (asked for $kmhz)"
    if [ "$async" = 1 ]; then
      got2=$(card_clock_mhz "$clk_json" KERNEL)
      if [ -z "$got2" ] || [ "$got2" -lt 322 ]; then
        low="${low:+$low, }ap_clk_2 ${got2:-?} MHz (asked for 322)"
      fi
    fi
    if [ -n "$low" ]; then
      msg="v++ lowered the kernel clock: $low. Timing did not close at the request; the timing reports are under $out/_x/reports/link/imp"
      if [ "$accept_lower" = 1 ]; then
        card_note "warning: $msg"
        kmhz=$got
      else
        card_die 1 "$msg. The xclbin $xclbin runs at $got MHz: rebuild with --kernel-mhz $got (or lower), or keep it with --accept-lower-clock and give --clock-mhz $got to bouncer"
      fi
    else
      card_note "kernel clock: ap_clk $got MHz as requested"
    fi
  fi
fi

card_note "xclbin: $xclbin"
if [ "$target" = hw ]; then
  card_note "next: scripts/card/program_card.sh --device <user BDF> --xclbin $xclbin"
  card_note "then: bouncer card selftest --device <user BDF> --xclbin $xclbin --clock-mhz $kmhz"
else
  card_note "next: XCL_EMULATION_MODE=hw_emu EMCONFIG_PATH=$out bouncer card selftest --device 0 --xclbin $xclbin --clock-mhz $kmhz"
fi
