/*
 * gen_pair.c - writes two traces for shared_prefix.sh:
 *   gen_pair ALL KEPT SEED DOMAINS
 * ALL holds allocations of 1 to 8 words whose backtraces wander (each keeps
 * a random part of its domain's previous one, then adds a few codes from a
 * small alphabet, now and then thousands of frames of one recursive code);
 * KEPT holds only those of 4 words or more (32 bytes: `--min-size 32`), with
 * the same times, sample counts and backtraces. So a command that reads ALL
 * with that filter must report what it reports of KEPT without one: the
 * allocations it leaves out are where a command that took the reader's
 * common_prefix as the frames shared with the last allocation *it* kept
 * would go wrong. DOMAINS (1 to 3) > 1 writes v003 traces of that many
 * domains, their allocations interleaved (a domain's common_prefix is
 * relative to that domain's previous allocation), with object ids unique
 * across domains. Prints "kept K of N".
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "../gen_info.h"
#include "../rnd.h"
#include "../cli/domain_writers.h"

enum { NALLOC = 3000, MAXDEPTH = 6000, ALPHABET = 40, RECURSIVE = ALPHABET + 1 };

static char names[RECURSIVE + 1][16];
static mt_location locs[RECURSIVE + 1];

/* Code k (1 .. RECURSIVE) is function fk in file pair.c, line k. */
static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > RECURSIVE)
        return -1;
    *l = &locs[code];
    *n = 1;
    return 0;
}

typedef struct out {
    int fd;
    mt_writer *w[DW_MAX];
    dw_sink sinks[DW_MAX];
    int last;                   /* domain last written, -1 none */
} out;

static int open_out(out *o, const char *path, const mt_trace_info *info, int domains)
{
    char err[256];
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = domains > 1 ? 3 : 2;
    o->last = -1;
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o->fd < 0 || dw_open(o->w, o->sinks, domains, o->fd, info, &opt, err, sizeof err)) {
        fprintf(stderr, "gen_pair: %s: %s\n", path, o->fd < 0 ? "cannot create" : err);
        return -1;
    }
    /* Object ids unique across domains, as the reference's shared counter
     * makes them (a writer here counts its own from 0): domain d's writer
     * first spends d x 20 000 ids on allocations without a backtrace
     * (which leave its codec as it was), in packets left out of the file. */
    for (int d = 1; d < domains; d++) {
        o->sinks[d].drop = INT_MAX;
        for (int k = 0; k < d * 20000; k++)
            if (mt_writer_alloc(o->w[d], info->start_time, 1, 1, MT_SOURCE_MINOR, NULL, 0,
                                locate, NULL, NULL))
                return -1;
        if (mt_writer_flush(o->w[d]))
            return -1;
        o->sinks[d].drop = 0;
    }
    return 0;
}

static int put(out *o, int d, int64_t t, int64_t len, int64_t ns, const uint64_t *cs,
               size_t n)
{
    if (o->last >= 0 && o->last != d && mt_writer_flush(o->w[o->last]))
        return -1;
    o->last = d;
    int64_t id;
    return mt_writer_alloc(o->w[d], t, len, ns, MT_SOURCE_MINOR, cs, n, locate, NULL, &id);
}

static int close_out(out *o, int domains)
{
    int st = 0;
    for (int d = 0; d < domains; d++) {
        if (mt_writer_finish(o->w[d]))
            st = -1;
        mt_writer_close(o->w[d]);
    }
    return close(o->fd) || st ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 5 || atoi(argv[4]) < 1 || atoi(argv[4]) > DW_MAX) {
        fprintf(stderr, "usage: gen_pair ALL KEPT SEED DOMAINS(1-3)\n");
        return 2;
    }
    rnd_seed(argv[3]);
    int domains = atoi(argv[4]);
    for (int k = 1; k <= RECURSIVE; k++) {
        snprintf(names[k], sizeof names[k], "f%d", k);
        locs[k] = (mt_location){"pair.c", names[k], k, 0, 5};
    }
    mt_trace_info info = gen_info("gen_pair", 1e-3, 7, 1700000000000000);
    out all, kept;
    if (open_out(&all, argv[1], &info, domains) || open_out(&kept, argv[2], &info, domains))
        return 1;
    /* each domain's stack, caller first; the writer takes callee first */
    static uint64_t stack[DW_MAX][MAXDEPTH], cs[MAXDEPTH];
    size_t depth[DW_MAX] = {0};
    int nkept = 0;
    for (int i = 0; i < NALLOC; i++) {
        int d = (int)(rnd() % (uint64_t)domains);
        size_t *n = &depth[d];
        uint64_t *s = stack[d];
        *n = *n ? (size_t)(rnd() % (*n + 1)) : 0;
        if (rnd() % 50 == 0 && *n + 3000 < MAXDEPTH) {
            for (int k = 0; k < 3000; k++)      /* a deep recursion */
                s[(*n)++] = RECURSIVE;
        }
        for (int k = (int)(rnd() % 6); k > 0 && *n < MAXDEPTH; k--)
            s[(*n)++] = 1 + rnd() % ALPHABET;
        if (*n == 0)
            s[(*n)++] = 1;
        for (size_t k = 0; k < *n; k++)
            cs[k] = s[*n - 1 - k];
        int64_t len = 1 + (int64_t)(rnd() % 8), ns = 1 + (int64_t)(rnd() % 3);
        int64_t t = info.start_time + 10 * (i + 1);
        if (i == NALLOC - 1)
            len = 8;            /* (the last one kept: both traces end together) */
        if (put(&all, d, t, len, ns, cs, *n) ||
            (len >= 4 && put(&kept, d, t, len, ns, cs, *n))) {
            fprintf(stderr, "gen_pair: writing failed\n");
            return 1;
        }
        nkept += len >= 4;
    }
    if (close_out(&all, domains) || close_out(&kept, domains)) {
        fprintf(stderr, "gen_pair: finishing failed\n");
        return 1;
    }
    printf("kept %d of %d\n", nkept, NALLOC);
    return 0;
}
