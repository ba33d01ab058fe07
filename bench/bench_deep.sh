#!/usr/bin/env bash
# bench_deep.sh - the toolkit on deep recursion: work per allocation that
# grows with the backtrace's depth instead of with its new frames.
#
#   bench_deep.sh MEMTRACE GEN_DEEP [N (default 100000)] [DEPTH (default 100000)]
#
# gen_deep writes N allocations DEPTH frames deep, each sharing all but its
# last frame with the one before (~1.5 MB for 10^10 frames). Each command
# runs once on it (the figures are seconds apart from minutes when a command
# visits every frame); `check` is the floor (decoding, which costs the new
# frames only). `copy` and `subsample` go through the writer, whose API
# takes each allocation's whole callstack: they cost N x DEPTH by design
# (a comparison with the previous callstack, ~1 s per 10^10 frames here).
# Then the exporters on stacks that share all but their root (gen_deep's
# "roots": 100 allocations 40 000 frames deep, 4 M distinct prefixes in a
# ~52 KB trace), with their peak RSS: their trees hold a node per prefix.
# Last lines: "RESULT deep_<cmd>_s SECONDS" (and "RESULT roots_<cmd>_s",
# "RESULT roots_<cmd>_mb") for run.sh.
set -eu
cli=$1 gen=$2 n=${3:-100000} depth=${4:-100000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tr=$tmp/deep.ctf
"$gen" "$tr" "$n" "$depth"
echo "trace: $n allocations, $depth frames deep, $(stat -c %s "$tr") bytes"
# (--min-size 1 keeps every allocation, --in site_a every other one, and
# --hide recurse takes the recursive frames away from the sites)
cmds=("check" "info" "top" "top --hide recurse" "live" "flamegraph" "flamegraph --min-size 1"
      "flamegraph --in site_a" "hotspots" "hotspots --min-size 1" "hotspots --in site_a"
      "pprof -o $tmp/p.pb.gz" "speedscope -o $tmp/s.json" "report -o $tmp/r.html")
printf '%-28s %9s\n' command seconds
for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086   # $c: a command and its options
    /usr/bin/time -f "%e" -o "$tmp/t" "$cli" $c "$tr" > /dev/null
    printf '%-28s %9s\n' "${c%% -o *}" "$(cat "$tmp/t")"
    key=${c%% -o *}; key=${key//--/}; key=${key//[^a-z0-9]/_}
    echo "RESULT deep_${key}_s $(cat "$tmp/t")" >> "$tmp/results"
done
rt=$tmp/roots.ctf
"$gen" "$rt" 100 40000 roots
echo "trace: 100 allocations, 40000 frames deep, distinct roots, $(stat -c %s "$rt") bytes"
printf '%-28s %9s %9s\n' command seconds "peak MB"
for c in "pprof -o $tmp/p.pb.gz" "speedscope -o $tmp/s.json" "report -o $tmp/r.html" "flamegraph"; do
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e %M" -o "$tmp/t" "$cli" $c "$rt" > /dev/null
    read -r secs kb < "$tmp/t"
    key=${c%% -o *}
    printf '%-28s %9s %9s\n' "$key" "$secs" "$((kb / 1024))"
    echo "RESULT roots_${key}_s $secs" >> "$tmp/results"
    echo "RESULT roots_${key}_mb $((kb / 1024))" >> "$tmp/results"
done
cat "$tmp/results"
