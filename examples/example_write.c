/*
 * example_write.c - the smallest useful writer: records a few allocations
 * with backtraces, one promotion and two collections into a trace file.
 *   example_write OUT.ctf
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

/* Our "program": three functions, each a location code with its source. */
static const mt_location main_loc = {"example.c", "main", 40, 2, 30};
static const mt_location parse_loc = {"parse.c", "parse_file", 12, 8, 25};
static const mt_location inlined[2] = {        /* outermost first */
    {"buffer.c", "buffer_grow", 88, 4, 19},
    {"buffer.h", "buffer_reserve", 17, 9, 40},
};

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    switch (code) {
    case 0x1000: *locs = &main_loc; *n = 1; return 0;
    case 0x2000: *locs = &parse_loc; *n = 1; return 0;
    case 0x3000: *locs = inlined; *n = 2; return 0;
    default: return -1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUT.ctf\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    mt_trace_info info = {0};
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "example";
    info.host_name = "localhost";
    info.runtime_params = "";
    info.pid = 4242;
    info.start_time = 1700000000000000;      /* us since the epoch */
    info.context = "memtrace-c example";

    mt_writer *w;
    char err[256];
    if (mt_writer_open_fd(&w, fd, &info, NULL, err, sizeof err) != MT_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], err);
        return 1;
    }
    /* callstacks are callee first: allocation site, ..., main */
    const uint64_t deep[] = {0x3000, 0x2000, 0x1000};
    const uint64_t shallow[] = {0x2000, 0x1000};
    int64_t t = info.start_time, a, b, c;
    int st = mt_writer_alloc(w, t += 10, 4, 1, MT_SOURCE_MINOR, deep, 3, locate, NULL, &a);
    if (!st) st = mt_writer_alloc(w, t += 15, 200, 3, MT_SOURCE_MAJOR, shallow, 2, locate, NULL, &b);
    if (!st) st = mt_writer_alloc(w, t += 5, 2, 1, MT_SOURCE_MINOR, deep, 3, locate, NULL, &c);
    if (!st) st = mt_writer_promote(w, t += 20, a);
    if (!st) st = mt_writer_collect(w, t += 30, c);
    if (!st) st = mt_writer_collect(w, t += 40, b);
    if (!st) st = mt_writer_finish(w);
    if (st != MT_OK)
        fprintf(stderr, "%s: %s\n", argv[1], mt_writer_error(w));
    mt_writer_close(w);
    close(fd);
    return st == MT_OK ? 0 : 1;
}
