#!/usr/bin/env bash
# nomem_test.sh - every command when memory runs out: each allocation of the
# process in turn made to fail (failmalloc.so: once, then from it on); the
# command must then either succeed with the very output of a normal run, or
# fail with a message and exit status 1 or 2. Never a crash, never an exit
# without a word, never a different output that looks fine (a --json field
# written as null when its quoting could not allocate was one, found this way).
# And each command once with getrandom(2) failing, as on a kernel without it:
# the hash tables' keys then come from the clock, and the output is the same.
#
#   nomem_test.sh --cli MEMTRACE --shim failmalloc.so --default-corpus DIR
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SHIM=
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shim) SHIM=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
parse_args "${args[@]}"
setup nomem
require_corpus
[ -f "$SHIM" ] || die "failmalloc shim not found: '$SHIM'"

TRACE=$TR/ref-example-lists_and_sets.ctf
need "$TRACE" || finish
# Command lines: IN is the trace, OUT an output file.
CMDS=("dump IN" "info IN" "info --json IN" "check IN" "check --json IN" "top IN"
      "top --json IN" "top --live-at peak --by line IN" "top --hide caml IN" "live IN"
      "live --json IN" "hotspots IN" "hotspots --json IN" "hotspots --in caml IN"
      "hotspots --min-size 8 IN" "hotspots --hide caml IN" "flamegraph IN"
      "flamegraph --min-size 1 IN" "flamegraph --hide caml_ IN"
      "diff IN IN" "diff --json IN IN" "pprof IN -o OUT" "pprof --live-at peak IN -o OUT"
      "speedscope IN -o OUT" "report IN -o OUT" "report --hide caml IN -o OUT"
      "copy IN OUT" "copy --format-version 3 IN OUT" "strip-names IN OUT"
      "subsample --seed 7 IN OUT 3")

# run_failing MODE K CMDLINE... : the command with allocation K failing
# (MODE once or from; K 0: none, counting them into $T/count), its stdout
# and output file in $T/out, its stderr in $T/err; prints the exit status.
run_failing() {
  local mode=$1 k=$2 a=() w env; shift 2
  for w in "$@"; do
    case "$w" in
      IN) a+=("$TRACE") ;;
      OUT) a+=("$T/file") ;;
      *) a+=("$w") ;;
    esac
  done
  rm -f "$T/file"
  env=(MT_FAIL_AT="$k")
  [ "$mode" = from ] && env+=(MT_FAIL_FROM=1)
  [ "$k" = 0 ] && env=(MT_FAIL_COUNT="$T/count")
  env "${env[@]}" LD_PRELOAD="$SHIM" "$CLI" "${a[@]}" > "$T/out" 2> "$T/err"
  local rc=$?
  [ -f "$T/file" ] && cat "$T/file" >> "$T/out"
  echo "$rc"
}

for c in "${CMDS[@]}"; do
  read -r -a words <<< "$c"
  rc0=$(run_failing once 0 "${words[@]}")
  cp "$T/out" "$T/ref"
  n=$(cat "$T/count" 2>/dev/null || echo 0)
  if [ "$rc0" != 0 ] || [ "$n" -lt 1 ]; then
    fail "$c: the normal run (exit $rc0, $n allocations counted): $(head -c 300 "$T/err")"
    continue
  fi
  bad=0 clean=0
  for mode in once from; do
    for k in $(seq 1 "$n"); do
      rc=$(run_failing "$mode" "$k" "${words[@]}")
      if [ "$rc" -ge 3 ]; then
        fail "$c: allocation $k failing ($mode): exit $rc: $(head -c 300 "$T/err")"; bad=1
      elif [ "$rc" != 0 ]; then
        clean=$((clean + 1))
        [ -s "$T/err" ] || { fail "$c: allocation $k failing ($mode): exit $rc without a message"; bad=1; }
      elif ! cmp -s "$T/ref" "$T/out"; then
        fail "$c: allocation $k failing ($mode): exit 0 with a different output"; bad=1
      fi
      [ $bad = 1 ] && break 2
    done
  done
  # (the shim took effect: some failures were clean errors)
  [ $bad = 1 ] || assert "$c: $n allocations, each failing once and from it on: $clean clean errors, the rest the same output" [ "$clean" -gt 0 ]
  # getrandom failing (a kernel without it): the hash keys come from the
  # clock, and the output is the same
  # (counting the getrandom calls that failed: the fallback did run)
  rm -f "$T/nrandom"
  rc=$(MT_FAIL_GETRANDOM="$T/nrandom" run_failing once 0 "${words[@]}")
  nr=$(cat "$T/nrandom" 2>/dev/null || echo 0)
  if [ "$rc" = 0 ] && cmp -s "$T/ref" "$T/out" && [ "$nr" -gt 0 ]; then
    pass "$c: the same output with getrandom failing ($nr calls)"
  else
    fail "$c: getrandom failing ($nr calls): exit $rc, output $(cmp -s "$T/ref" "$T/out" && echo same || echo different)"
  fi
done
finish
