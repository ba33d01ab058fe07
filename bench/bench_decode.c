/*
 * bench_decode.c - read-side throughput benchmark.
 *
 *   bench_decode TRACE [REPS (default 3)] [MODE (all|read|full|skip)]
 *
 * In one run, REPS rounds of, interleaved:
 *   read  plain pass: read() the file in 1 MiB chunks and sum it as 64-bit
 *         words (every byte is touched)
 *         (the floor any decoder reading the file must pay);
 *   full  mt_reader_open_file + mt_reader_next over every event, decoding
 *         backtraces (counts events, sums backtrace_len, xors the innermost
 *         frame so the work cannot be optimised away);
 *   skip  the same with skip_backtraces = 1.
 * Reports, per pass, the best and the median wall time, the least CPU time
 * (a wall time well above it means the machine was busy), MB/s (10^6 bytes of trace
 * per second), events/s, and the ratio of full and skip to the plain read.
 * The page cache is not dropped: the file is expected to be warm (the first
 * round warms it), so this measures CPU cost, not disk speed.
 * MODE read|full|skip runs only that pass (e.g. under /usr/bin/time -v to
 * get the peak RSS of a full decode).
 * The last lines are machine-readable "RESULT key value" pairs for run.sh.
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

#define MAX_REPS 64

typedef struct result {
    uint64_t events, allocs, frames, check;
} result;

static int pass_read(const char *path, result *res)
{
    static unsigned char *buf;
    const size_t chunk = 1u << 20;
    if (!buf && !(buf = malloc(chunk)))
        return -1;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "bench_decode: %s: %s\n", path, strerror(errno));
        return -1;
    }
    uint64_t sum = 0, total = 0;
    for (;;) {
        ssize_t n = read(fd, buf, chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "bench_decode: read: %s\n", strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        /* touch every byte: 64-bit words, then the tail */
        size_t nw = (size_t)n / 8;
        for (size_t i = 0; i < nw; i++) {
            uint64_t w;
            memcpy(&w, buf + 8 * i, 8);
            sum += w;
        }
        for (size_t i = nw * 8; i < (size_t)n; i++)
            sum += buf[i];
        total += (uint64_t)n;
    }
    close(fd);
    memset(res, 0, sizeof *res);
    res->frames = total;
    res->check = sum;
    return 0;
}

static int pass_decode(const char *path, int skip, result *res)
{
    mt_reader_options opt;
    memset(&opt, 0, sizeof opt);
    opt.skip_backtraces = skip;
    mt_reader *r = mt_reader_create(&opt);
    if (!r) {
        fprintf(stderr, "bench_decode: out of memory\n");
        return -1;
    }
    int rc = mt_reader_open_file(r, path);
    if (rc != MT_OK) {
        fprintf(stderr, "bench_decode: open %s: %s: %s\n", path, mt_status_name(rc),
                mt_reader_error(r));
        mt_reader_close(r);
        return -1;
    }
    uint64_t events = 0, allocs = 0, frames = 0, check = 0;
    mt_event ev;
    while ((rc = mt_reader_next(r, &ev)) == MT_OK) {
        events++;
        if (ev.kind == MT_EVENT_ALLOC) {
            allocs++;
            frames += ev.backtrace_len;
            if (ev.backtrace_len)
                check ^= ev.backtrace[ev.backtrace_len - 1];
            check += (uint64_t)ev.length;
        } else {
            check += (uint64_t)ev.id;
        }
    }
    if (rc != MT_EOF) {
        fprintf(stderr, "bench_decode: %s after %" PRIu64 " events: %s: %s\n", path, events,
                mt_status_name(rc), mt_reader_error(r));
        mt_reader_close(r);
        return -1;
    }
    mt_reader_close(r);
    res->events = events;
    res->allocs = allocs;
    res->frames = frames;
    res->check = check;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s TRACE [REPS (default 3)] [all|read|full|skip]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *mode = argc > 3 ? argv[3] : "all";
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench_decode: REPS must be 1..%d\n", MAX_REPS);
        return 2;
    }
    int do_read = !strcmp(mode, "all") || !strcmp(mode, "read");
    int do_full = !strcmp(mode, "all") || !strcmp(mode, "full");
    int do_skip = !strcmp(mode, "all") || !strcmp(mode, "skip");
    if (!do_read && !do_full && !do_skip) {
        fprintf(stderr, "bench_decode: unknown mode %s\n", mode);
        return 2;
    }
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "bench_decode: %s: %s\n", path, strerror(errno));
        return 1;
    }
    double bytes = (double)sb.st_size;

    double t_read[MAX_REPS], t_full[MAX_REPS], t_skip[MAX_REPS];
    double c_read[MAX_REPS], c_full[MAX_REPS], c_skip[MAX_REPS];
    result r_read = {0}, r_full = {0}, r_skip = {0}, tmp;
    for (int i = 0; i < reps; i++) {
        double t0, c0;
        if (do_read) {
            t0 = bench_now();
            c0 = bench_cpu_now();
            if (pass_read(path, &tmp))
                return 1;
            t_read[i] = bench_now() - t0;
            c_read[i] = bench_cpu_now() - c0;
            r_read = tmp;
        }
        if (do_full) {
            t0 = bench_now();
            c0 = bench_cpu_now();
            if (pass_decode(path, 0, &tmp))
                return 1;
            t_full[i] = bench_now() - t0;
            c_full[i] = bench_cpu_now() - c0;
            if (i && (tmp.events != r_full.events || tmp.check != r_full.check)) {
                fprintf(stderr, "bench_decode: full decode not repeatable\n");
                return 1;
            }
            r_full = tmp;
        }
        if (do_skip) {
            t0 = bench_now();
            c0 = bench_cpu_now();
            if (pass_decode(path, 1, &tmp))
                return 1;
            t_skip[i] = bench_now() - t0;
            c_skip[i] = bench_cpu_now() - c0;
            r_skip = tmp;
        }
    }
    if (do_full && do_skip && r_full.events != r_skip.events) {
        fprintf(stderr, "bench_decode: full and skip decode disagree: %" PRIu64 " vs %" PRIu64
                        " events\n", r_full.events, r_skip.events);
        return 1;
    }
    uint64_t events = do_full ? r_full.events : r_skip.events;

    printf("bench_decode: %s, %.0f bytes, %d rounds (read/full/skip interleaved),"
           " page cache NOT dropped (warm file)\n", path, bytes, reps);
    if (do_full)
        printf("  events %" PRIu64 ", allocs %" PRIu64 ", avg event %.2f bytes,"
               " avg backtrace %.1f frames (check %016" PRIx64 ")\n",
               r_full.events, r_full.allocs, bytes / (double)r_full.events,
               r_full.allocs ? (double)r_full.frames / (double)r_full.allocs : 0.0,
               r_full.check);
    if (do_read)
        printf("  read pass checksum %016" PRIx64 " over %" PRIu64 " bytes\n", r_read.check,
               r_read.frames);
    printf("  %-22s %9s %9s %9s %10s %12s %9s\n", "pass", "best s", "median s", "cpu s",
           "MB/s(best)", "Mevents/s", "x read");
    double best_read = do_read ? bench_min(t_read, reps) : 0;
    struct {
        const char *name, *key;
        int on;
        double *t, *c;
    } rows[3] = {{"read (1 MiB chunks)", "read", do_read, t_read, c_read},
                 {"full decode", "full", do_full, t_full, c_full},
                 {"skip_backtraces", "skip", do_skip, t_skip, c_skip}};
    int busy = 0;
    for (int k = 0; k < 3; k++) {
        if (!rows[k].on)
            continue;
        double best = bench_min(rows[k].t, reps), med = bench_median(rows[k].t, reps);
        char ratio[32] = "-";
        if (do_read)
            snprintf(ratio, sizeof ratio, "%.2f", best / best_read);
        char evs[32] = "-";
        if (k > 0)
            snprintf(evs, sizeof evs, "%.1f", (double)events / best / 1e6);
        double cpu = bench_min(rows[k].c, reps);
        if (best > 1.15 * cpu + 0.002)
            busy = 1;
        printf("  %-22s %9.3f %9.3f %9.3f %10.0f %12s %9s\n", rows[k].name, best, med, cpu,
               bytes / best / 1e6, evs, ratio);
    }
    printf("  (x read = best time of the pass / best time of the plain read;"
           " cpu s = least CPU time, user + system)\n");
    if (busy)
        printf("  WARNING: wall time well above CPU time: the machine was busy, figures are low\n");
    printf("RESULT bytes %.0f\n", bytes);
    printf("RESULT events %" PRIu64 "\n", events);
    for (int k = 0; k < 3; k++) {
        if (!rows[k].on)
            continue;
        double best = bench_min(rows[k].t, reps);
        printf("RESULT %s_best_s %.4f\n", rows[k].key, best);
        printf("RESULT %s_median_s %.4f\n", rows[k].key, bench_median(rows[k].t, reps));
        printf("RESULT %s_cpu_s %.4f\n", rows[k].key, bench_min(rows[k].c, reps));
        printf("RESULT %s_MBps %.1f\n", rows[k].key, bytes / best / 1e6);
        if (k > 0)
            printf("RESULT %s_Meps %.2f\n", rows[k].key, (double)events / best / 1e6);
        if (do_read && k > 0)
            printf("RESULT %s_x_read %.2f\n", rows[k].key, best / best_read);
    }
    return 0;
}
