/*
 * test_flamegraph_options.c - `memtrace flamegraph` options on a small trace
 * written here with the library's writer, whose folded output is known
 * exactly.
 *
 *   test_flamegraph_options CLI SECTION
 *
 * SECTION: default bytes bytes32 lines inverted live combined usage
 * help. Each section prints what it checked and exits non-zero on failure.
 *
 * The trace (sample rate 0.25, so one sample is 32 bytes with 64-bit words
 * and 16 bytes with 32-bit words); stacks caller first:
 *   id 0  main f f alloc        3 samples   (recursion folds: main;f;alloc)
 *   id 1  main g alloc          5 samples   (collected later)
 *   id 2  main f g f' alloc     2 samples   (f' = f at another line)
 *   id 3  main HK $ alloc       4 samples   (HK = h with k inlined, $ = code
 *                                            without location)
 *   id 4  main                  7 samples   (one frame: never printed)
 *   id 5  main f                1 sample    (an inner node with a count)
 * then: collect 1, collect 1 again (ignored), collect 4.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

enum { C_MAIN = 0x100, C_F = 0x200, C_F2 = 0x280, C_G = 0x300, C_HK = 0x400,
       C_NOLOC = 0x500, C_ALLOC = 0x600 };

static const mt_location L_main = {"main.ml", "main", 1, 0, 4};
static const mt_location L_f = {"f.ml", "f", 2, 0, 4};
static const mt_location L_f2 = {"f.ml", "f", 7, 2, 9};
static const mt_location L_g = {"g.ml", "g", 3, 0, 4};
static const mt_location L_hk[2] = {{"h.ml", "h", 5, 0, 4}, {"k.ml", "k", 6, 0, 4}};
static const mt_location L_alloc = {"a.ml", "alloc", 4, 0, 4};

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    *n = 1;
    switch (code) {
    case C_MAIN: *locs = &L_main; return 0;
    case C_F: *locs = &L_f; return 0;
    case C_F2: *locs = &L_f2; return 0;
    case C_G: *locs = &L_g; return 0;
    case C_HK: *locs = L_hk; *n = 2; return 0;
    case C_NOLOC: *locs = NULL; *n = 0; return 0;
    case C_ALLOC: *locs = &L_alloc; return 0;
    default: return -1;
    }
}

static char trace_path[4096];

static void cleanup(void)
{
    if (trace_path[0])
        unlink(trace_path);
}

/* Write the trace described above; word_size 64 or 32. */
static int write_trace(int word_size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(trace_path, sizeof trace_path, "%s/mt-fg-opts-XXXXXX.ctf",
             tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemps(trace_path, 4);
    if (fd < 0) {
        perror("mkstemps");
        trace_path[0] = 0;
        return -1;
    }
    atexit(cleanup);
    mt_trace_info info = {0};
    info.sample_rate = 0.25;
    info.word_size = word_size;
    info.executable_name = "fgtest";
    info.host_name = "localhost";
    info.runtime_params = "";
    info.pid = 77;
    info.start_time = 1700000000000000;
    mt_writer *w;
    char err[256];
    if (mt_writer_open_fd(&w, fd, &info, NULL, err, sizeof err) != MT_OK) {
        fprintf(stderr, "writer: %s\n", err);
        close(fd);
        return -1;
    }
    /* callee first, as the writer wants them */
    static const uint64_t s0[] = {C_ALLOC, C_F, C_F, C_MAIN};
    static const uint64_t s1[] = {C_ALLOC, C_G, C_MAIN};
    static const uint64_t s2[] = {C_ALLOC, C_F2, C_G, C_F, C_MAIN};
    static const uint64_t s3[] = {C_ALLOC, C_NOLOC, C_HK, C_MAIN};
    static const uint64_t s4[] = {C_MAIN};
    static const uint64_t s5[] = {C_F, C_MAIN};
    struct { const uint64_t *s; size_t n; int64_t ns; } a[] = {
        {s0, 4, 3}, {s1, 3, 5}, {s2, 5, 2}, {s3, 4, 4}, {s4, 1, 7}, {s5, 2, 1},
    };
    int64_t t = info.start_time;
    int st = MT_OK;
    for (size_t i = 0; i < sizeof a / sizeof a[0] && st == MT_OK; i++)
        st = mt_writer_alloc(w, t += 10, 3, a[i].ns, MT_SOURCE_MINOR, a[i].s,
                             a[i].n, locate, NULL, NULL);
    if (st == MT_OK)
        st = mt_writer_collect(w, t += 10, 1);
    if (st == MT_OK)   /* a second collect of the same object: ignored */
        st = mt_writer_collect(w, t += 10, 1);
    if (st == MT_OK)
        st = mt_writer_collect(w, t += 10, 4);
    if (st == MT_OK)
        st = mt_writer_finish(w);
    if (st != MT_OK)
        fprintf(stderr, "writer: %s\n", mt_writer_error(w));
    mt_writer_close(w);
    close(fd);
    return st == MT_OK ? 0 : -1;
}

static const char *cli;
static int failures;

/* Run CLI with args (a shell fragment; the trace path is appended when
 * with_trace); capture stdout; return the exit status (-1 on failure). */
static int run(const char *args, int with_trace, char *out, size_t cap)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s %s%s%s 2>/dev/null", cli, args,
             with_trace ? "'" : "", with_trace ? trace_path : "",
             with_trace ? "'" : "");
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_output(const char *args, const char *want)
{
    static char got[1 << 16];
    int rc = run(args, 1, got, sizeof got);
    if (rc != 0 || strcmp(got, want) != 0) {
        printf("FAIL memtrace %s TRACE: exit %d\n--- expected\n%s--- got\n%s---\n",
               args, rc, want, got);
        failures++;
    } else {
        printf("ok   memtrace %s TRACE\n", args);
    }
}

static void expect_status(const char *args, int want_rc, const char *must_contain)
{
    static char got[1 << 16];
    int rc = run(args, 0, got, sizeof got);
    if (rc != want_rc || (must_contain && !strstr(got, must_contain))) {
        printf("FAIL memtrace %s: exit %d (want %d)%s%s\n", args, rc, want_rc,
               must_contain ? ", stdout must contain " : "",
               must_contain ? must_contain : "");
        failures++;
    } else {
        printf("ok   memtrace %s -> exit %d\n", args, rc);
    }
}

#define DEFAULT_OUT \
    "main;f 1\n" \
    "main;f;alloc 3\n" \
    "main;f;g;alloc 2\n" \
    "main;g;alloc 5\n" \
    "main;h;k;alloc 4\n"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CLI SECTION\n", argv[0]);
        return 2;
    }
    cli = argv[1];
    const char *s = argv[2];
    int need_trace = strcmp(s, "usage") != 0 && strcmp(s, "help") != 0;
    if (need_trace && write_trace(strcmp(s, "bytes32") == 0 ? 32 : 64))
        return 1;

    if (strcmp(s, "default") == 0) {
        expect_output("flamegraph", DEFAULT_OUT);
    } else if (strcmp(s, "bytes") == 0) {
        /* 64-bit words: samples / 0.25 * 8 */
        expect_output("flamegraph --bytes",
                      "main;f 32\n"
                      "main;f;alloc 96\n"
                      "main;f;g;alloc 64\n"
                      "main;g;alloc 160\n"
                      "main;h;k;alloc 128\n");
    } else if (strcmp(s, "bytes32") == 0) {
        /* 32-bit words: samples / 0.25 * 4; the default is unchanged */
        expect_output("flamegraph", DEFAULT_OUT);
        expect_output("flamegraph --bytes",
                      "main;f 16\n"
                      "main;f;alloc 48\n"
                      "main;f;g;alloc 32\n"
                      "main;g;alloc 80\n"
                      "main;h;k;alloc 64\n");
    } else if (strcmp(s, "lines") == 0) {
        /* f at line 7 is another frame now; recursion at one line still folds */
        expect_output("flamegraph --lines",
                      "main (main.ml:1);f (f.ml:2) 1\n"
                      "main (main.ml:1);f (f.ml:2);alloc (a.ml:4) 3\n"
                      "main (main.ml:1);f (f.ml:2);g (g.ml:3);f (f.ml:7);alloc (a.ml:4) 2\n"
                      "main (main.ml:1);g (g.ml:3);alloc (a.ml:4) 5\n"
                      "main (main.ml:1);h (h.ml:5);k (k.ml:6);alloc (a.ml:4) 4\n");
    } else if (strcmp(s, "inverted") == 0) {
        expect_output("flamegraph --inverted",
                      "alloc;f;main 3\n"
                      "alloc;g;f;main 2\n"
                      "alloc;g;main 5\n"
                      "alloc;k;h;main 4\n"
                      "f;main 1\n");
    } else if (strcmp(s, "live") == 0) {
        /* id 1 (main;g;alloc) was collected; id 4 was too, but it had a
         * one-frame stack that is never printed anyway */
        expect_output("flamegraph --live-at-end",
                      "main;f 1\n"
                      "main;f;alloc 3\n"
                      "main;f;g;alloc 2\n"
                      "main;h;k;alloc 4\n");
    } else if (strcmp(s, "combined") == 0) {
        expect_output("flamegraph --live-at-end --bytes --inverted --lines",
                      "alloc (a.ml:4);f (f.ml:2);main (main.ml:1) 96\n"
                      "alloc (a.ml:4);f (f.ml:7);g (g.ml:3);f (f.ml:2);main (main.ml:1) 64\n"
                      "alloc (a.ml:4);k (k.ml:6);h (h.ml:5);main (main.ml:1) 128\n"
                      "f (f.ml:2);main (main.ml:1) 32\n");
    } else if (strcmp(s, "usage") == 0) {
        expect_status("flamegraph", 2, NULL);
        expect_status("flamegraph --no-such-option x.ctf", 2, NULL);
        expect_status("flamegraph a.ctf b.ctf", 2, NULL);
        expect_status("flamegraph /nonexistent/trace.ctf", 1, NULL);
    } else if (strcmp(s, "help") == 0) {
        static const char *needles[] = {"Usage: memtrace flamegraph", "Options:",
            "--bytes", "--lines", "--inverted", "--live-at-end", "Output",
            "Exit status"};
        for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
            expect_status("flamegraph --help", 0, needles[i]);
        expect_status("flamegraph -h", 0, "Usage: memtrace flamegraph");
        expect_status("help flamegraph", 0, "Usage: memtrace flamegraph");
    } else {
        fprintf(stderr, "unknown section %s\n", s);
        return 2;
    }
    printf("%s: %d failure(s)\n", s, failures);
    return failures ? 1 : 0;
}
