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
norm() { sed '/ at /s/ ([^()]*)$//' "$1" | sort; }
samples() { sed -n 's/^ *\([0-9]*\) samples of.*/\1/p' | head -1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

for name in ref-test-ocamlopt real-external real-fork synth-basic; do
  t=$corpus/traces/$name.ctf
  ref=$tmp/ref.txt
  if [ -f "$corpus/traces/$name.hotspots.txt" ]; then cp "$corpus/traces/$name.hotspots.txt" "$ref"
  else xz -dc "$corpus/traces/$name.hotspots.txt.xz" > "$ref"; fi
  "$cli" hotspots --min-size 0 "$t" > "$tmp/all.txt"
  check cmp -s <(norm "$ref") <(norm "$tmp/all.txt")
  all=$(samples < "$ref")
  sum=0
  for src in minor major external; do
    s=$("$cli" hotspots --source $src "$t" | samples)
    sum=$((sum + s))
  done
  check [ "$sum" = "$all" ]
  "$cli" hotspots --from 0 --to 1000000 "$t" > "$tmp/w.txt"
  check cmp -s <(norm "$ref") <(norm "$tmp/w.txt")
done
t=$corpus/traces/ref-test-ocamlopt.ctf
check [ "$("$cli" hotspots "$t" | grep -c ' at Stdlib')" -gt 0 ]
check [ "$("$cli" hotspots --hide Stdlib "$t" | grep -c ' at Stdlib')" = 0 ]
check [ "$("$cli" hotspots --hide Stdlib "$t" | grep -c ' at ')" -gt 0 ]
check [ "$("$cli" hotspots --min-size 1e12 "$t" | samples)" = 0 ]
# live at end: some of the samples, not all
live=$("$cli" hotspots --live-at end "$t" | samples)
check [ "$live" -gt 0 ]
check [ "$live" -lt "$(samples < "$corpus/traces/ref-test-ocamlopt.hotspots.txt")" ]
"$cli" hotspots --live-at bogus "$t" > /dev/null 2>&1
check [ $? = 2 ]
"$cli" hotspots --min-size > /dev/null 2>&1
check [ $? = 2 ]
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
