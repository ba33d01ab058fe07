/*
 * domain_writers.h - one to three writers, one per domain, writing one
 * trace file: a v003 trace of several domains as one process makes it
 * (spec 8.10). Every writer writes to the same descriptor; the trace info
 * packet of all but the first is left out (the first's is the file's).
 * The caller flushes the domain last used before it uses another.
 * Shared by gen_odd.c and fuzz/fuzz_commands.c (header-only: each is one
 * program).
 */
#ifndef MT_DOMAIN_WRITERS_H
#define MT_DOMAIN_WRITERS_H

#include <errno.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#define DW_MAX 3

/* Where one domain's writer writes; drop: how many of its next packets
 * are left out. */
typedef struct dw_sink {
    int fd, drop;
} dw_sink;

static int dw_write(void *ctx, const void *buf, size_t len)
{
    dw_sink *k = ctx;
    if (k->drop) {
        k->drop--;
        return 0;
    }
    for (const char *p = buf; len;) {
        ssize_t n = write(k->fd, p, len);
        if (n < 0)
            return errno;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Open n (1 to DW_MAX) writers on fd with options opt, writer d for
 * domain opt->domain + d. 0, or -1 with the message in err. */
static int dw_open(mt_writer **w, dw_sink *sinks, int n, int fd, const mt_trace_info *info,
                   const mt_writer_options *opt, char *err, size_t errlen)
{
    for (int d = 0; d < n; d++) {
        mt_writer_options o = *opt;
        o.domain = opt->domain + d;
        sinks[d].fd = fd;
        sinks[d].drop = d > 0;
        if (mt_writer_open_sink(&w[d], dw_write, &sinks[d], info, &o, err, errlen))
            return -1;
    }
    return 0;
}

#endif /* MT_DOMAIN_WRITERS_H */
