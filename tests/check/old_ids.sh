#!/usr/bin/env bash
# old_ids.sh GEN CLI - `memtrace check` on gen_old_ids's trace: warnings
# about objects allocated 200 000 allocations before (older than the ring
# of recent ids) are counted exactly (see gen_old_ids.c).
set -eu
gen=$1 cli=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp/old.ctf"
rc=0; "$cli" check --json "$tmp/old.ctf" > "$tmp/json" || rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: check exited $rc"; exit 1; }
python3 - "$tmp/json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
w, e = j["warnings"], j["events"]
got = {k: w[k]["count"] for k in w if k != "total"}
want = {"collect_never_allocated": 0, "collect_not_live": 1, "promote_never_allocated": 0,
        "promote_not_live": 1, "promote_not_minor": 2, "negative_length": 0,
        "nsamples_not_positive": 0}
ev = (e["allocs"], e["promotes"], e["collects"])
ok = got == want and w["total"] == 4 and ev == (200004, 4, 200003)
print(("ok  " if ok else "FAIL") + " warnings %s, events %s" % (got, ev))
sys.exit(0 if ok else 1)
PY
