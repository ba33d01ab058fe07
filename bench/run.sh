#!/usr/bin/env bash
# run.sh - builds the benchmarks (Release, -O2) and runs all of them, then
# prints a summary table. See bench/README.md.
#
#   bench/run.sh                      (from anywhere)
#
# Environment (all optional):
#   BUILD_DIR        build directory (default: <project>/build-bench)
#   SIZE_MB          size of the synthetic trace (default 320)
#   SEED             generator seed (default 1)
#   WRITE_EVENTS     events timed by bench_write (default 50000000)
#   REPS             rounds of bench_decode (default 3)
#   DUMP_TRACE       trace for bench_dump.sh (default: corpus ref-example-ocamlopt.ctf)
#   DUMP_RSS_TIMEOUT seconds of `memtrace dump` on the big trace (default 120)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build-bench}
SIZE_MB=${SIZE_MB:-320}
SEED=${SEED:-1}
WRITE_EVENTS=${WRITE_EVENTS:-50000000}
REPS=${REPS:-3}
DUMP_TRACE=${DUMP_TRACE:-$root/../shared/corpus/traces/ref-example-ocamlopt.ctf}
export DUMP_RSS_TIMEOUT=${DUMP_RSS_TIMEOUT:-120}

echo "== build ($BUILD_DIR, Release -O2)"
cmake -S "$root" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DMT_BUILD_TESTS=OFF > /dev/null
cmake --build "$BUILD_DIR" --target gen_trace gen_deep gen_flood bench_decode bench_write bench_walk \
    memtrace_cli

gen=$BUILD_DIR/bench/gen_trace
dec=$BUILD_DIR/bench/bench_decode
wr=$BUILD_DIR/bench/bench_write
cli=$BUILD_DIR/memtrace
logdir=$BUILD_DIR/bench-logs
mkdir -p "$logdir"
# -g2: the generator with a bounded set of stacks (older files are stale)
trace=$BUILD_DIR/synthetic-${SIZE_MB}MB-seed${SEED}-g2.ctf

echo "== determinism: two 16 MB traces with seed $SEED must be byte-identical"
"$gen" "$BUILD_DIR/det-a.ctf" 16 "$SEED" > /dev/null
"$gen" "$BUILD_DIR/det-b.ctf" 16 "$SEED" > /dev/null
ha=$(sha256sum < "$BUILD_DIR/det-a.ctf" | cut -d' ' -f1)
hb=$(sha256sum < "$BUILD_DIR/det-b.ctf" | cut -d' ' -f1)
rm -f "$BUILD_DIR/det-a.ctf" "$BUILD_DIR/det-b.ctf"
if [ "$ha" = "$hb" ]; then det="yes ($ha)"; else det="NO ($ha vs $hb)"; fi
echo "  identical: $det"

echo "== synthetic trace $trace"
if [ ! -f "$trace" ]; then
    "$gen" "$trace.tmp" "$SIZE_MB" "$SEED" | tee "$logdir/gen_trace.txt"
    mv "$trace.tmp" "$trace"
else
    echo "  (exists, not regenerated; delete it to regenerate and re-verify)"
fi

echo "== bench_decode (synthetic trace)"
"$dec" "$trace" "$REPS" | tee "$logdir/decode.txt"
echo "== bench_walk (synthetic trace): the floor of finding event ends, vs scan"
"$BUILD_DIR/bench/bench_walk" "$trace" 5 | tee "$logdir/walk.txt"
if command -v valgrind > /dev/null; then
    echo "== bench_icount.sh (instructions per event, counted by callgrind: noise-free)"
    "$root/bench/bench_icount.sh" "$BUILD_DIR" | tee "$logdir/icount.txt"
else
    echo "(valgrind not installed: no instruction counts)" > "$logdir/icount.txt"
fi
echo "== bench_decode (corpus $(basename "$DUMP_TRACE"), small: for comparison)"
"$dec" "$DUMP_TRACE" "$REPS" | tee "$logdir/decode_ref.txt"

echo "== bench_write ($WRITE_EVENTS events)"
"$wr" "$BUILD_DIR/bench_write.ctf" "$WRITE_EVENTS" | tee "$logdir/write.txt"
rm -f "$BUILD_DIR/bench_write.ctf"
"$wr" - "$WRITE_EVENTS" | tee "$logdir/write_sink.txt"

echo "== bench_tools.sh (toolkit commands vs plain decoding, synthetic trace)"
"$root/bench/bench_tools.sh" "$cli" "$dec" "$trace" "$REPS" | tee "$logdir/tools.txt"

echo "== bench_deep.sh (the toolkit on 100 000 allocations 100 000 frames deep)"
"$root/bench/bench_deep.sh" "$cli" "$BUILD_DIR/bench/gen_deep" | tee "$logdir/deep.txt"

echo "== bench_flood.sh (the toolkit on traces crafted against unkeyed hash tables)"
"$root/bench/bench_flood.sh" "$cli" "$BUILD_DIR/bench/gen_flood" | tee "$logdir/flood.txt"

echo "== bench_dump.sh"
"$root/bench/bench_dump.sh" "$cli" "$DUMP_TRACE" "$trace" "$dec" | tee "$logdir/dump.txt"

# ---- summary ----------------------------------------------------------------
get() { sed -n "s/^RESULT $2 //p" "$logdir/$1" | tail -n 1; }
per_cpu() { awk -v e="$1" -v c="$2" 'BEGIN { if (c > 0) printf "%.1f", e / c / 1e6; else print "-" }'; }
echo
echo "== summary (MB = 10^6 bytes; page cache warm, nothing dropped; $(nproc) cores; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-52s %s\n' "generator output deterministic" "$det"
printf '%-52s %s bytes, %s events, %s B/event\n' "synthetic trace" \
    "$(get decode.txt bytes)" "$(get decode.txt events)" \
    "$(awk -v b="$(get decode.txt bytes)" -v e="$(get decode.txt events)" 'BEGIN { printf "%.2f", b / e }')"
for f in decode.txt decode_ref.txt; do
    label=synthetic; [ "$f" = decode_ref.txt ] && label=$(basename "$DUMP_TRACE")
    printf '%-52s %8s MB/s\n' "read() pass, $label" "$(get $f read_MBps)"
    for pass in full skip scan scanskip; do
        case $pass in
            full) name="full decode (next)" ;;
            skip) name="skip_backtraces (next)" ;;
            scan) name="full decode (scan)" ;;
            scanskip) name="skip_backtraces (scan)" ;;
        esac
        printf '%-52s %8s MB/s %8s Mev/s  %5sx read  (by CPU time: %s Mev/s)\n' "$name, $label" \
            "$(get $f ${pass}_MBps)" "$(get $f ${pass}_Meps)" "$(get $f ${pass}_x_read)" \
            "$(per_cpu "$(get $f events)" "$(get $f ${pass}_cpu_s)")"
    done
done
for f in write.txt write_sink.txt; do
    name="write, to file"; [ $f = write_sink.txt ] && name="write, counting sink (no I/O)"
    printf '%-52s %8s MB/s %8s Mev/s  (by CPU time: %s Mev/s)\n' "$name" "$(get $f write_MBps)" \
        "$(get $f write_Meps)" "$(per_cpu "$(get $f write_events)" "$(get $f write_cpu_s)")"
done
printf '%-52s %s s (%s MB/s of text, %s bytes)\n' "memtrace dump $(basename "$DUMP_TRACE") | wc -c" \
    "$(get dump.txt dump_median_s)" "$(get dump.txt dump_MBps)" "$(get dump.txt dump_bytes)"
printf '%-52s %s s\n' "head -c N /dev/zero | wc -c" "$(get dump.txt head_median_s)"
printf '%-52s %s s\n' "dd bs=128K (same bytes) | wc -c" "$(get dump.txt dd_median_s)"
printf '%-52s %sx (dump / dd: %sx)\n' "dump / head" "$(get dump.txt dump_x_head)" "$(get dump.txt dump_x_dd)"
printf '%-52s %s KiB (partial run: %s)\n' "peak RSS memtrace dump, synthetic trace" \
    "$(get dump.txt dump_big_rss_kib)" "$(get dump.txt dump_big_partial)"
printf '%-52s %s KiB\n' "peak RSS bench_decode full decode, synthetic trace" "$(get dump.txt decode_big_rss_kib)"
echo "toolkit speed relative to plain full decoding (1.00 = as fast; by best / median wall time, median CPU time):"
sed -n '2,8p' "$logdir/tools.txt"
echo "deep recursion (bench_deep.sh, 10^10 frames in 1.5 MB): the slowest command, seconds:"
grep '^RESULT deep_' "$logdir/deep.txt" | sort -k3 -g | tail -n 1 | sed 's/^RESULT deep_/  /; s/_s / /'
echo "stacks that share all but their root (bench_deep.sh, 4 M prefixes in 52 KB): seconds, peak MB:"
for c in pprof speedscope report; do
    printf '  %-12s %s s, %s MB\n' "$c" "$(get deep.txt roots_${c}_s)" "$(get deep.txt roots_${c}_mb)"
done
echo "hash flooding (bench_flood.sh, names 14 MB, codes 5 MB, jumping ids, crowded pairs): the slowest command, seconds:"
grep '^RESULT flood_' "$logdir/flood.txt" | sort -k3 -g | tail -n 1 | sed 's/^RESULT flood_/  /; s/_s / /'
echo "decoding floor (bench_walk, synthetic trace):"
sed -n '2,4p' "$logdir/walk.txt"
echo "decoder instructions (bench_icount.sh, 16 MB synthetic trace; bench_decode's callback included):"
grep -v '^RESULT' "$logdir/icount.txt" | sed -n '2,3p;/valgrind/p'
echo "logs: $logdir"
