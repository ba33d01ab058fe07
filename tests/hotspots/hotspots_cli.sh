#!/usr/bin/env bash
# `memtrace hotspots` command line: usage errors exit 2 with a message on
# stderr, --help exits 0 with the full help on stdout, an unreadable trace
# exits 1.   hotspots_cli.sh --cli MEMTRACE
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup hs-cli

expect 2 "no TRACE" hotspots && { [ -s "$T/err" ] || fail "no TRACE: no message on stderr"; }
expect 2 "unknown option" hotspots --bogus x.ctf
expect 2 "two traces" hotspots a.ctf b.ctf
expect 1 "missing file" hotspots "$T/does-not-exist.ctf"
help_lists hotspots "Usage: memtrace hotspots" "Output:" "Options:" "Exit status" "empty backtrace"
expect 0 "-h" hotspots -h && has "-h text" "Usage: memtrace hotspots"
expect 0 "help hotspots" help hotspots
finish
