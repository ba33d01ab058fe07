#!/bin/sh
# run.sh - build the libFuzzer reader target with clang and fuzz it.
# Usage: fuzz/run.sh [SECONDS]   (default 60)
# Env:   MT_FUZZ_BUILD  build directory (default: <repo>/build-fuzz)
#        MEMTRACE_CORPUS reference corpus (default: <repo>/../shared/corpus)
#        MT_FUZZ_JOBS   parallel fuzzing jobs (default 1)
# Seeds are copied at run time into the build directory. Crash inputs are
# copied into fuzz/regressions/ and the script then exits non-zero.
set -eu

secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MT_FUZZ_BUILD:-$root/build-fuzz}
corpus=${MEMTRACE_CORPUS:-$root/../shared/corpus}
jobs=${MT_FUZZ_JOBS:-1}

CC=clang cmake -S "$root" -B "$build" -G Ninja -DMT_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target fuzz_reader

work=$build/fuzz-work
mkdir -p "$work/corpus" "$work/artifacts"
for f in "$corpus"/traces/*.ctf "$corpus"/malformed/*.ctf "$root"/fuzz/regressions/*; do
  case "$f" in *README*) continue ;; esac
  [ -f "$f" ] && cp -f "$f" "$work/corpus/"
done

rm -f "$work"/artifacts/crash-* "$work"/artifacts/leak-* "$work"/artifacts/timeout-* \
  "$work"/artifacts/oom-*
status=0
( cd "$work" && "$build/fuzz/fuzz_reader" -max_total_time="$secs" -max_len=200000 \
    -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" \
    $( [ "$jobs" -gt 1 ] && echo "-fork=$jobs -ignore_crashes=1" ) \
    "$work/corpus" ) || status=$?

found=0
for f in "$work"/artifacts/crash-* "$work"/artifacts/leak-* "$work"/artifacts/timeout-*; do
  [ -f "$f" ] || continue
  cp -f "$f" "$root/fuzz/regressions/"
  echo "fuzz: kept $(basename "$f") in fuzz/regressions/"
  found=1
done
if [ "$found" -ne 0 ] || [ "$status" -ne 0 ]; then
  echo "fuzz: FAILED (fuzzer exit $status)"
  exit 1
fi
echo "fuzz: no crashes in $secs s"
