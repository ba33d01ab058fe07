#!/usr/bin/env bash
# bench_icount.sh - instructions per event of the decoder, counted, not timed.
#
#   bench_icount.sh BUILD_DIR [SIZE_MB (default 16)] [SEED (default 1)]
#
# The decoder runs at about four instructions a cycle, so the number of
# instructions it executes per event is its speed; unlike a wall time it
# does not move with the load of a shared machine. This generates a
# synthetic trace of SIZE_MB with BUILD_DIR/bench/gen_trace (same shape as
# the 320 MB benchmark trace), then runs `bench_decode TRACE 1 scan` and
# `... scanskip` under valgrind's callgrind and prints the instructions of
# each run per event and per byte. The counts include bench_decode's own
# callback (about 14 instructions an event) and its start-up. Needs valgrind
# (Debian package valgrind); takes about a minute.
set -euo pipefail
build=${1:?usage: bench_icount.sh BUILD_DIR [SIZE_MB] [SEED]}
size=${2:-16}
seed=${3:-1}
command -v valgrind > /dev/null || { echo "bench_icount.sh: needs valgrind" >&2; exit 1; }
gen=$build/bench/gen_trace
dec=$build/bench/bench_decode
[ -x "$gen" ] && [ -x "$dec" ] || { echo "bench_icount.sh: build $gen and $dec first" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
trace=$tmp/t.ctf
"$gen" "$trace" "$size" "$seed" > /dev/null
bytes=$(stat -c %s "$trace")
events=$("$dec" "$trace" 1 scan | awk '/^RESULT events/ { print $3 }')
echo "trace: $size MB synthetic (seed $seed), $bytes bytes, $events events"
for mode in scan scanskip; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$mode" "$dec" "$trace" 1 "$mode" \
        > /dev/null 2> "$tmp/err.$mode"
    ir=$(awk '/Collected :/ { print $4 }' "$tmp/err.$mode")
    awk -v m="$mode" -v ir="$ir" -v ev="$events" -v b="$bytes" 'BEGIN {
        printf "%-9s %12d instructions  %6.1f per event  %5.2f per byte\n", m, ir, ir / ev, ir / b
        printf "RESULT icount_%s_per_event %.1f\n", m, ir / ev }'
done
