/*
 * test_truncation.c - reads corpus traces cut at (nearly) every byte offset.
 * For each trace the full event list is read first (backtraces included,
 * every backtrace code resolved); then every prefix of the file is read from
 * an exactly-sized heap copy (so AddressSanitizer sees any overread). The
 * events of a prefix must be a prefix of the full list, field for field, and
 * the reader must stop with MT_EOF or an error status.
 *
 * Usage: test_truncation [CORPUS_DIR [TRACE ...]]
 *   CORPUS_DIR is overridden by the MEMTRACE_CORPUS environment variable;
 *   TRACE paths are relative to it (default: a fixed list of six traces).
 *
 * Cuts: every offset for files up to 100 KB (16 KB under AddressSanitizer),
 * every 7th above; the stride grows further when the quadratic re-reading
 * would exceed a byte budget (real-external.ctf: 540 KB). Offsets near
 * packet boundaries (the header and first content bytes of each packet, the
 * last bytes before it) are always all checked. MT_TRUNC_STRIDE=N forces
 * the stride.
 */
#include <memtrace/memtrace.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG_STRIDE 7
#if defined(__SANITIZE_ADDRESS__)
/* Under ASan the reader is ~15x slower, and opening one costs ~1.5 ms (its
 * 160 KB backtrace cache is a fresh mmap each time): a sparser sweep (the
 * offsets near packet boundaries are still all checked) keeps CI within its
 * time; the plain build checks every offset of the files up to 100 KB and
 * runs the full budget. */
#define BIG_FILE (16 * 1024)
#define BYTE_BUDGET 0.15e9        /* (0.3e9 until CI neared its 20 minutes) */
#else
#define BIG_FILE (100 * 1024)     /* every offset up to this size           */
#define BYTE_BUDGET 2.5e9         /* bytes re-read per file, at most        */
#endif
#define HEAD_WINDOW 96           /* offsets checked after a packet start   */
#define TAIL_WINDOW 16           /* offsets checked before a packet start  */
#define MAX_PACKETS 65536
#define DEEP_CHECKS 24           /* cuts per file with a full location check */

static const char *const default_traces[] = {
    "traces/real-ocamlopt-1e-5.ctf", "traces/synth-basic.ctf",
    "traces/synth-abuse.ctf",        "traces/ref-test-ocamlopt.ctf",
    "traces/ref-head-ocamlopt-v3.ctf", "traces/real-external.ctf",
};

static const char *g_file = "";

static int failf(size_t cut, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL [%s cut=%zu] ", g_file, cut);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* The full event list                                                      */

typedef struct rec {
    mt_event ev;                 /* backtrace pointer unused              */
    size_t bt_off;
} rec;

typedef struct evlist {
    rec *ev;
    size_t n, cap;
    uint64_t *bt;
    size_t bt_n, bt_cap;
    int status;                  /* final status of the full read         */
    mt_reader *r;                /* kept open: owns the location records  */
} evlist;

static void evlist_add(evlist *l, const mt_event *ev)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4096;
        l->ev = xrealloc(l->ev, l->cap * sizeof *l->ev);
    }
    if (l->bt_n + ev->backtrace_len > l->bt_cap) {
        while (l->bt_n + ev->backtrace_len > l->bt_cap)
            l->bt_cap = l->bt_cap ? 2 * l->bt_cap : 65536;
        l->bt = xrealloc(l->bt, l->bt_cap * sizeof *l->bt);
    }
    rec *x = &l->ev[l->n++];
    x->ev = *ev;
    x->ev.backtrace = NULL;
    x->bt_off = l->bt_n;
    if (ev->backtrace_len)
        memcpy(l->bt + l->bt_n, ev->backtrace, ev->backtrace_len * sizeof *l->bt);
    l->bt_n += ev->backtrace_len;
}

static void evlist_free(evlist *l)
{
    mt_reader_close(l->r);
    free(l->ev);
    free(l->bt);
}

/* Resolve a code and read every byte of its strings. */
static int touch_locations(mt_reader *r, uint64_t code, size_t cut)
{
    const mt_location *locs = NULL;
    size_t n = 0, sum = 0;
    int st = mt_reader_locations(r, code, &locs, &n);
    if (st != MT_OK)
        return failf(cut, "code %" PRId64 ": %s: %s", (int64_t)code,
                     mt_status_name(st), mt_reader_error(r));
    for (size_t i = 0; i < n; i++)
        sum += strlen(locs[i].filename) + strlen(locs[i].function);
    return sum == (size_t)-1;
}

static int read_full(const uint8_t *data, size_t size, evlist *l)
{
    mt_event ev;
    int st;
    memset(l, 0, sizeof *l);
    l->r = mt_reader_create(NULL);
    if (!l->r || (st = mt_reader_open_memory(l->r, data, size)) != MT_OK)
        return failf(size, "cannot open: %s", l->r ? mt_reader_error(l->r) : "nomem");
    while ((st = mt_reader_next(l->r, &ev)) == MT_OK) {
        for (size_t i = 0; i < ev.backtrace_len; i++)
            if (touch_locations(l->r, ev.backtrace[i], size))
                return 1;
        evlist_add(l, &ev);
    }
    l->status = st;
    if (st != MT_EOF)
        fprintf(stderr, "note: %s ends with %s: %s\n", g_file, mt_status_name(st),
                mt_reader_error(l->r));
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Comparing a prefix read against the full list                            */

static int same_event(const mt_event *a, const rec *x, const evlist *l)
{
    const mt_event *b = &x->ev;
    if (a->kind != b->kind || a->time != b->time || a->id != b->id ||
        a->domain != b->domain)
        return 0;
    if (a->kind != MT_EVENT_ALLOC)
        return 1;
    return a->source == b->source && a->length == b->length &&
           a->nsamples == b->nsamples && a->common_prefix == b->common_prefix &&
           a->backtrace_len == b->backtrace_len &&
           (a->backtrace_len == 0 ||
            memcmp(a->backtrace, l->bt + x->bt_off, a->backtrace_len * sizeof(uint64_t)) == 0);
}

static int same_locs(const mt_location *a, size_t na, const mt_location *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].filename, b[i].filename) || strcmp(a[i].function, b[i].function) ||
            a[i].line != b[i].line || a[i].start_char != b[i].start_char ||
            a[i].end_char != b[i].end_char)
            return 0;
    return 1;
}

/* The prefix reader must know the code, with the full reader's locations. */
static int check_code(mt_reader *r, const evlist *l, uint64_t code, size_t cut)
{
    const mt_location *a, *b;
    size_t na, nb;
    int st = mt_reader_locations(r, code, &a, &na);
    if (st != MT_OK)
        return failf(cut, "code %" PRId64 " unknown to the prefix reader: %s",
                     (int64_t)code, mt_status_name(st));
    if (mt_reader_locations(l->r, code, &b, &nb) != MT_OK || !same_locs(a, na, b, nb))
        return failf(cut, "code %" PRId64 ": locations differ", (int64_t)code);
    return 0;
}

static int check_codes(mt_reader *r, const evlist *l, const rec *x, size_t cut)
{
    for (size_t i = 0; i < x->ev.backtrace_len; i++)
        if (check_code(r, l, l->bt[x->bt_off + i], cut))
            return 1;
    return 0;
}

static int read_events(mt_reader *r, const evlist *l, size_t cut, int deep,
                       size_t *count, int *status)
{
    mt_event ev;
    size_t i = 0;
    int st;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        if (i >= l->n)
            return failf(cut, "more events than the full trace (%zu)", l->n);
        if (!same_event(&ev, &l->ev[i], l))
            return failf(cut, "event %zu (kind %d id %" PRId64 " time %" PRId64
                         " bt_len %zu) differs from the full read (kind %d id %"
                         PRId64 " time %" PRId64 " bt_len %zu)", i, ev.kind, ev.id,
                         ev.time, ev.backtrace_len, l->ev[i].ev.kind, l->ev[i].ev.id,
                         l->ev[i].ev.time, l->ev[i].ev.backtrace_len);
        if (deep && check_codes(r, l, &l->ev[i], cut))
            return 1;
        i++;
    }
    if (st != MT_EOF && st >= 0)
        return failf(cut, "reader ended with status %d", st);
    if (mt_reader_next(r, &ev) != st)
        return failf(cut, "status not sticky after %s", mt_status_name(st));
    if (i > 0 && check_codes(r, l, &l->ev[i - 1], cut))
        return 1;
    *count = i;
    *status = st;
    return 0;
}

/* Read the first `cut` bytes; report the event count and final status. */
static int check_cut(const uint8_t *data, size_t cut, const evlist *l, int deep,
                     size_t *count, int *status)
{
    uint8_t *copy = malloc(cut ? cut : 1);
    mt_reader *r = mt_reader_create(NULL);
    int bad = 0;
    if (!copy || !r) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memcpy(copy, data, cut);
    *count = 0;
    *status = mt_reader_open_memory(r, copy, cut);
    if (*status == MT_OK)
        bad = read_events(r, l, cut, deep, count, status);
    else if (*status > 0)
        bad = failf(cut, "open returned %d", *status);
    mt_reader_close(r);
    free(copy);
    return bad;
}

/* ------------------------------------------------------------------------ */
/* One trace                                                                */

static uint8_t *load_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t cap = 0, n = 0, got;
    if (!f)
        return NULL;
    do {
        if (n == cap)
            data = xrealloc(data, cap = cap ? 2 * cap : 65536);
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *size = n;
    return data;
}

static size_t pick_stride(size_t size)
{
    const char *env = getenv("MT_TRUNC_STRIDE");
    if (env && atoi(env) > 0)
        return (size_t)atoi(env);
    if (size <= BIG_FILE)
        return 1;
    size_t stride = BIG_STRIDE;
    double reread = (double)size * (double)size / 2.0;
    if (reread / stride > BYTE_BUDGET)
        stride = (size_t)(reread / BYTE_BUDGET) | 1;
    return stride;
}

static uint32_t get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* Start offsets of the packets, from the raw headers' size fields. */
static size_t packet_starts(const uint8_t *data, size_t size, size_t *starts)
{
    size_t off = 0, n = 0;
    while (off + 8 <= size && n < MAX_PACKETS) {
        size_t len = get_u32le(data + off + 4) / 8;
        starts[n++] = off;
        if (len < 66)
            break;
        off += len;
    }
    return n;
}

/* Is the cut within the windows around a packet start? (ascending cuts) */
static int near_boundary(size_t cut, const size_t *starts, size_t n, size_t *k)
{
    while (*k < n && starts[*k] + HEAD_WINDOW <= cut)
        ++*k;
    return *k < n && cut + TAIL_WINDOW >= starts[*k];
}

static int check_all_cuts(const uint8_t *data, size_t size, const evlist *l)
{
    static size_t starts[MAX_PACKETS];
    size_t stride = pick_stride(size), deep_every = size / DEEP_CHECKS + 1;
    size_t cuts = 0, count, max_seen = 0, k = 0;
    size_t npackets = packet_starts(data, size, starts);
    int status;
    for (size_t cut = 0; cut <= size; cut++) {
        if (cut % stride && !near_boundary(cut, starts, npackets, &k))
            continue;
        cuts++;
        if (check_cut(data, cut, l, cut % deep_every < stride, &count, &status))
            return 1;
        if (count < max_seen)
            return failf(cut, "fewer events (%zu) than a shorter prefix (%zu)", count, max_seen);
        max_seen = count;
    }
    if (check_cut(data, size, l, 1, &count, &status))
        return 1;
    if (count != l->n || status != l->status)
        return failf(size, "whole file: %zu events/%s, full read %zu/%s", count,
                     mt_status_name(status), l->n, mt_status_name(l->status));
    printf("%-34s %8zu bytes %7zu events %3zu packets %7zu cuts (stride %zu)\n",
           g_file, size, l->n, npackets, cuts, stride);
    return 0;
}

static int check_trace(const char *dir, const char *rel)
{
    char path[4096];
    size_t size = 0;
    evlist l;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    g_file = rel;
    uint8_t *data = load_file(path, &size);
    if (!data)
        return failf(0, "cannot read %s (is the corpus present? set MEMTRACE_CORPUS)", path);
    int bad = read_full(data, size, &l);
    if (!bad && l.n == 0)
        bad = failf(size, "no events in the full read");
    if (!bad)
        bad = check_all_cuts(data, size, &l);
    evlist_free(&l);
    free(data);
    return bad;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("MEMTRACE_CORPUS");
    const char *const *traces = default_traces;
    size_t ntraces = sizeof default_traces / sizeof default_traces[0];
    int failures = 0;
    if (!dir || !*dir)
        dir = argc >= 2 ? argv[1] : NULL;
    if (!dir) {
        fprintf(stderr, "FAIL: no corpus: set MEMTRACE_CORPUS or pass CORPUS_DIR\n");
        return 1;
    }
    if (argc >= 3) {
        traces = (const char *const *)argv + 2;
        ntraces = (size_t)argc - 2;
    }
    clock_t t0 = clock();
    for (size_t i = 0; i < ntraces; i++)
        failures += check_trace(dir, traces[i]);
    printf("truncation: %s, %.1f s CPU\n", failures ? "FAILED" : "ok",
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    return failures ? 1 : 0;
}
