#!/usr/bin/env bash
# `memtrace top` tests: exact numbers on the synthetic trace of
# tests/analysis/synth.h, totals equal to `memtrace info`'s samples / rate *
# 8 on a corpus trace, usage errors (exit 2), --help, bad traces (exit 1).
#   top_test.sh --cli MEMTRACE --gen GEN_SYNTH --default-corpus DIR
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup top GEN
"$GEN" "$T/s.ctf" || die "cannot write synthetic trace"

expect 0 "text report" top "$T/s.ctf"
has "header totals" "Allocated 1.11 KiB (71 samples) at 4 sites; live at peak (0.000600 s): 976 B; live at end: 816 B"
has "array row" "      800 B  ±14%  70.4%       800 B       800 B       50  Stdlib.Array.make"
has "alloc_a row" "      176 B  ±30%  15.5%       160 B         0 B       11  alloc_a"
has "alloc_b row" "      128 B  ±35%  11.3%        16 B        16 B        8  alloc_b"
has "inlined row" "       32 B  ±71%   2.8%         0 B         0 B        2  inl_inner"

expect 0 "json" top --json --sort end "$T/s.ctf"
has "json total" '"total": {"allocated_bytes": 1136, "allocated_rse": 0.118678, "percent": 100, "peak_bytes": 976, "peak_rse": 0.128037, "end_bytes": 816'
has "json array" '{"site": "Stdlib.Array.make", "allocated_bytes": 800,'
[ "$(grep -n '"site"' "$T/out" | head -2 | tail -1 | grep -c alloc_b)" = 1 ] || fail "--sort end: alloc_b second"

expect 0 "by line, hide, limit" top --by line --hide Array --limit 1 "$T/s.ctf"
has "hidden wrapper" "      976 B  ±13%  85.9%       960 B       800 B       61  alloc_a (a.ml:10)"
has "limit" "... 2 more sites (160 B allocated; --limit 0 shows all)"

expect 0 "filters" top --source major --live-at end --json "$T/s.ctf"
has "filtered total" '"allocated_bytes": 800, '
expect 0 "live-at peak" top --live-at=peak --json "$T/s.ctf"
has "peak total" '"total": {"allocated_bytes": 976,'

# Totals agree with `memtrace info`: samples / rate * 8.
trace=$CORPUS/traces/real-ocamlopt-1e-5.ctf
if need "$trace"; then
  expect 0 "corpus json" top --json "$trace"
  got=$(grep -o '"total": {"allocated_bytes": [0-9.e+]*' "$T/out" | grep -o '[0-9.e+]*$')
  "$CLI" info --json "$trace" > "$T/info" || fail "info failed"
  want=$(grep -o '"total_alloc": [0-9.e+]*' "$T/info" | grep -o '[0-9.e+]*$')
  if awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-9 * b) }'; then
    pass "corpus total $got = info $want"
  else fail "total $got differs from info's $want"; fi
  expect 1 "malformed trace" top "$CORPUS/malformed/bad-bt-flip-bucket.ctf"
  grep -q "memtrace top: .*invalid location code" "$T/err" || fail "no message for malformed trace"
  expect 1 "truncated trace" top "$CORPUS/malformed/bad-truncated-mid-header.ctf"
  grep -q "memtrace top: .*offset" "$T/err" || { fail "no offset in message"; cat "$T/err"; }
fi

expect 2 "no TRACE" top
expect 2 "unknown option" top --bogus "$T/s.ctf"
expect 2 "two traces" top "$T/s.ctf" "$T/s.ctf"
expect 2 "bad --by" top --by file "$T/s.ctf"
expect 2 "bad --sort" top --sort size "$T/s.ctf"
expect 2 "bad --limit" top --limit -3 "$T/s.ctf"
grep -qF "memtrace top: --limit: expected a count >= 0 (0: all), got '-3'" "$T/err" || fail "--limit -3: message"
# a limit past what a long holds is all the sites (it was refused as not a count)
expect 0 "--limit past LONG_MAX" top --limit 99999999999999999999 "$T/s.ctf"
grep -q "more sites" "$T/out" && fail "--limit 99999999999999999999 left sites out"
# an empty value is named by its option, not by its position
expect 2 "empty value" top --limit "" "$T/s.ctf"
grep -qx "memtrace top: the argument after --limit is empty (a value or a file name cannot be)" "$T/err" ||
  { fail "empty value: message"; cat "$T/err"; }
expect 2 "bad filter" top --live-at soon "$T/s.ctf"
expect 2 "missing value" top "$T/s.ctf" --source
expect 2 "stdin" top -
expect 1 "missing file" top "$T/none.ctf"
grep -qF "$T/none.ctf" "$T/err" || fail "missing file not named"
printf 'garbage' > "$T/g.ctf"
expect 1 "not a trace" top "$T/g.ctf"
help_lists top "Usage: memtrace top" "Output columns:" "--live-at" "--hide FUNC" "Exit status"
finish
