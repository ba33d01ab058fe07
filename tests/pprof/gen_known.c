/*
 * gen_known.c - writes the trace of the pprof/speedscope/report tests, with
 * the library's writer, so that every estimate is an exact integer.
 * Rate 0.25, 64-bit words: a sample stands for 32 bytes, and an object of
 * LENGTH words with LENGTH / 4 samples is exactly one estimated object.
 *
 *  objects      len  ns  stack (caller first)                  collected
 *  3 buffers     16   4  main > load/parse (inlined) > make_buffer  2 of 3, at 300 us
 *  10 nodes       4   1  main > build_tree > new_node          6 of 10, at 400 us
 *  1 table      400 100  main > grow                           at 200 us (alloc 100)
 *
 * alloc_space: grow 3200 B, make_buffer 384 B, new_node 320 B;
 * inuse_space at the end: make_buffer 128 B, new_node 128 B.
 *   gen_known OUT.ctf
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "memtrace/memtrace.h"

#define START 1700000000000000LL

static const mt_location locs[][2] = {
    {{"main.c", "main", 5, 0, 0}, {0}},
    {{"load.c", "load", 20, 0, 0}, {"parse.c", "parse", 33, 0, 0}},
    {{"buf.c", "make_buffer", 12, 0, 0}, {0}},
    {{"tree.c", "build_tree", 70, 0, 0}, {0}},
    {{"tree.c", "new_node", 40, 0, 0}, {0}},
    {{"table.c", "grow", 9, 0, 0}, {0}},
};
static const size_t nlocs[] = {1, 2, 1, 1, 1, 1};

static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > 6)
        return 1;
    *l = locs[code - 1];
    *n = nlocs[code - 1];
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_known OUT.ctf\n");
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 0.25;
    info.word_size = 64;
    info.executable_name = "known";
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = 7;
    info.start_time = START;
    mt_writer *w;
    char err[256];
    mt_writer_options opt = {0};
    opt.no_fork_check = 1;
    if (mt_writer_open_fd(&w, fd, &info, &opt, err, sizeof err) != MT_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    static const uint64_t st_buf[] = {3, 2, 1}, st_node[] = {5, 4, 1}, st_grow[] = {6, 1};
    int64_t buf[3], node[10], table;
    int rc = 0;
    for (int i = 0; i < 3; i++)
        rc |= mt_writer_alloc(w, START + 10 + i, 16, 4, MT_SOURCE_MAJOR, st_buf, 3,
                              locate, NULL, &buf[i]);
    for (int i = 0; i < 10; i++)
        rc |= mt_writer_alloc(w, START + 20 + i, 4, 1, MT_SOURCE_MINOR, st_node, 3,
                              locate, NULL, &node[i]);
    rc |= mt_writer_alloc(w, START + 100, 400, 100, MT_SOURCE_MAJOR, st_grow, 2,
                          locate, NULL, &table);
    rc |= mt_writer_collect(w, START + 200, table);
    for (int i = 0; i < 2; i++)
        rc |= mt_writer_collect(w, START + 300, buf[i]);
    for (int i = 0; i < 6; i++)
        rc |= mt_writer_collect(w, START + 400, node[i]);
    rc |= mt_writer_close(w);
    close(fd);
    if (rc) {
        fprintf(stderr, "gen_known: writing %s failed\n", argv[1]);
        return 1;
    }
    return 0;
}
