#!/usr/bin/env bash
# bench_flood.sh - the toolkit on traces crafted against unkeyed hash tables
# (gen_flood.c): names sharing the low bits of their FNV-1a hash, codes that
# fmix64 sends to one slot, v003 ids jumping past the scan's ring at every
# packet, pairs of functions that crowd one bucket of `hotspots`' heavy
# hitters. Since 2026-12-06 every table a trace fills is keyed with random
# bits of the process (src/util/hash.h), so these cost what any trace of
# their size costs; before, each was quadratic (the 14 MB names trace took
# `flamegraph` 34 s). Then --hide with 2 000 names (none of which matches)
# on the names trace: a search per name per function took `flamegraph` 14 s
# there; they are now looked for at once (src/util/substrset.c).
#
#   bench_flood.sh MEMTRACE GEN_FLOOD [N (default 131072)]
#
# Last lines: "RESULT flood_<trace>_<cmd>_s SECONDS" for run.sh.
set -eu
cli=$1 gen=$2 n=${3:-131072}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%-8s %-12s %9s\n' trace command seconds
for kind in names codes ids pairs; do
    count=$n
    [ "$kind" = ids ] && count=16000    # (1000 packets: ~1 s of writing)
    [ "$kind" = pairs ] && count=200000
    "$gen" "$tmp/$kind.ctf" "$kind" "$count"
    for c in info check top flamegraph hotspots "report -o $tmp/r.html"; do
        # shellcheck disable=SC2086   # $c: a command and its options
        /usr/bin/time -f "%e" -o "$tmp/t" "$cli" $c "$tmp/$kind.ctf" > /dev/null
        printf '%-8s %-12s %9s\n' "$kind" "${c%% -o *}" "$(cat "$tmp/t")"
        echo "RESULT flood_${kind}_${c%% *}_s $(cat "$tmp/t")" >> "$tmp/results"
    done
    echo "($kind: $count allocations, $(stat -c %s "$tmp/$kind.ctf") bytes)"
done
hides=()
for i in $(seq 2000); do hides+=(--hide "zz${i}q"); done
for c in top flamegraph "report -o $tmp/r.html"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e" -o "$tmp/t" "$cli" ${c%% -o *} "${hides[@]}" "$tmp/names.ctf" \
        ${c#"${c%% -o *}"} > /dev/null
    printf '%-8s %-12s %9s\n' hides "${c%% -o *}" "$(cat "$tmp/t")"
    echo "RESULT flood_hides_${c%% *}_s $(cat "$tmp/t")" >> "$tmp/results"
done
cat "$tmp/results"
