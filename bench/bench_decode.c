/*
 * bench_decode.c - read-side throughput benchmark.
 *
 *   bench_decode TRACE [REPS (default 3)] [MODE (all|read|full|skip|scan|scanskip)]
 *
 * In one run, REPS rounds of, interleaved:
 *   read  plain pass: read() the file in 1 MiB chunks and sum it as 64-bit
 *         words (every byte is touched)
 *         (the floor any decoder reading the file must pay);
 *   full  mt_reader_open_file + mt_reader_next over every event, decoding
 *         backtraces (counts events, sums backtrace_len, xors the innermost
 *         frame so the work cannot be optimised away);
 *   skip  the same with skip_backtraces = 1;
 *   scan, scanskip  the same two through mt_reader_scan (callback iteration,
 *         the library's fastest path) instead of mt_reader_next.
 * All decode passes must agree on the event count (full and scan also on a
 * checksum of the backtraces). Reports, per pass, the best and the median
 * wall time, the least CPU time (a wall time well above it means the machine
 * was busy), MB/s (10^6 bytes of trace per second), events/s, and the ratio
 * of each decode pass to the plain read.
 * The page cache is not dropped: the file is expected to be warm (the first
 * round warms it), so this measures CPU cost, not disk speed.
 * MODE other than all runs only that pass (e.g. under /usr/bin/time -v to
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

static void tally(result *t, const mt_event *ev)
{
    t->events++;
    if (ev->kind == MT_EVENT_ALLOC) {
        t->allocs++;
        t->frames += ev->backtrace_len;
        if (ev->backtrace_len)
            t->check ^= ev->backtrace[ev->backtrace_len - 1];
        t->check += (uint64_t)ev->length;
    } else {
        t->check += (uint64_t)ev->id;
    }
}

static int scan_cb(void *ctx, const mt_event *ev)
{
    tally(ctx, ev);
    return 0;
}

/* Decode every event, with mt_reader_next (scan = 0) or mt_reader_scan. */
static int pass_decode(const char *path, int skip, int scan, result *res)
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
    result t = {0, 0, 0, 0};
    if (scan) {
        rc = mt_reader_scan(r, scan_cb, &t);
    } else {
        mt_event ev;
        while ((rc = mt_reader_next(r, &ev)) == MT_OK)
            tally(&t, &ev);
    }
    if (rc != MT_EOF) {
        fprintf(stderr, "bench_decode: %s after %" PRIu64 " events: %s: %s\n", path, t.events,
                mt_status_name(rc), mt_reader_error(r));
        mt_reader_close(r);
        return -1;
    }
    mt_reader_close(r);
    *res = t;
    return 0;
}

#define NPASS 5

int main(int argc, char **argv)
{
    static const struct {
        const char *name, *key;
        int decode, skip, scan;
    } pass[NPASS] = {{"read (1 MiB chunks)", "read", 0, 0, 0},
                     {"full (mt_reader_next)", "full", 1, 0, 0},
                     {"skip (mt_reader_next)", "skip", 1, 1, 0},
                     {"full (mt_reader_scan)", "scan", 1, 0, 1},
                     {"skip (mt_reader_scan)", "scanskip", 1, 1, 1}};
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s TRACE [REPS (default 3)] [all|read|full|skip|scan|scanskip]\n",
                argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    const char *mode = argc > 3 ? argv[3] : "all";
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench_decode: REPS must be 1..%d\n", MAX_REPS);
        return 2;
    }
    int on[NPASS], any = 0;
    for (int k = 0; k < NPASS; k++)
        any |= on[k] = !strcmp(mode, "all") || !strcmp(mode, pass[k].key);
    if (!any) {
        fprintf(stderr, "bench_decode: unknown mode %s\n", mode);
        return 2;
    }
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "bench_decode: %s: %s\n", path, strerror(errno));
        return 1;
    }
    double bytes = (double)sb.st_size;

    static double wall[NPASS][MAX_REPS], cpu[NPASS][MAX_REPS];
    result res[NPASS];
    memset(res, 0, sizeof res);
    for (int i = 0; i < reps; i++) {
        for (int k = 0; k < NPASS; k++) {
            if (!on[k])
                continue;
            result tmp;
            double t0 = bench_now(), c0 = bench_cpu_now();
            int rc = pass[k].decode ? pass_decode(path, pass[k].skip, pass[k].scan, &tmp)
                                    : pass_read(path, &tmp);
            wall[k][i] = bench_now() - t0;
            cpu[k][i] = bench_cpu_now() - c0;
            if (rc)
                return 1;
            if (i && (tmp.events != res[k].events || tmp.check != res[k].check)) {
                fprintf(stderr, "bench_decode: %s pass not repeatable\n", pass[k].key);
                return 1;
            }
            res[k] = tmp;
        }
    }
    /* all decode passes must agree (full ones also on the backtraces) */
    uint64_t events = 0;
    for (int k = 1; k < NPASS; k++) {
        if (!on[k])
            continue;
        if (events && res[k].events != events) {
            fprintf(stderr, "bench_decode: decode passes disagree: %" PRIu64 " vs %" PRIu64
                            " events\n", res[k].events, events);
            return 1;
        }
        events = res[k].events;
    }
    if (on[1] && on[3] && (res[1].check != res[3].check || res[1].frames != res[3].frames)) {
        fprintf(stderr, "bench_decode: mt_reader_next and mt_reader_scan disagree\n");
        return 1;
    }

    printf("bench_decode: %s, %.0f bytes, %d rounds (passes interleaved),"
           " page cache NOT dropped (warm file)\n", path, bytes, reps);
    const result *full = on[1] ? &res[1] : on[3] ? &res[3] : NULL;
    if (full)
        printf("  events %" PRIu64 ", allocs %" PRIu64 ", avg event %.2f bytes,"
               " avg backtrace %.1f frames (check %016" PRIx64 ")\n",
               full->events, full->allocs, bytes / (double)full->events,
               full->allocs ? (double)full->frames / (double)full->allocs : 0.0, full->check);
    else if (events)
        printf("  events %" PRIu64 ", avg event %.2f bytes\n", events, bytes / (double)events);
    if (on[0])
        printf("  read pass checksum %016" PRIx64 " over %" PRIu64 " bytes\n", res[0].check,
               res[0].frames);
    printf("  %-22s %9s %9s %9s %10s %12s %9s\n", "pass", "best s", "median s", "cpu s",
           "MB/s(best)", "Mevents/s", "x read");
    double best_read = on[0] ? bench_min(wall[0], reps) : 0;
    int busy = 0;
    for (int k = 0; k < NPASS; k++) {
        if (!on[k])
            continue;
        double best = bench_min(wall[k], reps), med = bench_median(wall[k], reps);
        double c = bench_min(cpu[k], reps);
        if (best > 1.15 * c + 0.002)
            busy = 1;
        char ratio[32] = "-", evs[32] = "-";
        if (on[0])
            snprintf(ratio, sizeof ratio, "%.2f", best / best_read);
        if (k > 0)
            snprintf(evs, sizeof evs, "%.1f", (double)events / best / 1e6);
        printf("  %-22s %9.3f %9.3f %9.3f %10.0f %12s %9s\n", pass[k].name, best, med, c,
               bytes / best / 1e6, evs, ratio);
    }
    printf("  (x read = best time of the pass / best time of the plain read;"
           " cpu s = least CPU time, user + system)\n");
    if (busy)
        printf("  WARNING: wall time well above CPU time: the machine was busy, figures are low\n");
    printf("RESULT bytes %.0f\n", bytes);
    printf("RESULT events %" PRIu64 "\n", events);
    for (int k = 0; k < NPASS; k++) {
        if (!on[k])
            continue;
        double best = bench_min(wall[k], reps);
        printf("RESULT %s_best_s %.4f\n", pass[k].key, best);
        printf("RESULT %s_median_s %.4f\n", pass[k].key, bench_median(wall[k], reps));
        printf("RESULT %s_cpu_s %.4f\n", pass[k].key, bench_min(cpu[k], reps));
        printf("RESULT %s_MBps %.1f\n", pass[k].key, bytes / best / 1e6);
        if (k > 0)
            printf("RESULT %s_Meps %.2f\n", pass[k].key, (double)events / best / 1e6);
        if (on[0] && k > 0)
            printf("RESULT %s_x_read %.2f\n", pass[k].key, best / best_read);
    }
    return 0;
}
