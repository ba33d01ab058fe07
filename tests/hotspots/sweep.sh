#!/usr/bin/env bash
# The heavy-hitters table of `memtrace hotspots` when it fills: the command
# drops counters lazily (a calendar of counters by the sweep at which their
# misses reach their hits); the reference visits every counter at every
# sweep. ORACLE is the same CLI built with MT_HOTSPOTS_ORACLE, which does the
# reference's pass and reports its number of sweeps on stderr. On synthetic
# traces of several sizes and seeds (GEN: the benchmark's generator), with and
# without --hide, the two reports must be byte-identical, and the traces must
# have filled the table often enough for that to mean something.
#   sweep.sh --cli MEMTRACE --check ORACLE --gen GEN_TRACE
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup hs-sweep CHECK GEN

for spec in 2:1 4:2 8:3; do
  mb=${spec%:*} seed=${spec#*:}
  tr=$T/s$seed.ctf
  "$GEN" "$tr" "$mb" "$seed" > /dev/null || { fail "gen_trace $mb MB seed $seed"; continue; }
  for hide in "" "--hide f1"; do
    what="$mb MB seed $seed${hide:+ $hide}"
    # shellcheck disable=SC2086   # $hide: zero or two words
    "$CHECK" hotspots $hide "$tr" > "$T/want" 2> "$T/want.table" ||
      { fail "$what: oracle exit $?"; head -n 5 "$T/want.table"; continue; }
    # shellcheck disable=SC2086
    "$CLI" hotspots $hide "$tr" > "$T/got" 2> "$T/got.table" ||
      { fail "$what: exit $?"; head -n 5 "$T/got.table"; continue; }
    sweeps=$(sed -n '1s/^hotspots table: \([0-9]*\) sweeps, .*/\1/p' "$T/want.table")
    if [ -z "$sweeps" ] || [ "$sweeps" -lt 100 ]; then
      fail "$what: the table filled only '$sweeps' times (the test needs 100 or more)"
    elif ! cmp -s "$T/want.table" "$T/got.table"; then
      fail "$what: the table differs from the reference's sweep's ($sweeps sweeps)"
      diff "$T/want.table" "$T/got.table" | head -n 10
    elif ! cmp -s "$T/want" "$T/got"; then
      fail "$what: the report differs from the reference's sweep's ($sweeps sweeps)"
    else
      pass "$what: same table as the reference's sweep ($sweeps sweeps, $(($(wc -l < "$T/got.table") - 1)) counters)"
    fi
  done
done
finish
