/*
 * synth.h - the synthetic trace of the analysis tests (unit tests and the
 * top/live/diff CLI tests), written with the library's writer so that every
 * expected number is exact. Rate 0.5, 64-bit words: an allocation of N
 * samples is estimated at N * 16 bytes; object size = length * 8 bytes.
 *
 *  obj  alloc us  len  ns  source    site (stack, caller first)    collect
 *   0       0       2   1  minor     main > alloc_a                   100
 *   1      10      10   3  major     main > alloc_b                   500
 *   2      20     100  50  major     main > alloc_a > Array.make      never
 *   3     200       4   2  external  main > inl_outer/inl_inner       300
 *   4     250       1   1  minor     main > alloc_b                   never
 *   5     600      50  10  major     main > alloc_a                   900
 *   6     950       8   4  minor     main > alloc_b                  1000
 * Live samples peak at 61 from 600 us to 899 us; 51 live at the end (1000).
 * synth_write(path, scale): scale multiplies every nsamples (diff tests).
 */
#ifndef MT_TEST_SYNTH_H
#define MT_TEST_SYNTH_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "memtrace/memtrace.h"

#define SYNTH_START 1700000000000000LL

static const mt_location synth_locs[][2] = {
    {{"main.ml", "main", 1, 0, 10}, {0}},
    {{"a.ml", "alloc_a", 10, 2, 20}, {0}},
    {{"b.ml", "alloc_b", 20, 4, 30}, {0}},
    {{"array.ml", "Stdlib.Array.make", 5, 0, 8}, {0}},
    {{"c.ml", "inl_outer", 30, 1, 9}, {"c.ml", "inl_inner", 31, 3, 12}},
};
static const size_t synth_nlocs[] = {1, 1, 1, 1, 2};

static int synth_locate(void *ctx, uint64_t code, const mt_location **locs,
                        size_t *n)
{
    (void)ctx;
    if (code < 1 || code > 5)
        return 1;
    *locs = synth_locs[code - 1];
    *n = synth_nlocs[code - 1];
    return 0;
}

static int synth_write(const char *path, int scale)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return -1;
    mt_trace_info info = {0};
    info.sample_rate = 0.5;
    info.word_size = 64;
    info.executable_name = "synth";
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = 42;
    info.start_time = SYNTH_START;
    mt_writer *w;
    char err[256];
    mt_writer_options opt = {0};
    opt.no_fork_check = 1;
    if (mt_writer_open_fd(&w, fd, &info, &opt, err, sizeof err) != MT_OK) {
        close(fd);
        return -1;
    }
    /* callee first for the writer */
    static const uint64_t st_a[] = {2, 1}, st_b[] = {3, 1}, st_arr[] = {4, 2, 1},
                          st_inl[] = {5, 1};
    int64_t id[7];
    int rc = 0;
#define A(i, t, len, ns, src, st)                                             \
    rc |= mt_writer_alloc(w, SYNTH_START + (t), len, (int64_t)(ns) * scale, src, st, \
                          sizeof st / sizeof st[0], synth_locate, NULL, &id[i])
#define C(i, t) rc |= mt_writer_collect(w, SYNTH_START + (t), id[i])
    A(0, 0, 2, 1, MT_SOURCE_MINOR, st_a);
    A(1, 10, 10, 3, MT_SOURCE_MAJOR, st_b);
    A(2, 20, 100, 50, MT_SOURCE_MAJOR, st_arr);
    C(0, 100);
    A(3, 200, 4, 2, MT_SOURCE_EXTERNAL, st_inl);
    A(4, 250, 1, 1, MT_SOURCE_MINOR, st_b);
    C(3, 300);
    C(1, 500);
    A(5, 600, 50, 10, MT_SOURCE_MAJOR, st_a);
    C(5, 900);
    A(6, 950, 8, 4, MT_SOURCE_MINOR, st_b);
    C(6, 1000);
#undef A
#undef C
    rc |= mt_writer_close(w);
    close(fd);
    return rc ? -1 : 0;
}

#endif
