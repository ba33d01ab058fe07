#!/usr/bin/env bash
# example_test.sh BUILD_DIR - `make example` (scripts/example.sh) works from
# a build: the bundled trace dumped as expected, the bundled program
# profiled with its output intact, a trace that `memtrace check` accepts,
# its sites ranked with make_line (99% of the bytes) first, and the report
# written.
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/mt-example.XXXXXX")
trap 'rm -rf "$out"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$root/scripts/example.sh" "$build" "$out" > "$out/stdout" 2> "$out/stderr" ||
  fail "example.sh exited $? ($(tail -n 3 "$out/stderr"))"
"$build/memtrace" dump "$root/examples/example.ctf" > "$out/dump"
[ -s "$out/dump" ] && [ "$(grep -cxF -f "$out/dump" "$out/stdout")" -eq "$(wc -l < "$out/dump")" ] ||
  fail "the bundled trace's dump is not shown"
"$build/profile_me" > "$out/plain" && [ -s "$out/plain" ] && grep -qxF -f "$out/plain" "$out/stdout" ||
  fail "profile_me's output changed under the profiler"
grep -q "trace written to $out/profile_me.ctf" "$out/stderr" || fail "no 'trace written' line"
"$build/memtrace" check "$out/profile_me.ctf" > /dev/null 2>&1 || fail "memtrace check rejects the trace"
first=$(sed -n '/ALLOCATED .* SITE$/{n;p;q}' "$out/stdout")
case "$first" in
  *" make_line") ;;
  *) fail "first site is not make_line: '$first'" ;;
esac
grep -qE " count_word$" "$out/stdout" || fail "no count_word site"
grep -q "<html" "$out/profile_me.html" 2>/dev/null || fail "no report"
[ $fails -eq 0 ] && echo "example: ok"
exit $((fails > 0))
