# tests/lib.sh - helpers shared by the command-line tools' shell tests
# (sourced, not run): sanitizer exit codes, arguments, a temporary directory
# removed on exit, pass/fail counting, running the CLI with its output and
# status captured, checks on that output, and the final summary and status.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   parse_args "$@"; setup NAME      # or set CLI, ... yourself, then setup
#   expect 2 "no TRACE" top; has "header" "Allocated"; ...
#   finish
#
# Scripts built on ../corpus/corpus_lib.sh (check, info) use the corpus_*
# helpers at the end instead, which count with corpus_lib's mt_fail.
# shellcheck shell=bash disable=SC2034   # variables are for the sourcing scripts

export LC_ALL=C
# Sanitizer reports must not look like the CLI's own exit 1 (ASan and UBSan
# exit 1 by default): make them exit 134, like a crash.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=134"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=134:print_stacktrace=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=134"

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLI='' CHECK='' GEN='' DEFAULT_CORPUS='' CORPUS='' TR='' MODE='' SECTION='' T='' RC=0
FAILS=0 PASSES=0

die() { echo "ERROR: $*"; exit 1; }

# parse_args ARGS... : the test scripts' common arguments
#   --cli PATH             the memtrace binary
#   --check PATH           a checker program of the test (strip_names, subsample)
#   --gen PATH             the synthetic trace writer (analysis_gen_synth)
#   --default-corpus DIR   corpus used when MEMTRACE_CORPUS is unset
#   SECTION                what part of the test to run
parse_args() {
  while [ $# -gt 0 ]; do
    case "$1" in
      --cli) CLI=$2; shift 2 ;;
      --check) CHECK=$2; shift 2 ;;
      --gen) GEN=$2; shift 2 ;;
      --default-corpus) DEFAULT_CORPUS=$2; shift 2 ;;
      -*) die "unknown test-script argument $1" ;;
      *) [ -z "$SECTION" ] || die "more than one section: $SECTION, $1"; SECTION=$1; shift ;;
    esac
  done
}

# json_ok FILE [EXPR] : FILE is UTF-8 JSON and, if given, the Python
# expression EXPR over it (named j) is true; if not, JSON_ERR says why. One
# python3 process started on first use answers every call of the shell that
# started it (starting one takes ~0.3 s here, and some tests check hundreds
# of files); a subshell, which cannot use it, starts its own for each call.
JSON_ERR='' JSON_SRV_OWNER=''
JSON_PY='
import json, sys
for line in sys.stdin:
    path, _, expr = line.rstrip("\n").partition("\t")
    try:
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        ok = "ok" if not expr or eval(expr, {"j": j}) else "false: " + expr
    except ValueError as e:
        ok = "not JSON (or not UTF-8): " + str(e)
    except Exception as e:
        ok = "%s: %s" % (type(e).__name__, e)
    print(ok.replace("\n", " ")[:300], flush=True)
'
json_ok() {
  local reply='' query
  query=$(printf '%s\t%s' "$1" "${2:-}")
  if [ -z "$JSON_SRV_OWNER" ] && [ "$BASHPID" = "$$" ]; then
    coproc JSON_SRV { python3 -c "$JSON_PY"; }
    JSON_SRV_OWNER=$BASHPID
  fi
  if [ "$JSON_SRV_OWNER" = "$BASHPID" ]; then
    printf '%s\n' "$query" >&"${JSON_SRV[1]}" && IFS= read -r reply <&"${JSON_SRV[0]}"
  else
    reply=$(printf '%s\n' "$query" | python3 -c "$JSON_PY")
  fi
  [ "$reply" = ok ] && return 0
  JSON_ERR=${reply:-the python3 JSON checker died}
  return 1
}

# setup NAME [VAR...] : checks that $CLI and the programs named by the VARs
# (CHECK, GEN) can run, sets CORPUS ($MEMTRACE_CORPUS, else $DEFAULT_CORPUS),
# makes the temporary directory $T (memtrace-NAME.XXXXXX), removed on exit.
setup() {
  local name=$1 p; shift
  for p in CLI "$@"; do
    [ -n "${!p}" ] && [ -x "${!p}" ] ||
      die "${p,,} program not given, not found or not executable: '${!p}' (build it first)"
  done
  CORPUS=${MEMTRACE_CORPUS:-$DEFAULT_CORPUS}
  T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-$name.XXXXXX") || die "mktemp failed"
  trap 'rm -rf "$T"' EXIT
}

# require_corpus : a missing reference corpus is a failure, never a skip.
# Sets TR=$CORPUS/traces.
require_corpus() {
  if [ -z "$CORPUS" ] || [ ! -d "$CORPUS/traces" ]; then
    die "reference corpus not found at '$CORPUS' (set MEMTRACE_CORPUS=/path/to/corpus" \
        "or configure with -DMT_CORPUS_DIR=...)"
  fi
  TR=$CORPUS/traces
}

fail() { FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$*"; }
pass() { PASSES=$((PASSES + 1)); printf 'ok   %s\n' "$*"; }

# assert DESCRIPTION COMMAND... : pass if COMMAND succeeds, else fail
assert() {
  local d=$1; shift
  if "$@"; then pass "$d"; else fail "$d (false: $*)"; fi
}

# need FILE : fails (and returns 1) if the corpus file FILE is missing
need() {
  [ -f "$1" ] && return 0
  fail "corpus file missing: $1"
  return 1
}

# ref_text PATH : prints PATH, or PATH.xz decompressed; returns 1 if neither exists
ref_text() {
  if [ -f "$1" ]; then cat -- "$1"
  elif [ -f "$1.xz" ]; then xz -dc -- "$1.xz"
  else return 1; fi
}

# by_source CMD TRACE MEASURE : the sum, over --source minor, major and
# external, of MEASURE (a command reading `memtrace CMD --source S TRACE`)
by_source() {
  local sum=0 src n
  for src in minor major external; do
    n=$("$CLI" "$1" --source "$src" "$2" | "$3")
    sum=$((sum + n))
  done
  echo "$sum"
}

# sanitizer_report FILE : FILE (a stderr capture) holds a sanitizer report
sanitizer_report() {
  grep -Eq 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|UndefinedBehaviorSanitizer' "$1"
}

# crashed : the last run died of a signal or a sanitizer report
crashed() { [ "$RC" -ge 128 ] || sanitizer_report "$T/err"; }

show_err() { head -n "${1:-5}" "$T/err" | cut -c1-200 | sed 's/^/    | /'; }
show_out() { head -n "${1:-20}" "$T/out" | cut -c1-200 | sed 's/^/    | /'; }

# show_diff EXPECTED ACTUAL [LINES] : the start of a unified diff, indented
show_diff() {
  diff -u --label expected --label actual "$1" "$2" | head -n "${3:-30}" | cut -c1-200 | sed 's/^/    /'
}

# run ARGS... : runs `$CLI ARGS` with no input; stdout in $T/out, stderr in
# $T/err, status in RC. A crash or sanitizer report is shown at once.
run() {
  "$CLI" "$@" > "$T/out" 2> "$T/err" < /dev/null
  RC=$?
  if crashed; then
    echo "    crash or sanitizer report (exit $RC) from: memtrace $*"
    show_err 20
  fi
}

# expect RC DESCRIPTION ARGS... : `run ARGS` must exit RC without a crash or
# sanitizer report; returns 1 (after a FAIL and the stderr) if not.
expect() {
  local want=$1 what=$2; shift 2
  run "$@"
  if crashed || [ "$RC" -ne "$want" ]; then
    fail "$what: memtrace $* exited $RC, expected $want"
    show_err 20
    return 1
  fi
  pass "$what"
}

# has / lacks DESCRIPTION FIXED-STRING : the last run's stdout holds / does
# not hold FIXED-STRING
has() {
  grep -qF -- "$2" "$T/out" && return 0
  fail "$1: output lacks '$2'"
  show_out
  return 1
}
lacks() {
  grep -qF -- "$2" "$T/out" || return 0
  fail "$1: output has '$2'"
  grep -nF -- "$2" "$T/out" | head -n 5 | cut -c1-200 | sed 's/^/    | /'
  return 1
}

# help_lists CMD NEEDLE... : `memtrace CMD --help` exits 0 and prints every
# NEEDLE on stdout
help_lists() {
  local cmd=$1 n; shift
  expect 0 "$cmd --help" "$cmd" --help || return 1
  for n in "$@"; do
    grep -qF -- "$n" "$T/out" || fail "$cmd --help lacks '$n'"
  done
}

# usage_errors CMD OUT CASE... : each CASE is "DESCRIPTION|ARGS" (ARGS are
# evaluated by the shell); `memtrace CMD ARGS` must exit 2 with a message on
# stderr and must not create OUT.
usage_errors() {
  local cmd=$1 out=$2 c d args; shift 2
  for c in "$@"; do
    d=${c%%|*}
    args=${c#*|}
    rm -f "$out"
    eval "run \"\$cmd\" $args"
    if [ "$RC" -ne 2 ]; then fail "$d: expected exit 2, got $RC"; show_err
    elif [ ! -s "$T/err" ]; then fail "$d: no message on stderr"
    elif [ -e "$out" ]; then fail "$d: output file created"
    else pass "$d: exit 2"; fi
  done
}

# in_out_errors CMD IN ARGS... : what `memtrace CMD IN OUT ARGS` must refuse:
# OUT a link to IN (exit 2, IN intact), a missing IN (exit 1 naming it), an
# OUT that cannot be created (exit 1 with a message)
in_out_errors() {
  local cmd=$1 in=$2; shift 2
  cp "$in" "$T/in.ctf"
  ln -s "$T/in.ctf" "$T/link.ctf"
  run "$cmd" "$T/in.ctf" "$T/link.ctf" "$@"
  if [ "$RC" -ne 2 ]; then fail "OUT is a link to IN: expected exit 2, got $RC"
  elif ! cmp -s "$in" "$T/in.ctf"; then fail "OUT is a link to IN: IN was modified"
  else pass "OUT is a link to IN: exit 2, IN intact"; fi
  run "$cmd" "$T/nonexistent.ctf" "$T/o.ctf" "$@"
  if [ "$RC" -ne 1 ] || ! grep -q nonexistent "$T/err"; then
    fail "missing input: expected exit 1 naming the file, got $RC"
  else pass "missing input: exit 1"; fi
  run "$cmd" "$in" "$T/no/such/dir/o.ctf" "$@"
  if [ "$RC" -ne 1 ] || [ ! -s "$T/err" ]; then fail "uncreatable output: expected exit 1, got $RC"
  else pass "uncreatable output: exit 1"; fi
}

# rejected_at_offset DESCRIPTION FILE : the last run exited 1 with a message
# naming FILE and a byte offset
rejected_at_offset() {
  if [ "$RC" -ne 1 ]; then fail "$1: expected exit 1, got $RC"; show_err; return 1; fi
  if ! grep -qF -- "$2" "$T/err" || ! grep -q offset "$T/err"; then
    fail "$1: message should name the file and the offset"; show_err; return 1
  fi
}

# bad_headers CMD ARGS... : on the corpus traces damaged in their header,
# `memtrace CMD TRACE $T/o.ctf ARGS` exits 1 with a message
bad_headers() {
  local cmd=$1 t; shift
  for t in bad-empty bad-magic bad-truncated-info; do
    need "$CORPUS/malformed/$t.ctf" || continue
    run "$cmd" "$CORPUS/malformed/$t.ctf" "$T/o.ctf" "$@"
    if [ "$RC" -ne 1 ] || [ ! -s "$T/err" ]; then fail "$t: expected exit 1 and a message, got $RC"
    else pass "$t: exit 1"; fi
  done
}

# checker ARGS... : runs the test's $CHECK program, its output indented
checker() {
  "$CHECK" "$@" > "$T/chk" 2>&1
  local rc=$?
  sed 's/^/    /' "$T/chk"
  return $rc
}

# finish : prints the summary and exits 0 if something passed and nothing
# failed, else 1
finish() {
  echo
  if [ "$FAILS" -ne 0 ]; then echo "SUMMARY: $FAILS failed, $PASSES passed"; exit 1; fi
  if [ "$PASSES" -eq 0 ]; then echo "SUMMARY: nothing was checked"; exit 1; fi
  echo "SUMMARY: all $PASSES checks passed"
  exit 0
}

# --- for scripts built on ../corpus/corpus_lib.sh (check, info) -----------

# corpus_init ARGS... : --mode M, then corpus_lib.sh's arguments (--cli PATH
# --default-corpus DIR); loads corpus_lib.sh (MT_TMP, mt_fail, ...)
corpus_init() {
  local args=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --mode) MODE=$2; shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  # shellcheck source=corpus/corpus_lib.sh
  . "$LIB_DIR/corpus/corpus_lib.sh"
  mt_parse_args "${args[@]}"
}

# corpus_each SUBDIR FUNC : runs `FUNC DIR NAME` for each DIR/NAME.ctf, DIR
# being the corpus's SUBDIR (files found now; none at all is fatal)
corpus_each() {
  local ctfs ctf
  shopt -s nullglob
  ctfs=("$CORPUS/$1"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no $1/*.ctf in corpus $CORPUS"
  for ctf in "${ctfs[@]}"; do
    "$2" "$CORPUS/$1" "$(basename "$ctf" .ctf)"
  done
}

# corpus_json_ok NAME FILE [EXPR] : FILE parses as JSON (and EXPR holds:
# json_ok)
corpus_json_ok() {
  json_ok "$2" "${3:-}" && return 0
  mt_fail "$1" "--json output: $JSON_ERR"
  return 1
}

# corpus_expect DESCRIPTION RC ARGS... : `$CLI ARGS` exits RC (no crash, no
# sanitizer report), with a message on stderr unless RC is 0; out/err in MT_TMP
corpus_expect() {
  local d=$1 want=$2; shift 2
  MT_CHECKED=$((MT_CHECKED + 1))
  "$CLI" "$@" > "$MT_TMP/out" 2> "$MT_TMP/err" < /dev/null
  RC=$?
  mt_check_status "$d" "$RC" "$MT_TMP/err" "$want" 0 || return 1
  if [ "$want" -ne 0 ] && [ ! -s "$MT_TMP/err" ]; then
    mt_fail "$d" "no message on stderr"; return 1
  fi
  echo "ok   $d"
}

# corpus_usage CMD INPUT WORD... : the usage contract of a one-trace command:
# CMD --help (exit 0, every WORD, nothing on stderr), -h, help CMD; exit 2
# with no file, --json and no file, two files, an unknown option; exit 1
# naming a missing file; exit 1 with a message when stdout is /dev/full.
corpus_usage() {
  local cmd=$1 input=$2 w; shift 2
  if corpus_expect "$cmd --help" 0 "$cmd" --help; then
    for w in "$@"; do
      grep -q -- "$w" "$MT_TMP/out" || mt_fail "$cmd --help" "help text lacks '$w'"
    done
    [ -s "$MT_TMP/err" ] && mt_fail "$cmd --help" "output on stderr"
  fi
  corpus_expect "$cmd -h" 0 "$cmd" -h
  corpus_expect "help $cmd" 0 help "$cmd"
  corpus_expect "$cmd (no file)" 2 "$cmd"
  corpus_expect "$cmd --json (no file)" 2 "$cmd" --json
  corpus_expect "$cmd two files" 2 "$cmd" "$input" "$input"
  corpus_expect "$cmd unknown option" 2 "$cmd" --no-such-option "$input"
  corpus_expect "$cmd missing file" 1 "$cmd" "$MT_TMP/no-such.ctf"
  grep -qF "$MT_TMP/no-such.ctf" "$MT_TMP/err" || mt_fail "$cmd missing file" "stderr does not name the file"
  if [ -w /dev/full ]; then
    MT_CHECKED=$((MT_CHECKED + 1))
    "$CLI" "$cmd" "$input" > /dev/full 2> "$MT_TMP/err"; RC=$?
    if mt_check_status "$cmd > /dev/full" "$RC" "$MT_TMP/err" 1 0; then
      if [ -s "$MT_TMP/err" ]; then echo "ok   $cmd > /dev/full"
      else mt_fail "$cmd > /dev/full" "no message on stderr"; fi
    fi
  fi
}

# corpus_pipe CMD INPUT SAME : `cat INPUT | memtrace CMD -` exits 0 with an
# empty stderr, and `SAME FILE_OUTPUT PIPE_OUTPUT` (a command) holds
corpus_pipe() {
  local cmd=$1 input=$2 same=$3 d="$1 - from a pipe"
  MT_CHECKED=$((MT_CHECKED + 1))
  "$CLI" "$cmd" "$input" > "$MT_TMP/a" 2>/dev/null
  cat "$input" | "$CLI" "$cmd" - > "$MT_TMP/b" 2> "$MT_TMP/err"; RC=$?
  mt_check_status "$d" "$RC" "$MT_TMP/err" 0 1 || return 1
  if "$same" "$MT_TMP/a" "$MT_TMP/b"; then
    echo "ok   $d"
  else
    mt_fail "$d" "output differs from that of \`$cmd $input\`"
    diff "$MT_TMP/a" "$MT_TMP/b" | head -n 10
  fi
}

# corpus_main MODE... : runs the function named by --mode (one of the MODEs),
# then the summary; fails if nothing was checked. Its status is the test's.
corpus_main() {
  local m
  for m in "$@"; do
    [ "$m" = "$MODE" ] || continue
    "$m"
    [ "$MT_CHECKED" -gt 0 ] || mt_die "nothing was checked (mode $MODE)"
    mt_summary
    return
  done
  mt_die "unknown --mode '$MODE' (one of: $*)"
}
