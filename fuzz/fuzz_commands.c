/*
 * fuzz_commands.c - libFuzzer target for the memtrace command-line tool:
 * every command that reads a trace (dump, info, check, flamegraph,
 * hotspots, top, live, diff, pprof, speedscope, report, copy, subsample,
 * strip-names, with and without the shared filters) runs in-process, as
 * `memtrace CMD ...`, on a trace made from the input. fuzz_reader covers
 * the decoder; this covers what the commands build on its events: the
 * analysis layer, the exporters and the rewriting commands, which must
 * never crash, whatever a trace holds.
 *
 * Input: byte 0 picks the command line (commands[] below), byte 1 holds
 * flags, the rest is the payload:
 *   flags bit 0 clear: the payload is the trace file itself (raw bytes:
 *     damaged traces; the command must exit 0 or 1);
 *   flags bit 0 set: the payload is a program for the library's writer
 *     (gen() below), which makes a well-formed trace with odd contents:
 *     objects collected twice or promoted after their collection, lengths
 *     of 0, -5, 2^40 or 2^60 words, sample counts of 0, -3 or 2^62 - 1 (sums
 *     overflow), empty and 400-frame backtraces, codes without locations,
 *     names that output formats must escape, month-long gaps, v002 or v003
 *     (of one to three domains), 64- or 32-bit. The command must exit 0
 *     (copy and strip-names may exit 1 for several domains, as documented),
 *     and `copy` of a one-domain trace to its own version must give it back
 *     byte for byte (unless the program flushed: a copy's packets end where
 *     the writer's own policy ends them);
 *   flags bit 1 set: commands may decode on a second thread (the default
 *     of the tool; clear, MEMTRACE_THREADS=1).
 * Anything else aborts with a message. MT_FUZZ_SAVE=PATH saves each
 * generated trace there; MT_FUZZ_QUIET=1 sends the commands' standard
 * output to /dev/null (the replay test does: their standard error stays).
 * The trace and the outputs of copy, subsample and strip-names are memory
 * files (memfd); other outputs go to /dev/null. Run with -close_fd_mask=3
 * (fuzz/run.sh does): libFuzzer keeps its own copy of stderr for its
 * reports, the commands write to /dev/null.
 */
#include <memtrace/memtrace.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cli.h"
#include "domain_writers.h"     /* (tests/cli) */
#include "odd_locations.h"      /* (tests/cli) */

#define MAX_EVENTS 3000
#define MAX_DEPTH 400

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz_commands: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

/* ---- the command lines ------------------------------------------------- */

/* "T" is replaced by the trace's path, "O" by the output memory file's,
 * "V" by the trace's format version; a NULL ends a line. */
static const char *const commands[][10] = {
    {"dump", "T"},
    {"info", "T"},
    {"info", "--json", "T"},
    {"check", "T"},
    {"flamegraph", "T"},
    {"flamegraph", "--inverted", "T"},
    {"flamegraph", "--bytes", "T"},
    {"hotspots", "T"},
    {"hotspots", "--json", "T"},
    {"top", "T"},
    {"top", "--json", "T"},
    {"live", "T"},
    {"live", "--json", "T"},
    {"diff", "T", "T"},
    {"speedscope", "T", "-o", "/dev/null"},
    {"pprof", "T", "-o", "/dev/null"},
    {"report", "T", "-o", "/dev/null"},
    {"copy", "--format-version", "V", "T", "O"},
    {"subsample", "T", "O", "3"},
    {"strip-names", "T", "O"},
    {"top", "--live-at", "peak", "T"},
    {"top", "--live-at", "end", "--min-size", "8", "T"},
    {"live", "--max-lifetime", "10", "T"},
    {"flamegraph", "--in", "f1", "--hide", "f2", "T"},
    {"hotspots", "--live-at", "peak", "T"},
    {"report", "--live-at", "peak", "T", "-o", "/dev/null"},
    {"pprof", "--min-lifetime", "1", "--source", "major", "T", "-o", "/dev/null"},
    {"speedscope", "--not-in", "f3", "T", "-o", "/dev/null"},
    {"diff", "--source", "external", "T", "T"},
    {"top", "--from", "0.5", "--to", "2", "--by", "function", "T"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* ---- memory files ------------------------------------------------------ */

static int trace_fd = -1, out_fd = -1;
static char trace_path[64], out_path[64];

static void setup(void)
{
    /* (after libFuzzer's -close_fd_mask, which closed them: the commands
     * need open descriptors 1 and 2) */
    int null = open("/dev/null", O_RDWR);
    if (null < 0)
        die("cannot open /dev/null");
    if (fcntl(1, F_GETFD) < 0 || getenv("MT_FUZZ_QUIET"))
        dup2(null, 1);
    if (fcntl(2, F_GETFD) < 0)
        dup2(null, 2);
    if (null > 2)
        close(null);
    trace_fd = memfd_create("trace", 0);
    out_fd = memfd_create("out", 0);
    if (trace_fd < 0 || out_fd < 0)
        die("memfd_create failed");
    snprintf(trace_path, sizeof trace_path, "/proc/self/fd/%d", trace_fd);
    snprintf(out_path, sizeof out_path, "/proc/self/fd/%d", out_fd);
}

static void put_file(int fd, const void *p, size_t n)
{
    if (ftruncate(fd, 0) != 0 || (n && pwrite(fd, p, n, 0) != (ssize_t)n))
        die("cannot write a memory file of %zu bytes", n);
}

/* The output file's bytes (malloc'd) and their number. */
static uint8_t *get_file(int fd, size_t *n)
{
    off_t end = lseek(fd, 0, SEEK_END);
    uint8_t *p = malloc(end > 0 ? (size_t)end : 1);
    if (end < 0 || !p || (end && pread(fd, p, (size_t)end, 0) != end))
        die("cannot read a memory file of %lld bytes", (long long)end);
    *n = (size_t)end;
    return p;
}

/* ---- the generator ----------------------------------------------------- */

typedef struct input {
    const uint8_t *p;
    size_t n, pos;
} input;

static unsigned u8(input *g)
{
    return g->pos < g->n ? g->p[g->pos++] : 0;
}

/* Run the program in g against the writer; the trace goes to trace_fd
 * (emptied first). Returns the trace's format version; *flushed is set if
 * the program flushed (then its packets end where a copy's do not), *ndom
 * to the number of domains. A v003 trace has one to three domains, each
 * with a writer of its own (domain_writers.h, as tests/cli/gen_odd.c makes
 * them); they share object ids (each writer's start at 0). */
static int gen(input *g, int *flushed, int *ndom)
{
    static const double rates[4] = {1.0, 1e-4, 0.5, 1e-9};
    static const int64_t lengths[9] = {0, 1, 2, 16, 17, 256, (int64_t)1 << 60,
                                       (int64_t)1 << 40, -5};
    static const int64_t samples[7] = {1, 1, 1, 2, 0, -3, ((int64_t)1 << 62) - 1};
    static const int64_t jumps[5] = {0, 1, 1000, 3600000000LL, 2592000000000LL};
    unsigned h = u8(g), h2 = u8(g);
    int version = h & 1 ? 3 : 2;
    int nd = version == 3 ? 1 + (int)(h2 % 3) : 1;
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = rates[(h >> 1) & 3];
    info.word_size = h & 8 ? 32 : 64;
    info.executable_name = h & 16 ? odd_nasty : "fuzz";
    info.host_name = "host";
    info.runtime_params = "";
    info.context = h & 32 ? "ctx \"q\"" : NULL;
    info.pid = 42;
    info.start_time = 1000000;
    mt_writer *ws[DW_MAX];
    dw_sink sinks[DW_MAX];
    int64_t next_ids[DW_MAX] = {0, 0, 0};
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = version;
    opt.domain = nd > 1 ? 0 : (int)(h >> 6);
    opt.no_fork_check = 1;
    char err[256];
    if (ftruncate(trace_fd, 0) != 0 || lseek(trace_fd, 0, SEEK_SET) != 0)
        die("cannot empty the trace's memory file");
    if (dw_open(ws, sinks, nd, trace_fd, &info, &opt, err, sizeof err))
        die("writer: %s", err);
    int d = 0;
    mt_writer *w = ws[0];
    int64_t next_id = 0;
    static uint64_t cs[MAX_DEPTH];
    size_t depth = 0;
    int64_t t = info.start_time;
    for (int e = 0; e < MAX_EVENTS && g->pos < g->n; e++) {
        unsigned op = u8(g);
        t += (op >> 3) & 1;
        int st = 0;
        /* a flush only for 0xff (one op in 256), an allocation for the
         * other ops of 7: most programs keep the writer's packet ends */
        switch ((op & 7) == 7 && op != 0xff ? 0 : op & 7) {
        case 0: case 1: case 2: case 3: {
            /* the previous stack's outermost frames kept, new inner ones */
            size_t keep = u8(g) % (depth + 1);
            size_t add = (op & 0xf0) == 0xf0 ? 100 + 2 * (size_t)u8(g) : u8(g) % 16;
            if (keep + add > MAX_DEPTH)
                add = MAX_DEPTH - keep;
            /* cs[] is callee first: the kept frames move down */
            memmove(cs + add, cs + depth - keep, keep * sizeof *cs);
            uint64_t spread = op & 0x40 ? 200 : 12;
            for (size_t i = 0; i < add; i++)
                cs[i] = 1 + u8(g) % spread;
            depth = keep + add;
            unsigned k = u8(g);
            int64_t id;
            st = mt_writer_alloc(w, t, lengths[k % 9], samples[(k / 9) % 7],
                                 (mt_source)((k / 63) % 3), cs, depth, odd_locate, NULL,
                                 &id);
            if (!st)
                next_id = id + 1;
            break;
        }
        case 4: case 5:
            if (next_id) {
                unsigned k = u8(g);
                int64_t id = k == 0 ? next_id - 1 : (int64_t)(k - 1) % next_id;
                st = (op & 7) == 4 ? mt_writer_promote(w, t, id) : mt_writer_collect(w, t, id);
            }
            break;
        case 6:
            if ((op & 0x80) && nd > 1) {
                /* another domain: the current one flushed first */
                st = mt_writer_flush(w);
                next_ids[d] = next_id;
                d = (int)(u8(g) % (unsigned)nd);
                w = ws[d];
                next_id = next_ids[d];
            } else {
                t += jumps[u8(g) % 5];
            }
            break;
        default:
            st = mt_writer_flush(w);
            *flushed = 1;
            break;
        }
        if (st)
            die("writer: %s (%d)", mt_writer_error(w), st);
    }
    /* the current domain last: its events are the file's last */
    for (int i = 0; i < nd; i++)
        if (i != d && mt_writer_close(ws[i]))
            die("writer of domain %d: cannot finish the trace", i);
    if (mt_writer_close(w))
        die("writer of domain %d: cannot finish the trace", d);
    *ndom = nd;
    return version;
}

/* ---- the target -------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (trace_fd < 0) {
        setup();
        odd_locations_init();
    }
    if (size < 2)
        return 0;
    const char *const *line = commands[data[0] % NCOMMANDS];
    unsigned flags = data[1];
    int generated = flags & 1, version = 2, flushed = 0, ndom = 1;
    uint8_t *trace = NULL;      /* a generated trace's bytes */
    size_t trace_n = 0;
    if (generated) {
        input g = {data + 2, size - 2, 0};
        version = gen(&g, &flushed, &ndom);
        trace = get_file(trace_fd, &trace_n);
        const char *save = getenv("MT_FUZZ_SAVE");   /* for a look at it */
        FILE *f = save ? fopen(save, "wb") : NULL;
        if (f) {
            fwrite(trace, 1, trace_n, f);
            fclose(f);
        }
    } else {
        put_file(trace_fd, data + 2, size - 2);
    }
    put_file(out_fd, NULL, 0);
    if (flags & 2)
        unsetenv("MEMTRACE_THREADS");
    else
        setenv("MEMTRACE_THREADS", "1", 1);

    char vbuf[4];
    snprintf(vbuf, sizeof vbuf, "%d", version);
    char *argv[12];
    int argc = 0;
    argv[argc++] = (char *)"memtrace";
    for (int i = 0; i < 10 && line[i]; i++) {
        const char *a = line[i];
        if (strcmp(a, "T") == 0)
            a = trace_path;
        else if (strcmp(a, "O") == 0)
            a = out_path;
        else if (strcmp(a, "V") == 0)
            a = vbuf;
        argv[argc++] = (char *)a;
    }
    argv[argc] = NULL;
    int status = cli_main(argc, argv);
    fflush(stdout);
    if (generated) {
        /* (copy and strip-names rewrite with one writer: documented to
         * refuse traces of several domains whose ids are not in order) */
        int may_refuse = ndom > 1 && (strcmp(line[0], "copy") == 0 ||
                                      strcmp(line[0], "strip-names") == 0);
        if (status != 0 && !(may_refuse && status == 1))
            die("memtrace %s exited %d on a well-formed trace", line[0], status);
        if (strcmp(line[0], "copy") == 0 && !flushed && ndom == 1) {
            size_t n;
            uint8_t *copy = get_file(out_fd, &n);
            if (n != trace_n || memcmp(copy, trace, n) != 0)
                die("memtrace copy changed a well-formed trace (%zu bytes in, %zu out)",
                    trace_n, n);
            free(copy);
        }
    } else if (status != 0 && status != 1) {
        die("memtrace %s exited %d", line[0], status);
    }
    free(trace);
    return 0;
}
