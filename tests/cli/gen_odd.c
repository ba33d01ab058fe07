/*
 * gen_odd.c - writes a well-formed trace with odd contents, for the test
 * that every command reads it (odd_traces.sh):   gen_odd PATH SEED
 *
 * The reader accepts what a conforming writer can produce, and a writer can
 * produce objects collected twice or promoted after their collection,
 * promotes of major or external objects, lengths of 0, 2^40 or -5 words,
 * sample counts of 0 or -3, empty and 400-frame backtraces, codes with no
 * location, empty file and function names, names with bytes that output
 * formats must escape, a 3000-byte name, v002 or v003 (of one, two or
 * three domains, which share object ids), and hour-long gaps between
 * events. The analysis commands must cope with all of it.
 * Prints "events N allocs A domains D" (what was written) on stdout.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "../gen_info.h"
#include "../rnd.h"
#include "domain_writers.h"
#include "odd_locations.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_odd PATH SEED\n");
        return 2;
    }
    rnd_seed(argv[2]);
    odd_locations_init();
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = gen_info("gen_odd", rnd() % 3 == 0 ? 1.0 : 1e-4, 42, 1000000);
    /* v003 traces of two or three domains half the time: one writer each,
     * all writing to the file, the others' trace-info packets dropped, the
     * domain last used flushed before another is (spec 8.10); each
     * writer's ids start at 0, so domains share ids */
    int version = rnd() % 2 ? 3 : 2;
    int ndom = version == 3 && rnd() % 2 ? 2 + (int)(rnd() % 2) : 1;
    mt_writer *w[DW_MAX];
    dw_sink sinks[DW_MAX];
    int64_t next_id[DW_MAX] = {0, 0, 0};
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = version;
    char err[256];
    if (dw_open(w, sinks, ndom, fd, &info, &opt, err, sizeof err)) {
        fprintf(stderr, "gen_odd: %s\n", err);
        return 1;
    }
    static const int64_t lengths[] = {0, 1, 3, 100, (int64_t)1 << 40, -5, 7};
    static const int64_t samples[] = {1, 1, 2, 0, 1000000, -3, 1};
    uint64_t cs[400];
    int64_t t = info.start_time;
    long events = 200 + (long)(rnd() % 3000), allocs = 0;
    int d = 0;
    for (long e = 0; e < events; e++) {
        t += rnd() % 4 == 0 ? (int64_t)(rnd() % 5000000000u) : (int64_t)(rnd() % 3);
        if (ndom > 1 && rnd() % 5 == 0) {
            if (mt_writer_flush(w[d])) {
                fprintf(stderr, "gen_odd: %s\n", mt_writer_error(w[d]));
                return 1;
            }
            d = (int)(rnd() % (uint64_t)ndom);
        }
        unsigned k = (unsigned)(rnd() % 10);
        int st;
        if (k < 5 || next_id[d] == 0) {
            size_t n = rnd() % 8 == 0 ? 0 : rnd() % 6 == 0 ? 100 + rnd() % 300 : rnd() % 12;
            uint64_t spread = rnd() % 2 ? 8 : 200;
            for (size_t i = 0; i < n; i++)
                cs[i] = 1 + rnd() % spread;
            int64_t id;
            st = mt_writer_alloc(w[d], t, lengths[rnd() % 7], samples[rnd() % 7],
                                 (mt_source)(rnd() % 3), cs, n, odd_locate, NULL, &id);
            next_id[d] = id + 1;
            allocs++;
        } else {
            /* the latest object a third of the time, else any earlier one */
            int64_t id = rnd() % 3 == 0 ? next_id[d] - 1
                                        : (int64_t)(rnd() % (uint64_t)next_id[d]);
            st = k < 8 ? mt_writer_collect(w[d], t, id) : mt_writer_promote(w[d], t, id);
        }
        if (st) {
            fprintf(stderr, "gen_odd: %s\n", mt_writer_error(w[d]));
            return 1;
        }
    }
    for (int i = 0; i < ndom; i++)
        if (mt_writer_close(w[i])) {
            fprintf(stderr, "gen_odd: cannot finish %s\n", argv[1]);
            return 1;
        }
    if (close(fd)) {
        perror(argv[1]);
        return 1;
    }
    printf("events %ld allocs %ld domains %d\n", events, allocs, ndom);
    return 0;
}
