#!/usr/bin/env bash
# Tests of `memtrace strip-names`. Arguments:
#   --cli PATH              the memtrace binary
#   --check PATH            the strip_names_check program
#   --default-corpus DIR    corpus used when MEMTRACE_CORPUS is unset
#   SECTION                 traces | damaged | args
# A missing corpus is a failure, never a skip.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup strip CHECK
require_corpus

# strip ARGS... : run `memtrace strip-names ARGS` (see run in lib.sh)
strip() { run strip-names "$@"; }

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
    if ! checker "$TR/$t.ctf" "$T/s.ctf"; then fail "$t: output does not match the input"; continue; fi
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
    # --format-version 2 writes that v002 copy itself
    strip --format-version 2 "$TR/$t.ctf" "$T/s2.ctf"
    if [ "$RC" -ne 0 ] || [ -s "$T/err" ] || ! cmp -s "$T/s2.ctf" "$T/c2.ctf"; then
      fail "$t: --format-version 2 is not the v002 copy of the v003 output"; show_err; continue
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
    rejected_at_offset "$t" "$t.ctf" || continue
    if ! checker "$m/$t.ctf" "$T/s.ctf" --partial; then
      fail "$t: output is not the events before the damage"
    else pass "$t: exit 1, events before the damage written"; fi
  done
  bad_headers strip-names
}

section_args() {
  local in=$TR/synth-basic.ctf
  need "$in" || return
  usage_errors strip-names "$T/o.ctf" \
    "no arguments|" \
    "IN only|$in" \
    "too many arguments|$in $T/o.ctf $T/p.ctf" \
    "unknown option|--frobnicate $in $T/o.ctf" \
    "--format-version 1|--format-version 1 $in $T/o.ctf" \
    "--format-version without a value|$in $T/o.ctf --format-version" \
    "OUT same as IN|$in $in"
  in_out_errors strip-names "$in"
  strip --help
  if [ "$RC" -ne 0 ] || ! grep -q 'Usage: memtrace strip-names' "$T/out" ||
     [ -s "$T/err" ]; then
    fail "--help: expected usage on stdout, exit 0"
  else pass "--help"; fi
  cp "$in" "$T/-in.ctf"
  cd "$T" && strip -- -in.ctf -out.ctf; cd - > /dev/null
  if [ "$RC" -ne 0 ] || [ ! -s "$T/-out.ctf" ]; then fail "-- before names starting with -: exit $RC"
  else pass "-- before names starting with -"; fi
}

case "$SECTION" in
  traces|damaged|args) "section_$SECTION" ;;
  *) die "unknown section '$SECTION'" ;;
esac
finish
