#!/usr/bin/env bash
# report_ab.sh - two builds of `memtrace report` side by side on one trace,
# interleaved so that both see the same load on a shared machine: the
# report's wall time and peak RSS (GNU time, ROUNDS runs of each, A then B),
# the page's size, and its open time in headless chromium
# (bench/report_load.js, RUNS runs per round, ROUNDS rounds alternating A
# and B); medians (min-max) over all runs, with the load average.
#   bench/report_ab.sh MEMTRACE_A MEMTRACE_B TRACE (environment: ROUNDS,
#   default 3; RUNS, default 3; OUT, the directory for the pages, default a
#   temporary one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
a=$1 b=$2 tr=$3
rounds=${ROUNDS:-3} runs=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time, Debian package time)"; exit 1; }
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/report-ab.XXXXXX")}
mkdir -p "$out"
median() { sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
  printf "%s (%s-%s)", m, v[1], v[NR] }'; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
: > "$out/A.report"; : > "$out/B.report"; : > "$out/A.open"; : > "$out/B.open"
for r in $(seq "$rounds"); do
    for x in A B; do
        cli=$a; [ $x = B ] && cli=$b
        /usr/bin/time -f '%e %M' -o "$out/time" "$cli" report "$tr" -o "$out/$x.html" 2> "$out/err" ||
            { cat "$out/err"; exit 1; }
        cat "$out/time" >> "$out/$x.report"
    done
done
for r in $(seq "$rounds"); do
    for x in A B; do
        node "$here/report_load.js" "$out/$x.html" "$runs" > "$out/load" || { cat "$out/load"; exit 1; }
        sed -n 's/^run [0-9]*: opened in \([0-9]*\) ms, complete in \([0-9]*\) ms.*/\1 \2/p' "$out/load" >> "$out/$x.open"
    done
    echo "round $r: load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
for x in A B; do
    cli=$a; [ $x = B ] && cli=$b
    echo "$x ($cli): report $(cut -d' ' -f1 "$out/$x.report" | median) s," \
         "$(awk '{ print $2 * 1024 / 1e6 }' "$out/$x.report" | median) MB peak RSS;" \
         "page $(awk -v s="$(stat -c %s "$out/$x.html")" 'BEGIN { printf "%.2f", s / 1e6 }') MB;" \
         "opens in $(cut -d' ' -f1 "$out/$x.open" | median) ms, complete $(cut -d' ' -f2 "$out/$x.open" | median) ms" \
         "($(wc -l < "$out/$x.open") runs)"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); pages in $out"
