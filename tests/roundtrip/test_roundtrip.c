/*
 * test_roundtrip.c - property test of the writer/reader pair: random event
 * streams (allocations with realistic callstacks, promotions, collections,
 * awkward timestamps and values) are written with mt_writer to memory in
 * format v2 and v3, read back with mt_reader and compared field by field,
 * including location lists and the trace_info record. Also checks the
 * skip_backtraces mode and the reader's handling of an over-long callstack.
 *
 * Usage: test_roundtrip            run the default seeds (0 .. 199)
 *        test_roundtrip SEED       reproduce one seed
 *        test_roundtrip FIRST N    run N seeds starting at FIRST
 *        test_roundtrip --long     only the long-callstack test
 */
#include <memtrace/memtrace.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 120
#define MAX_LOCS 4
#define DEFAULT_SEEDS 200
#define MAX_PACKET 32768

/* ------------------------------------------------------------------------ */
/* Failure reporting                                                        */

static char g_where[96] = "";

static int failf(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL [%s] ", g_where);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
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
/* PRNG: splitmix64                                                         */

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t rng_below(rng *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}

static int rng_pct(rng *r, unsigned pct)
{
    return rng_below(r, 100) < pct;
}

/* The canonical 63-bit form of a 64-bit word (bit 63 := bit 62). */
static int64_t canon63(uint64_t u)
{
    return (int64_t)(u << 1) >> 1;
}

/* ------------------------------------------------------------------------ */
/* Memory sink                                                              */

typedef struct membuf {
    uint8_t *data;
    size_t len, cap;
} membuf;

static int sink_cb(void *ctx, const void *buf, size_t len)
{
    membuf *m = ctx;
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < m->len + len)
            cap *= 2;
        m->data = xrealloc(m->data, cap);
        m->cap = cap;
    }
    memcpy(m->data + m->len, buf, len);
    m->len += len;
    return 0;
}

static uint32_t get_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* Writer invariant: the output is a sequence of whole packets, none larger
 * than 32768 bytes, each at least a header. */
static int check_packets(const membuf *m, int version)
{
    size_t hdr = version >= 3 ? 68 : 66, off = 0, n = 0;
    while (off < m->len) {
        if (m->len - off < hdr)
            return failf("output ends inside a packet header at %zu", off);
        size_t size = get_u32le(m->data + off + 4) / 8;
        if (get_u32le(m->data + off) != 0xC1FC1FC1u)
            return failf("packet %zu at %zu: bad magic", n, off);
        if (size < hdr || size > MAX_PACKET || size > m->len - off)
            return failf("packet %zu at %zu: bad size %zu", n, off, size);
        off += size;
        n++;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Random names and location codes                                          */

typedef struct names {
    char **s;
    size_t n;
} names;

static char *random_string(rng *r, size_t minlen, size_t maxlen)
{
    size_t len = minlen + rng_below(r, maxlen - minlen + 1);
    char *s = xmalloc(len + 1);
    for (size_t i = 0; i < len; i++)
        s[i] = (char)(0x20 + rng_below(r, 0x7F - 0x20));
    s[len] = 0;
    return s;
}

static void names_init(names *ns, rng *r, size_t n)
{
    ns->n = n;
    ns->s = xmalloc(n * sizeof *ns->s);
    for (size_t i = 0; i < n; i++)
        ns->s[i] = random_string(r, 1, 60);
}

static void names_free(names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->s[i]);
    free(ns->s);
}

/* Skewed pick: the first few names are hot, so MTF hits are frequent. */
static const char *names_pick(const names *ns, rng *r)
{
    size_t hot = ns->n < 6 ? ns->n : 6;
    return ns->s[rng_pct(r, 60) ? rng_below(r, hot) : rng_below(r, ns->n)];
}

static uint64_t random_code(rng *r)
{
    const uint64_t low62 = (1ULL << 62) - 1;
    uint64_t c;
    switch (rng_below(r, 10)) {
    case 0: c = 1 + rng_below(r, 1000); break;
    case 1: c = low62 - rng_below(r, 1000); break;
    case 2: c = 0xC000000000000000ULL | (rng_next(r) & low62); break;
    case 3: c = (uint64_t)0 - 1 - rng_below(r, 1000); break; /* -1, -2 ... */
    case 4: c = rng_next(r) & low62; break;
    default: c = 0x2ADBF7B80000ULL + 4 * rng_below(r, 1u << 24); break;
    }
    return c;
}

static int random_line(rng *r)
{
    switch (rng_below(r, 8)) {
    case 0: return 0;
    case 1: return 0xFFFFF;
    case 2: return (int)rng_below(r, 0x100000);
    default: return (int)rng_below(r, 3000);
    }
}

/* ------------------------------------------------------------------------ */
/* The pool of call sites (location code -> location list)                  */

typedef struct site {
    uint64_t code;
    mt_location locs[MAX_LOCS];
    size_t nlocs;
    int used;
} site;

typedef struct pool {
    site *sites;
    size_t n;
    uint32_t *map;   /* open addressing: site index + 1, 0 = empty */
    size_t mask;
    size_t located;  /* locate callback calls (> codes used: evictions) */
} pool;

static size_t hash_code(uint64_t c)
{
    c ^= c >> 33;
    c *= 0xFF51AFD7ED558CCDULL;
    c ^= c >> 33;
    return (size_t)c;
}

static long pool_find(const pool *p, uint64_t code)
{
    for (size_t h = hash_code(code) & p->mask;; h = (h + 1) & p->mask) {
        uint32_t v = p->map[h];
        if (!v)
            return -1;
        if (p->sites[v - 1].code == code)
            return (long)(v - 1);
    }
}

static void pool_insert(pool *p, size_t idx)
{
    size_t h = hash_code(p->sites[idx].code) & p->mask;
    while (p->map[h])
        h = (h + 1) & p->mask;
    p->map[h] = (uint32_t)(idx + 1);
}

static void site_init(site *s, rng *r, const names *files, const names *funcs)
{
    s->nlocs = rng_below(r, MAX_LOCS + 1);
    s->used = 0;
    for (size_t i = 0; i < s->nlocs; i++) {
        mt_location *l = &s->locs[i];
        l->filename = names_pick(files, r);
        l->function = names_pick(funcs, r);
        l->line = random_line(r);
        l->start_char = (int)rng_below(r, 256);
        l->end_char = (int)rng_below(r, 1024);
    }
}

static void pool_init(pool *p, rng *r, size_t n, const names *files,
                      const names *funcs)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    p->n = 0;
    p->sites = xmalloc(n * sizeof *p->sites);
    p->map = calloc(cap, sizeof *p->map);
    if (!p->map)
        exit(2);
    p->mask = cap - 1;
    while (p->n < n) {
        uint64_t c = random_code(r);
        if (c == 0 || pool_find(p, c) >= 0)
            continue;
        p->sites[p->n].code = c;
        site_init(&p->sites[p->n], r, files, funcs);
        pool_insert(p, p->n);
        p->n++;
    }
}

static void pool_free(pool *p)
{
    free(p->sites);
    free(p->map);
}

static int locate_cb(void *ctx, uint64_t code, const mt_location **locs,
                     size_t *n)
{
    pool *p = ctx;
    long i = pool_find(p, code);
    if (i < 0)
        return 1;
    *locs = p->sites[i].locs;
    *n = p->sites[i].nlocs;
    p->located++;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Expected events                                                          */

typedef struct xevent {
    mt_event_kind kind;
    int64_t time, id, length, nsamples, common_prefix;
    mt_source source;
    size_t bt_off, bt_len;       /* into stream.bt, caller first          */
} xevent;

typedef struct stream {
    xevent *ev;
    size_t n, cap;
    uint64_t *bt;
    size_t bt_n, bt_cap;
} stream;

static xevent *stream_push(stream *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->ev = xrealloc(s->ev, s->cap * sizeof *s->ev);
    }
    memset(&s->ev[s->n], 0, sizeof s->ev[0]);
    return &s->ev[s->n++];
}

static size_t stream_add_bt(stream *s, const uint64_t *codes, size_t n)
{
    if (n == 0)
        return s->bt_n;
    if (s->bt_n + n > s->bt_cap) {
        while (s->bt_n + n > s->bt_cap)
            s->bt_cap = s->bt_cap ? 2 * s->bt_cap : 65536;
        s->bt = xrealloc(s->bt, s->bt_cap * sizeof *s->bt);
    }
    memcpy(s->bt + s->bt_n, codes, n * sizeof *codes);
    s->bt_n += n;
    return s->bt_n - n;
}

static void stream_free(stream *s)
{
    free(s->ev);
    free(s->bt);
}

/* ------------------------------------------------------------------------ */
/* Random event parameters                                                  */

static int64_t pick_length(rng *r)
{
    static const int64_t special[] = {
        0, 17, 252, 253, 65535, 65536, INT32_MAX, (int64_t)INT32_MAX + 1,
        UINT32_MAX, ((int64_t)1 << 62) - 1, -1, -5, INT32_MIN,
        (int64_t)INT32_MIN - 1, -((int64_t)1 << 62)};
    unsigned u = (unsigned)rng_below(r, 100);
    if (u < 75)
        return 1 + (int64_t)rng_below(r, 16);
    if (u < 85)
        return special[rng_below(r, sizeof special / sizeof special[0])];
    if (u < 95)
        return 17 + (int64_t)rng_below(r, 100000);
    return canon63(rng_next(r));
}

static int64_t pick_nsamples(rng *r)
{
    static const int64_t special[] = {
        0, 2, 252, 253, 65536, (int64_t)1 << 33, ((int64_t)1 << 62) - 1, -1};
    if (rng_pct(r, 80))
        return 1;
    if (rng_pct(r, 50))
        return 1 + (int64_t)rng_below(r, 40);
    return special[rng_below(r, sizeof special / sizeof special[0])];
}

static mt_source pick_source(rng *r)
{
    unsigned u = (unsigned)rng_below(r, 10);
    return u < 7 ? MT_SOURCE_MINOR : u < 9 ? MT_SOURCE_MAJOR : MT_SOURCE_EXTERNAL;
}

static int64_t pick_time_step(rng *r)
{
    static const int64_t special[] = {
        (int64_t)1 << 25, ((int64_t)1 << 25) + 1, ((int64_t)1 << 25) - 1,
        30000000, 30000001, 29999999, 40000000};
    unsigned u = (unsigned)rng_below(r, 1000);
    if (u < 300)
        return 0;
    if (u < 900)
        return (int64_t)rng_below(r, 2000);
    if (u < 970)
        return (int64_t)rng_below(r, 3000000);
    if (u < 990)
        return special[rng_below(r, sizeof special / sizeof special[0])];
    return (int64_t)rng_below(r, (uint64_t)1 << 40);
}

/* Object id for a promote/collect: mostly recent, sometimes far back. */
static int64_t pick_old_id(rng *r, int64_t next_id)
{
    uint64_t delta;
    if (rng_pct(r, 40))
        delta = 0;
    else if (rng_pct(r, 60))
        delta = rng_below(r, next_id < 100 ? (uint64_t)next_id : 100);
    else
        delta = rng_below(r, (uint64_t)next_id);
    return next_id - 1 - (int64_t)delta;
}

static size_t pick_depth(rng *r)
{
    unsigned u = (unsigned)rng_below(r, 100);
    if (u < 5)
        return 0;
    if (u < 40)
        return 1 + rng_below(r, 10);
    if (u < 80)
        return 11 + rng_below(r, 50);
    return 61 + rng_below(r, MAX_DEPTH - 60);
}

/* ------------------------------------------------------------------------ */
/* Callstack generation (caller-first site indices)                         */

typedef struct genstate {
    rng r;
    pool *p;
    size_t hot;                  /* sites [0, hot) are drawn often         */
    unsigned hot_pct;            /* percentage of frames drawn from them   */
    size_t prev[MAX_DEPTH], prev_len;
} genstate;

static size_t pick_site(genstate *g)
{
    if (rng_pct(&g->r, g->hot_pct))
        return rng_below(&g->r, g->hot);
    return rng_below(&g->r, g->p->n);
}

/* Append frames up to depth: random sites, recursion runs and cycles. */
static size_t append_frames(genstate *g, size_t *cs, size_t len, size_t depth)
{
    while (len < depth) {
        size_t room = depth - len, mode = rng_below(&g->r, 10);
        if (mode < 2) {              /* run of one frame (recursion)      */
            size_t f = pick_site(g), k = 1 + rng_below(&g->r, room);
            while (k--)
                cs[len++] = f;
        } else if (mode < 3 && room >= 4) { /* cycle of 2..3 frames      */
            size_t c[3] = {pick_site(g), pick_site(g), pick_site(g)};
            size_t period = 2 + rng_below(&g->r, 2), k = rng_below(&g->r, room);
            for (size_t i = 0; i < k; i++)
                cs[len++] = c[i % period];
            if (k == 0)
                cs[len++] = c[0];
        } else {
            cs[len++] = pick_site(g);
        }
    }
    return len;
}

/* A new callstack sharing an outer part with the previous one. */
static size_t next_callstack(genstate *g, size_t *cs)
{
    size_t depth = pick_depth(&g->r);
    size_t maxkeep = g->prev_len < depth ? g->prev_len : depth, keep;
    if (rng_pct(&g->r, 70) && maxkeep > 0)
        keep = maxkeep - rng_below(&g->r, maxkeep < 4 ? maxkeep + 1 : 4);
    else
        keep = rng_below(&g->r, maxkeep + 1);
    memcpy(cs, g->prev, keep * sizeof *cs);
    size_t len = append_frames(g, cs, keep, depth);
    memcpy(g->prev, cs, len * sizeof *cs);
    g->prev_len = len;
    return len;
}

/* ------------------------------------------------------------------------ */
/* Seed parameters and the trace_info record                                */

typedef struct params {
    size_t nevents, ncodes, nfiles, nfuncs;
    unsigned hot_pct;
} params;

static params seed_params(uint64_t seed, rng *r)
{
    params pa;
    pa.nevents = 1000 + rng_below(r, 3000);
    pa.ncodes = 100 + rng_below(r, 3000);
    pa.nfiles = rng_pct(r, 50) ? 5 + rng_below(r, 20) : 32 + rng_below(r, 40);
    pa.nfuncs = 5 + rng_below(r, 60);
    pa.hot_pct = 50;
    if (seed % 10 == 3) {        /* many codes: backtrace cache eviction  */
        pa.ncodes = 16384 + 4000 + rng_below(r, 8000);
        pa.nevents = 7000 + rng_below(r, 2000);
        pa.hot_pct = 5;
    }
    if (seed % 20 == 7)          /* > 10000 allocations: v3 id chunks     */
        pa.nevents = 14000 + rng_below(r, 4000);
    return pa;
}

typedef struct infostrs {
    char *exe, *host, *params, *context;
} infostrs;

static char *maybe_empty_string(rng *r, unsigned pct_empty, size_t maxlen)
{
    if (rng_pct(r, pct_empty)) {
        char *s = xmalloc(1);
        s[0] = 0;
        return s;
    }
    return random_string(r, 1, maxlen);
}

static mt_trace_info random_info(rng *r, infostrs *st)
{
    mt_trace_info in;
    memset(&in, 0, sizeof in);
    static const double rates[] = {1e-5, 2e-5, 1e-6, 1.0, 0.5};
    in.sample_rate = rng_pct(r, 50) ? rates[rng_below(r, 5)]
                                    : (double)(1 + (rng_next(r) >> 11)) / 9007199254740992.0;
    in.word_size = rng_pct(r, 80) ? 64 : 32;
    st->exe = maybe_empty_string(r, 10, 200);
    st->host = maybe_empty_string(r, 10, 40);
    st->params = maybe_empty_string(r, 30, 80);
    unsigned c = (unsigned)rng_below(r, 3);
    st->context = c == 0 ? NULL : c == 1 ? maybe_empty_string(r, 100, 1)
                                         : random_string(r, 1, 100);
    in.executable_name = st->exe;
    in.host_name = st->host;
    in.runtime_params = st->params;
    in.context = st->context;
    in.pid = rng_pct(r, 80) ? (int64_t)rng_below(r, 1u << 22)
                            : (int64_t)(rng_next(r) >> 2);
    unsigned t = (unsigned)rng_below(r, 4);
    int64_t base = 1586965711174340 + (int64_t)rng_below(r, 1ULL << 42);
    in.start_time = t == 0 ? 0
                  : t == 1 ? (base & ~(int64_t)0x1FFFFFF) + 0x1FFFFFF - (int64_t)rng_below(r, 50)
                           : base;
    return in;
}

static void infostrs_free(infostrs *st)
{
    free(st->exe);
    free(st->host);
    free(st->params);
    free(st->context);
}

static int str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static int check_info(const mt_trace_info *got, const mt_trace_info *want,
                      int version, int domain)
{
    if (!got)
        return failf("mt_reader_info returned NULL");
    if (got->sample_rate != want->sample_rate)
        return failf("sample_rate %.17g, want %.17g", got->sample_rate, want->sample_rate);
    if (got->word_size != want->word_size)
        return failf("word_size %d, want %d", got->word_size, want->word_size);
    if (!str_eq(got->executable_name, want->executable_name) ||
        !str_eq(got->host_name, want->host_name) ||
        !str_eq(got->runtime_params, want->runtime_params))
        return failf("info strings differ (exe '%s')", got->executable_name);
    if (got->pid != want->pid || got->start_time != want->start_time)
        return failf("pid/start_time %" PRId64 "/%" PRId64 ", want %" PRId64 "/%" PRId64,
                     got->pid, got->start_time, want->pid, want->start_time);
    int want_null = !want->context || !want->context[0];
    if (want_null ? got->context != NULL : !str_eq(got->context, want->context))
        return failf("context '%s', want '%s'", got->context ? got->context : "(null)",
                     want_null ? "(null)" : want->context);
    if (got->format_version != version)
        return failf("format_version %d, want %d", got->format_version, version);
    if (got->initial_domain != (version >= 3 ? domain : 0))
        return failf("initial_domain %d, want %d", got->initial_domain, domain);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Writing one random stream                                                */

typedef struct wctx {
    mt_writer *w;
    genstate g;
    stream *s;
    int64_t time;
    size_t prev_codes_len;
    uint64_t prev_codes[MAX_DEPTH];  /* caller first                      */
} wctx;

static size_t common_prefix_len(const uint64_t *a, size_t na,
                                const uint64_t *b, size_t nb)
{
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    return i;
}

/* The next callstack as codes, caller first and callee first. */
static size_t next_codes(wctx *c, uint64_t *caller, uint64_t *callee)
{
    size_t cs[MAX_DEPTH];
    size_t n = next_callstack(&c->g, cs);
    for (size_t i = 0; i < n; i++) {
        site *st = &c->g.p->sites[cs[i]];
        st->used = 1;
        caller[i] = st->code;
        callee[n - 1 - i] = st->code;
    }
    return n;
}

static int write_alloc(wctx *c)
{
    uint64_t caller[MAX_DEPTH], callee[MAX_DEPTH];
    size_t n = next_codes(c, caller, callee);
    xevent *e = stream_push(c->s);
    e->kind = MT_EVENT_ALLOC;
    e->time = c->time;
    e->length = pick_length(&c->g.r);
    e->nsamples = pick_nsamples(&c->g.r);
    e->source = pick_source(&c->g.r);
    e->common_prefix = (int64_t)common_prefix_len(caller, n, c->prev_codes,
                                                  c->prev_codes_len);
    e->bt_off = stream_add_bt(c->s, caller, n);
    e->bt_len = n;
    memcpy(c->prev_codes, caller, n * sizeof *caller);
    c->prev_codes_len = n;
    int64_t want_id = mt_writer_next_id(c->w), id = -1;
    int st = mt_writer_alloc(c->w, e->time, e->length, e->nsamples, e->source,
                             callee, n, locate_cb, c->g.p, &id);
    if (st != MT_OK)
        return failf("mt_writer_alloc #%zu: %s: %s", c->s->n - 1,
                     mt_status_name(st), mt_writer_error(c->w));
    if (id != want_id)
        return failf("mt_writer_alloc returned id %" PRId64 ", next_id said %" PRId64,
                     id, want_id);
    e->id = id;
    return 0;
}

static int write_promote_collect(wctx *c, mt_event_kind kind)
{
    xevent *e = stream_push(c->s);
    e->kind = kind;
    e->time = c->time;
    e->id = pick_old_id(&c->g.r, mt_writer_next_id(c->w));
    int st = kind == MT_EVENT_PROMOTE ? mt_writer_promote(c->w, e->time, e->id)
                                      : mt_writer_collect(c->w, e->time, e->id);
    if (st != MT_OK)
        return failf("promote/collect #%zu of id %" PRId64 ": %s: %s", c->s->n - 1,
                     e->id, mt_status_name(st), mt_writer_error(c->w));
    return 0;
}

static int write_one(wctx *c)
{
    c->time += pick_time_step(&c->g.r);
    int64_t next_id = mt_writer_next_id(c->w);
    unsigned u = (unsigned)rng_below(&c->g.r, 100);
    if (rng_pct(&c->g.r, 1) && mt_writer_flush(c->w) != MT_OK)
        return failf("mt_writer_flush: %s", mt_writer_error(c->w));
    if (next_id > 0 && u < 15)
        return write_promote_collect(c, MT_EVENT_PROMOTE);
    if (next_id > 0 && u < 30)
        return write_promote_collect(c, MT_EVENT_COLLECT);
    return write_alloc(c);
}

/* Write the whole stream; returns 0 on success. Allocation ids are checked
 * here against the writer's counter. */
static int write_stream(membuf *out, stream *s, pool *p, uint64_t seed,
                        const params *pa, const mt_trace_info *info,
                        int version, int domain)
{
    mt_writer_options opt = {.format_version = version, .domain = domain};
    char err[256] = "";
    wctx c;
    memset(&c, 0, sizeof c);
    c.g.r.s = seed * 7919 + 17;
    c.g.p = p;
    c.g.hot = p->n < 64 ? p->n : 64;
    c.g.hot_pct = pa->hot_pct;
    c.s = s;
    c.time = info->start_time;
    int st = mt_writer_open_sink(&c.w, sink_cb, out, info, &opt, err, sizeof err);
    if (st != MT_OK)
        return failf("mt_writer_open_sink: %s: %s", mt_status_name(st), err);
    int64_t allocs = 0;
    for (size_t i = 0; i < pa->nevents; i++) {
        if (write_one(&c)) {
            mt_writer_close(c.w);
            return 1;
        }
        xevent *e = &s->ev[s->n - 1];
        if (e->kind == MT_EVENT_ALLOC && e->id != allocs++) {
            mt_writer_close(c.w);
            return failf("alloc #%zu got id %" PRId64 ", want %" PRId64, i, e->id, allocs - 1);
        }
    }
    st = mt_writer_close(c.w);
    if (st != MT_OK)
        return failf("mt_writer_close: %s", mt_status_name(st));
    return check_packets(out, version);
}

/* ------------------------------------------------------------------------ */
/* Reading back                                                             */

static int check_event(const mt_event *ev, const xevent *x, const stream *s,
                       size_t i, int skip, int domain)
{
    if (ev->kind != x->kind || ev->time != x->time || ev->id != x->id)
        return failf("event %zu: kind/time/id %d/%" PRId64 "/%" PRId64
                     ", want %d/%" PRId64 "/%" PRId64, i, ev->kind, ev->time,
                     ev->id, x->kind, x->time, x->id);
    if (ev->domain != domain)
        return failf("event %zu: domain %d, want %d", i, ev->domain, domain);
    if (x->kind != MT_EVENT_ALLOC)
        return 0;
    if (ev->source != x->source || ev->length != x->length ||
        ev->nsamples != x->nsamples)
        return failf("event %zu: source/length/nsamples %d/%" PRId64 "/%" PRId64
                     ", want %d/%" PRId64 "/%" PRId64, i, ev->source, ev->length,
                     ev->nsamples, x->source, x->length, x->nsamples);
    if (ev->common_prefix != x->common_prefix)
        return failf("event %zu: common_prefix %" PRId64 ", want %" PRId64, i,
                     ev->common_prefix, x->common_prefix);
    size_t want_len = skip ? 0 : x->bt_len;
    if (ev->backtrace_len != want_len)
        return failf("event %zu: backtrace_len %zu, want %zu", i, ev->backtrace_len, want_len);
    if (want_len && (!ev->backtrace ||
                     memcmp(ev->backtrace, s->bt + x->bt_off, want_len * sizeof(uint64_t))))
        return failf("event %zu: backtrace differs", i);
    return 0;
}

static int loc_eq(const mt_location *a, const mt_location *b)
{
    return str_eq(a->filename, b->filename) && str_eq(a->function, b->function) &&
           a->line == b->line && a->start_char == b->start_char &&
           a->end_char == b->end_char;
}

static int check_locations(mt_reader *r, const pool *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const site *s = &p->sites[i];
        const mt_location *locs = NULL;
        size_t n = 0;
        if (!s->used)
            continue;
        int st = mt_reader_locations(r, s->code, &locs, &n);
        if (st != MT_OK)
            return failf("locations of code %" PRId64 ": %s", (int64_t)s->code,
                         mt_status_name(st));
        if (n != s->nlocs)
            return failf("code %" PRId64 ": %zu locations, want %zu",
                         (int64_t)s->code, n, s->nlocs);
        for (size_t k = 0; k < n; k++)
            if (!loc_eq(&locs[k], &s->locs[k]))
                return failf("code %" PRId64 " location %zu differs: %s@%s:%d:%d-%d",
                             (int64_t)s->code, k, locs[k].function, locs[k].filename,
                             locs[k].line, locs[k].start_char, locs[k].end_char);
    }
    return 0;
}

/* A code never used in a backtrace must be unknown to the reader. */
static int check_unknown_code(mt_reader *r, const pool *p)
{
    uint64_t code = 0x5A5A5A5A5A5A5ULL;
    while (pool_find(p, code) >= 0)
        code++;
    const mt_location *locs;
    size_t n;
    int st = mt_reader_locations(r, code, &locs, &n);
    if (st != MT_ERR_LOCATION)
        return failf("locations of undefined code: %s, want MT_ERR_LOCATION",
                     mt_status_name(st));
    return 0;
}

static int read_events(mt_reader *r, const stream *s, int skip, int domain)
{
    mt_event ev;
    size_t i = 0;
    int st;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        if (i >= s->n)
            return failf("reader delivered more than %zu events", s->n);
        if (check_event(&ev, &s->ev[i], s, i, skip, domain))
            return 1;
        i++;
    }
    if (st != MT_EOF)
        return failf("after %zu events: %s: %s", i, mt_status_name(st), mt_reader_error(r));
    if (i != s->n)
        return failf("read %zu events, want %zu", i, s->n);
    if (mt_reader_next(r, &ev) != MT_EOF)
        return failf("mt_reader_next after EOF is not EOF");
    return 0;
}

static int read_back(const membuf *m, const stream *s, const pool *p,
                     const mt_trace_info *info, int version, int domain, int skip)
{
    mt_reader_options opt = {.skip_backtraces = skip};
    mt_reader *r = mt_reader_create(&opt);
    if (!r)
        return failf("mt_reader_create failed");
    int st = mt_reader_open_memory(r, m->data, m->len);
    int bad = st != MT_OK ? failf("open: %s: %s", mt_status_name(st), mt_reader_error(r))
                          : check_info(mt_reader_info(r), info, version, domain);
    if (!bad)
        bad = read_events(r, s, skip, version >= 3 ? domain : 0);
    if (!bad && !skip)
        bad = check_locations(r, p) || check_unknown_code(r, p);
    mt_reader_close(r);
    return bad;
}

/* ------------------------------------------------------------------------ */
/* One seed                                                                 */

/* With MT_RT_VERBOSE set: what a seed exercised. */
static void print_stats(uint64_t seed, int version, const membuf *m,
                        const stream *s, const pool *p)
{
    size_t allocs = 0, frames = 0, used = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == MT_EVENT_ALLOC) {
            allocs++;
            frames += s->ev[i].bt_len;
        }
    for (size_t i = 0; i < p->n; i++)
        used += p->sites[i].used;
    printf("seed %" PRIu64 " v%d: %zu bytes, %zu events, %zu allocs, %zu frames,"
           " %zu/%zu codes used, %zu defined\n", seed, version, m->len, s->n,
           allocs, frames, used, p->n, p->located);
}

static int run_version(uint64_t seed, const params *pa, pool *p,
                       const mt_trace_info *info, int version, int domain)
{
    membuf m = {NULL, 0, 0};
    stream s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < p->n; i++)
        p->sites[i].used = 0;
    p->located = 0;
    snprintf(g_where, sizeof g_where, "seed=%" PRIu64 " v%d", seed, version);
    int bad = write_stream(&m, &s, p, seed, pa, info, version, domain);
    if (!bad && getenv("MT_RT_VERBOSE"))
        print_stats(seed, version, &m, &s, p);
    if (!bad)
        bad = read_back(&m, &s, p, info, version, domain, 0);
    if (!bad)
        bad = read_back(&m, &s, p, info, version, domain, 1);
    stream_free(&s);
    free(m.data);
    return bad;
}

static int run_seed(uint64_t seed)
{
    rng r = {seed * 0x2545F4914F6CDD1DULL + 1};
    params pa = seed_params(seed, &r);
    names files, funcs;
    pool p;
    infostrs strs;
    names_init(&files, &r, pa.nfiles);
    names_init(&funcs, &r, pa.nfuncs);
    pool_init(&p, &r, pa.ncodes, &files, &funcs);
    mt_trace_info info = random_info(&r, &strs);
    int domain = rng_pct(&r, 50) ? 0 : (int)rng_below(&r, 65536);
    int bad = run_version(seed, &pa, &p, &info, 2, 0) ||
              run_version(seed, &pa, &p, &info, 3, domain);
    infostrs_free(&strs);
    pool_free(&p);
    names_free(&files);
    names_free(&funcs);
    return bad;
}

/* ------------------------------------------------------------------------ */
/* Over-long callstack: the codec's 4096-byte budget truncates it           */

#define LONG_DEPTH 1000

typedef struct longctx {
    uint64_t codes[LONG_DEPTH + 8];
    mt_location loc;
} longctx;

static int long_locate(void *ctx, uint64_t code, const mt_location **locs,
                       size_t *n)
{
    longctx *lc = ctx;
    (void)code;
    *locs = &lc->loc;
    *n = 1;
    return 0;
}

static int write_long(membuf *m, longctx *lc, int version)
{
    mt_trace_info info;
    mt_writer_options opt = {.format_version = version};
    mt_writer *w = NULL;
    uint64_t cs[LONG_DEPTH];
    memset(&info, 0, sizeof info);
    info.sample_rate = 1e-5;
    info.word_size = 64;
    info.executable_name = info.host_name = info.runtime_params = "x";
    info.pid = 42;
    info.start_time = 1000000;
    if (mt_writer_open_sink(&w, sink_cb, m, &info, &opt, NULL, 0) != MT_OK)
        return failf("open writer");
    for (size_t i = 0; i < LONG_DEPTH; i++)   /* callee first */
        cs[i] = lc->codes[LONG_DEPTH - 1 - i];
    int st = mt_writer_alloc(w, 1000001, 5, 1, MT_SOURCE_MINOR, cs, LONG_DEPTH,
                             long_locate, lc, NULL);
    cs[0] = lc->codes[LONG_DEPTH];            /* new allocation site       */
    if (!st)
        st = mt_writer_alloc(w, 1000002, 6, 1, MT_SOURCE_MINOR, cs, LONG_DEPTH,
                             long_locate, lc, NULL);
    if (!st)
        st = mt_writer_alloc(w, 1000003, 7, 1, MT_SOURCE_MINOR, lc->codes + LONG_DEPTH + 1,
                             5, long_locate, lc, NULL);
    int cst = mt_writer_close(w);
    return st || cst ? failf("writing the long callstack: %s", mt_status_name(st ? st : cst)) : 0;
}

static int check_long_event(const mt_event *ev, const longctx *lc, size_t i,
                            uint64_t *first_bt, size_t *first_len)
{
    if (i == 2) {                     /* short unrelated stack: exact      */
        if (ev->backtrace_len != 5)
            return failf("event 2: backtrace_len %zu, want 5", ev->backtrace_len);
        for (size_t k = 0; k < 5; k++)
            if (ev->backtrace[k] != lc->codes[LONG_DEPTH + 5 - k])
                return failf("event 2: frame %zu differs", k);
        return 0;
    }
    if (ev->backtrace_len == 0 || ev->backtrace_len >= LONG_DEPTH)
        return failf("event %zu: backtrace_len %zu, want a truncation in 1..999",
                     i, ev->backtrace_len);
    for (size_t k = 0; k < ev->backtrace_len; k++)
        if (ev->backtrace[k] != lc->codes[k])
            return failf("event %zu: frame %zu is not the original's", i, k);
    if (i == 0) {
        if (ev->backtrace_len != 409)
            return failf("event 0: backtrace_len %zu, spec says 409 misses fit",
                         ev->backtrace_len);
        memcpy(first_bt, ev->backtrace, ev->backtrace_len * sizeof *first_bt);
        *first_len = ev->backtrace_len;
    } else if (ev->backtrace_len != *first_len ||
               memcmp(ev->backtrace, first_bt, *first_len * sizeof *first_bt)) {
        return failf("event 1: stale rule: want the previous backtrace unchanged");
    }
    return 0;
}

static int read_long(const membuf *m, const longctx *lc)
{
    mt_reader *r = mt_reader_create(NULL);
    mt_event ev;
    uint64_t first[LONG_DEPTH];
    size_t first_len = 0, i = 0;
    int st = mt_reader_open_memory(r, m->data, m->len), bad = 0;
    if (st != MT_OK)
        bad = failf("open: %s", mt_reader_error(r));
    while (!bad && (st = mt_reader_next(r, &ev)) == MT_OK) {
        bad = i >= 3 ? failf("too many events")
                     : check_long_event(&ev, lc, i, first, &first_len);
        for (size_t k = 0; !bad && k < ev.backtrace_len; k++) {
            const mt_location *locs;
            size_t n;
            if (mt_reader_locations(r, ev.backtrace[k], &locs, &n) != MT_OK || n != 1)
                bad = failf("event %zu: frame %zu has no location", i, k);
        }
        i++;
    }
    if (!bad && (st != MT_EOF || i != 3))
        bad = failf("long stack: %zu events, status %s", i, mt_status_name(st));
    mt_reader_close(r);
    return bad;
}

static int run_long(void)
{
    static longctx lc;
    int bad = 0;
    for (size_t i = 0; i < LONG_DEPTH + 8; i++)
        lc.codes[i] = 0x2ADBF7B80000ULL + 0x40 * i;
    lc.loc = (mt_location){"long.ml", "Long.f", 12, 3, 9};
    for (int v = 2; v <= 3 && !bad; v++) {
        membuf m = {NULL, 0, 0};
        snprintf(g_where, sizeof g_where, "long-callstack v%d", v);
        bad = write_long(&m, &lc, v) || read_long(&m, &lc);
        free(m.data);
    }
    return bad;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    uint64_t first = 0, count = DEFAULT_SEEDS;
    int failures = 0, do_long = 1, do_seeds = 1;
    if (argc >= 2 && strcmp(argv[1], "--long") == 0)
        do_seeds = 0;
    else if (argc >= 2) {
        first = strtoull(argv[1], NULL, 0);
        count = argc >= 3 ? strtoull(argv[2], NULL, 0) : 1;
        do_long = argc >= 3;
    }
    if (do_long && run_long())
        failures++;
    for (uint64_t seed = first; do_seeds && seed < first + count; seed++) {
        if (run_seed(seed)) {
            fprintf(stderr, "  reproduce with: test_roundtrip %" PRIu64 "\n", seed);
            if (++failures >= 10)
                break;
        }
    }
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("roundtrip: ok (%s%" PRIu64 " seed(s) from %" PRIu64 ")\n",
               do_long ? "long callstack, " : "", do_seeds ? count : 0, first);
    return failures ? 1 : 0;
}
