/*
 * gen_collide.c - a trace whose heavy-hitter pairs crowd one bucket of the
 * reference's table, for collide.sh:
 *   gen_collide OUT SEED
 * 16 384 one-frame allocations first give functions 0 .. 16 383 their
 * numbers (code k + 1 is function k, named fk). Then 12 rounds, each of
 * a pass over 3 000 pairs (caller f, site al) whose bucket,
 * (f x 1231441 + al x 3821) mod 16 384, is 0, taking each with
 * probability 1/2 (one allocation of two frames), and of 8 000 pairs never
 * seen before: these fill the table of 10 000 counters and then sweep it,
 * so that bucket 0's counters come, get hits, and go while the bucket is
 * long. A last pass over bucket 0's pairs fills it again.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "../gen_info.h"
#include "../rnd.h"

enum { NFUNCS = 16384, NPAIRS = 3000, ROUNDS = 12, FRESH = 8000 };

static char name[32];
static mt_location loc = {"collide.c", name, 1, 0, 1};

static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > NFUNCS)
        return -1;
    snprintf(name, sizeof name, "f%llu", (unsigned long long)code - 1);
    *l = &loc;
    *n = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_collide OUT SEED\n");
        return 2;
    }
    rnd_seed(argv[2]);
    mt_trace_info info = gen_info("gen_collide", 1e-4, 3, 1700000000000000);
    char err[256];
    mt_writer *w;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || mt_writer_open_fd(&w, fd, &info, NULL, err, sizeof err)) {
        fprintf(stderr, "gen_collide: %s: %s\n", argv[1], fd < 0 ? "cannot create" : err);
        return 1;
    }
    /* al = -f x 1231441 / 3821 (mod 16 384) puts (f, al) in bucket 0 */
    uint64_t inv = 3821;
    for (int i = 0; i < 5; i++)                 /* Newton: inverse mod 2^64 */
        inv *= 2 - 3821 * inv;
    static uint64_t pf[NPAIRS], pal[NPAIRS];
    int npairs = 0;
    for (uint64_t f = 1; npairs < NPAIRS; f++) {
        uint64_t al = ((uint64_t)0 - f * 1231441u) * inv & (NFUNCS - 1);
        if (al != f) {
            pf[npairs] = f;
            pal[npairs++] = al;
        }
    }
    int64_t t = info.start_time, id;
    int st = 0;
    for (uint64_t k = 0; k < NFUNCS && !st; k++) {
        uint64_t code = k + 1;
        st = mt_writer_alloc(w, ++t, 1, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, &id);
    }
    for (int r = 0; r <= ROUNDS && !st; r++) {
        for (int k = 0; k < NPAIRS && !st; k++) {
            if (r < ROUNDS && rnd() % 2)
                continue;
            uint64_t cs[2] = {pal[k] + 1, pf[k] + 1};   /* callee first */
            st = mt_writer_alloc(w, ++t, 1 + (int64_t)(rnd() % 4), 1, MT_SOURCE_MINOR, cs,
                                 2, locate, NULL, &id);
        }
        for (int k = 0; k < FRESH && r < ROUNDS && !st; k++) {
            uint64_t f = rnd() % NFUNCS, al;
            do
                al = rnd() % NFUNCS;
            while (al == f);
            uint64_t cs[2] = {al + 1, f + 1};
            st = mt_writer_alloc(w, ++t, 1 + (int64_t)(rnd() % 4), 1, MT_SOURCE_MINOR, cs,
                                 2, locate, NULL, &id);
        }
    }
    if (!st)
        st = mt_writer_finish(w);
    mt_writer_close(w);
    if (close(fd) || st) {
        fprintf(stderr, "gen_collide: writing failed\n");
        return 1;
    }
    return 0;
}
