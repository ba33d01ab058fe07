#!/bin/sh
# run.sh - build a libFuzzer target with clang and fuzz it.
# Usage: fuzz/run.sh [SECONDS] [TARGET]   (default 60 s, fuzz_reader)
#   fuzz_reader     the reader on raw bytes, seeded from the corpus traces and
#                   fuzz/regressions/
#   fuzz_roundtrip  writer programs read back and compared with the spec's
#                   model, seeded from fuzz/regressions-roundtrip/
#   fuzz_commands   the memtrace tool's commands in-process on raw and on
#                   generated traces, seeded from fuzz/regressions-commands/
#                   and the corpus's small traces (each prefixed with the two
#                   bytes that pick a command line and the raw mode)
# Env:   MT_FUZZ_BUILD  build directory (default: <repo>/build-fuzz)
#        MEMTRACE_CORPUS reference corpus (default: <repo>/../shared/corpus)
#        MT_FUZZ_JOBS   parallel fuzzing jobs (default 1)
# Seeds are copied at run time into the build directory. Crash inputs are
# copied into the target's regression directory and the script then exits
# non-zero.
set -eu

secs=${1:-60}
target=${2:-fuzz_reader}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MT_FUZZ_BUILD:-$root/build-fuzz}
corpus=${MEMTRACE_CORPUS:-$root/../shared/corpus}
jobs=${MT_FUZZ_JOBS:-1}
extra=

case "$target" in
  fuzz_reader)
    regress=$root/fuzz/regressions
    work=$build/fuzz-work
    max_len=200000 ;;
  fuzz_roundtrip)
    regress=$root/fuzz/regressions-roundtrip
    work=$build/fuzz-work-roundtrip
    max_len=8192 ;;
  fuzz_commands)
    regress=$root/fuzz/regressions-commands
    work=$build/fuzz-work-commands
    max_len=32768
    # (the commands' output to /dev/null; libFuzzer keeps its own stderr)
    extra=-close_fd_mask=3 ;;
  *)
    echo "fuzz: unknown target '$target' (fuzz_reader, fuzz_roundtrip or fuzz_commands)" >&2
    exit 2 ;;
esac

CC=clang cmake -S "$root" -B "$build" -G Ninja -DMT_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "$target"

mkdir -p "$work/corpus" "$work/artifacts"
if [ "$target" = fuzz_reader ]; then
  seeds="$corpus/traces/*.ctf $corpus/malformed/*.ctf $regress/*"
else
  seeds="$regress/*"
fi
for f in $seeds; do
  case "$f" in *README*) continue ;; esac
  [ -f "$f" ] && cp -f "$f" "$work/corpus/"
done
if [ "$target" = fuzz_commands ]; then
  # the corpus's traces of at most 32 KB as raw inputs: command line i
  # (the i-th such trace's), raw mode, then the trace
  i=0
  for f in "$corpus"/traces/*.ctf "$corpus"/malformed/*.ctf; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -le 32766 ] || continue
    { printf "\\$(printf %03o $((i % 30)))\\000"; cat "$f"; } > "$work/corpus/raw-$(basename "$f")"
    i=$((i + 1))
  done
fi

rm -f "$work"/artifacts/crash-* "$work"/artifacts/leak-* "$work"/artifacts/timeout-* \
  "$work"/artifacts/oom-*
status=0
( cd "$work" && "$build/fuzz/$target" -max_total_time="$secs" -max_len="$max_len" \
    -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" $extra \
    $( [ "$jobs" -gt 1 ] && echo "-fork=$jobs -ignore_crashes=1" ) \
    "$work/corpus" ) || status=$?

found=0
for f in "$work"/artifacts/crash-* "$work"/artifacts/leak-* "$work"/artifacts/timeout-*; do
  [ -f "$f" ] || continue
  cp -f "$f" "$regress/"
  echo "fuzz: kept $(basename "$f") in ${regress#"$root"/}/"
  found=1
done
if [ "$found" -ne 0 ] || [ "$status" -ne 0 ]; then
  echo "fuzz: $target FAILED (fuzzer exit $status)"
  exit 1
fi
echo "fuzz: $target: no crashes in $secs s"
