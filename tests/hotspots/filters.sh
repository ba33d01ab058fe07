#!/usr/bin/env bash
# hotspots with the shared filters, on corpus traces:
#  - a filter that keeps everything (--min-size 0) reports the reference's
#    lines (objects are counted when decided, so the order of equal lines,
#    of callers and of a function's equally busy sites may differ: compared
#    sorted, without the list of sites);
#  - --source minor/major/external split the sample total without loss;
#  - --live-at end keeps some samples but not all;
#  - --hide FUNC: no site of FUNC is reported;
#  - a filter nothing passes gives "0 samples"; a bad value exits 2.
# Usage: filters.sh --cli MEMTRACE --default-corpus DIR
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup hs-filters
require_corpus
norm() { sed '/ at /s/ ([^()]*)$//' "$1" | sort; }
samples() { sed -n 's/^ *\([0-9]*\) samples of.*/\1/p' | head -1; }

for name in ref-test-ocamlopt real-external real-fork synth-basic; do
  t=$TR/$name.ctf ref=$T/ref.txt
  ref_text "$TR/$name.hotspots.txt" > "$ref" || { fail "$name: no reference output"; continue; }
  "$CLI" hotspots --min-size 0 "$t" > "$T/all.txt"
  assert "$name: --min-size 0 reports the reference's lines" cmp -s <(norm "$ref") <(norm "$T/all.txt")
  assert "$name: --source minor + major + external = all samples" \
    [ "$(by_source hotspots "$t" samples)" = "$(samples < "$ref")" ]
  "$CLI" hotspots --from 0 --to 1000000 "$t" > "$T/w.txt"
  assert "$name: a window over the whole trace reports the reference's lines" \
    cmp -s <(norm "$ref") <(norm "$T/w.txt")
done
t=$TR/ref-test-ocamlopt.ctf
assert "Stdlib sites without --hide" [ "$("$CLI" hotspots "$t" | grep -c ' at Stdlib')" -gt 0 ]
assert "--hide Stdlib: no Stdlib site" [ "$("$CLI" hotspots --hide Stdlib "$t" | grep -c ' at Stdlib')" = 0 ]
assert "--hide Stdlib: other sites left" [ "$("$CLI" hotspots --hide Stdlib "$t" | grep -c ' at ')" -gt 0 ]
assert "--min-size 1e12: 0 samples" [ "$("$CLI" hotspots --min-size 1e12 "$t" | samples)" = 0 ]
# live at end: some of the samples, not all
live=$("$CLI" hotspots --live-at end "$t" | samples)
assert "--live-at end: some samples" [ "$live" -gt 0 ]
assert "--live-at end: not all samples" [ "$live" -lt "$(samples < "$TR/ref-test-ocamlopt.hotspots.txt")" ]
expect 2 "--live-at bogus" hotspots --live-at bogus "$t"
expect 2 "--min-size without value" hotspots --min-size
finish
