#!/usr/bin/env bash
# bench_dump.sh - measures `memtrace dump` output throughput against the cost
# of merely piping the same number of bytes, and the peak RSS of dump and of a
# full decode on a big trace.
#
#   bench_dump.sh MEMTRACE_BIN [TRACE] [BIG_TRACE [BENCH_DECODE_BIN]]
#
# 1. Times `MEMTRACE_BIN dump TRACE | wc -c` and `head -c N /dev/zero | wc -c`
#    (N = the dump's size), 3 repetitions each, interleaved, after one untimed
#    warm-up dump; prints the medians and their ratio. As a second floor it
#    also times `dd bs=128K` of the same N bytes into `wc -c` (head -c writes
#    in 4 KiB pieces, so it is bound by syscalls rather than by the pipe).
#    TRACE defaults to ../shared/corpus/traces/ref-example-ocamlopt.ctf
#    relative to the project root (its dump is 557 MB).
# 2. With BIG_TRACE: peak RSS (/usr/bin/time -v) of `MEMTRACE_BIN dump
#    BIG_TRACE | wc -c`; the dump of a 300 MB trace is tens of GB, so it is
#    stopped after DUMP_RSS_TIMEOUT seconds (default 120; 0 = no limit) and
#    reported as partial.
# 3. With BENCH_DECODE_BIN too: peak RSS of `BENCH_DECODE_BIN BIG_TRACE 1 full`.
# The page cache is not dropped (files are warm). Last lines: "RESULT key value".
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 4 ]; then
    echo "usage: $0 MEMTRACE_BIN [TRACE] [BIG_TRACE [BENCH_DECODE_BIN]]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$1
trace=${2:-$root/../shared/corpus/traces/ref-example-ocamlopt.ctf}
big=${3:-}
decode_bin=${4:-}
reps=3
timeout_s=${DUMP_RSS_TIMEOUT:-120}

now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", b - a }'; }
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

[ -x "$bin" ] || { echo "bench_dump: $bin is not executable" >&2; exit 1; }
[ -r "$trace" ] || { echo "bench_dump: cannot read $trace" >&2; exit 1; }

# warm-up, and the dump size N
n=$("$bin" dump "$trace" | wc -c)
echo "bench_dump: $bin dump $(basename "$trace"): $n bytes of output (page cache not dropped)"

# Also a second floor: the same bytes through the pipe in 128 KiB writes
# (head -c writes 4 KiB at a time, so it is syscall-bound, not pipe-bound).
dump_t=() head_t=() dd_t=()
for ((i = 0; i < reps; i++)); do
    t0=$(now); m=$("$bin" dump "$trace" | wc -c); t1=$(now)
    [ "$m" = "$n" ] || { echo "bench_dump: dump size changed ($m vs $n)" >&2; exit 1; }
    dump_t+=("$(elapsed "$t0" "$t1")")
    t0=$(now); m=$(head -c "$n" /dev/zero | wc -c); t1=$(now)
    head_t+=("$(elapsed "$t0" "$t1")")
    t0=$(now)
    m=$(dd if=/dev/zero bs=131072 count="$n" iflag=count_bytes status=none | wc -c)
    t1=$(now)
    dd_t+=("$(elapsed "$t0" "$t1")")
done
dmed=$(median3 "${dump_t[@]}")
hmed=$(median3 "${head_t[@]}")
ddmed=$(median3 "${dd_t[@]}")
ratio=$(awk -v d="$dmed" -v h="$hmed" 'BEGIN { printf "%.2f", d / h }')
ratio_dd=$(awk -v d="$dmed" -v h="$ddmed" 'BEGIN { printf "%.2f", d / h }')
mbps() { awk -v n="$n" -v d="$1" 'BEGIN { printf "%.0f", n / d / 1e6 }'; }
dmbps=$(mbps "$dmed")
printf '  %-44s %s s (runs: %s)  %s MB/s of text\n' "memtrace dump | wc -c" "$dmed" "${dump_t[*]}" "$dmbps"
printf '  %-44s %s s (runs: %s)  %s MB/s\n' "head -c $n /dev/zero | wc -c" "$hmed" "${head_t[*]}" "$(mbps "$hmed")"
printf '  %-44s %s s (runs: %s)  %s MB/s\n' "dd bs=128K (same bytes) | wc -c" "$ddmed" "${dd_t[*]}" "$(mbps "$ddmed")"
printf '  ratio dump / head (medians): %s   dump / dd: %s\n' "$ratio" "$ratio_dd"

results=("dump_bytes $n" "dump_median_s $dmed" "head_median_s $hmed" "dump_x_head $ratio"
         "dd_median_s $ddmed" "dump_x_dd $ratio_dd" "dump_MBps $dmbps")

if [ -n "$big" ]; then
    if [ ! -x /usr/bin/time ]; then
        echo "bench_dump: /usr/bin/time missing, skipping peak RSS (apt-get update && apt-get install -y time)" >&2
    else
        big_bytes=$(stat -c %s "$big")
        tmp=$(mktemp)
        trap 'rm -f "$tmp"' EXIT
        lim=()
        [ "$timeout_s" != 0 ] && lim=(timeout -s INT "$timeout_s")
        t0=$(now)
        set +e
        out=$(/usr/bin/time -v -o "$tmp" "${lim[@]}" "$bin" dump "$big" | wc -c)
        set -e
        t1=$(now)
        st=$(sed -n 's/.*Exit status: //p' "$tmp")
        rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp")
        secs=$(elapsed "$t0" "$t1")
        partial=no
        [ "$st" = 124 ] && partial="yes (stopped after ${timeout_s} s)"
        if [ "$st" != 0 ] && [ "$st" != 124 ]; then
            echo "bench_dump: dump of $big exited with status $st" >&2; exit 1
        fi
        printf '  peak RSS, memtrace dump %s: %s KiB (trace %s bytes; %s bytes of output in %s s, %.0f MB/s; partial: %s)\n' \
            "$(basename "$big")" "$rss" "$big_bytes" "$out" "$secs" \
            "$(awk -v n="$out" -v d="$secs" 'BEGIN { print n / d / 1e6 }')" "$partial"
        results+=("dump_big_rss_kib $rss" "dump_big_out_bytes $out" "dump_big_s $secs"
                  "dump_big_partial ${partial%% *}")
        if [ -n "$decode_bin" ]; then
            "$decode_bin" "$big" 1 full > /dev/null  # warm
            /usr/bin/time -v -o "$tmp" "$decode_bin" "$big" 1 full > /dev/null
            rss2=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp")
            printf '  peak RSS, bench_decode full decode %s: %s KiB\n' "$(basename "$big")" "$rss2"
            results+=("decode_big_rss_kib $rss2")
        fi
    fi
fi
for r in "${results[@]}"; do echo "RESULT $r"; done
