#!/usr/bin/env bash
# The heavy-hitters table when a trace crowds one of its buckets: the
# reference's bucket function is linear in the function numbers, and a
# bucket whose walk grows long is indexed by a keyed map (cmd_hotspots.c,
# hh_find). gen_collide writes traces where 3 000 pairs of bucket 0 come
# and go among pairs seen once, which fill the table and sweep it. ORACLE is the CLI built with MT_HOTSPOTS_ORACLE: the
# reference's pass over every counter, and plain chains, never indexed. The
# tables (bucket by bucket, in the reference's order) and the reports must
# be byte-identical, bucket 0 must have held far more counters than a walk
# is allowed, and the table must have filled often.
#   collide.sh --cli MEMTRACE_DUMP --check ORACLE --gen GEN_COLLIDE
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup hs-collide CHECK GEN

for seed in 1 2 3; do
  tr=$T/c$seed.ctf
  "$GEN" "$tr" "$seed" || { fail "gen_collide seed $seed"; continue; }
  # (unfiltered: a filter numbers the functions as its objects come, and
  # bucket 0 would no longer be crowded)
  what="seed $seed"
  "$CHECK" hotspots "$tr" > "$T/want" 2> "$T/want.table" ||
    { fail "$what: oracle exit $?"; head -n 5 "$T/want.table"; continue; }
  "$CLI" hotspots "$tr" > "$T/got" 2> "$T/got.table" ||
    { fail "$what: exit $?"; head -n 5 "$T/got.table"; continue; }
  sweeps=$(sed -n '1s/^hotspots table: \([0-9]*\) sweeps, .*/\1/p' "$T/want.table")
  in0=$(awk 'NR > 1 && $1 == 0' "$T/want.table" | wc -l)
  if [ -z "$sweeps" ] || [ "$sweeps" -lt 5 ]; then
    fail "$what: the table filled only '$sweeps' times (the test needs 5 or more)"
  elif [ "$in0" -lt 200 ]; then
    fail "$what: bucket 0 holds $in0 counters at the end (the test needs 200 or more)"
  elif ! cmp -s "$T/want.table" "$T/got.table"; then
    fail "$what: the table differs from the reference's ($sweeps sweeps)"
    diff "$T/want.table" "$T/got.table" | head -n 10
  elif ! cmp -s "$T/want" "$T/got"; then
    fail "$what: the report differs from the reference's"
  else
    pass "$what: same table as the reference's ($sweeps sweeps, $in0 counters in bucket 0)"
  fi
done
finish
