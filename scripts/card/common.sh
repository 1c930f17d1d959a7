# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# shellcheck shell=bash
# Helpers shared by the card-flow scripts (build_xclbin.sh, program_card.sh, flash_shell.sh).
# Sourced, never run. Conventions of every card script:
#   exit 0  done (or --dry-run printed the commands)
#   exit 1  bad arguments, or a step failed (its command and exit code are printed)
#   exit 2  a tool, file or device is missing: one line naming it, nothing else
# Every command that would change the machine or the card goes through card_run, which prints it
# first ("+ cmd ..."), exactly as it is run; --dry-run prints and does not run.

CARD_PROG=${CARD_PROG:-$(basename "$0")}
CARD_DRY_RUN=${CARD_DRY_RUN:-0}
# Where PCI devices are looked up; tests point it at a fake tree.
CARD_SYSFS=${BOUNCER_SYSFS_ROOT:-/sys}

card_die() { # card_die CODE MESSAGE...
  local code=$1
  shift
  echo "$CARD_PROG: $*" >&2
  exit "$code"
}

# A word as the shell needs it: unquoted when it is plain, else single-quoted.
card_quote() {
  local w=$1
  if [[ -n $w && $w =~ ^[A-Za-z0-9_./:=,@%+^-]+$ ]]; then
    printf '%s' "$w"
  else
    printf "'%s'" "${w//\'/\'\\\'\'}"
  fi
}

card_cmdline() {
  local out="" w
  for w in "$@"; do
    out+="$(card_quote "$w") "
  done
  printf '%s' "${out% }"
}

# card_run CMD ARGS...: print "+ CMD ARGS", run it unless --dry-run; a failure ends the script.
card_run() {
  echo "+ $(card_cmdline "$@")"
  [ "$CARD_DRY_RUN" = 1 ] && return 0
  local rc=0
  "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then
    card_die 1 "step failed (exit $rc): $(card_cmdline "$@")"
  fi
}

# Privileged commands: prefixed with sudo when not root.
card_sudo() {
  if [ "$(id -u)" -eq 0 ]; then
    card_run "$@"
  else
    card_run sudo "$@"
  fi
}

card_note() { echo "# $*"; }

# card_need_tool NAME HINT PROBE_ARGS... [-- EXPECT_REGEX]
# The tool must be on PATH *and* run: the probe's output must match EXPECT_REGEX (if given) and
# must not be a broken wrapper's complaint. Debian's libxrt-utils ships xbutil/xbmgmt/xclbinutil as
# wrappers that exec /usr/bin/unwrapped/<tool>, which Debian does not ship: `xbutil --version`
# prints "No such file or directory" and still exits 0, so the exit code alone proves nothing.
card_need_tool() {
  local name=$1 hint=$2
  shift 2
  local probe=() expect=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then
      expect=$2
      break
    fi
    probe+=("$1")
    shift
  done
  local path
  path=$(command -v "$name" 2>/dev/null) || card_die 2 "$name not found on PATH. Fix: $hint"
  local out rc=0
  out=$(timeout 120 "$name" "${probe[@]}" 2>&1) || rc=$?
  local first
  first=$(grep -m1 -v '^[[:space:]]*$' <<<"$out" || true)
  if grep -qE 'unwrapped/|No such file or directory|Could not find 64-bit loader' <<<"$out"; then
    card_die 2 "$name at $path does not run: it is a wrapper without its binary, as Debian's libxrt-utils ships it (${first:-no output}). Fix: $hint"
  fi
  if [ "$rc" -eq 124 ]; then
    card_die 2 "$name at $path did not answer '$name ${probe[*]}' within 120 s. Fix: $hint"
  fi
  if [ -n "$expect" ]; then
    if ! grep -qE -e "$expect" <<<"$out"; then
      card_die 2 "$name at $path does not run ('$name ${probe[*]}' exit $rc: ${first:-no output}). Fix: $hint"
    fi
  elif [ "$rc" -ne 0 ]; then
    card_die 2 "$name at $path does not run ('$name ${probe[*]}' exit $rc: ${first:-no output}). Fix: $hint"
  fi
}

# A PCI function in BDF form: 0000:3b:00.1 (the domain may be omitted: 3b:00.1 -> 0000:3b:00.1).
card_bdf() {
  local b=$1
  if [[ $b =~ ^[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]]; then
    b="0000:$b"
  fi
  [[ $b =~ ^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$ ]] ||
    card_die 1 "bad --device '$1': expected a PCI address such as 0000:3b:00.1"
  printf '%s' "${b,,}"
}

card_need_device() { # card_need_device BDF WHAT
  [ -e "$CARD_SYSFS/bus/pci/devices/$1" ] ||
    card_die 2 "no PCI device $1 on this host ($CARD_SYSFS/bus/pci/devices/$1 is missing; lspci -d 10ee: lists Xilinx functions) - $2"
}

# card_abspath PATH: PATH made absolute against the current directory. Vivado and v++ run Tcl
# and configuration from their own working directories, where a relative path means something
# else (or nothing), so every path a script hands them is made absolute when it is parsed.
card_abspath() {
  local p=$1
  [ -n "$p" ] || return 0
  [[ $p == /* ]] || p=$PWD/$p
  while [[ $p == */./* ]]; do p=${p//\/.\//\/}; done
  p=${p%/.}
  printf '%s' "$p"
}

# card_clock_mhz JSON TYPE: the frequency (MHz) of the first clock of TYPE (DATA, KERNEL,
# SYSTEM) in xclbinutil's dump of CLOCK_FREQ_TOPOLOGY (objects with m_freq_Mhz, m_type and
# m_name; XRT src/runtime_src/tools/xclbinutil/SectionClockFrequencyTopology.cxx). Prints
# nothing when there is none.
card_clock_mhz() {
  local text obj
  text=$(<"$1")
  text=${text//[$' \t\r\n']/}
  while [[ $text =~ \{[^{}]*\} ]]; do
    obj=${BASH_REMATCH[0]}
    if [[ $obj =~ \"m_type\":\"$2\" ]] && [[ $obj =~ \"m_freq_Mhz\":\"?([0-9]+) ]]; then
      printf '%s' "${BASH_REMATCH[1]}"
      return 0
    fi
    text=${text/"$obj"/}
  done
}

card_need_file() { # card_need_file PATH WHAT
  [ -f "$1" ] || card_die 2 "$2 not found: $1"
}
