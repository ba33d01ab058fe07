#!/usr/bin/env bash
# Malformed traces: for every malformed/*.ctf (discovered now):
#   REF = NAME.dump.txt (or xz -dc NAME.dump.txt.xz) cut after its last newline.
#   * stdout of `memtrace dump NAME.ctf` must equal REF exactly;
#   * no crash: exit status >= 128 or a sanitizer report is a failure;
#   * NAME.exit == 0: exit status 0, and stderr must consist of exactly the
#     reference's "skipping ..." lines of NAME.dump.err, in the same order;
#   * NAME.exit != 0: exit status 1 and a non-empty stderr; the "skipping ..."
#     lines printed before the fatal error must also be the reference's.
# The reference's fatal message text is not required (it is OCaml's exception
# text), but a NOTE is printed when our stderr does not contain its key words.
set -u
# shellcheck source=corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus_lib.sh"
mt_parse_args "$@"

mt_list_malformed

# complete_lines IN OUT : copy IN up to and including its last newline
complete_lines() {
  local size partial=0
  size=$(wc -c < "$1")
  if [ "$size" -gt 0 ] && [ "$(tail -c 1 -- "$1" | od -A n -t x1 | tr -d ' \n')" != 0a ]; then
    partial=$(tail -n 1 -- "$1" | wc -c)
  fi
  head -c $((size - partial)) -- "$1" > "$2"
}

for ctf in "${ctfs[@]}"; do
  name=$(basename "$ctf" .ctf)
  mt_in_class "$dir" "$name" || continue
  MT_CHECKED=$((MT_CHECKED + 1))
  refp=$(mt_ref_dump_path "$dir" "$name")
  if [ -z "$refp" ]; then
    mt_fail "$name.ctf" "no reference dump ($name.dump.txt[.xz]) in $dir"; continue
  fi
  if [ ! -f "$dir/$name.exit" ]; then
    mt_fail "$name.ctf" "no reference exit code file $name.exit in $dir"; continue
  fi
  ref_rc=$(tr -d ' \n\r' < "$dir/$name.exit")
  case "$ref_rc" in ''|*[!0-9]*) mt_fail "$name.ctf" "bad $name.exit: '$ref_rc'"; continue ;; esac
  ref_err=$dir/$name.dump.err
  [ -f "$ref_err" ] || ref_err=/dev/null

  mt_cat_ref "$refp" > "$MT_TMP/ref.full"
  complete_lines "$MT_TMP/ref.full" "$MT_TMP/ref.txt"
  grep '^skipping' "$ref_err" > "$MT_TMP/ref.skip"

  "$CLI" dump "$ctf" > "$MT_TMP/out.txt" 2> "$MT_TMP/out.err"
  rc=$?
  ok=1

  if mt_sanitizer_report "$MT_TMP/out.err"; then
    mt_fail "$name.ctf" "sanitizer report (exit status $rc)"
    mt_show_stderr "$MT_TMP/out.err"; continue
  fi
  if [ "$rc" -ge 128 ]; then
    mt_fail "$name.ctf" "crashed: exit status $rc (signal $((rc - 128)))"
    mt_show_stderr "$MT_TMP/out.err"; continue
  fi

  if ! cmpmsg=$(cmp -- "$MT_TMP/ref.txt" "$MT_TMP/out.txt" 2>&1); then
    ok=0
    mt_fail "$name.ctf" "stdout differs from the reference's complete lines ($(wc -l < "$MT_TMP/ref.txt") expected lines, $(wc -l < "$MT_TMP/out.txt") printed; $cmpmsg)"
    line=$(mt_cmp_line "$cmpmsg")
    a=$(( line > 3 ? line - 3 : 1 )); b=$((line + 3))
    sed -n "${a},${b}p" "$MT_TMP/ref.txt" > "$MT_TMP/wexp"
    sed -n "${a},${b}p" "$MT_TMP/out.txt" > "$MT_TMP/wact"
    mt_first_diff_report "$MT_TMP/wexp" "$MT_TMP/wact" "$a"
  fi

  grep '^skipping' "$MT_TMP/out.err" > "$MT_TMP/out.skip"
  if [ "$ref_rc" -eq 0 ]; then
    if [ "$rc" -ne 0 ]; then
      ok=0; mt_fail "$name.ctf" "exit status $rc, expected 0 (the reference skips and succeeds)"
      mt_show_stderr "$MT_TMP/out.err"
    elif ! cmp -s "$MT_TMP/ref.skip" "$MT_TMP/out.err"; then
      ok=0; mt_fail "$name.ctf" "stderr is not exactly the reference's skip messages"
      diff -u --label "expected stderr" --label "actual stderr" "$MT_TMP/ref.skip" "$MT_TMP/out.err" \
        | head -n 30 | cut -c1-200 | sed 's/^/    /'
    fi
  else
    if [ "$rc" -ne 1 ]; then
      ok=0; mt_fail "$name.ctf" "exit status $rc, expected 1 (fatal malformation; reference exit $ref_rc)"
      mt_show_stderr "$MT_TMP/out.err"
    elif [ ! -s "$MT_TMP/out.err" ]; then
      ok=0; mt_fail "$name.ctf" "exit status 1 but nothing on stderr"
    elif ! cmp -s "$MT_TMP/ref.skip" "$MT_TMP/out.skip"; then
      ok=0; mt_fail "$name.ctf" "skip messages before the fatal error differ from the reference's"
      diff -u --label "expected skipping lines" --label "actual skipping lines" "$MT_TMP/ref.skip" "$MT_TMP/out.skip" \
        | head -n 30 | cut -c1-200 | sed 's/^/    /'
    fi
    # Informational: does our message carry the reference's key words?
    key=$(grep -v '^skipping' "$ref_err" | tail -n 1 \
          | sed -e 's/^Fatal error: exception //' -e 's/^malformed trace: //' \
                -e 's/^Invalid_argument("\(.*\)")$/\1/')
    if [ -n "$key" ] && [ $ok = 1 ] && ! grep -qiF -- "$key" "$MT_TMP/out.err"; then
      echo "NOTE $name.ctf: stderr does not contain the reference's words '$key': $(head -c 200 "$MT_TMP/out.err" | tr '\n' ' ')"
    fi
  fi
  [ $ok = 1 ] && echo "ok   $name.ctf (exit $rc, $(wc -l < "$MT_TMP/out.txt") lines)"
done

mt_summary
