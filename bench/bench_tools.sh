#!/usr/bin/env bash
# bench_tools.sh - speed of the toolkit commands against plain full decoding.
#
#   bench_tools.sh MEMTRACE BENCH_DECODE TRACE [ROUNDS (default 5)]
#
# Runs, in ROUNDS interleaved rounds (so machine noise hits all alike):
# `bench_decode TRACE 1 scan` (full decode with backtraces through
# mt_reader_scan, the fastest plain loop) and `memtrace CMD TRACE > /dev/null`
# for live, check, top, hotspots, flamegraph and flamegraph --inverted.
# Prints per command the median wall and CPU (user + system) seconds and the
# speed relative to decoding (decode time / command time: 0.5 = half the
# speed of plain decoding), by wall and by CPU time. Last lines:
# "RESULT tools_<cmd>_x_decode RATIO" (by CPU time) for run.sh.
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
cat "$trace" > /dev/null                     # warm the page cache
for ((r = 0; r < rounds; r++)); do
    for c in "${cmds[@]}"; do run "$c"; done
done
printf '%-24s %9s %9s %14s %14s\n' command "wall s" "cpu s" "x decode(wall)" "x decode(cpu)"
dw=$(cut -d' ' -f1 "$tmp/decode" | median); dc=$(cut -d' ' -f2 "$tmp/decode" | median)
for c in "${cmds[@]}"; do
    key=${c// /_}
    w=$(cut -d' ' -f1 "$tmp/$key" | median); u=$(cut -d' ' -f2 "$tmp/$key" | median)
    printf '%-24s %9s %9s %14s %14s\n' "$c" "$w" "$u" \
        "$(awk -v a="$dw" -v b="$w" 'BEGIN { printf "%.2f", a / b }')" \
        "$(awk -v a="$dc" -v b="$u" 'BEGIN { printf "%.2f", a / b }')"
done
for c in "${cmds[@]}"; do
    key=${c// /_}
    echo "RESULT tools_${key//-/}_x_decode $(awk -v a="$dc" -v b="$(cut -d' ' -f2 "$tmp/$key" | median)" 'BEGIN { printf "%.2f", a / b }')"
done
