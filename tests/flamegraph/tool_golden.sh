#!/usr/bin/env bash
# Golden test of a report command (flamegraph or hotspots) against the
# reference corpus. Used by tests/flamegraph and tests/hotspots.
#
#   tool_golden.sh --tool flamegraph|hotspots --cli PATH --default-corpus DIR
#                  --expected DIR [--inverted-check]
#
# The corpus is $MEMTRACE_CORPUS if set, else --default-corpus; a missing
# corpus is a FAILURE. Every traces/*.ctf and malformed/*.ctf is discovered
# now (traces added later are picked up without reconfiguring). Per file,
# with REF = NAME.TOOL.txt (or `xz -dc NAME.TOOL.txt.xz`), the reference's
# stderr NAME.TOOL.err and exit status NAME.TOOL.exit (absent = 0):
#  * --expected DIR/NAME.TOOL.txt exists: our output for a trace on which
#    the reference tool failed, worked out by hand from the dump; must match
#    exactly, exit 0, empty stderr;
#  * the reference succeeded: stdout identical to REF, stderr identical to
#    the reference's (the skipped-packet messages), exit 0;
#  * the reference died of one of its own bugs on a valid trace (an
#    assertion in the tool, "index out of bounds"): we must do better, i.e.
#    exit 0 with an empty stderr;
#  * the reference rejected the trace: exit 1, nothing on stdout, a message
#    on stderr;
#  * no reference output at all: traces/ref-head-ocamlopt-v3.ctf holds the
#    events of ref-test-ocamlopt.ctf (corpus README) and must give its
#    output; any other such trace must just succeed.
# With --inverted-check (flamegraph), wherever the default output is known
# good, `flamegraph --inverted` must print the same stacks, each reversed.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

TOOL='' EXPECTED='' INVERTED=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) TOOL=$2; shift 2 ;;
    --cli) CLI=$2; shift 2 ;;
    --default-corpus) DEFAULT_CORPUS=$2; shift 2 ;;
    --expected) EXPECTED=$2; shift 2 ;;
    --inverted-check) INVERTED=1; shift ;;
    *) die "unknown test-script argument $1" ;;
  esac
done
case "$TOOL" in flamegraph|hotspots) ;; *) die "bad --tool '$TOOL'" ;; esac
setup "$TOOL"
require_corpus
echo "corpus: $CORPUS"
echo "cli:    $CLI $TOOL"
CHECKED=0 FAILED=()

fail_file() {  # fail_file NAME MESSAGE
  fail "$1: $2"
  FAILED+=("$1")
}

show_stderr() { if [ -s "$T/err" ]; then show_err 10; fi; }

cat_ref() {  # cat_ref DIR NAME -> reference stdout; false if none
  ref_text "$1/$2.$TOOL.txt"
}

# Reverse the frames of folded-stack lines ("a;b;c N" -> "c;b;a N"), sorted.
reverse_stacks() {
  awk '{
    i = match($0, / [^ ]*$/); path = substr($0, 1, i - 1); w = substr($0, i)
    n = split(path, f, ";"); s = f[n]
    for (k = n - 1; k >= 1; k--) s = s ";" f[k]
    print s w }' | sort
}

check_inverted() {  # check_inverted LABEL CTF  ($T/want holds the default output)
  [ "$INVERTED" = 1 ] || return 0
  "$CLI" flamegraph --inverted "$2" > "$T/inv" 2>/dev/null
  local rc=$?
  reverse_stacks < "$T/want" > "$T/inv.want"
  sort "$T/inv" > "$T/inv.got"
  if [ $rc -ne 0 ] || ! cmp -s "$T/inv.want" "$T/inv.got"; then
    fail_file "$1" "flamegraph --inverted (exit $rc) does not print the reversed stacks"
    show_diff "$T/inv.want" "$T/inv.got"
    return 1
  fi
  return 0
}

for sub in traces malformed; do
  dir=$CORPUS/$sub
  [ -d "$dir" ] || continue
  for ctf in "$dir"/*.ctf; do
    [ -f "$ctf" ] || continue
    name=$(basename "$ctf" .ctf)
    label=$sub/$name.ctf
    CHECKED=$((CHECKED + 1))
    "$CLI" "$TOOL" "$ctf" > "$T/out" 2> "$T/err"
    rc=$?
    if grep -Eq 'Sanitizer|runtime error:' "$T/err" || [ $rc -ge 128 ]; then
      fail_file "$label" "crashed or sanitizer report (exit $rc)"; show_stderr; continue
    fi
    ref_rc=0
    [ -f "$dir/$name.$TOOL.exit" ] && ref_rc=$(cat "$dir/$name.$TOOL.exit")
    : > "$T/referr"
    [ -f "$dir/$name.$TOOL.err" ] && cat "$dir/$name.$TOOL.err" > "$T/referr"
    have_ref=1
    cat_ref "$dir" "$name" > "$T/want" || have_ref=0
    if [ "$sub" = traces ] && [ -f "$EXPECTED/$name.$TOOL.txt" ]; then
      cp "$EXPECTED/$name.$TOOL.txt" "$T/want"
      if [ $rc -ne 0 ] || [ -s "$T/err" ] || ! cmp -s "$T/want" "$T/out"; then
        fail_file "$label" "exit $rc; expected exit 0, empty stderr and $EXPECTED/$name.$TOOL.txt"
        show_diff "$T/want" "$T/out"; show_stderr; continue
      fi
      check_inverted "$label" "$ctf" || continue
      echo "ok   $label (the reference failed; matches our expected output)"
    elif [ $have_ref = 1 ] && [ "$ref_rc" = 0 ]; then
      if [ $rc -ne 0 ] || ! cmp -s "$T/want" "$T/out"; then
        fail_file "$label" "exit $rc; output differs from the reference"
        show_diff "$T/want" "$T/out"; show_stderr; continue
      fi
      if ! cmp -s "$T/referr" "$T/err"; then
        fail_file "$label" "stderr differs from the reference's"
        show_diff "$T/referr" "$T/err"; continue
      fi
      check_inverted "$label" "$ctf" || continue
      echo "ok   $label"
    elif [ "$ref_rc" != 0 ] && [ "$sub" = traces ] &&
         grep -Eq 'Assertion failed|index out of bounds' "$T/referr"; then
      if [ $rc -ne 0 ] || [ -s "$T/err" ]; then
        fail_file "$label" "exit $rc; the reference died of a tool bug ($(head -c 100 "$T/referr")), we must succeed"
        show_stderr; continue
      fi
      echo "ok   $label (the reference failed: $(head -c 80 "$T/referr"); we succeed)"
    elif [ "$ref_rc" != 0 ]; then
      if [ $rc -ne 1 ] || [ -s "$T/out" ] || [ ! -s "$T/err" ]; then
        fail_file "$label" "exit $rc; expected exit 1, empty stdout and a message (the reference exited $ref_rc)"
        show_stderr; continue
      fi
      echo "ok   $label (rejected: $(head -n 1 "$T/err" | cut -c1-100))"
    else
      equiv=
      [ "$sub/$name" = traces/ref-head-ocamlopt-v3 ] && equiv=ref-test-ocamlopt
      if [ -n "$equiv" ] && cat_ref "$dir" "$equiv" > "$T/want"; then
        if [ $rc -ne 0 ] || [ -s "$T/err" ] || ! cmp -s "$T/want" "$T/out"; then
          fail_file "$label" "exit $rc; output differs from that of $equiv.ctf (same events)"
          show_diff "$T/want" "$T/out"; show_stderr; continue
        fi
        check_inverted "$label" "$ctf" || continue
        echo "ok   $label (no reference output; same as $equiv)"
      elif [ $rc -ne 0 ]; then
        fail_file "$label" "exit $rc (no reference output to compare with)"; show_stderr
      else
        echo "ok   $label (no reference output; ran, exit 0)"
      fi
    fi
  done
done

echo
if [ $CHECKED -eq 0 ]; then
  echo "SUMMARY: no trace found in $CORPUS"; exit 1
fi
if [ $FAILS -gt 0 ]; then
  echo "SUMMARY: $FAILS failure(s) in $CHECKED file(s): ${FAILED[*]}"; exit 1
fi
echo "SUMMARY: all $CHECKED file(s) passed"
