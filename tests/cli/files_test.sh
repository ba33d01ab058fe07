#!/usr/bin/env bash
# The files and descriptors of `memtrace`: output files replaced only when
# complete (a failure or an interrupt leaves the old file, no partial one,
# no temporary file), symbolic links kept, closed standard descriptors,
# inputs that cannot be read twice, standard output that is an input, and
# messages with control characters in them. Arguments as cli_test.sh.
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup cli_files
INPUT=$CORPUS/traces/synth-basic.ctf
BIGGER=$CORPUS/traces/real-ocamlopt-1e-5.ctf
DAMAGED=$CORPUS/malformed/bad-dropped-packet.ctf
for f in "$INPUT" "$BIGGER" "$DAMAGED"; do
  [ -f "$f" ] || die "corpus trace not found: $f (set MEMTRACE_CORPUS)"
done

# fail_run MESSAGE : a FAIL, with the last run's exit status and stderr
fail_run() {
  fail "$@"
  printf '  exit status: %s\n' "$RC"
  echo "  stderr (first 10 lines):"; show_err 10
}

# no_temp DIR : no temporary file (.NAME.XXXXXX) left in DIR
no_temp() { ! ls -A "$1" | grep -q '^\.'; }

# --- a failed write leaves the old file ----------------------------------------
# (RLIMIT_FSIZE: every write past 1 KiB fails with EFBIG; SIGXFSZ ignored)
D=$T/fsize; mkdir -p "$D"
for c in copy subsample strip-names pprof speedscope report; do
  echo old > "$D/out.$c"
  case $c in
    copy|strip-names) args=("$c" "$BIGGER" "$D/out.$c") ;;
    subsample) args=("$c" --seed 1 "$BIGGER" "$D/out.$c" 1) ;;
    *) args=("$c" "$BIGGER" -o "$D/out.$c") ;;
  esac
  (trap '' XFSZ; ulimit -f 1; exec "$CLI" "${args[@]}") > "$T/out" 2> "$T/err"; RC=$?
  if [ "$RC" -eq 1 ] && grep -q "File too large" "$T/err" &&
     [ "$(cat "$D/out.$c")" = old ] && no_temp "$D"; then
    pass "$c: a failed write leaves the old file and no temporary one"
  else fail_run "$c over RLIMIT_FSIZE: expected exit 1, the old file, no temporary file"
    ls -A "$D"; fi
done

# --- an interrupt leaves the old file ------------------------------------------
# copy reads a pipe that stalls after 100 kB: the output is being written
# when SIGTERM comes.
D=$T/intr; mkdir -p "$D"; echo old > "$D/out.ctf"
{ head -c 100000 "$BIGGER"; sleep 5; } | "$CLI" copy - "$D/out.ctf" 2> "$T/err" &
# (once copy writes its temporary file: a fixed second was too short for a
# loaded machine, and a signal before then tests nothing)
for i in $(seq 3000); do no_temp "$D" || break; sleep 0.01; done
pkill -TERM -f "copy - $D/out.ctf"
wait $!; RC=$?
if [ "$RC" -eq 143 ] && [ "$(cat "$D/out.ctf")" = old ] && no_temp "$D"; then
  pass "copy killed by SIGTERM: the old file kept, no temporary file"
else fail_run "copy killed by SIGTERM: expected exit 143, the old file, no temporary file"
  ls -A "$D"; fi

# --- an output that cannot be written: said before the trace is read ----------
# (a damaged trace: read first, its error would come first and the
# output's never; a big trace would be read for nothing)
BROKEN=$CORPUS/malformed/bad-collect-delta.ctf
for c in pprof speedscope report; do
  run "$c" "$BROKEN" -o "$T/no-such-dir/out.$c"
  if [ "$RC" -eq 1 ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
     grep -qx "memtrace $c: $T/no-such-dir/out.$c: No such file or directory" "$T/err"; then
    pass "$c -o UNWRITABLE: said first, the trace not read"
  else fail_run "$c -o UNWRITABLE: expected exit 1 and only the output's error"; fi
done
# report's default name (TRACE's, with .html) taken by a directory
D=$T/dflt; mkdir -p "$D/in.html"; cp "$INPUT" "$D/in.ctf"
run report "$D/in.ctf"
if [ "$RC" -eq 1 ] && grep -qx "memtrace report: $D/in.html: Is a directory" "$T/err" &&
   grep -q "by default the report goes next to TRACE; -o FILE writes it elsewhere" "$T/err"; then
  pass "report with its default name unwritable: said, with -o as the way out"
else fail_run "report, default name a directory: expected exit 1 and the hint"; fi

# --- a symbolic link stays one; its target gets the output ---------------------
D=$T/link; mkdir -p "$D"; echo old > "$D/target"; ln -s target "$D/lnk"
run report "$INPUT" -o "$D/lnk"
if [ "$RC" -eq 0 ] && [ -L "$D/lnk" ] && grep -q "<html" "$D/target" && no_temp "$D"; then
  pass "report -o LINK: the link kept, its target replaced"
else fail_run "report -o LINK: expected exit 0, the link and the report in its target"; fi
echo old > "$D/target"
(trap '' XFSZ; ulimit -f 1; exec "$CLI" pprof "$BIGGER" -o "$D/lnk") > "$T/out" 2> "$T/err"; RC=$?
if [ "$RC" -eq 1 ] && [ -L "$D/lnk" ] && [ "$(cat "$D/target")" = old ] && no_temp "$D"; then
  pass "pprof -o LINK, a failed write: the link and its target kept"
else fail_run "pprof -o LINK over RLIMIT_FSIZE: expected exit 1, the link and the old target"; fi

# --- written in place: a name too long for a temporary one beside it ---------
D=$T/long; mkdir -p "$D"
long=$(printf 'L%.0s' $(seq 250))
run copy "$INPUT" "$D/$long"
if [ "$RC" -eq 0 ] && cmp -s "$INPUT" "$D/$long" && no_temp "$D"; then
  pass "copy to a 250-byte name: written in place"
else fail_run "copy to a 250-byte name: expected exit 0 and the copy"; fi

# --- written in place: devices ------------------------------------------------
run copy "$INPUT" /dev/null
if [ "$RC" -eq 0 ] && [ -c /dev/null ]; then pass "copy to /dev/null"
else fail_run "copy to /dev/null: expected exit 0, /dev/null kept"; fi

# --- closed standard descriptors ------------------------------------------------
# Closed stderr: the diagnostics must not land in the output file, which
# would get descriptor 2.
rm -f "$T/c.ctf"
"$CLI" copy - "$T/c.ctf" < "$DAMAGED" > /dev/null 2>&-; RC=$?
if [ "$RC" -eq 0 ] && ! grep -aq "skipping" "$T/c.ctf" &&
   "$CLI" check "$T/c.ctf" 2> /dev/null | grep -q "^result: *valid"; then
  pass "copy with stderr closed: the output is a valid trace, without the diagnostics"
else fail_run "copy with stderr closed: expected exit 0 and a valid trace"; fi
# Closed stdout: a write error, and the input is not written to (it would
# get descriptor 1).
cp "$INPUT" "$T/in.ctf"
"$CLI" copy "$T/in.ctf" - >&- 2> "$T/err"; RC=$?
if [ "$RC" -eq 1 ] && grep -q "Bad file descriptor" "$T/err" && cmp -s "$INPUT" "$T/in.ctf"; then
  pass "copy to a closed stdout: exit 1, the input intact"
else fail_run "copy to a closed stdout: expected exit 1, EBADF, the input intact"; fi
# A file written in place whose write fails (root may open /proc/version,
# whose writes fail with EIO): every exporter says the file is incomplete
# (pprof did not).
if [ -w /proc/version ]; then
  for cmd in pprof speedscope report; do
    "$CLI" $cmd "$INPUT" -o /proc/version > /dev/null 2> "$T/err"; RC=$?
    if [ "$RC" -eq 1 ] && grep -q "^memtrace $cmd: /proc/version: writing: .* (the file is incomplete)\$" "$T/err"; then
      pass "$cmd -o /proc/version: exit 1, the file said incomplete"
    else fail_run "$cmd -o /proc/version: expected exit 1 and '(the file is incomplete)'"; fi
  done
fi

# Help and version written to a full device: an error, not a success.
for args in "--help" "--version" "top --help"; do
  # shellcheck disable=SC2086
  "$CLI" $args > /dev/full 2> "$T/err"; RC=$?
  if [ "$RC" -eq 1 ] && grep -q "No space left on device" "$T/err"; then
    pass "memtrace $args > /dev/full: exit 1"
  else fail_run "memtrace $args > /dev/full: expected exit 1 and the error"; fi
done

# --- inputs read twice: not a FIFO -----------------------------------------------
mkfifo "$T/fifo"
for args in "report $T/fifo -o $T/f.html" "speedscope $T/fifo -o $T/f.json" "top $T/fifo" \
            "live --live-at peak $T/fifo" "diff $INPUT $T/fifo"; do
  # (a second open of a FIFO would wait for a writer for ever)
  # shellcheck disable=SC2086
  timeout 20 "$CLI" $args > /dev/null 2> "$T/err" < /dev/null; RC=$?
  if [ "$RC" -eq 2 ] && grep -q "cannot be a pipe or FIFO" "$T/err"; then
    pass "${args%% *} of a FIFO read twice: usage error"
  else fail_run "${args%% *} of a FIFO: expected exit 2 and why"; fi
done

# --- standard output that is an input ----------------------------------------------
cp "$INPUT" "$T/self.ctf"
for c in dump flamegraph check; do
  "$CLI" $c "$T/self.ctf" >> "$T/self.ctf" 2> "$T/err"; RC=$?
  if [ "$RC" -eq 2 ] && grep -q "standard output is" "$T/err" && cmp -s "$INPUT" "$T/self.ctf"; then
    pass "$c TRACE >> TRACE: refused, the trace intact"
  else fail_run "$c TRACE >> TRACE: expected exit 2 and the trace intact"; fi
done
"$CLI" dump - < "$T/self.ctf" >> "$T/self.ctf" 2> "$T/err"; RC=$?
if [ "$RC" -eq 2 ] && cmp -s "$INPUT" "$T/self.ctf"; then
  pass "dump - < TRACE >> TRACE: refused"
else fail_run "dump - < TRACE >> TRACE: expected exit 2"; fi

# --- arguments ------------------------------------------------------------------
run subsample --seed 1 "$INPUT" "$T/s.ctf" 1 5 5
if [ "$RC" -eq 2 ] && grep -q "START must be less than END" "$T/err"; then
  pass "subsample START >= END: usage error"
else fail_run "subsample 1 5 5: expected exit 2"; fi
for args in "dump ''" "copy $INPUT ''" "pprof $INPUT --output="; do
  eval "run $args"
  if [ "$RC" -eq 2 ] && grep -q "empty" "$T/err"; then pass "$args: an empty name refused"
  else fail_run "$args: expected exit 2 and 'empty'"; fi
done
# A file name with a newline and an escape sequence: one line, escaped.
run info "$T/a
b$(printf '\033')[31m.ctf"
if [ "$RC" -eq 1 ] && [ "$(wc -l < "$T/err")" -eq 1 ] && grep -q 'a\\x0ab\\x1b\[31m' "$T/err"; then
  pass "control characters of a name escaped in messages"
else fail_run "info of a name with control characters: expected one escaped line"; fi

finish
