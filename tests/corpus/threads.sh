#!/usr/bin/env bash
# One thread or two: the commands that decode on a second thread (top, live,
# diff, flamegraph's peak pass) must print the same thing, on stdout and
# stderr, and exit with the same status as with MEMTRACE_THREADS=1 (all on
# the calling thread), for every corpus trace, valid or malformed: the
# damaged ones test that an error found by the reading thread stops both
# sides at the same event. With --no-threads-lib SHIM (an LD_PRELOAD library
# whose pthread_create fails), also when no second thread can be started.
set -u
# shellcheck source=corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus_lib.sh"
shim= rest=()
while [ $# -gt 0 ]; do
  if [ "$1" = --no-threads-lib ]; then shim=$2; shift 2; else rest+=("$1"); shift; fi
done
mt_parse_args "${rest[@]}"
[ -z "$shim" ] || [ -f "$shim" ] || mt_die "no such shim library: $shim"

shopt -s nullglob
ctfs=("$CORPUS"/traces/*.ctf "$CORPUS"/malformed/*.ctf)
shopt -u nullglob
[ ${#ctfs[@]} -gt 0 ] || mt_die "no traces in corpus $CORPUS"

cmds=("top" "top --by line --live-at end" "live --points 7" "live --json --source minor"
      "flamegraph --live-at peak" "flamegraph --min-size 64")
for ctf in "${ctfs[@]}"; do
  name=$(basename "$ctf")
  MT_CHECKED=$((MT_CHECKED + 1))
  ok=1
  for c in "${cmds[@]}" "diff"; do
    args=($c "$ctf")
    [ "$c" = diff ] && args=(diff "$ctf" "$ctf")
    MEMTRACE_THREADS=1 "$CLI" "${args[@]}" > "$MT_TMP/one.out" 2> "$MT_TMP/one.err"
    rc1=$?
    "$CLI" "${args[@]}" > "$MT_TMP/two.out" 2> "$MT_TMP/two.err"
    rc2=$?
    if [ -n "$shim" ]; then
      LD_PRELOAD=$shim "$CLI" "${args[@]}" > "$MT_TMP/shim.out" 2> "$MT_TMP/shim.err"
      rc3=$?
      if [ $rc3 != $rc1 ] || ! cmp -s "$MT_TMP/one.out" "$MT_TMP/shim.out" ||
         ! cmp -s "$MT_TMP/one.err" "$MT_TMP/shim.err"; then
        mt_fail "$name" "memtrace ${args[*]}: with pthread_create failing, exit $rc3 and output differ from one thread's (exit $rc1)"
        diff "$MT_TMP/one.out" "$MT_TMP/shim.out" | head -n 10 | sed 's/^/    /'
        ok=0
      fi
    fi
    if [ $rc1 -ge 128 ] || [ $rc2 -ge 128 ]; then
      mt_fail "$name" "memtrace ${args[*]}: crashed (exit $rc1 with one thread, $rc2 with two)"
      ok=0
    elif [ $rc1 != $rc2 ]; then
      mt_fail "$name" "memtrace ${args[*]}: exit $rc1 with one thread, $rc2 with two"
      ok=0
    elif ! cmp -s "$MT_TMP/one.out" "$MT_TMP/two.out"; then
      mt_fail "$name" "memtrace ${args[*]}: stdout differs between one thread and two"
      diff "$MT_TMP/one.out" "$MT_TMP/two.out" | head -n 10 | sed 's/^/    /'
      ok=0
    elif ! cmp -s "$MT_TMP/one.err" "$MT_TMP/two.err"; then
      mt_fail "$name" "memtrace ${args[*]}: stderr differs between one thread and two"
      diff "$MT_TMP/one.err" "$MT_TMP/two.err" | head -n 10 | sed 's/^/    /'
      ok=0
    fi
  done
  [ $ok = 1 ] && echo "ok   $name"
done

mt_summary
