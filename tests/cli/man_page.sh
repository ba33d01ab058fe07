#!/usr/bin/env bash
# man_page.sh MEMTRACE MEMTRACE.1 - the manual page made at build time
# (scripts/gen-man.sh): groff formats it without a warning, and it has a
# section for every command the tool lists, with that command's usage line.
set -u
. "$(dirname "$0")/../../scripts/commands.sh"
bin=$1 page=$2
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
[ -s "$page" ] || { echo "FAIL no manual page at $page"; exit 1; }
warn=$(groff -man -ww -z "$page" 2>&1)
[ -z "$warn" ] && echo "ok   groff -man -ww: no warning" || fail "groff warns: $warn"
text=$(MANWIDTH=100 man -l "$page" 2>/dev/null) || text=$(groff -man -Tutf8 "$page" 2>/dev/null)
n=0
for cmd in $(commands "$bin"); do
  n=$((n + 1))
  usage=$("$bin" "$cmd" --help | head -1)
  grep -qF "memtrace $cmd" <<< "$text" && grep -qF "$usage" <<< "$text" ||
    fail "no section for '$cmd' with its usage line '$usage'"
done
[ "$n" -ge 15 ] && echo "ok   $n commands, each with its section" || fail "only $n commands listed by --help"
grep -qF "MEMTRACE_RATE" <<< "$text" && grep -qF "EXIT STATUS" <<< "$text" &&
  echo "ok   environment and exit status sections" || fail "environment or exit status missing"
exit $((fails > 0))
