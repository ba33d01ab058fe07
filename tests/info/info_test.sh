#!/usr/bin/env bash
# Tests of `memtrace info` against the reference corpus. Modes (--mode):
#   golden     every traces/NAME.ctf with a NAME.identify.txt and no
#              NAME.identify.exit (the reference succeeded): run from inside
#              the directory with the bare file name, as the reference was;
#              stdout must equal NAME.identify.txt, exit 0, empty stderr.
#              Traces where the reference crashed (NAME.identify.exit, e.g.
#              synth-abuse): exit 0, the reference's lines first, then a
#              complete statistics section.
#   malformed  every malformed/NAME.ctf with a NAME.identify.txt: stdout equals
#              it (the reference prints the header before reading events);
#              exit 0 with exactly the reference's stderr where it succeeded,
#              else exit 1 with "memtrace info: NAME.ctf: offset N: ..." on stderr.
#   json       --json on every traces/*.ctf parses (json_ok, tests/lib.sh) and
#              each number of the text report, recomputed from the JSON with
#              the reference's formatter, equals the text.
#   usage      --help, bad usage (exit 2), missing file (exit 1), stdin, /dev/full.
# Other arguments as corpus_lib.sh: --cli PATH --default-corpus DIR.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
corpus_init "$@"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLI=$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI")

# run_in DIR OUT ERR ARGS... : run the CLI inside DIR; sets RC
run_in() {
  local d=$1 o=$2 e=$3; shift 3
  (cd "$d" && "$CLI" "$@") > "$o" 2> "$e" < /dev/null
  RC=$?
}

# golden_one DIR NAME : DIR/NAME.ctf against NAME.identify.txt (see golden above)
golden_one() {
  local dir=$1 name=$2
  [ -f "$dir/$name.identify.txt" ] || return
  MT_CHECKED=$((MT_CHECKED + 1))
  run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
  if [ ! -f "$dir/$name.identify.exit" ]; then
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || return
    if ! cmp -s "$dir/$name.identify.txt" "$MT_TMP/out"; then
      mt_fail "$name.ctf" "output differs from $name.identify.txt"
      show_diff "$dir/$name.identify.txt" "$MT_TMP/out"
      return
    fi
    echo "ok   $name.ctf"
  else
    # The reference died (assertion); we must give a full report.
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 0 || return
    local n; n=$(wc -l < "$dir/$name.identify.txt")
    if ! head -n "$n" "$MT_TMP/out" | cmp -s - "$dir/$name.identify.txt"; then
      mt_fail "$name.ctf" "the first $n lines differ from what the reference printed before it died"
      show_diff "$dir/$name.identify.txt" <(head -n "$n" "$MT_TMP/out") 20
      return
    fi
    if ! tail -n +"$((n + 1))" "$MT_TMP/out" | grep -Eq '^   Minor: .*/s allocations, .*% promoted$' ||
       ! grep -Eq '^   Major: .*/s allocations \(.*/s direct\), .*/s collections$' "$MT_TMP/out" ||
       ! grep -Eq '^   Sizes \(by word\): .*% <= 4w, .*% <= 16w, .*% <= 256w\. Max: ' "$MT_TMP/out" ||
       ! grep -Eq '^   Runtime: [0-9]+\.[0-9]{3} s$' "$MT_TMP/out" ||
       [ "$(wc -l < "$MT_TMP/out")" -ne $((n + 4)) ]; then
      mt_fail "$name.ctf" "incomplete statistics section (reference exit $(cat "$dir/$name.identify.exit"))"
      sed 's/^/    | /' "$MT_TMP/out" | tail -n 6
      return
    fi
    echo "ok   $name.ctf (reference failed; full report given)"
  fi
}
golden() { corpus_each traces golden_one; }

# malformed_one DIR NAME : DIR/NAME.ctf, a malformed trace (see malformed above)
malformed_one() {
  local dir=$1 name=$2 want
  [ -f "$dir/$name.identify.txt" ] || return
  MT_CHECKED=$((MT_CHECKED + 1))
  want=0
  [ -f "$dir/$name.identify.exit" ] && want=1
  run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
  mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" "$want" 0 || return
  if ! cmp -s "$dir/$name.identify.txt" "$MT_TMP/out"; then
    mt_fail "$name.ctf" "stdout differs from $name.identify.txt"
    show_diff "$dir/$name.identify.txt" "$MT_TMP/out"
    return
  fi
  if [ "$want" -eq 0 ]; then
    if ! cmp -s <(cat "$dir/$name.identify.err" 2>/dev/null) "$MT_TMP/err"; then
      mt_fail "$name.ctf" "stderr is not exactly the reference's"
      show_diff <(cat "$dir/$name.identify.err" 2>/dev/null) "$MT_TMP/err" 20
      return
    fi
  elif ! tail -n 1 "$MT_TMP/err" | grep -Eq "^memtrace info: $name\\.ctf: offset [0-9]+: ."; then
    mt_fail "$name.ctf" "last stderr line is not 'memtrace info: $name.ctf: offset N: message'"
    mt_show_stderr "$MT_TMP/err"
    return
  fi
  echo "ok   $name.ctf (exit $RC)"
}
malformed() { corpus_each malformed malformed_one; }

# json_one DIR NAME : DIR/NAME.ctf --json against the text (see json above)
json_one() {
  local dir=$1 name=$2
  MT_CHECKED=$((MT_CHECKED + 1))
  run_in "$dir" "$MT_TMP/json" "$MT_TMP/err" info --json "$name.ctf"
  mt_check_status "$name.ctf --json" "$RC" "$MT_TMP/err" 0 1 || return
  corpus_json_ok "$name.ctf" "$MT_TMP/json" || return
  run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
  mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || return
  if ! python3 "$HERE/agree.py" "$MT_TMP/json" "$MT_TMP/out" > "$MT_TMP/agree.out" 2>&1; then
    mt_fail "$name.ctf" "--json numbers disagree with the text report"
    head -n 20 "$MT_TMP/agree.out"
    return
  fi
  echo "ok   $name.ctf --json"
}
json() {
  command -v python3 > /dev/null || mt_die "python3 is needed for the --json test"
  corpus_each traces json_one
}

usage() {
  local input=$CORPUS/traces/synth-basic.ctf
  [ -f "$input" ] || mt_die "corpus trace $input not found"
  corpus_usage info "$input" Usage --json 'Exit status' Minor Runtime
  corpus_expect "info directory" 1 info "$MT_TMP"
  # stdin: same report, with '-' as the name
  MT_CHECKED=$((MT_CHECKED + 1))
  "$CLI" info "$input" > "$MT_TMP/a" 2>/dev/null
  "$CLI" info - < "$input" > "$MT_TMP/b" 2> "$MT_TMP/err"; RC=$?
  if mt_check_status "info - < file" "$RC" "$MT_TMP/err" 0 1; then
    if cmp -s <(tail -n +2 "$MT_TMP/a") <(tail -n +2 "$MT_TMP/b") && head -n 1 "$MT_TMP/b" | grep -q '^Trace file - ('; then
      echo "ok   info - < file"
    else
      mt_fail "info - < file" "report differs from the one of the file"
    fi
  fi
  corpus_pipe info "$input" same_report
}

# same_report A B : the report B of a pipe is A, with '-' as the file name
same_report() { cmp -s "$2" <(sed '1s/^Trace file [^ ]* /Trace file - /' "$1"); }

corpus_main golden malformed json usage
