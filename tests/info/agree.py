# agree.py - used by info_test.sh (mode json): recomputes each number of the
# text report of `memtrace info` from its --json output, with the reference's
# formatter, and compares with the text line by line; prints each
# disagreement, exits 1 if there is any.
#   python3 agree.py info.json info.txt
import json, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8", errors="surrogateescape").read().split("\n")
def B(n):
    if n is None:
        return None
    if n < 1000.0:
        return "%3.0f B" % n
    for lim, div, unit in ((1000.0 * 1024, 1024.0, "kB"), (1000.0 * 1024**2, 1024.0**2, "MB"),
                           (1000.0 * 1024**3, 1024.0**3, "GB"), (float("inf"), 1024.0**4, "TB")):
        if n < lim or unit == "TB":
            d = n
            for _ in range({"kB": 1, "MB": 2, "GB": 3, "TB": 4}[unit]):
                d /= 1024.0
            return "%3.*f %s" % (1 if d < 10 else 0, d, unit)
def P(v, fmt):
    return None if v is None else fmt % v
s = j["statistics"]
first = "Trace file %s (%s)" % (j["file"], B(float(j["file_size"])))
exp = {
    0: first,
    1: "   of %s" % j["executable_name"],
    3: "   on host %s (%d-bit), pid %d, sample rate %.1e" % (j["host_name"], j["word_size"], j["pid"], j["sample_rate"]),
    4: "   with OCaml GC params %s" % j["ocaml_runtime_params"],
}
stats = text.index("Trace statistics:")
ln = {
    stats + 1: ("   Minor: %s/s allocations, %s%% promoted", [B(s["minor_alloc_bytes_per_s"]), P(s["promoted_percent"], "%.1f")]),
    stats + 2: ("   Major: %s/s allocations (%s/s direct), %s/s collections",
                [B(s["major_alloc_bytes_per_s"]), B(s["major_direct_bytes_per_s"]), B(s["major_collect_bytes_per_s"])]),
    stats + 3: ("   Sizes (by word): %s%% <= 4w, %s%% <= 16w, %s%% <= 256w. Max: %s",
                [P(s["le_4w_percent"], "%.0f"), P(s["le_16w_percent"], "%.0f"), P(s["le_256w_percent"], "%.0f"), B(float(s["max_bytes"]))]),
    stats + 4: ("   Runtime: %s s", [P(s["runtime_s"], "%.3f")]),
}
bad = []
for i, e in exp.items():
    if text[i] != e:
        bad.append("line %d: text %r, from JSON %r" % (i + 1, text[i], e))
for i, (fmt, vals) in ln.items():
    if any(v is None for v in vals):      # inf/nan: JSON null, text inf/nan
        if "nan" not in text[i] and "inf" not in text[i]:
            bad.append("line %d: JSON has null but text has no inf/nan: %r" % (i + 1, text[i]))
        continue
    e = fmt % tuple(vals)
    if text[i] != e:
        bad.append("line %d: text %r, from JSON %r" % (i + 1, text[i], e))
# raw counts against the byte estimates
rate, wb = j["sample_rate"], j["word_size"] // 8
for k, v in s["samples"].items():
    b = s["bytes"][k]
    if b is not None and b != v / rate * wb:
        bad.append("bytes.%s = %r, samples.%s / rate * %d = %r" % (k, b, k, wb, v / rate * wb))
if (j["context"] is not None) != any(l.startswith("   with context: ") for l in text):
    bad.append("context presence differs")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
