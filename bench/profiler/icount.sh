#!/usr/bin/env bash
# icount.sh [BUILD_DIR] - the profiler's overhead counted in instructions,
# not timed. On this project's VMs a run's time varies by more than the 5%
# that the default-rate target allows (docs/ROADMAP.md), while the number of
# instructions a program executes does not move with the machine's load.
#
# binary_trees 14 and the 2-thread malloc stress (2 x 1 M allocations) run
# under valgrind's callgrind (Debian package valgrind; ~1 minute in all):
#   plain      the program alone;
#   loaded     libmemtrace_preload.so preloaded, MEMTRACE unset: the
#              interposed malloc family without a session;
#   default    tracing at the default rate (1e-5 a word);
#   every4096  tracing at one sample per 4 KiB (MEMTRACE_RATE=1/512).
# It prints each run's instructions and their ratio to plain. Only the
# program's own process is counted: the library is preloaded through
# `env`, whose instructions are left out. Sampling draws are random, so the
# two tracing rows move by a fraction of a percent from run to run.
set -eu
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-build}" && pwd)
LIB=$BUILD/libmemtrace_preload.so
[ -f "$LIB" ] || { echo "icount.sh: build first: $LIB" >&2; exit 1; }
command -v valgrind > /dev/null || { echo "icount.sh: needs valgrind" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-icount.XXXXXX")
trap 'rm -rf "$W"' EXIT
for p in binary_trees malloc_stress; do
  gcc -O2 -g -o "$W/$p" "$HERE/$p.c" -lpthread
done

# count MODE PROGRAM ARGS...: the instructions of PROGRAM's process
count() {
  local mode=$1 prog=$2
  shift 2
  local vars=()
  case $mode in
    plain) ;;
    loaded) vars=(LD_PRELOAD="$LIB") ;;
    default) vars=(LD_PRELOAD="$LIB" MEMTRACE="$W/t.ctf") ;;
    every4096) vars=(LD_PRELOAD="$LIB" MEMTRACE="$W/t.ctf" MEMTRACE_RATE=0.001953125) ;;
  esac
  rm -f "$W"/cg.*
  valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$W/cg.%p" \
    env "${vars[@]}" "$prog" "$@" > /dev/null 2> "$W/vg.err" ||
    { echo "icount.sh: $mode $*: failed" >&2; cat "$W/vg.err" >&2; exit 1; }
  # each process's file names its command; the program's is the one to count
  awk -v prog="$prog" '
    FNR == 1 { mine = 0 }
    /^cmd: / { mine = ($2 == prog) }
    /^summary: / && mine { total += $2 }
    END { if (!total) exit 1; printf "%d\n", total }' "$W"/cg.*
}

for bench in "binary_trees 14" "malloc_stress 1000000"; do
  read -r name arg <<< "$bench"
  prog=$W/$name
  echo "== $name $arg"
  base=
  for mode in plain loaded default every4096; do
    n=$(count $mode "$prog" "$arg")
    [ -n "$base" ] || base=$n
    awk -v m=$mode -v n="$n" -v b="$base" \
      'BEGIN { printf "  %-10s %14d instructions  %6.3fx\n", m, n, n / b }'
  done
done
