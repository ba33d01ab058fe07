# Shared helpers for the corpus conformance tests (sourced, not executed).
#
# Every test script accepts:
#   --cli PATH              the memtrace CLI binary (required)
#   --default-corpus DIR    corpus location used when MEMTRACE_CORPUS is unset
#   --class small|medium|huge|all
#                           only handle traces whose expected dump size falls in
#                           that class (see mt_size_class); default: all
# The corpus is taken from $MEMTRACE_CORPUS if set (at ctest time), else from
# --default-corpus. A missing corpus is a test FAILURE, never a skip.

export LC_ALL=C

# Make sanitizer reports distinguishable from the CLI's own "exit 1": ASan and
# UBSan both exit with status 1 by default.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=134"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=134:print_stacktrace=1"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=134"

# Size classes by expected (uncompressed) dump size in bytes.
MT_SMALL_MAX=$((8 * 1024 * 1024))     # < 8 MiB        -> small
MT_MEDIUM_MAX=$((128 * 1024 * 1024))  # < 128 MiB      -> medium, else huge

CLI=
CORPUS=
CLASS=all
MT_FAILURES=0
MT_CHECKED=0
MT_FAILED_NAMES=()

mt_die() {
  printf 'ERROR: %s\n' "$*" >&2
  printf 'ERROR: %s\n'  "$*"
  exit 1
}

mt_parse_args() {
  local default_corpus=
  while [ $# -gt 0 ]; do
    case "$1" in
      --cli) CLI=$2; shift 2 ;;
      --default-corpus) default_corpus=$2; shift 2 ;;
      --class) CLASS=$2; shift 2 ;;
      *) mt_die "unknown test-script argument: $1" ;;
    esac
  done
  [ -n "$CLI" ] || mt_die "--cli not given"
  [ -x "$CLI" ] || mt_die "memtrace CLI not found or not executable: $CLI (build the memtrace_cli target)"
  case "$CLASS" in small|medium|huge|all) ;; *) mt_die "bad --class $CLASS" ;; esac
  if [ -n "${MEMTRACE_CORPUS:-}" ]; then
    CORPUS=$MEMTRACE_CORPUS
    mt_corpus_src="environment variable MEMTRACE_CORPUS"
  else
    CORPUS=$default_corpus
    mt_corpus_src="CMake cache variable MT_CORPUS_DIR"
  fi
  if [ -z "$CORPUS" ]; then
    mt_die "no corpus directory: set MEMTRACE_CORPUS or configure with -DMT_CORPUS_DIR=/path/to/corpus"
  fi
  if [ ! -d "$CORPUS/traces" ] || [ ! -d "$CORPUS/malformed" ]; then
    mt_die "reference corpus not found at '$CORPUS' (from $mt_corpus_src): expected $CORPUS/traces and $CORPUS/malformed. Set MEMTRACE_CORPUS=/path/to/corpus or reconfigure with -DMT_CORPUS_DIR=..."
  fi
  CORPUS=$(cd "$CORPUS" && pwd)
  MT_TMP=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-corpus.XXXXXX") || mt_die "mktemp failed"
  trap 'rm -rf "$MT_TMP"' EXIT
  echo "corpus: $CORPUS (from $mt_corpus_src)"
  echo "cli:    $CLI"
  echo "class:  $CLASS"
}

# mt_manifest_field MANIFEST FILE COLUMN  -> prints the value (empty if absent)
mt_manifest_field() {
  [ -f "$1" ] || return 0
  awk -F'\t' -v f="$2" -v col="$3" '
    NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
    $1 == f { if (col in h) print $(h[col]); exit }' "$1"
}

# mt_ref_dump_base DIR NAME -> prints the path of NAME.dump.txt or NAME.dump.txt.xz
mt_ref_dump_path() {
  if [ -f "$1/$2.dump.txt" ]; then
    printf '%s\n' "$1/$2.dump.txt"
  elif [ -f "$1/$2.dump.txt.xz" ]; then
    printf '%s\n' "$1/$2.dump.txt.xz"
  fi
}

# mt_cat_ref PATH : stream the (decompressed) reference dump to stdout
mt_cat_ref() {
  case "$1" in
    *.xz) xz -dc -- "$1" ;;
    *) cat -- "$1" ;;
  esac
}

# mt_expected_dump_bytes DIR NAME -> uncompressed size of the reference dump
mt_expected_dump_bytes() {
  local b p
  b=$(mt_manifest_field "$1/manifest.tsv" "$2.ctf" dump_bytes)
  case "$b" in ''|*[!0-9]*) b= ;; esac
  if [ -z "$b" ]; then
    p=$(mt_ref_dump_path "$1" "$2")
    case "$p" in
      '') b=0 ;;
      *.xz) b=$(xz --robot --list -- "$p" 2>/dev/null | awk -F'\t' '$1 == "totals" { print $5 }')
            case "$b" in ''|*[!0-9]*) b=$MT_MEDIUM_MAX ;; esac ;;  # unknown: treat as huge
      *) b=$(wc -c < "$p") ;;
    esac
  fi
  printf '%s\n' "$b"
}

mt_size_class() {
  if [ "$1" -lt "$MT_SMALL_MAX" ]; then echo small
  elif [ "$1" -lt "$MT_MEDIUM_MAX" ]; then echo medium
  else echo huge; fi
}

# mt_list_malformed : sets dir=$CORPUS/malformed and the array ctfs to its
# *.ctf files (found now); none is an error.
mt_list_malformed() {
  dir=$CORPUS/malformed
  shopt -s nullglob
  ctfs=("$dir"/*.ctf)
  shopt -u nullglob
  [ ${#ctfs[@]} -gt 0 ] || mt_die "no malformed/*.ctf in corpus $CORPUS"
}

# mt_in_class DIR NAME : true if NAME belongs to the selected --class
mt_in_class() {
  [ "$CLASS" = all ] && return 0
  local b
  b=$(mt_expected_dump_bytes "$1" "$2")
  [ "$(mt_size_class "$b")" = "$CLASS" ]
}

mt_fail() {  # mt_fail NAME MESSAGE...
  local n=$1; shift
  printf 'FAIL %s: %s\n' "$n" "$*"
  MT_FAILURES=$((MT_FAILURES + 1))
  MT_FAILED_NAMES+=("$n")
}

# mt_sanitizer_report STDERR_FILE : true if the stderr holds a sanitizer report
mt_sanitizer_report() {
  grep -Eq 'ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|UndefinedBehaviorSanitizer|SUMMARY: [A-Za-z]*Sanitizer' "$1"
}

# mt_show_stderr FILE : print (the start of) a stderr capture, indented
mt_show_stderr() {
  if [ -s "$1" ]; then
    echo "  stderr (first 20 lines):"
    head -n 20 "$1" | cut -c1-300 | sed 's/^/    | /'
  else
    echo "  stderr: (empty)"
  fi
}

# mt_check_status NAME RC STDERR_FILE EXPECTED_RC [stderr-must-be-empty:0|1]
# Reports crash / sanitizer / wrong exit status; returns 1 on failure.
mt_check_status() {
  local n=$1 rc=$2 err=$3 want=$4 empty=${5:-0}
  if mt_sanitizer_report "$err"; then
    mt_fail "$n" "sanitizer report (exit status $rc)"
    mt_show_stderr "$err"
    return 1
  fi
  if [ "$rc" -ge 128 ]; then
    mt_fail "$n" "crashed: exit status $rc (signal $((rc - 128)))"
    mt_show_stderr "$err"
    return 1
  fi
  if [ "$rc" -ne "$want" ]; then
    mt_fail "$n" "exit status $rc, expected $want"
    mt_show_stderr "$err"
    return 1
  fi
  if [ "$empty" = 1 ] && [ -s "$err" ]; then
    mt_fail "$n" "unexpected output on stderr"
    mt_show_stderr "$err"
    return 1
  fi
  return 0
}

# mt_cmp_line CMP_MESSAGE -> the line number cmp reported (1 if none)
mt_cmp_line() {
  local l
  l=$(printf '%s\n' "$1" | grep -Eo 'line [0-9]+' | head -n 1 | grep -Eo '[0-9]+')
  printf '%s\n' "${l:-1}"
}

# mt_first_diff_report EXP_WINDOW ACT_WINDOW FIRST_LINE_OF_WINDOW
# Both files hold the same line range of expected / actual output. Prints the
# first differing line (number and column, an excerpt around the column) and a
# small unified diff of the window with long lines cut.
mt_first_diff_report() {
  local exp=$1 act=$2 first=$3 i=0 nl col from
  nl=$(( $(wc -l < "$exp") > $(wc -l < "$act") ? $(wc -l < "$exp") : $(wc -l < "$act") ))
  [ "$nl" -ge 1 ] || nl=1
  while [ $i -lt $((nl + 1)) ]; do
    i=$((i + 1))
    sed -n "${i}p" "$exp" > "$MT_TMP/el"; sed -n "${i}p" "$act" > "$MT_TMP/al"
    if ! cmp -s "$MT_TMP/el" "$MT_TMP/al"; then
      col=$(cmp "$MT_TMP/el" "$MT_TMP/al" 2>&1 | grep -Eo '(byte|char) [0-9]+' | head -n 1 | grep -Eo '[0-9]+')
      if [ -z "$col" ]; then  # one is a prefix of the other
        col=$(( $(wc -c < "$MT_TMP/el") < $(wc -c < "$MT_TMP/al") ? $(wc -c < "$MT_TMP/el") : $(wc -c < "$MT_TMP/al") ))
      fi
      [ "$col" -ge 1 ] || col=1
      from=$(( col > 80 ? col - 80 : 1 ))
      echo "  first differing line: $((first + i - 1)), column $col"
      if [ -s "$MT_TMP/el" ]; then
        printf '    expected: %s\n' "$(cut -c"$from"-$((col + 120)) "$MT_TMP/el" | head -n 1)"
      else
        echo "    expected: <end of output>"
      fi
      if [ -s "$MT_TMP/al" ]; then
        printf '    actual:   %s\n' "$(cut -c"$from"-$((col + 120)) "$MT_TMP/al" | head -n 1)"
      else
        echo "    actual:   <end of output>"
      fi
      [ "$from" -gt 1 ] && echo "    (excerpt starts at column $from)"
      break
    fi
  done
  echo "  diff of lines $first..$((first + nl - 1)) (expected vs actual, lines cut to 200 chars):"
  cut -c1-200 "$exp" > "$MT_TMP/ec"; cut -c1-200 "$act" > "$MT_TMP/ac"
  diff -u --label expected --label actual "$MT_TMP/ec" "$MT_TMP/ac" | head -n 40 | sed 's/^/    /'
}

# mt_window_from_cmd FIRST LAST OUTFILE CMD... : lines FIRST..LAST of CMD's stdout
mt_window_from_cmd() {
  local a=$1 b=$2 out=$3; shift 3
  "$@" 2>/dev/null | sed -n "${a},${b}p;${b}q" > "$out"
}

# mt_check_dump LABEL CTF REF_PATH
# Streams `memtrace dump CTF` into cmp against the (decompressed) reference
# without temporary files; requires exit 0 and an empty stderr.
mt_check_dump() {
  local n=$1 ctf=$2 ref=$3 err rcs cmpmsg line a b
  err="$MT_TMP/dump.err"
  rm -f "$MT_TMP/dump.rc"
  cmpmsg=$( { "$CLI" dump "$ctf" 2>"$err"; echo $? > "$MT_TMP/dump.rc"; } \
              | cmp - <(mt_cat_ref "$ref") 2>&1 )
  rcs=$?
  local rc; rc=$(cat "$MT_TMP/dump.rc" 2>/dev/null || echo 255)
  if [ $rcs -ne 0 ]; then
    line=$(mt_cmp_line "$cmpmsg")
    mt_fail "$n" "dump output differs from $(basename "$ref") ($cmpmsg)"
    a=$(( line > 3 ? line - 3 : 1 )); b=$((line + 3))
    mt_window_from_cmd "$a" "$b" "$MT_TMP/wexp" mt_cat_ref "$ref"
    mt_window_from_cmd "$a" "$b" "$MT_TMP/wact" "$CLI" dump "$ctf"
    mt_first_diff_report "$MT_TMP/wexp" "$MT_TMP/wact" "$a"
    [ "$rc" -ne 0 ] && echo "  (exit status of dump: $rc)"
    mt_show_stderr "$err"
    return 1
  fi
  mt_check_status "$n" "$rc" "$err" 0 1 || return 1
  return 0
}

mt_summary() {
  echo
  if [ "$MT_CHECKED" -eq 0 ] && [ "${MT_ALLOW_EMPTY:-0}" != 1 ]; then
    echo "SUMMARY: no file checked in class '$CLASS' (nothing matched)"
    return 0
  fi
  if [ "$MT_FAILURES" -gt 0 ]; then
    echo "SUMMARY: $MT_FAILURES failure(s) in $MT_CHECKED checked file(s): ${MT_FAILED_NAMES[*]}"
    return 1
  fi
  echo "SUMMARY: all $MT_CHECKED checked file(s) passed"
  return 0
}
