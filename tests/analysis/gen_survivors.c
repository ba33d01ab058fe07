/*
 * gen_survivors.c - writes a v003 trace of objects that outlive the scan's
 * ring of recent ids, for survivors.sh:
 *   gen_survivors OUT SEED JUMP
 * 40 rounds of 300 allocations (a few sites, 1 to 64 words, 1 to 3
 * samples); a quarter of them live long (some until the end), the rest die
 * a few allocations later. Each round ends with one allocation at each of
 * six more sites, never collected and all alike: those sites tie in every
 * ranking, so a report that ranks them in the order their objects are
 * decided at the end shows that order. With JUMP 1, each round is followed by 70 000
 * allocations in packets left out of the file, so the ids the file holds
 * jump by more than the ring at every round and every long-lived object
 * goes through the table of older survivors; with JUMP 0 the same events
 * have ids one after the other. Every report but `dump` must then be the
 * same for both, and the same from one run to the next (the survivors'
 * table is hashed with a random seed).
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

enum { ROUNDS = 40, PER_ROUND = 300, BURN = 70000, NSITES = 6, NTIED = 6,
       MAXLIVE = ROUNDS * PER_ROUND };

static char names[NSITES + NTIED + 1][16];
static mt_location locs[NSITES + NTIED + 1];

/* Code k (1 .. NSITES + NTIED) is function sk in file survivors.c, line k. */
static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > NSITES + NTIED)
        return -1;
    *l = &locs[code];
    *n = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[3], "0") && strcmp(argv[3], "1"))) {
        fprintf(stderr, "usage: gen_survivors OUT SEED JUMP(0|1)\n");
        return 2;
    }
    rnd_seed(argv[2]);
    int jump = argv[3][0] == '1';
    for (int k = 1; k <= NSITES + NTIED; k++) {
        snprintf(names[k], sizeof names[k], "s%d", k);
        locs[k] = (mt_location){"survivors.c", names[k], k, 0, 5};
    }
    mt_trace_info info = gen_info("gen_survivors", 1e-3, 7, 1700000000000000);
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = 3;
    char err[256];
    mt_writer *w;
    dw_sink sink;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dw_open(&w, &sink, 1, fd, &info, &opt, err, sizeof err)) {
        fprintf(stderr, "gen_survivors: %s: %s\n", argv[1], fd < 0 ? "cannot create" : err);
        return 1;
    }
    /* ids of the objects alive, each with the round after which it dies
     * (ROUNDS: never) */
    static int64_t live_id[MAXLIVE], live_until[MAXLIVE];
    size_t nlive = 0;
    int64_t t = info.start_time, recent = -1;
    int st = 0;
    for (int r = 0; r < ROUNDS && !st; r++) {
        for (int i = 0; i < PER_ROUND && !st; i++) {
            uint64_t cs[2] = {1 + rnd() % NSITES, 1 + rnd() % NSITES};
            int64_t id, len = 1 + (int64_t)(rnd() % 64), ns = 1 + (int64_t)(rnd() % 3);
            t += 10;
            st = mt_writer_alloc(w, t, len, ns, MT_SOURCE_MINOR, cs, 2, locate, NULL, &id);
            if (!st && rnd() % 4 == 0) {
                live_id[nlive] = id;
                live_until[nlive++] = rnd() % 3 ? ROUNDS : r + 1 + (int64_t)(rnd() % 10);
            } else if (!st) {
                if (recent >= 0)
                    st = mt_writer_collect(w, t, recent);
                recent = st ? -1 : id;
            }
        }
        for (uint64_t k = NSITES + NTIED; k > NSITES && !st; k--) {
            uint64_t cs[2] = {k, 1};    /* called by s1 */
            t += 10;
            st = mt_writer_alloc(w, t, 64, 10, MT_SOURCE_MINOR, cs, 2, locate, NULL, NULL);
        }
        for (size_t k = 0; k < nlive && !st;) {
            if (live_until[k] == r) {
                st = mt_writer_collect(w, t, live_id[k]);
                live_id[k] = live_id[--nlive];
                live_until[k] = live_until[nlive];
            } else {
                k++;
            }
        }
        if (jump && !st) {
            /* ids spent in packets the file leaves out */
            st = mt_writer_flush(w);
            sink.drop = INT_MAX;
            for (int k = 0; k < BURN && !st; k++)
                st = mt_writer_alloc(w, t, 1, 1, MT_SOURCE_MINOR, NULL, 0, locate, NULL, NULL);
            if (!st)
                st = mt_writer_flush(w);
            sink.drop = 0;
        }
    }
    if (!st)
        st = mt_writer_finish(w);
    mt_writer_close(w);
    if (close(fd) || st) {
        fprintf(stderr, "gen_survivors: writing failed\n");
        return 1;
    }
    printf("%zu objects live at the end\n", nlive + (size_t)ROUNDS * NTIED);
    return 0;
}
