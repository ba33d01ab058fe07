#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR CC - install the build into a scratch
# prefix (and again under DESTDIR) and check what a user of the installed
# files gets: pkg-config flags that are plain absolute paths (so that
# pkg-config can drop the system's directories), the API and nothing else
# exported by both libraries, the examples built with
# them, statically and dynamically, writing a trace and reading it back, the
# profiler's in-process API through memtrace-profiler.pc, and the installed
# CLI finding its own preload library.
set -u
B=$1 SRC=$2 CC=$3
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok   $*"; }
command -v pkg-config >/dev/null || { echo "FAIL pkg-config (Debian pkgconf) is not installed"; exit 1; }

P=$T/p
cmake --install "$B" --prefix "$P" > "$T/log" 2>&1 || { cat "$T/log"; echo "FAIL cmake --install"; exit 1; }
libdir=$(sed -n 's/^libdir=//p' "$P"/lib*/pkgconfig/memtrace.pc | head -1)
[ -n "$libdir" ] && [ -f "$libdir/pkgconfig/memtrace.pc" ] || { echo "FAIL no memtrace.pc"; exit 1; }
export PKG_CONFIG_PATH=$libdir/pkgconfig
unset PKG_CONFIG_SYSTEM_INCLUDE_PATH PKG_CONFIG_SYSTEM_LIBRARY_PATH

flags=$(pkg-config --cflags --libs memtrace | sed 's/ *$//')   # (pkgconf ends with a space)
[ "$flags" = "-I$P/include -L$libdir -lmemtrace" ] && ok "flags: $flags" ||
  fail "pkg-config flags '$flags', expected '-I$P/include -L$libdir -lmemtrace'"
# as if installed to a system prefix: its directories leave the flags
flags=$(PKG_CONFIG_SYSTEM_INCLUDE_PATH=$P/include PKG_CONFIG_SYSTEM_LIBRARY_PATH=$libdir \
        pkg-config --cflags --libs memtrace | sed 's/ *$//')
[ "$flags" = "-lmemtrace" ] && ok "system directories left out" ||
  fail "with the prefix as a system directory: '$flags', expected '-lmemtrace'"

# the examples, linked statically, then dynamically
for how in static dynamic; do
  if [ $how = static ]; then l="$libdir/libmemtrace.a"; else l=$(pkg-config --libs memtrace); fi
  for ex in example_write example_read; do
    # shellcheck disable=SC2046,SC2086
    "$CC" -std=c11 $(pkg-config --cflags memtrace) "$SRC/examples/$ex.c" $l -o "$T/$ex.$how" \
      2> "$T/cc.err" || { fail "$how build of $ex"; cat "$T/cc.err"; }
  done
  LD_LIBRARY_PATH=$libdir "$T/example_write.$how" "$T/w.$how.ctf" > "$T/w.out" 2>&1 ||
    { fail "$how example_write"; cat "$T/w.out"; }
  LD_LIBRARY_PATH=$libdir "$T/example_read.$how" "$T/w.$how.ctf" > "$T/r.$how.out" 2>&1 &&
    [ -s "$T/r.$how.out" ] && ok "$how: examples write and read a trace" ||
    { fail "$how example_read"; cat "$T/r.$how.out"; }
done
if [ $how = dynamic ] && ! LD_LIBRARY_PATH=$libdir ldd "$T/example_read.dynamic" | grep -q "$libdir/libmemtrace.so"; then
  fail "the dynamic example does not use the installed libmemtrace.so"
fi
cmp -s "$T/w.static.ctf" "$T/w.dynamic.ctf" || fail "static and dynamic examples wrote different traces"
cmp -s "$T/r.static.out" "$T/r.dynamic.out" || fail "static and dynamic examples read differently"

# the archive exports what the shared library does (the API), nothing else
nm -g --defined-only "$libdir/libmemtrace.a" | awk 'NF == 3 {print $3}' | sort > "$T/a.syms"
nm -D --defined-only "$libdir/libmemtrace.so" | awk '{print $3}' | sort > "$T/so.syms"
if [ -s "$T/a.syms" ] && cmp -s "$T/a.syms" "$T/so.syms" &&
   ! grep -v "^mt_" "$T/a.syms" | grep -q .; then
  ok "libmemtrace.a and .so export the same $(wc -l < "$T/a.syms") mt_ symbols"
else
  fail "exports differ (archive | shared library):"; diff "$T/a.syms" "$T/so.syms" | head
fi
while read -r sym; do
  grep -q "\b$sym(" "$P/include/memtrace/memtrace.h" || fail "$sym is exported but not in memtrace.h"
done < "$T/so.syms"

# the profiler's API through memtrace-profiler.pc
cat > "$T/prof.c" <<'C'
#include <stdio.h>
#include <memtrace/profiler.h>
int main(void) { printf("active %d\n", mt_profiler_active()); return 0; }
C
# shellcheck disable=SC2046
if "$CC" "$T/prof.c" $(pkg-config --cflags --libs memtrace-profiler) -o "$T/prof" 2> "$T/cc.err" &&
   LD_LIBRARY_PATH=$libdir "$T/prof" | grep -q "^active 0$"; then
  ok "memtrace-profiler.pc"
else
  fail "a program using memtrace-profiler.pc"; cat "$T/cc.err"
fi
# versioned like libmemtrace: the program records the soname
if readelf -d "$T/prof" | grep -q "NEEDED.*\[libmemtrace_preload\.so\.[0-9]*\]"; then
  ok "a program using the profiler's API needs libmemtrace_preload.so.N"
else
  fail "the program's NEEDED entry for the profiler"; readelf -d "$T/prof" | grep NEEDED
fi

# the installed CLI: runs, and profiles with the installed preload library
"$P/bin/memtrace" --version | grep -q "^memtrace " || fail "installed memtrace --version"
cat > "$T/m.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "libmemtrace_preload"))
            fputs(strchr(line, '/'), stdout);
    for (int i = 0; i < 1000; i++)
        free(malloc(4096));
    return 0;
}
C
"$CC" "$T/m.c" -o "$T/m" || fail "build the profiled program"
"$P/bin/memtrace" run -o "$T/m.ctf" -- "$T/m" > "$T/m.out" 2> "$T/m.err"
if grep -q "^$libdir/libmemtrace_preload\.so\.[0-9.]*$" "$T/m.out" && "$P/bin/memtrace" check "$T/m.ctf" > /dev/null; then
  ok "installed memtrace run uses the installed preload library"
else
  fail "installed memtrace run"; cat "$T/m.out" "$T/m.err"
fi

# DESTDIR: the files go under it, the .pc names the prefix alone
DESTDIR=$T/dd cmake --install "$B" --prefix /opt/memtrace-test > "$T/log" 2>&1 || fail "DESTDIR install"
pc=$(ls "$T"/dd/opt/memtrace-test/lib*/pkgconfig/memtrace.pc 2>/dev/null | head -1)
if [ -n "$pc" ] && grep -qx "prefix=/opt/memtrace-test" "$pc" && ! grep -q "$T" "$pc"; then
  ok "DESTDIR install"
else
  fail "DESTDIR install: ${pc:-no .pc}"; [ -n "$pc" ] && cat "$pc"
fi

[ $FAILS -eq 0 ] && echo "all install checks passed" || echo "$FAILS install checks FAILED"
[ $FAILS -eq 0 ]
