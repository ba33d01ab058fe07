#!/usr/bin/env bash
# CLI contract tests for `memtrace`: help, usage errors (exit 2), I/O errors
# (exit 1). Arguments:
#   --cli PATH              the memtrace binary
#   --default-corpus DIR    corpus used when MEMTRACE_CORPUS is unset (a valid
#                           input trace, traces/synth-basic.ctf, is taken from it)
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup cli
INPUT=$CORPUS/traces/synth-basic.ctf
if [ ! -f "$INPUT" ]; then
  die "valid input trace not found: $INPUT (reference corpus missing?" \
      "set MEMTRACE_CORPUS=/path/to/corpus or configure with -DMT_CORPUS_DIR=...)"
fi

# fail_run MESSAGE : a FAIL, with the last run's exit status, stdout and stderr
fail_run() {
  fail "$@"
  printf '  exit status: %s\n' "$RC"
  echo "  stdout (first 10 lines):"; show_out 10
  echo "  stderr (first 10 lines):"; show_err 10
}

# expect_help DESCRIPTION WORD ARGS... : exit 0, usage text (containing "usage"
# and WORD) on stdout, nothing on stderr
expect_help() {
  local d=$1 word=$2; shift 2
  run "$@"
  if crashed; then fail_run "$d: crash or sanitizer report"
  elif [ "$RC" -ne 0 ]; then fail_run "$d: expected exit 0"
  elif ! grep -qi 'usage' "$T/out"; then fail_run "$d: no usage text on stdout"
  elif ! grep -q -- "$word" "$T/out"; then fail_run "$d: usage text does not mention '$word'"
  elif [ -s "$T/err" ]; then fail_run "$d: unexpected stderr"
  else pass "$d"; fi
}

# expect_status DESCRIPTION STATUS ARGS... : given exit status, message on stderr
expect_status() {
  local d=$1 want=$2; shift 2
  run "$@"
  if crashed; then fail_run "$d: crash or sanitizer report"
  elif [ "$RC" -ne "$want" ]; then fail_run "$d: expected exit $want"
  elif [ ! -s "$T/err" ]; then fail_run "$d: expected a message on stderr"
  else pass "$d"; return 0; fi
  return 1
}

# --- help -------------------------------------------------------------------
expect_help "memtrace --help"      dump --help
expect_help "memtrace --help lists copy" copy --help
expect_help "memtrace dump --help" dump dump --help
expect_help "memtrace copy --help" copy copy --help
expect_help "memtrace copy --help mentions --format-version" --format-version copy --help

# --- usage errors: exit 2 ---------------------------------------------------
expect_status "no arguments"                   2
expect_status "unknown subcommand"             2 frobnicate "$INPUT"
expect_status "unknown global option"          2 --no-such-option
expect_status "dump: no file"                  2 dump
expect_status "dump: two files"                2 dump "$INPUT" "$INPUT"
expect_status "dump: unknown option"           2 dump --no-such-option "$INPUT"
expect_status "copy: no arguments"             2 copy
expect_status "copy: one argument"             2 copy "$INPUT"
expect_status "copy: three arguments"          2 copy "$INPUT" "$T/a.ctf" "$T/b.ctf"
expect_status "copy: unknown option"           2 copy --no-such-option "$INPUT" "$T/a.ctf"
expect_status "copy --format-version 7"        2 copy --format-version 7 "$INPUT" "$T/a.ctf"
expect_status "copy --format-version 1"        2 copy --format-version 1 "$INPUT" "$T/a.ctf"
expect_status "copy --format-version abc"      2 copy --format-version abc "$INPUT" "$T/a.ctf"
expect_status "copy --format-version (no value)" 2 copy "$INPUT" "$T/a.ctf" --format-version
if [ -e "$T/a.ctf" ]; then
  RC=-; fail_run "a rejected copy command created its output file"; rm -f "$T/a.ctf"
fi

# --- runtime errors: exit 1 -------------------------------------------------
missing=$T/no-such-trace.ctf
if expect_status "dump of a missing file" 1 dump "$missing"; then
  if grep -qF -- "$missing" "$T/err"; then pass "dump of a missing file: stderr names the file"
  else fail_run "dump of a missing file: stderr does not name $missing"; fi
fi
expect_status "copy from a missing file"       1 copy "$missing" "$T/a.ctf"

# The input is valid: copying it to a writable place works ...
run copy "$INPUT" "$T/ok.ctf"
if [ "$RC" -eq 0 ] && [ -s "$T/ok.ctf" ] && ! crashed; then pass "copy of a valid trace"
else fail_run "copy of a valid trace to $T/ok.ctf: expected exit 0 and an output file"; fi
run copy --format-version 2 "$INPUT" "$T/ok2.ctf"
if [ "$RC" -eq 0 ] && cmp -s "$T/ok.ctf" "$T/ok2.ctf"; then pass "copy --format-version 2 == default"
else fail_run "copy --format-version 2: expected exit 0 and the same bytes as the default copy"; fi
run copy --format-version 3 "$INPUT" "$T/ok3.ctf"
if [ "$RC" -eq 0 ] && [ -s "$T/ok3.ctf" ] && ! crashed; then pass "copy --format-version 3"
else fail_run "copy --format-version 3: expected exit 0 and an output file"; fi
run dump "$INPUT"
if [ "$RC" -eq 0 ] && [ -s "$T/out" ] && [ ! -s "$T/err" ]; then pass "dump of a valid trace"
else fail_run "dump of a valid trace: expected exit 0, output, empty stderr"; fi

# "-": standard input and output, the same bytes as with files; not onto
# the input through a redirection, nor to a terminal.
"$CLI" copy - "$T/in.ctf" < "$INPUT" 2> "$T/err"; RC=$?
"$CLI" copy "$INPUT" - > "$T/outstd.ctf" 2>> "$T/err"; RC2=$?
"$CLI" copy - - < "$INPUT" 2>> "$T/err" | cat > "$T/pipe.ctf"
if [ "$RC" -eq 0 ] && [ "$RC2" -eq 0 ] && cmp -s "$T/ok.ctf" "$T/in.ctf" &&
   cmp -s "$T/ok.ctf" "$T/outstd.ctf" && cmp -s "$T/ok.ctf" "$T/pipe.ctf" && [ ! -s "$T/err" ]; then
  pass "copy with - for IN and OUT: the same bytes"
else fail_run "copy with -: expected the bytes of the copy to a file"; fi
cp "$T/ok.ctf" "$T/self.ctf"
"$CLI" copy - "$T/self.ctf" < "$T/self.ctf" > "$T/out" 2> "$T/err"; RC=$?
if [ "$RC" -eq 2 ] && cmp -s "$T/ok.ctf" "$T/self.ctf" && grep -q "must not be the input" "$T/err"; then
  pass "copy - onto the file standard input reads: refused, file intact"
else fail_run "copy - onto standard input's file: expected exit 2 and the file intact"; fi
if command -v script > /dev/null; then
  script -qec "$CLI copy $INPUT -" /dev/null > "$T/out" 2>&1; RC=$?
  if [ "$RC" -eq 2 ] && grep -q "standard output is a terminal" "$T/out"; then
    pass "copy to - on a terminal: refused"
  else fail_run "copy to - on a terminal: expected exit 2 and a message"; fi
fi

# ... but not to an unwritable one.
expect_status "copy to /nonexistent-dir/x.ctf" 1 copy "$INPUT" /nonexistent-dir/x.ctf
mkdir "$T/ro"; chmod 555 "$T/ro"
if [ ! -w "$T/ro" ]; then   # root can write anywhere: skip that variant then
  expect_status "copy into a read-only directory" 1 copy "$INPUT" "$T/ro/x.ctf"
fi
expect_status "copy onto a directory" 1 copy "$INPUT" "$T"
if [ -w /dev/full ]; then
  "$CLI" dump "$INPUT" > /dev/full 2> "$T/err"; RC=$?
  if [ "$RC" -eq 1 ] && [ -s "$T/err" ]; then pass "dump to /dev/full (write error): exit 1"
  else fail_run "dump to /dev/full (write error): expected exit 1 and a message on stderr"; fi
fi

finish
