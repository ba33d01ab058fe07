#!/usr/bin/env bash
# Tests of `memtrace strip-names`. Arguments:
#   --cli PATH              the memtrace binary
#   --check PATH            the strip_names_check program
#   --default-corpus DIR    corpus used when MEMTRACE_CORPUS is unset
#   SECTION                 traces | damaged | args
# A missing corpus is a failure, never a skip.
set -u
export LC_ALL=C
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=134"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=134:print_stacktrace=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=134"

CLI= CHECK= default_corpus= SECTION=
while [ $# -gt 0 ]; do
  case "$1" in
    --cli) CLI=$2; shift 2 ;;
    --check) CHECK=$2; shift 2 ;;
    --default-corpus) default_corpus=$2; shift 2 ;;
    -*) echo "ERROR: unknown test-script argument $1"; exit 1 ;;
    *) SECTION=$1; shift ;;
  esac
done
if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
  echo "ERROR: memtrace CLI not found or not executable: '$CLI'"; exit 1
fi
if [ -z "$CHECK" ] || [ ! -x "$CHECK" ]; then
  echo "ERROR: strip_names_check not found or not executable: '$CHECK'"; exit 1
fi
CORPUS=${MEMTRACE_CORPUS:-$default_corpus}
if [ -z "$CORPUS" ] || [ ! -d "$CORPUS/traces" ]; then
  echo "ERROR: reference corpus not found at '$CORPUS' (set MEMTRACE_CORPUS" \
       "or configure with -DMT_CORPUS_DIR=...)"
  exit 1
fi
TR=$CORPUS/traces

T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-strip.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILS=0
PASSES=0

fail() { FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$*"; }
pass() { PASSES=$((PASSES + 1)); printf 'ok   %s\n' "$*"; }

need() {
  if [ ! -f "$1" ]; then
    fail "corpus file missing: $1"
    return 1
  fi
}

# strip ARGS... : run `memtrace strip-names ARGS`, RC = status, stderr in $T/err
strip() {
  "$CLI" strip-names "$@" > "$T/out" 2> "$T/err" < /dev/null
  RC=$?
  if [ "$RC" -ge 128 ] ||
     grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/err"; then
    sed 's/^/    | /' "$T/err" | head -n 20
  fi
}

show_err() { head -n 5 "$T/err" | sed 's/^/    | /'; }

check() {
  "$CHECK" "$@" > "$T/chk" 2>&1
  local rc=$?
  sed 's/^/    /' "$T/chk"
  return $rc
}

section_traces() {
  local t
  for t in synth-basic real-ocamlopt-1e-5 synth-abuse synth-emptystack \
           synth-info-long synth-info-noctx synth-time ref-test-ocamlopt \
           ref-head-ocamlopt-v3 ref-example-lists_and_sets real-external \
           real-deep synth-ids; do
    need "$TR/$t.ctf" || continue
    strip "$TR/$t.ctf" "$T/s.ctf"
    if [ "$RC" -ne 0 ]; then fail "$t: exit $RC"; show_err; continue; fi
    if [ -s "$T/out" ] || [ -s "$T/err" ]; then fail "$t: unexpected output"; show_err; fi
    if ! check "$TR/$t.ctf" "$T/s.ctf"; then fail "$t: output does not match the input"; continue; fi
    # dump: v003 format (dom=0 on every allocation), no location anywhere
    if ! "$CLI" dump "$T/s.ctf" > "$T/d.txt" 2> "$T/err"; then
      fail "$t: dump of the output failed"; show_err; continue
    fi
    if grep ' alloc' "$T/d.txt" | grep -qv ' dom=0 '; then
      fail "$t: dump has allocation lines without dom=0"; continue
    fi
    if grep -q '@' "$T/d.txt"; then fail "$t: dump shows locations"; continue; fi
    # copy --format-version 3 reproduces the file; a v002 copy has the same
    # dump apart from the domain column.
    if ! "$CLI" copy --format-version 3 "$T/s.ctf" "$T/c3.ctf" 2> "$T/err"; then
      fail "$t: copy --format-version 3 failed"; show_err; continue
    fi
    if ! cmp -s "$T/s.ctf" "$T/c3.ctf"; then
      fail "$t: copy --format-version 3 is not identical"; continue
    fi
    if ! "$CLI" copy "$T/s.ctf" "$T/c2.ctf" 2> "$T/err" ||
       ! "$CLI" dump "$T/c2.ctf" > "$T/d2.txt" 2> "$T/err"; then
      fail "$t: copy to v002 and dump failed"; show_err; continue
    fi
    if ! sed 's/ dom=0 / /' "$T/d.txt" | cmp -s - "$T/d2.txt"; then
      fail "$t: dump of the v002 copy differs"; continue
    fi
    pass "$t"
  done
  # Stripping a stripped trace changes nothing.
  if need "$TR/real-ocamlopt-1e-5.ctf"; then
    strip "$TR/real-ocamlopt-1e-5.ctf" "$T/s1.ctf"
    strip "$T/s1.ctf" "$T/s2.ctf"
    if [ "$RC" -ne 0 ] || ! cmp -s "$T/s1.ctf" "$T/s2.ctf"; then
      fail "stripping twice: not idempotent"
    else pass "stripping twice gives the same file"; fi
    # No string of the input survives.
    if grep -aq -e 'ocamlopt' -e '\.ml' "$T/s1.ctf"; then
      fail "names of the input left in the output"
    else pass "no program or file names left"; fi
  fi
}

section_damaged() {
  local m=$CORPUS/malformed t
  for t in bad-event-code bad-collect-delta bad-header-flip-allocid-end \
           bad-trailing-garbage bad-magic-packet; do
    need "$m/$t.ctf" || continue
    strip "$m/$t.ctf" "$T/s.ctf"
    if [ "$RC" -ne 1 ]; then fail "$t: expected exit 1, got $RC"; show_err; continue; fi
    if ! grep -q "$t.ctf" "$T/err" || ! grep -q offset "$T/err"; then
      fail "$t: message should name the file and the offset"; show_err; continue
    fi
    if ! check "$m/$t.ctf" "$T/s.ctf" --partial; then
      fail "$t: output is not the events before the damage"
    else pass "$t: exit 1, events before the damage written"; fi
  done
  for t in bad-empty bad-magic bad-truncated-info; do
    need "$m/$t.ctf" || continue
    strip "$m/$t.ctf" "$T/s.ctf"
    if [ "$RC" -ne 1 ] || [ ! -s "$T/err" ]; then fail "$t: expected exit 1 and a message"
    else pass "$t: exit 1"; fi
  done
}

section_args() {
  local in=$TR/synth-basic.ctf
  need "$in" || return
  local -a cases=(
    "no arguments|"
    "IN only|$in"
    "too many arguments|$in $T/o.ctf $T/p.ctf"
    "unknown option|--frobnicate $in $T/o.ctf"
    "OUT same as IN|$in $in"
  )
  local c d args
  for c in "${cases[@]}"; do
    d=${c%%|*}
    args=${c#*|}
    rm -f "$T/o.ctf"
    eval "strip $args"
    if [ "$RC" -ne 2 ]; then fail "$d: expected exit 2, got $RC"; show_err
    elif [ ! -s "$T/err" ]; then fail "$d: no message on stderr"
    elif [ -e "$T/o.ctf" ]; then fail "$d: output file created"
    else pass "$d: exit 2"; fi
  done
  cp "$in" "$T/in.ctf"
  ln -s "$T/in.ctf" "$T/link.ctf"
  strip "$T/in.ctf" "$T/link.ctf"
  if [ "$RC" -ne 2 ]; then fail "OUT is a link to IN: expected exit 2, got $RC"
  elif ! cmp -s "$in" "$T/in.ctf"; then fail "OUT is a link to IN: IN was modified"
  else pass "OUT is a link to IN: exit 2, IN intact"; fi
  strip --help
  if [ "$RC" -ne 0 ] || ! grep -q 'Usage: memtrace strip-names' "$T/out" ||
     [ -s "$T/err" ]; then
    fail "--help: expected usage on stdout, exit 0"
  else pass "--help"; fi
  cp "$in" "$T/-in.ctf"
  cd "$T" && strip -- -in.ctf -out.ctf; cd - > /dev/null
  if [ "$RC" -ne 0 ] || [ ! -s "$T/-out.ctf" ]; then fail "-- before names starting with -: exit $RC"
  else pass "-- before names starting with -"; fi
  strip "$T/nonexistent.ctf" "$T/o.ctf"
  if [ "$RC" -ne 1 ] || ! grep -q nonexistent "$T/err"; then
    fail "missing input: expected exit 1 naming the file, got $RC"
  else pass "missing input: exit 1"; fi
  strip "$in" "$T/no/such/dir/o.ctf"
  if [ "$RC" -ne 1 ] || [ ! -s "$T/err" ]; then fail "uncreatable output: expected exit 1"
  else pass "uncreatable output: exit 1"; fi
}

case "$SECTION" in
  traces|damaged|args) "section_$SECTION" ;;
  *) echo "ERROR: unknown section '$SECTION'"; exit 1 ;;
esac

echo "$PASSES passed, $FAILS failed"
[ "$FAILS" -eq 0 ]
