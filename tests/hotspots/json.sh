#!/usr/bin/env bash
# hotspots --json: parses, and names the same hot functions in the same order,
# with the same percentages, callers and site lines as the text report, for
# every corpus trace the reference tool reports on.
# Usage: json.sh --cli MEMTRACE --default-corpus DIR
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup hs-json
require_corpus
for t in "$TR"/*.ctf; do
  name=$(basename "$t" .ctf)
  [ -f "$TR/$name.hotspots.exit" ] && continue
  if python3 - "$CLI" "$t" <<'PY'
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
  then pass "$name"; else fail "$name: --json and the text report disagree (see above)"; fi
done
finish
