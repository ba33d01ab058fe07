#!/usr/bin/env bash
# Every command that reads a trace, on every malformed/*.ctf (discovered now).
# malformed.sh holds `dump`'s output to the reference's; this holds every
# command, dump included, to one contract, for each (trace, command):
#   * no crash or hang: no sanitizer report, no signal, done within 300 s;
#   * exit status 0 or 1 (1: a damaged trace; never 2, the usage error);
#   * skipped packets are said in the reference's words alone by the
#     commands the reference has (dump, info, flamegraph, hotspots, copy),
#     by the others as every message: "memtrace CMD: TRACE: offset N: ...";
#   * on status 1, stderr's last line (after any "skipping ..." lines) is
#     "memtrace COMMAND: TRACE: offset N: MESSAGE": the file, the byte
#     offset and what was wrong;
#   * where the reference read the trace to its end (NAME.exit is 0: only
#     skipped packets), status 0;
#   * copy, subsample, strip-names: whenever IN's trace info could be read
#     (our dump printed a line), OUT exists and is a valid trace, damaged IN
#     or not (their --help: "OUT receives every event before the damage");
#     copy's OUT dumps as the lines our dump printed of IN;
#   * a command that fails names the first damage, the offset `check` names
#     (strip-names aside: it names the damage it stopped at, before which
#     OUT holds every event, and backtraces are not its to read);
#   * where the reference failed, status 1 for every command that decodes
#     backtraces. info, live and strip-names skip them undecoded, so damage
#     inside a backtrace is not theirs to see (their --help says so): 0 or 1.
#     subsample runs with a factor that drops nearly every allocation: it
#     must notice damage in the backtraces of the allocations it drops too.
set -u
# shellcheck source=corpus_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/corpus_lib.sh"
mt_parse_args "$@"

mt_list_malformed

cmds=(dump info check flamegraph hotspots top live diff speedscope pprof report copy subsample
      strip-names)
out=$MT_TMP/out

for ctf in "${ctfs[@]}"; do
  name=$(basename "$ctf" .ctf)
  [ -f "$dir/$name.exit" ] || { mt_fail "$name.ctf" "no reference exit code file $name.exit"; continue; }
  ref_rc=$(tr -d ' \n\r' < "$dir/$name.exit")
  MT_CHECKED=$((MT_CHECKED + 1))
  before=$MT_FAILURES
  "$CLI" dump "$ctf" > "$MT_TMP/indump" 2> /dev/null
  first=$("$CLI" check "$ctf" 2>&1 > /dev/null | grep -v '^skipping' | tail -n 1 |
          sed -n 's/^memtrace check: .*: offset \([0-9]*\): .*/\1/p')
  for cmd in "${cmds[@]}"; do
    case $cmd in
      diff) args=("$ctf" "$ctf") ;;
      speedscope|pprof|report) args=("$ctf" -o "$out") ;;
      copy|strip-names) args=("$ctf" "$out") ;;
      subsample) args=("$ctf" "$out" 1000000) ;;   # (nearly every allocation dropped)
      *) args=("$ctf") ;;
    esac
    id="$name.ctf $cmd"
    rm -f "$out"
    timeout 300 "$CLI" "$cmd" "${args[@]}" > "$MT_TMP/stdout" 2> "$MT_TMP/err"
    rc=$?
    if mt_sanitizer_report "$MT_TMP/err"; then
      mt_fail "$id" "sanitizer report (exit status $rc)"; mt_show_stderr "$MT_TMP/err"; continue
    fi
    if [ "$rc" -eq 124 ]; then
      mt_fail "$id" "still running after 300 s"; continue
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
      mt_fail "$id" "exit status $rc (expected 0 or 1)"; mt_show_stderr "$MT_TMP/err"; continue
    fi
    if [ "$rc" -eq 1 ]; then
      last=$(grep -v -e '^skipping' -e '^memtrace [a-z-]*: .*: offset [0-9]*: skipping ' "$MT_TMP/err" |
             tail -n 1)
      case $last in
        "memtrace $cmd: $ctf: offset "[0-9]*": "?*) ;;
        *) mt_fail "$id" "error line does not name the file and the offset: '$last'"; continue ;;
      esac
      at=${last#"memtrace $cmd: $ctf: offset "}
      at=${at%%:*}
      if [ "$cmd" != strip-names ] && [ -n "$first" ] && [ "$at" != "$first" ]; then
        mt_fail "$id" "names offset $at; the first damage (check's) is at $first: '$last'"; continue
      fi
    fi
    case $cmd in copy|subsample|strip-names)
      if [ -s "$MT_TMP/indump" ]; then
        if [ ! -f "$out" ] || ! "$CLI" check "$out" > /dev/null 2> "$MT_TMP/cerr"; then
          mt_fail "$id" "exit status $rc, and OUT is missing or not a valid trace"
          mt_show_stderr "$MT_TMP/err"; continue
        fi
        if [ "$cmd" = copy ] && ! "$CLI" dump "$out" 2> /dev/null | cmp -s - "$MT_TMP/indump"; then
          mt_fail "$id" "OUT's dump is not the lines dump printed of IN"; continue
        fi
      fi ;;
    esac
    if grep -q 'skipping' "$MT_TMP/err"; then
      case $cmd in
        dump|info|flamegraph|hotspots|copy) pat='^skipping ' ;;
        *) pat="^memtrace $cmd: $ctf: offset [0-9]+: skipping " ;;
      esac
      if grep 'skipping' "$MT_TMP/err" | grep -qvE "$pat"; then
        mt_fail "$id" "a skipped packet not said as '$pat...'"; mt_show_stderr "$MT_TMP/err"; continue
      fi
    fi
    if [ "$ref_rc" = 0 ] && [ "$rc" -ne 0 ]; then
      mt_fail "$id" "exit status $rc; the reference reads this trace to its end"
      mt_show_stderr "$MT_TMP/err"; continue
    fi
    case $cmd in info|live|strip-names) ;; *)
      if [ "$ref_rc" != 0 ] && [ "$rc" -ne 1 ]; then
        mt_fail "$id" "exit status $rc; the reference fails on this trace (exit $ref_rc)"; continue
      fi ;;
    esac
  done
  [ "$MT_FAILURES" = "$before" ] && echo "ok   $name.ctf (${#cmds[@]} commands)"
done

mt_summary
