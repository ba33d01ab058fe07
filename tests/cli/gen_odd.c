/*
 * gen_odd.c - writes a well-formed trace with odd contents, for the test
 * that every command reads it (odd_traces.sh):   gen_odd PATH SEED
 *
 * The reader accepts what a conforming writer can produce, and a writer can
 * produce objects collected twice or promoted after their collection,
 * promotes of major or external objects, lengths of 0, 2^40 or -5 words,
 * sample counts of 0 or -3, empty and 400-frame backtraces, codes with no
 * location, empty file and function names, names with bytes that output
 * formats must escape, a 3000-byte name, v002 or v003, and hour-long gaps
 * between events. The analysis commands must cope with all of it.
 * Prints "events N allocs A" (what was written) on stdout.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#define NCODES 64              /* locations cycle through 64 patterns */

static uint64_t state;

static uint64_t rnd(void)      /* xorshift64 */
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static char names[NCODES][3][2][24];   /* [pattern][frame][file, function] */
/* bytes that formats must escape: quotes, backslash, tab, a control
 * character, markup, a folded-stack separator, UTF-8 and a byte that is not
 * (no newline: dump prints names as they are, one event a line) */
static const char nasty[] = "q\"b\\s\tc\001</script><b>&amp;;x y \xc3\xa9\xff";
static char long_name[3001];
static mt_location locs[NCODES][3];

/* Code c's locations: none, or one to three inlined frames. */
static int locate(void *ctx, uint64_t code, const mt_location **out, size_t *n)
{
    (void)ctx;
    unsigned k = (unsigned)(code % NCODES);
    *out = locs[k];
    *n = k % 4 == 3 ? 0 : 1 + k % 3;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_odd PATH SEED\n");
        return 2;
    }
    state = strtoull(argv[2], NULL, 10) * 2654435761u + 1;
    memset(long_name, 'n', sizeof long_name - 1);
    for (int i = 0; i < NCODES; i++)
        for (int j = 0; j < 3; j++) {
            /* empty file names every 7th pattern, empty functions every
             * 5th (names is zeroed) */
            if (i % 7 != 0)
                snprintf(names[i][j][0], 24, "file%d.ml", i % 6);
            if (i % 5 != 0)
                snprintf(names[i][j][1], 24, "f%d_%d", i % 9, j);
            locs[i][j].filename = names[i][j][0];
            locs[i][j].function = names[i][j][1];
            if (i == 10)
                locs[i][j].function = nasty;
            if (i == 13 && j == 0)
                locs[i][j].filename = locs[i][j].function = long_name;
            locs[i][j].line = (int)(rnd() % 100000);
            locs[i][j].start_char = (int)(rnd() % 256);
            locs[i][j].end_char = (int)(rnd() % 1024);
        }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = rnd() % 3 == 0 ? 1.0 : 1e-4;
    info.word_size = 64;
    info.executable_name = "gen_odd";
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = 42;
    info.start_time = 1000000;
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = rnd() % 2 ? 3 : 2;
    mt_writer *w;
    char err[256];
    if (mt_writer_open_fd(&w, fd, &info, &opt, err, sizeof err)) {
        fprintf(stderr, "gen_odd: %s\n", err);
        return 1;
    }
    static const int64_t lengths[] = {0, 1, 3, 100, (int64_t)1 << 40, -5, 7};
    static const int64_t samples[] = {1, 1, 2, 0, 1000000, -3, 1};
    uint64_t cs[400];
    int64_t t = info.start_time, next_id = 0;
    long events = 200 + (long)(rnd() % 3000), allocs = 0;
    for (long e = 0; e < events; e++) {
        t += rnd() % 4 == 0 ? (int64_t)(rnd() % 5000000000u) : (int64_t)(rnd() % 3);
        unsigned k = (unsigned)(rnd() % 10);
        int st;
        if (k < 5 || next_id == 0) {
            size_t n = rnd() % 8 == 0 ? 0 : rnd() % 6 == 0 ? 100 + rnd() % 300 : rnd() % 12;
            uint64_t spread = rnd() % 2 ? 8 : 200;
            for (size_t i = 0; i < n; i++)
                cs[i] = 1 + rnd() % spread;
            int64_t id;
            st = mt_writer_alloc(w, t, lengths[rnd() % 7], samples[rnd() % 7],
                                 (mt_source)(rnd() % 3), cs, n, locate, NULL, &id);
            next_id = id + 1;
            allocs++;
        } else {
            /* the latest object a third of the time, else any earlier one */
            int64_t id = rnd() % 3 == 0 ? next_id - 1 : (int64_t)(rnd() % (uint64_t)next_id);
            st = k < 8 ? mt_writer_collect(w, t, id) : mt_writer_promote(w, t, id);
        }
        if (st) {
            fprintf(stderr, "gen_odd: %s\n", mt_writer_error(w));
            return 1;
        }
    }
    if (mt_writer_close(w) || close(fd)) {
        fprintf(stderr, "gen_odd: cannot finish %s\n", argv[1]);
        return 1;
    }
    printf("events %ld allocs %ld\n", events, allocs);
    return 0;
}
