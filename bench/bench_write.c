/*
 * bench_write.c - writer throughput benchmark.
 *
 *   bench_write OUT.ctf [N_EVENTS (default 50000000)] [SEED (default 1)]
 *
 * Builds a small synthetic program (400 location codes, one location each)
 * and 64 call stacks 30-60 frames deep produced by a call-tree walk, so that
 * neighbouring stacks share long prefixes. It first writes every stack once
 * (and a few thousand more events) to warm the codec cache and the location
 * tables, flushes, and then times writing N_EVENTS events: short minor
 * allocations (1..16 words) whose stacks step through the set (neighbours
 * mostly), each followed most of the time by the collection of an earlier,
 * recently allocated object (FIFO, deltas < 256). The time includes the final
 * mt_writer_close (last flush). The file is written through the page cache
 * (no fsync). OUT "-" writes to a sink that only counts bytes (encoder cost
 * without the write() calls).
 * Reports events/s and MB/s (10^6 bytes/s of trace written) from the wall
 * time, and the CPU time (a wall time well above it means the machine was
 * busy or the kernel throttled the writes); the last lines
 * are machine-readable "RESULT key value" pairs for run.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "bench_util.h"

#define NCODES 400
#define NSTACKS 64
#define MAX_DEPTH 64
#define PATTERN 8192 /* power of two */
#define CODE_BASE 0x3BBB00000000ull

static uint64_t g_code[NCODES];
static mt_location g_loc[NCODES];
static char g_names[NCODES][2][40];
static int g_child[NCODES][4];

static uint64_t g_stack[NSTACKS][MAX_DEPTH]; /* callee first */
static int g_depth[NSTACKS];

typedef struct step {
    uint8_t stack, length, collect, dt;
} step;
static step g_pat[PATTERN];

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    uint64_t idx = (code - CODE_BASE) >> 8;
    if (code < CODE_BASE || idx >= NCODES || g_code[idx] != code)
        return 1;
    *locs = &g_loc[idx];
    *n = 1;
    return 0;
}

static void build(bench_rng *rng)
{
    for (int c = 0; c < NCODES; c++) {
        g_code[c] = CODE_BASE + ((uint64_t)c << 8) + bench_rng_below(rng, 256);
        snprintf(g_names[c][0], sizeof g_names[c][0], "src/bench_%02d.ml", c % 40);
        snprintf(g_names[c][1], sizeof g_names[c][1], "Bench_%02d.f_%03d", c % 40, c);
        g_loc[c].filename = g_names[c][0];
        g_loc[c].function = g_names[c][1];
        g_loc[c].line = (int)bench_rng_range(rng, 1, 2000);
        g_loc[c].start_char = (int)bench_rng_range(rng, 0, 80);
        g_loc[c].end_char = g_loc[c].start_char + (int)bench_rng_range(rng, 3, 60);
        for (int k = 0; k < 4; k++)
            g_child[c][k] = (int)bench_rng_below(rng, NCODES);
    }
    /* call-tree walk: each stack = previous with 1-4 innermost frames replaced */
    int st[MAX_DEPTH], depth = 0;
    st[depth++] = 0;
    while (depth < 40)
        st[depth] = g_child[st[depth - 1]][bench_rng_below(rng, 4)], depth++;
    for (int s = 0; s < NSTACKS; s++) {
        int pop = (int)bench_rng_range(rng, 1, 4);
        int push = (int)bench_rng_range(rng, 1, 4);
        depth -= pop;
        if (depth + push < 30)
            push = 30 - depth;
        if (depth + push > 60)
            push = 60 - depth;
        for (int i = 0; i < push; i++, depth++)
            st[depth] = g_child[st[depth - 1]][bench_rng_below(rng, 4)];
        g_depth[s] = depth;
        for (int i = 0; i < depth; i++)
            g_stack[s][depth - 1 - i] = g_code[st[i]];
    }
    int cur = 0;
    for (int i = 0; i < PATTERN; i++) {
        /* mostly stay or move to a neighbouring stack */
        int64_t mv = bench_rng_range(rng, -1, 2);
        cur = (int)((cur + mv + NSTACKS) % NSTACKS);
        g_pat[i].stack = (uint8_t)cur;
        g_pat[i].length = (uint8_t)bench_rng_range(rng, 1, 16);
        g_pat[i].collect = bench_rng_below(rng, 10) != 0; /* 90% */
        g_pat[i].dt = (uint8_t)bench_rng_below(rng, 3);
    }
}

typedef struct count_sink {
    uint64_t bytes;
} count_sink;

static int sink_count(void *ctx, const void *buf, size_t len)
{
    (void)buf;
    ((count_sink *)ctx)->bytes += len;
    return 0;
}

static void fail(const char *what, int rc, mt_writer *w)
{
    fprintf(stderr, "bench_write: %s: %s: %s\n", what, mt_status_name(rc),
            w ? mt_writer_error(w) : "");
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s OUT.ctf|- [N_EVENTS (default 50000000)] [SEED]\n", argv[0]);
        return 2;
    }
    const char *out = argv[1];
    uint64_t n_events = argc > 2 ? strtoull(argv[2], NULL, 0) : 50000000ull;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    bench_rng rng;
    bench_rng_seed(&rng, seed);
    build(&rng);

    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "bench_write";
    info.host_name = "bench-host";
    info.runtime_params = "";
    info.pid = 4242;
    info.start_time = 1764676800000000ll;
    info.context = "memtrace-c writer benchmark";
    mt_writer_options wopt;
    memset(&wopt, 0, sizeof wopt);
    wopt.format_version = 2;
    wopt.no_fork_check = 1;

    int to_sink = strcmp(out, "-") == 0;
    count_sink cs = {0};
    int fd = -1;
    mt_writer *w = NULL;
    char errbuf[256] = "";
    int rc;
    if (to_sink) {
        rc = mt_writer_open_sink(&w, sink_count, &cs, &info, &wopt, errbuf, sizeof errbuf);
    } else {
        fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fprintf(stderr, "bench_write: %s: %s\n", out, strerror(errno));
            return 1;
        }
        rc = mt_writer_open_fd(&w, fd, &info, &wopt, errbuf, sizeof errbuf);
    }
    if (rc != MT_OK) {
        fprintf(stderr, "bench_write: open: %s: %s\n", mt_status_name(rc), errbuf);
        return 1;
    }

    int64_t now = info.start_time;
    int64_t next_collect = 0, nalloc = 0;
    /* warm-up: every stack once, then a pattern cycle; not timed */
    for (int s = 0; s < NSTACKS; s++) {
        rc = mt_writer_alloc(w, now, 2, 1, MT_SOURCE_MINOR, g_stack[s], (size_t)g_depth[s],
                             locate, NULL, NULL);
        if (rc != MT_OK)
            fail("mt_writer_alloc", rc, w);
        nalloc++;
    }
    for (int i = 0; i < PATTERN; i++) {
        const step *p = &g_pat[i];
        rc = mt_writer_alloc(w, now, p->length, 1, MT_SOURCE_MINOR, g_stack[p->stack],
                             (size_t)g_depth[p->stack], locate, NULL, NULL);
        if (rc != MT_OK)
            fail("mt_writer_alloc", rc, w);
        nalloc++;
    }
    while (next_collect < nalloc - 16)
        if ((rc = mt_writer_collect(w, now, next_collect++)) != MT_OK)
            fail("mt_writer_collect", rc, w);
    if ((rc = mt_writer_flush(w)) != MT_OK)
        fail("mt_writer_flush", rc, w);
    uint64_t bytes0 = cs.bytes;
    if (!to_sink) {
        struct stat sb;
        fstat(fd, &sb);
        bytes0 = (uint64_t)sb.st_size;
    }

    uint64_t ev = 0, allocs = 0, collects = 0;
    unsigned k = 0;
    double t0 = bench_now(), c0 = bench_cpu_now();
    while (ev < n_events) {
        const step *p = &g_pat[k++ & (PATTERN - 1)];
        now += p->dt;
        rc = mt_writer_alloc(w, now, p->length, 1, MT_SOURCE_MINOR, g_stack[p->stack],
                             (size_t)g_depth[p->stack], locate, NULL, NULL);
        if (rc != MT_OK)
            fail("mt_writer_alloc", rc, w);
        nalloc++;
        allocs++;
        ev++;
        int64_t lag = nalloc - next_collect;
        if (ev < n_events && (lag > 200 || (p->collect && lag > 8))) {
            rc = mt_writer_collect(w, now, next_collect++);
            if (rc != MT_OK)
                fail("mt_writer_collect", rc, w);
            collects++;
            ev++;
        }
    }
    rc = mt_writer_close(w);
    double t = bench_now() - t0, cpu = bench_cpu_now() - c0;
    if (rc != MT_OK)
        fail("mt_writer_close", rc, NULL);
    uint64_t bytes1 = cs.bytes;
    if (!to_sink) {
        struct stat sb;
        if (fstat(fd, &sb) != 0 || close(fd) != 0) {
            fprintf(stderr, "bench_write: %s: %s\n", out, strerror(errno));
            return 1;
        }
        bytes1 = (uint64_t)sb.st_size;
    }
    uint64_t bytes = bytes1 - bytes0;
    printf("bench_write: %s: %" PRIu64 " events (%" PRIu64 " short allocs, %" PRIu64
           " collects) after warm-up, %d stacks of %d..%d frames\n",
           to_sink ? "(counting sink)" : out, ev, allocs, collects, NSTACKS, 30, 60);
    printf("  %.3f s (cpu %.3f s), %.2f Mevents/s, %.1f MB/s, %.2f bytes/event, %" PRIu64
           " bytes\n", t, cpu, (double)ev / t / 1e6, (double)bytes / t / 1e6,
           (double)bytes / (double)ev, bytes);
    if (t > 1.15 * cpu + 0.002)
        printf("  WARNING: wall time well above CPU time: the machine was busy"
               " (or waiting on writeback), figures are low\n");
    printf("RESULT write_s %.4f\n", t);
    printf("RESULT write_cpu_s %.4f\n", cpu);
    printf("RESULT write_events %" PRIu64 "\n", ev);
    printf("RESULT write_bytes %" PRIu64 "\n", bytes);
    printf("RESULT write_Meps %.2f\n", (double)ev / t / 1e6);
    printf("RESULT write_MBps %.1f\n", (double)bytes / t / 1e6);
    return 0;
}
