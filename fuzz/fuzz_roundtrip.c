/*
 * fuzz_roundtrip.c - structure-aware, differential libFuzzer target for the
 * writer and the reader's fast path. The input is a little program: a header
 * (format version 2 or 3, trace info fields, how to read back) and then ops:
 * allocations whose callstack mutates the previous one, promotions and
 * collections of earlier ids, flushes, bursts and time jumps. The program is
 * run against mt_writer into memory; the bytes are then read back twice
 * (full decode, then skip_backtraces) and every field is compared with a
 * model of what FORMAT.md says must come back: backtraces with the 4096-byte
 * truncation (6.4, by running the spec's encoder on a model cache) and the
 * stale-backtrace rule (6.5), location lists after clamping (5.3, 5.5), the
 * trace info (4). Any mismatch abort()s with a message saying what differed.
 * Set MT_FUZZ_VERBOSE=1 to print what an input exercised.
 */
#include <memtrace/memtrace.h>

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 2048            /* deepest callstack a program can build   */
#define MAX_EVENTS 30000
#define MAX_WORK 300000           /* frames handed to the writer, per input  */
#define BUCKETS 16384             /* spec 6.2                                */
#define BT_LIMIT (4096 - 10)      /* spec 6.4: budget minus largest codeword */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------------ */
/* Failure, input bytes, small helpers                                      */

static void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz_roundtrip: mismatch: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p)
        fail("out of memory");
    return p;
}

typedef struct prog {
    const uint8_t *p;
    size_t n, pos;
} prog;

/* The next input byte; 0 once the input is used up. */
static unsigned u8(prog *g)
{
    return g->pos < g->n ? g->p[g->pos++] : 0;
}

static uint64_t u64(prog *g)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)u8(g) << (8 * i);
    return v;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Spec 1.4: the canonical 63-bit form (bit 63 := bit 62), never 0. */
static uint64_t canon_code(uint64_t u)
{
    u = (uint64_t)((int64_t)(u << 1) >> 1);
    return u ? u : 1;
}

static size_t min_sz(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------------------ */
/* Codes and their locations (deterministic per code)                       */

static uint64_t g_pool[64];
static char g_files[64][40], g_funcs[48][40];
static char g_long[301], g_huge[4200];
static const char g_high[] = "\xc3\xa9t\xc3\xa9/\xff\x80\x7f.ml";

static void init_tables(void)
{
    for (unsigned i = 0; i < 64; i++) {
        uint64_t c, k = i % 8;
        switch (i / 8) {
        case 0: case 1: c = 0x2ADBF7B80000ULL + 0x40 * i; break;  /* realistic */
        case 2: c = 0x2ADBF7C00000ULL + (k << 35); break; /* same H1 and H2     */
        case 3: c = 1 + k; break;
        case 4: c = ((1ULL << 62) - 1) - k; break;
        case 5: c = (uint64_t)0 - 1 - k; break;            /* -1, -2, ...      */
        case 6: c = 0x2ADBF7D00000ULL + (k << 25); break; /* same H1           */
        default: c = mix64(i); break;
        }
        g_pool[i] = canon_code(c);
        snprintf(g_files[i], sizeof g_files[i], "src/dir%u/file_%u.ml", i % 7, i);
    }
    for (unsigned i = 0; i < 48; i++)
        snprintf(g_funcs[i], sizeof g_funcs[i], "Mod%u.fn_%u", i % 5, i);
    for (size_t i = 0; i < sizeof g_long - 1; i++)
        g_long[i] = (char)('a' + i % 26);
    for (size_t i = 0; i < sizeof g_huge - 1; i++)   /* > 4096: unknown (5.5) */
        g_huge[i] = (char)('A' + i % 23);   /* its suffixes differ at once */
}

/* Files 4 and 5 are as long as one location may be: alone (with function
 * "") the location's size is 4096 (kept) or 4097 (replaced by unknown). */
static const char *file_name(unsigned k)
{
    const char *huge_end = g_huge + sizeof g_huge - 1;
    switch (k) {
    case 0: return "";
    case 1: return g_long;
    case 2: return g_huge;
    case 3: return g_high;
    case 4: return huge_end - (4096 - 9 - 6 - 2);
    case 5: return huge_end - (4097 - 9 - 6 - 2);
    default: return g_files[k];
    }
}

static const char *func_name(unsigned k)
{
    return k == 0 ? "" : k == 1 ? g_long : k == 2 ? g_high : g_funcs[k];
}

typedef struct locset {
    mt_location l[4];
    size_t n;
} locset;

/* Values at and beyond the field widths (20, 8 and 10 bits). */
static int pick_field(unsigned sel, uint64_t r, int width)
{
    int max = (1 << width) - 1;
    switch (sel & 7) {
    case 0: return 0;
    case 1: return 1;
    case 2: return max;
    case 3: return max + 1;
    case 4: return -1;
    case 5: return (sel & 8) ? INT_MAX : INT_MIN;
    case 6: return (int)(r & (uint64_t)max);
    default: return (int)(r & 0xFFFFF);
    }
}

/* What the location callback gives for a code: 0..4 locations. */
static void code_locations(uint64_t code, locset *s)
{
    uint64_t h = mix64(code ^ 0x5BD1E995ULL);
    s->n = (size_t)(h % 5);
    for (size_t i = 0; i < s->n; i++) {
        uint64_t x = mix64(h + i + 1);
        mt_location *l = &s->l[i];
        l->filename = file_name((unsigned)(x & 63));
        l->function = func_name((unsigned)((x >> 6) % 48));
        l->line = pick_field((unsigned)(x >> 12), x >> 32, 20);
        l->start_char = pick_field((unsigned)(x >> 16), x >> 40, 8);
        l->end_char = pick_field((unsigned)(x >> 20), x >> 48, 10);
    }
}

static int clamp(int v, int lim)
{
    return v < 0 || v > lim ? lim : v;
}

/* What the reader must return for a code (spec 5.3, 5.5). */
static size_t expected_locations(uint64_t code, locset *s, int *replaced)
{
    size_t size = 9;
    code_locations(code, s);
    for (size_t i = 0; i < s->n; i++)
        size += 6 + strlen(s->l[i].filename) + 1 + strlen(s->l[i].function) + 1;
    *replaced = size > 4096;
    if (*replaced) {
        s->n = 1;
        s->l[0] = (mt_location){"<unknown>", "??", 1, 1, 1};
    }
    for (size_t i = 0; i < s->n; i++) {
        s->l[i].line = clamp(s->l[i].line, 0xFFFFF);
        s->l[i].start_char = clamp(s->l[i].start_char, 0xFF);
        s->l[i].end_char = clamp(s->l[i].end_char, 0x3FF);
    }
    return s->n;
}

/* ------------------------------------------------------------------------ */
/* Set of codes seen in callstacks (open addressing, 0 = empty)             */

typedef struct codeset {
    uint64_t *key;
    uint8_t *defined;
    size_t mask, n;
} codeset;

static size_t cs_slot(const codeset *s, uint64_t c)
{
    size_t h = (size_t)mix64(c) & s->mask;
    while (s->key[h] && s->key[h] != c)
        h = (h + 1) & s->mask;
    return h;
}

static void cs_grow(codeset *s)
{
    codeset t = {NULL, NULL, s->key ? 2 * s->mask + 1 : 1023, 0};
    t.key = calloc(t.mask + 1, sizeof *t.key);
    t.defined = calloc(t.mask + 1, 1);
    if (!t.key || !t.defined)
        fail("out of memory");
    for (size_t i = 0; s->key && i <= s->mask; i++)
        if (s->key[i]) {
            size_t h = cs_slot(&t, s->key[i]);
            t.key[h] = s->key[i];
            t.defined[h] = s->defined[i];
            t.n++;
        }
    free(s->key);
    free(s->defined);
    *s = t;
}

static size_t cs_add(codeset *s, uint64_t c)
{
    if (!s->key || 2 * (s->n + 1) > s->mask)
        cs_grow(s);
    size_t h = cs_slot(s, c);
    if (!s->key[h]) {
        s->key[h] = c;
        s->n++;
    }
    return h;
}

/* ------------------------------------------------------------------------ */
/* State of one run                                                          */

/* One expected event. The expected backtrace is stored as a delta: keep the
 * first `keep` frames of the previous allocation's, then fr[off..] up to
 * bt_len frames (caller first). */
typedef struct xev {
    int64_t time, id, length, nsamples, prefix;
    size_t off;
    uint32_t bt_len, keep, misses;
    uint8_t kind, source;
} xev;

typedef struct stats {
    size_t allocs, truncated, stale, misses, replaced, flushes, packets, max_depth;
    int64_t max_jump;
} stats;

typedef struct fz {
    prog g;
    int version, domain, read_mode, finish_first, stop_every;
    mt_trace_info info;
    mt_writer *w;
    int64_t time;
    /* The callstack, callee first and right-aligned: caller-first frame j is
     * st[MAX_DEPTH - 1 - j]; pv is the previous allocation's, plen long.
     * Frames below lo (caller first) are unchanged since that allocation. */
    uint64_t st[MAX_DEPTH], pv[MAX_DEPTH];
    size_t len, plen, lo;
    size_t rlen;                 /* length of the reader's last backtrace  */
    /* Spec 6.4 model of the writer's backtrace cache. */
    uint64_t value[BUCKETS];
    int64_t date[BUCKETS];
    uint16_t next[BUCKETS];
    uint64_t miss[MAX_DEPTH];    /* the codes the current alloc must define */
    size_t nmiss, located;
    codeset seen;
    xev *ev;
    size_t nev, evcap;
    uint64_t *fr;
    size_t nfr, frcap;
    size_t work;
    uint8_t *out;
    size_t outlen, outcap;
    stats s;
} fz;

static fz g_fz;

#define FRAME(z, j) ((z)->st[MAX_DEPTH - 1 - (j)])

/* ------------------------------------------------------------------------ */
/* Callstack edits (all in caller-first indices)                             */

static void set_frame(fz *z, size_t j, uint64_t code)
{
    FRAME(z, j) = code;
    cs_add(&z->seen, code);
    if (j < z->lo)
        z->lo = j;
}

static void push(fz *z, uint64_t code)
{
    if (z->len < MAX_DEPTH)
        set_frame(z, z->len++, code);
}

static void pop(fz *z, size_t k)
{
    z->len -= min_sz(k, z->len);
    if (z->len < z->lo)
        z->lo = z->len;
}

/* A code from the input: mostly the pool, sometimes a fresh one. */
static uint64_t pick_code(fz *z)
{
    unsigned c = u8(&z->g);
    return c < 240 ? g_pool[c % 64] : canon_code(u64(&z->g));
}

static void mutate(fz *z, unsigned kind)
{
    if (kind == 0 || kind >= 14)
        return;                  /* no edit: same callstack again         */
    unsigned a = u8(&z->g);
    switch (kind) {
    case 1: pop(z, 1); push(z, pick_code(z)); break;        /* new site     */
    case 2: push(z, pick_code(z)); break;
    case 3: for (unsigned i = 0; i <= a % 8; i++) push(z, pick_code(z)); break;
    case 4: pop(z, 1); break;
    case 5: pop(z, 1 + a % 16); break;
    case 6:
        pop(z, a & 15);
        for (unsigned i = 0; i < a >> 4; i++)
            push(z, pick_code(z));
        break;
    case 7:                                                  /* deep change  */
        if (z->len)
            set_frame(z, a % z->len, pick_code(z));
        break;
    case 8: {                                                /* recursion    */
        uint64_t c = pick_code(z);
        size_t n = 1 + a + (a >= 200 ? (size_t)(a - 200) * 24 : 0);
        for (size_t i = 0; i < n; i++)
            push(z, c);
        break;
    }
    case 9: {                                                /* cycle        */
        uint64_t c[4];
        unsigned period = 2 + a % 3;
        for (unsigned i = 0; i < period; i++)
            c[i] = pick_code(z);
        for (size_t i = 0, n = 1 + 2 * (size_t)u8(&z->g); i < n; i++)
            push(z, c[i % period]);
        break;
    }
    case 10: {                                               /* fresh codes  */
        uint64_t seed = u64(&z->g);
        for (size_t i = 0, n = 1 + 4 * (size_t)a; i < n; i++)
            push(z, canon_code(mix64(seed + i)));
        break;
    }
    case 11: pop(z, z->len - a % (z->len + 1)); break;      /* cut to depth */
    case 12:                                                 /* new stack    */
        pop(z, z->len);
        for (size_t i = 0, n = a % 64; i < n; i++)
            push(z, g_pool[mix64(a * 977 + i) % 64]);
        break;
    case 13:                                                 /* push 20..275 */
        for (size_t i = 0, n = 20 + (size_t)a; i < n; i++)
            push(z, g_pool[mix64(((uint64_t)a << 32) + z->len + i) % 64]);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Spec 6.4 encoder on the model cache                                       */

static unsigned hash1(uint64_t x)
{
    return (unsigned)((x * 0x4983723ULL) >> 11) & (BUCKETS - 1);
}

static unsigned hash2(uint64_t x)
{
    return (unsigned)((x * 0xFDEA731ULL) >> 21) & (BUCKETS - 1);
}

static size_t hitword_size(unsigned k)
{
    return k >= 2 ? 3 : 2;
}

/* Encode caller-first frames prefix .. len-1 of allocation `id` as the
 * spec's writer does; returns how many frames fit (the rest is truncated)
 * and leaves the missed codes, in order, in z->miss. */
static size_t model_encode(fz *z, size_t prefix, int64_t id)
{
    size_t j = prefix, used = 0;
    unsigned p = 0, h = 0, k = 0;
    enum { NOPRED, HIT, PRED } state = NOPRED;
    z->nmiss = 0;
    for (;;) {
        if (state == NOPRED) {
            if (j == z->len || used > BT_LIMIT)
                break;
            uint64_t x = FRAME(z, j);
            unsigned b1 = hash1(x), b2 = hash2(x);
            if (z->value[b1] == x || z->value[b2] == x) {
                h = z->value[b1] == x ? b1 : b2;
                state = HIT;
                continue;
            }
            unsigned v = z->date[b1] < z->date[b2] ? b1 : b2;
            z->miss[z->nmiss++] = x;
            z->value[v] = x;
            z->date[v] = id;
            z->next[p] = (uint16_t)v;
            used += 10;
            p = v;
            j++;
        } else if (state == HIT) {
            z->date[h] = id;
            z->next[p] = (uint16_t)h;
            p = h;
            k = 0;
            j++;
            state = PRED;
        } else {
            if (j == z->len || used + 2 > BT_LIMIT) {
                used += hitword_size(k);
                break;
            }
            unsigned q = z->next[p];
            if (z->value[q] == FRAME(z, j) && k == 255) {
                used += 3;
                h = q;
                state = HIT;
            } else if (z->value[q] == FRAME(z, j)) {
                p = q;
                k++;
                j++;
            } else {
                used += hitword_size(k);
                state = NOPRED;
            }
        }
    }
    return j - prefix;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

static int sink_cb(void *ctx, const void *buf, size_t len)
{
    fz *z = ctx;
    const uint8_t *b = buf;
    size_t hdr = z->version >= 3 ? 68 : 66;
    uint64_t pid = 0;
    if (len < hdr || len > 32768)
        fail("writer handed over a packet of %zu bytes", len);
    uint32_t magic = b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24;
    uint32_t bits = b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24;
    for (int i = 7; i >= 0; i--)
        pid = pid << 8 | b[30 + i];
    if (magic != 0xC1FC1FC1u || bits != 8 * len)
        fail("packet %zu is not one whole packet (magic %08x, %u bits, %zu bytes)",
             z->s.packets, magic, bits, len);
    if ((b[28] | b[29] << 8) != z->version || pid != (uint64_t)z->info.pid ||
        (z->version >= 3 && (b[38] | b[39] << 8) != z->domain))
        fail("packet %zu: header version/pid/domain differ from the writer's", z->s.packets);
    if (z->outlen + len > z->outcap) {
        z->outcap = 2 * (z->outlen + len);
        z->out = xrealloc(z->out, z->outcap);
    }
    memcpy(z->out + z->outlen, buf, len);
    z->outlen += len;
    z->s.packets++;
    return 0;
}

static int locate_cb(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    static locset ls;
    fz *z = ctx;
    if (z->located >= z->nmiss || z->miss[z->located] != code)
        fail("alloc %zu: locate called for code %" PRId64 ", spec 6.4 misses %" PRId64
             " (miss %zu of %zu)", z->s.allocs, (int64_t)code,
             z->located < z->nmiss ? (int64_t)z->miss[z->located] : 0, z->located, z->nmiss);
    z->located++;
    z->seen.defined[cs_slot(&z->seen, code)] = 1;
    code_locations(code, &ls);
    *locs = ls.l;
    *n = ls.n;
    return 0;
}

static xev *push_event(fz *z, mt_event_kind kind)
{
    if (z->nev == z->evcap) {
        z->evcap = z->evcap ? 2 * z->evcap : 1024;
        z->ev = xrealloc(z->ev, z->evcap * sizeof *z->ev);
    }
    xev *e = &z->ev[z->nev++];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->time = z->time;
    return e;
}

static int64_t pick_length(unsigned a)
{
    static const int64_t special[16] = {
        0, 17, 252, 253, 65535, 65536, INT32_MAX, (int64_t)INT32_MAX + 1,
        UINT32_MAX, ((int64_t)1 << 62) - 1, -1, -5, INT32_MIN,
        (int64_t)INT32_MIN - 1, -((int64_t)1 << 62), 16};
    return a < 128 ? 1 + (int64_t)(a & 15) : special[a & 15];
}

static int64_t pick_nsamples(unsigned b)
{
    static const int64_t big[8] = {
        0, 252, 253, 65535, 65536, (int64_t)1 << 33, ((int64_t)1 << 62) - 1, -1};
    switch ((b >> 2) & 7) {
    case 4: return 2;
    case 5: return 1 + (b >> 5);
    case 6: return big[b >> 5];
    default: return 1;
    }
}

static void do_alloc(fz *z, int64_t length, int64_t nsamples, mt_source source)
{
    /* Common prefix (caller first) with the previous callstack, as the
     * writer's common-suffix walk (spec 8.5) must find it. */
    size_t lim = min_sz(z->plen, z->len), prefix = min_sz(z->lo, lim);
    while (prefix < lim && z->pv[MAX_DEPTH - 1 - prefix] == FRAME(z, prefix))
        prefix++;
    for (size_t j = prefix; j < z->len; j++)
        z->pv[MAX_DEPTH - 1 - j] = FRAME(z, j);
    z->plen = z->len;
    z->lo = MAX_DEPTH;

    int64_t id = mt_writer_next_id(z->w), got = -1;
    if (id != (int64_t)z->s.allocs)
        fail("next id %" PRId64 " before alloc %zu", id, z->s.allocs);
    size_t enc = model_encode(z, prefix, id);
    xev *e = push_event(z, MT_EVENT_ALLOC);
    e->id = id;
    e->length = length;
    e->nsamples = nsamples;
    e->source = (uint8_t)source;
    e->prefix = (int64_t)prefix;
    e->misses = (uint32_t)z->nmiss;
    /* Spec 6.5: the reader's last backtrace is always a prefix of the
     * callstack; a wire prefix longer than it returns it unchanged. */
    size_t last = z->rlen, want = prefix > last ? last : prefix + enc;
    e->keep = (uint32_t)min_sz(min_sz(last, want), prefix);
    e->bt_len = (uint32_t)want;
    e->off = z->nfr;
    if (z->nfr + (want - e->keep) > z->frcap) {
        z->frcap = 2 * (z->nfr + want) + 4096;
        z->fr = xrealloc(z->fr, z->frcap * sizeof *z->fr);
    }
    for (size_t j = e->keep; j < want; j++)
        z->fr[z->nfr++] = FRAME(z, j);
    z->rlen = want;

    z->located = 0;
    int st = mt_writer_alloc(z->w, z->time, length, nsamples, source,
                             z->st + MAX_DEPTH - z->len, z->len, locate_cb, z, &got);
    if (st != MT_OK)
        fail("mt_writer_alloc #%zu: %s: %s", z->s.allocs, mt_status_name(st),
             mt_writer_error(z->w));
    if (got != id)
        fail("alloc #%zu got id %" PRId64 ", want %" PRId64, z->s.allocs, got, id);
    if (z->located != z->nmiss)
        fail("alloc #%zu: %zu locate calls, spec 6.4 misses %zu", z->s.allocs,
             z->located, z->nmiss);
    z->s.allocs++;
    z->s.truncated += enc < z->len - prefix;
    z->s.stale += prefix > last;
    z->s.misses += z->nmiss;
    if (z->len > z->s.max_depth)
        z->s.max_depth = z->len;
    z->work += z->len + 1;
}

static void op_alloc(fz *z, unsigned kind)
{
    mutate(z, kind);
    unsigned a = u8(&z->g), b = u8(&z->g);
    static const mt_source src[4] = {MT_SOURCE_MINOR, MT_SOURCE_MINOR,
                                     MT_SOURCE_MAJOR, MT_SOURCE_EXTERNAL};
    do_alloc(z, pick_length(a), pick_nsamples(b), src[b & 3]);
}

/* The same callstack n times: mostly a few, rarely past a v3 id chunk. */
static void op_burst(fz *z)
{
    unsigned c = u8(&z->g), a = u8(&z->g);
    unsigned n = c < 248 ? 1 + c % 64 : 2600 * (c - 247);
    for (unsigned i = 0; i < n && z->work < MAX_WORK && z->nev < MAX_EVENTS; i++)
        do_alloc(z, pick_length(a), 1, MT_SOURCE_MINOR);
}

static void op_promote_collect(fz *z, unsigned o)
{
    unsigned a = u8(&z->g);
    int64_t next = mt_writer_next_id(z->w), id;
    if (next == 0)
        return;
    switch ((o >> 1) & 3) {
    case 0: id = next - 1; break;
    case 1: id = next - 1 - (int64_t)(a % (next < 64 ? (unsigned)next : 64)); break;
    case 2: id = (next - 1) * a / 255; break;
    default: id = 0; break;
    }
    mt_event_kind kind = o & 1 ? MT_EVENT_COLLECT : MT_EVENT_PROMOTE;
    push_event(z, kind)->id = id;
    int st = kind == MT_EVENT_PROMOTE ? mt_writer_promote(z->w, z->time, id)
                                      : mt_writer_collect(z->w, z->time, id);
    if (st != MT_OK)
        fail("promote/collect of id %" PRId64 " (next %" PRId64 "): %s: %s", id, next,
             mt_status_name(st), mt_writer_error(z->w));
}

static void op_time(fz *z, unsigned o)
{
    int64_t a = u8(&z->g), s = (int8_t)a, step;
    switch (o & 7) {
    case 0: step = 0; break;
    case 1: step = a; break;
    case 2: step = a * 1000; break;
    case 3: step = ((int64_t)1 << 25) + s; break;             /* ~2^25 us     */
    case 4: step = 30000000 + s; break;                       /* packet limit */
    case 5: step = a * 250000; break;                         /* up to 64 s   */
    case 6: step = (a + 1) << 30; break;                      /* hours..days  */
    default: step = ((int64_t)1 << 25) * (1 + a % 4) - 1; break;
    }
    if (z->time < ((int64_t)1 << 60)) {
        z->time += step;
        if (step > z->s.max_jump)
            z->s.max_jump = step;
    }
}

/* Op bytes: 0..127 alloc (low 4 bits: the callstack edit), 128..159
 * promote/collect, 160..175 flush, 176..207 time step, 208..223 burst,
 * 224..255 alloc on a rebuilt or deepened callstack. */
static void run_ops(fz *z)
{
    while (z->g.pos < z->g.n && z->work < MAX_WORK && z->nev < MAX_EVENTS) {
        unsigned o = u8(&z->g);
        if (o < 128)
            op_alloc(z, o & 15);
        else if (o < 160)
            op_promote_collect(z, o);
        else if (o < 176) {
            int st = mt_writer_flush(z->w);
            if (st != MT_OK)
                fail("mt_writer_flush: %s: %s", mt_status_name(st), mt_writer_error(z->w));
            z->s.flushes++;
        } else if (o < 208)
            op_time(z, o);
        else if (o < 224)
            op_burst(z);
        else
            op_alloc(z, 12 + (o & 1));   /* fresh stack, or a deep one */
    }
}

/* ------------------------------------------------------------------------ */
/* The header: version, trace info, how to read back                         */

static const char *info_string(unsigned sel)
{
    static const char *const s[4] = {"", "fuzz", g_long, g_high};
    return s[sel & 3];
}

/* 21 bytes: flags (bit 0 v3, bits 1-2 read mode, bit 3 32-bit words, bit 4
 * finish before close, bits 5-7 context), sample rate, info strings, domain
 * (u16), start-time mode and 6 bytes of time, pid (u64), scan stop period. */
static void read_header(fz *z)
{
    static const double rates[8] = {1e-5, 2e-5, 1e-6, 1.0, 0.5, 4.9406564584124654e-324,
                                    0.99999999999999989, 1.0 / 3};
    static const char *const ctx[8] = {NULL, NULL, "", "ctx=fuzz", g_long, g_high,
                                       "k=v", NULL};
    prog *g = &z->g;
    unsigned f = u8(g), rate = u8(g), strs = u8(g);
    z->version = f & 1 ? 3 : 2;
    z->read_mode = (f >> 1) & 3;
    z->info.word_size = f & 8 ? 32 : 64;
    z->finish_first = (f >> 4) & 1;
    z->info.context = ctx[f >> 5];
    z->info.sample_rate = rates[rate & 7];
    z->info.executable_name = info_string(strs);
    z->info.host_name = info_string(strs >> 2);
    z->info.runtime_params = info_string(strs >> 4);
    z->domain = (int)u8(g);
    z->domain |= (int)u8(g) << 8;
    unsigned tmode = u8(g);
    uint64_t t = 0;
    for (int i = 0; i < 6; i++)
        t |= (uint64_t)u8(g) << (8 * i);
    int64_t base = 1586965711174340;
    switch (tmode & 3) {
    case 0: z->info.start_time = 0; break;
    case 1: z->info.start_time = (base & ~(int64_t)0x1FFFFFF) + 0x1FFFFFF - (int64_t)(t & 63); break;
    case 2: z->info.start_time = base; break;
    default: z->info.start_time = (int64_t)(t & (((uint64_t)1 << 52) - 1)); break;
    }
    uint64_t pid = u64(g);
    z->info.pid = (tmode >> 4) >= 12 ? (int64_t)pid : (int64_t)(pid & 0xFFFFFFFF);
    z->stop_every = 1 + (int)(u8(g) % 13);
    z->time = z->info.start_time;
}

/* ------------------------------------------------------------------------ */
/* Reading back                                                              */

typedef struct pass {
    fz *z;
    mt_reader *r;
    int skip, stop_every, asked;
    size_t i, since;
    uint64_t bt[MAX_DEPTH];      /* expected backtrace, caller first       */
    size_t bt_len;
} pass;

static void check_alloc(pass *v, const mt_event *ev, const xev *x)
{
    if (ev->source != x->source || ev->length != x->length || ev->nsamples != x->nsamples ||
        ev->common_prefix != x->prefix)
        fail("event %zu (alloc): source/length/nsamples/prefix %d/%" PRId64 "/%" PRId64
             "/%" PRId64 ", want %d/%" PRId64 "/%" PRId64 "/%" PRId64, v->i, ev->source,
             ev->length, ev->nsamples, ev->common_prefix, x->source, x->length,
             x->nsamples, x->prefix);
    if (v->skip) {
        if (ev->backtrace_len != 0)
            fail("event %zu: skip_backtraces gave %zu frames", v->i, ev->backtrace_len);
        return;
    }
    /* (z->fr is still NULL when no allocation of the first input run had
     * a frame of its own: no pointer arithmetic on it then) */
    if (x->bt_len > x->keep)
        memcpy(v->bt + x->keep, v->z->fr + x->off, (x->bt_len - x->keep) * sizeof *v->bt);
    v->bt_len = x->bt_len;
    if (ev->backtrace_len != v->bt_len)
        fail("event %zu: backtrace of %zu frames, want %zu (prefix %" PRId64 ")", v->i,
             ev->backtrace_len, v->bt_len, x->prefix);
    if (v->bt_len && memcmp(ev->backtrace, v->bt, v->bt_len * sizeof *v->bt) != 0)
        fail("event %zu: backtrace frames differ", v->i);
    if (ev->new_codes != x->misses)
        fail("event %zu: new_codes %u, spec 6.4 misses %u", v->i, ev->new_codes, x->misses);
    for (size_t j = x->keep; j < v->bt_len; j++) {
        const mt_location *locs;
        size_t n;
        if (mt_reader_locations(v->r, v->bt[j], &locs, &n) != MT_OK)
            fail("event %zu: frame %zu (code %" PRId64 ") has no location yet", v->i, j,
                 (int64_t)v->bt[j]);
    }
}

static void check_event(pass *v, const mt_event *ev)
{
    const fz *z = v->z;
    if (v->i >= z->nev)
        fail("reader delivered more than the %zu events written", z->nev);
    const xev *x = &z->ev[v->i];
    int domain = z->version >= 3 ? z->domain : 0;
    if (ev->kind != (mt_event_kind)x->kind || ev->time != x->time || ev->id != x->id ||
        ev->domain != domain)
        fail("event %zu (%s pass): kind/time/id/domain %d/%" PRId64 "/%" PRId64 "/%d, want "
             "%d/%" PRId64 "/%" PRId64 "/%d", v->i, v->skip ? "skip" : "full", ev->kind,
             ev->time, ev->id, ev->domain, x->kind, x->time, x->id, domain);
    if (x->kind == MT_EVENT_ALLOC)
        check_alloc(v, ev, x);
    v->i++;
}

static int scan_cb(void *ctx, const mt_event *ev)
{
    pass *v = ctx;
    check_event(v, ev);
    if (v->stop_every && ++v->since >= (size_t)v->stop_every) {
        v->since = 0;
        v->asked = 1;
        return 1;
    }
    return 0;
}

static void diag_cb(void *ctx, mt_diag_kind kind, uint64_t offset, const char *msg)
{
    (void)ctx;
    fail("reader skipped a packet of a writer-made trace (kind %d at %" PRIu64 "): %s",
         (int)kind, offset, msg);
}

/* mode 0: mt_reader_scan, 1: mt_reader_next, 2/3: scans stopped every
 * stop_every events, alternating with as many mt_reader_next calls. */
static int read_events(pass *v, int mode)
{
    mt_event ev;
    int st;
    if (mode == 1) {
        while ((st = mt_reader_next(v->r, &ev)) == MT_OK)
            check_event(v, &ev);
        return st;
    }
    v->stop_every = mode == 0 ? 0 : v->z->stop_every;
    for (;;) {
        v->asked = 0;
        st = mt_reader_scan(v->r, scan_cb, v);
        if (st != MT_OK)
            return st;
        if (!v->asked)
            fail("mt_reader_scan returned MT_OK though the callback never stopped it");
        for (int k = 0; k < v->stop_every; k++) {
            if ((st = mt_reader_next(v->r, &ev)) != MT_OK)
                return st;
            check_event(v, &ev);
        }
    }
}

static void check_info(const fz *z, const mt_trace_info *in)
{
    const mt_trace_info *w = &z->info;
    int no_ctx = !w->context || !w->context[0];
    if (!in)
        fail("no trace info after open");
    if (memcmp(&in->sample_rate, &w->sample_rate, sizeof w->sample_rate) != 0 ||
        in->word_size != w->word_size || in->pid != w->pid ||
        in->start_time != w->start_time)
        fail("trace info rate/word size/pid/start %.17g/%d/%" PRId64 "/%" PRId64
             ", want %.17g/%d/%" PRId64 "/%" PRId64, in->sample_rate, in->word_size,
             in->pid, in->start_time, w->sample_rate, w->word_size, w->pid, w->start_time);
    if (!in->executable_name || strcmp(in->executable_name, w->executable_name) ||
        !in->host_name || strcmp(in->host_name, w->host_name) ||
        !in->runtime_params || strcmp(in->runtime_params, w->runtime_params))
        fail("trace info strings differ");
    if (no_ctx ? in->context != NULL : !in->context || strcmp(in->context, w->context))
        fail("trace info context '%s', want '%s'", in->context ? in->context : "(none)",
             no_ctx ? "(none)" : w->context);
    if (in->format_version != z->version ||
        in->initial_domain != (z->version >= 3 ? z->domain : 0))
        fail("trace info version/domain %d/%d, want %d/%d", in->format_version,
             in->initial_domain, z->version, z->version >= 3 ? z->domain : 0);
}

static int loc_eq(const mt_location *a, const mt_location *b)
{
    return a->filename && a->function && strcmp(a->filename, b->filename) == 0 &&
           strcmp(a->function, b->function) == 0 && a->line == b->line &&
           a->start_char == b->start_char && a->end_char == b->end_char;
}

/* Every code the writer had to define has its (clamped) locations; every
 * other code that was in a callstack is unknown to the reader. */
static void check_locations(fz *z, mt_reader *r)
{
    for (size_t h = 0; h <= z->seen.mask; h++) {
        uint64_t code = z->seen.key[h];
        const mt_location *locs = NULL;
        size_t n = 0;
        locset want;
        int replaced;
        if (!code)
            continue;
        int st = mt_reader_locations(r, code, &locs, &n);
        if (!z->seen.defined[h]) {
            if (st != MT_ERR_LOCATION)
                fail("code %" PRId64 " was never a miss but the reader knows it (%s)",
                     (int64_t)code, mt_status_name(st));
            continue;
        }
        if (st != MT_OK)
            fail("code %" PRId64 ": %s: %s", (int64_t)code, mt_status_name(st),
                 mt_reader_error(r));
        size_t wn = expected_locations(code, &want, &replaced);
        z->s.replaced += replaced;
        if (n != wn)
            fail("code %" PRId64 ": %zu locations, want %zu", (int64_t)code, n, wn);
        for (size_t i = 0; i < n; i++)
            if (!loc_eq(&locs[i], &want.l[i]))
                fail("code %" PRId64 " location %zu: %.40s@%.40s:%d:%d-%d, want "
                     "%.40s@%.40s:%d:%d-%d", (int64_t)code, i, locs[i].function,
                     locs[i].filename, locs[i].line, locs[i].start_char, locs[i].end_char,
                     want.l[i].function, want.l[i].filename, want.l[i].line,
                     want.l[i].start_char, want.l[i].end_char);
    }
}

static void read_back(fz *z, int skip, int mode)
{
    static pass v;
    mt_reader_options opt = {.skip_backtraces = skip, .diag = diag_cb, .diag_ctx = z};
    mt_event ev;
    memset(&v, 0, sizeof v);
    v.z = z;
    v.skip = skip;
    v.r = mt_reader_create(&opt);
    if (!v.r)
        fail("mt_reader_create");
    int st = mt_reader_open_memory(v.r, z->out, z->outlen);
    if (st != MT_OK)
        fail("open: %s: %s", mt_status_name(st), mt_reader_error(v.r));
    check_info(z, mt_reader_info(v.r));
    st = read_events(&v, mode);
    if (st != MT_EOF)
        fail("%s pass ends after %zu of %zu events: %s: %s", skip ? "skip" : "full", v.i,
             z->nev, mt_status_name(st), mt_reader_error(v.r));
    if (v.i != z->nev)
        fail("%s pass read %zu events, %zu written", skip ? "skip" : "full", v.i, z->nev);
    if (mt_reader_next(v.r, &ev) != MT_EOF)
        fail("mt_reader_next after EOF is not MT_EOF");
    if (mt_reader_offset(v.r) != z->outlen)
        fail("offset %" PRIu64 " at EOF, trace has %zu bytes", mt_reader_offset(v.r),
             z->outlen);
    if (!skip)
        check_locations(z, v.r);
    mt_reader_close(v.r);
}

/* ------------------------------------------------------------------------ */

/* A fresh state. The growable arrays keep their memory from run to run:
 * fresh large blocks cost page faults, a good part of a short run. */
static void reset(fz *z, const uint8_t *data, size_t size)
{
    codeset seen = z->seen;
    xev *ev = z->ev;
    uint64_t *fr = z->fr;
    uint8_t *out = z->out;
    size_t evcap = z->evcap, frcap = z->frcap, outcap = z->outcap;
    memset(z, 0, sizeof *z);
    if (seen.key) {
        memset(seen.key, 0, (seen.mask + 1) * sizeof *seen.key);
        memset(seen.defined, 0, seen.mask + 1);
        seen.n = 0;
    }
    z->seen = seen;
    z->ev = ev;
    z->evcap = evcap;
    z->fr = fr;
    z->frcap = frcap;
    z->out = out;
    z->outcap = outcap;
    z->g = (prog){data, size, 0};
    z->lo = MAX_DEPTH;
    for (size_t i = 0; i < 64; i++)
        cs_add(&z->seen, g_pool[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    fz *z = &g_fz;
    if (!ready) {
        init_tables();
        ready = 1;
    }
    reset(z, data, size);
    read_header(z);
    mt_writer_options opt = {.format_version = z->version, .domain = z->domain};
    char err[256] = "";
    int st = mt_writer_open_sink(&z->w, sink_cb, z, &z->info, &opt, err, sizeof err);
    if (st != MT_OK)
        fail("mt_writer_open_sink: %s: %s", mt_status_name(st), err);
    run_ops(z);
    if (z->finish_first && (st = mt_writer_finish(z->w)) != MT_OK)
        fail("mt_writer_finish: %s: %s", mt_status_name(st), mt_writer_error(z->w));
    if ((st = mt_writer_close(z->w)) != MT_OK)
        fail("mt_writer_close: %s", mt_status_name(st));
    z->w = NULL;

    read_back(z, 0, z->read_mode);
    read_back(z, 1, z->read_mode == 0 ? 1 : z->read_mode == 1 ? 0 : z->read_mode);
    if (getenv("MT_FUZZ_VERBOSE"))
        fprintf(stderr, "v%d: %zu bytes in %zu packets, %zu events, %zu allocs (%zu "
                "truncated, %zu stale), %zu misses, %zu codes seen, %zu unknown-replaced, "
                "%zu flushes, depth <= %zu, time jump <= %" PRId64 " us\n", z->version,
                z->outlen, z->s.packets, z->nev, z->s.allocs, z->s.truncated, z->s.stale,
                z->s.misses, z->seen.n, z->s.replaced, z->s.flushes, z->s.max_depth,
                z->s.max_jump);
    return 0;
}
