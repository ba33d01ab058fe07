/*
 * cli.h - what the memtrace command's pieces share: the subcommand table,
 * exit codes, and small helpers for messages and option parsing.
 */
#ifndef MT_CLI_H
#define MT_CLI_H

#include <stdio.h>

#include "memtrace/memtrace.h"

/* Exit statuses of every subcommand. */
enum {
    EXIT_OK = 0,
    EXIT_DATA = 1,      /* bad trace, I/O error: the work could not be done */
    EXIT_USAGE = 2      /* bad command line                                  */
};

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *out);
} cli_command;

int cmd_dump(int argc, char **argv);
void usage_dump(FILE *out);
int cmd_copy(int argc, char **argv);
void usage_copy(FILE *out);
int cmd_info(int argc, char **argv);
void usage_info(FILE *out);
int cmd_check(int argc, char **argv);
void usage_check(FILE *out);
int cmd_flamegraph(int argc, char **argv);
void usage_flamegraph(FILE *out);
int cmd_hotspots(int argc, char **argv);
void usage_hotspots(FILE *out);
int cmd_subsample(int argc, char **argv);
void usage_subsample(FILE *out);
int cmd_strip_names(int argc, char **argv);
void usage_strip_names(FILE *out);
int cmd_top(int argc, char **argv);
void usage_top(FILE *out);
int cmd_live(int argc, char **argv);
void usage_live(FILE *out);
int cmd_diff(int argc, char **argv);
void usage_diff(FILE *out);
int cmd_pprof(int argc, char **argv);
void usage_pprof(FILE *out);
int cmd_speedscope(int argc, char **argv);
void usage_speedscope(FILE *out);
int cmd_report(int argc, char **argv);
void usage_report(FILE *out);
int cmd_run(int argc, char **argv);
void usage_run(FILE *out);

/* The whole tool: memtrace ARGS... (argv[0] is the program's name); returns
 * the exit status. main() (memtrace.c) calls it; so does fuzz_commands. */
int cli_main(int argc, char **argv);

/* "memtrace CMD: " + message + newline on stderr. */
void cli_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The warning for a trace with n allocations whose nsamples is <= 0 or
 * whose length is negative (mt_scan.odd_allocs); nothing when n is 0. The
 * exit status stays 0: the format allows them (`memtrace check` lists them
 * as warnings), but estimates that count them mean nothing. */
void cli_warn_odd(const char *cmd, const char *path, int64_t n);

/* Usage error: message, a hint to --help, returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True if arg is -h or --help. */
int cli_is_help(const char *arg);

/* Is argv[*i] the option NAME, with its value as the next argument or, for
 * a long option, after '=' ("--limit 5", "--limit=5")? 0: no; 1: yes, *val
 * set and *i left on the last argument it took; -1: the value is missing
 * (a usage error was printed: the command returns EXIT_USAGE).
 * Every command also takes "--" to end its options: what follows is an
 * operand even if it starts with '-'. */
int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **val);

struct mt_filter;

/* One step of the command line of a command that takes the shared filters:
 * argv[*i] is "--" (returns 2: *opts_done set, what follows is operands) or
 * a filter with its value (returns 1: it goes to f); *i is then past it.
 * 0: neither (or *opts_done already set), *i unchanged; -1: a bad filter,
 * the usage error printed (the command returns EXIT_USAGE). */
int cli_filter_arg(const char *cmd, struct mt_filter *f, int argc, char **argv, int *i,
                   int *opts_done);

/* cli_opt_value for each of the NULL-terminated names in turn: the one that
 * matched goes to *name. */
int cli_opt_one_of(const char *cmd, int argc, char **argv, int *i,
                   const char *const *names, const char **name, const char **val);

/* The value of --limit N (rows to show, 0: all): a whole number >= 0; one
 * past what a long holds is as good as all. 0 and *out set, or -1 with the
 * usage error printed. */
int cli_limit(const char *cmd, const char *val, long *out);

/* May a command decode on a second thread? Yes unless the environment has
 * MEMTRACE_THREADS=1 (the tests compare both ways; the output is the
 * same). */
int cli_threads(void);


/* The command line of the commands that read one TRACE with the shared
 * filters and write a file named by -o (pprof, speedscope, report): sets
 * *path and *outpath (left NULL when not given); filter options go to f
 * and, when filters is non-NULL, their text to it (space separated);
 * cli_filter_bounds is done. Returns -1 to go on, else the exit status:
 * EXIT_OK after --help, EXIT_USAGE after printing a usage error. */
int cli_parse_trace_out(const char *cmd, void (*show_usage)(FILE *), int argc,
                        char **argv, struct mt_filter *f, const char **path,
                        const char **outpath, char *filters, size_t filters_len);

/* Are IN and OUT one file (a name, or the standard stream "-" redirected
 * from or to it)? Writing OUT would then destroy IN. */
int cli_same_file(const char *in, const char *out);

/* A command reads path twice (what: "TRACE is read twice", or the like):
 * 0 when it can, else EXIT_USAGE after a usage error saying why: path is
 * "-" (standard input) or names a pipe, a FIFO, a socket or a character
 * device, which a second open would not read from the start (a FIFO's
 * second open waits for a writer that never comes). */
int cli_read_twice(const char *cmd, const char *what, const char *path);

/* Once the whole command line is read (not at each option: a repeated
 * option's last value is the one that counts): 0, or EXIT_USAGE after a
 * usage error when f's bounds cannot be met (mt_filter_check); then f made
 * ready (mt_filter_ready: EXIT_DATA after a message when out of memory). */
int cli_filter_bounds(const char *cmd, struct mt_filter *f);

/* What a command with the shared filters checks once its command line is
 * read: cli_filter_bounds, then --live-at peak, which reads TRACE twice
 * (cli_read_twice when f asks for it). 0, EXIT_USAGE or EXIT_DATA. */
int cli_check_filters(const char *cmd, struct mt_filter *f, const char *path);

/* What the help of each command with an output file says about it. */
#define CLI_HELP_OUT_FILE                                                   \
    "The output file is opened before the trace is read (a name that\n"      \
    "cannot be written is said at once), written under a temporary name\n"   \
    "next to it and put in its place when finished: a failure (a full\n"    \
    "disk) or an interrupt leaves an existing file as it was, and no\n"      \
    "partial file.\n"

/* An output file of a command (outfile.c): written under a temporary name
 * next to it and renamed over it by cli_out_commit, so that a failure or
 * an interruption (SIGINT, SIGTERM, SIGHUP: the temporary file is removed)
 * leaves no partial file; standard output ("-"), devices, FIFOs and names
 * under /dev and /proc are written in place. */
typedef struct cli_out_file {
    const char *path;   /* as given                                       */
    char *target;       /* a symbolic link's target, replaced instead     */
    char *tmp;          /* the temporary file; NULL when written in place */
    int fd;             /* where to write                                 */
    int trunc;          /* a regular file written in place: emptied by
                           cli_out_start, not when opened                 */
    int partial;        /* after cli_out_write failed: a file written in
                           place holds part of the output                 */
} cli_out_file;

/* path in a message: "standard output" for "-". */
const char *cli_out_name(const char *path);

/* Open path for writing: 0, or 1 after reporting why not ("PATH: ...").
 * Nothing is changed yet: a file written in place is emptied by
 * cli_out_start (so a command may open its output first, and fail before
 * writing, without harming an existing file). */
int cli_out_open(const char *cmd, cli_out_file *o, const char *path);
/* Start writing: 0, or 1 after reporting why not. */
int cli_out_start(const char *cmd, cli_out_file *o);
/* Close and put the file in place: 0, or 1 after reporting the failure
 * (the temporary file is then removed). */
int cli_out_commit(const char *cmd, cli_out_file *o);
/* Close and remove the temporary file. Returns 1 when a regular file was
 * being written in place and is left incomplete (the caller says so). */
int cli_out_abort(cli_out_file *o);

/* Write the file that cli_out_open opened (before the long work, so that a
 * file that cannot be written is said at once) with write(ctx, fd), which
 * returns 0, -2 for a failed write (errno set) or -1 for any other failure;
 * then put it in place. Returns 0; 1 after reporting ("OUTPATH: ...") that
 * the file could not be written or closed; -1 when write returned -1
 * (nothing reported; o->partial says whether to add that the file is
 * incomplete). On failure the file is left as it was, but one written in
 * place (a device, a file whose directory takes no new file). */
int cli_out_write(const char *cmd, cli_out_file *o, int (*write)(void *ctx, int fd),
                  void *ctx);

/* Flush stdout; 0, or 1 when it could not be written (said on stderr
 * when report is nonzero). */
int cli_flush_stdout(const char *cmd, int report);

/* Diagnostics callback that prints the reader's message on stderr, the
 * reference's words alone ("skipping truncated packet"): for the commands
 * the reference has (dump, info, flamegraph, hotspots, copy), whose lines
 * are its own. */
void cli_print_diag(void *ctx, mt_diag_kind kind, uint64_t offset,
                    const char *message);

/* The same, in the style of every other message ("memtrace top: t.ctf:
 * offset 14286: skipping truncated packet"), for the other commands (for
 * the reference's, as cli_print_diag); ctx is a cli_diag_ctx. */
typedef struct cli_diag_ctx {
    const char *cmd, *path;
} cli_diag_ctx;
void cli_print_diag_named(void *ctx, mt_diag_kind kind, uint64_t offset,
                          const char *message);

#endif /* MT_CLI_H */
