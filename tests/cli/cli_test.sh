#!/usr/bin/env bash
# CLI contract tests for `memtrace`: help, usage errors (exit 2), I/O errors
# (exit 1), the syntax of options and numbers, JSON numbers. Arguments:
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
# numbers are plain decimals: no blanks, '+', hexadecimal or inf
for v in " 5" "+5" "0x10" "5 " "inf"; do
  expect_status "top --limit '$v'"             2 top --limit "$v" "$INPUT"
done
expect_status "diff --limit 0x1"               2 diff --limit 0x1 "$INPUT" "$INPUT"
expect_status "live --points +3"               2 live --points +3 "$INPUT"
expect_status "top --from 0x10"                2 top --from 0x10 "$INPUT"
expect_status "top --min-size ' 1k'"           2 top --min-size " 1k" "$INPUT"
expect_status "subsample FACTOR +2"            2 subsample "$INPUT" "$T/a.ctf" +2
expect_status "run --every 0x1000"             2 run --every 0x1000 -- true
expect_status "run --rate ' 0.5'"              2 run --rate " 0.5" -- true
run top --from 1e-3 --min-size 1K --limit 3 "$INPUT"
if [ "$RC" -eq 0 ]; then pass "top --from 1e-3 --min-size 1K --limit 3: accepted"
else fail_run "top --from 1e-3 --min-size 1K --limit 3: expected exit 0"; fi

# MEMTRACE_THREADS: 1 and 2 (the default) are the values; any other is a
# usage error naming it, except where a command is only asked for its help
for v in 1 2; do
  MEMTRACE_THREADS=$v run top "$INPUT"
  if [ "$RC" -eq 0 ] && [ ! -s "$T/err" ]; then pass "MEMTRACE_THREADS=$v top: accepted"
  else fail_run "MEMTRACE_THREADS=$v top: expected exit 0"; fi
done
for v in 0 3 yes " 1"; do
  MEMTRACE_THREADS=$v run top "$INPUT"
  if [ "$RC" -eq 2 ] && grep -q "MEMTRACE_THREADS=$v in the environment" "$T/err" && [ ! -s "$T/out" ]
  then pass "MEMTRACE_THREADS='$v' top: usage error naming it"
  else fail_run "MEMTRACE_THREADS='$v' top: expected exit 2 and a message naming it"; fi
done
MEMTRACE_THREADS=yes run top --help
if [ "$RC" -eq 0 ] && grep -q "Usage" "$T/out"; then pass "MEMTRACE_THREADS=yes top --help: the help"
else fail_run "MEMTRACE_THREADS=yes top --help: expected the help"; fi

# Paired filters (--from/--to, --min-size/--max-size, --min-lifetime/
# --max-lifetime) are checked once the command line is read, on their final
# values: a repeated option counts by its last value, wherever the other
# one of its pair is (before, `--to 0.3 --from 0.5 --from 0.1` was refused
# at the first --from, the same options in another order accepted).
for args in "--to 0.3 --from 0.5 --from 0.1" "--from 0.5 --from 0.1 --to 0.3" \
            "--max-size 100 --min-size 1k --min-size 16" \
            "--min-size 1k --min-size 16 --max-size 100" \
            "--max-lifetime 0.1 --min-lifetime 1 --min-lifetime 0" \
            "--min-lifetime 1 --min-lifetime 0 --max-lifetime 0.1"; do
  # shellcheck disable=SC2086
  run top $args "$INPUT"
  if [ "$RC" -eq 0 ] && [ ! -s "$T/err" ]; then pass "top $args: accepted (the last values hold)"
  else fail_run "top $args: expected exit 0"; fi
done
# bounds that cannot be met, whatever the order: a usage error naming both
# options and their (final) values, in every command with the filters
pair_refused() {  # pair_refused "ARGS" "MESSAGE"
  local c args=$1 msg=$2
  for c in top live flamegraph hotspots diff pprof speedscope report; do
    local more=() trace=("$INPUT")
    case $c in
      diff) trace=("$INPUT" "$INPUT") ;;
      pprof|speedscope|report) more=(-o "$T/pair.$c") ;;
    esac
    # shellcheck disable=SC2086
    run "$c" $args "${trace[@]}" "${more[@]}"
    if [ "$RC" -eq 2 ] && grep -qxF "memtrace $c: $msg" "$T/err" && [ ! -e "$T/pair.$c" ]; then
      pass "$c $args: refused: $msg"
    else fail_run "$c $args: expected exit 2 and '$msg'"; fi
  done
}
pair_refused "--from 0.1 --to 0.3 --from 0.5" "--from 0.5 must be before --to 0.3"
pair_refused "--to 0.5 --from 0.5"            "--from 0.5 must be before --to 0.5"
pair_refused "--max-size 100 --min-size 16 --min-size 1k" "--min-size 1024 is above --max-size 100"
pair_refused "--min-lifetime 1 --max-lifetime 0.1" "--min-lifetime 1 is above --max-lifetime 0.1"
run top --min-size 1k --max-size 1KiB "$INPUT"
if [ "$RC" -eq 0 ]; then pass "top --min-size 1k --max-size 1KiB: equal sizes are a window"
else fail_run "top --min-size 1k --max-size 1KiB: expected exit 0"; fi

# Sizes: k, m, g, t in either case, alone or followed by iB, B or b, are
# powers of 1024 (1KiB is what the tools print); b or B alone, bytes. Each
# spelling filters as the number of bytes it stands for.
size_same() {  # size_same TEXT BYTES
  "$CLI" top --min-size "$2" "$INPUT" > "$T/size.ref" 2>&1
  run top --min-size "$1" "$INPUT"
  if [ "$RC" -eq 0 ] && cmp -s "$T/size.ref" "$T/out"; then pass "top --min-size $1 = --min-size $2"
  else fail_run "top --min-size $1: expected exit 0 and the output of --min-size $2"; fi
}
# (The byte counts are chosen so that each unit's neighbours filter
# differently on this trace: a wrong multiplier changes the output. Checked
# first, so that the comparisons below cannot pass for want of a difference.)
for pair in "1 1024" "1024 1048576" "1048576 1099511627776"; do
  read -r lo hi <<< "$pair"
  "$CLI" top --min-size "$lo" "$INPUT" > "$T/band.a" 2>&1
  "$CLI" top --min-size "$hi" "$INPUT" > "$T/band.b" 2>&1
  cmp -s "$T/band.a" "$T/band.b" &&
    fail "top --min-size $lo and $hi agree on $INPUT: the unit checks below could not fail"
done
size_same 16b 16
size_same 16B 16
for u in k K KiB kiB kB kb KB; do size_same "1$u" 1024; done
for u in m M MiB MB mb; do size_same "1$u" 1048576; done
for u in g G GiB GB; do size_same "1024$u" 1099511627776; done
for u in t T TiB TB; do size_same "1$u" 1099511627776; done
for v in 1KIB 1Kib 1iB 1KiBB 1bb 1x 1p 1k/; do
  expect_status "top --min-size $v"            2 top --min-size "$v" "$INPUT"
done
# ... and the help says so
run top --help
if grep -q "followed by iB or B" "$T/out" && grep -q "k, m, g, t in either case" "$T/out"; then
  pass "top --help: the size suffixes documented"
else fail_run "top --help: expected the size suffixes (k, m, g, t; iB, B) described"; fi

# --- JSON numbers: the shortest that reads back ------------------------------
# Doubles are printed with the fewest of 15, 16, 17 significant digits that
# read back as the same double ("sample_rate": 1e-05, not %.17g's
# 1.0000000000000001e-05). A number printed with more digits than that is
# noise. (Integers and the %.6g figures have fewer.)
NOISE_PY='
import re, sys
bad = []
for path in sys.argv[1:]:
    text = open(path, encoding="utf-8").read()
    for t in re.findall(r"(?<![\w.\x22])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.\x22])", text):
        if "." not in t and "e" not in t.lower():
            continue                    # an integer: not a double printed
        v = float(t)
        for p in (15, 16, 17):
            short = "%.*g" % (p, v)
            if float(short) == v:
                break
        digits = lambda s: len(re.sub(r"[-.]", "", s.lower().split("e")[0]).strip("0"))
        if digits(t) > digits(short):
            bad.append("%s: %s (%s reads back the same)" % (path, t, short))
print("\n".join(bad[:5]))
sys.exit(1 if bad else 0)
'
TRS=$CORPUS/traces
for tr in real-ocamlopt-1e-5 ref-test-ocamlopt synth-info-long real-deep synth-time; do
  [ -f "$TRS/$tr.ctf" ] || { fail "corpus trace missing: $TRS/$tr.ctf"; continue; }
  "$CLI" top --json "$TRS/$tr.ctf" > "$T/n.top.json" 2> /dev/null
  "$CLI" live --json "$TRS/$tr.ctf" > "$T/n.live.json" 2> /dev/null
  "$CLI" hotspots --json "$TRS/$tr.ctf" > "$T/n.hotspots.json" 2> /dev/null
  "$CLI" info --json "$TRS/$tr.ctf" > "$T/n.info.json" 2> /dev/null
  "$CLI" diff --json "$INPUT" "$TRS/$tr.ctf" > "$T/n.diff.json" 2> /dev/null
  "$CLI" speedscope "$TRS/$tr.ctf" -o "$T/n.speedscope.json" 2> /dev/null
  if python3 -c "$NOISE_PY" "$T"/n.*.json > "$T/noise"; then
    pass "$tr: top, live, hotspots, info, diff --json, speedscope: no float noise"
  else fail "$tr: JSON numbers longer than needed:"; cat "$T/noise"; fi
done
run top --json "$TRS/real-ocamlopt-1e-5.ctf"
if grep -qx '  "sample_rate": 1e-05,' "$T/out"; then pass "top --json: \"sample_rate\": 1e-05"
else fail_run "top --json of real-ocamlopt-1e-5: expected \"sample_rate\": 1e-05"; fi

# --- runtime errors: exit 1 -------------------------------------------------
missing=$T/no-such-trace.ctf
if expect_status "dump of a missing file" 1 dump "$missing"; then
  if grep -qF -- "$missing" "$T/err"; then pass "dump of a missing file: stderr names the file"
  else fail_run "dump of a missing file: stderr does not name $missing"; fi
fi
# ... once ("PATH: why", as for an output file), in every command that reads
# a trace (before, the reader's message named it again: "PATH: cannot open
# PATH: ...")
missing_named_once() {  # missing_named_once CMD ARGS... (ARGS name $missing)
  local c=$1
  run "$@"
  if [ "$RC" -eq 1 ] && grep -qxF "memtrace $c: $missing: No such file or directory" "$T/err" &&
     [ "$(grep -oF -- "$missing" "$T/err" | wc -l)" -eq 1 ]; then
    pass "$c of a missing file: 'PATH: No such file or directory', the file named once"
  else fail_run "$*: expected exit 1 and 'memtrace $c: PATH: No such file or directory'"; fi
}
for c in dump info check top live flamegraph hotspots; do missing_named_once $c "$missing"; done
missing_named_once copy "$missing" "$T/m.ctf"
missing_named_once strip-names "$missing" "$T/m.ctf"
missing_named_once subsample "$missing" "$T/m.ctf" 2
missing_named_once pprof "$missing" -o "$T/m.pb.gz"
missing_named_once speedscope "$missing" -o "$T/m.json"
missing_named_once report "$missing" -o "$T/m.html"
missing_named_once diff "$INPUT" "$missing"
missing_named_once diff "$missing" "$INPUT"
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
  script -qec "$CLI pprof $INPUT -o -" /dev/null > "$T/out" 2>&1; RC=$?
  if [ "$RC" -eq 2 ] && grep -q "standard output is a terminal" "$T/out"; then
    pass "pprof -o - on a terminal: refused"
  else fail_run "pprof -o - on a terminal: expected exit 2 and a message"; fi
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
  if [ "$RC" -eq 1 ] && grep -qx "memtrace dump: writing standard output: No space left on device" "$T/err"
  then pass "dump to /dev/full (write error): exit 1, the output's error named"
  else fail_run "dump to /dev/full (write error): expected exit 1 and the write's error on stderr"; fi
  for c in info check; do
    "$CLI" $c "$INPUT" > /dev/full 2> "$T/err"; RC=$?
    if [ "$RC" -eq 1 ] && grep -qx "memtrace $c: writing standard output: No space left on device" "$T/err"
    then pass "$c to /dev/full: exit 1, the write's error"
    else fail_run "$c to /dev/full: expected exit 1 and the write's error"; fi
  done
  "$CLI" copy "$INPUT" /dev/full > "$T/out" 2> "$T/err"; RC=$?
  if [ "$RC" -eq 1 ] && grep -q "^memtrace copy: /dev/full: write failed at offset 0: No space left" "$T/err"
  then pass "copy to /dev/full: exit 1, the output named"
  else fail_run "copy to /dev/full: expected exit 1 and a message naming the output"; fi
  # a report that cannot be written whole leaves no file behind, and /dev/full
  # (not a regular file) is left alone
  for c in pprof speedscope report; do
    "$CLI" $c "$INPUT" -o /dev/full > "$T/out" 2> "$T/err"; RC=$?
    if [ "$RC" -eq 1 ] && [ -c /dev/full ] && grep -q "/dev/full: writing: No space left" "$T/err"; then
      pass "$c -o /dev/full: exit 1, the device kept"
    else fail_run "$c -o /dev/full: expected exit 1, a message and /dev/full intact"; fi
  done
fi

# A file too big for RLIMIT_FSIZE (write fails with EFBIG, SIGXFSZ ignored):
# exit 1 and no half-written file left. (A real trace: synth-basic's
# profile fits in the 1 KiB allowed.)
BIGGER=$CORPUS/traces/real-ocamlopt-1e-5.ctf
for c in pprof speedscope report; do
  (trap '' XFSZ; ulimit -f 1; exec "$CLI" $c "$BIGGER" -o "$T/big.$c") > "$T/out" 2> "$T/err"; RC=$?
  if [ "$RC" -eq 1 ] && grep -q "big.$c: writing: File too large" "$T/err" && [ ! -e "$T/big.$c" ]; then
    pass "$c: a failed write leaves no file"
  else fail_run "$c over RLIMIT_FSIZE: expected exit 1, the error, and no file"; fi
done

# --- one syntax for every command: --opt=value, and -- ----------------------
# (each pair of command lines must give the same output)
same_output() {  # same_output DESCRIPTION "ARGS A" "ARGS B" (word-split)
  local d=$1
  # shellcheck disable=SC2086
  "$CLI" $2 > "$T/a.out" 2> "$T/a.err"; local ra=$?
  # shellcheck disable=SC2086
  "$CLI" $3 > "$T/b.out" 2> "$T/b.err"; local rb=$?
  if [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] && [ -s "$T/a.out" ] && cmp -s "$T/a.out" "$T/b.out"; then
    pass "$d"
  else RC="$ra/$rb"; cp "$T/b.err" "$T/err"; cp "$T/b.out" "$T/out"; fail_run "$d: outputs differ"; fi
}
same_output "top --limit=2 == top --limit 2" "top --limit 2 $INPUT" "top --limit=2 $INPUT"
same_output "top --by=line --sort=end" "top --by line --sort end $INPUT" "top --by=line --sort=end $INPUT"
same_output "diff --limit=1 --by=line" "diff --limit 1 --by line $INPUT $INPUT" "diff --limit=1 --by=line $INPUT $INPUT"
same_output "live --points=3" "live --points 3 $INPUT" "live --points=3 $INPUT"
for c in dump info check hotspots flamegraph top live; do
  same_output "$c -- TRACE" "$c $INPUT" "$c -- $INPUT"
done
same_output "diff -- BASE NEW" "diff $INPUT $INPUT" "diff -- $INPUT $INPUT"
cp "$INPUT" "$T/-dash.ctf"
cli_abs=$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI")
(cd "$T" && "$cli_abs" info -- -dash.ctf > "$T/out" 2> "$T/err"); RC=$?
if [ "$RC" -eq 0 ] && grep -q "dash.ctf" "$T/out"; then pass "info -- -dash.ctf: a file whose name starts with -"
else fail_run "info -- -dash.ctf: expected the file read"; fi
run copy -- "$T/-dash.ctf" "$T/dash-copy.ctf"
if [ "$RC" -eq 0 ] && cmp -s "$T/ok.ctf" "$T/dash-copy.ctf"; then pass "copy -- IN OUT"
else fail_run "copy -- IN OUT: expected the default copy's bytes"; fi
run pprof --output="$T/eq.pb.gz" -- "$INPUT"
if [ "$RC" -eq 0 ] && [ -s "$T/eq.pb.gz" ]; then pass "pprof --output=FILE -- TRACE"
else fail_run "pprof --output=FILE -- TRACE: expected the profile"; fi
expect_status "top --limit (no value)"   2 top "$INPUT" --limit
expect_status "top --limit=x"            2 top --limit=x "$INPUT"
if expect_status "run --rate= (empty)" 2 run --rate= true; then
  # (the value after '=' was taken: before, '--rate=' was an unknown option)
  grep -q "^memtrace run: --rate : the rate must be a number" "$T/err" &&
    pass "run --rate=: the empty value refused as a rate" ||
    fail_run "run --rate=: expected the rate's error, not another"
fi
expect_status "dump --json=1 (a flag with a value)" 2 dump --json=1 "$INPUT"

# --- the output is never the input -------------------------------------------
# (report's default name for h.ctf is h.html: here a hard link to it)
cp "$INPUT" "$T/in.ctf"; cp "$INPUT" "$T/in.html"; ln -s "$T/in.ctf" "$T/link"
cp "$INPUT" "$T/h.ctf"; ln "$T/h.ctf" "$T/h.html"
for args in "pprof $T/in.ctf -o $T/in.ctf" "speedscope $T/in.ctf --output=$T/link" \
            "report $T/in.ctf -o $T/link" "report $T/h.ctf"; do
  # shellcheck disable=SC2086
  run $args
  if [ "$RC" -eq 2 ] && grep -q "must not be the input" "$T/err" &&
     cmp -s "$INPUT" "$T/in.ctf" && cmp -s "$INPUT" "$T/in.html" && cmp -s "$INPUT" "$T/h.ctf"; then
    pass "memtrace $args: refused, the trace intact"
  else fail_run "memtrace $args: expected exit 2 and the trace intact"; fi
done

# --- stdin where TRACE is read twice ------------------------------------------
for c in flamegraph hotspots live; do
  "$CLI" $c --live-at peak - < "$INPUT" > "$T/out" 2> "$T/err"; RC=$?
  if [ "$RC" -eq 2 ] && grep -q "cannot be standard input" "$T/err"; then
    pass "$c --live-at peak -: usage error"
  else fail_run "$c --live-at peak -: expected exit 2 and why"; fi
done

# --- check's result line ------------------------------------------------------
run check "$missing"
if [ "$RC" -eq 1 ] && grep -qx "result: *INVALID (could not be read)" "$T/out"; then
  pass "check of a missing file: INVALID (could not be read)"
else fail_run "check of a missing file: expected exit 1 and 'INVALID (could not be read)'"; fi
if [ -f "$CORPUS/malformed/bad-dropped-packet.ctf" ]; then
  run check "$CORPUS/malformed/bad-dropped-packet.ctf"
  if [ "$RC" -eq 0 ] && grep -qx "result: *valid, 9 packets skipped" "$T/out"; then
    pass "check: the result line counts the skipped packets"
  else fail_run "check of bad-dropped-packet.ctf: expected 'valid, 9 packets skipped'"; fi
fi
run diff "$INPUT" -
if [ "$RC" -eq 2 ] && grep -q "NEW is read twice and cannot be standard input" "$T/err"; then
  pass "diff TRACE -: usage error saying why"
else fail_run "diff TRACE -: expected exit 2 and why"; fi

# --- estimates from allocations whose figures mean nothing --------------------
# (synth-abuse: 2 negative lengths, 3 sample counts <= 0; synth-basic: none)
if [ -f "$CORPUS/traces/synth-abuse.ctf" ]; then
  for c in top live; do
    run $c "$CORPUS/traces/synth-abuse.ctf"
    if [ "$RC" -eq 0 ] && grep -q "^memtrace $c: warning: .*synth-abuse.ctf: 5 allocations with nsamples <= 0 or a negative length" "$T/err"; then
      pass "$c warns about synth-abuse's 5 odd allocations"
    else fail_run "$c of synth-abuse.ctf: expected exit 0 and a warning about 5 allocations"; fi
    run $c "$INPUT"
    if [ "$RC" -eq 0 ] && [ ! -s "$T/err" ]; then pass "$c: no warning on a trace without them"
    else fail_run "$c of $INPUT: expected exit 0 and nothing on stderr"; fi
  done
fi

run frobnicate
if [ "$RC" -eq 2 ] && [ "$(wc -l < "$T/err")" -eq 2 ] && grep -q "Try 'memtrace --help'" "$T/err"; then
  pass "unknown command: two lines, not the whole help"
else fail_run "unknown command: expected exit 2 and a two-line message"; fi

finish
