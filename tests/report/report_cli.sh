#!/usr/bin/env bash
# report.cli: `memtrace report` without a browser. The page is one
# self-contained file (no external script, style, image or URL fetched);
# its data (the JSON the page reads) gives top's totals (allocated, live at
# peak, live at end) and live's peak on the known trace and a corpus trace,
# with filters (--source, --hide) too; the flame graph of a time window
# against `memtrace flamegraph --from --to` (window_check.js); the default
# output name; usage errors (exit 2), bad traces and unwritable output
# (exit 1).
#   report_cli.sh CLI GEN_KNOWN CORPUS_DIR
set -u
export LC_ALL=C
CLI=$1 GEN=$2 CORPUS=${MEMTRACE_CORPUS:-$3}
HERE=$(cd "$(dirname "$0")" && pwd)
export HERE
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-report-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
"$GEN" "$T/known.ctf" || { echo "cannot write the known trace"; exit 1; }

expect() {  # expect RC DESCRIPTION ARGS...
  local want=$1 what=$2; shift 2
  "$CLI" "$@" > "$T/out" 2> "$T/err"
  local rc=$?
  [ $rc -eq "$want" ] || { fail "$what: memtrace $* exited $rc, expected $want"; cat "$T/err"; return 1; }
  echo "ok   $what"
}
# sums PAGE.html: "alloc peak end peak_bytes peak_time_us" in bytes, from the page's data
# the page's data blocks: gzipped JSON in base64 (src/report/html.c)
GET='const get = (file, id) => { const s = require("fs").readFileSync(file, "utf8");
  const m = s.match(new RegExp(`<script type="application/x-memtrace" id="${id}">([^<]*)</script>`));
  return JSON.parse(require("zlib").gunzipSync(Buffer.from(m[1], "base64")).toString()); };'
sums() {
  node -e "$GET"'
    const D = get(process.argv[1], "memtrace-data"), B = get(process.argv[1], "memtrace-bins"),
          C = get(process.argv[1], "memtrace-classes");
    const sum = (v) => v.reduce((x, y) => x + y, 0);
    const N = D.nodes.depth.length, nf = D.frames.length / 3;
    for (const c of ["frame", "alloc", "peak", "end"]) if (D.nodes[c].length !== N) {
      console.error("node column " + c + " has " + D.nodes[c].length + " rows, not " + N); process.exit(1); }
    for (let i = 0; i < N; i++) { const d = D.nodes.depth[i], f = D.nodes.frame[i];
      if (i ? !(d >= 1 && d <= D.nodes.depth[i - 1] + 1 && f >= 0 && f < nf) : d !== 0) {
        console.error(`bad node ${i}: depth ${d}, frame ${f}`); process.exit(1); } }
    const a = sum(D.nodes.alloc), p = sum(D.nodes.peak), e = sum(D.nodes.end);
    const b = sum(B.n), sb = sum(B.site_bins);
    const sa = sum(D.sites.alloc), sp = sum(D.sites.peak), se = sum(D.sites.end);
    const W = Math.ceil(D.nbins / 32), R = require(process.env.HERE + "/window_check.js").remainders(D, B);
    if (B.mask.length !== B.node.length * W || R.length !== B.n.length ||
        D.sites.name.length * D.nbins !== B.site_bins.length) {
      console.error("bins of the wrong shape"); process.exit(1); }
    // the nonzero remainders: nodes in page order, none without bins
    for (let j = 0; j < B.node.length; j++)
      if (!(B.node[j] >= 0 && B.node[j] < N && (!j || B.node[j] > B.node[j - 1]) &&
            B.mask.slice(j * W, j * W + W).some((m) => m > 0))) {
        console.error(`bad binned node ${j}: ${B.node[j]}`); process.exit(1); }
    if (!R.every(([n, b, v]) => v !== 0 && b < D.nbins)) { console.error("a remainder of 0 samples"); process.exit(1); }
    const ca = sum(C.alloc), cp = sum(C.peak), ce = sum(C.end);
    if (ca !== a || cp !== p || ce !== e || sum(C.site) >= D.sites.name.length) {
      console.error(`site classes ${ca} ${cp} ${ce} vs tree ${a} ${p} ${e}`); process.exit(1); }
    if (b !== a || sb !== a || sa !== a || sp !== p || se !== e) {
      console.error(`tree ${a} ${p} ${e}, bins ${b} ${sb}, sites ${sa} ${sp} ${se} disagree`); process.exit(1); }
    const k = D.bytes_per_sample;
    console.log([a * k, p * k, e * k, D.peak_samples * k, D.peak_time_us].join(" "));' "$1"
}
# has_frame PAGE.html FUNCTION FILE LINE: the page has that frame
has_frame() {
  node -e "$GET"'
    const D = get(process.argv[1], "memtrace-data");
    const [fn, file, line] = process.argv.slice(2), S = D.strings, F = D.frames;
    for (let i = 0; i < F.length; i += 3)
      if (S[F[i]] === fn && S[F[i + 1]] === file && F[i + 2] === +line) process.exit(0);
    process.exit(1);' "$@"
}
same() {  # same DESCRIPTION A B
  awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * (b < 0 ? -b : b) + 1e-9) }' ||
    { fail "$1: $2 vs $3"; return 1; }
}
compare() {  # compare NAME TRACE [FILTERS...]: page data vs top --json and live --json
  local name=$1 tr=$2; shift 2
  expect 0 "$name: report" report "$@" "$tr" -o "$T/$name.html" || return
  read -r a p e pk pt < <(sums "$T/$name.html") || { fail "$name: page data unreadable"; return; }
  "$CLI" top --json "$@" "$tr" > "$T/top" && "$CLI" live --json "$@" "$tr" > "$T/live" ||
    { fail "$name: top/live failed"; return; }
  local tot; tot=$(grep -o '"total": {.*' "$T/top")
  num() { grep -o "\"$1\": [-0-9.e+]*" | head -1 | grep -o '[-0-9.e+]*$'; }
  same "$name allocated" "$a" "$(num allocated_bytes <<< "$tot")" &&
  same "$name live at peak" "$p" "$(num peak_bytes <<< "$tot")" &&
  same "$name live at end" "$e" "$(num end_bytes <<< "$tot")" &&
  same "$name peak" "$pk" "$(num peak_bytes < "$T/live")" &&
  same "$name peak time" "$(awk -v t="$pt" 'BEGIN { printf "%.6f", t / 1e6 }')" "$(num peak_time_s < "$T/live")" &&
  echo "ok   $name: allocated $a, at peak $p, at end $e, peak $pk at $pt us as top and live"
}

# window NAME TRACE FIRST_BIN END_BIN: the flame graph of the page made by
# compare NAME for the window of bins FIRST_BIN .. END_BIN - 1 (its values
# derived from the page's data by window_check.js) against `memtrace
# flamegraph --lines --from A --to B` with A and B those bins' edges (and
# the whole trace's, to know which frames it can be compared on), and every
# frame at least a pixel wide against `memtrace speedscope` for the window
window() {
  local name=$1 tr=$2 b0=$3 b1=$4 w from to
  w=$(node -e "$GET"'console.log(get(process.argv[1], "memtrace-data").bin_width_us)' "$T/$name.html") ||
    { fail "$name: page data unreadable"; return; }
  from=$(awk -v b="$b0" -v w="$w" 'BEGIN { printf "%.6f", b * w / 1e6 }')
  to=$(awk -v b="$b1" -v w="$w" 'BEGIN { printf "%.6f", b * w / 1e6 }')
  "$CLI" flamegraph --lines "$tr" > "$T/whole.folded" &&
  "$CLI" flamegraph --lines --from "$from" --to "$to" "$tr" > "$T/window.folded" &&
  "$CLI" speedscope --from "$from" --to "$to" "$tr" -o "$T/window.speedscope.json" ||
    { fail "$name: flamegraph or speedscope failed"; return; }
  if node "$HERE/window_check.js" "$T/$name.html" "$b0" "$b1" "$T/whole.folded" "$T/window.speedscope.json" \
       < "$T/window.folded" > "$T/check"; then
    sed "s/^/ok   $name: --from $from --to $to: /" "$T/check"
  else
    fail "$name: window --from $from --to $to:"; cat "$T/check"
  fi
}

compare known "$T/known.ctf"
compare known-major "$T/known.ctf" --source major
compare known-hide "$T/known.ctf" --hide new_node
has_frame "$T/known-hide.html" build_tree tree.c 70 || fail "--hide: build_tree frame"
node -e "$GET"'
  if (get(process.argv[1], "memtrace-data").strings.some((x) => x.includes("new_node"))) process.exit(1);' \
  "$T/known-hide.html" || fail "--hide: new_node still a name on the page"
has_frame "$T/known.html" new_node tree.c 40 || fail "no new_node frame without --hide"
TR=$CORPUS/traces/real-ocamlopt-1e-5.ctf
if [ -f "$TR" ]; then
  compare corpus "$TR"
  compare corpus-window "$TR" --from 0.1 --to 0.2
  window corpus "$TR" 20 50
  window corpus "$TR" 40 41
  # a bigger trace (84 thousand samples), whose deep frames hold too little
  # of the whole trace for a whole-trace threshold but not of a window
  compare ocamlopt "$CORPUS/traces/ref-example-ocamlopt.ctf"
  window ocamlopt "$CORPUS/traces/ref-example-ocamlopt.ctf" 10 20
  window ocamlopt "$CORPUS/traces/ref-example-ocamlopt.ctf" 40 41
  expect 1 "malformed trace" report "$CORPUS/malformed/bad-bt-flip-bucket.ctf" -o "$T/x.html"
  grep -q "memtrace report: " "$T/err" || fail "no message for a malformed trace"
  # skipped packets are reported once (the first pass), as by top
  BAD=$CORPUS/malformed/bad-dropped-packet.ctf
  expect 0 "skipped packets" report "$BAD" -o "$T/x.html"
  n=$(grep -c "skip" "$T/err"); "$CLI" top "$BAD" 2> "$T/err" > /dev/null
  [ "$n" -gt 0 ] && [ "$n" = "$(grep -c "skip" "$T/err")" ] || fail "report gave $n skipped-packet messages, top $(grep -c skip "$T/err")"
else
  fail "corpus trace $TR missing"
fi

# self-contained: nothing the browser would fetch
for f in "$T"/known.html "$T"/corpus.html; do
  [ -f "$f" ] || continue
  if grep -qiE '<(script|img|iframe)[^>]* src=|<link |url\(|@import|https?://[^"]*\.(js|css)' "$f"; then
    fail "$f refers to an external resource"
  fi
done
echo "ok   pages are self-contained"

cp "$T/known.ctf" "$T/named.trace.ctf"
expect 0 "default output name" report "$T/named.trace.ctf"
[ -s "$T/named.trace.html" ] || fail "no $T/named.trace.html"
grep -qx "memtrace report: wrote $T/named.trace.html" "$T/err" || fail "the default output name not said"
# only .ctf is replaced: x.trace and x.TRACE were both x.html
cp "$T/named.trace.ctf" "$T/other.trace"
expect 0 "default output name, not .ctf" report "$T/other.trace"
[ -s "$T/other.trace.html" ] && [ ! -e "$T/other.html" ] || fail "other.trace: not other.trace.html"
expect 0 "standard output" report "$T/known.ctf" -o -
grep -q "</html>" "$T/out" || fail "-o -: no page on standard output"
expect 2 "no TRACE" report
expect 2 "unknown option" report --bogus "$T/known.ctf"
expect 2 "two traces" report "$T/known.ctf" "$T/known.ctf"
expect 2 "stdin" report -
expect 2 "bad filter" report --to never "$T/known.ctf"
expect 1 "missing file" report "$T/none.ctf" -o "$T/x.html"
grep -qF "$T/none.ctf" "$T/err" || fail "missing file not named"
expect 1 "unwritable output" report "$T/known.ctf" -o "$T/no/dir.html"
grep -qF "$T/no/dir.html" "$T/err" || fail "unwritable output not named"
[ -w /dev/full ] && expect 1 "full disk" report "$T/known.ctf" -o /dev/full
expect 0 "--help" report --help
for needle in "Usage: memtrace report" "flame graph" "--hide FUNC" "Exit status"; do
  grep -qF -- "$needle" "$T/out" || fail "--help lacks '$needle'"
done
[ $FAILS -eq 0 ] && echo "all report cli tests passed" || { echo "$FAILS failure(s)"; exit 1; }
