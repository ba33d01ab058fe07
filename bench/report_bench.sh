#!/usr/bin/env bash
# report_bench.sh - the figures of docs/REPORT.md's "Size and speed" table
# for `memtrace report`: for each trace, its size, the report's wall time
# and peak RSS (GNU time), the page's size and its open time in headless
# chromium (bench/report_load.js: median, min and max of RUNS runs).
#   bench/report_bench.sh MEMTRACE TRACE... (environment: RUNS, default 5;
#   OUT, the directory for the pages, default a temporary one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cli=$1; shift
runs=${RUNS:-5}
[ -x /usr/bin/time ] || { echo "needs GNU time (/usr/bin/time, Debian package time)"; exit 1; }
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/report-bench.XXXXXX")}
mkdir -p "$out"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
printf '%-28s %10s %10s %10s %10s %s\n' trace "trace MB" "report s" "RSS MB" "page MB" "open ms: median (min-max), complete median"
for tr in "$@"; do
    page=$out/$(basename "${tr%.*}").html
    /usr/bin/time -f '%e %M' -o "$out/time" "$cli" report "$tr" -o "$page" 2> "$out/err" ||
        { cat "$out/err"; exit 1; }
    read -r secs kib < "$out/time"
    res=$(node "$here/report_load.js" "$page" "$runs" | sed -n 's/^RESULT //p')
    set -- $res "$@"
    # open_ms_median M min A max B complete_ms_median C script_ms_median S page_mb P
    printf '%-28s %10.1f %10s %10.0f %10s %s (%s-%s), %s\n' "$(basename "$tr")" \
        "$(awk -v b="$(stat -c %s "$tr")" 'BEGIN { print b / 1e6 }')" "$secs" \
        "$(awk -v k="$kib" 'BEGIN { print k * 1024 / 1e6 }')" "${12}" "$2" "$4" "$6" "$8"
    shift 12
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); pages in $out"
