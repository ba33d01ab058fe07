#!/usr/bin/env bash
# `memtrace diff` tests: exact signed deltas between the synthetic trace of
# tests/analysis/synth.h and the same trace with 3x the samples, ordering,
# usage errors (exit 2), --help, bad traces (exit 1).
#   diff_test.sh --cli MEMTRACE --gen GEN_SYNTH
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup diff GEN
"$GEN" "$T/a.ctf" 1 && "$GEN" "$T/b.ctf" 3 || die "cannot write synthetic traces"

expect 0 "text" diff "$T/a.ctf" "$T/b.ctf"
has "totals" "allocated +2.22 KiB, live at end +1.59 KiB"
has "first row" "   +1.56 KiB       800 B    2.34 KiB    +1.56 KiB  Stdlib.Array.make"
has "alloc_b row" "      +256 B       128 B       384 B        +32 B  alloc_b"
expect 0 "reverse, json, sort end" diff --json --sort end "$T/b.ctf" "$T/a.ctf"
has "negative" '"delta_allocated_bytes": -1600, "base_end_bytes": 2400, "new_end_bytes": 800, "delta_end_bytes": -1600}'
grep -n '"site"' "$T/out" | sed -n 2p | grep -q alloc_b || fail "--sort end order"
expect 0 "filter" diff --in alloc_b --json "$T/a.ctf" "$T/b.ctf"
has "filtered" '"total": {"base_allocated_bytes": 128, "new_allocated_bytes": 384, "delta_allocated_bytes": 256,'
expect 2 "one trace" diff "$T/a.ctf"
expect 2 "three traces" diff "$T/a.ctf" "$T/a.ctf" "$T/a.ctf"
expect 2 "bad option" diff --bogus "$T/a.ctf" "$T/b.ctf"
expect 2 "bad sort" diff --sort peak "$T/a.ctf" "$T/b.ctf"
expect 1 "missing file" diff "$T/a.ctf" "$T/none.ctf"
grep -qF "none.ctf" "$T/err" || fail "missing file not named"
# A skipped packet is named by its trace and offset (the reference's words
# alone do not say which of the two traces it was in).
size=$(wc -c < "$T/b.ctf")
head -c $((size - 3)) "$T/b.ctf" > "$T/cut.ctf"
expect 0 "a cut trace" diff "$T/a.ctf" "$T/cut.ctf"
grep -qE "^memtrace diff: $T/cut.ctf: offset [0-9]+: skipping truncated packet\$" "$T/err" ||
  { fail "skipped packet not named by its trace"; cat "$T/err"; }
help_lists diff "Usage: memtrace diff" "Output columns:" "--live-at" "Exit status"
finish
