#!/usr/bin/env bash
# gen-man.sh MEMTRACE_BINARY > memtrace.1
# The manual page memtrace(1), made at build time from the tool's own --help
# texts (as docs/CLI.md is), so the page and the tool cannot drift apart;
# the profiler's environment variables are the one part written here.
set -eu
. "$(dirname "$0")/commands.sh"
bin=$1
version=$("$bin" --version | awk '{ print $2 }')

# roff-escape help text: backslashes, and lines that would start a request
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
# a preformatted block
block() { echo '.nf'; esc; echo '.fi'; }

cat <<EOF
.TH MEMTRACE 1 "" "memtrace-c $version" "User Commands"
.SH NAME
memtrace \\- read, write and analyse memtrace traces; sample the heap of a C or C++ program
.SH SYNOPSIS
.B memtrace
.I COMMAND
.RI [ OPTIONS ]
.IR ARGS ...
.br
.B memtrace run
.RI [ OPTIONS ]
.B \\-\\-
.I CMD
.RI [ ARGS ...]
.SH DESCRIPTION
A memtrace trace holds sampled allocations, each with its backtrace and the
source locations of its frames, and the later promotion and release of each
sampled object. The commands below read traces of format versions 1, 2 and
3 (written by OCaml's memtrace library or by
.BR "memtrace run" ),
write them, and analyse them.
.PP
EOF
"$bin" --help | block
echo '.SH COMMANDS'
for cmd in $(commands "$bin"); do
  echo ".SS \"memtrace $cmd\""
  "$bin" "$cmd" --help | block
done
cat <<'EOF'
.SH ENVIRONMENT
Except for MEMTRACE_THREADS and MEMTRACE_PRELOAD, these are read by the
profiler library (libmemtrace_preload.so), which
.B memtrace run
preloads, and which also works without it:
.B LD_PRELOAD=/path/libmemtrace_preload.so MEMTRACE=out.ctf
.I CMD
traces
.IR CMD .
.TP
.B MEMTRACE
The trace file; unset or empty, nothing is traced.
.B %p
stands for the process id.
.TP
.B MEMTRACE_RATE
Samples per 8-byte word, greater than 0 and at most 1 (default 1e-5: a sample
per ~781 KiB allocated). A bad value is reported on standard error and the
program runs untraced.
.B memtrace run
takes it from 1e-15 on, and refuses a smaller one before the program runs
(below ~1e-16 the rate a trace records would not be the one sampled at).
.TP
.B MEMTRACE_CONTEXT
Free text stored in the trace
.RB ( "memtrace info"
shows it).
.TP
.B MEMTRACE_FOLLOW_FORK
Non-empty and not 0: forked children trace into files of their own.
.TP
.B MEMTRACE_FOLLOW_EXEC
Non-empty and not 0: programs started by the traced one are traced too, each
into a file of its own.
.TP
.B MEMTRACE_DEBUGINFO
Non-empty and not 0: also read separate debug files (/usr/lib/debug) for the
file and line of library frames.
.TP
.B MEMTRACE_UNWIND
(for comparisons) by default the profiler's own unwinder, which leaves to
libunwind only the frames it cannot unwind;
.B libunwind
for libunwind's
.B unw_backtrace
alone,
.B libgcc
for libgcc's,
.B step
for libunwind one
.B unw_step
at a time;
.B check
unwinds every sample with the profiler's unwinder and with
.BR unw_step ,
keeps the latter's, and prints at exit how many differed. Another value is a
bad setting: reported, and the program runs untraced.
.TP
.B MEMTRACE_THREADS
(the analysing commands) 1: read the trace on the calling thread instead of a
second one (the output is the same); 2, the default. Every command but
.B run
takes 1, 2 or an empty value and refuses any other (bad usage).
.TP
.B MEMTRACE_PRELOAD
.RB ( "memtrace run" )
the profiler library's path. When set and not empty it is the library used,
and nothing else is looked for; otherwise the library is looked for next to
the memtrace program, then in the library directory of its installation.
.PP
Once started the profiler removes itself from the environment, so the
program's children run untraced unless following is asked for.
.SH EXIT STATUS
0 on success, 1 for a malformed trace or an I/O error (every event before
the damage is processed first), 2 for bad usage.
.B memtrace run
exits with its program's status; when a signal kills the program, it ends
itself by the same signal (a shell's $? is then 128+N for signal N). It
exits with 1 when the program is missing or not executable, the profiler
library cannot be found or used, or the trace cannot be written where asked;
with 126 when the program cannot be executed all the same, and 127 when the
interpreter its #! line names is missing.
.SH SEE ALSO
The project's docs/CLI.md (these texts), docs/PROFILER.md (the profiler) and
docs/REPORT.md (the HTML report); the trace format specification, FORMAT.md.
EOF
