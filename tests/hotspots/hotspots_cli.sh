#!/usr/bin/env bash
# `memtrace hotspots` command line: usage errors exit 2 with a message on
# stderr, --help exits 0 with the full help on stdout, an unreadable trace
# exits 1.   hotspots_cli.sh CLI
set -u
export LC_ALL=C
CLI=${1:-}
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
  echo "ERROR: memtrace CLI not found or not executable: '$CLI'"; exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-hs-cli.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILS=0

expect() {  # expect RC DESCRIPTION ARGS...
  local want=$1 what=$2; shift 2
  "$CLI" "$@" > "$T/out" 2> "$T/err"
  local rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL $what: memtrace $* exited $rc, expected $want"; FAILS=$((FAILS + 1)); return 1
  fi
  echo "ok   $what (exit $rc)"
}

expect 2 "no TRACE" hotspots && { [ -s "$T/err" ] || { echo "FAIL no message"; FAILS=$((FAILS + 1)); }; }
expect 2 "unknown option" hotspots --bogus x.ctf
expect 2 "two traces" hotspots a.ctf b.ctf
expect 1 "missing file" hotspots "$T/does-not-exist.ctf"
expect 0 "--help" hotspots --help
for needle in "Usage: memtrace hotspots" "Output:" "Options:" "Exit status" "empty backtrace"; do
  if ! grep -qF -- "$needle" "$T/out"; then
    echo "FAIL --help lacks '$needle'"; FAILS=$((FAILS + 1))
  fi
done
expect 0 "-h" hotspots -h && grep -q "Usage: memtrace hotspots" "$T/out" ||
  { echo "FAIL -h text"; FAILS=$((FAILS + 1)); }
expect 0 "help hotspots" help hotspots

[ $FAILS -eq 0 ] && echo "all passed" || echo "$FAILS failure(s)"
[ $FAILS -eq 0 ]
