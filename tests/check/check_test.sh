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
MODE=
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) MODE=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
# shellcheck source=../corpus/corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../corpus/corpus_lib.sh"
mt_parse_args "${args[@]}"
command -v python3 > /dev/null || mt_die "python3 is needed (JSON checks)"

# json_ok NAME FILE : FILE parses as JSON
json_ok() {
  if ! python3 -m json.tool "$2" > /dev/null 2> "$MT_TMP/jerr"; then
    mt_fail "$1" "--json output does not parse: $(head -c 200 "$MT_TMP/jerr")"
    return 1
  fi
}

valid() {
  cat > "$MT_TMP/stats.py" <<'PY'
import json, re, sys
# argv: check.json check.txt [NAME.stats.txt]
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
e, c, b = j["events"], j["location_codes"], j["backtraces"]
ours = {
    "reader.allocs": e["allocs"], "reader.promotes": e["promotes"],
    "reader.collects": e["collects"], "reader.allocs_minor": e["allocs_minor"],
    "reader.allocs_major": e["allocs_major"], "reader.allocs_external": e["allocs_external"],
    "reader.distinct_codes": c["distinct"], "reader.codes_without_location": c["without_location"],
    "reader.backtrace_max": b["longest"],
}
bad = []
if len(sys.argv) > 3:
    ref = {}
    for line in open(sys.argv[3]):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            ref[k] = v
    for k, v in ours.items():
        if k in ref and str(v) != ref[k]:
            bad.append("%s: check says %s, reference Reader %s" % (k, v, ref[k]))
        if k not in ref and k in ("reader.allocs", "reader.promotes", "reader.collects"):
            bad.append("%s missing from the stats file" % k)
want = [
    r"^events: +%d$" % e["total"],
    r"^  allocs: +%d \(minor %d, major %d, external %d\)$" % (e["allocs"], e["allocs_minor"], e["allocs_major"], e["allocs_external"]),
    r"^  promotes: +%d$" % e["promotes"],
    r"^  collects: +%d$" % e["collects"],
    r"^location codes: +%d distinct, %d without location$" % (c["distinct"], c["without_location"]),
    r"^backtraces: +longest %d frames" % b["longest"],
    r"^result: +valid",
]
for w in want:
    if not re.search(w, text, re.M):
        bad.append("text summary lacks /%s/" % w)
if j["valid"] is not True or j["error"] is not None:
    bad.append("JSON says not valid")
if (j["warnings"]["total"] > 0) != bool(re.search(r"^warnings:$", text, re.M)):
    bad.append("warnings: section and JSON warnings.total disagree")
for x in bad:
    print("  " + x)
sys.exit(1 if bad else 0)
PY
  local dir=$CORPUS/traces ctf name
  shopt -s nullglob
  local ctfs=("$dir"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no traces/*.ctf in corpus $CORPUS"
  for ctf in "${ctfs[@]}"; do
    name=$(basename "$ctf" .ctf)
    MT_CHECKED=$((MT_CHECKED + 1))
    "$CLI" check "$ctf" > "$MT_TMP/out" 2> "$MT_TMP/err" < /dev/null; RC=$?
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || continue
    "$CLI" check --json "$ctf" > "$MT_TMP/json" 2> "$MT_TMP/err" < /dev/null; RC=$?
    mt_check_status "$name.ctf --json" "$RC" "$MT_TMP/err" 0 1 || continue
    json_ok "$name.ctf" "$MT_TMP/json" || continue
    local stats=()
    [ -f "$dir/$name.stats.txt" ] && stats=("$dir/$name.stats.txt")
    if ! python3 "$MT_TMP/stats.py" "$MT_TMP/json" "$MT_TMP/out" "${stats[@]}" > "$MT_TMP/py.out" 2>&1; then
      mt_fail "$name.ctf" "counts disagree"
      head -n 20 "$MT_TMP/py.out"
      continue
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
          continue
        fi ;;
    esac
    echo "ok   $name.ctf${stats:+ (counts match $name.stats.txt)}"
  done
}

malformed() {
  local dir=$CORPUS/malformed ctf name ref_rc
  shopt -s nullglob
  local ctfs=("$dir"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no malformed/*.ctf in corpus $CORPUS"
  for ctf in "${ctfs[@]}"; do
    name=$(basename "$ctf" .ctf)
    MT_CHECKED=$((MT_CHECKED + 1))
    if [ ! -f "$dir/$name.exit" ]; then
      mt_fail "$name.ctf" "no reference exit code file $name.exit"; continue
    fi
    ref_rc=$(tr -d ' \n\r' < "$dir/$name.exit")
    (cd "$dir" && "$CLI" check "$name.ctf") > "$MT_TMP/out" 2> "$MT_TMP/err" < /dev/null; RC=$?
    "$CLI" check --json "$ctf" > "$MT_TMP/json" 2> "$MT_TMP/jerr2" < /dev/null; JRC=$?
    if [ "$ref_rc" -ne 0 ]; then
      mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 1 0 || continue
      mt_check_status "$name.ctf --json" "$JRC" "$MT_TMP/jerr2" 1 0 || continue
      if ! grep -q '^result: *INVALID' "$MT_TMP/out"; then
        mt_fail "$name.ctf" "summary does not say INVALID"; continue
      fi
      if ! tail -n 1 "$MT_TMP/err" | grep -Eq "^memtrace check: $name\\.ctf: offset [0-9]+: ."; then
        mt_fail "$name.ctf" "last stderr line is not 'memtrace check: $name.ctf: offset N: message'"
        mt_show_stderr "$MT_TMP/err"; continue
      fi
      json_ok "$name.ctf" "$MT_TMP/json" || continue
      if ! python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["valid"] is False and j["error"]["message"] else 1)' "$MT_TMP/json"; then
        mt_fail "$name.ctf" "--json does not report the error"; continue
      fi
      echo "ok   $name.ctf (invalid: $(tail -n 1 "$MT_TMP/err" | cut -c1-120))"
    else
      mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || continue
      mt_check_status "$name.ctf --json" "$JRC" "$MT_TMP/jerr2" 0 1 || continue
      json_ok "$name.ctf" "$MT_TMP/json" || continue
      grep '^skipping' "$dir/$name.dump.err" 2>/dev/null > "$MT_TMP/ref.skip"
      local n; n=$(wc -l < "$MT_TMP/ref.skip")
      if ! grep -Eq "^skipped packets: +$n( |\$)" "$MT_TMP/out"; then
        mt_fail "$name.ctf" "summary does not report $n skipped packet(s): $(grep '^skipped' "$MT_TMP/out")"
        continue
      fi
      # the listed ones (the first few) are the reference's messages, in order
      sed -n 's/^  offset [0-9]*: \(skipping.*\)$/\1/p' "$MT_TMP/out" > "$MT_TMP/our.skip"
      local k; k=$(wc -l < "$MT_TMP/our.skip")
      if [ "$n" -gt 0 ] && { [ "$k" -eq 0 ] || ! head -n "$k" "$MT_TMP/ref.skip" | cmp -s - "$MT_TMP/our.skip"; }; then
        mt_fail "$name.ctf" "listed skip messages differ from the reference's"
        diff -u <(head -n "$k" "$MT_TMP/ref.skip") "$MT_TMP/our.skip" | head -n 20
        continue
      fi
      if ! python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["valid"] is True and j["skipped_packets"]["total"] == int(sys.argv[2]) else 1)' "$MT_TMP/json" "$n"; then
        mt_fail "$name.ctf" "--json skipped_packets.total is not $n"; continue
      fi
      echo "ok   $name.ctf (valid, $n skipped packet(s))"
    fi
  done
}

usage() {
  local input=$CORPUS/traces/synth-basic.ctf
  [ -f "$input" ] || mt_die "corpus trace $input not found"
  ucheck() {
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
  if ucheck "check --help" 0 check --help; then
    for w in Usage --json 'Exit status' warnings 'skipped packets' 'location codes'; do
      grep -q -- "$w" "$MT_TMP/out" || mt_fail "check --help" "help text lacks '$w'"
    done
    [ -s "$MT_TMP/err" ] && mt_fail "check --help" "output on stderr"
  fi
  ucheck "check -h" 0 check -h
  ucheck "help check" 0 help check
  ucheck "check (no file)" 2 check
  ucheck "check --json (no file)" 2 check --json
  ucheck "check two files" 2 check "$input" "$input"
  ucheck "check unknown option" 2 check --no-such-option "$input"
  ucheck "check missing file" 1 check "$MT_TMP/no-such.ctf"
  grep -qF "$MT_TMP/no-such.ctf" "$MT_TMP/err" || mt_fail "check missing file" "stderr does not name the file"
  MT_CHECKED=$((MT_CHECKED + 1))
  cat "$input" | "$CLI" check - > "$MT_TMP/b" 2> "$MT_TMP/err"; RC=$?
  "$CLI" check "$input" > "$MT_TMP/a" 2>/dev/null
  if mt_check_status "check - from a pipe" "$RC" "$MT_TMP/err" 0 1; then
    if cmp -s <(tail -n +2 "$MT_TMP/a") <(tail -n +2 "$MT_TMP/b"); then
      echo "ok   check - from a pipe"
    else
      mt_fail "check - from a pipe" "summary differs from the one of the file"
      diff "$MT_TMP/a" "$MT_TMP/b" | head -n 10
    fi
  fi
  if [ -w /dev/full ]; then
    MT_CHECKED=$((MT_CHECKED + 1))
    "$CLI" check "$input" > /dev/full 2> "$MT_TMP/err"; RC=$?
    if mt_check_status "check > /dev/full" "$RC" "$MT_TMP/err" 1 0; then
      if [ -s "$MT_TMP/err" ]; then echo "ok   check > /dev/full"
      else mt_fail "check > /dev/full" "no message on stderr"; fi
    fi
  fi
}

case "$MODE" in
  valid) valid ;;
  malformed) malformed ;;
  usage) usage ;;
  *) mt_die "unknown --mode '$MODE' (valid, malformed, usage)" ;;
esac
[ "$MT_CHECKED" -gt 0 ] || mt_die "nothing was checked (mode $MODE)"
mt_summary
