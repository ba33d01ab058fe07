/*
 * cli.c - the memtrace command: cli_main dispatches to one subcommand per
 * file (cmd_*.c); the helpers they share (cli.h). main() is in memtrace.c,
 * so that fuzz_commands can run the whole tool in-process.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "util/numtext.h"

static const cli_command commands[] = {
    {"dump", "print every event of a trace, one per line", cmd_dump, usage_dump},
    {"copy", "re-encode a trace (optionally as format v003)", cmd_copy, usage_copy},
    {"info", "describe a trace: program, host, rate, allocation statistics", cmd_info, usage_info},
    {"check", "validate every packet and event; summary and first error", cmd_check, usage_check},
    {"flamegraph", "folded stacks for flamegraph.pl / inferno", cmd_flamegraph, usage_flamegraph},
    {"hotspots", "allocation sites and their main callers", cmd_hotspots, usage_hotspots},
    {"subsample", "keep each sample with probability 1/FACTOR", cmd_subsample, usage_subsample},
    {"strip-names", "drop names and backtraces (shareable trace)", cmd_strip_names, usage_strip_names},
    {"top", "allocation sites ranked by bytes allocated, live at peak, live at end", cmd_top, usage_top},
    {"live", "estimated live heap over time, with its peak", cmd_live, usage_live},
    {"diff", "allocation sites that changed most between two traces", cmd_diff, usage_diff},
    {"pprof", "export as a gzipped pprof profile (go tool pprof, Pyroscope, Parca)", cmd_pprof, usage_pprof},
    {"speedscope", "export for speedscope (JSON, weighted by bytes)", cmd_speedscope, usage_speedscope},
    {"report", "one self-contained HTML report (heap over time, flame graph, sites)", cmd_report, usage_report},
    {"run", "run a program under the native heap profiler, write its trace", cmd_run, usage_run},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: memtrace COMMAND [OPTIONS] ARGS...\n"
            "\n"
            "Read, write and analyse memtrace traces (sampled allocations with\n"
            "backtraces, format versions 1, 2 and 3).\n"
            "\n"
            "Commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Run 'memtrace COMMAND --help' (or 'memtrace help COMMAND') for a\n"
            "command's options, 'memtrace --version' for the version. Long\n"
            "options take their value as the next argument or after '='\n"
            "(--limit 5, --limit=5); '--' ends the options.\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n"
            "\n"
            "Environment: top, live, diff and the filtered reports read the trace\n"
            "on a second thread; MEMTRACE_THREADS=1 keeps everything on one (the\n"
            "output is the same). Every command but run checks it: 1, 2 (the\n"
            "default) or empty; any other value is a usage error.\n");
}

/* A message on stderr with its control characters (a file name's newline
 * or escape sequence) written \xHH: one line, and nothing for the
 * terminal to interpret. */
static void put_message(const char *fmt, va_list ap)
{
    char small[512] = "";
    size_t n;
    char *buf = out_vformat(small, sizeof small, &n, fmt, ap);
    if (!buf) {
        buf = small;            /* out of memory: the message cut short */
        n = strnlen(small, sizeof small - 1);
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c < 0x20 || c == 0x7f)
            fprintf(stderr, "\\x%02x", c);
        else
            fputc(c, stderr);
    }
    if (buf != small)
        free(buf);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "memtrace %s: ", cmd);
    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_warn_odd(const char *cmd, const char *path, int64_t n)
{
    if (n > 0)
        cli_error(cmd, "warning: %s: %lld allocation%s with nsamples <= 0 or a negative "
                  "length (`memtrace check` lists them): the figures that count them "
                  "mean nothing", path, (long long)n, n == 1 ? "" : "s");
}

int cli_read_twice(const char *cmd, const char *what, const char *path)
{
    if (strcmp(path, "-") == 0)
        return cli_usage_error(cmd, "%s and cannot be standard input", what);
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ||
        S_ISDIR(st.st_mode))
        return 0;       /* (opening it says what is wrong, if anything) */
    return cli_usage_error(cmd, "%s and cannot be %s (%s): it must be a file", what,
                           S_ISFIFO(st.st_mode) ? "a pipe or FIFO"
                           : S_ISSOCK(st.st_mode) ? "a socket" : "a device", path);
}

int cli_filter_bounds(const char *cmd, mt_filter *f)
{
    char err[512];
    if (mt_filter_check(f, err, sizeof err) != 0)
        return cli_usage_error(cmd, "%s", err);
    if (mt_filter_ready(f)) {
        cli_error(cmd, "out of memory");
        return EXIT_DATA;
    }
    return 0;
}

int cli_check_filters(const char *cmd, mt_filter *f, const char *path)
{
    int rc = cli_filter_bounds(cmd, f);
    if (rc)
        return rc;
    if (f->live_mode != MT_LIVE_PEAK)
        return 0;
    return cli_read_twice(cmd, "--live-at peak reads TRACE twice", path);
}

/* stat of a file name, or of the standard stream (fd) that "-" stands for. */
static int stat_path(const char *path, int fd, struct stat *st)
{
    return strcmp(path, "-") == 0 ? fstat(fd, st) : stat(path, st);
}

int cli_same_file(const char *in, const char *out)
{
    if (strcmp(in, out) == 0 && strcmp(in, "-") != 0)
        return 1;
    struct stat sa, sb;
    return stat_path(in, STDIN_FILENO, &sa) == 0 && stat_path(out, STDOUT_FILENO, &sb) == 0 &&
           S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_out_write(const char *cmd, cli_out_file *o, int (*write)(void *ctx, int fd),
                  void *ctx)
{
    if (cli_out_start(cmd, o)) {
        cli_out_abort(o);
        return 1;
    }
    int w = write(ctx, o->fd);
    if (w == 0)
        return cli_out_commit(cmd, o);
    int saved = errno;
    int partial = o->partial = cli_out_abort(o);
    if (w == -2)
        cli_error(cmd, "%s: writing: %s%s", cli_out_name(o->path), strerror(saved),
                  partial ? " (the file is incomplete)" : "");
    return w == -2 ? 1 : -1;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "memtrace %s: ", cmd);
    va_start(ap, fmt);
    put_message(fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'memtrace %s --help'.\n", cmd);
    return EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                  const char **val)
{
    const char *a = argv[*i];
    size_t l = strlen(name);
    if (strncmp(a, name, l) != 0)
        return 0;
    if (a[l] == '=' && name[1] == '-') {
        *val = a + l + 1;
        return 1;
    }
    if (a[l] != 0)
        return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "%s needs a value", name);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int cli_filter_arg(const char *cmd, mt_filter *f, int argc, char **argv, int *i,
                   int *opts_done)
{
    if (*opts_done)
        return 0;
    if (strcmp(argv[*i], "--") == 0) {
        *opts_done = 1;
        ++*i;
        return 2;
    }
    char err[512];
    int k = mt_filter_parse_arg(f, argc, argv, i, err, sizeof err);
    if (k < 0)
        cli_usage_error(cmd, "%s", err);
    return k;
}

int cli_limit(const char *cmd, const char *val, long *out)
{
    char *end;
    if (val[0] == '-' || !mt_plain_integer(val)) {
        cli_usage_error(cmd, "--limit: expected a count >= 0 (0: all), got '%s'", val);
        return -1;
    }
    errno = 0;
    long v = strtol(val, &end, 10);
    *out = errno == ERANGE ? LONG_MAX : v;      /* (more rows than any trace has) */
    return 0;
}

int cli_opt_one_of(const char *cmd, int argc, char **argv, int *i,
                   const char *const *names, const char **name, const char **val)
{
    for (; *names; names++) {
        int k = cli_opt_value(cmd, argc, argv, i, *names, val);
        if (k) {
            *name = *names;
            return k;
        }
    }
    return 0;
}

int cli_threads(void)
{
    const char *v = getenv("MEMTRACE_THREADS");
    return !(v && strcmp(v, "1") == 0);
}

/* MEMTRACE_THREADS unset, empty, 1 or 2 (checked before a command runs,
 * unless it is only asked for its help). */
static int threads_env_ok(int argc, char **argv)
{
    const char *v = getenv("MEMTRACE_THREADS");
    if (!v || !*v || strcmp(v, "1") == 0 || strcmp(v, "2") == 0)
        return 1;
    for (int a = 2; a < argc; a++)
        if (cli_is_help(argv[a]))
            return 1;
    return 0;
}

int cli_parse_trace_out(const char *cmd, void (*show_usage)(FILE *), int argc,
                        char **argv, mt_filter *f, const char **path,
                        const char **outpath, char *filters, size_t filters_len)
{
    int opts_done = 0;
    for (int i = 1; i < argc;) {
        const char *a = argv[i];
        int first = i;
        int k = cli_filter_arg(cmd, f, argc, argv, &i, &opts_done);
        if (k < 0)
            return EXIT_USAGE;
        if (k == 1) {                   /* a filter: its text kept */
            for (int j = first; filters && j < i; j++) {
                size_t l = strlen(filters);
                snprintf(filters + l, filters_len - l, "%s%s", l ? " " : "", argv[j]);
            }
        }
        if (k > 0)
            continue;
        if (opts_done || a[0] != '-' || a[1] == 0) {
            if (*path)
                return cli_usage_error(cmd, "expected one TRACE, got more");
            *path = a;
            i++;
            continue;
        }
        if (cli_is_help(a)) {
            show_usage(stdout);
            return EXIT_OK;
        }
        if ((k = cli_opt_value(cmd, argc, argv, &i, "-o", outpath)) == 0)
            k = cli_opt_value(cmd, argc, argv, &i, "--output", outpath);
        if (k < 0)
            return EXIT_USAGE;
        if (k == 0)
            return cli_usage_error(cmd, "unknown option '%s'", a);
        i++;
    }
    int rc = cli_filter_bounds(cmd, f);
    if (rc)
        return rc;
    if (*path && *outpath && cli_same_file(*path, *outpath))
        return cli_usage_error(cmd, "the output must not be the input file (%s)", *outpath);
    return -1;
}

int cli_flush_stdout(const char *cmd, int report)
{
    errno = 0;
    int e = fflush(stdout) != 0 ? errno : 0;
    if (!e && !ferror(stdout))
        return 0;
    if (report)
        cli_error(cmd, "writing standard output: %s", e ? strerror(e) : "write error");
    return 1;
}

void cli_print_diag(void *ctx, mt_diag_kind kind, uint64_t offset,
                    const char *message)
{
    (void)ctx;
    (void)kind;
    (void)offset;
    fprintf(stderr, "%s\n", message);
    fflush(stderr);
}

/* Whether cmd is one of the reference's tools (see cli_print_diag). */
static int reference_words(const char *cmd)
{
    static const char *const ref[] = {"dump", "info", "flamegraph", "hotspots", "copy"};
    for (size_t i = 0; i < sizeof ref / sizeof *ref; i++)
        if (strcmp(cmd, ref[i]) == 0)
            return 1;
    return 0;
}

void cli_print_diag_named(void *ctx, mt_diag_kind kind, uint64_t offset,
                          const char *message)
{
    const cli_diag_ctx *d = ctx;
    if (reference_words(d->cmd)) {
        cli_print_diag(NULL, kind, offset, message);
        return;
    }
    fprintf(stderr, "memtrace %s: %s: offset %llu: %s\n", d->cmd, d->path,
            (unsigned long long)offset, message);
    fflush(stderr);
}

/* The argument of a command that names the file standard output writes
 * to (a regular file), or NULL: `memtrace dump T >> T` would read its own
 * output, and `flamegraph T >> T` damage T. "-" stands for standard input. */
static const char *output_among_inputs(int argc, char **argv)
{
    struct stat so, st;
    if (fstat(STDOUT_FILENO, &so) != 0 || !S_ISREG(so.st_mode))
        return NULL;
    for (int i = 1; i < argc; i++)
        if (stat_path(argv[i], STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_dev == so.st_dev && st.st_ino == so.st_ino)
            return argv[i];
    return NULL;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (cli_is_help(name) || strcmp(name, "help") == 0) {
        if (argc > 2 && strcmp(name, "help") == 0) {
            for (size_t i = 0; i < NCOMMANDS; i++)
                if (strcmp(commands[i].name, argv[2]) == 0) {
                    commands[i].usage(stdout);
                    return EXIT_OK;
                }
        }
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("memtrace %s\n", mt_version());
        return EXIT_OK;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) {
            const char *same;
            /* (run's arguments are the program's) */
            for (int a = 2; a < argc && strcmp(name, "run") != 0; a++) {
                const char *prev = argv[a - 1];
                if (argv[a][0])
                    continue;
                if (a > 2 && prev[0] == '-' && prev[1] && strcmp(prev, "--") != 0 &&
                    !strchr(prev, '='))
                    return cli_usage_error(name, "the argument after %s is empty (a "
                                           "value or a file name cannot be)", prev);
                return cli_usage_error(name, "argument %d is empty (a file name or "
                                       "a value cannot be)", a - 1);
            }
            if (strcmp(name, "run") != 0 && !threads_env_ok(argc, argv))
                return cli_usage_error(name, "MEMTRACE_THREADS=%s in the environment: it "
                                       "must be 1 (read the trace on the command's own "
                                       "thread) or 2 (on a second one, the default)",
                                       getenv("MEMTRACE_THREADS"));
            if (strcmp(name, "run") != 0 && (same = output_among_inputs(argc - 1, argv + 1)))
                return cli_usage_error(name, "standard output is %s, which the command "
                                       "reads: redirect it elsewhere",
                                       strcmp(same, "-") == 0 ? "standard input" : same);
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "memtrace: unknown command '%s'\nTry 'memtrace --help'.\n", name);
    return EXIT_USAGE;
}
