#!/usr/bin/env bash
# Objects that outlive the scan's ring of recent ids go to a table of older
# survivors, hashed with a random seed of each process (util/hash.h); v003
# ids may jump far past the ring (ring_jump in analysis/scan.c). gen_survivors
# writes the same events twice, with ids one after the other (DENSE) and
# with ids jumping by more than the ring after every 300 allocations (JUMP,
# where every long-lived object goes through that table). Each report must
# be the same for both, byte for byte, and the same in a second run: the
# objects still live at the end are decided in an order the seed must not
# change (today's reports break their ties by name or by order of
# allocation, so that order would show only if one of them changed). A
# ring that loses or keeps a survivor when the ids jump fails here.
#   survivors.sh --cli MEMTRACE --gen GEN_SURVIVORS
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup survivors GEN

cmds=("top" "top --live-at end" "live" "flamegraph" "flamegraph --live-at-end" "hotspots" "hotspots --min-size 1"
      "speedscope -o -" "pprof -o -" "pprof --live-at end -o -" "report -o -")
for seed in 1 2; do
  # (one name for both: the reports print it)
  mkdir -p "$T/dense" "$T/jump"
  "$GEN" "$T/dense/t.ctf" "$seed" 0 > "$T/gen" && "$GEN" "$T/jump/t.ctf" "$seed" 1 > /dev/null ||
    { fail "gen_survivors seed $seed"; continue; }
  for c in "${cmds[@]}"; do
    what="$c, seed $seed ($(cat "$T/gen"))"
    # shellcheck disable=SC2086   # $c: a command and its options
    (cd "$T/dense" && "$CLI" $c t.ctf) > "$T/d" 2> "$T/d.err"; rd=$?
    # shellcheck disable=SC2086
    (cd "$T/jump" && "$CLI" $c t.ctf) > "$T/j" 2> "$T/j.err"; rj=$?
    # shellcheck disable=SC2086
    (cd "$T/jump" && "$CLI" $c t.ctf) > "$T/j2" 2> "$T/j2.err"; rj2=$?
    if [ $rd -ne 0 ] || [ $rj -ne 0 ] || [ $rj2 -ne 0 ]; then
      fail "$what: exit $rd (dense), $rj and $rj2 (jumping ids)"
      head -n 3 "$T/d.err" "$T/j.err"; continue
    fi
    if [ ! -s "$T/d" ]; then
      fail "$what: no output"
    elif ! cmp -s "$T/j" "$T/j2"; then
      fail "$what: two runs on the same trace differ"; cmp "$T/j" "$T/j2" | head -n 3
    elif ! cmp -s "$T/d" "$T/j"; then
      fail "$what: jumping ids change the report"; cmp "$T/d" "$T/j" | head -n 3
    else
      pass "$what: the same with jumping ids, and in a second run"
    fi
  done
done
finish
