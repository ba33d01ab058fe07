#!/usr/bin/env bash
# Copy conformance (spec 8.9).
#
# Default mode (--class small|medium|huge|all): for every traces/*.ctf of the
# class (by the size of its expected dump, since the costly part is dumping the
# copy):
#   * `memtrace copy NAME.ctf OUT` exits 0 with an empty stderr;
#   * manifest copy_identical=yes  -> OUT is identical to NAME.ctf;
#   * NAME.ctf.copy exists          -> OUT is identical to NAME.ctf.copy (the
#                                      reference copier's own output);
#   * manifest copy_dump_equal=yes -> `memtrace dump OUT` equals the reference
#                                      dump of NAME.ctf.
#   Traces absent from the manifest and without NAME.ctf.copy are not copied.
#
# --v3 mode: the v002 <-> v003 vectors:
#   * copy --format-version 3 ref-test-ocamlopt.ctf    == ref-head-ocamlopt-v3.ctf
#   * copy ref-head-ocamlopt-v3.ctf                    == ref-test-ocamlopt.ctf
#   * copy --format-version 2 ref-head-ocamlopt-v3.ctf == ref-test-ocamlopt.ctf
#   * copy --format-version 3 ref-head-ocamlopt-v3.ctf == ref-head-ocamlopt-v3.ctf
set -u
# shellcheck source=corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus_lib.sh"

mode=classes
args=()
for a in "$@"; do
  if [ "$a" = --v3 ]; then mode=v3; else args+=("$a"); fi
done
mt_parse_args "${args[@]}"

dir=$CORPUS/traces
manifest=$dir/manifest.tsv
[ -f "$manifest" ] || mt_die "missing $manifest"

# run_copy LABEL OUT ARGS... : run `memtrace copy ARGS...`, check exit 0 and
# empty stderr, and that OUT was written.
run_copy() {
  local n=$1 out=$2 rc; shift 2
  rm -f "$out"
  "$CLI" copy "$@" > "$MT_TMP/copy.out" 2> "$MT_TMP/copy.err"
  rc=$?
  mt_check_status "$n" "$rc" "$MT_TMP/copy.err" 0 1 || return 1
  if [ ! -f "$out" ]; then
    mt_fail "$n" "copy exited 0 but did not create $out"
    return 1
  fi
  return 0
}

# same_bytes LABEL ACTUAL EXPECTED DESCRIPTION
same_bytes() {
  local n=$1 act=$2 exp=$3 what=$4 msg
  if msg=$(cmp -- "$exp" "$act" 2>&1); then
    return 0
  fi
  mt_fail "$n" "copy output is not identical to $what"
  echo "  cmp: $msg"
  echo "  sizes: expected $(wc -c < "$exp") bytes, actual $(wc -c < "$act") bytes"
  local off
  off=$(printf '%s\n' "$msg" | grep -Eo '(byte|char) [0-9]+' | head -n 1 | grep -Eo '[0-9]+')
  if [ -n "$off" ]; then
    local from=$(( off > 16 ? off - 16 : 1 ))
    echo "  first differing byte at file offset $((off - 1)) (0-based)"
    echo "  expected bytes from offset $((from - 1)):"
    tail -c +"$from" -- "$exp" | head -c 48 | od -A n -t x1 | sed 's/^/   /'
    echo "  actual bytes from offset $((from - 1)):"
    tail -c +"$from" -- "$act" | head -c 48 | od -A n -t x1 | sed 's/^/   /'
  fi
  return 1
}

if [ "$mode" = v3 ]; then
  v2=$dir/ref-test-ocamlopt.ctf
  v3=$dir/ref-head-ocamlopt-v3.ctf
  [ -f "$v2" ] || mt_die "missing $v2"
  [ -f "$v3" ] || mt_die "missing $v3"
  out=$MT_TMP/out.ctf

  MT_CHECKED=$((MT_CHECKED + 1))
  n="copy --format-version 3 ref-test-ocamlopt.ctf"
  run_copy "$n" "$out" --format-version 3 "$v2" "$out" &&
    same_bytes "$n" "$out" "$v3" "ref-head-ocamlopt-v3.ctf" && echo "ok   $n"

  MT_CHECKED=$((MT_CHECKED + 1))
  n="copy ref-head-ocamlopt-v3.ctf (default v002)"
  run_copy "$n" "$out" "$v3" "$out" &&
    same_bytes "$n" "$out" "$v2" "ref-test-ocamlopt.ctf" && echo "ok   $n"

  MT_CHECKED=$((MT_CHECKED + 1))
  n="copy --format-version 2 ref-head-ocamlopt-v3.ctf"
  run_copy "$n" "$out" --format-version 2 "$v3" "$out" &&
    same_bytes "$n" "$out" "$v2" "ref-test-ocamlopt.ctf" && echo "ok   $n"

  MT_CHECKED=$((MT_CHECKED + 1))
  n="copy --format-version 3 ref-head-ocamlopt-v3.ctf"
  run_copy "$n" "$out" --format-version 3 "$v3" "$out" &&
    same_bytes "$n" "$out" "$v3" "ref-head-ocamlopt-v3.ctf" && echo "ok   $n"

  mt_summary
  exit $?
fi

shopt -s nullglob
ctfs=("$dir"/*.ctf)
shopt -u nullglob
[ ${#ctfs[@]} -gt 0 ] || mt_die "no traces/*.ctf in corpus $CORPUS"

for ctf in "${ctfs[@]}"; do
  name=$(basename "$ctf" .ctf)
  mt_in_class "$dir" "$name" || continue
  identical=$(mt_manifest_field "$manifest" "$name.ctf" copy_identical)
  dump_equal=$(mt_manifest_field "$manifest" "$name.ctf" copy_dump_equal)
  refcopy=
  [ -f "$ctf.copy" ] && refcopy=$ctf.copy
  if [ -z "$identical" ] && [ -z "$refcopy" ]; then
    echo "skip $name.ctf (not in manifest.tsv, no $name.ctf.copy)"
    continue
  fi
  MT_CHECKED=$((MT_CHECKED + 1))
  out=$MT_TMP/$name.copy.ctf
  start=$SECONDS
  ok=1
  run_copy "$name.ctf" "$out" "$ctf" "$out" || { rm -f "$out"; continue; }
  if [ "$identical" = yes ]; then
    same_bytes "$name.ctf" "$out" "$ctf" "the input $name.ctf" || ok=0
  fi
  if [ -n "$refcopy" ]; then
    same_bytes "$name.ctf" "$out" "$refcopy" "the reference copy $name.ctf.copy" || ok=0
  fi
  if [ "$dump_equal" = yes ]; then
    ref=$(mt_ref_dump_path "$dir" "$name")
    if [ -z "$ref" ]; then
      mt_fail "$name.ctf" "no reference dump for $name"; ok=0
    else
      mt_check_dump "$name.ctf (dump of our copy)" "$out" "$ref" || ok=0
    fi
  fi
  rm -f "$out"
  checks="exit 0"
  [ "$identical" = yes ] && checks="$checks, identical to input"
  [ -n "$refcopy" ] && checks="$checks, identical to .ctf.copy"
  [ "$dump_equal" = yes ] && checks="$checks, dump of copy equal"
  [ $ok = 1 ] && echo "ok   $name.ctf ($checks; $((SECONDS - start)) s)"
done

mt_summary
