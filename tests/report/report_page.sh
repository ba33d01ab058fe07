#!/usr/bin/env bash
# report.page: page_test.js in headless Chromium, the page's behaviour
# beyond its numbers (tooltip, chart drag and scales, labels, the table's
# note and headers, long trace info, empty traces, no DecompressionStream,
# a page that arrives slowly, the Content-Security-Policy) on corpus traces;
# the pages and screenshots (page-NAME.html, page-NAME.png) stay in OUTDIR,
# the build directory.
#   report_page.sh CLI CORPUS_DIR OUTDIR
set -u
CLI=$1 CORPUS=${MEMTRACE_CORPUS:-$2} OUT=$3
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x /usr/bin/chromium ] || { echo "FAIL /usr/bin/chromium missing (apt-get install chromium)"; exit 1; }
[ -f "$HERE/node_modules/playwright-core/package.json" ] ||
  { echo "FAIL playwright-core missing: run 'npm ci --prefix tests/report'"; exit 1; }
for t in traces/real-ocamlopt-1e-5.ctf traces/ref-example-ocamlopt.ctf traces/synth-info-long.ctf \
         malformed/bad-info-only.ctf; do
  [ -f "$CORPUS/$t" ] || { echo "FAIL corpus trace $CORPUS/$t missing"; exit 1; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-page.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
export HOME=$T
exec node "$HERE/page_test.js" "$CLI" "$CORPUS" "$OUT"
