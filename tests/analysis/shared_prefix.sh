#!/usr/bin/env bash
# The commands that keep backtraces take the frames an allocation shares
# with the one they were given last from the reader instead of comparing
# them: its common_prefix, or with filters the least common_prefix of the
# allocations of its domain since the one given last (mt_scan.shared_prefix),
# and nothing after one of another domain was given. gen_pair writes ALL (3000
# allocations of 1 to 8 words, wandering backtraces, now and then thousands
# of frames of recursion) and KEPT (those of 4 words or more, the same
# backtraces); each command given ALL with --min-size 32 must print what it
# prints of KEPT without a filter: byte for byte (hotspots of several
# domains: the same lines, whose ties come in the order the objects are
# decided), for 1, 2 and 3 domains, several seeds. A command that trusted a
# common_prefix relative to an allocation it never saw would put another
# backtrace's frames under the next one it keeps. hotspots prints few of the
# callers it counts, so its whole table of (caller, site) counters is
# compared too: CHECK is the CLI built to print it on stderr
# (MT_HOTSPOTS_DUMP, tests/hotspots), by name and sorted (numbers and order
# follow the order in which objects come, which filters change).
#   shared_prefix.sh --cli MEMTRACE --check MEMTRACE_DUMP --gen GEN_PAIR
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup shared-prefix CHECK GEN

cmds=("flamegraph" "flamegraph --inverted" "hotspots" "speedscope -o -" "pprof -o -")
for domains in 1 2 3; do
  for seed in 1 2 3; do
    "$GEN" "$T/all.ctf" "$T/kept.ctf" "$seed" "$domains" > "$T/gen" ||
      { fail "gen_pair seed $seed, $domains domains"; continue; }
    for c in "${cmds[@]}"; do
      what="$c, $domains domain(s), seed $seed"
      # shellcheck disable=SC2086   # $c: a command and its options
      "$CLI" $c --min-size 32 "$T/all.ctf" > "$T/a" 2> "$T/a.err"; ra=$?
      # shellcheck disable=SC2086
      "$CLI" $c "$T/kept.ctf" > "$T/k" 2> "$T/k.err"; rk=$?
      if [ $ra -ne 0 ] || [ $rk -ne 0 ]; then
        fail "$what: exit $ra (filtered) and $rk"; head -n 3 "$T/a.err" "$T/k.err"; continue
      fi
      if [ "$c" = hotspots ] && [ "$domains" -gt 1 ]; then
        sort "$T/a" > "$T/a.s"; sort "$T/k" > "$T/k.s"; mv "$T/a.s" "$T/a"; mv "$T/k.s" "$T/k"
      fi
      if [ ! -s "$T/k" ]; then
        fail "$what: no output"
      elif cmp -s "$T/a" "$T/k"; then
        pass "$what: filtered ALL = KEPT ($(cat "$T/gen"))"
      else
        fail "$what: filtered ALL differs from KEPT"; diff "$T/a" "$T/k" | head -n 6
      fi
    done
    what="hotspots' table, $domains domain(s), seed $seed"
    # (caller, site, hits) by name: the functions' numbers and so the
    # buckets follow the order in which objects come
    "$CHECK" hotspots --min-size 32 "$T/all.ctf" 2>&1 > /dev/null |
      awk 'NR > 1 { print $5, $6, $4 }' | sort > "$T/a"
    "$CHECK" hotspots "$T/kept.ctf" 2>&1 > /dev/null | awk 'NR > 1 { print $5, $6, $4 }' |
      sort > "$T/k"
    n=$(wc -l < "$T/k")
    if [ "$n" -lt 100 ]; then
      fail "$what: $n counters (the test needs 100 or more)"
    elif cmp -s "$T/a" "$T/k"; then
      pass "$what: the same $n counters"
    else
      fail "$what: filtered ALL's counters differ from KEPT's"; diff "$T/a" "$T/k" | head -n 6
    fi
  done
done
finish
