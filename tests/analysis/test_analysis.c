/*
 * test_analysis.c - unit tests of src/analysis: estimates, every filter
 * option alone (and a few combinations), --hide sites, the live-heap
 * timeline and its peak, on the synthetic trace of synth.h where every
 * expected value is exact; and newcodes.h's rule for which frames need
 * their codes looked up.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/newcodes.h"
#include "synth.h"

static int fails, passes;
static char path[256];

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) {                                                           \
            passes++;                                                         \
        } else {                                                              \
            fails++;                                                          \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                       \
            printf(__VA_ARGS__);                                              \
            printf("\n");                                                     \
        }                                                                     \
    } while (0)

typedef struct acc {
    int64_t samples, objects;
    char sites[512];
} acc;

static int on_obj(void *ctx, const mt_object *o)
{
    acc *a = ctx;
    a->samples += o->nsamples;
    a->objects++;
    const char *site = o->stack->site ? o->stack->site->function : "-";
    if (!strstr(a->sites, site)) {
        strcat(a->sites, site);
        strcat(a->sites, ",");
    }
    return 0;
}

/* Samples of the objects accepted by the filter given as arguments
 * (NULL-terminated); -1 if parsing or reading failed. */
static int64_t run(acc *a, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, a);
    for (char *s; (s = va_arg(ap, char *));)
        argv[argc++] = s;
    va_end(ap);
    mt_filter f;
    mt_filter_init(&f);
    char err[256];
    for (int i = 0; i < argc;) {
        if (mt_filter_parse_arg(&f, argc, argv, &i, err, sizeof err) != 1) {
            printf("parse error: %s\n", err);
            mt_filter_free(&f);
            return -1;
        }
    }
    int64_t peak_t = 0;
    if (f.live_mode == MT_LIVE_PEAK) {
        mt_timeline tl;
        mt_timeline_init(&tl);
        mt_scan s1 = {0};
        s1.filter = &f;
        s1.live_at = -1;
        s1.timeline = &tl;
        if (mt_scan_run(&s1, path) != MT_OK)
            return -1;
        int64_t live;
        mt_timeline_peak(&tl, &peak_t, &live);
        mt_scan_free(&s1);
        mt_timeline_free(&tl);
    }
    memset(a, 0, sizeof *a);
    mt_scan s = {0};
    s.filter = &f;
    s.live_at = mt_filter_live_at(&f, peak_t);
    s.on_object = on_obj;
    s.ctx = a;
    s.need_stacks = 1;
    int st = mt_scan_run(&s, path);
    mt_scan_free(&s);
    mt_filter_free(&f);
    return st == MT_OK ? a->samples : -1;
}

#define EXPECT(want, ...)                                                     \
    do {                                                                      \
        acc a_;                                                               \
        int64_t got_ = run(&a_, __VA_ARGS__, NULL);                           \
        CHECK(got_ == (want), "%s: got %lld samples, want %lld", #__VA_ARGS__, \
              (long long)got_, (long long)(want));                            \
    } while (0)

static void test_estimates(void)
{
    mt_trace_info info = {0};
    info.sample_rate = 0.5;
    info.word_size = 64;
    CHECK(mt_est_bytes(71, &info) == 1136.0, "est 71");
    info.word_size = 32;
    CHECK(mt_est_bytes(3, &info) == 24.0, "est 32-bit");
    info.sample_rate = 1e-5;
    info.word_size = 64;
    CHECK(fabs(mt_est_bytes(1, &info) - 800000.0) < 1e-6, "est 1e-5");
    CHECK(mt_est_rse(100) == 0.1, "rse 100");
    CHECK(mt_est_rse(0) == 0.0, "rse 0");
}

static void test_filters(void)
{
    acc a;
    CHECK(run(&a, NULL) == 71 && a.objects == 7, "no filter: %lld", (long long)a.samples);
    EXPECT(17, "--from", "0.0002");
    EXPECT(54, "--to", "0.0002");
    EXPECT(3, "--from=0.00001", "--to=0.00002");
    EXPECT(61, "--live-at", "0.0006");
    EXPECT(54, "--live-at", "0.0000201");   /* objs 0,1,2 live at 20 us */
    EXPECT(53, "--live-at", "0.0001");       /* obj 0 collected at 100 us */
    EXPECT(51, "--live-at", "end");
    EXPECT(61, "--live-at", "peak");
    EXPECT(63, "--min-size", "80");
    EXPECT(2, "--max-size", "16");
    EXPECT(50, "--min-size", "0.5k");
    EXPECT(64, "--min-lifetime", "0.0003");
    EXPECT(7, "--max-lifetime", "0.0001");
    EXPECT(6, "--source", "minor");
    EXPECT(63, "--source", "major");
    EXPECT(2, "--source", "external");
    EXPECT(8, "--source", "minor", "--source", "external");
    EXPECT(8, "--in", "alloc_b");
    EXPECT(50, "--in", "Array");
    EXPECT(10, "--not-in", "alloc_a");
    EXPECT(2, "--in", "inl_outer");
    EXPECT(0, "--in", "alloc_a", "--in", "alloc_b");
    EXPECT(71, "--hide", "Array");
    /* combinations */
    EXPECT(10, "--source", "major", "--live-at", "0.0007", "--in", "alloc_a",
           "--not-in", "Array");
    EXPECT(1, "--live-at", "end", "--max-size", "8");
    /* peak of the minor heap only: objs 0 (0-100), 4 (250-), 6 (950-1000) */
    EXPECT(5, "--source", "minor", "--live-at", "peak");

    run(&a, NULL);
    CHECK(strcmp(a.sites, "alloc_a,inl_inner,alloc_b,Stdlib.Array.make,") == 0,
          "sites: %s", a.sites);
    run(&a, "--hide", "Array", NULL);
    CHECK(!strstr(a.sites, "Array"), "hide: %s", a.sites);
    run(&a, "--hide", "inl_inner", "--hide", "alloc", NULL);
    CHECK(strstr(a.sites, "inl_outer") && strstr(a.sites, "main") &&
          !strstr(a.sites, "alloc"), "hide inlined: %s", a.sites);

    /* parse errors */
    mt_filter f;
    mt_filter_init(&f);
    char err[256];
    char *bad[][2] = {{"--from", "x"}, {"--live-at", "soon"},
                      {"--source", "heap"}, {"--min-size", "-1"},
                      {"--max-lifetime", "1s"}, {"--in", ""}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int i = 0;
        CHECK(mt_filter_parse_arg(&f, 2, bad[k], &i, err, sizeof err) == -1,
              "bad %s %s accepted", bad[k][0], bad[k][1]);
    }
    char *missing[] = {"--to"};
    int i = 0;
    CHECK(mt_filter_parse_arg(&f, 1, missing, &i, err, sizeof err) == -1,
          "missing value");
    char *other[] = {"--limit", "3"};
    i = 0;
    CHECK(mt_filter_parse_arg(&f, 2, other, &i, err, sizeof err) == 0 && i == 0,
          "non-filter option");
    mt_filter_free(&f);

    /* bounds no object can meet, in either order, are refused by
     * mt_filter_check once all options are parsed (each option alone is
     * accepted); equal sizes and lifetimes are a window, equal times are
     * not. The message names both options and their values. */
    struct {
        char *argv[6];
        int argc;
        const char *msg;        /* NULL: accepted */
    } pairs[] = {
        {{"--from", "2", "--to", "1"}, 4, "--from 2 must be before --to 1"},
        {{"--to", "1", "--from", "1"}, 4, "--from 1 must be before --to 1"},
        {{"--min-size", "2k", "--max-size", "1k"}, 4, "--min-size 2048 is above --max-size 1024"},
        {{"--max-lifetime", "1", "--min-lifetime", "1.5"}, 4,
         "--min-lifetime 1.5 is above --max-lifetime 1"},
        {{"--min-size", "1k", "--max-size", "1k"}, 4, NULL},
        /* a repeated option: its last value counts, wherever it is */
        {{"--to", "0.3", "--from", "0.5", "--from", "0.1"}, 6, NULL},
        {{"--from", "0.1", "--to", "0.3", "--from", "0.5"}, 6, "--from 0.5 must be before --to 0.3"},
        {{"--max-size", "100", "--min-size", "1k", "--min-size", "16"}, 6, NULL},
        {{"--max-lifetime", "0.1", "--min-lifetime", "1", "--min-lifetime", "0"}, 6, NULL},
        {{"--max-lifetime", "0.1", "--min-lifetime", "0", "--min-lifetime", "0.25"}, 6,
         "--min-lifetime 0.25 is above --max-lifetime 0.1"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        mt_filter_init(&f);
        int ok = 1;
        for (i = 0; ok && i < pairs[k].argc;)
            ok = mt_filter_parse_arg(&f, pairs[k].argc, pairs[k].argv, &i, err, sizeof err) == 1;
        CHECK(ok, "pair %zu: an option refused: %s", k, err);
        err[0] = 0;
        int st = mt_filter_check(&f, err, sizeof err);
        if (pairs[k].msg)
            CHECK(st == -1 && strcmp(err, pairs[k].msg) == 0,
                  "pair %zu (%s %s ...): got %d '%s', want '%s'", k, pairs[k].argv[0],
                  pairs[k].argv[1], st, err, pairs[k].msg);
        else
            CHECK(st == 0, "pair %zu (%s %s ...): refused: %s", k, pairs[k].argv[0],
                  pairs[k].argv[1], err);
        mt_filter_free(&f);
    }

    /* sizes: k, m, g, t in either case, alone or followed by iB, B or b, are
     * powers of 1024; b or B alone, or nothing, bytes */
    struct {
        const char *text;
        double bytes;           /* -1: refused */
    } sizes[] = {
        {"16", 16}, {"16b", 16}, {"16B", 16}, {"0.5k", 512}, {"1k", 1024}, {"1K", 1024},
        {"1KiB", 1024}, {"1kiB", 1024}, {"1kB", 1024}, {"1kb", 1024}, {"1KB", 1024},
        {"2m", 2097152}, {"2M", 2097152}, {"2MiB", 2097152}, {"2MB", 2097152},
        {"1g", 1073741824}, {"1G", 1073741824}, {"1GiB", 1073741824}, {"1gb", 1073741824},
        {"1t", 1099511627776.}, {"1TiB", 1099511627776.}, {"1e3B", 1000},
        {"1KIB", -1}, {"1Kib", -1}, {"1iB", -1}, {"1KiBB", -1}, {"1kBB", -1}, {"1bb", -1},
        {"1x", -1}, {"1p", -1}, {"1 k", -1}, {"k", -1}, {"1k ", -1},
    };
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char *argv[] = {"--min-size", (char *)sizes[k].text};
        mt_filter_init(&f);
        i = 0;
        int st = mt_filter_parse_arg(&f, 2, argv, &i, err, sizeof err);
        if (sizes[k].bytes < 0)
            CHECK(st == -1, "--min-size '%s' accepted (%g bytes)", sizes[k].text, f.min_size);
        else
            CHECK(st == 1 && f.min_size == sizes[k].bytes, "--min-size '%s': %d, %g bytes, want %g",
                  sizes[k].text, st, f.min_size, sizes[k].bytes);
        mt_filter_free(&f);
    }
}

static void test_timeline(void)
{
    mt_timeline tl;
    CHECK(mt_timeline_init(&tl) == 0, "init");
    mt_scan s = {0};
    s.live_at = -1;
    s.timeline = &tl;
    CHECK(mt_scan_run(&s, path) == MT_OK, "scan: %s", s.err);
    CHECK(s.end == 1000 && s.total_samples == 71, "end %lld total %lld",
          (long long)s.end, (long long)s.total_samples);
    int64_t t, live, a, c;
    mt_timeline_peak(&tl, &t, &live);
    CHECK(t == 600 && live == 61, "peak %lld at %lld", (long long)live, (long long)t);
    mt_timeline_at(&tl, 299, &a, &c);
    CHECK(a == 57 && c == 1, "at 299: %lld %lld", (long long)a, (long long)c);
    mt_timeline_at(&tl, 1000, &a, &c);
    CHECK(a == 71 && c == 20, "at end: %lld %lld", (long long)a, (long long)c);
    mt_scan_free(&s);

    /* coarsening keeps the sums */
    mt_timeline_free(&tl);
    mt_timeline_init(&tl);
    mt_timeline_add(&tl, 5, 10, 7);
    mt_timeline_add(&tl, 100000, 3000000, 5);
    mt_timeline_add(&tl, 200000, MT_NEVER, 1);
    tl.end = 5000000;
    CHECK(tl.width == 64, "width %lld", (long long)tl.width);
    mt_timeline_at(&tl, 5000000, &a, &c);
    CHECK(a == 13 && c == 12, "coarse sums %lld %lld", (long long)a, (long long)c);
    mt_timeline_peak(&tl, &t, &live);
    CHECK(live == 6 && t == mt_timeline_resolve(&tl, 200000 + 63) &&
          t >= 200000 && t < 200064, "coarse peak %lld at %lld", (long long)live,
          (long long)t);
    mt_timeline_free(&tl);

    /* a jump of 2^40 us: bins 2^25 us wide in one step, sums kept */
    mt_timeline_init(&tl);
    mt_timeline_add(&tl, 3, 7, 2);
    mt_timeline_add(&tl, 70000, MT_NEVER, 3);
    mt_timeline_add(&tl, (int64_t)1 << 40, ((int64_t)1 << 40) + 5, 4);
    tl.end = ((int64_t)1 << 40) + 5;
    CHECK(tl.width == (int64_t)1 << 25, "jump: width %lld", (long long)tl.width);
    mt_timeline_at(&tl, ((int64_t)1 << 25) - 1, &a, &c);
    CHECK(a == 5 && c == 2, "jump: first bin %lld %lld", (long long)a, (long long)c);
    mt_timeline_at(&tl, (int64_t)1 << 41, &a, &c);   /* (every bin) */
    CHECK(a == 9 && c == 6, "jump: sums %lld %lld", (long long)a, (long long)c);
    mt_timeline_free(&tl);

    char buf[64];
    mt_fmt_bytes(buf, sizeof buf, 1136);
    CHECK(strcmp(buf, "1.11 KiB") == 0, "fmt %s", buf);
    mt_fmt_bytes(buf, sizeof buf, 976);
    CHECK(strcmp(buf, "976 B") == 0, "fmt %s", buf);
}

/* newcodes.h: lookups are needed after a miss codeword, for a frame 0 (a
 * bucket never filled), and for good once a dropped (stale) decode brought
 * new codes; otherwise not, whatever the frames are. */
static void test_newcodes(void)
{
    mt_newcodes g = {0};
    uint64_t bt[4] = {11, 22, 33, 44};
    mt_event ev = {0};
    ev.kind = MT_EVENT_ALLOC;
    ev.backtrace = bt;
    ev.backtrace_len = 4;
    ev.common_prefix = 2;
    CHECK(mt_newcodes_possible(&g, &ev, 2) == 0, "hits only: no lookup");
    ev.new_codes = 1;
    CHECK(mt_newcodes_possible(&g, &ev, 2) == 1, "a miss: lookups");
    ev.new_codes = 0;
    bt[3] = 0;
    CHECK(mt_newcodes_possible(&g, &ev, 2) == 1, "frame 0 among the new frames");
    CHECK(mt_newcodes_possible(&g, &ev, 4) == 0, "frame 0 in the prefix: seen before");
    bt[3] = 44;
    CHECK(g.check_all == 0, "no dropped decode yet");
    ev.common_prefix = 9;                       /* > backtrace_len: dropped */
    CHECK(mt_newcodes_possible(&g, &ev, 0) == 0, "a dropped decode without misses");
    ev.new_codes = 2;
    CHECK(mt_newcodes_possible(&g, &ev, 0) == 1, "a dropped decode with misses");
    ev.new_codes = 0;
    ev.common_prefix = 2;
    CHECK(mt_newcodes_possible(&g, &ev, 2) == 1, "every frame after a dropped decode");
}

static void test_errors(void)
{
    mt_scan s = {0};
    s.live_at = -1;
    CHECK(mt_scan_run(&s, "/nonexistent/x.ctf") != MT_OK && s.err[0], "missing file");
    mt_scan_free(&s);
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/mt-analysis-%d.ctf", tmp ? tmp : "/tmp",
             (int)getpid());
    if (synth_write(path, 1)) {
        printf("cannot write %s\n", path);
        return 1;
    }
    test_estimates();
    test_filters();
    test_timeline();
    test_newcodes();
    test_errors();
    unlink(path);
    printf("%d passed, %d failed\n", passes, fails);
    return fails != 0;
}
