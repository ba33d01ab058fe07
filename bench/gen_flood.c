/*
 * gen_flood.c - traces crafted against unkeyed hash tables, for
 * bench_flood.sh:
 *   gen_flood OUT names|codes|ids|pairs N
 * names: N codes, each with its own function name, the names built to share
 *        the low 16 bits of their FNV-1a hash (Joux's multicollision: a
 *        name picks one of two 4-byte blocks at each of ~log2 N stages,
 *        each pair colliding whatever came before, as a multiplication
 *        carries only upwards). The reader's string table and the tools'
 *        name tables hashed names with FNV-1a until 2026-12-06.
 * codes: N codes that murmur3's fmix64 finalizer (one round, unkeyed:
 *        the reader's code table and the tools' maps until then) sends to
 *        the same low bits: fmix64^-1(i << 24), those in the format's
 *        63-bit form (bit 63 = bit 62).
 * ids:   N allocations in v003 packets of 16, the ids jumping by 2^17 (twice
 *        the scan's ring of recent ids) from one packet to the next (ids
 *        spent in packets left out of the file: ~2 s of writing per 1000
 *        packets), a quarter of them never collected: the ring stepped
 *        over each of its 65 536 slots at every jump.
 * pairs: 16 384 functions numbered by one-frame allocations, then N
 *        allocations of three frames (a distinct outer caller, a caller f,
 *        a site al) whose pair (f, al) is one of 9 000 that the reference's
 *        linear bucket function puts in one bucket of `hotspots`' table of
 *        heavy hitters (its chains were its lookup until 2026-12-06).
 * names, codes and ids have one-frame backtraces; names and codes collect
 * each object at once.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "flood_keys.h"

static int stages;
static char pairs[FLOOD_MAX_STAGES][2][FLOOD_BLOCK];
static char name[FLOOD_MAX_STAGES * FLOOD_BLOCK + 1];
static mt_location loc = {"flood.c", name, 1, 0, 1};
static int mode;                        /* 0 names, 1 codes, 2 ids, 3 pairs */

/* Code k: in names mode, function name k - 1 of the colliding family. */
static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (mode == 0) {
        flood_name(stages, pairs, code - 1, name);
        name[stages * FLOOD_BLOCK] = 0;
    } else if (mode == 3) {
        snprintf(name, sizeof name, "f%llu", (unsigned long long)code);
    } else {
        snprintf(name, sizeof name, "f");
    }
    *l = &loc;
    *n = 1;
    return 0;
}

typedef struct sink {
    int fd, drop;
} sink;

static int put(void *ctx, const void *buf, size_t len)
{
    sink *k = ctx;
    if (k->drop)
        return 0;
    for (const char *p = buf; len;) {
        ssize_t w = write(k->fd, p, len);
        if (w < 0)
            return 1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc == 4 ? atol(argv[3]) : 0;
    mode = argc == 4 ? !strcmp(argv[2], "names") ? 0 : !strcmp(argv[2], "codes") ? 1
                     : !strcmp(argv[2], "ids") ? 2 : !strcmp(argv[2], "pairs") ? 3 : -1
                     : -1;
    if (mode < 0 || n < 1 || n > (1L << FLOOD_MAX_STAGES)) {
        fprintf(stderr, "usage: gen_flood OUT names|codes|ids|pairs N (1 <= N <= 2^24)\n");
        return 2;
    }
    while ((1L << stages) < n)
        stages++;
    if (mode == 0)
        flood_pairs(stages, pairs);
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = 1e-5;
    info.word_size = 64;
    info.executable_name = "gen_flood";
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = 1;
    info.start_time = 1700000000000000;
    mt_writer_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format_version = mode == 2 ? 3 : 2;
    sink k = {open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644), 0};
    char err[256];
    mt_writer *w;
    if (k.fd < 0 || mt_writer_open_sink(&w, put, &k, &info, &opt, err, sizeof err)) {
        fprintf(stderr, "gen_flood: %s: %s\n", argv[1], k.fd < 0 ? "cannot create" : err);
        return 1;
    }
    int st = 0;
    int64_t t = info.start_time;
    uint64_t y = 0;
    if (mode == 3) {
        /* function k is code k + 1; al = -f x 1231441 / 3821 (mod 16 384)
         * puts (f, al) in bucket 0 */
        uint64_t inv = 3821;
        for (int i = 0; i < 5; i++)
            inv *= 2 - 3821 * inv;
        int64_t id;
        for (uint64_t fn = 0; fn < 16384 && !st; fn++) {
            uint64_t code = fn + 1;
            st = mt_writer_alloc(w, ++t, 2, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, &id);
        }
        for (long i = 0; i < n && !st; i++) {
            uint64_t f = (uint64_t)(i % 9000) + 1;
            uint64_t al = ((uint64_t)0 - f * 1231441u) * inv & 16383;
            uint64_t cs[3] = {al + 1, f + 1, 16385 + (uint64_t)(i % 50000)};
            st = mt_writer_alloc(w, ++t, 2, 1, MT_SOURCE_MINOR, cs, 3, locate, NULL, &id);
            if (!st)
                st = mt_writer_collect(w, t, id);
        }
        n = 0;
    }
    for (long i = 0; i < n && !st; i++) {
        uint64_t code = (uint64_t)i + 1;
        if (mode == 1) {
            do
                code = flood_unmix(++y << 24);
            while (code == 0 || (code >> 62 != 0 && code >> 62 != 3));
        } else if (mode == 2) {
            code = 1;
        }
        int64_t id;
        t += 1;
        st = mt_writer_alloc(w, t, 2, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, &id);
        if (!st && mode != 2)
            st = mt_writer_collect(w, t, id);
        else if (!st && i % 4)
            st = mt_writer_collect(w, t, id);
        if (!st && mode == 2 && i % 16 == 15) {
            st = mt_writer_flush(w);
            k.drop = 1;                 /* ids spent where the file skips them */
            for (int j = 0; j < (1 << 17) - 16 && !st; j++)
                st = mt_writer_alloc(w, t, 1, 1, MT_SOURCE_MINOR, NULL, 0, locate, NULL, NULL);
            if (!st)
                st = mt_writer_flush(w);
            k.drop = 0;
        }
    }
    if (!st)
        st = mt_writer_finish(w);
    mt_writer_close(w);
    if (close(k.fd) || st) {
        fprintf(stderr, "gen_flood: writing failed\n");
        return 1;
    }
    return 0;
}
