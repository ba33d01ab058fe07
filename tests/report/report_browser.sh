#!/usr/bin/env bash
# report.browser: report_test.js in headless Chromium on the known trace
# (tests/pprof/gen_known.c), two corpus traces and a trace written by
# `memtrace run` (the native profiler) of a small C program; the pages and
# screenshots (NAME.html, NAME.png) stay in OUTDIR, the build directory.
# PROFILER no: no profiler trace (sanitizer builds have no preload library).
#   report_browser.sh CLI GEN_KNOWN CORPUS_DIR OUTDIR yes|no
set -u
CLI=$1 GEN=$2 CORPUS=${MEMTRACE_CORPUS:-$3} OUT=$4 PROFILER=${5:-yes}
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x /usr/bin/chromium ] || { echo "FAIL /usr/bin/chromium missing (apt-get install chromium)"; exit 1; }
[ -f "$HERE/node_modules/playwright-core/package.json" ] ||
  { echo "FAIL playwright-core missing: run 'npm ci --prefix tests/report'"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-report.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
"$GEN" "$T/known.ctf" || { echo "FAIL cannot write the known trace"; exit 1; }
TR=$CORPUS/traces/real-ocamlopt-1e-5.ctf
# a bigger one (84 thousand samples, deep recursive stacks): frames too
# small for the bins of a whole-trace threshold, but not for a window's
BIG=$CORPUS/traces/ref-example-ocamlopt.ctf
[ -f "$TR" ] && [ -f "$BIG" ] || { echo "FAIL corpus trace $TR or $BIG missing"; exit 1; }
set -- "known=$T/known.ctf" "corpus=$TR" "ocamlopt=$BIG"
# a profiler trace: sort(1) of many lines allocates (one sample per 4 KiB)
seq 1 200000 | sed 's/$/ some text to sort/' > "$T/lines"
if [ "$PROFILER" = no ]; then
  echo "(no profiler trace: this build has no libmemtrace_preload.so)"
elif "$CLI" run --every 4k -o "$T/sort.ctf" -- sort "$T/lines" > /dev/null 2> "$T/run.err"; then
  set -- "$@" "profiler=$T/sort.ctf"
else
  echo "FAIL memtrace run failed:"; cat "$T/run.err"; exit 1
fi
export HOME=$T
exec node "$HERE/report_test.js" "$CLI" "$OUT" "$@"
