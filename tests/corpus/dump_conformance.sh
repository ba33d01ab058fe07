#!/usr/bin/env bash
# Dump conformance: for every traces/*.ctf of the corpus (discovered now, not at
# configure time) whose expected dump falls in --class, `memtrace dump NAME.ctf`
# must print exactly NAME.dump.txt (or `xz -dc NAME.dump.txt.xz`) on stdout,
# exit 0 and write nothing on stderr. Output is streamed into cmp (the biggest
# reference dump is 557 MB), and on a mismatch the first differing line is shown.
set -u
# shellcheck source=corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus_lib.sh"
mt_parse_args "$@"

dir=$CORPUS/traces
shopt -s nullglob
ctfs=("$dir"/*.ctf)
shopt -u nullglob
[ ${#ctfs[@]} -gt 0 ] || mt_die "no traces/*.ctf in corpus $CORPUS"

for ctf in "${ctfs[@]}"; do
  name=$(basename "$ctf" .ctf)
  mt_in_class "$dir" "$name" || continue
  MT_CHECKED=$((MT_CHECKED + 1))
  ref=$(mt_ref_dump_path "$dir" "$name")
  if [ -z "$ref" ]; then
    mt_fail "$name.ctf" "no reference dump ($name.dump.txt or $name.dump.txt.xz) in $dir"
    continue
  fi
  start=$SECONDS
  if mt_check_dump "$name.ctf" "$ctf" "$ref"; then
    echo "ok   $name.ctf ($((SECONDS - start)) s)"
  fi
done

mt_summary
