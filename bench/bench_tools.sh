#!/usr/bin/env bash
# bench_tools.sh - speed of the toolkit commands against plain full decoding.
#
#   bench_tools.sh MEMTRACE BENCH_DECODE TRACE [ROUNDS (default 5)]
#
# Runs, in ROUNDS interleaved rounds (so machine noise hits all alike):
# `bench_decode TRACE 1 scan` (full decode with backtraces through
# mt_reader_scan, the fastest plain loop) and `memtrace CMD TRACE > /dev/null`
# for live, check, top, hotspots, flamegraph and flamegraph --inverted.
# Prints per command the best and the median wall time and the median CPU
# (user + system) seconds, and the speed relative to decoding (decode time /
# command time: 0.5 = half the speed of plain decoding) by each. The best of
# the rounds is the figure least disturbed by other work on a shared host
# (bench_decode reports its best too); the CPU time counts both threads of
# the commands that decode on a second thread. Last lines:
# "RESULT tools_<cmd>_x_decode RATIO" (by best wall time) for run.sh.
set -eu
cli=$1 dec=$2 trace=$3 rounds=${4:-5}
cmds=("decode" "live" "check" "top" "hotspots" "flamegraph" "flamegraph --inverted")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
run() {   # run NAME: one timed run, appends "wall cpu" to $tmp/NAME
    local name=$1 key=${1// /_}
    if [ "$name" = decode ]; then
        /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$dec" "$trace" 1 scan > /dev/null
    else
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$cli" $name "$trace" > /dev/null
    fi
    awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$tmp/t" >> "$tmp/$key"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
best() { sort -n | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
cat "$trace" > /dev/null                     # warm the page cache
for ((r = 0; r < rounds; r++)); do
    for c in "${cmds[@]}"; do run "$c"; done
done
printf '%-24s %7s %7s %7s %11s %11s %11s\n' command "best s" "med s" "cpu s" "x dec(best)" "x dec(med)" "x dec(cpu)"
db=$(cut -d' ' -f1 "$tmp/decode" | best)
dw=$(cut -d' ' -f1 "$tmp/decode" | median); dc=$(cut -d' ' -f2 "$tmp/decode" | median)
for c in "${cmds[@]}"; do
    key=${c// /_}
    b=$(cut -d' ' -f1 "$tmp/$key" | best)
    w=$(cut -d' ' -f1 "$tmp/$key" | median); u=$(cut -d' ' -f2 "$tmp/$key" | median)
    printf '%-24s %7s %7s %7s %11s %11s %11s\n' "$c" "$b" "$w" "$u" \
        "$(ratio "$db" "$b")" "$(ratio "$dw" "$w")" "$(ratio "$dc" "$u")"
done
for c in "${cmds[@]}"; do
    key=${c// /_}
    echo "RESULT tools_${key//-/}_x_decode $(ratio "$db" "$(cut -d' ' -f1 "$tmp/$key" | best)")"
done
