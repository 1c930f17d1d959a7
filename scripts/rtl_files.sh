# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# shellcheck shell=bash
# Sourced by the RTL scripts: the source lists of rtl/ (rtl/sources.f, rtl/packages.f and the
# block lists rtl/<folder>/*.f) read the way Verilator's -F reads them.
#
#   rtl_f_files LIST.f...  prints the sources of each list, one absolute path a line, in order:
#                          blank lines and # or // comments skipped, a path relative to the
#                          list's directory, "-F other.f" read in place (relative the same way)
#   rtl_block_files NAME...  the same for the list of each name, in the order given: rtl/NAME.f
#                          when it exists (packages, common/cdc), else rtl/NAME/NAME.f (common,
#                          host, rx, cm, tx, top, kernel)
# Exits the calling script (status 2) on a missing list or an unknown option.

rtl_f_files() {
  local f dir line
  for f in "$@"; do
    if [ ! -f "$f" ]; then
      echo "rtl_files: no source list $f" >&2; exit 2
    fi
    dir=$(cd "$(dirname "$f")" && pwd)
    while IFS= read -r line || [ -n "$line" ]; do
      line=${line%%#*}; line=${line%%//*}
      read -r line <<<"$line" || true  # trim
      case "$line" in
        "") ;;
        "-F "*) rtl_f_files "$(rtl_f_abs "$dir" "${line#-F }")" ;;
        -*) echo "rtl_files: $f: unsupported option '$line' (only -F)" >&2; exit 2 ;;
        *) rtl_f_abs "$dir" "$line" ;;
      esac
    done <"$f"
  done
}

rtl_f_abs() {  # rtl_f_abs DIR PATH: PATH, made absolute against DIR when relative
  local p
  read -r p <<<"$2"
  case "$p" in
    /*) echo "$p" ;;
    *) echo "$1/$p" ;;
  esac
}

rtl_block_files() {
  local top b
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  for b in "$@"; do
    if [ -f "$top/rtl/$b.f" ]; then rtl_f_files "$top/rtl/$b.f"
    else rtl_f_files "$top/rtl/$b/$(basename "$b").f"; fi
  done
}

# rtl_f_array NAME LIST.f... / rtl_block_array NAME BLOCK...: the same into the array NAME,
# exiting the calling script when a list cannot be read.
rtl_f_array() {
  local _out
  _out=$(rtl_f_files "${@:2}") || exit 2
  mapfile -t "$1" <<<"$_out"
}
rtl_block_array() {
  local _out
  _out=$(rtl_block_files "${@:2}") || exit 2
  mapfile -t "$1" <<<"$_out"
}
