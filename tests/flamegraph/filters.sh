#!/usr/bin/env bash
# flamegraph with the shared filters, on corpus traces:
#  - a filter that keeps everything (--min-size 0) gives the reference output;
#  - --live-at end gives exactly --live-at-end's output;
#  - --source minor/major/external split the total weight without loss;
#  - --hide FUNC leaves no frame containing FUNC;
#  - --from/--to windows that cover the trace keep everything.
# Usage: filters.sh --cli MEMTRACE --default-corpus DIR
set -u
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    --default-corpus) corpus=${MEMTRACE_CORPUS:-$2}; shift 2 ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
done
[ -d "$corpus/traces" ] || { echo "FAIL: reference corpus not found at $corpus"; exit 1; }
pass=0 fail=0
check() { if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $*"; fi; }
total() { awk '{s += $NF} END {print s + 0}'; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for name in ref-test-ocamlopt real-external real-fork synth-basic; do
  t=$corpus/traces/$name.ctf
  ref=$tmp/ref.txt
  if [ -f "$corpus/traces/$name.flamegraph.txt" ]; then cp "$corpus/traces/$name.flamegraph.txt" "$ref"
  else xz -dc "$corpus/traces/$name.flamegraph.txt.xz" > "$ref"; fi
  "$cli" flamegraph --min-size 0 "$t" > "$tmp/all.txt"
  check cmp -s "$ref" "$tmp/all.txt"
  "$cli" flamegraph --live-at-end "$t" > "$tmp/a.txt"
  "$cli" flamegraph --live-at end "$t" > "$tmp/b.txt"
  check cmp -s "$tmp/a.txt" "$tmp/b.txt"
  sum=0
  for src in minor major external; do
    s=$("$cli" flamegraph --source $src "$t" | total)
    sum=$((sum + s))
  done
  check [ "$sum" = "$(total < "$ref")" ]
  "$cli" flamegraph --from 0 --to 1000000 "$t" > "$tmp/w.txt"
  check cmp -s "$ref" "$tmp/w.txt"
done
t=$corpus/traces/ref-test-ocamlopt.ctf
check [ "$("$cli" flamegraph "$t" | grep -c Stdlib)" -gt 0 ]
check [ "$("$cli" flamegraph --hide Stdlib "$t" | grep -c Stdlib)" = 0 ]
check [ "$("$cli" flamegraph --hide Stdlib "$t" | wc -l)" -gt 0 ]
"$cli" flamegraph --live-at bogus "$t" > /dev/null 2>&1
check [ $? = 2 ]
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
