/*
 * gen_deep.c - a trace of deep recursion, for bench_deep.sh:
 *   gen_deep OUT N DEPTH [roots]
 * N allocations whose backtraces are DEPTH frames deep: main, then one
 * recursive function DEPTH - 2 times, then one of two allocation sites in
 * turn; every second one is collected. Each allocation shares all but its
 * last frame with the one before, so the trace is small (~15 bytes an
 * allocation: the writer encodes what changed) while it holds N x DEPTH
 * frames. A command whose work per allocation grows with the depth instead
 * of with the frames that changed takes N x DEPTH steps on it.
 * (DEPTH up to ~300 000: the first backtrace, DEPTH - 2 frames the cache
 * predicts, must fit the format's 4096 bytes.)
 * With "roots", each allocation's outermost frame is a main of its own
 * (N distinct codes and functions): stacks that share every frame but the
 * root, which a trie of prefixes (util/stackset) cannot share, so the
 * exporters hold N x DEPTH nodes (the trace stays small: each backtrace
 * is its hit chains again, ~0.5 KB for 40 000 frames).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

enum { REC = 0x10, MAIN = 0x20, SITE_A = 0x30, SITE_B = 0x40, ROOTS = 0x100 };

static const mt_location rec = {"rec.c", "recurse", 10, 1, 20};
static const mt_location mainl = {"main.c", "main", 5, 1, 9};
static const mt_location site_a = {"a.c", "site_a", 3, 1, 9};
static const mt_location site_b = {"b.c", "site_b", 4, 1, 9};

static int locate(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    static char name[32];
    static mt_location root = {"main.c", name, 5, 1, 9};
    (void)ctx;
    *n = 1;
    if (code >= ROOTS) {            /* (the writer copies it at once) */
        snprintf(name, sizeof name, "main%llu", (unsigned long long)(code - ROOTS));
        *l = &root;
        return 0;
    }
    *l = code == REC ? &rec : code == MAIN ? &mainl : code == SITE_A ? &site_a : &site_b;
    return 0;
}

int main(int argc, char **argv)
{
    int roots = argc == 5 && strcmp(argv[4], "roots") == 0;
    if ((argc != 4 && !roots) || atol(argv[2]) < 1 || atol(argv[3]) < 3) {
        fprintf(stderr, "usage: gen_deep OUT N DEPTH [roots] (N >= 1, DEPTH >= 3)\n");
        return 2;
    }
    long n = atol(argv[2]), depth = atol(argv[3]);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "gen_deep";
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = 1;
    info.start_time = 1700000000000000;
    mt_writer *w;
    char err[256];
    if (mt_writer_open_fd(&w, fd, &info, NULL, err, sizeof err) != MT_OK) {
        fprintf(stderr, "gen_deep: %s: %s\n", argv[1], err);
        return 1;
    }
    uint64_t *cs = malloc(sizeof *cs * (size_t)depth);     /* callee first */
    if (!cs)
        return 1;
    for (long i = 0; i < depth; i++)
        cs[i] = REC;
    cs[depth - 1] = MAIN;
    int64_t t = info.start_time, id;
    int st = MT_OK;
    for (long i = 0; i < n && st == MT_OK; i++) {
        cs[0] = i & 1 ? SITE_A : SITE_B;
        if (roots)
            cs[depth - 1] = ROOTS + (uint64_t)i;
        st = mt_writer_alloc(w, ++t, 4, 1, MT_SOURCE_MINOR, cs, (size_t)depth, locate, NULL, &id);
        if (st == MT_OK && (i & 1))
            st = mt_writer_collect(w, ++t, id);
    }
    if (st == MT_OK)
        st = mt_writer_finish(w);
    if (st != MT_OK)
        fprintf(stderr, "gen_deep: %s: %s\n", argv[1], mt_writer_error(w));
    mt_writer_close(w);
    close(fd);
    free(cs);
    return st == MT_OK ? 0 : 1;
}
