#!/usr/bin/env bash
# Tests of `memtrace check` against the reference corpus. Modes (--mode):
#   valid      every traces/*.ctf: exit 0, empty stderr, "result: valid";
#              --json parses, and where NAME.stats.txt exists its reference
#              Reader counts (reader.allocs, promotes, collects, allocs_minor,
#              allocs_major, allocs_external, distinct_codes,
#              codes_without_location, backtrace_max) equal check's; the text
#              summary shows the same counts. Traces with semantic oddities
#              (synth-abuse) must carry a warnings: section.
#   malformed  every malformed/*.ctf: NAME.exit != 0 (reference dump failed):
#              exit 1, "result: INVALID" on stdout and
#              "memtrace check: NAME.ctf: offset N: ..." on stderr;
#              NAME.exit == 0: exit 0, and the skipped packets of the
#              reference (the "skipping" lines of NAME.dump.err) are counted
#              and listed in the summary. --json parses in both cases.
#              Never a crash (exit >= 128).
#   usage      --help, bad usage (exit 2), missing file (exit 1), stdin.
# Other arguments as corpus_lib.sh: --cli PATH --default-corpus DIR.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
corpus_init "$@"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v python3 > /dev/null || mt_die "python3 is needed (JSON checks)"

# valid_one DIR NAME : DIR/NAME.ctf, a valid trace (see valid above)
valid_one() {
  local dir=$1 name=$2 ctf=$1/$2.ctf
  MT_CHECKED=$((MT_CHECKED + 1))
  "$CLI" check "$ctf" > "$MT_TMP/out" 2> "$MT_TMP/err" < /dev/null; RC=$?
  mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || return
  "$CLI" check --json "$ctf" > "$MT_TMP/json" 2> "$MT_TMP/err" < /dev/null; RC=$?
  mt_check_status "$name.ctf --json" "$RC" "$MT_TMP/err" 0 1 || return
  corpus_json_ok "$name.ctf" "$MT_TMP/json" || return
  local stats=()
  [ -f "$dir/$name.stats.txt" ] && stats=("$dir/$name.stats.txt")
  if ! python3 "$HERE/stats.py" "$MT_TMP/json" "$MT_TMP/out" "${stats[@]}" > "$MT_TMP/py.out" 2>&1; then
    mt_fail "$name.ctf" "counts disagree"
    head -n 20 "$MT_TMP/py.out"
    return
  fi
  case "$name" in
    synth-abuse)   # double collect, promote after collect, negative length, nsamples <= 0
      if ! grep -q '^warnings:$' "$MT_TMP/out" ||
         ! grep -q 'collect of an id no longer live' "$MT_TMP/out" ||
         ! grep -q 'promote of an object not on the minor heap' "$MT_TMP/out" ||
         ! grep -q 'negative length' "$MT_TMP/out" ||
         ! grep -q 'nsamples <= 0' "$MT_TMP/out"; then
        mt_fail "$name.ctf" "the expected warnings are missing"
        sed 's/^/    | /' "$MT_TMP/out"
        return
      fi ;;
  esac
  echo "ok   $name.ctf${stats:+ (counts match $name.stats.txt)}"
}
valid() { corpus_each traces valid_one; }

# malformed_one DIR NAME : DIR/NAME.ctf, a malformed trace (see malformed above)
malformed_one() {
  local dir=$1 name=$2 ctf=$1/$2.ctf ref_rc
  MT_CHECKED=$((MT_CHECKED + 1))
  if [ ! -f "$dir/$name.exit" ]; then
    mt_fail "$name.ctf" "no reference exit code file $name.exit"; return
  fi
  ref_rc=$(tr -d ' \n\r' < "$dir/$name.exit")
  (cd "$dir" && "$CLI" check "$name.ctf") > "$MT_TMP/out" 2> "$MT_TMP/err" < /dev/null; RC=$?
  "$CLI" check --json "$ctf" > "$MT_TMP/json" 2> "$MT_TMP/jerr2" < /dev/null; JRC=$?
  if [ "$ref_rc" -ne 0 ]; then
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 1 0 || return
    mt_check_status "$name.ctf --json" "$JRC" "$MT_TMP/jerr2" 1 0 || return
    if ! grep -q '^result: *INVALID' "$MT_TMP/out"; then
      mt_fail "$name.ctf" "summary does not say INVALID"; return
    fi
    if ! tail -n 1 "$MT_TMP/err" | grep -Eq "^memtrace check: $name\\.ctf: offset [0-9]+: ."; then
      mt_fail "$name.ctf" "last stderr line is not 'memtrace check: $name.ctf: offset N: message'"
      mt_show_stderr "$MT_TMP/err"; return
    fi
    # (--json reports the error)
    corpus_json_ok "$name.ctf" "$MT_TMP/json" 'j["valid"] is False and j["error"]["message"]' || return
    echo "ok   $name.ctf (invalid: $(tail -n 1 "$MT_TMP/err" | cut -c1-120))"
  else
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || return
    mt_check_status "$name.ctf --json" "$JRC" "$MT_TMP/jerr2" 0 1 || return
    grep '^skipping' "$dir/$name.dump.err" 2>/dev/null > "$MT_TMP/ref.skip"
    local n; n=$(wc -l < "$MT_TMP/ref.skip")
    if ! grep -Eq "^skipped packets: +$n( |\$)" "$MT_TMP/out"; then
      mt_fail "$name.ctf" "summary does not report $n skipped packet(s): $(grep '^skipped' "$MT_TMP/out")"
      return
    fi
    # the listed ones (the first few) are the reference's messages, in order
    sed -n 's/^  offset [0-9]*: \(skipping.*\)$/\1/p' "$MT_TMP/out" > "$MT_TMP/our.skip"
    local k; k=$(wc -l < "$MT_TMP/our.skip")
    if [ "$n" -gt 0 ] && { [ "$k" -eq 0 ] || ! head -n "$k" "$MT_TMP/ref.skip" | cmp -s - "$MT_TMP/our.skip"; }; then
      mt_fail "$name.ctf" "listed skip messages differ from the reference's"
      diff -u <(head -n "$k" "$MT_TMP/ref.skip") "$MT_TMP/our.skip" | head -n 20
      return
    fi
    corpus_json_ok "$name.ctf" "$MT_TMP/json" \
      "j[\"valid\"] is True and j[\"skipped_packets\"][\"total\"] == $n" || return
    echo "ok   $name.ctf (valid, $n skipped packet(s))"
  fi
}
malformed() { corpus_each malformed malformed_one; }

usage() {
  local input=$CORPUS/traces/synth-basic.ctf
  [ -f "$input" ] || mt_die "corpus trace $input not found"
  corpus_usage check "$input" Usage --json 'Exit status' warnings 'skipped packets' 'location codes'
  corpus_pipe check "$input" same_summary
}

# same_summary A B : the check summaries A and B agree but for the file name
same_summary() { cmp -s <(tail -n +2 "$1") <(tail -n +2 "$2"); }

corpus_main valid malformed usage
