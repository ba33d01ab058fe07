#!/usr/bin/env bash
# `memtrace pprof` tests with the real `go tool pprof`: on the gen_known
# trace (exact integers: see gen_known.c) -top lists each site with its
# bytes and objects, allocated and in use, -traces shows the inline chain
# innermost first; filters (--hide, --live-at TIME, --source); on a corpus
# trace the sum of -raw's values equals `memtrace top --json`'s totals (to
# the rounding of one unit per stack); usage errors (exit 2), bad traces and
# unwritable output (exit 1).
#   pprof_test.sh CLI GEN_KNOWN CORPUS_DIR
set -u
export LC_ALL=C
CLI=$1 GEN=$2 CORPUS=${MEMTRACE_CORPUS:-$3}
T=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-pprof.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
# go keeps a cache and pprof a profile directory under HOME
export HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T GOFLAGS=-mod=mod GOTOOLCHAIN=local
FAILS=0
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
command -v go >/dev/null || { echo "FAIL go (Debian golang-go) is not installed"; exit 1; }
"$GEN" "$T/k.ctf" || { echo "cannot write the known trace"; exit 1; }

expect() {  # expect RC DESCRIPTION ARGS...
  local want=$1 what=$2; shift 2
  "$CLI" "$@" > "$T/out" 2> "$T/err"
  local rc=$?
  [ $rc -eq "$want" ] || { fail "$what: memtrace $* exited $rc, expected $want"; cat "$T/err"; return 1; }
  echo "ok   $what"
}
pprof() {  # pprof ARGS... -> $T/pp
  go tool pprof "$@" > "$T/pp" 2> "$T/pperr" || { fail "go tool pprof $* failed"; cat "$T/pperr"; }
}
row() {  # row DESCRIPTION FLAT NAME: a -top line with that flat value and name
  grep -qE "^ *$2 +[0-9.]+% +[0-9.]+% +[0-9.A-Za-z]+ +[0-9.]+% +$3\$" "$T/pp" ||
    { fail "$1: no '$2 ... $3' row"; cat "$T/pp"; return; }
  echo "ok   $1"
}

expect 0 "write profile" pprof "$T/k.ctf" -o "$T/k.pb.gz"
gzip -t "$T/k.pb.gz" || fail "output is not gzip"
pprof -top -sample_index=alloc_space "$T/k.pb.gz"
row "alloc_space grow" 3200B grow
row "alloc_space make_buffer" 384B make_buffer
row "alloc_space new_node" 320B new_node
grep -q "Total samples = 3904B" "$T/pp" || fail "alloc_space total"
pprof -top -sample_index=alloc_objects "$T/k.pb.gz"
row "alloc_objects new_node" 10 new_node
row "alloc_objects make_buffer" 3 make_buffer
row "alloc_objects grow" 1 grow
pprof -top "$T/k.pb.gz"          # default: inuse_space
grep -q "Type: inuse_space" "$T/pp" || fail "default sample type is not inuse_space"
row "inuse_space make_buffer" 128B make_buffer
row "inuse_space new_node" 128B new_node
grep -qE " grow$" "$T/pp" && ! grep -qE "^ +0 .* grow$" "$T/pp" && fail "grow is in use at the end"
pprof -top -sample_index=inuse_objects "$T/k.pb.gz"
row "inuse_objects new_node" 4 new_node
row "inuse_objects make_buffer" 1 make_buffer
# inline chain: parse (inlined, innermost) above load, in one location
pprof -traces -sample_index=alloc_space "$T/k.pb.gz"
tr -s ' ' < "$T/pp" | grep -A4 '^ 384B make_buffer' | tr '\n' '|' > "$T/tr"
grep -qF "384B make_buffer| parse (inline)| load| main|" "$T/tr" ||
  { fail "make_buffer's trace is not make_buffer, parse (inline), load, main"; cat "$T/pp"; }
pprof -raw "$T/k.pb.gz"
grep -qF "Period: 32" "$T/pp" || fail "period is not 32 bytes"
grep -qF "PeriodType: space bytes" "$T/pp" || fail "period type"
grep -qF "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes" "$T/pp" ||
  fail "sample types"
echo "ok   inline chain, period, sample types"

# filters: --hide charges new_node's bytes to build_tree
expect 0 "--hide" pprof --hide new_node "$T/k.ctf" -o "$T/h.pb.gz"
pprof -top -sample_index=alloc_space "$T/h.pb.gz"
row "hidden frame's caller" 320B build_tree
grep -q "new_node" "$T/pp" && fail "--hide: new_node still listed"
# --live-at 150 us: the table is in use then, with the buffers and nodes
expect 0 "--live-at time" pprof --live-at 0.00015 "$T/k.ctf" -o "$T/t.pb.gz"
pprof -top "$T/t.pb.gz"
row "in use at 150 us: grow" 3200B grow
row "in use at 150 us: make_buffer" 384B make_buffer
pprof -top -sample_index=alloc_space "$T/t.pb.gz"
grep -q "Total samples = 3904B" "$T/pp" || fail "--live-at must not filter alloc_space"
expect 0 "--source" pprof --source minor "$T/k.ctf" -o "$T/m.pb.gz"
pprof -top -sample_index=alloc_space "$T/m.pb.gz"
grep -q "Total samples = 320B" "$T/pp" || { fail "--source minor: total"; cat "$T/pp"; }
expect 0 "standard output" pprof "$T/k.ctf" -o -
cmp -s "$T/out" "$T/k.pb.gz" || fail "-o - differs from the file"

# corpus: -raw's sums equal memtrace top's totals
TR=$CORPUS/traces/real-ocamlopt-1e-5.ctf
if [ -f "$TR" ]; then
  for la in "" "--live-at peak"; do
    # shellcheck disable=SC2086
    expect 0 "corpus $la" pprof $la "$TR" -o "$T/c.pb.gz" || continue
    pprof -raw "$T/c.pb.gz"
    awk '/^Samples:/ {s = 1; next} /^Locations/ {s = 0}
         s && /:/ {n++; a += $2; u += $4} END {printf "%d %.0f %.0f\n", n, a, u}' "$T/pp" > "$T/sums"
    read -r nst asum usum < "$T/sums"
    # top without --live-at: its total allocated and live at peak / at end
    "$CLI" top --json "$TR" > "$T/top" || fail "top failed"
    key=end_bytes; [ -n "$la" ] && key=peak_bytes
    talloc=$(grep -o '"total": {.*' "$T/top" | grep -o '"allocated_bytes": [0-9.e+]*' | grep -o '[0-9.e+]*$')
    tuse=$(grep -o '"total": {.*' "$T/top" | grep -o "\"$key\": [0-9.e+]*" | grep -o '[0-9.e+]*$')
    awk -v a="$asum" -v b="$talloc" -v u="$usum" -v v="$tuse" -v n="$nst" \
      'BEGIN { d = a - b; e = u - v; if (d < 0) d = -d; if (e < 0) e = -e;
               exit !(b > 0 && v > 0 && n > 0 && d <= n / 2 + 1 && e <= n / 2 + 1) }' ||
      { fail "corpus $la: pprof alloc $asum / inuse $usum vs top $talloc / $tuse ($nst stacks)"; continue; }
    echo "ok   corpus $la: alloc $asum ~ top $talloc, inuse $usum ~ top $key $tuse ($nst stacks)"
  done
  # one sample per distinct list of locations: stacks that differ only in
  # codes without location (ref-test-ocamlopt) or in hidden frames were
  # written as several samples with the same list
  for args in "$CORPUS/traces/ref-test-ocamlopt.ctf" "--hide _ $CORPUS/traces/real-fork.ctf"; do
    # shellcheck disable=SC2086
    expect 0 "pprof $args" pprof $args -o "$T/d.pb.gz" || continue
    # (read from the protobuf itself: go tool pprof merges such samples)
    dups=$(python3 - "$T/d.pb.gz" <<'PY'
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, t = key >> 3, key & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 1: v = b[i:i + 8]; i += 8
        else: v = b[i:i + 4]; i += 4
        yield f, t, v
lists = []
for f, t, v in fields(gzip.open(sys.argv[1]).read()):
    if f == 2:                          # Sample
        ids = []
        for g, u, w in fields(v):
            if g == 1 and u == 2:       # location_id, packed
                j = 0
                while j < len(w):
                    x, j = varint(w, j); ids.append(x)
            elif g == 1:
                ids.append(w)
        lists.append(tuple(ids))
print(len(lists) - len(set(lists)))
PY
)
    [ "$dups" = 0 ] && echo "ok   pprof $args: no two samples share a location list" ||
      fail "pprof $args: $dups location lists in several samples"
  done
  expect 1 "malformed trace" pprof "$CORPUS/malformed/bad-bt-flip-bucket.ctf" -o "$T/x.pb.gz"
  grep -q "memtrace pprof: " "$T/err" || fail "no message for a malformed trace"
else
  fail "corpus trace $TR missing"
fi

expect 2 "no TRACE" pprof -o "$T/x.pb.gz"
expect 2 "no -o" pprof "$T/k.ctf"
expect 2 "unknown option" pprof --bogus "$T/k.ctf" -o "$T/x.pb.gz"
expect 2 "two traces" pprof "$T/k.ctf" "$T/k.ctf" -o "$T/x.pb.gz"
expect 2 "bad filter" pprof --live-at soon "$T/k.ctf" -o "$T/x.pb.gz"
expect 2 "peak from stdin" pprof --live-at peak - -o "$T/x.pb.gz"
expect 1 "missing file" pprof "$T/none.ctf" -o "$T/x.pb.gz"
grep -qF "$T/none.ctf" "$T/err" || fail "missing file not named"
expect 1 "unwritable output" pprof "$T/k.ctf" -o "$T/no/such/dir.pb.gz"
grep -qF "$T/no/such/dir.pb.gz" "$T/err" || fail "unwritable output not named"
if [ -w /dev/full ]; then
  expect 1 "full disk" pprof "$T/k.ctf" -o /dev/full
fi
expect 0 "--help" pprof --help
for needle in "Usage: memtrace pprof" "inuse_space" "--live-at" "--hide FUNC" "Exit status"; do
  grep -qF -- "$needle" "$T/out" || fail "--help lacks '$needle'"
done
[ $FAILS -eq 0 ] && echo "all pprof tests passed" || { echo "$FAILS failure(s)"; exit 1; }
