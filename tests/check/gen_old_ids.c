/*
 * gen_old_ids.c - writes a trace whose warnings concern objects allocated
 * long before (for `memtrace check`, whose table of live ids keeps the
 * last 65536 ids in a ring and older survivors elsewhere):
 *   ids 0..3 allocated first (0, 1, 2 minor; 3 major), then 200 000
 *   allocations each collected at once, then: promote 1 (fine), promote 1
 *   again (not minor: promoted), promote 3 (not minor: major), collect 0
 *   (fine), collect 0 again (no longer live), promote 0 (no longer live),
 *   collect 2 (fine); ids 1 and 3 stay live.
 * Expected warnings: collect_not_live 1, promote_not_live 1,
 * promote_not_minor 2; 200 004 allocs, 4 promotes, 200 003 collects.
 *   gen_old_ids PATH
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "memtrace/memtrace.h"
#include "../trace_check.h"

#define START 1700000000000000LL

static const mt_location locs[] = {{"old.c", "main", 1, 0, 4}, {"old.c", "make", 9, 2, 6}};

static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    if (code < 1 || code > 2)
        return 1;
    *l = &locs[code - 1];
    *n = 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 1;
    mt_trace_info info = test_info("old_ids", 1e-4, 7, START);
    mt_writer_options opt = {0};
    opt.no_fork_check = 1;
    mt_writer *w;
    char err[256];
    if (mt_writer_open_fd(&w, fd, &info, &opt, err, sizeof err) != MT_OK) {
        fprintf(stderr, "gen_old_ids: %s\n", err);
        return 1;
    }
    static const uint64_t cs[] = {2, 1};   /* callee first */
    int64_t id, t = 0;
    int rc = 0;
    for (int i = 0; i < 4; i++)
        rc |= mt_writer_alloc(w, START + t++, 2, 1, i == 3 ? MT_SOURCE_MAJOR : MT_SOURCE_MINOR,
                              cs, 2, locate, NULL, &id);
    for (int i = 0; i < 200000; i++) {
        rc |= mt_writer_alloc(w, START + t, 2, 1, MT_SOURCE_MINOR, cs, 2, locate, NULL, &id);
        rc |= mt_writer_collect(w, START + t++, id);
    }
    rc |= mt_writer_promote(w, START + t++, 1);
    rc |= mt_writer_promote(w, START + t++, 1);
    rc |= mt_writer_promote(w, START + t++, 3);
    rc |= mt_writer_collect(w, START + t++, 0);
    rc |= mt_writer_collect(w, START + t++, 0);
    rc |= mt_writer_promote(w, START + t++, 0);
    rc |= mt_writer_collect(w, START + t++, 2);
    rc |= mt_writer_close(w);
    close(fd);
    return rc ? 1 : 0;
}
