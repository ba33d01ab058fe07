#!/usr/bin/env bash
# Tests of `memtrace subsample`. Arguments:
#   --cli PATH              the memtrace binary
#   --check PATH            the subsample_check program (reads traces)
#   --default-corpus DIR    corpus used when MEMTRACE_CORPUS is unset
#   SECTION                 factor1 | factor10 | seed | window | args | damaged
# A missing corpus is a failure, never a skip.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup subsample CHECK
require_corpus

# sub ARGS... : run `memtrace subsample ARGS` (see run in lib.sh)
sub() { run subsample "$@"; }

section_factor1() {
  # FACTOR 1 keeps every sample, so every allocation survives with its id:
  # the dumps must be identical.
  local t
  for t in synth-basic real-ocamlopt-1e-5 ref-test-ocamlopt real-external \
           synth-ids synth-time synth-packets synth-emptystack \
           ref-example-lists_and_sets; do
    need "$TR/$t.ctf" || continue
    sub --seed 1 "$TR/$t.ctf" "$T/o.ctf" 1
    if [ "$RC" -ne 0 ]; then fail "$t: factor 1: exit $RC"; show_err; continue; fi
    "$CLI" dump "$TR/$t.ctf" > "$T/a.txt" 2> /dev/null
    "$CLI" dump "$T/o.ctf" > "$T/b.txt" 2> "$T/err"
    if [ $? -ne 0 ]; then fail "$t: factor 1: dump of the output failed"; show_err
    elif ! cmp -s "$T/a.txt" "$T/b.txt"; then
      fail "$t: factor 1: dump differs from the input's"
      diff "$T/a.txt" "$T/b.txt" | head -n 6 | cut -c1-160 | sed 's/^/    | /'
    elif ! checker rate "$TR/$t.ctf" "$T/o.ctf" 1 || ! checker valid "$T/o.ctf"; then
      fail "$t: factor 1: output checks"
    else pass "$t: factor 1 reproduces every event"; fi
  done
  # v003 in, v003 out: the reference writer's file comes back bit for bit.
  local v3=$TR/ref-head-ocamlopt-v3.ctf
  if need "$v3"; then
    sub --format-version 3 "$v3" "$T/o3.ctf" 1
    if [ "$RC" -ne 0 ]; then fail "v3 factor 1: exit $RC"; show_err
    elif ! cmp -s "$v3" "$T/o3.ctf"; then fail "v3 factor 1 --format-version 3: not identical"
    else pass "v3 factor 1 --format-version 3: identical to the input"; fi
  fi
  # synth-abuse: allocations with nsamples <= 0 have no sample to keep, and
  # events naming them (or collected ids) go with them.
  if need "$TR/synth-abuse.ctf"; then
    sub "$TR/synth-abuse.ctf" "$T/o.ctf" 1
    if [ "$RC" -ne 0 ]; then fail "synth-abuse: exit $RC"; show_err
    elif ! checker valid "$T/o.ctf"; then fail "synth-abuse: output not consistent"
    else pass "synth-abuse: output consistent"; fi
  fi
}

section_factor10() {
  local in=$TR/real-external.ctf seed
  need "$in" || return
  for seed in 1 2 3 ""; do
    if [ -n "$seed" ]; then sub --seed "$seed" "$in" "$T/o.ctf" 10
    else sub "$in" "$T/o.ctf" 10; fi
    local d="real-external factor 10 (seed ${seed:-default})"
    if [ "$RC" -ne 0 ]; then fail "$d: exit $RC"; show_err; continue; fi
    if [ -s "$T/out" ] || [ -s "$T/err" ]; then fail "$d: unexpected output"; show_err; fi
    if ! checker rate "$in" "$T/o.ctf" 10; then fail "$d: sample rate / info"
    elif ! checker valid "$T/o.ctf"; then fail "$d: promote/collect consistency"
    elif ! checker samples "$in" "$T/o.ctf" 10; then fail "$d: kept samples"
    else pass "$d"; fi
  done
  # Huge nsamples (up to 2^33 and beyond) must be subsampled quickly.
  if need "$TR/synth-basic.ctf"; then
    sub --seed 7 "$TR/synth-basic.ctf" "$T/o.ctf" 3
    if [ "$RC" -ne 0 ]; then fail "synth-basic factor 3: exit $RC"; show_err
    elif ! checker valid "$T/o.ctf" || ! checker rate "$TR/synth-basic.ctf" "$T/o.ctf" 3; then
      fail "synth-basic factor 3: output checks"
    else pass "synth-basic factor 3 (huge sample counts)"; fi
  fi
  # --format-version 3 output reads back too.
  sub --seed 4 --format-version 3 "$in" "$T/o3.ctf" 10
  if [ "$RC" -ne 0 ]; then fail "factor 10 v3: exit $RC"; show_err
  elif ! checker valid "$T/o3.ctf" || ! checker samples "$in" "$T/o3.ctf" 10; then
    fail "factor 10 v3: output checks"
  else pass "factor 10 --format-version 3"; fi
}

section_seed() {
  local in=$TR/real-external.ctf
  need "$in" || return
  sub --seed 42 "$in" "$T/a.ctf" 10
  local rc1=$RC
  sub --seed=42 "$in" "$T/b.ctf" 10
  if [ "$rc1" -ne 0 ] || [ "$RC" -ne 0 ]; then fail "--seed 42: exit $rc1, $RC"; show_err
  elif ! cmp -s "$T/a.ctf" "$T/b.ctf"; then fail "--seed 42 twice: files differ"
  else pass "--seed 42 twice: identical files"; fi
  sub --seed 43 "$in" "$T/c.ctf" 10
  if [ "$RC" -ne 0 ]; then fail "--seed 43: exit $RC"; show_err
  elif cmp -s "$T/a.ctf" "$T/c.ctf"; then fail "--seed 42 and --seed 43 give the same file"
  else pass "different seeds: different files"; fi
  sub --seed 18446744073709551615 "$in" "$T/d.ctf" 10
  if [ "$RC" -ne 0 ]; then fail "--seed 2^64-1: exit $RC"; show_err
  else pass "--seed 2^64-1 accepted"; fi
}

section_window() {
  local in=$TR/synth-time.ctf w
  need "$in" || return
  for w in "0 1" "10 5000" "100 200 3" "-5 2" "5000 99999"; do
    set -- $w
    local f=${3:-1}
    sub --seed 9 "$in" "$T/o.ctf" "$f" "$1" "$2"
    local d="synth-time window [$1, $2) factor $f"
    if [ "$RC" -ne 0 ]; then fail "$d: exit $RC"; show_err; continue; fi
    if ! checker valid "$T/o.ctf"; then fail "$d: output not consistent"; continue; fi
    if ! checker window "$in" "$T/o.ctf" "$1" "$2" "$f"; then fail "$d"
    else pass "$d"; fi
  done
}

section_args() {
  local in=$TR/synth-basic.ctf
  need "$in" || return
  usage_errors subsample "$T/o.ctf" \
    "no arguments|" \
    "IN only|$in" \
    "no FACTOR|$in $T/o.ctf" \
    "FACTOR 0|$in $T/o.ctf 0" \
    "FACTOR negative|$in $T/o.ctf -3" \
    "FACTOR not a number|$in $T/o.ctf ten" \
    "FACTOR fractional|$in $T/o.ctf 1.5" \
    "FACTOR with junk|$in $T/o.ctf 10x" \
    "FACTOR empty|$in $T/o.ctf ''" \
    "FACTOR too large|$in $T/o.ctf 99999999999999999999" \
    "START without END|$in $T/o.ctf 10 5" \
    "START not a number|$in $T/o.ctf 10 a 5" \
    "END not a number|$in $T/o.ctf 10 0 5.5" \
    "an empty window|$in $T/o.ctf 1 3 3" \
    "START after END|$in $T/o.ctf 1 5 3" \
    "too many arguments|$in $T/o.ctf 10 0 5 6" \
    "--seed without value|$in $T/o.ctf 10 --seed" \
    "--seed not a number|--seed abc $in $T/o.ctf 10" \
    "--seed negative|--seed -1 $in $T/o.ctf 10" \
    "--format-version 4|--format-version 4 $in $T/o.ctf 10" \
    "unknown option|--frobnicate $in $T/o.ctf 10" \
    "OUT same as IN|$in $in 10"
  # OUT naming IN through another path must not truncate IN either.
  in_out_errors subsample "$in" 10
  sub --help
  if [ "$RC" -ne 0 ] || ! grep -q 'Usage: memtrace subsample' "$T/out" ||
     ! grep -q -- '--seed' "$T/out" || [ -s "$T/err" ]; then
    fail "--help: expected usage on stdout, exit 0"
  else pass "--help"; fi
  cp "$in" "$T/-in.ctf"
  cd "$T" && sub -- -in.ctf -out.ctf 2 -1 5; cd - > /dev/null
  if [ "$RC" -ne 0 ] || [ ! -s "$T/-out.ctf" ]; then fail "-- before names starting with -: exit $RC"
  else pass "-- before names starting with -"; fi
}

section_damaged() {
  local m=$CORPUS/malformed t
  # Damage after some events: what comes before it is written, exit 1.
  for t in bad-event-code bad-collect-delta bad-header-flip-allocid-end \
           bad-trailing-garbage; do
    need "$m/$t.ctf" || continue
    sub --seed 1 "$m/$t.ctf" "$T/o.ctf" 1
    local d="$t: factor 1"
    rejected_at_offset "$d" "$t.ctf" || continue
    "$CLI" dump "$m/$t.ctf" > "$T/a.txt" 2> /dev/null
    "$CLI" dump "$T/o.ctf" > "$T/b.txt" 2> "$T/err"
    if [ $? -ne 0 ]; then fail "$d: output is not a valid trace"; show_err
    elif ! cmp -s "$T/a.txt" "$T/b.txt"; then
      fail "$d: output differs from the events before the damage"
    else pass "$d: exit 1, $(wc -l < "$T/b.txt") events before the damage kept"; fi
  done
  # Damage in the trace info: nothing can be done, exit 1.
  bad_headers subsample 2
}

case "$SECTION" in
  factor1|factor10|seed|window|args|damaged) "section_$SECTION" ;;
  *) die "unknown section '$SECTION'" ;;
esac
finish
