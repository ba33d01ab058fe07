#!/usr/bin/env bash
# profiler_test.sh CASE CLI PRELOAD BINDIR SRCDIR [STATIC_PROG] [CXX_PROG]
# Runs programs under the native heap profiler (libmemtrace_preload.so) and
# checks their traces with the memtrace tools. Each CASE is one ctest.
# Every program must behave as without the profiler (same output, same
# exit status) and every trace must pass `memtrace check`.
set -u
export LC_ALL=C
CASE=$1 CLI=$2 PRELOAD=$3 BIN=$4 SRC=$5 STATIC=${6:-} CXX=${7:-}
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-prof.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok   $*"; }
line_of() { grep -nF "$2" "$1" | head -1 | cut -d: -f1; }   # line of a marker

# same_run NAME CMD...: CMD plain and under `memtrace run RUNOPTS` (array)
# give the same stdout and exit status; the trace is $T/NAME.ctf. The run
# is killed after RUN_TIMEOUT seconds (default 240).
same_run() {
  local name=$1; shift
  "$@" > "$T/$name.plain" 2> "$T/$name.plain.err"
  local want=$?
  timeout -k 10 "${RUN_TIMEOUT:-240}" "$CLI" run "${RUNOPTS[@]}" -o "$T/$name.ctf" -- "$@" > "$T/$name.out" 2> "$T/$name.err"
  local got=$?
  [ "$got" = "$want" ] || { fail "$name: exit status $got under the profiler, $want without"; cat "$T/$name.err"; }
  cmp -s "$T/$name.plain" "$T/$name.out" || { fail "$name: output differs under the profiler"; diff "$T/$name.plain" "$T/$name.out" | head -5; }
  # (or, when the profiler stopped early, that the trace holds the events until then)
  grep -Eq "^memtrace run: (trace written to $T/$name.ctf|$T/$name.ctf holds the events until then)$" \
    "$T/$name.err" || { fail "$name: no 'trace written' line"; cat "$T/$name.err"; }
  valid "$name" "$T/$name.ctf"
}
# flushed_while_running NAME PID: NAME.ctf (checked into NAME.check) holds
# samples while PID (memtrace run of profiler_idle) still runs, within 2.5
# s of the program's "allocated" in NAME.out (waited for up to 30 s); sets
# flushed to yes, or to what was seen instead
flushed_while_running() {
  local i
  flushed="no 'allocated' in 30 s"
  for i in $(seq 600); do grep -q allocated "$1.out" && break; sleep 0.05; done
  grep -q allocated "$1.out" || return
  flushed="no samples on disk"
  for i in $(seq 25); do
    "$CLI" check "$1.ctf" > "$1.check" 2>&1
    if grep -q "allocs: *[1-9]" "$1.check"; then
      kill -0 "$2" 2> /dev/null && flushed=yes || flushed="samples only once the program had ended"
      return
    fi
    sleep 0.1
  done
}
has_samples() {  # has_samples TRACE
  "$CLI" check "$1" | grep -q "allocs: *[1-9]" && ok "$(basename "$1") has samples" || fail "$1 has no samples"
}
valid() {  # valid WHAT TRACE: valid and without warnings (a collect of an id
  # that is not live, say, is allowed by the format but never written by us)
  "$CLI" check "$2" > "$T/check.out" 2>&1 && grep -q "^result: *valid$" "$T/check.out" ||
    { fail "$1: memtrace check rejects $2 or warns"; head -20 "$T/check.out"; return 1; }
  ok "$1: $(basename "$2") is valid ($(grep 'allocs:' "$T/check.out" | tr -s ' '))"
}
# within NAME ESTIMATE EXPECTED_BYTES RATE: |est - exp| <= 4 standard errors
# (samples are Poisson with mean bytes / 8 * rate)
within() {
  awk -v n="$1" -v e="$2" -v x="$3" -v r="$4" 'BEGIN {
    s = x / 8 * r; tol = 4 / sqrt(s); d = (e - x) / x; good = d <= tol && d >= -tol;
    printf "%s %s: estimated %.0f bytes, allocated %.0f (%+.2f%%, tolerance 4 sigma = %.2f%%)\n",
      good ? "ok  " : "FAIL", n, e, x, 100 * d, 100 * tol;
    exit !good }' || FAILS=$((FAILS + 1))
}
rate_is() {  # rate_is TRACE RATE: the trace's sample rate equals RATE
  local r
  r=$("$CLI" top --json "$1" 2>/dev/null | grep -o '"sample_rate": [0-9.e+-]*' | awk '{print $2}')
  awk -v a="${r:-0}" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-6 * b) }'
}
json_site() {  # json_site JSONFILE SITE-SUBSTRING FIELD
  grep -F "\"site\": \"$2" "$1" | head -1 | grep -o "\"$3\": [0-9.e+-]*" | head -1 | awk '{print $2}'
}

case $CASE in
accuracy|accuracy_clang)
  # Known amounts from known sites (accuracy.c); rate 1e-2 makes 4 standard
  # errors less than 5% for the smallest site (8 MiB). accuracy_clang: the
  # same program built by clang -O2 -g, whose DWARF has no .debug_aranges
  # (every frame was once its ELF symbol at line 0) and whose inlining and
  # frames differ from gcc's.
  PROG=$BIN/profiler_accuracy
  if [ "$CASE" = accuracy_clang ]; then
    PROG=$T/accuracy_clang
    clang -O2 -g -o "$PROG" "$SRC/accuracy.c" ||
      { fail "clang cannot build accuracy.c (scripts/install-deps.sh installs clang)"; exit 1; }
  fi
  RATE=1e-2
  RUNOPTS=(--rate $RATE)
  same_run acc "$PROG"
  "$CLI" top --by line --limit 0 --json acc.ctf > top.json || fail "top --json failed"
  MIB=1048576
  A=$(json_site top.json "alloc_a (" allocated_bytes)
  B=$(json_site top.json "alloc_b (" allocated_bytes)
  C=$(json_site top.json "alloc_c (" allocated_bytes)
  D=$(json_site top.json "make_block (" allocated_bytes)
  within "site A (1 KiB blocks)" "${A:-0}" $((200 * MIB)) $RATE
  within "site B (48-byte blocks)" "${B:-0}" $((20 * MIB)) $RATE
  within "site C (leaked 4 KiB blocks)" "${C:-0}" $((8 * MIB)) $RATE
  within "site D (inlined make_block)" "${D:-0}" $((16 * MIB)) $RATE
  CE=$(json_site top.json "alloc_c (" end_bytes)
  within "site C live at end" "${CE:-0}" $((8 * MIB)) $RATE
  # Site C leads the live-at-end ranking; nothing else is live at the end
  # but stdio's buffer.
  "$CLI" top --sort end --json acc.ctf > end.json
  first=$(grep -o '"site": "[^"]*' end.json | head -1 | cut -d'"' -f4)
  [ "$first" = "alloc_c" ] && ok "alloc_c first among live at end" || fail "first live at end: '$first'"
  # file:line of each site, and the inlined function: its own line in
  # accuracy_helper.h and its caller's line in accuracy.c for one code.
  for s in A B C; do
    fn=alloc_$(echo $s | tr ABC abc)
    l=$(line_of "$SRC/accuracy.c" "SITE_$s */")
    grep -qF "\"site\": \"$fn ($SRC/accuracy.c:$l)\"" top.json && ok "site $s at accuracy.c:$l" ||
      fail "site $s: no '$fn ($SRC/accuracy.c:$l)' in top --by line"
  done
  li=$(line_of "$SRC/accuracy_helper.h" "SITE_D_INNER")
  lc=$(line_of "$SRC/accuracy.c" "SITE_D_CALL")
  "$CLI" dump acc.ctf > dump.txt || fail "dump failed"
  grep -q "build_d@$SRC/accuracy.c:$lc:[0-9]*-[0-9]* make_block@$SRC/accuracy_helper.h:$li:" dump.txt &&
    ok "inlined make_block at accuracy_helper.h:$li, called from build_d at accuracy.c:$lc" ||
    { fail "no 'build_d@accuracy.c:$lc ... make_block@accuracy_helper.h:$li' frame in dump"; grep -m1 make_block dump.txt; }
  "$CLI" hotspots acc.ctf > hot.txt || fail "hotspots failed"
  grep -q "at alloc_a (" hot.txt && grep -q "at make_block (" hot.txt && ok "hotspots names the sites" ||
    { fail "hotspots lacks alloc_a / make_block"; head -20 hot.txt; }
  "$CLI" info acc.ctf > info.txt
  grep -q "of $PROG" info.txt && rate_is acc.ctf 0.01 &&
    grep -q "memtrace-c .* native preload" info.txt && ok "trace_info: executable, rate, runtime params" ||
    { fail "info"; cat info.txt; }
  ;;

rust)
  # A Rust program built with debug information (rustc -g -O): its frames
  # named with file and line, its inlined calls kept (rust_sites.rs).
  command -v rustc > /dev/null ||
    { fail "rustc not found (scripts/install-deps.sh installs Debian's)"; exit 1; }
  rustc -g -O -o rust_sites "$SRC/rust_sites.rs" 2> rustc.err ||
    { fail "rustc cannot build rust_sites.rs"; cat rustc.err; exit 1; }
  RUNOPTS=(--every 4096)
  same_run rust ./rust_sites
  "$CLI" dump rust.ctf > dump.txt || fail "dump failed"
  l=$(line_of "$SRC/rust_sites.rs" "SITE_RUST")
  grep -q "make_strings@$SRC/rust_sites.rs:$l:" dump.txt &&
    ok "make_strings at rust_sites.rs:$l" ||
    { fail "no 'make_strings@rust_sites.rs:$l' frame in dump"; grep -m1 -o "[^ ]*make_strings[^ ]*" dump.txt; }
  # below it, the standard library's calls inlined into it, with their
  # files and lines (which ones depends on the compiler's version)
  grep -m1 "make_strings@$SRC/rust_sites.rs:$l:" dump.txt |
    grep -q "make_strings@$SRC/rust_sites.rs:$l:[0-9-]* .*@[^ ]*\.rs:[1-9]" &&
    ok "the inlined calls below make_strings have files and lines" ||
    { fail "no inlined frame with a file and line after make_strings"; }
  ;;

env)
  # The environment interface without the wrapper (spec 10.4).
  P="$BIN/profiler_accuracy"
  "$P" > plain.out
  for bad in abc 0 2 -1e-3 nan 1e-3x "" ; do
    [ -z "$bad" ] && continue
    rm -f e.ctf
    LD_PRELOAD=$PRELOAD MEMTRACE=e.ctf MEMTRACE_RATE=$bad "$P" > e.out 2> e.err
    rc=$?
    [ $rc = 0 ] && cmp -s plain.out e.out || fail "MEMTRACE_RATE=$bad: program did not run normally (rc $rc)"
    grep -qx "memtrace: MEMTRACE_RATE=$bad: the sampling rate must be a number between 0 and 1; running untraced" e.err &&
      [ "$(wc -l < e.err)" = 1 ] && ok "MEMTRACE_RATE=$bad refused in one line" || { fail "MEMTRACE_RATE=$bad message"; cat e.err; }
    [ ! -s e.ctf ] || fail "MEMTRACE_RATE=$bad: a trace was written"
  done
  # MEMTRACE_UNWIND names an unwinder (for comparisons): another name is a
  # bad setting like a bad rate, not silently the default
  rm -f e.ctf
  LD_PRELOAD=$PRELOAD MEMTRACE=e.ctf MEMTRACE_UNWIND=bogus "$P" > e.out 2> e.err
  rc=$?
  [ $rc = 0 ] && cmp -s plain.out e.out && [ ! -s e.ctf ] &&
    grep -qx "memtrace: MEMTRACE_UNWIND=bogus: not an unwinder (libunwind, libgcc, step or check; unset for the default); running untraced" e.err &&
    [ "$(wc -l < e.err)" = 1 ] && ok "MEMTRACE_UNWIND=bogus refused in one line, untraced" ||
    { fail "MEMTRACE_UNWIND=bogus (rc $rc)"; cat e.err; }
  rm -f g.ctf
  LD_PRELOAD=$PRELOAD MEMTRACE=g.ctf MEMTRACE_UNWIND=libunwind "$P" > g.out 2> g.err
  [ ! -s g.err ] && "$CLI" info g.ctf 2>&1 | grep -q "(unwinder libunwind)" &&
    ok "MEMTRACE_UNWIND=libunwind accepted" || { fail "MEMTRACE_UNWIND=libunwind"; cat g.err; }
  for good in " 1e-3" 1_000e-6 0x1p-10 1; do
    rm -f g.ctf
    LD_PRELOAD=$PRELOAD MEMTRACE=g.ctf MEMTRACE_RATE="$good" MEMTRACE_CONTEXT="ctx $good" "$P" > g.out 2> g.err
    want=$(awk -v r="$good" 'BEGIN { gsub("_", "", r); if (r ~ /^0x/) r = 2^-10; printf "%.17g", r + 0 }')
    "$CLI" info g.ctf > info.txt 2>&1
    [ ! -s g.err ] && rate_is g.ctf "$want" && grep -q "with context: ctx $good" info.txt &&
      ok "MEMTRACE_RATE='$good' accepted (rate $want, context)" || { fail "MEMTRACE_RATE='$good'"; cat g.err info.txt; }
  done
  # A context longer than a trace holds: one line, untraced (it used to be
  # cut at 1024 bytes without a word).
  # (made first: a $(...) among the assignments would run with the ones
  # before it, LD_PRELOAD and MEMTRACE, in its environment)
  long=$(head -c 20000 /dev/zero | tr '\0' c)
  LD_PRELOAD=$PRELOAD MEMTRACE=lc.ctf MEMTRACE_CONTEXT=$long "$P" > lc.out 2> lc.err; rc=$?
  [ $rc = 0 ] && cmp -s plain.out lc.out && [ "$(wc -l < lc.err)" = 1 ] &&
    grep -qx "memtrace: the context is 20000 bytes long, more than the 16384 a trace holds; running untraced" lc.err &&
    [ ! -e lc.ctf ] && ok "MEMTRACE_CONTEXT of 20000 bytes refused in one line, no file made" || { fail "long MEMTRACE_CONTEXT (rc $rc)"; cat lc.err; }
  rm -f lc.ctf
  # Default rate 1e-5; MEMTRACE empty or unset: nothing traced.
  LD_PRELOAD=$PRELOAD MEMTRACE=d.ctf "$P" > /dev/null && rate_is d.ctf 1e-5 &&
    ok "default rate 1e-05" || fail "default rate"
  LD_PRELOAD=$PRELOAD MEMTRACE= "$P" > n.out 2> n.err && cmp -s plain.out n.out && [ ! -s n.err ] &&
    [ -z "$(ls *.ctf 2>/dev/null | grep -v -e '^g.ctf$' -e '^d.ctf$')" ] && ok "MEMTRACE empty: untraced" || fail "MEMTRACE empty"
  # A file that cannot be opened: one line, the program runs on.
  LD_PRELOAD=$PRELOAD MEMTRACE=/nonexistent-dir/t.ctf "$P" > o.out 2> o.err
  rc=$?
  [ $rc = 0 ] && cmp -s plain.out o.out && [ "$(wc -l < o.err)" = 1 ] &&
    grep -q "^memtrace: cannot open memtrace file /nonexistent-dir/t.ctf: No such file or directory; running untraced$" o.err &&
    ok "unopenable file: one line, program unharmed" || { fail "unopenable file (rc $rc)"; cat o.err; }
  # A full disk (/dev/full: the first packet cannot be written): one line,
  # the program runs on untraced.
  if [ -w /dev/full ]; then
    LD_PRELOAD=$PRELOAD MEMTRACE=/dev/full MEMTRACE_RATE=1e-2 "$P" > f.out 2> f.err
    rc=$?
    [ $rc = 0 ] && cmp -s plain.out f.out && [ "$(wc -l < f.err)" = 1 ] &&
      grep -q "^memtrace: cannot write memtrace file /dev/full: .*No space left on device; running untraced$" f.err &&
      ok "disk full (/dev/full): one line, program unharmed" || { fail "disk full (rc $rc)"; cat f.err; }
  else
    fail "/dev/full is not writable here: the disk-full case cannot be tested"
  fi
  # The disk fills up during the run (a 64 KiB file size limit, SIGXFSZ
  # ignored): one line, the program runs on, the trace ends with the last
  # complete packet and reads cleanly.
  ( trap '' XFSZ; ulimit -f 64
    LD_PRELOAD=$PRELOAD MEMTRACE=full.ctf MEMTRACE_RATE=1e-2 "$P" > x.out 2> x.err; echo $? > x.rc )
  rc=$(cat x.rc)
  [ "$rc" = 0 ] && cmp -s plain.out x.out && [ "$(wc -l < x.err)" = 1 ] &&
    grep -q "^memtrace: cannot write the trace full.ctf: .*; tracing stopped$" x.err &&
    [ "$(stat -c %s full.ctf)" -le 65536 ] &&
    ok "disk full during the run: one line ($(cut -c1-60 x.err)...), program unharmed" ||
    { fail "disk full during the run (rc $rc, $(stat -c %s full.ctf) bytes)"; cat x.err; }
  valid "trace cut by the full disk" full.ctf
  # A file another process is tracing into: the second runs untraced.
  # (the first holds it until the second is done: a sleep, ended then)
  LD_PRELOAD=$PRELOAD MEMTRACE=l.ctf sleep 60 &
  bg=$!
  for i in $(seq 300); do [ -s l.ctf ] && break; sleep 0.1; done
  LD_PRELOAD=$PRELOAD MEMTRACE=l.ctf "$P" > l.out 2> l.err
  rc=$?
  kill $bg; wait $bg
  [ $rc = 0 ] && cmp -s plain.out l.out && grep -q "^memtrace: cannot lock memtrace file l.ctf: is another process using it?; running untraced$" l.err &&
    ok "locked file: one line, second program unharmed" || { fail "locked file (rc $rc)"; cat l.err; }
  # Children are not traced and do not see the profiler (MEMTRACE emptied,
  # the library removed from LD_PRELOAD, other entries kept).
  LD_PRELOAD="$PRELOAD /lib/x86_64-linux-gnu/libm.so.6" MEMTRACE=c.ctf \
    /bin/sh -c 'echo "[$MEMTRACE][$LD_PRELOAD]"' > c.out 2> c.err
  grep -qx "\[\]\[/lib/x86_64-linux-gnu/libm.so.6\]" c.out && ok "environment cleaned for children: $(cat c.out)" ||
    { fail "children's environment: $(cat c.out)"; cat c.err; }
  # ... and for bash's, which get the environment bash copied from the
  # block main() received (the cleaning is done in place)
  LD_PRELOAD="$PRELOAD /lib/x86_64-linux-gnu/libm.so.6" MEMTRACE=cb.ctf \
    bash -c 'echo "[$MEMTRACE][$LD_PRELOAD]"; /bin/sh -c '\''echo "[$MEMTRACE][$LD_PRELOAD]"'\' > cb.out 2> cb.err
  [ "$(grep -cx "\[\]\[/lib/x86_64-linux-gnu/libm.so.6\]" cb.out)" = 2 ] && [ ! -s cb.err ] &&
    ok "environment cleaned for bash and its children" ||
    { fail "bash's environment: $(cat cb.out)"; cat cb.err; }
  ;;

run_cli)
  "$CLI" run --help > h.out && grep -q "^Usage: memtrace run" h.out && ok "run --help" || fail "run --help"
  for args in "" "--rate" "--rate 0 -- true" "--rate 1.5 true" "--every 4 true" "--every x true" \
              "--rate 1e-3 --every 4096 true" "--bogus true" "-o" "--rate 1e-310 true" \
              "--rate 9e-16 true" "--every 1e20 true" "--every 8.1e15 true"; do
    "$CLI" run $args > u.out 2> u.err
    rc=$?
    [ $rc = 2 ] && grep -q "^memtrace run: " u.err && ok "usage error: run $args" || { fail "run $args: exit $rc"; cat u.err; }
  done
  # Without --rate, MEMTRACE_RATE decides (checked first: the library's
  # syntax, the run's range); --rate wins over it; MEMTRACE_CONTEXT passes
  # on; the context's length is checked before the program runs.
  MEMTRACE_RATE=1_0e-4 MEMTRACE_CONTEXT=from-env "$CLI" run -o er.ctf -- /bin/true 2> er.err &&
    rate_is er.ctf 1e-3 && "$CLI" info er.ctf | grep -qx "   with context: from-env" &&
    ok "run: MEMTRACE_RATE and MEMTRACE_CONTEXT used" || { fail "run: MEMTRACE_RATE"; cat er.err; }
  MEMTRACE_RATE=1e-3 "$CLI" run --rate 0.25 -o er.ctf -- /bin/true 2> er.err && rate_is er.ctf 0.25 &&
    ok "run: --rate wins over MEMTRACE_RATE" || { fail "run: --rate over MEMTRACE_RATE"; cat er.err; }
  for bad in abc 1e-16; do
    MEMTRACE_RATE=$bad "$CLI" run -o er.ctf -- /bin/true 2> er.err; rc=$?
    [ $rc = 2 ] && grep -q "^memtrace run: MEMTRACE_RATE=$bad in the environment: the rate must be a number, 1e-15 <= R <= 1" er.err &&
      ok "run: MEMTRACE_RATE=$bad refused first" || { fail "run: MEMTRACE_RATE=$bad: exit $rc"; cat er.err; }
  done
  long=$(head -c 16385 /dev/zero | tr '\0' c)
  "$CLI" run --context "$long" -o er.ctf -- /bin/true 2> er.err; rc=$?
  [ $rc = 2 ] && grep -q "^memtrace run: --context: 16385 bytes, more than the 16384 a trace holds" er.err &&
    ok "run: --context over 16384 bytes refused" || { fail "run: long --context: exit $rc"; cat er.err; }
  MEMTRACE_CONTEXT=$long "$CLI" run -o er.ctf -- /bin/true 2> er.err; rc=$?
  [ $rc = 2 ] && grep -q "^memtrace run: MEMTRACE_CONTEXT in the environment: 16385 bytes" er.err &&
    ok "run: MEMTRACE_CONTEXT over 16384 bytes refused" || { fail "run: long MEMTRACE_CONTEXT: exit $rc"; cat er.err; }
  "$CLI" run --context "${long%c}" -o er.ctf -- /bin/true 2> er.err &&
    [ "$("$CLI" info --json er.ctf | grep -o '"context": "c*"' | wc -c)" = $((16384 + 14)) ] &&
    ok "run: a context of 16384 bytes kept whole" || { fail "run: context of 16384 bytes"; cat er.err; }
  # A file system that makes no files, which access() cannot tell (root).
  if [ -d /proc/self ]; then
    "$CLI" run -o /proc/x.ctf -- /bin/true 2> er.err; rc=$?
    [ $rc = 1 ] && grep -q "^memtrace run: cannot write the trace to /proc/x.ctf" er.err &&
      ok "run: -o /proc/x.ctf refused first" || { fail "run: -o /proc/x.ctf: exit $rc"; cat er.err; }
  fi
  "$CLI" run -- /bin/sh -c 'exit 7' 2> s.err; rc=$?
  [ $rc = 7 ] && ok "exit status 7 passed on" || fail "exit status: $rc"
  # values after '=' (--output=, --rate=) are the same options
  "$CLI" run --rate=0.25 --output=eq.ctf -- /bin/true 2> eq.err; rc=$?
  [ $rc = 0 ] && [ -s eq.ctf ] && rate_is eq.ctf 0.25 && ok "run --rate=0.25 --output=eq.ctf" ||
    { fail "run --rate= --output=: exit $rc"; cat eq.err; }
  "$CLI" run -- /bin/sh -c 'kill -TERM $$' 2> s.err; rc=$?
  [ $rc = 143 ] && grep -qx "memtrace run: /bin/sh was killed by signal 15 (Terminated)" s.err &&
    ok "killed by SIGTERM: 143, said" || { fail "signal status: $rc"; cat s.err; }
  # A program killed by a signal: memtrace run ends by the same signal (as
  # its caller would have seen the program end), without a core of its own;
  # SIGINT and SIGPIPE unannounced, as shells do. (python3 tells a death by
  # signal N, returncode -N, from an exit status of 128+N.)
  for sig in SEGV INT PIPE; do
    (ulimit -c 0; python3 -c '
import subprocess, sys
r = subprocess.run(sys.argv[1:], stderr=subprocess.PIPE)
sys.stderr.buffer.write(r.stderr)
print(r.returncode)' "$CLI" run -o sig.ctf -- /bin/sh -c "kill -$sig \$\$") > sig.out 2> sig.err
    want=$(kill -l "$sig")
    said=$(grep -c "was killed by signal" sig.err)
    [ "$sig" = SEGV ] && exp_said=1 || exp_said=0
    [ "$(cat sig.out)" = "-$want" ] && [ "$said" = "$exp_said" ] && grep -q "trace written to" sig.err &&
      ok "program killed by SIG$sig: memtrace run ends by SIG$sig too (announced: $said)" ||
      { fail "SIG$sig: returncode $(cat sig.out), announced $said"; cat sig.err; }
  done
  [ -z "$(ls core* 2>/dev/null)" ] || fail "a core file was left: $(ls core*)"
  # Signals sent to memtrace run itself (kill, timeout, a supervisor) go on
  # to the program, which ends by them, and memtrace run after it: SIGINT
  # and SIGQUIT used to be ignored (the program ran on), others killed
  # memtrace run and left the program running without it.
  for sig in INT QUIT USR1 TERM; do
    python3 -c '
import signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[2:], stderr=subprocess.PIPE)
time.sleep(0.5)
t = time.time()
p.send_signal(getattr(signal, "SIG" + sys.argv[1]))
err = p.communicate(timeout=20)[1]
sys.stderr.buffer.write(err)
print(p.returncode, "%.0f" % (time.time() - t))' "$sig" "$CLI" run -o fw.ctf -- \
      /bin/sh -c 'echo $$ > fw.pid; exec sleep 5' > fw.out 2> fw.err
    read -r fw_rc fw_secs < fw.out
    # (the program found by its pid: another test may run a `sleep 5` too)
    [ "${fw_rc:-}" = "-$(kill -l "$sig")" ] && [ "${fw_secs:-9}" -lt 3 ] &&
      [ -s fw.pid ] && ! kill -0 "$(cat fw.pid)" 2> /dev/null &&
      ok "SIG$sig sent to memtrace run: passed on, both ended by it" ||
      { fail "SIG$sig to memtrace run: returncode ${fw_rc:-?} after ${fw_secs:-?} s"; cat fw.err
        [ -s fw.pid ] && kill "$(cat fw.pid)" 2> /dev/null; }
    rm -f fw.pid
  done
  # A trace file from an earlier run is not "written" by a run that could
  # not start the program (a #! interpreter that is missing: 127).
  printf '#!/nonexistent/interp\necho hi\n' > badint.sh; chmod +x badint.sh
  cp every.ctf stale.ctf 2> /dev/null || "$CLI" run --every 4k -o stale.ctf -- /bin/true 2> /dev/null
  "$CLI" run -o stale.ctf -- ./badint.sh > /dev/null 2> st.err; rc=$?
  [ $rc = 127 ] && grep -qx "memtrace run: no trace was written to $T/stale.ctf" st.err &&
    ! grep -q "trace written" st.err && ok "a stale trace file not called written (exit 127)" ||
    { fail "stale trace file: rc $rc"; cat st.err; }
  # A script without a #! line runs through /bin/sh, as env and the shells do.
  printf 'echo "script ran: $1"\n' > nosb.sh; chmod +x nosb.sh
  "$CLI" run -o nosb.ctf -- ./nosb.sh arg1 > nosb.out 2> nosb.err; rc=$?
  [ $rc = 0 ] && [ "$(cat nosb.out)" = "script ran: arg1" ] && valid "script without #!" nosb.ctf &&
    ok "a script without #!: run by /bin/sh" || { fail "script without #!: rc $rc"; cat nosb.out nosb.err; }
  # The profiler library under a path with a space: LD_PRELOAD cannot carry
  # it (the loader splits at spaces and colons); refused, not run untraced.
  mkdir -p "sp ace"; cp "$PRELOAD" "sp ace/"
  MEMTRACE_PRELOAD="$T/sp ace/$(basename "$PRELOAD")" "$CLI" run -- /bin/touch ran2.txt 2> sp.err; rc=$?
  [ $rc = 1 ] && [ ! -e ran2.txt ] && grep -q "holds a space or a colon, which LD_PRELOAD cannot carry" sp.err &&
    ok "library path with a space: refused" || { fail "library path with a space: rc $rc"; cat sp.err; }
  # -o naming a FIFO: read by a process, the trace goes through it; read by
  # none, the program runs untraced at once, said (it hung: the library's
  # open waited for a reader, and memtrace run's own check had opened and
  # closed the FIFO, which ended a reader's input).
  # (the reader must be in its open of the FIFO before the run looks for
  # one: under CI's load it was not yet, the run went untraced and the
  # reader waited for a writer for ever; and it is killed after 60 s)
  rm -f tf.fifo; mkfifo tf.fifo
  cat tf.fifo > tf.ctf &
  reader=$!
  # (cat itself: before its exec the shell's child opens tf.ctf)
  for i in $(seq 1000); do
    if [ "$(cat /proc/$reader/comm 2>/dev/null)" = cat ]; then
      grep -qsx wait_for_partner /proc/$reader/wchan && break
      case $(cut -d' ' -f1 /proc/$reader/syscall 2>/dev/null) in 2|257) break ;; esac
    fi
    sleep 0.01
  done
  timeout 30 "$CLI" run --every 512 -o tf.fifo -- "$BIN/profiler_footprint" 1000 > /dev/null 2> tf.err; rc=$?
  for i in $(seq 6000); do kill -0 $reader 2>/dev/null || break; sleep 0.01; done
  kill $reader 2>/dev/null; wait $reader
  [ $rc = 0 ] && grep -qx "memtrace run: trace sent to $T/tf.fifo" tf.err &&
    "$CLI" check tf.ctf | grep -q "allocs: *[1-9]" &&
    ok "-o FIFO with a reader: the trace goes through it" || { fail "-o FIFO: rc $rc"; cat tf.err; }
  valid "trace through a FIFO" tf.ctf
  timeout 30 "$CLI" run -o tf.fifo -- /bin/echo ran > tf.out 2> tf.err; rc=$?
  [ $rc = 0 ] && grep -qx ran tf.out &&
    grep -qx "memtrace run: cannot open memtrace file $T/tf.fifo: it is a FIFO that no process reads; running untraced" tf.err &&
    [ "$(wc -l < tf.err)" = 1 ] && ok "-o FIFO without a reader: said, the program run untraced" ||
    { fail "-o FIFO without a reader: rc $rc"; cat tf.err; }
  # A current directory whose path is longer than PATH_MAX: an absolute -o
  # needs no name for it; a relative one (or the default) is refused, said.
  python3 -c '
import os, subprocess, sys
os.makedirs("deep", exist_ok=True); os.chdir("deep")
for i in range(22):
    os.mkdir("d" * 200); os.chdir("d" * 200)
cli, t = sys.argv[1], sys.argv[2]
for o in ([t + "/deepabs.ctf"], []):
    r = subprocess.run([cli, "run"] + (["-o"] + o if o else []) + ["--", "/bin/true"],
                       capture_output=True, text=True)
    print(r.returncode, r.stderr.splitlines()[0] if r.stderr else "")' "$CLI" "$T" > deep.out 2>&1
  { read -r rc1 msg1; read -r rc2 msg2; } < deep.out
  [ "$rc1" = 0 ] && [ -s deepabs.ctf ] && [ "$rc2" = 1 ] &&
    [ "$msg2" = "memtrace run: the current directory's path is longer than 4096 bytes: give -o an absolute path" ] &&
    ok "current directory past PATH_MAX: an absolute -o works, the default refused" ||
    { fail "current directory past PATH_MAX"; cat deep.out; }
  rm -rf deep
  # Descriptors closed for memtrace run are closed for the program too (it
  # used to get them open on /dev/null, memtrace's own placeholders).
  "$CLI" run -o cl.ctf -- /bin/sh -c 'ls /proc/$$/fd > fds.txt' 2>&-; rc=$?
  [ $rc = 0 ] && ! grep -qx 2 fds.txt && grep -qx 1 fds.txt &&
    ok "stderr closed for memtrace run: closed for the program" || { fail "closed stderr: rc $rc"; cat fds.txt; }
  "$CLI" run -- no-such-command-xyz > /dev/null 2> s.err; rc=$?
  [ $rc = 1 ] && grep -q "no-such-command-xyz: command not found" s.err && ok "missing command" || { fail "missing command: $rc"; cat s.err; }
  # a trace that cannot be written where asked: refused before the program
  # runs (the library alone would run it untraced)
  "$CLI" run -o /nonexistent-dir/t.ctf -- /bin/touch ran.txt > /dev/null 2> w.err; rc=$?
  [ $rc = 1 ] && [ ! -e ran.txt ] &&
    grep -qx "memtrace run: cannot write the trace to /nonexistent-dir/t.ctf: No such file or directory" w.err &&
    ok "unwritable trace refused first" || { fail "unwritable trace: rc $rc"; cat w.err; }
  mkdir -p adir
  "$CLI" run -o adir -- /bin/touch ran.txt > /dev/null 2> w.err; rc=$?
  [ $rc = 1 ] && [ ! -e ran.txt ] && grep -qx "memtrace run: cannot write the trace to adir: Is a directory" w.err &&
    ok "a directory as the trace refused" || { fail "directory as trace: rc $rc"; cat w.err; }
  long=$(printf 'a%.0s' $(seq 300))
  "$CLI" run -o "$long" -- /bin/touch ran.txt > /dev/null 2> w.err; rc=$?
  [ $rc = 1 ] && [ ! -e ran.txt ] && grep -q "File name too long" w.err &&
    ok "a trace name too long refused first" || { fail "long trace name: rc $rc"; cat w.err; }
  # The disk fills up during the run (a 64 KiB file size limit): the
  # profiler stops, says why, and memtrace run does not call the trace
  # written but cut short.
  # (its status file, in TMPDIR, removed after)
  mkdir -p st
  ( trap '' XFSZ; ulimit -f 64; export TMPDIR=$T/st
    exec "$CLI" run --every 512 -o cut.ctf -- "$BIN/profiler_footprint" 1000 ) > /dev/null 2> w.err; rc=$?
  [ $rc = 0 ] && grep -q "^memtrace run: cannot write the trace $T/cut.ctf: .*; tracing stopped$" w.err &&
    grep -q "^memtrace run: $T/cut.ctf holds the events until then$" w.err &&
    [ "$(grep -c "^memtrace" w.err)" = 2 ] &&
    ! grep -q "trace written" w.err && [ -z "$(ls -A st)" ] &&
    ok "disk full during memtrace run: the trace called cut short, not written" ||
    { fail "disk full during memtrace run: rc $rc"; cat w.err; }
  valid "trace cut short" cut.ctf
  "$CLI" run -o dir.ctf -- "$T/adir" > /dev/null 2> w.err; rc=$?
  [ $rc = 1 ] && grep -q "adir: command not found or not executable" w.err && ! grep -q "trace written" w.err &&
    ok "a directory as CMD refused" || { fail "directory as CMD: rc $rc"; cat w.err; }
  # default name: memtrace.PID.ctf in the current directory, PID = the program's
  "$CLI" run -- /bin/sh -c 'echo $$ > pid.txt' 2> d.err
  pid=$(cat pid.txt)
  [ -s "memtrace.$pid.ctf" ] && grep -qx "memtrace run: trace written to $T/memtrace.$pid.ctf" d.err &&
    ok "default trace name memtrace.$pid.ctf" || { fail "default name"; cat d.err; ls; }
  valid "default name" "memtrace.$pid.ctf"
  rate_is "memtrace.$pid.ctf" 1e-5 && ok "default rate 1e-05" || fail "default rate"
  "$CLI" run --every 4k -o every.ctf -- /bin/true 2> /dev/null && rate_is every.ctf 0.001953125 &&
    ok "--every 4k: rate 8/4096" || fail "--every 4k"
  # statically linked programs are refused
  if [ -n "$STATIC" ]; then
    "$CLI" run -- "$STATIC" > st.out 2> st.err; rc=$?
    [ $rc = 1 ] && grep -q "is statically linked: it cannot be profiled by preloading" st.err && [ ! -s st.out ] &&
      ok "static binary refused" || { fail "static binary: rc $rc"; cat st.err st.out; }
  else
    fail "no static test program (libc.a missing: apt-get install libc6-dev)"
  fi
  # Programs whose malloc cannot be replaced by preloading: refused, with
  # the reason (they used to run and leave a trace without a sample, or,
  # with gcc's AddressSanitizer, stop with its own complaint). clang links
  # its AddressSanitizer runtime into the program: a malloc of its own.
  asan_why="it is built with a sanitizer (libasan.so"
  nm -D "$BIN/profiler_asan" 2>/dev/null | grep -qE " [TW] malloc$" && asan_why="it defines malloc itself"
  for p in ownmalloc:"it defines malloc itself" asan:"$asan_why"; do
    "$CLI" run -- "$BIN/profiler_${p%%:*}" > km.out 2> km.err; rc=$?
    [ $rc = 1 ] && grep -qF "cannot be profiled by preloading: ${p#*:}" km.err && [ ! -s km.out ] &&
      ok "${p%%:*} refused: $(cut -c1-90 km.err)..." || { fail "${p%%:*}: rc $rc"; cat km.err km.out; }
  done
  # A program linked with an allocator that replaces malloc (as libjemalloc
  # and libtcmalloc do): its unsampled blocks come from that allocator and
  # go back to it (they went to glibc's, and a jemalloc-linked C++ program
  # crashed; this one died at its first free of one of the allocator's own
  # blocks).
  "$CLI" run --every 4k -o fa.ctf -- "$BIN/profiler_fakeuse" > fa.out 2> fa.err; rc=$?
  [ $rc = 0 ] && grep -qx "the allocator served the program" fa.out &&
    ok "a program linked with another allocator: its blocks are that allocator's" ||
    { fail "linked allocator (rc $rc)"; cat fa.out fa.err; }
  has_samples fa.ctf
  valid "linked allocator" fa.ctf
  # Programs the loader runs with other privileges than the caller's ignore
  # LD_PRELOAD (secure-execution mode): refused. Set-user-ID to ourselves
  # changes nothing: traced.
  if [ "$(id -u)" = 0 ]; then
    cp /bin/true suid && chown nobody suid && chmod u+s suid && SUID=$T/suid
    cp /bin/true own_suid && chmod u+s own_suid
    "$CLI" run -o own.ctf -- ./own_suid 2> own.err && [ -s own.ctf ] &&
      ok "set-user-ID to the caller: traced" || { fail "set-user-ID to the caller"; cat own.err; }
  else
    SUID=$(command -v passwd)       # set-user-ID root on Debian
  fi
  "$CLI" run -- "$SUID" --help > su.out 2> su.err; rc=$?
  [ $rc = 1 ] && grep -q "is set-user-ID, set-group-ID or has file capabilities" su.err && [ ! -s su.out ] &&
    ok "set-user-ID to another user refused" || { fail "set-user-ID $SUID: rc $rc"; cat su.err su.out; }
  # A shell's children (bash passes them its own copy of the environment):
  # untraced by default, each into its own file with --follow-exec, and
  # never a message.
  sh_cmd='seq 1 3000 | sort -n | tail -1; true'
  "$CLI" run -o nf.ctf -- bash -c "$sh_cmd" > nf.out 2> nf.err
  [ "$(cat nf.out)" = 3000 ] && [ "$(ls nf*.ctf | wc -l)" = 1 ] &&
    [ "$(grep -v "^memtrace run: trace written to $T/nf.ctf$" nf.err | grep -v "^memtrace run: no allocation was sampled\|^memtrace run: if .* does its work in programs" | wc -l)" = 0 ] &&
    ok "bash's children untraced, no message" || { fail "bash's children without --follow-exec"; ls nf*; cat nf.err; }
  "$CLI" run --follow-exec -o fe.ctf -- bash -c "$sh_cmd" > fe.out 2> fe.err
  n=$(ls fe.*.ctf 2>/dev/null | wc -l)
  [ "$(cat fe.out)" = 3000 ] && [ "$n" = 3 ] && ! grep -q "^memtrace:" fe.err &&
    ok "--follow-exec: bash's children seq, sort, tail traced into $n files" ||
    { fail "bash's children with --follow-exec: $n files"; ls fe*; cat fe.err; }
  for f in fe.ctf fe.*.ctf; do valid "--follow-exec under bash" "$f"; done
  # A program exec'd in the root's place (a wrapper's `exec prog`) keeps its
  # process id and writes FILE itself.
  "$CLI" run --follow-exec -o ex.ctf -- /bin/sh -c "exec $BIN/profiler_cancel" > ex.out 2> ex.err
  [ "$(ls ex*.ctf | wc -l)" = 1 ] && "$CLI" info ex.ctf | grep -q "of $BIN/profiler_cancel$" &&
    ok "--follow-exec: the program a wrapper exec's writes FILE" ||
    { fail "--follow-exec with exec in place"; ls ex*; "$CLI" info ex.ctf | head -3; }
  valid "exec in place" ex.ctf
  # ... and so it does without --follow-exec (env, nice, a wrapper's `exec
  # prog`, pyenv's shims: the program the user asked for is the one exec'd
  # at the end), through every exec function, also when the exec passes an
  # environment of its own (X=1 only: the rate is kept). The exec'd program
  # empties MEMTRACE again for its own children.
  for mode in execl execle execlp execv execve execvp execvpe fexecve execveat fail; do
    "$CLI" run --rate 1e-2 -o "pl.$mode.ctf" -- "$BIN/profiler_exec_place" $mode > pl.out 2> pl.err
    rc=$?
    [ $rc = 0 ] && grep -qx "final -\?[0-9]* \[\]" pl.out && [ "$(ls pl.$mode*.ctf | wc -l)" = 1 ] &&
      "$CLI" flamegraph "pl.$mode.ctf" | grep -q "final_work" && rate_is "pl.$mode.ctf" 1e-2 &&
      ok "$mode in the root's place: the exec'd program traced into FILE at the same rate" ||
      { fail "$mode in the root's place (rc $rc)"; cat pl.out pl.err; }
    valid "$mode in place" "pl.$mode.ctf"
  done
  grep -qx "child \[\]" pl.out && ok "after a failed exec, children still untraced" ||
    { fail "children after a failed exec"; cat pl.out; }
  # An exec runs no destructor: the trace is flushed before it (here a
  # forked child's, with --follow-fork, which execs true after its work).
  "$CLI" run --rate 1e-2 --follow-fork -o fx.ctf -- "$BIN/profiler_exec_place" forkexec > fx.out 2> fx.err
  rc=$?
  child=$(ls fx.*.ctf 2>/dev/null | head -1)
  [ $rc = 0 ] && [ -n "$child" ] && "$CLI" flamegraph "$child" | grep -q "final_work" &&
    ok "flushed before exec: the forked child's work is in $child" ||
    { fail "flush before exec (rc $rc, child trace '$child')"; cat fx.err; }
  [ -n "$child" ] && valid "flushed before exec" "$child"
  # A child of the root (not its own place) stays untraced.
  "$CLI" run --rate 1e-2 -o pc.ctf -- /bin/sh -c "$BIN/profiler_exec_place final; true" > pc.out 2> pc.err
  grep -qx "final -\?[0-9]* \[\]" pc.out && [ "$(ls pc*.ctf | wc -l)" = 1 ] &&
    ! "$CLI" flamegraph pc.ctf | grep -q "final_work" &&
    ok "a program the root runs as a child: untraced" || { fail "the root's child"; cat pc.out pc.err; }
  # Without memtrace run, the same.
  LD_PRELOAD=$PRELOAD MEMTRACE=pv.ctf MEMTRACE_RATE=1e-2 "$BIN/profiler_exec_place" execv > pv.out 2> pv.err &&
    "$CLI" flamegraph pv.ctf | grep -q "final_work" && [ ! -s pv.err ] &&
    ok "LD_PRELOAD and MEMTRACE: an exec in place is traced into MEMTRACE's file" ||
    { fail "exec in place with LD_PRELOAD"; cat pv.out pv.err; }
  # A trace without a single sample: memtrace run says how to get some.
  "$CLI" run --rate 1e-3 -o none.ctf -- /bin/true 2> none.err &&
    grep -qx "memtrace run: no allocation was sampled (one sample per 7.81 KiB allocated on average): for a short run, sample more with --every or --rate" none.err &&
    grep -qx "memtrace run: if /bin/true does its work in programs it starts, trace them with --follow-exec" none.err &&
    ok "no sample: a hint ($(sed -n 2p none.err | cut -c1-50)...)" || { fail "no-sample hint"; cat none.err; }
  "$CLI" run --every 64 -o some.ctf -- "$BIN/profiler_exec_place" final > /dev/null 2> some.err &&
    [ "$(wc -l < some.err)" = 1 ] && ok "samples: no hint" || { fail "hint with samples"; cat some.err; }
  # Under `ulimit -v` the profiler reserves at most an eighth of the limit
  # (its region and the region's metadata): a program that needs three
  # quarters of it runs as without the profiler (with 2 GiB reserved under
  # 4, it ran out of memory at its 47th block of 64 MiB).
  ( ulimit -v 4194304; "$CLI" run -o as.ctf -- "$BIN/profiler_aslimit" 3072 > as.out 2> as.err ); rc=$?
  [ $rc = 0 ] && grep -qx "48 blocks of 64 MiB" as.out &&
    ok "ulimit -v 4 GiB: the program's 3 GiB fit beside the profiler's reservation" ||
    { fail "ulimit -v (rc $rc)"; cat as.out as.err; }
  valid "under ulimit -v" as.ctf
  # MEMTRACE_PRELOAD override
  MEMTRACE_PRELOAD=/nonexistent/libx.so "$CLI" run -- /bin/true 2> p.err; rc=$?
  [ $rc = 1 ] && grep -qF "MEMTRACE_PRELOAD=/nonexistent/libx.so: not a file" p.err &&
    ok "MEMTRACE_PRELOAD naming no file: said so" || { fail "MEMTRACE_PRELOAD: $rc"; cat p.err; }
  # A trace file another run is writing (it holds the lock): refused before
  # the program runs (the profiler would run it untraced).
  # (the holder sleeps 60 s, ended once the second run is done: one that
  # ended by itself before then would make the test pass or fail by load)
  "$CLI" run -o lk.ctf -- sleep 60 2> lk1.err & lkpid=$!
  for _ in $(seq 300); do [ -s lk.ctf ] && break; sleep 0.1; done
  [ -s lk.ctf ] || fail "locked trace file: the first run wrote nothing in 30 s"
  "$CLI" run -o lk.ctf -- /bin/echo ran > lk2.out 2> lk2.err; rc=$?
  kill -TERM $lkpid; wait $lkpid
  [ $rc = 1 ] && [ ! -s lk2.out ] && grep -q "lk.ctf is being written by another process" lk2.err &&
    ok "a trace file another run holds: refused" || { fail "locked trace file: rc $rc"; cat lk2.out lk2.err; }
  "$CLI" run -o lk.ctf -- /bin/echo ran > lk3.out 2> /dev/null && grep -qx ran lk3.out &&
    ok "the same file once free: traced" || fail "the freed trace file"
  ;;

threads)
  # Threads whose first sampled allocation is made inside their own
  # pthread_getattr_np, which holds the thread's lock (Rust's start-up):
  # every allocation sampled, no hang (the sampled path once called it).
  RUNOPTS=(--rate 1)
  same_run getattr "$BIN/profiler_getattr" 16
  has_samples getattr.ctf
  # glibc's pthread_create allocates a new thread's TLS (the first one's;
  # later threads reuse its stack and TLS), called from our
  # pthread_create: that frame of ours is dropped, the program called
  # glibc's (one pthread_create frame, not two, in those backtraces).
  "$CLI" dump getattr.ctf | grep -o 'pthread_create@[^ ]*' > pc.frames
  k=$(sort -u pc.frames | wc -l); m=$(wc -l < pc.frames)
  [ "$m" -ge 1 ] && [ "$k" = 1 ] && grep -q 'pthread_create@libc' pc.frames &&
    ok "our pthread_create is not a frame ($m frames, all glibc's)" ||
    { fail "pthread_create frames: $m, of $k functions"; sort | uniq -c < pc.frames; }
  # A program that ends with the exit_group system call (as Go's runtime
  # does; no destructor runs) keeps the samples flushed before: the trace
  # on disk is at most a tenth of the run old (a second, before, lost
  # every sample of such a run of 0.4 s). One thread (flushed from the
  # sampled path) and two (by the flusher thread), at the default rate.
  for th in 1 2; do
    "$CLI" run -o rx$th.ctf -- "$BIN/profiler_rawexit" $th 400 > rx.out 2> rx.err
    n=$("$CLI" top rx$th.ctf | sed -n 2p | sed -n 's/.*(\([0-9]*\) samples).*/\1/p')
    awk -v b="$(cat rx.out)" -v n="${n:-0}" -v th=$th 'BEGIN { x = b / 8 * 1e-5;
      good = x >= 100 && n >= 0.5 * x;   # (0 before; ~90% on an idle machine)
      printf "%s ended by exit_group, %d thread(s): %d of %.0f expected samples in the trace\n",
        good ? "ok  " : "FAIL", th, n, x; exit !good }' || FAILS=$((FAILS + 1))
    valid "ended by exit_group" rx$th.ctf
  done
  # _exit while three threads allocate (and drains write): the packet being
  # written is finished first, never left cut short. Before, ~1 run in 8
  # left a truncated packet that readers skip with a warning; 40 runs.
  cut=0
  for k in $(seq 40); do
    "$CLI" run --every 256 -o ux.ctf -- "$BIN/profiler_rawexit" 3 $((6 * k)) _exit > /dev/null 2> ux.err
    "$CLI" check ux.ctf > ux.check 2>&1
    grep -q "^result: *valid$" ux.check && grep -q "^skipped packets: *0$" ux.check || cut=$((cut + 1))
  done
  [ $cut = 0 ] && ok "_exit while threads allocate: 40 traces whole" ||
    { fail "_exit while threads allocate: $cut of 40 traces with a packet cut or invalid"; cat ux.check; }
  # vfork children that call _exit: the child shares its parent's memory,
  # and the profiler's _exit must not take the session's lock there (a
  # version that did left it taken in the parent, which then hung).
  timeout 60 "$CLI" run --every 512 -o vf.ctf -- "$BIN/profiler_rawexit" 1 0 vfork > vf.out 2> vf.err; rc=$?
  [ $rc = 0 ] && grep -qx "vfork ok" vf.out && "$CLI" check vf.ctf | grep -q "allocs: *[1-9]" &&
    ok "vfork children calling _exit: the parent runs on, traced" ||
    { fail "vfork children calling _exit: rc $rc"; cat vf.err; }
  valid "vfork and _exit" vf.ctf
  RUNOPTS=(--rate 1e-3)
  same_run stress "$BIN/profiler_stress"
  # Every block is freed but stdio's buffer and glibc's own few: a collect
  # written before its alloc (threads' buffers out of order) would be lost.
  "$CLI" check stress.ctf > stress.check
  a=$(awk '/^ *allocs:/ { print $2 }' stress.check); c=$(awk '/^ *collects:/ { print $2 }' stress.check)
  [ -n "$a" ] && [ -n "$c" ] && [ $((a - c)) -ge 0 ] && [ $((a - c)) -le 8 ] &&
    ok "stress: $a allocs, $c collects" || { fail "stress: allocs $a, collects $c"; cat stress.check; }
  [ "$(ls stress*.ctf | wc -l)" = 1 ] && ok "children untraced by default" || { fail "children traced without --follow"; ls; }
  # No memory for the drains' spare stores (the shim fails every mmap of a
  # store's size, 1024 events x 48 bytes + 16384 codes x 8: session.c's
  # TB_EVENTS, TB_CODES): each buffer is written in place, still locked.
  # Nothing may be lost nor reordered.
  LD_PRELOAD="$PRELOAD:$BIN/libprofiler_mmapfail.so" MEMTRACE="$T/held.ctf" MEMTRACE_RATE=1e-3 \
    MT_TEST_FAIL_MMAP=180224 "$BIN/profiler_stress" > held.out 2> held.err
  cmp -s held.out stress.plain && ok "no spare stores: same output" || fail "no spare stores: output differs"
  grep -q "mmapfail: [1-9][0-9]* mmaps of 180224 bytes failed" held.err &&
    ok "no spare stores: $(grep -o '[0-9]* mmaps' held.err | head -1) refused" ||
    { fail "no spare stores: the shim refused nothing (the stores' size changed?)"; cat held.err; }
  valid "no spare stores" held.ctf
  "$CLI" check held.ctf > held.check
  a=$(awk '/^ *allocs:/ { print $2 }' held.check); c=$(awk '/^ *collects:/ { print $2 }' held.check)
  [ -n "$a" ] && [ -n "$c" ] && [ "$a" -gt 1000 ] && [ $((a - c)) -ge 0 ] && [ $((a - c)) -le 8 ] &&
    ok "no spare stores: $a allocs, $c collects" || { fail "no spare stores: allocs $a, collects $c"; cat held.check; }
  RUNOPTS=(--rate 1e-3 --follow-fork --follow-exec)
  same_run follow "$BIN/profiler_stress"
  n=0
  for f in follow.*.ctf; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    valid "child trace" "$f"
  done
  [ $n = 2 ] && ok "--follow-fork --follow-exec: 2 child traces (fork, exec)" || { fail "child traces: $n"; ls; }
  grep -q "2 more traces of child processes: $T/follow.\*.ctf" follow.err && ok "child traces announced" || { fail "announce"; cat follow.err; }
  # the forked child allocated 5000 x 2 KiB, the exec'd one 20000 blocks
  # of 100-999 bytes: both traces have samples
  for f in follow.*.ctf; do
    "$CLI" check "$f" | grep -q "allocs: *[1-9]" && ok "$f has samples" || fail "$f has no samples"
  done
  # with --follow-fork only, the forked children are traced (the one that
  # then execs has a trace without events: exec ends its session) and the
  # exec'd program is not
  RUNOPTS=(--rate 1e-3 --follow-fork)
  same_run ff "$BIN/profiler_stress"
  n=0 empty=0
  for f in ff.*.ctf; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    valid "child trace" "$f"
    "$CLI" check "$f" | grep -q "allocs: *0 " && empty=$((empty + 1))
  done
  [ $n = 2 ] && [ $empty = 1 ] && ok "--follow-fork: forked children traced, exec'd program not" || { fail "--follow-fork: $n traces, $empty empty"; ls; }
  # A program with threads that goes idle: its trace on disk catches up
  # within about a second (the flusher thread), while it still runs.
  # (looked at from when it has allocated, for 2.5 s of its 3 idle ones,
  # and only while it runs: its exit flushes the trace too)
  "$CLI" run --rate 1e-2 -o idle.ctf -- "$BIN/profiler_idle" thread > idle.out 2> idle.err &
  pid=$!
  flushed_while_running idle $pid
  wait $pid
  [ "$flushed" = yes ] && ok "idle threaded program: trace on disk up to date while it runs ($(grep allocs: idle.check | tr -s ' '))" ||
    { fail "idle threaded program: trace not flushed 2.5 s after its allocations ($flushed)"; cat idle.check; }
  valid "idle program after exit" idle.ctf
  # A single-threaded program that keeps allocating: flushed from the
  # sampled path about every second.
  "$CLI" run -o busy.ctf -- "$BIN/profiler_idle" busy > busy.out 2> busy.err &
  pid=$!
  flushed_while_running busy $pid
  wait $pid
  [ "$flushed" = yes ] && ok "busy single-threaded program: trace on disk up to date while it runs ($(grep allocs: busy.check | tr -s ' '))" ||
    { fail "busy single-threaded program: trace not flushed 2.5 s after its allocations ($flushed)"; cat busy.check; }
  valid "busy program after exit" busy.ctf
  # Threads cancelled while they allocate (a cancellation point inside a
  # drain left the session lock held: the program hung)
  RUNOPTS=(--every 256)
  same_run cancel "$BIN/profiler_cancel"
  grep -q "^300 threads cancelled$" cancel.out && ok "300 threads cancelled while allocating" ||
    { fail "cancelled threads: $(cat cancel.out)"; cat cancel.err; }
  # main calling pthread_exit while its threads allocate: the process ends
  # with the last of them (the flusher thread kept it alive for ever)
  RUNOPTS=(--every 4096)
  RUN_TIMEOUT=60 same_run mainexit "$BIN/profiler_mainexit"
  [ "$(grep -c '^worker [1-4] done$' mainexit.out)" = 4 ] && has_samples mainexit.ctf ||
    { fail "main's pthread_exit: $(cat mainexit.out)"; cat mainexit.err; }
  # 2000 short threads that each sample: what a thread kept of the region
  # for itself goes back when it ends (it grew to 110 MB with it stranded)
  RUNOPTS=(--every 512)
  same_run churn "$BIN/profiler_churn"
  p=$(awk '/VmHWM/ { print $2 }' churn.plain.err)
  q=$(grep VmHWM churn.err | awk '{ print $2 }')
  [ -n "$p" ] && [ -n "$q" ] && [ "$q" -lt $((p + 32768)) ] &&
    ok "2000 short threads: peak RSS $q KiB (plain $p KiB)" ||
    { fail "2000 short threads: peak RSS ${q:-?} KiB, plain ${p:-?} KiB"; cat churn.err; }
  ;;

signal_dlopen)
  RUNOPTS=(--rate 1e-2)
  same_run sigdl "$BIN/profiler_sigdl" "$BIN/libprofiler_plugin.so" "$BIN/libprofiler_plugin2.so"
  "$CLI" top --by line --json sigdl.ctf > top.json
  l=$(line_of "$SRC/plugin.c" "SITE_PLUGIN")
  P=$(json_site top.json "plugin_block ($SRC/plugin.c:$l)" allocated_bytes)
  within "dlopen'ed plugin (opened twice)" "${P:-0}" $((8 * 1048576)) 1e-2
  # The second library, closed before, took the first one's address (the
  # program says so, or the case is not tested): the same return addresses
  # are now other functions, and its samples must name them.
  grep -q "first one's address: yes" sigdl.err ||
    fail "the second plugin was not loaded at the first one's address: $(cat sigdl.err)"
  Q=$(json_site top.json "other_block ($SRC/plugin.c:$l)" allocated_bytes)
  within "dlopen'ed plugin 2, at plugin 1's address" "${Q:-0}" $((4 * 1048576)) 1e-2
  l=$(line_of "$SRC/sigdl.c" "SITE_HANDLER")
  H=$(json_site top.json "handler ($SRC/sigdl.c:$l)" allocated_bytes)
  # 1000 handlers ran on the normal stack (sampled); those on the alternate
  # stack are never sampled (a small stack is no place for unwinding).
  within "signal handler allocations (normal stack)" "${H:-0}" $((1000 * 8 * 4096)) 1e-2
  # The plugins' case while three threads sample: the two plugins opened and
  # closed alternately 300 times, 150 x 64 KiB each.
  RUNOPTS=(--rate 1e-2)
  same_run dlthreads "$BIN/profiler_dlthreads" "$BIN/libprofiler_plugin.so" "$BIN/libprofiler_plugin2.so"
  "$CLI" top --by line --json dlthreads.ctf > top.json
  l=$(line_of "$SRC/plugin.c" "SITE_PLUGIN")
  P=$(json_site top.json "plugin_block ($SRC/plugin.c:$l)" allocated_bytes)
  Q=$(json_site top.json "other_block ($SRC/plugin.c:$l)" allocated_bytes)
  within "plugin 1 opened 150 times beside sampling threads" "${P:-0}" $((150 * 65536)) 1e-2
  within "plugin 2 opened 150 times beside sampling threads" "${Q:-0}" $((150 * 65536)) 1e-2
  # The same plugins opened by a relative name (dlopen("./lib.so")): the
  # loader keeps that name, which libdwfl cannot open; their frames must
  # still have their functions and lines.
  cp "$BIN/libprofiler_plugin.so" "$BIN/libprofiler_plugin2.so" .
  same_run dlrel "$BIN/profiler_dlthreads" ./libprofiler_plugin.so ./libprofiler_plugin2.so
  "$CLI" top --by line --json dlrel.ctf > top.json
  P=$(json_site top.json "plugin_block ($SRC/plugin.c:$l)" allocated_bytes)
  within "plugin 1 opened by a relative name, its sites named" "${P:-0}" $((150 * 65536)) 1e-2
  # A SIGTERM handler that calls exit(): the signal often lands inside the
  # profiler (at this rate), whose exit code must not wait for the locks the
  # interrupted code holds (12 runs in 30 hung).
  hung=0 bad=0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    rm -f se.ctf
    LD_PRELOAD=$PRELOAD MEMTRACE=se.ctf MEMTRACE_RATE=0.05 "$BIN/profiler_sigexit" > se.out &
    pid=$!
    # (bounds for a loaded machine: a hang is one that lasts 30 s)
    for w in $(seq 600); do grep -q ready se.out && break; sleep 0.05; done
    grep -q ready se.out || bad=$((bad + 1))
    sleep 0.1
    kill -TERM $pid
    for w in $(seq 300); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
    if kill -0 $pid 2> /dev/null; then hung=$((hung + 1)); kill -KILL $pid; fi
    wait $pid; rc=$?
    [ $rc = 3 ] || [ $rc = 137 ] || bad=$((bad + 1))
    "$CLI" check se.ctf 2>&1 | grep -q "^result: *valid$" || bad=$((bad + 1))
  done
  [ $hung = 0 ] && [ $bad = 0 ] && ok "exit() from a SIGTERM handler, 10 runs: no hang, status 3, valid traces" ||
    fail "exit() from a SIGTERM handler: $hung of 10 runs hung, $bad bad statuses or traces"
  ;;

blocks)
  # The malloc family's contract with sampled blocks in the profiler's
  # region: every block sampled (rate 1), a mix, the default rate, and a
  # forked child that follows.
  for r in 1 0.01 1e-5; do
    RUNOPTS=(--rate $r)
    same_run "blocks_$r" "$BIN/profiler_blocks" $([ $r = 1 ] && echo --all-sampled)
    grep -q "blocks: ok" "$T/blocks_$r.out" && ok "blocks at rate $r" || { fail "blocks at rate $r"; cat "$T/blocks_$r.err"; }
  done
  has_samples "$T/blocks_1.ctf"
  RUNOPTS=(--rate 0.01 --follow-fork)
  same_run blocks_fork "$BIN/profiler_blocks"
  n=$(ls "$T"/blocks_fork.*.ctf 2>/dev/null | wc -l)
  [ "$n" = 1 ] && valid "followed child" "$T"/blocks_fork.*.ctf && has_samples "$T"/blocks_fork.*.ctf ||
    fail "blocks: $n child traces"
  # What sampled blocks cost in memory: 96 MiB of 1000- and of 6000-byte
  # blocks, every one sampled. With their metadata (72 bytes a block) and
  # their size class (1 KiB, 6 KiB) the process peaks 7-12% above plain; it
  # was 71% and 111% above when the metadata was a flat array, the ids a
  # table and the blocks powers of two.
  RUNOPTS=(--rate 1)
  for size in 1000 6000; do
    same_run "footprint_$size" "$BIN/profiler_footprint" $size
    p=$(awk '/VmHWM/ { print $2 }' "$T/footprint_$size.plain.err")
    q=$(awk '/VmHWM/ { print $2 }' "$T/footprint_$size.err")
    [ -n "$p" ] && [ -n "$q" ] && [ "$q" -lt $((p + p / 8 + 16384)) ] &&
      ok "96 MiB of sampled $size-byte blocks: peak RSS $q KiB (plain $p KiB)" ||
      { fail "96 MiB of sampled $size-byte blocks: peak RSS ${q:-?} KiB, plain ${p:-?} KiB"; cat "$T/footprint_$size.err"; }
  done
  ;;
api)
  "$BIN/profiler_api" api.ctf api2.ctf api3.ctf > api.out 2> api.err; rc=$?
  [ $rc = 0 ] && grep -q "api: ok" api.out && ok "in-process API calls" || { fail "api program: rc $rc"; cat api.out api.err; }
  valid api api.ctf
  valid api2 api2.ctf
  valid api3 api3.ctf
  # rate 1: 64 external and 64 malloc'd one-byte blocks, every eighth sampled
  "$CLI" check api3.ctf > api3.check
  a=$(awk '/^ *allocs:/ { print $2 }' api3.check)
  [ "${a:-0}" = 16 ] && ok "rate 1: 16 of 128 one-byte allocations sampled" ||
    { fail "rate 1: $a of 128 one-byte allocations sampled, not 16"; cat api3.check; }
  # the second session: ~100 allocs, ~50 collects; the first session's
  # blocks freed meanwhile are no objects of this trace
  "$CLI" check api2.ctf > api2.check
  a=$(awk '/^ *allocs:/ { print $2 }' api2.check); c=$(awk '/^ *collects:/ { print $2 }' api2.check)
  [ "${a:-0}" -ge 90 ] && [ "${a:-0}" -le 100 ] && [ "${c:-0}" -ge 40 ] && [ "${c:-0}" -le 50 ] &&
    ok "second session: $a allocs, $c collects (the first session's blocks are not its objects)" ||
    { fail "second session: allocs $a, collects $c"; cat api2.check; }
  "$CLI" info api.ctf | grep -q "with context: api test" && ok "context from mt_profiler_start" || fail "context"
  "$CLI" top --by line --json api.ctf > top.json
  l=$(line_of "$SRC/api.c" "SITE_POOL")
  E=$(json_site top.json "pool_alloc ($SRC/api.c:$l)" allocated_bytes)
  L=$(json_site top.json "pool_alloc ($SRC/api.c:$l)" end_bytes)
  within "external allocations" "${E:-0}" $((4000 * 2500)) 1e-2
  within "external allocations live at end" "${L:-0}" $((2000 * 2500)) 1e-2
  "$CLI" top --source external --json api.ctf | grep -q '"site": "pool_alloc"' && ok "source external" || fail "source"
  ;;

cxx)
  [ -n "$CXX" ] || { fail "no C++ test program (g++ missing: scripts/install-deps.sh installs it)"; exit 1; }
  RUNOPTS=(--rate 1e-3)
  same_run cxx "$CXX"
  "$CLI" dump cxx.ctf > dump.txt
  # operator new's frames are dropped (the site of `new T` is its caller);
  # libstdc++'s frames are its ELF symbols, demangled
  grep -q alloc dump.txt && ! grep -qE "_Zn[wa]m|operator new" dump.txt &&
    ok "no operator new frame in backtraces" ||
    { fail "operator new frames kept"; grep -m2 -E "_Zn[wa]m|operator new" dump.txt; }
  grep -qF "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_" dump.txt &&
    grep -q "basic_string.*::_M_[a-z]*(.*)@libstdc++" dump.txt && ! grep -qE " _Z[A-Za-z0-9_]+@" dump.txt &&
    ok "libstdc++ frames demangled" ||
    { fail "libstdc++ frames not demangled"; grep -m2 -oE " _Z[A-Za-z0-9_]+@[^ ]*" dump.txt; }
  grep -q "main@$SRC/cxx_map.cpp:" dump.txt && grep -q "make@$SRC/cxx_map.cpp:" dump.txt &&
    ok "cxx_map.cpp frames (main, make) with file:line" || fail "no cxx_map.cpp frames"
  # C++ and Rust symbols (legacy and v0 manglings) demangled in a C program
  # without debug information, which has no libstdc++.
  RUNOPTS=(--every 1k)
  same_run mangled "$BIN/profiler_mangled"
  "$CLI" top mangled.ctf > mangled.top
  grep -qF "ns::Klass::make(unsigned long)" mangled.top && grep -qE "  mycrate::build$" mangled.top &&
    grep -qE "  mycrate::sub::work$" mangled.top && ! grep -qE "_Z|_R" mangled.top &&
    ok "C++ and Rust symbols demangled, a Rust legacy symbol's hash dropped" ||
    { fail "demangling"; cat mangled.top; }
  ;;

fds)
  # A program that dup2s its file onto fds 3-9 (a shell's `exec 3>f`): the
  # profiler's descriptors are elsewhere, so its files hold what it wrote
  # and the trace is whole.
  RUNOPTS=(--every 256)
  same_run fds "$BIN/profiler_fds"
  grep -q "a.txt: as written" fds.out && ! grep -v "^memtrace run: trace written" fds.err | grep -q . &&
    ok "fds 3-9 taken by the program: its file as written, nothing on stderr" ||
    { fail "fds 3-9 taken by the program"; cat fds.out fds.err; }
  has_samples fds.ctf
  # Then every descriptor from 3 up closed (closefrom), the trace's too, and
  # a file of the program's dup2'ed onto every number: nothing written into
  # that file, the trace valid up to there, and memtrace run says why the
  # profiler stopped and that the trace holds the events until then.
  same_run fdsclose "$BIN/profiler_fds" closeall
  grep -q "b.txt: as written" fdsclose.out && grep -q "a.txt: as written" fdsclose.out &&
    grep -q "c.txt: as written (0 bytes)" fdsclose.out &&
    grep -q "^memtrace run: the program closed or replaced the trace's file descriptor [0-9]* ($T/fdsclose.ctf); tracing stopped$" fdsclose.err &&
    [ "$(grep -c "^memtrace" fdsclose.err)" = 2 ] &&
    ok "all fds closed by the program: its files as written, why tracing stopped" ||
    { fail "all fds closed by the program"; cat fdsclose.out fdsclose.err; }
  # Then 0-2 as well, the program's file opened on every number: the
  # profiler's message must not go into that file through descriptor 2
  # (profiler_fds exits 3 if its file is not empty).
  # Without memtrace run, which is told why the profiler stopped and says
  # it on its own stderr, the profiler's message would go to descriptor 2.
  same_run fdsstd "$BIN/profiler_fds" closestd
  [ -f d.txt ] && [ ! -s d.txt ] && ok "all fds, 0-2 too, closed by the program: its file holds nothing" ||
    { fail "the program's file on fd 2: $(head -c 200 d.txt)"; }
  LD_PRELOAD=$PRELOAD MEMTRACE=$T/fdsstd2.ctf MEMTRACE_RATE=0.03125 "$BIN/profiler_fds" closestd; rc=$?
  [ $rc = 0 ] && [ ! -s d.txt ] && ok "the same preloaded without memtrace run: its file holds nothing" ||
    { fail "preloaded, the program's file on fd 2 (rc $rc): $(head -c 200 d.txt)"; }
  # Loaded but not tracing (MEMTRACE unset, or its file cannot be opened):
  # not one descriptor of the program's taken (libunwind's pipe was open)
  ls /proc/self/fd > fds.plain
  LD_PRELOAD=$PRELOAD ls /proc/self/fd > fds.unset 2> /dev/null
  LD_PRELOAD=$PRELOAD MEMTRACE=/nonexistent/x.ctf ls /proc/self/fd > fds.nofile 2> /dev/null
  cmp -s fds.plain fds.unset && cmp -s fds.plain fds.nofile &&
    ok "untraced: the same descriptors as without the library ($(tr '\n' ' ' < fds.plain))" ||
    fail "untraced: descriptors $(tr '\n' ' ' < fds.unset) / $(tr '\n' ' ' < fds.nofile), without the library $(tr '\n' ' ' < fds.plain)"
  # Under `ulimit -n 64` the profiler's descriptors (trace, pipe, ELF files:
  # those the traced ls has and the plain one has not) go to the top
  # quarter, 48-63
  bash -c "ulimit -n 64; ls /proc/self/fd" | sort > fds.lowplain
  bash -c "ulimit -n 64; LD_PRELOAD=$PRELOAD MEMTRACE=$T/low.ctf MEMTRACE_RATE=1 ls /proc/self/fd" |
    sort > fds.low
  comm -13 fds.lowplain fds.low > fds.ours
  [ "$(awk '$1 < 48 || $1 >= 64' fds.ours | wc -l)" = 0 ] && [ "$(wc -l < fds.ours)" -ge 3 ] &&
    ok "ulimit -n 64: the profiler's descriptors at 48-63 ($(tr '\n' ' ' < fds.ours))" ||
    fail "ulimit -n 64: the profiler's descriptors $(tr '\n' ' ' < fds.ours)"
  ;;

real_programs)
  RUNOPTS=(--rate 1e-4)
  # the system's programs themselves (not wrapper scripts such as pyenv's
  # shims, whose exec'd program would run untraced)
  for p in python3 perl sqlite3 gcc; do
    [ -x /usr/bin/$p ] || fail "/usr/bin/$p is not installed (scripts/install-deps.sh installs it)"
  done
  if [ -x /usr/bin/python3 ]; then
    same_run python3 /usr/bin/python3 -c '
import json, collections
d = {str(i): [i] * (i % 50) for i in range(50000)}
c = collections.Counter(len(v) for v in d.values())
s = json.dumps(d)
print(len(s), sorted(c.items())[:3])
raise SystemExit(3)'
    has_samples python3.ctf
  fi
  if [ -x /usr/bin/perl ]; then
    same_run perl /usr/bin/perl -e 'my %h; $h{$_} = "x" x ($_ % 100) for 1..100000; my $t = 0; $t += length $h{$_} for keys %h; print "$t\n";'
    has_samples perl.ctf
  fi
  if [ -x /usr/bin/sqlite3 ]; then
    { echo "create table t(id integer primary key, name text, v real);"
      echo "begin;"
      for i in $(seq 1 3000); do echo "insert into t(name, v) values('name-$i', $i.5);"; done
      echo "commit;"
      echo "create index tv on t(v);"
      for i in $(seq 1 300); do echo "select count(*), sum(v) from t where v > $((i * 10));"; done
      echo "select name from t where id % 500 = 0;"
    } > db.sql
    same_run sqlite3 /usr/bin/sqlite3 -init /dev/null -batch :memory: ".read db.sql"
    has_samples sqlite3.ctf
  fi
  if [ -x /usr/bin/gcc ]; then
    cp "$SRC/accuracy.c" "$SRC/accuracy_helper.h" .
    RUNOPTS=(--rate 1e-4 --follow-exec)
    same_run gcc /usr/bin/gcc -O2 -g -c accuracy.c -o acc.o
    n=0 cc1=0
    for f in gcc.*.ctf; do
      [ -e "$f" ] || continue
      n=$((n + 1))
      valid "gcc child" "$f"
      "$CLI" info "$f" | grep -q "^   of .*/cc1\$" && "$CLI" check "$f" | grep -q "allocs: *[1-9]" && cc1=1
    done
    [ $cc1 = 1 ] && ok "gcc --follow-exec: $n child traces, cc1's with samples" ||
      fail "gcc --follow-exec: no cc1 trace with samples among $n"
  fi
  ;;

unwind_check)
  # The fast unwinder (rules from .eh_frame, kept per return address) gives
  # the very return addresses libunwind's unw_step does: MEMTRACE_UNWIND=check
  # unwinds every sample with both and says how many differed. Threads,
  # fork and exec (stress); signal handlers and plugins closed and reopened
  # at the same address (sigdl: signal frames are left to libunwind); C++.
  # The fast one must have unwound most samples itself (but sigdl's, most of
  # which are made in signal handlers).
  unwound() {  # unwound NAME MIN_LEFT MAX_LEFT_SHARE: the check's line of the
    # process that sampled most
    local line
    line=$(grep "^memtrace: unwind check:" "$1.err" | sort -t: -k3 -n | tail -1)
    echo "$line" | awk -v n="$1" -v min="$2" -v share="$3" '{ s = $4; left = $6; d = $10;
      good = s >= 100 && d == 0 && left <= s * share && left >= min;
      printf "%s %s: %d samples, %d left to libunwind (%d to %.0f%% wanted), %d differ\n",
        good ? "ok  " : "FAIL", n, s, left, min, 100 * share, d; exit !good }' ||
      { FAILS=$((FAILS + 1)); cat "$1.err"; }
  }
  export MEMTRACE_UNWIND=check
  RUNOPTS=(--rate 1e-3)
  same_run stress "$BIN/profiler_stress"
  unwound stress 0 0.01
  RUNOPTS=(--rate 1e-2)
  same_run sigdl "$BIN/profiler_sigdl" "$BIN/libprofiler_plugin.so" "$BIN/libprofiler_plugin2.so"
  unwound sigdl 1000 1
  if [ -n "$CXX" ]; then
    RUNOPTS=(--rate 1e-2)
    same_run cxx "$CXX"
    unwound cxx 0 0.01
  fi
  # Deep stacks (1000 frames: cut at the same frame) whose every other
  # frame has a variable-length array (its CFA is the frame pointer's).
  RUNOPTS=(--rate 1)
  same_run deep "$BIN/profiler_deep" 1000 20
  unwound deep 0 0.01
  unset MEMTRACE_UNWIND
  ;;

*) echo "unknown case $CASE"; exit 2 ;;
esac

if [ $FAILS -ne 0 ]; then
  echo "$FAILS check(s) failed"
  exit 1
fi
echo "all $CASE checks passed"
