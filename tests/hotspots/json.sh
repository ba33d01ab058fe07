#!/usr/bin/env bash
# hotspots --json: parses, and names the same hot functions in the same order,
# with the same percentages, callers and site lines as the text report, for
# every corpus trace the reference tool reports on.
# Usage: json.sh --cli MEMTRACE --default-corpus DIR
set -u
while [ $# -gt 0 ]; do
  case $1 in
    --cli) cli=$2; shift 2 ;;
    --default-corpus) corpus=${MEMTRACE_CORPUS:-$2}; shift 2 ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
done
[ -d "$corpus/traces" ] || { echo "FAIL: reference corpus not found at $corpus"; exit 1; }
pass=0 fail=0
for t in "$corpus"/traces/*.ctf; do
  name=$(basename "$t" .ctf)
  [ -f "$corpus/traces/$name.hotspots.exit" ] && continue
  if python3 - "$cli" "$t" <<'PY'
import json, re, subprocess, sys
cli, t = sys.argv[1], sys.argv[2]
text = subprocess.run([cli, "hotspots", t], capture_output=True, text=True).stdout
data = json.loads(subprocess.run([cli, "hotspots", "--json", t], capture_output=True, text=True).stdout)
heads = re.findall(r"^.{7} \(\s*([0-9.]+)%\) at (.*) \((.*?):(\d.*)\)$", text, re.M)
vias = re.findall(r"^    .{7} via (.*) \((\d+)% of this\)$", text, re.M)
assert len(heads) == len(data["hot"]), (len(heads), len(data["hot"]))
for (pct, fn, fname, _), h in zip(heads, data["hot"]):
    assert fn == h["function"] and fname == h["file"], (fn, h["function"])
    assert "%4.1f" % h["percent"] == "%4.1f" % float(pct)
assert len(vias) == sum(len(h["callers"]) for h in data["hot"])
assert data["samples"] == int(re.search(r"(-?\d+) samples of", text).group(1))
PY
  then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
