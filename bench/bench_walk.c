/*
 * bench_walk.c - the floor under decoding: walk every event of a trace to
 * find where it ends (the format has no event lengths), decoding and
 * checking nothing, and time it side by side with a full decode
 * (mt_reader_scan) and a decode without backtraces, in one run.
 *
 *   bench_walk TRACE [ROUNDS (default 5)]
 *
 * The walk uses the library's wire primitives and packet layout (src/codec,
 * src/trace) so that it follows the format exactly; it assumes a valid v002
 * trace. Prints the best wall time of each pass, MB/s and the ratios.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "codec/wire.h"
#include "trace/packet.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const uint8_t *skip_codewords(const uint8_t *p, unsigned n)
{
    static const uint8_t size[4] = {2, 2, 3, 10};
    for (unsigned i = 0; i < n; i++)
        p += size[p[0] & 3];
    return p;
}

/* Events of the packets in m[0, size) (whole packets only); *used gets
 * the bytes they took, *x folds in every event word. */
static long walk(const uint8_t *m, size_t size, size_t *used, uint64_t *x)
{
    long n = 0;
    size_t off = 0;
    while (off + MT_HEADER_V2 <= size) {
        size_t psize = mt_ld32(m + off + 4) / 8;
        if (psize < MT_HEADER_V2 || off + psize > size)
            break;
        const uint8_t *p = m + off + MT_HEADER_V2, *e = m + off + psize;
        off += psize;
        while (p < e) {
            uint32_t w = mt_ld32(p);
            unsigned code = w >> 25;
            *x += w;
            p += 4;
            if (code == MT_EV_COLLECT || code == MT_EV_PROMOTE) {
                p += mt_vint_len(p[0]);
            } else if (code > MT_EV_SHORT_BASE) {
                p += mt_vint_len(p[0]);
                unsigned k = *p++;
                p = skip_codewords(p, k);
            } else if (code == MT_EV_ALLOC) {
                p += mt_vint_len(p[0]);
                p += mt_vint_len(p[0]);
                p++;
                p += mt_vint_len(p[0]);
                unsigned k = mt_ld16(p);
                p = skip_codewords(p + 2, k);
            } else if (code == MT_EV_LOCATION) {
                unsigned k = p[8];
                p += 9;
                for (unsigned i = 0; i < k; i++) {
                    uint64_t pk = mt_ld32(p) | (uint64_t)mt_ld16(p + 4) << 32;
                    p += 6;
                    if (((pk >> 38) & 31) == 31)
                        p += strlen((const char *)p) + 1;
                    if (((pk >> 43) & 31) == 31)
                        p += strlen((const char *)p) + 1;
                }
            } else {
                break;                        /* trace_info */
            }
            n++;
        }
    }
    *used = off;
    return n;
}

/* Walk the file read in 256 KiB chunks, as the reader reads it. */
static long walk_file(int fd, uint64_t *x)
{
    enum { CHUNK = 256 * 1024, CAP = CHUNK + 2 * MT_MAX_PACKET };
    static uint8_t buf[CAP + 4096];   /* slack: the walk reads a little past */
    size_t have = 0;
    long n = 0;
    if (lseek(fd, 0, SEEK_SET) != 0) {
        perror("lseek");
        exit(1);
    }
    for (;;) {
        ssize_t got = read(fd, buf + have, CAP - have < CHUNK ? CAP - have : CHUNK);
        if (got < 0) {
            perror("read");
            exit(1);
        }
        have += (size_t)got;
        size_t used;
        n += walk(buf, have, &used, x);
        if (got == 0)
            return n;
        memmove(buf, buf + used, have - used);
        have -= used;
    }
}

static int count(void *ctx, const mt_event *ev)
{
    uint64_t *x = ctx;
    *x += ev->backtrace_len + (ev->backtrace_len ? ev->backtrace[ev->backtrace_len - 1] : 0);
    return 0;
}

static double decode(const char *path, int skip, uint64_t *x)
{
    mt_reader_options o = {0};
    o.skip_backtraces = skip;
    mt_reader *r = mt_reader_create(&o);
    double t = now();
    if (!r || mt_reader_open_file(r, path) != MT_OK ||
        mt_reader_scan(r, count, x) != MT_EOF) {
        fprintf(stderr, "bench_walk: %s: %s\n", path, r ? mt_reader_error(r) : "no memory");
        exit(1);
    }
    t = now() - t;
    mt_reader_close(r);
    return t;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_walk TRACE [ROUNDS]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    size_t size = (size_t)st.st_size;
    double best[3] = {1e9, 1e9, 1e9};
    uint64_t x = 0;
    long events = 0;
    for (int i = 0; i < rounds; i++) {
        double t = now();
        events = walk_file(fd, &x);
        t = now() - t;
        if (t < best[0])
            best[0] = t;
        t = decode(argv[1], 0, &x);
        if (t < best[1])
            best[1] = t;
        t = decode(argv[1], 1, &x);
        if (t < best[2])
            best[2] = t;
    }
    const char *name[3] = {"walk (find event ends only)", "full decode (scan)",
                           "decode, no backtraces (scan)"};
    printf("%s: %zu bytes, %ld events, best of %d rounds (checksum %llx)\n",
           argv[1], size, events, rounds, (unsigned long long)x);
    for (int i = 0; i < 3; i++)
        printf("%-30s %7.3f s %8.1f MB/s %7.2f Mev/s %5.2fx walk\n", name[i],
               best[i], (double)size / best[i] / 1e6, (double)events / best[i] / 1e6,
               best[i] / best[0]);
    close(fd);
    return 0;
}
