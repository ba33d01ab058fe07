#!/usr/bin/env bash
# run.sh [BUILD_DIR] [RUNS] - overhead of the native heap profiler.
#  1. price of one sampled allocation (20 frames deep) with each unwinder
#     (the default, rules from .eh_frame; libunwind's; libgcc's):
#     unwind_cost with every allocation sampled (MEMTRACE_RATE=1) minus the
#     plain run, divided by the number of allocations;
#  2. binary_trees, a 2-thread malloc stress, a loop over a 1 MB buffer
#     (big_buffers), 20 000 short threads (thread_churn) and 3000 forks
#     (fork_churn) run plain, under
#     `memtrace run` at the default rate, at --every 4096, and under
#     heaptrack (if installed), RUNS times each (default 5), interleaved;
#     median wall time, median CPU time (user + system, which the other
#     loads of a shared machine disturb less), the best wall time (this
#     project's VMs have minutes-long phases in which a run takes up to
#     1.8x, plain runs too: the best of many runs is the steadiest
#     figure), ratios to plain, and trace file sizes.
# BUILD_DIR (default build) holds memtrace and libmemtrace_preload.so.
set -eu
export LC_ALL=C
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${2:-5}
CLI=$BUILD/memtrace
LIB=$BUILD/libmemtrace_preload.so
[ -x "$CLI" ] && [ -f "$LIB" ] || { echo "build first: $CLI, $LIB"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
for p in unwind_cost binary_trees malloc_stress big_buffers thread_churn fork_churn; do
  gcc -O2 -g -o "$W/$p" "$HERE/$p.c" -lpthread
done

now() { date +%s.%N; }
elapsed() {  # elapsed CMD...: wall seconds, output discarded
  local t0 t1
  t0=$(now)
  "$@" > /dev/null 2> "$W/err" || { echo "failed: $*" >&2; cat "$W/err" >&2; exit 1; }
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "needs GNU time ($TIME; Debian package time)"; exit 1; }
timed() {  # timed CMD...: "wall cpu" seconds (cpu: user + system of CMD and its children)
  local w
  w=$(elapsed "$TIME" -f "%U %S" -o "$W/cpu" "$@")
  awk -v w="$w" '{ printf "%s %.4f\n", w, $1 + $2 }' "$W/cpu"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
least() { sort -g | head -1; }

echo "== price of one sampled allocation, 25 frames deep (median of 3)"
N=200000
# cfi: the default (rules from .eh_frame kept per return address, else
# unw_backtrace); libunwind: unw_backtrace alone; libgcc: _Unwind_Backtrace
for u in plain cfi libunwind libgcc; do
  for r in 1 2 3; do
    if [ $u = plain ]; then
      elapsed "$W/unwind_cost" 20 $N
    else
      MEMTRACE_UNWIND=${u#cfi} LD_PRELOAD=$LIB MEMTRACE="$W/u.ctf" MEMTRACE_RATE=1 elapsed "$W/unwind_cost" 20 $N
    fi
  done | median > "$W/u.$u"
done
base=$(cat "$W/u.plain")
for u in cfi libunwind libgcc; do
  awk -v t="$(cat "$W/u.$u")" -v b="$base" -v n=$N -v u=$u \
    'BEGIN { printf "  %-10s %.2f us per sampled allocation (%.3f s for %d, plain %.3f s)\n", u, (t - b) / n * 1e6, t, n, b }'
done

echo
echo "== overhead: median of $RUNS runs, interleaved"
HT=$(command -v heaptrack || true)
modes="plain default every4096"
[ -n "$HT" ] && modes="$modes heaptrack"
bench() {  # bench NAME CMD...
  local name=$1; shift
  for m in $modes; do : > "$W/$name.$m"; done
  for r in $(seq "$RUNS"); do
    for m in $modes; do
      rm -f "$W/$name.$m.trace"*
      case $m in
        plain) t=$(timed "$@") ;;
        default) t=$(timed "$CLI" run -o "$W/$name.$m.trace" -- "$@") ;;
        every4096) t=$(timed "$CLI" run --every 4096 -o "$W/$name.$m.trace" -- "$@") ;;
        heaptrack) t=$(timed "$HT" -o "$W/$name.$m.trace" "$@") ;;
      esac
      echo "$t" >> "$W/$name.$m"
    done
  done
  local base cbase
  base=$(cut -d' ' -f1 "$W/$name.plain" | median)
  cbase=$(cut -d' ' -f2 "$W/$name.plain" | median)
  lbase=$(cut -d' ' -f1 "$W/$name.plain" | least)
  printf "  %-22s %9s %8s %9s %8s %9s %8s %14s\n" "$name" "wall s" "ratio" "cpu s" "ratio" \
    "best s" "ratio" "trace bytes"
  for m in $modes; do
    local t c size=-
    t=$(cut -d' ' -f1 "$W/$name.$m" | median)
    c=$(cut -d' ' -f2 "$W/$name.$m" | median)
    l=$(cut -d' ' -f1 "$W/$name.$m" | least)
    if [ $m != plain ]; then
      size=$(cat "$W/$name.$m.trace"* 2>/dev/null | wc -c)
    fi
    awk -v m=$m -v t="$t" -v b="$base" -v c="$c" -v cb="$cbase" -v l="$l" -v lb="$lbase" -v s="$size" \
      'BEGIN { printf "  %-22s %9.3f %7.3fx %9.3f %7.3fx %9.3f %7.3fx %14s\n", m, t, t / b, c, c / cb, l, l / lb, s }'
  done
}
bench binary_trees_17 "$W/binary_trees" 17
echo
bench malloc_stress_2x20M "$W/malloc_stress" 20000000
echo
bench big_buffers_3000x1MB "$W/big_buffers" 3000 1000000
echo
bench thread_churn_20000 "$W/thread_churn" 20000
echo
bench fork_churn_3000 "$W/fork_churn" 3000
