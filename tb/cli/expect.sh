#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Runs a command and checks both its exit status and its output (stdout and stderr together),
# so that a test passes only when the command says the right thing AND exits as promised.
#   tb/cli/expect.sh STATUS REGEX [--absent REGEX]... -- CMD [ARG]...
# STATUS: the exit status required; REGEX: an extended regex the output must match somewhere
# (it may span lines); --absent: a regex no output line may match. Prints the output, then
# what failed.
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 STATUS REGEX [--absent REGEX]... -- CMD [ARG]..." >&2
  exit 2
fi
want=$1 regex=$2
shift 2
absent=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = "--absent" ] && [ $# -ge 2 ]; then
    absent+=("$2")
    shift 2
  else
    echo "$0: unexpected argument $1" >&2
    exit 2
  fi
done
[ "${1:-}" = "--" ] || { echo "$0: missing -- before the command" >&2; exit 2; }
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
fail=0
if [ "$status" -ne "$want" ]; then
  echo "expect: exit status $status, wanted $want" >&2
  fail=1
fi
if ! grep -Ezq -- "$regex" <<<"$out"; then
  echo "expect: the output does not match /$regex/" >&2
  fail=1
fi
for a in "${absent[@]}"; do
  if grep -Eq -- "$a" <<<"$out"; then
    echo "expect: an output line matches /$a/, which must not appear" >&2
    fail=1
  fi
done
[ "$fail" -eq 0 ] && echo "expect: exit status $status and output as required"
exit "$fail"
