# stats.py - used by check_test.sh (mode valid): the counts of `memtrace check
# --json` equal the reference Reader's (NAME.stats.txt, when given) and those
# of the text summary, and its file_size is the file's; prints each
# disagreement, exits 1 if there is any.
#   python3 stats.py check.json check.txt [NAME.stats.txt]
import json, os, re, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
e, c, b = j["events"], j["location_codes"], j["backtraces"]
ours = {
    "reader.allocs": e["allocs"], "reader.promotes": e["promotes"],
    "reader.collects": e["collects"], "reader.allocs_minor": e["allocs_minor"],
    "reader.allocs_major": e["allocs_major"], "reader.allocs_external": e["allocs_external"],
    "reader.distinct_codes": c["distinct"], "reader.codes_without_location": c["without_location"],
    "reader.backtrace_max": b["longest"],
}
bad = []
if len(sys.argv) > 3:
    ref = {}
    for line in open(sys.argv[3]):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            ref[k] = v
    for k, v in ours.items():
        if k in ref and str(v) != ref[k]:
            bad.append("%s: check says %s, reference Reader %s" % (k, v, ref[k]))
        if k not in ref and k in ("reader.allocs", "reader.promotes", "reader.collects"):
            bad.append("%s missing from the stats file" % k)
want = [
    r"^events: +%d$" % e["total"],
    r"^  allocs: +%d \(minor %d, major %d, external %d\)$" % (e["allocs"], e["allocs_minor"], e["allocs_major"], e["allocs_external"]),
    r"^  promotes: +%d$" % e["promotes"],
    r"^  collects: +%d$" % e["collects"],
    r"^location codes: +%d distinct, %d without location$" % (c["distinct"], c["without_location"]),
    r"^backtraces: +longest %d frames" % b["longest"],
    r"^result: +valid",
]
for w in want:
    if not re.search(w, text, re.M):
        bad.append("text summary lacks /%s/" % w)
# the file's size, under the name info --json gives it, and in the text
if j["file_size"] != os.path.getsize(j["file"]):
    bad.append("file_size %r, the file has %d bytes" % (j["file_size"], os.path.getsize(j["file"])))
if not re.search(r"^file: .* \(%d bytes\)$" % os.path.getsize(j["file"]), text, re.M):
    bad.append("text summary lacks the file's size")
if j["valid"] is not True or j["error"] is not None:
    bad.append("JSON says not valid")
if (j["warnings"]["total"] > 0) != bool(re.search(r"^warnings:$", text, re.M)):
    bad.append("warnings: section and JSON warnings.total disagree")
for x in bad:
    print("  " + x)
sys.exit(1 if bad else 0)
