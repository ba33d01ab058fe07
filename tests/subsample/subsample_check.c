/*
 * subsample_check.c - checks of `memtrace subsample` output, driven by
 * subsample_test.sh. Each mode prints what it found and exits 0 when the
 * check holds, 1 when it does not (message on stdout), 2 on bad usage.
 *
 *   valid OUT
 *       OUT reads to the end without error; every promote/collect names an
 *       earlier allocation that has not been collected yet.
 *   rate IN OUT FACTOR
 *       OUT's sample rate == IN's / FACTOR exactly; the other info fields
 *       (names, pid, start time, context, word size, params) are IN's.
 *   samples IN OUT FACTOR
 *       total kept samples within 5 standard deviations of total/FACTOR
 *       (binomial model), and OUT's allocations are a subsequence of IN's
 *       (same time, length, source and backtrace, kept count <= original).
 *   window IN OUT START END FACTOR
 *       every allocation of OUT satisfies START <= floor(dt/1e6) < END; with
 *       FACTOR 1 their number is the number of such allocations in IN with
 *       nsamples >= 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/memtrace.h"
#include "trace_check.h"

static int64_t floor_s(int64_t dt)
{
    int64_t q = dt / 1000000;
    return dt % 1000000 < 0 ? q - 1 : q;
}

static int mode_valid(const char *path)
{
    mt_reader *r = open_trace(path, 1);
    if (!r)
        return 1;
    unsigned char *state = NULL;        /* 1 live, 2 collected */
    size_t cap = 0;
    int64_t nallocs = 0, np = 0, nc = 0, samples = 0;
    mt_event ev;
    int st, bad = 0;
    while (!bad && (st = mt_reader_next(r, &ev)) == MT_OK) {
        if (ev.kind == MT_EVENT_ALLOC) {
            if (ev.id != nallocs)
                bad = fail("%s: alloc id %lld, expected %lld", path,
                           (long long)ev.id, (long long)nallocs);
            if ((size_t)nallocs >= cap) {
                cap = cap ? cap * 2 : 4096;
                state = realloc(state, cap);
                if (!state)
                    abort();
            }
            state[nallocs++] = 1;
            if (ev.nsamples < 1)
                bad = fail("%s: alloc %lld has nsamples %lld", path,
                           (long long)ev.id, (long long)ev.nsamples);
            samples += ev.nsamples;
        } else {
            const char *what = ev.kind == MT_EVENT_PROMOTE ? "promote" : "collect";
            if (ev.id < 0 || ev.id >= nallocs) {
                printf("FAIL: %s: %s of id %lld, not an earlier allocation\n", path,
                       what, (long long)ev.id);
                bad = 1;
            } else if (state[ev.id] != 1) {
                printf("FAIL: %s: %s of id %lld, already collected\n", path, what,
                       (long long)ev.id);
                bad = 1;
            } else if (ev.kind == MT_EVENT_COLLECT) {
                state[ev.id] = 2;
                nc++;
            } else {
                np++;
            }
        }
    }
    if (!bad && st != MT_EOF)
        bad = fail("%s: %s", path, mt_reader_error(r));
    if (!bad)
        printf("%s: %lld allocs (%lld samples), %lld promotes, %lld collects: ok\n",
               path, (long long)nallocs, (long long)samples, (long long)np,
               (long long)nc);
    free(state);
    mt_reader_close(r);
    return bad;
}

static int same_str(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static int mode_rate(const char *in, const char *out, long long factor)
{
    mt_reader *a = open_trace(in, 1), *b = open_trace(out, 1);
    int bad = 1;
    if (a && b) {
        const mt_trace_info *x = mt_reader_info(a), *y = mt_reader_info(b);
        double want = x->sample_rate / (double)factor;
        bad = 0;
        if (y->sample_rate != want) {
            printf("FAIL: sample rate %.17g, expected %.17g / %lld = %.17g\n",
                   y->sample_rate, x->sample_rate, factor, want);
            bad = 1;
        }
        if (!same_str(x->executable_name, y->executable_name) ||
            !same_str(x->host_name, y->host_name) ||
            !same_str(x->runtime_params, y->runtime_params) ||
            !same_str(x->context, y->context) || x->pid != y->pid ||
            x->start_time != y->start_time || x->word_size != y->word_size) {
            printf("FAIL: info fields other than the sample rate differ\n");
            bad = 1;
        }
        if (!bad)
            printf("sample rate %.17g -> %.17g (factor %lld): ok\n", x->sample_rate,
                   y->sample_rate, factor);
    }
    mt_reader_close(a);
    mt_reader_close(b);
    return bad;
}

static int mode_samples(const char *in, const char *out, long long factor)
{
    mt_reader *a = open_trace(in, 0), *b = open_trace(out, 0);
    if (!a || !b) {
        mt_reader_close(a);
        mt_reader_close(b);
        return 1;
    }
    /* Input allocations are kept in a queue until matched, with their
     * backtraces (needed because the reader reuses its buffers). */
    mt_event ea, eb;
    int sa = MT_OK, sb, bad = 0;
    double total_in = 0, total_out = 0;
    int64_t matched = 0;
    uint64_t *bt = NULL;
    size_t btcap = 0;
    while (!bad && (sb = mt_reader_next(b, &eb)) == MT_OK) {
        if (eb.kind != MT_EVENT_ALLOC)
            continue;
        total_out += (double)eb.nsamples;
        if (eb.backtrace_len > btcap) {
            btcap = eb.backtrace_len * 2;
            bt = realloc(bt, btcap * sizeof *bt);
            if (!bt)
                abort();
        }
        size_t blen = eb.backtrace_len;
        if (blen)
            memcpy(bt, eb.backtrace, blen * sizeof *bt);
        for (;;) {
            sa = mt_reader_next(a, &ea);
            if (sa != MT_OK) {
                printf("FAIL: output alloc %lld (time %lld) matches no input alloc\n",
                       (long long)eb.id, (long long)eb.time);
                bad = 1;
                break;
            }
            if (ea.kind != MT_EVENT_ALLOC)
                continue;
            if (ea.nsamples > 0)
                total_in += (double)ea.nsamples;
            if (ea.time == eb.time && ea.length == eb.length &&
                ea.source == eb.source && ea.nsamples >= eb.nsamples &&
                ea.backtrace_len == blen &&
                (blen == 0 || memcmp(ea.backtrace, bt, blen * sizeof *bt) == 0)) {
                matched++;
                break;
            }
        }
    }
    if (!bad && sb != MT_EOF)
        bad = fail("%s: %s", out, mt_reader_error(b));
    while (!bad && (sa = mt_reader_next(a, &ea)) == MT_OK)
        if (ea.kind == MT_EVENT_ALLOC && ea.nsamples > 0)
            total_in += (double)ea.nsamples;
    if (!bad && sa != MT_EOF)
        bad = fail("%s: %s", in, mt_reader_error(a));
    if (!bad) {
        double p = 1.0 / (double)factor;
        double mean = total_in * p, sd = sqrt(total_in * p * (1 - p));
        double z = sd > 0 ? (total_out - mean) / sd : total_out - mean;
        printf("%lld output allocs matched; samples in %.0f, out %.0f, expected "
               "%.1f +- %.1f (z = %.2f)\n", (long long)matched, total_in, total_out,
               mean, sd, z);
        if (fabs(z) > 5) {
            printf("FAIL: kept samples more than 5 standard deviations off\n");
            bad = 1;
        }
    }
    free(bt);
    mt_reader_close(a);
    mt_reader_close(b);
    return bad;
}

static int mode_window(const char *in, const char *out, long long start,
                       long long end, long long factor)
{
    mt_reader *a = open_trace(in, 1), *b = open_trace(out, 1);
    int bad = 1;
    if (a && b) {
        bad = 0;
        mt_event ev;
        int st;
        int64_t t0 = mt_reader_info(a)->start_time, want = 0, got = 0;
        while ((st = mt_reader_next(a, &ev)) == MT_OK)
            if (ev.kind == MT_EVENT_ALLOC && ev.nsamples > 0) {
                int64_t s = floor_s(ev.time - t0);
                want += s >= start && s < end;
            }
        if (st != MT_EOF)
            bad = fail("%s: %s", in, mt_reader_error(a));
        while (!bad && (st = mt_reader_next(b, &ev)) == MT_OK)
            if (ev.kind == MT_EVENT_ALLOC) {
                int64_t s = floor_s(ev.time - t0);
                got++;
                if (s < start || s >= end)
                    bad = fail("%s: alloc %lld at second %lld, outside the window",
                                   out, (long long)ev.id, (long long)s);
            }
        if (!bad && st != MT_EOF)
            bad = fail("%s: %s", out, mt_reader_error(b));
        if (!bad && factor == 1 && got != want)
            bad = fail("%lld allocs in the window, expected %lld",
                       (long long)got, (long long)want);
        if (!bad && want == 0)
            bad = fail("the window holds no allocation of %s", in);
        if (!bad)
            printf("window [%lld, %lld): %lld of %lld input allocs kept: ok\n",
                   start, end, (long long)got, (long long)want);
    }
    mt_reader_close(a);
    mt_reader_close(b);
    return bad;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "valid") == 0)
        return mode_valid(argv[2]);
    if (argc == 5 && strcmp(argv[1], "rate") == 0)
        return mode_rate(argv[2], argv[3], atoll(argv[4]));
    if (argc == 5 && strcmp(argv[1], "samples") == 0)
        return mode_samples(argv[2], argv[3], atoll(argv[4]));
    if (argc == 7 && strcmp(argv[1], "window") == 0)
        return mode_window(argv[2], argv[3], atoll(argv[4]), atoll(argv[5]),
                           atoll(argv[6]));
    fprintf(stderr, "usage: subsample_check valid OUT | rate IN OUT FACTOR | "
            "samples IN OUT FACTOR | window IN OUT START END FACTOR\n");
    return 2;
}
