#!/usr/bin/env bash
# `memtrace speedscope` tests: the output validates against speedscope's
# JSON schema (validate.js, ajv); on the gen_known trace each profile's
# bytes per allocation site are the exact answers; --hide; on a corpus trace
# the three profiles' totals equal `memtrace top --json`'s allocated, peak
# and end bytes; usage errors (exit 2) and bad traces (exit 1).
#   speedscope_test.sh CLI GEN_KNOWN CORPUS_DIR NODE_MODULES
set -u
export LC_ALL=C
CLI=$1 GEN=$2 CORPUS=${MEMTRACE_CORPUS:-$3} NM=$4
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-speedscope.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$NM/ajv/package.json" ] && [ -f "$NM/speedscope/package.json" ] ||
  { echo "FAIL node modules missing in $NM: run 'npm ci --prefix tests/report'"; exit 1; }
"$GEN" "$T/k.ctf" || { echo "cannot write the known trace"; exit 1; }

expect() {  # expect RC DESCRIPTION ARGS...
  local want=$1 what=$2; shift 2
  "$CLI" "$@" > "$T/out" 2> "$T/err"
  local rc=$?
  [ $rc -eq "$want" ] || { fail "$what: memtrace $* exited $rc, expected $want"; cat "$T/err"; return 1; }
  echo "ok   $what"
}
check() {  # check FILE.json -> $T/sum (validated)
  node "$HERE/validate.js" "$NM" "$1" > "$T/sum" 2> "$T/verr" ||
    { fail "$1 does not validate"; cat "$T/verr"; return 1; }
  echo "ok   $1 validates against the speedscope schema"
}
has() {  # has DESCRIPTION LINE (a line of $T/sum, tabs as '|')
  tr '\t' '|' < "$T/sum" | grep -qxF -- "$2" || { fail "$1: no '$2'"; cat "$T/sum"; }
}

expect 0 "write known" speedscope "$T/k.ctf" -o "$T/k.json"
check "$T/k.json"
has "allocated total" "allocated|total|3904"
has "allocated grow" "allocated|grow|3200"
has "allocated make_buffer" "allocated|make_buffer|384"
has "allocated new_node" "allocated|new_node|320"
has "peak total" "live at peak|total|3904"
has "end total" "live at end|total|256"
has "end make_buffer" "live at end|make_buffer|128"
has "end new_node" "live at end|new_node|128"
grep -qF '"samples": [[0,1,2,3],' "$T/k.json" ||
  fail "make_buffer's stack is not main, load, parse (inlined), make_buffer"
grep -qF '{"name": "parse", "file": "parse.c", "line": 33}' "$T/k.json" || fail "inlined frame"
expect 0 "--hide" speedscope --hide new_node "$T/k.ctf" -o "$T/h.json"
check "$T/h.json"
has "hidden frame's caller" "allocated|build_tree|320"
expect 0 "--source major" speedscope --source major "$T/k.ctf" -o "$T/m.json"
check "$T/m.json"
has "major total" "allocated|total|3584"

TR=$CORPUS/traces/real-ocamlopt-1e-5.ctf
if [ -f "$TR" ]; then
  expect 0 "corpus" speedscope "$TR" -o "$T/c.json"
  check "$T/c.json"
  "$CLI" top --json "$TR" > "$T/top" || fail "top failed"
  for pair in "allocated:allocated_bytes" "live at peak:peak_bytes" "live at end:end_bytes"; do
    prof=${pair%%:*} key=${pair#*:}
    got=$(awk -F'\t' -v p="$prof" '$1 == p && $2 == "total" {print $3}' "$T/sum")
    want=$(grep -o '"total": {.*' "$T/top" | grep -o "\"$key\": [0-9.e+]*" | grep -o '[0-9.e+]*$')
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-6 * b) }' ||
      { fail "corpus $prof: $got vs top $key $want"; continue; }
    echo "ok   corpus $prof $got = top $key $want"
  done
  expect 1 "malformed trace" speedscope "$CORPUS/malformed/bad-bt-flip-bucket.ctf" -o "$T/x.json"
  grep -q "memtrace speedscope: " "$T/err" || fail "no message for a malformed trace"
else
  fail "corpus trace $TR missing"
fi

expect 2 "no TRACE" speedscope -o "$T/x.json"
expect 2 "no -o" speedscope "$T/k.ctf"
expect 2 "unknown option" speedscope --bogus "$T/k.ctf" -o "$T/x.json"
expect 2 "stdin" speedscope - -o "$T/x.json"
expect 2 "bad filter" speedscope --min-size big "$T/k.ctf" -o "$T/x.json"
expect 1 "missing file" speedscope "$T/none.ctf" -o "$T/x.json"
grep -qF "$T/none.ctf" "$T/err" || fail "missing file not named"
expect 1 "unwritable output" speedscope "$T/k.ctf" -o "$T/no/dir.json"
grep -qF "$T/no/dir.json" "$T/err" || fail "unwritable output not named"
[ -w /dev/full ] && expect 1 "full disk" speedscope "$T/k.ctf" -o /dev/full
expect 0 "--help" speedscope --help
for needle in "Usage: memtrace speedscope" "live at end" "--hide FUNC" "Exit status"; do
  grep -qF -- "$needle" "$T/out" || fail "--help lacks '$needle'"
done
[ $FAILS -eq 0 ] && echo "all speedscope tests passed" || { echo "$FAILS failure(s)"; exit 1; }
