#!/usr/bin/env bash
# example.sh [BUILD_DIR [OUT_DIR]] - what `make example` shows, from a build
# (default build/): the bundled trace examples/example.ctf dumped; then the
# bundled program examples/profile_me.c profiled with `memtrace run` (one
# sample per 4 KiB), its allocation sites ranked by `memtrace top`, and its
# HTML report; the trace and the report go to OUT_DIR (default BUILD_DIR).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=$(cd "${2:-$build}" && pwd)
mt=$build/memtrace
[ -x "$mt" ] && [ -x "$build/profile_me" ] || { echo "example.sh: build first ($build)" >&2; exit 1; }

echo "== memtrace dump examples/example.ctf"
"$mt" dump "$root/examples/example.ctf"
echo
echo "== memtrace run --every 4096 -o $out/profile_me.ctf -- profile_me"
"$mt" run --every 4096 -o "$out/profile_me.ctf" -- "$build/profile_me"
echo
echo "== memtrace top profile_me.ctf"
"$mt" top "$out/profile_me.ctf"
echo
"$mt" report "$out/profile_me.ctf" -o "$out/profile_me.html"
echo "== memtrace report: $out/profile_me.html (open it in a browser)"
