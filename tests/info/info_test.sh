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
#   json       --json on every traces/*.ctf parses (python3 -m json.tool) and
#              each number of the text report, recomputed from the JSON with
#              the reference's formatter, equals the text.
#   usage      --help, bad usage (exit 2), missing file (exit 1), stdin, /dev/full.
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
CLI=$(cd "$(dirname "$CLI")" && pwd)/$(basename "$CLI")

# run_in DIR OUT ERR ARGS... : run the CLI inside DIR; sets RC
run_in() {
  local d=$1 o=$2 e=$3; shift 3
  (cd "$d" && "$CLI" "$@") > "$o" 2> "$e" < /dev/null
  RC=$?
}

golden() {
  local dir=$CORPUS/traces ctf name
  shopt -s nullglob
  local ctfs=("$dir"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no traces/*.ctf in corpus $CORPUS"
  for ctf in "${ctfs[@]}"; do
    name=$(basename "$ctf" .ctf)
    [ -f "$dir/$name.identify.txt" ] || continue
    MT_CHECKED=$((MT_CHECKED + 1))
    run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
    if [ ! -f "$dir/$name.identify.exit" ]; then
      mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || continue
      if ! cmp -s "$dir/$name.identify.txt" "$MT_TMP/out"; then
        mt_fail "$name.ctf" "output differs from $name.identify.txt"
        diff -u --label expected --label actual "$dir/$name.identify.txt" "$MT_TMP/out" \
          | head -n 30 | cut -c1-200 | sed 's/^/    /'
        continue
      fi
      echo "ok   $name.ctf"
    else
      # The reference died (assertion); we must give a full report.
      mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 0 || continue
      local n; n=$(wc -l < "$dir/$name.identify.txt")
      if ! head -n "$n" "$MT_TMP/out" | cmp -s - "$dir/$name.identify.txt"; then
        mt_fail "$name.ctf" "the first $n lines differ from what the reference printed before it died"
        diff -u --label expected --label actual "$dir/$name.identify.txt" <(head -n "$n" "$MT_TMP/out") \
          | head -n 20 | cut -c1-200 | sed 's/^/    /'
        continue
      fi
      if ! tail -n +"$((n + 1))" "$MT_TMP/out" | grep -Eq '^   Minor: .*/s allocations, .*% promoted$' ||
         ! grep -Eq '^   Major: .*/s allocations \(.*/s direct\), .*/s collections$' "$MT_TMP/out" ||
         ! grep -Eq '^   Sizes \(by word\): .*% <= 4w, .*% <= 16w, .*% <= 256w\. Max: ' "$MT_TMP/out" ||
         ! grep -Eq '^   Runtime: [0-9]+\.[0-9]{3} s$' "$MT_TMP/out" ||
         [ "$(wc -l < "$MT_TMP/out")" -ne $((n + 4)) ]; then
        mt_fail "$name.ctf" "incomplete statistics section (reference exit $(cat "$dir/$name.identify.exit"))"
        sed 's/^/    | /' "$MT_TMP/out" | tail -n 6
        continue
      fi
      echo "ok   $name.ctf (reference failed; full report given)"
    fi
  done
}

malformed() {
  local dir=$CORPUS/malformed ctf name want
  shopt -s nullglob
  local ctfs=("$dir"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no malformed/*.ctf in corpus $CORPUS"
  for ctf in "${ctfs[@]}"; do
    name=$(basename "$ctf" .ctf)
    [ -f "$dir/$name.identify.txt" ] || continue
    MT_CHECKED=$((MT_CHECKED + 1))
    want=0
    [ -f "$dir/$name.identify.exit" ] && want=1
    run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" "$want" 0 || continue
    if ! cmp -s "$dir/$name.identify.txt" "$MT_TMP/out"; then
      mt_fail "$name.ctf" "stdout differs from $name.identify.txt"
      diff -u --label expected --label actual "$dir/$name.identify.txt" "$MT_TMP/out" \
        | head -n 30 | cut -c1-200 | sed 's/^/    /'
      continue
    fi
    if [ "$want" -eq 0 ]; then
      if ! cmp -s <(cat "$dir/$name.identify.err" 2>/dev/null) "$MT_TMP/err"; then
        mt_fail "$name.ctf" "stderr is not exactly the reference's"
        diff -u --label expected --label actual <(cat "$dir/$name.identify.err" 2>/dev/null) "$MT_TMP/err" \
          | head -n 20 | cut -c1-200 | sed 's/^/    /'
        continue
      fi
    elif ! tail -n 1 "$MT_TMP/err" | grep -Eq "^memtrace info: $name\\.ctf: offset [0-9]+: ."; then
      mt_fail "$name.ctf" "last stderr line is not 'memtrace info: $name.ctf: offset N: message'"
      mt_show_stderr "$MT_TMP/err"
      continue
    fi
    echo "ok   $name.ctf (exit $RC)"
  done
}

json() {
  command -v python3 > /dev/null || mt_die "python3 is needed for the --json test"
  cat > "$MT_TMP/agree.py" <<'PY'
import json, sys
# Recompute each number of the text report from the JSON, with the
# reference's formatter, and compare with the text line by line.
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8", errors="surrogateescape").read().split("\n")
def B(n):
    if n is None:
        return None
    if n < 1000.0:
        return "%3.0f B" % n
    for lim, div, unit in ((1000.0 * 1024, 1024.0, "kB"), (1000.0 * 1024**2, 1024.0**2, "MB"),
                           (1000.0 * 1024**3, 1024.0**3, "GB"), (float("inf"), 1024.0**4, "TB")):
        if n < lim or unit == "TB":
            d = n
            for _ in range({"kB": 1, "MB": 2, "GB": 3, "TB": 4}[unit]):
                d /= 1024.0
            return "%3.*f %s" % (1 if d < 10 else 0, d, unit)
def P(v, fmt):
    return None if v is None else fmt % v
s = j["statistics"]
first = "Trace file %s (%s)" % (j["file"], B(float(j["file_size"])))
exp = {
    0: first,
    1: "   of %s" % j["executable_name"],
    3: "   on host %s (%d-bit), pid %d, sample rate %.1e" % (j["host_name"], j["word_size"], j["pid"], j["sample_rate"]),
    4: "   with OCaml GC params %s" % j["ocaml_runtime_params"],
}
stats = text.index("Trace statistics:")
ln = {
    stats + 1: ("   Minor: %s/s allocations, %s%% promoted", [B(s["minor_alloc_bytes_per_s"]), P(s["promoted_percent"], "%.1f")]),
    stats + 2: ("   Major: %s/s allocations (%s/s direct), %s/s collections",
                [B(s["major_alloc_bytes_per_s"]), B(s["major_direct_bytes_per_s"]), B(s["major_collect_bytes_per_s"])]),
    stats + 3: ("   Sizes (by word): %s%% <= 4w, %s%% <= 16w, %s%% <= 256w. Max: %s",
                [P(s["le_4w_percent"], "%.0f"), P(s["le_16w_percent"], "%.0f"), P(s["le_256w_percent"], "%.0f"), B(float(s["max_bytes"]))]),
    stats + 4: ("   Runtime: %s s", [P(s["runtime_s"], "%.3f")]),
}
bad = []
for i, e in exp.items():
    if text[i] != e:
        bad.append("line %d: text %r, from JSON %r" % (i + 1, text[i], e))
for i, (fmt, vals) in ln.items():
    if any(v is None for v in vals):      # inf/nan: JSON null, text inf/nan
        if "nan" not in text[i] and "inf" not in text[i]:
            bad.append("line %d: JSON has null but text has no inf/nan: %r" % (i + 1, text[i]))
        continue
    e = fmt % tuple(vals)
    if text[i] != e:
        bad.append("line %d: text %r, from JSON %r" % (i + 1, text[i], e))
# raw counts against the byte estimates
rate, wb = j["sample_rate"], j["word_size"] // 8
for k, v in s["samples"].items():
    b = s["bytes"][k]
    if b is not None and b != v / rate * wb:
        bad.append("bytes.%s = %r, samples.%s / rate * %d = %r" % (k, b, k, wb, v / rate * wb))
if (j["context"] is not None) != any(l.startswith("   with context: ") for l in text):
    bad.append("context presence differs")
for b in bad:
    print("  " + b)
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
    run_in "$dir" "$MT_TMP/json" "$MT_TMP/err" info --json "$name.ctf"
    mt_check_status "$name.ctf --json" "$RC" "$MT_TMP/err" 0 1 || continue
    if ! python3 -m json.tool "$MT_TMP/json" > /dev/null 2> "$MT_TMP/jerr"; then
      mt_fail "$name.ctf" "--json output does not parse: $(head -c 200 "$MT_TMP/jerr")"
      continue
    fi
    run_in "$dir" "$MT_TMP/out" "$MT_TMP/err" info "$name.ctf"
    mt_check_status "$name.ctf" "$RC" "$MT_TMP/err" 0 1 || continue
    if ! python3 "$MT_TMP/agree.py" "$MT_TMP/json" "$MT_TMP/out" > "$MT_TMP/agree.out" 2>&1; then
      mt_fail "$name.ctf" "--json numbers disagree with the text report"
      head -n 20 "$MT_TMP/agree.out"
      continue
    fi
    echo "ok   $name.ctf --json"
  done
}

usage() {
  local input=$CORPUS/traces/synth-basic.ctf
  [ -f "$input" ] || mt_die "corpus trace $input not found"
  # ucheck DESCRIPTION WANT_RC ARGS...
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
  if ucheck "info --help" 0 info --help; then
    for w in Usage --json 'Exit status' Minor Runtime; do
      grep -q -- "$w" "$MT_TMP/out" || mt_fail "info --help" "help text lacks '$w'"
    done
    [ -s "$MT_TMP/err" ] && mt_fail "info --help" "output on stderr"
  fi
  ucheck "info -h" 0 info -h
  ucheck "help info" 0 help info
  ucheck "info (no file)" 2 info
  ucheck "info --json (no file)" 2 info --json
  ucheck "info two files" 2 info "$input" "$input"
  ucheck "info unknown option" 2 info --no-such-option "$input"
  ucheck "info missing file" 1 info "$MT_TMP/no-such.ctf"
  grep -qF "$MT_TMP/no-such.ctf" "$MT_TMP/err" || mt_fail "info missing file" "stderr does not name the file"
  ucheck "info directory" 1 info "$MT_TMP"
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
  MT_CHECKED=$((MT_CHECKED + 1))
  cat "$input" | "$CLI" info - > "$MT_TMP/b" 2> "$MT_TMP/err"; RC=$?
  if mt_check_status "info - from a pipe" "$RC" "$MT_TMP/err" 0 1; then
    if cmp -s "$MT_TMP/b" <(sed '1s/^Trace file [^ ]* /Trace file - /' "$MT_TMP/a"); then
      echo "ok   info - from a pipe"
    else
      mt_fail "info - from a pipe" "report differs from the one of the file"
      diff "$MT_TMP/a" "$MT_TMP/b" | head -n 10
    fi
  fi
  if [ -w /dev/full ]; then
    MT_CHECKED=$((MT_CHECKED + 1))
    "$CLI" info "$input" > /dev/full 2> "$MT_TMP/err"; RC=$?
    if mt_check_status "info > /dev/full" "$RC" "$MT_TMP/err" 1 0 && [ -s "$MT_TMP/err" ]; then
      echo "ok   info > /dev/full"
    elif [ "$RC" -eq 1 ]; then
      mt_fail "info > /dev/full" "no message on stderr"
    fi
  fi
}

case "$MODE" in
  golden) golden ;;
  malformed) malformed ;;
  json) json ;;
  usage) usage ;;
  *) mt_die "unknown --mode '$MODE' (golden, malformed, json, usage)" ;;
esac
[ "$MT_CHECKED" -gt 0 ] || mt_die "nothing was checked (mode $MODE)"
mt_summary
