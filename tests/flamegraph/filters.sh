#!/usr/bin/env bash
# flamegraph with the shared filters, on corpus traces:
#  - a filter that keeps everything (--min-size 0) gives the reference output;
#  - --live-at end gives exactly --live-at-end's output;
#  - --source minor/major/external split the total weight without loss;
#  - --hide FUNC leaves no frame containing FUNC;
#  - --from/--to windows that cover the trace keep everything.
# Usage: filters.sh --cli MEMTRACE --default-corpus DIR
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup fg-filters
require_corpus
# total: the sum of the folded stacks' weights, as an integer (print would
# give 8.59007e+09 for synth-basic)
total() { awk '{s += $NF} END {printf "%.0f\n", s}'; }

for name in ref-test-ocamlopt real-external real-fork synth-basic; do
  t=$TR/$name.ctf ref=$T/ref.txt
  ref_text "$TR/$name.flamegraph.txt" > "$ref" || { fail "$name: no reference output"; continue; }
  "$CLI" flamegraph --min-size 0 "$t" > "$T/all.txt"
  assert "$name: --min-size 0 gives the reference output" cmp -s "$ref" "$T/all.txt"
  "$CLI" flamegraph --live-at-end "$t" > "$T/a.txt"
  "$CLI" flamegraph --live-at end "$t" > "$T/b.txt"
  assert "$name: --live-at end = --live-at-end" cmp -s "$T/a.txt" "$T/b.txt"
  assert "$name: --source minor + major + external = all" \
    [ "$(by_source flamegraph "$t" total)" = "$(total < "$ref")" ]
  "$CLI" flamegraph --from 0 --to 1000000 "$t" > "$T/w.txt"
  assert "$name: a window over the whole trace gives the reference output" cmp -s "$ref" "$T/w.txt"
done
t=$TR/ref-test-ocamlopt.ctf
assert "Stdlib frames without --hide" [ "$("$CLI" flamegraph "$t" | grep -c Stdlib)" -gt 0 ]
assert "--hide Stdlib: no Stdlib frame" [ "$("$CLI" flamegraph --hide Stdlib "$t" | grep -c Stdlib)" = 0 ]
assert "--hide Stdlib: other stacks left" [ "$("$CLI" flamegraph --hide Stdlib "$t" | wc -l)" -gt 0 ]
expect 2 "--live-at bogus" flamegraph --live-at bogus "$t"
finish
