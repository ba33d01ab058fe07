#!/usr/bin/env bash
# Every command that reads a trace, on well-formed traces with odd contents
# (gen_odd.c: objects collected twice, promotes after collects, zero,
# negative and huge lengths and sample counts, empty names, codes without
# locations, names that need escaping, 400-frame and empty backtraces, v002
# and v003 of up to three domains sharing object ids), SEEDS seeds.
# For each trace:
#   * every command (some with filters) exits 0 with no crash or sanitizer
#     report (the trace is valid: odd contents are for `check` to warn
#     about, not errors), but copy and strip-names of several domains exit
#     1 saying they are not supported (their --help says so);
#   * dump prints one line per event written, check counts them and the
#     allocations; the commands that estimate (top, live, diff and the
#     exporters) warn about allocations with nsamples <= 0 or a negative
#     length exactly when check lists some; JSON outputs parse (names with quotes, control bytes and
#     bytes that are not UTF-8 are escaped);
#   * copy (to the same format version) gives the file back byte for byte;
#     a v002 trace copied to v003 and back too.
# Arguments: --cli PATH --gen PATH (gen_odd) [SEEDS, default 40]
set -u
# shellcheck source=../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
parse_args "$@"
setup odd GEN
seeds=${SECTION:-40}

cmds=("dump" "info" "info --json" "check" "flamegraph" "flamegraph --inverted"
      "flamegraph --bytes" "hotspots" "hotspots --json" "top" "top --json" "live"
      "live --json" "diff" "speedscope" "pprof" "report" "copy" "subsample" "strip-names"
      # filters: a first pass for the peak, lifetimes of collected-twice objects
      "top --live-at peak" "top --live-at end --min-size 8" "live --max-lifetime 10"
      "flamegraph --in f1 --hide f2" "hotspots --live-at peak" "report --live-at peak"
      "pprof --min-lifetime 1 --source major" "speedscope --not-in f3"
      "diff --source external")

escaped_seen=0   # seeds whose top lists the name with control bytes
for seed in $(seq 1 "$seeds"); do
  tr=$T/odd-$seed.ctf
  if ! counts=$("$GEN" "$tr" "$seed"); then
    fail "seed $seed: gen_odd failed"; continue
  fi
  read -r _ events _ allocs _ domains <<< "$counts"
  version=$(od -An -tu2 -j28 -N2 "$tr" | tr -d ' ')   # (the header's version)
  bad=0
  for c in "${cmds[@]}"; do
    read -r -a words <<< "$c"
    case ${words[0]} in
      diff) args=("$tr" "$tr") ;;
      speedscope|pprof|report) args=("$tr" -o "$T/out.bin") ;;
      copy) args=(--format-version "$version" "$tr" "$T/out.ctf") ;;
      strip-names) args=("$tr" "$T/out.ctf") ;;
      subsample) args=("$tr" "$T/out.ctf" 3) ;;
      *) args=("$tr") ;;
    esac
    run "${words[@]}" "${args[@]}"
    if [ "$domains" -gt 1 ] && { [ "$c" = copy ] || [ "$c" = strip-names ]; }; then
      # (documented: they rewrite with one writer, which gives ids in order)
      if crashed || [ "$RC" -ne 1 ] || ! grep -q 'multi-domain traces are not supported' "$T/err"; then
        fail "seed $seed: memtrace $c on $domains domains: exit $RC, expected 1 and 'not supported'"
        show_err 5; bad=1
      fi
      continue
    fi
    if crashed || [ "$RC" -ne 0 ]; then
      fail "seed $seed: memtrace $c exited $RC"; show_err 10; bad=1; continue
    fi
    json=
    case $c in
      *--json*) json=$T/out ;;
      speedscope*) json=$T/out.bin ;;
    esac
    if [ -n "$json" ] && ! json_ok "$json"; then
      fail "seed $seed: memtrace $c: $JSON_ERR"; bad=1
    fi
    case ${words[0]} in
      top|live|diff|speedscope|pprof|report)
        warned=0
        grep -q "^memtrace ${words[0]}: warning: .*with nsamples <= 0 or a negative length" "$T/err" && warned=1
        [ "$warned" = "$odd" ] ||
          { fail "seed $seed: memtrace $c: warning about odd allocations $warned, check says $odd"; show_err 3; bad=1; } ;;
    esac
    case $c in
      dump)
        n=$(wc -l < "$T/out")
        [ "$n" -eq "$events" ] || { fail "seed $seed: dump printed $n lines for $events events"; bad=1; } ;;
      check)
        grep -Eq "^events: +$events\$" "$T/out" &&
          grep -Eq "^  allocs: +$allocs \(" "$T/out" ||
          { fail "seed $seed: check does not count $events events, $allocs allocs"; show_out 8; bad=1; }
        # allocations whose figures mean nothing, which the estimating
        # commands below must warn about (and only then)
        odd=0
        grep -Eq "^  allocation with (a negative length|nsamples <= 0):" "$T/out" && odd=1 ;;
      copy)
        cmp -s "$tr" "$T/out.ctf" || { fail "seed $seed: copy is not byte-identical"; bad=1; } ;;
      top|live|diff)
        # text for a terminal: the names' control bytes escaped (\xHH), and
        # the one name with them shown so
        if tr -d '\n' < "$T/out" | LC_ALL=C grep -q '[[:cntrl:]]'; then
          fail "seed $seed: memtrace $c prints control characters"; bad=1
        fi
        if [ "$c" = top ] && grep -qF 'q"b\s' "$T/out"; then
          if grep -qF 'q"b\s\x09c\x01</script>' "$T/out"; then escaped_seen=$((escaped_seen + 1))
          else fail "seed $seed: top does not show the name escaped"; show_out 12; bad=1; fi
        fi ;;
    esac
  done
  # v002 -> v003 -> v002
  if [ "$version" = 2 ]; then   # (so one domain)
    run copy --format-version 3 "$tr" "$T/v3.ctf"
    run copy "$T/v3.ctf" "$T/back.ctf"
    cmp -s "$tr" "$T/back.ctf" || { fail "seed $seed: v002 -> v003 -> v002 differs"; bad=1; }
  fi
  [ "$bad" -eq 0 ] && pass "seed $seed: $events events, every command"
done
if [ "$escaped_seen" -gt 0 ]; then pass "top showed the name with control bytes escaped ($escaped_seen seeds)"
else fail "no seed's top listed the name with control bytes: the escaping went untested"; fi

finish
