#!/usr/bin/env bash
# install-deps.sh - install the Debian packages the build, tests, benchmarks
# and fuzzing need. Skips apt-get entirely when everything is present. Then
# the node tools of the speedscope and report tests (tests/report, npm ci
# from its package-lock.json; skipped when already installed).
set -eu
pkgs=(cmake ninja-build gcc make clang libclang-rt-14-dev xz-utils time)
# groff reads the manual page memtrace(1) in its test
pkgs+=(groff-base)
# the native heap profiler (libdw, libunwind, libiberty's demanglers) and
# the programs its tests run under it (a C++ compiler, python3, perl, sqlite3)
pkgs+=(libdw-dev libelf-dev libunwind-dev libiberty-dev g++ python3 perl sqlite3)
# the exporters and the HTML report: protobuf-c + protoc-c and zlib for
# `memtrace pprof`, the real `go tool pprof` (golang-go) and headless
# chromium + node/npm for their tests
# (npm only when absent: NodeSource's nodejs carries its own and conflicts)
pkgs+=(libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go chromium nodejs pkgconf)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
# a Rust compiler for profiler.rust (Debian's only when none is on the PATH:
# rustup's serves as well)
command -v rustc >/dev/null 2>&1 || pkgs+=(rustc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# node modules: reinstalled when the lock file is newer than the install
root=$(cd "$(dirname "$0")/.." && pwd)
nm=$root/tests/report/node_modules
if [ ! -f "$nm/.package-lock.json" ] || [ "$root/tests/report/package-lock.json" -nt "$nm/.package-lock.json" ]; then
  echo "install-deps: npm ci in tests/report"
  npm ci --prefix "$root/tests/report" --no-audit --no-fund >/dev/null
fi
