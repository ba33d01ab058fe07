#!/usr/bin/env bash
# `memtrace live` tests: exact timeline, sparkline and peak on the synthetic
# trace of tests/analysis/synth.h, filters, standard input, usage errors
# (exit 2), --help, bad traces (exit 1).
#   live_test.sh --cli MEMTRACE --gen GEN_SYNTH
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup live GEN
"$GEN" "$T/s.ctf" || die "cannot write synthetic trace"

expect 0 "text" live --points 10 "$T/s.ctf"
has "row 100us" "    0.000100 s       864 B        16 B       848 B"
has "row 300us" "    0.000300 s       912 B        48 B       864 B"
has "row 600us" "    0.000600 s    1.05 KiB        96 B       976 B"
has "row 900us" "    0.000900 s    1.05 KiB       256 B       816 B"
has "row end" "    0.001000 s    1.11 KiB       320 B       816 B"
has "sparkline" "Live: ▇▇▇▇▇███▇▇"
has "peak" "Peak: 976 B live at 0.000600 s (61 samples)"
[ "$(grep -c '^ *[0-9.]* s  ' "$T/out")" = 10 ] || fail "10 rows expected"

expect 0 "default points" live "$T/s.ctf"
[ "$(grep -c '^ *[0-9.]* s  ' "$T/out")" = 20 ] || fail "20 rows expected"

expect 0 "json" live --points 3 --json "$T/s.ctf"
has "json peak" '"peak_time_s": 0.000600,'
has "json peak bytes" '"peak_bytes": 976,'
has "json point" '{"time_s": 0.000666, "allocated_bytes": 1072, "collected_bytes": 96, "live_bytes": 976}'
has "json last" '{"time_s": 0.001000, "allocated_bytes": 1136, "collected_bytes": 320, "live_bytes": 816}'

expect 0 "ascii + filter" live --ascii --points 4 --source minor "$T/s.ctf"
# minor: obj0 (0-100, 1), obj4 (250-, 1), obj6 (950-1000, 4)
has "minor row" "    0.000250 s        32 B        16 B        16 B"
has "minor end" "    0.001000 s        96 B        80 B        16 B"
has "minor peak" "Peak: 80 B live at 0.000950 s (5 samples)"
has "ascii line" "Live: @@@@"

expect 0 "live-at peak" live --live-at peak --points 4 --json "$T/s.ctf"
has "peak objects" '{"time_s": 0.001000, "allocated_bytes": 976, "collected_bytes": 160, "live_bytes": 816}'

# The last row is the trace's end, with every event: on traces longer than
# 65 ms (bins wider than 1 us) it used to be rounded down to the last whole
# bin, and left out the events of the end's bin (synth-time ends with
# thousands of collects at its last microsecond; the last allocation of
# ref-test-ocamlopt is at its end). It must agree with top's live at end.
require_corpus
for tr in synth-time ref-test-ocamlopt; do
  "$CLI" top --json "$TR/$tr.ctf" > "$T/top.json" 2> "$T/err" || fail "$tr: top --json"
  "$CLI" live --json --points 3 "$TR/$tr.ctf" > "$T/live.json" 2> "$T/err" || fail "$tr: live --json"
  reply=$(python3 - "$T/top.json" "$T/live.json" <<'PY'
import json, sys
top, live = (json.load(open(p)) for p in sys.argv[1:3])
last, tot = live["points"][-1], top["total"]
ok = (abs(last["live_bytes"] - tot["end_bytes"]) < 0.5 and
      abs(last["allocated_bytes"] - tot["allocated_bytes"]) < 0.5 and
      last["time_s"] == top["duration_s"])
print("ok" if ok else "last row %s; top: allocated %s, live at end %s, duration %s s" %
      (last, tot["allocated_bytes"], tot["end_bytes"], top["duration_s"]))
PY
)
  [ "$reply" = ok ] && pass "$tr: live's last row is top's live at end" ||
    fail "$tr: live's last row disagrees with top: $reply"
done

# The rows' times are the trace's, whatever the filter: they used to
# follow the last object the filter let in (bins narrower when it ended
# early: ref-test-ocamlopt's Ctype rows at 0.170359 s, not 0.170351 s).
"$CLI" live --points 5 "$TR/ref-test-ocamlopt.ctf" 2> "$T/err" | awk '/^ +[0-9.]+ s / {print $1}' > "$T/all.t"
"$CLI" live --points 5 --in Ctype "$TR/ref-test-ocamlopt.ctf" 2> "$T/err" | awk '/^ +[0-9.]+ s / {print $1}' > "$T/some.t"
[ "$(wc -l < "$T/all.t")" = 5 ] && cmp -s "$T/all.t" "$T/some.t" &&
  pass "filtered rows at the trace's times" ||
  { fail "filtered rows' times differ"; paste "$T/all.t" "$T/some.t"; }

"$CLI" live --points 2 --json - < "$T/s.ctf" > "$T/out" 2> "$T/err" || fail "stdin"
has "stdin" '"peak_bytes": 976,'

expect 2 "no TRACE" live
expect 2 "unknown option" live --bogus "$T/s.ctf"
expect 2 "two traces" live "$T/s.ctf" "$T/s.ctf"
expect 2 "bad --points" live --points 0 "$T/s.ctf"
expect 2 "bad filter" live --min-size lots "$T/s.ctf"
expect 2 "peak on stdin" live --live-at peak -
expect 1 "missing file" live "$T/none.ctf"
printf 'garbage' > "$T/g.ctf"
expect 1 "not a trace" live "$T/g.ctf"
grep -q "memtrace live: .*g.ctf" "$T/err" || fail "bad trace message"
help_lists live "Usage: memtrace live" "Output columns:" "--points N" "--live-at" "Exit status"
finish
