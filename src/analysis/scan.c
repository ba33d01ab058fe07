/*
 * scan.c - the scan engine of the analysis layer: reads a trace once, keeps
 * a table of the live sampled objects (id -> alloc time, length, samples,
 * source, interned stack), decides on each object when it is collected or
 * at the end of the trace (that is when lifetime and --live-at are known),
 * and hands the accepted ones to a callback and/or a timeline. Also the
 * live-heap timeline and the formatting helpers of the reports.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analysis/analysis.h"
#include "analysis/newcodes.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/hugemem.h"
#include "util/u64map.h"

/* ---- timeline ----------------------------------------------------------- */

int mt_timeline_init(mt_timeline *t)
{
    memset(t, 0, sizeof *t);
    t->width = 1;
    t->alloc = calloc(MT_TL_BINS, sizeof *t->alloc);
    t->coll = calloc(MT_TL_BINS, sizeof *t->coll);
    if (!t->alloc || !t->coll) {
        mt_timeline_free(t);
        return -1;
    }
    return 0;
}

void mt_timeline_free(mt_timeline *t)
{
    free(t->alloc);
    free(t->coll);
    t->alloc = t->coll = NULL;
}

/* Bins 2^k times as wide, in one pass however large k is (a trace whose
 * times jump by a month needs k of 30 or more at once).
 * (out of line and cold: it runs a few times a trace, and inlined it made
 * mt_timeline_add save and restore registers on every call) */
static __attribute__((noinline, cold)) void tl_coarsen(mt_timeline *t, unsigned k)
{
    size_t g = k < 16 ? (size_t)1 << k : MT_TL_BINS;   /* old bins per new one */
    size_t kept = MT_TL_BINS / g;
    for (size_t i = 0; i < kept; i++) {
        int64_t a = 0, c = 0;
        for (size_t j = i * g; j < (i + 1) * g; j++) {
            a += t->alloc[j];
            c += t->coll[j];
        }
        t->alloc[i] = a;
        t->coll[i] = c;
    }
    memset(t->alloc + kept, 0, (MT_TL_BINS - kept) * sizeof *t->alloc);
    memset(t->coll + kept, 0, (MT_TL_BINS - kept) * sizeof *t->coll);
    t->width <<= k;
}

/* Widen the bins until time hi falls in the last one or before; returns
 * the width's shift. */
static inline unsigned tl_reach(mt_timeline *t, uint64_t hi)
{
    unsigned shift = (unsigned)__builtin_ctzll((uint64_t)t->width);
    if ((hi >> shift) >= MT_TL_BINS) {
        unsigned k = 1;
        while ((hi >> (shift + k)) >= MT_TL_BINS)
            k++;
        tl_coarsen(t, k);
        shift += k;
    }
    return shift;
}

/* Add an object allocated at a and collected at c (MT_NEVER: not). The
 * width is a power of two, so bins are shifts, not divisions; it is first
 * made wide enough for the later of the two times, so that both use one
 * width. (This runs once per object: keep it to a few instructions.) */
int mt_timeline_add(mt_timeline *t, int64_t a, int64_t c, int64_t nsamples)
{
    uint64_t ua = a < 0 ? 0 : (uint64_t)a;
    uint64_t uc = c == MT_NEVER || c < 0 ? 0 : (uint64_t)c;
    unsigned shift = tl_reach(t, ua > uc ? ua : uc);
    t->alloc[ua >> shift] += nsamples;
    if (c != MT_NEVER)
        t->coll[uc >> shift] += nsamples;
    return 0;
}

int64_t mt_timeline_resolve(const mt_timeline *t, int64_t time)
{
    if (time < 0)
        return -1;
    if (time >= t->end)         /* every event is at or before the end */
        return t->end;
    return ((time + 1) / t->width) * t->width - 1;
}

void mt_timeline_at(const mt_timeline *t, int64_t time, int64_t *alloc,
                    int64_t *coll)
{
    int64_t a = 0, c = 0;
    if (time >= 0) {
        /* (at the end or later: the end's bin too, which holds no event
         * after the end) */
        int64_t nb = time >= t->end ? MT_TL_BINS : (time + 1) / t->width;
        if (nb > MT_TL_BINS)
            nb = MT_TL_BINS;
        for (int64_t i = 0; i < nb; i++) {
            a += t->alloc[i];
            c += t->coll[i];
        }
    }
    *alloc = a;
    *coll = c;
}

void mt_timeline_peak(const mt_timeline *t, int64_t *time, int64_t *live)
{
    int64_t best = 0, best_t = 0, cur = 0;
    int64_t last = t->end / t->width;
    if (last >= MT_TL_BINS)
        last = MT_TL_BINS - 1;
    for (int64_t i = 0; i <= last; i++) {
        cur += t->alloc[i] - t->coll[i];
        if (cur > best) {
            best = cur;
            best_t = (i + 1) * t->width - 1;
        }
    }
    if (best_t > t->end)
        best_t = t->end;
    *time = best_t;
    *live = best;
}

/* ---- formatting ------------------------------------------------------- */

void mt_fmt_bytes(char *buf, size_t n, double b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double a = b < 0 ? -b : b;
    if (a < 1024.) {
        snprintf(buf, n, "%.0f B", b);
        return;
    }
    int u = 0;
    b /= 1024.;
    a /= 1024.;
    while (a >= 1024. && u < 4) {
        b /= 1024.;
        a /= 1024.;
        u++;
    }
    snprintf(buf, n, a < 10. ? "%.2f %s" : a < 100. ? "%.1f %s" : "%.0f %s", b,
             units[u]);
}

void mt_fmt_secs(char *buf, size_t n, int64_t us)
{
    double s = (double)us / 1e6;
    if (us < 0)
        snprintf(buf, n, "%.6f s", s);
    else if (s < 10.)
        snprintf(buf, n, "%.6f s", s);
    else if (s < 1000.)
        snprintf(buf, n, "%.3f s", s);
    else
        snprintf(buf, n, "%.1f s", s);
}

/* ---- live-object table (linear probing, backward-shift delete) -------- */

typedef struct lobj {
    int64_t id, time, length, nsamples;
    uint32_t stack, user;
    uint8_t source, used;
} lobj;

/* The table of live objects. Ids are handed out in sequence and most
 * objects die young, so the ids of the last RING_SIZE allocations live in a
 * ring indexed by id (one cache line touched per event, where a hash table
 * would miss the cache on every put and take); an object still live when the
 * ring moves past its id goes to a hash table of older survivors. A bitmap
 * of the ring's used slots lets the ring move far in one step (v003 ids
 * may jump by millions) at the cost of its live objects, not of its size:
 * ids jumping by 2^20 at every packet took `top` ~100 us an event. */
#define RING_SIZE (1u << 16)
#define RING_MASK (RING_SIZE - 1)

typedef struct ltab {
    lobj *ring;                 /* ids [base, base + RING_SIZE)             */
    uint64_t *occ;              /* bit i: ring[i].used                      */
    int64_t base;
    lobj *v;                    /* older survivors: open addressing         */
    size_t cap, n;
    uint64_t seed;              /* of their hash                            */
} ltab;

static inline size_t hash64(const ltab *t, int64_t id)
{
    return (size_t)hash_u64((uint64_t)id, t->seed);
}

static int old_grow(ltab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    lobj *v = huge_calloc(cap * sizeof *v);
    if (!v)
        return -1;
    if (!t->cap)
        t->seed = hash_key()[0];
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->v[i].used)
            continue;
        size_t j = hash64(t, t->v[i].id) & (cap - 1);
        while (v[j].used)
            j = (j + 1) & (cap - 1);
        v[j] = t->v[i];
    }
    free(t->v);
    t->v = v;
    t->cap = cap;
    return 0;
}

/* Insert into the survivors (replacing an entry with the same id). */
static int old_put(ltab *t, const lobj *o)
{
    if ((t->n + 1) * 2 > t->cap && old_grow(t))
        return -1;
    size_t m = t->cap - 1, j = hash64(t, o->id) & m;
    for (; t->v[j].used; j = (j + 1) & m)
        if (t->v[j].id == o->id) {
            t->v[j] = *o;
            return 0;
        }
    t->v[j] = *o;
    t->n++;
    return 0;
}

static int old_take(ltab *t, int64_t id, lobj *out)
{
    if (!t->cap)
        return -1;
    size_t m = t->cap - 1, j = hash64(t, id) & m;
    for (; t->v[j].used; j = (j + 1) & m)
        if (t->v[j].id == id)
            break;
    if (!t->v[j].used)
        return -1;
    *out = t->v[j];
    /* backward-shift deletion */
    size_t hole = j;
    for (size_t k = (j + 1) & m; t->v[k].used; k = (k + 1) & m) {
        size_t home = hash64(t, t->v[k].id) & m;
        if (((k - home) & m) >= ((k - hole) & m)) {
            t->v[hole] = t->v[k];
            hole = k;
        }
    }
    t->v[hole].used = 0;
    t->n--;
    return 0;
}

static int in_ring(const ltab *t, int64_t id)
{
    return id >= t->base && (uint64_t)(id - t->base) < RING_SIZE;
}

/* The survivors take the object of ring slot `slot`, which the window
 * leaves. */
static inline int ring_leave(ltab *t, size_t slot)
{
    if (old_put(t, &t->ring[slot]))
        return -1;
    t->ring[slot].used = 0;
    t->occ[slot >> 6] &= ~((uint64_t)1 << (slot & 63));
    return 0;
}

/* Move the ring's window so that it starts at base (> t->base + 1): the
 * used slots it leaves, found by the bitmap a word at a time, go to the
 * survivors. (Out of line: ids mostly come one after the other, and
 * ring_advance moves by one.) */
__attribute__((noinline)) static int ring_jump(ltab *t, int64_t base)
{
    uint64_t steps = (uint64_t)(base - t->base);
    if (steps > RING_SIZE)
        steps = RING_SIZE;
    for (uint64_t i = 0; i < steps;) {
        size_t slot = ((uint64_t)t->base + i) & RING_MASK;
        unsigned b = slot & 63;
        uint64_t span = 64 - b < steps - i ? 64 - b : steps - i;
        uint64_t bits = t->occ[slot >> 6] >> b;
        if (span < 64)
            bits &= ((uint64_t)1 << span) - 1;
        for (; bits; bits &= bits - 1)
            if (ring_leave(t, slot + (size_t)__builtin_ctzll(bits)))
                return -1;
        i += span;
    }
    t->base = base;
    return 0;
}

/* Move the ring's window so that it starts at base (> t->base). */
static inline int ring_advance(ltab *t, int64_t base)
{
    if (base - t->base > 1)
        return ring_jump(t, base);
    size_t slot = (uint64_t)t->base & RING_MASK;
    if (t->ring[slot].used && ring_leave(t, slot))
        return -1;
    t->base = base;
    return 0;
}

/* Insert (or replace: an id allocated twice keeps the newer) the object. */
static int ltab_put(ltab *t, const lobj *o)
{
    if (!t->ring) {
        t->ring = huge_calloc(RING_SIZE * sizeof *t->ring);
        t->occ = calloc(RING_SIZE / 64, sizeof *t->occ);
        if (!t->ring || !t->occ) {
            free(t->ring);
            free(t->occ);
            t->ring = NULL;
            t->occ = NULL;
            return -1;
        }
        t->base = o->id;
    }
    if (o->id < t->base)
        return old_put(t, o);
    if (!in_ring(t, o->id) && ring_advance(t, o->id - RING_SIZE + 1))
        return -1;
    size_t slot = (uint64_t)o->id & RING_MASK;
    t->ring[slot] = *o;
    t->occ[slot >> 6] |= (uint64_t)1 << (slot & 63);
    return 0;
}

/* Remove id into *out; 0 when found, -1 when not. */
static int ltab_take(ltab *t, int64_t id, lobj *out)
{
    if (t->ring && in_ring(t, id)) {
        size_t slot = (uint64_t)id & RING_MASK;
        lobj *o = &t->ring[slot];
        if (!o->used || o->id != id)
            return -1;
        *out = *o;
        o->used = 0;
        t->occ[slot >> 6] &= ~((uint64_t)1 << (slot & 63));
        return 0;
    }
    return old_take(t, id, out);
}

static int lobj_by_id(const void *a, const void *b)
{
    int64_t x = ((const lobj *)a)->id, y = ((const lobj *)b)->id;
    return (x > y) - (x < y);
}

/* Call fn on every live object, the ring's in slot order and then the
 * survivors in order of id (not of their slots, which the seed moves: a
 * report must not change from one run to the next); stops when fn returns
 * nonzero. The survivors' table is spent: only ltab_free may follow. */
static int ltab_drain(ltab *t, int (*fn)(void *, const lobj *), void *ctx)
{
    for (size_t i = 0; t->ring && i < RING_SIZE; i++)
        if (t->ring[i].used && fn(ctx, &t->ring[i]))
            return 1;
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->v[i].used)
            t->v[n++] = t->v[i];
    if (n)
        qsort(t->v, n, sizeof *t->v, lobj_by_id);
    for (size_t i = 0; i < n; i++)
        if (fn(ctx, &t->v[i]))
            return 1;
    return 0;
}

static void ltab_free(ltab *t)
{
    free(t->ring);
    free(t->occ);
    free(t->v);
}

/* ---- stack summaries ----------------------------------------------- */

/* What the commands need of a backtrace is known when it is allocated: its
 * site (innermost frame not hidden by --hide) and whether it passes --in /
 * --not-in. So objects carry a "stack" that is only that summary, interned:
 * the table grows with distinct sites, not with distinct backtraces (which
 * can be as many as the allocations). Per-code facts are cached, and the
 * frames an allocation shares with the previous one (common_prefix) reuse
 * the previous running mask, so the work per allocation is proportional to
 * its new frames. */

typedef struct sent {
    const mt_location *site;
    int match;
    int nonempty;
} sent;

typedef struct code_info {
    const mt_location *site;    /* innermost non-hidden location, or NULL */
    uint64_t mask;              /* bit q: some function contains needle q */
    uint32_t sidx[2];           /* summary index + 1 of (site, match 0 / 1, */
} code_info;                    /* nonempty): 0 = not looked up yet       */

/* A direct-mapped cache slot: code and codes index + 1 (0: empty), on one
 * line so that a lookup is one load of the L2 cache, not two. */
typedef struct dm_slot {
    uint64_t code;
    uint32_t idx;
} dm_slot;

#define MAX_NEEDLES 64
#define DM_BITS 14
#define DM_SIZE (1u << DM_BITS)

/* What the event side (see "threads") writes, on cache lines of its own:
 * with the reader on another thread, a line both write would bounce
 * between the cores at every event. */
typedef struct scan_back {
    _Alignas(64) ltab live;
    sent *bstacks;              /* the summaries as the event side has seen */
    size_t nbstacks, bstacks_cap;  /* them (its own copy)                  */
    int64_t end, total_samples, accepted;  /* copied to mt_scan at the end */
    int64_t odd_allocs;
    int err;
    int stopped;                /* on_object asked to stop */
    char pad[64];
} scan_back;

typedef struct scan_priv {
    sent *stacks;               /* the summaries, as summarize made them */
    size_t nstacks, stacks_cap;
    u64map stack_ids;           /* summary key -> stack index */
    code_info *codes;
    size_t ncodes, codes_cap;
    u64map code_ids;            /* location code -> codes index */
    dm_slot dm[DM_SIZE];        /* direct-mapped cache in front of code_ids */
    uint64_t *cum;              /* running OR of masks of the last backtrace */
    size_t cum_cap, prev_len;
    int prev_domain, have_prev;
    ptrdiff_t site_pos;         /* the last backtrace's innermost frame with
                                   a site (-1: none); the frames after it
                                   have none */
    /* for mt_scan.shared_prefix: the domain of the allocation on_alloc was
     * given last (if given_any), and the least frames shared along that
     * domain's allocations since (SIZE_MAX: none yet) */
    int given_any, given_domain;
    size_t given_shared;
    mt_newcodes newcodes;       /* which frames need their codes checked */
    uint64_t in_bits, not_in_bits;
    uint64_t dm_skey[DM_SIZE];  /* direct-mapped cache in front of stack_ids */
    uint32_t dm_sidx[DM_SIZE];  /* stack index + 1; 0: empty */
    scan_back b;
} scan_priv;

/* The index in p->codes of a code's cached facts; -1 with s->err set when
 * the code is undefined. (An index, not a pointer: p->codes may move.) */
static int64_t code_index(mt_scan *s, uint64_t code)
{
    scan_priv *p = s->priv;
    dm_slot *slot = &p->dm[(code * 0x9E3779B97F4A7C15ULL) >> (64 - DM_BITS)];
    if (slot->idx && slot->code == code)
        return (int64_t)slot->idx - 1;
    const uint64_t *k = u64map_get(&p->code_ids, code);
    if (k) {
        slot->code = code;
        slot->idx = (uint32_t)*k + 1;
        return (int64_t)*k;
    }
    const mt_location *l;
    size_t n;
    if (mt_reader_locations(s->reader, code, &l, &n) != MT_OK) {
        snprintf(s->err, sizeof s->err, MT_BAD_CODE_FMT,
                 (unsigned long long)mt_reader_offset(s->reader), (unsigned long long)code);
        return -1;
    }
    if (p->ncodes >= UINT32_MAX - 1 ||
        grow_array(&p->codes, &p->codes_cap, p->ncodes + 1, sizeof *p->codes) ||
        u64map_put(&p->code_ids, code, p->ncodes))
        goto nomem;
    code_info *ci = &p->codes[p->ncodes];
    const mt_filter *f = s->filter;
    ci->site = NULL;
    for (size_t i = n; i-- > 0 && !ci->site;)
        if (!mt_filter_hides(f, l[i].function))
            ci->site = &l[i];
    ci->mask = 0;
    ci->sidx[0] = ci->sidx[1] = 0;
    for (size_t q = 0; q < f->nin + f->nnot_in; q++) {
        const char *needle = q < f->nin ? f->in[q] : f->not_in[q - f->nin];
        for (size_t i = 0; i < n; i++)
            if (strstr(l[i].function, needle)) {
                ci->mask |= (uint64_t)1 << q;
                break;
            }
    }
    return (int64_t)p->ncodes++;
nomem:
    snprintf(s->err, sizeof s->err, "out of memory");
    return -1;
}

/* The interned summary of ev's backtrace, or -1 (s->err set). */
static int64_t summarize(mt_scan *s, const mt_event *ev)
{
    scan_priv *p = s->priv;
    const uint64_t *bt = ev->backtrace;
    size_t len = ev->backtrace_len, from = 0;
    if (p->have_prev && ev->domain == p->prev_domain && ev->common_prefix > 0 &&
        (uint64_t)ev->common_prefix <= p->prev_len &&
        (uint64_t)ev->common_prefix <= len)
        from = (size_t)ev->common_prefix;
    if (grow_array(&p->cum, &p->cum_cap, len, sizeof *p->cum)) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    /* Without --in / --not-in (no masks to compute) the new frames need
     * lookups only to check their codes, and only when they may hold a code
     * not checked before (newcodes.h). */
    int needles = p->in_bits || p->not_in_bits;
    int fast = !mt_newcodes_possible(&p->newcodes, ev, from) && !needles;
    int64_t last = -1;                          /* bt[len - 1]'s index */
    uint64_t mask = 0;
    if (needles) {
        for (size_t i = from; i < len; i++) {  /* also checks every code */
            last = code_index(s, bt[i]);
            if (last < 0)
                return -1;
            p->cum[i] = (i ? p->cum[i - 1] : 0) | p->codes[last].mask;
        }
        mask = len ? p->cum[len - 1] : 0;
    } else if (!fast) {
        for (size_t i = from; i < len; i++)    /* checks every code */
            if ((last = code_index(s, bt[i])) < 0)
                return -1;
    }
    size_t known_below = from && p->site_pos < (ptrdiff_t)from ? from : 0;
    p->have_prev = 1;
    p->prev_domain = ev->domain;
    p->prev_len = len;
    sent e = {NULL, (mask & p->in_bits) == p->in_bits && !(mask & p->not_in_bits),
              len > 0};
    /* The site: the innermost frame whose code has one (--hide takes
     * some away). Below the new frames, the last backtrace's answer holds
     * when it lay there: a recursion whose frames --hide takes away is
     * not walked again at every allocation. */
    int64_t owner = -1;         /* the code whose location is the site */
    ptrdiff_t pos = -1;
    for (size_t i = len; i-- > known_below && !e.site;) {
        owner = i == len - 1 && last >= 0 ? last : code_index(s, bt[i]);
        if (owner < 0)
            return -1;
        e.site = p->codes[owner].site;
        pos = (ptrdiff_t)i;
    }
    if (!e.site && known_below && p->site_pos >= 0) {
        owner = code_index(s, bt[p->site_pos]);
        if (owner < 0)
            return -1;
        e.site = p->codes[owner].site;
        pos = p->site_pos;
    }
    p->site_pos = e.site ? pos : -1;
    /* the summary of the usual case, cached with the site's code */
    uint32_t *cached = e.site ? &p->codes[owner].sidx[e.match] : NULL;
    if (cached && *cached)
        return (int64_t)*cached - 1;
    /* locations are at least 8-byte aligned: the low bits hold the flags */
    uint64_t key = (uint64_t)(uintptr_t)e.site | (uint64_t)e.match << 1 |
                   (uint64_t)e.nonempty;
    size_t d = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - DM_BITS));
    if (p->dm_sidx[d] && p->dm_skey[d] == key) {
        if (cached)
            *cached = p->dm_sidx[d];
        return (int64_t)p->dm_sidx[d] - 1;
    }
    const uint64_t *known = u64map_get(&p->stack_ids, key);
    if (known) {
        p->dm_skey[d] = key;
        p->dm_sidx[d] = (uint32_t)*known + 1;
        if (cached)
            *cached = (uint32_t)*known + 1;
        return (int64_t)*known;
    }
    if (p->nstacks >= UINT32_MAX - 1 ||
        grow_array(&p->stacks, &p->stacks_cap, p->nstacks + 1, sizeof *p->stacks) ||
        u64map_put(&p->stack_ids, key, p->nstacks)) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return -1;
    }
    p->stacks[p->nstacks] = e;
    if (cached)
        *cached = (uint32_t)p->nstacks + 1;
    return (int64_t)p->nstacks++;
}

static void make_stack(const scan_priv *p, uint32_t i, mt_stack *st)
{
    const sent *e = &p->b.bstacks[i];
    st->id = i;
    st->codes = NULL;
    st->len = (size_t)e->nonempty;
    st->site = e->site;
    st->match = e->match;
}

/* ---- the scan --------------------------------------------------------- */

static int decide(mt_scan *s, const lobj *lo, int64_t collect)
{
    scan_priv *p = s->priv;
    mt_stack st;
    make_stack(p, lo->stack, &st);
    mt_object o = {lo->id, lo->time, collect, lo->length, lo->nsamples,
                   (mt_source)lo->source, &st, lo->user};
    if (!mt_filter_accepts(s->filter, s->info, &o, s->live_at, p->b.end))
        return 0;
    p->b.accepted++;
    if (s->timeline)
        mt_timeline_add(s->timeline, o.alloc_time, o.collect_time, o.nsamples);
    if (s->on_object && s->on_object(s->ctx, &o)) {
        p->b.stopped = 1;
        return 1;
    }
    return 0;
}

static int decide_at_end(void *ctx, const lobj *lo)
{
    return decide(ctx, lo, MT_NEVER);
}

/* One event as the reader side hands it over: all the event side needs,
 * with the stack summary (and the summary itself when it is new). */
typedef struct rec {
    int64_t t, id, length, nsamples;
    uint32_t si;
    uint8_t kind, source, newsum;
} rec;

/* The reader side of an event: its record; for an allocation, the stack
 * summary. Nonzero on error (s->err set). (front and back are inlined by
 * force: called from two places each, gcc kept them out of on_event once
 * ltab_put grew, which cost `pprof` 3% of its instructions.) */
#define SCAN_INLINE static inline __attribute__((always_inline))

SCAN_INLINE int front(mt_scan *s, const mt_event *ev, rec *r, sent *newsum)
{
    scan_priv *p = s->priv;
    if (s->tick)
        s->tick(s->tick_ctx, s->reader);
    r->t = ev->time - s->info->start_time;
    r->id = ev->id;
    r->kind = (uint8_t)ev->kind;
    r->newsum = 0;
    if (ev->kind == MT_EVENT_ALLOC) {
        size_t before = p->nstacks;
        int64_t si = summarize(s, ev);
        if (si < 0)
            return 1;
        r->si = (uint32_t)si;
        r->length = ev->length;
        r->nsamples = ev->nsamples;
        r->source = (uint8_t)ev->source;
        if (p->nstacks > before) {
            r->newsum = 1;
            *newsum = p->stacks[si];
        }
    }
    return 0;
}

/* The event side: live objects, filters, decisions. ev is the event when on
 * the reader's thread (for on_alloc), else NULL. Nonzero stops the scan. */
SCAN_INLINE int back(mt_scan *s, const rec *r, const sent *newsum, const mt_event *ev)
{
    scan_priv *p = s->priv;
    int64_t t = r->t;
    if (t > p->b.end)
        p->b.end = t;
    if (r->newsum) {
        if (grow_array(&p->b.bstacks, &p->b.bstacks_cap, p->b.nbstacks + 1,
                       sizeof *p->b.bstacks)) {
            snprintf(s->err, sizeof s->err, "out of memory");
            p->b.err = 1;
            return 1;
        }
        p->b.bstacks[p->b.nbstacks++] = *newsum;
    }
    if (r->kind == MT_EVENT_ALLOC) {
        if (ev && p->given_any && ev->domain == p->given_domain) {
            /* the frames this backtrace shares with the domain's previous
             * one (all of it when the reader returned that one again) */
            size_t k = ev->common_prefix <= 0 ? 0
                       : (uint64_t)ev->common_prefix < ev->backtrace_len
                       ? (size_t)ev->common_prefix : ev->backtrace_len;
            if (k < p->given_shared)
                p->given_shared = k;
        }
        p->b.total_samples += r->nsamples;
        p->b.odd_allocs += r->nsamples <= 0 || r->length < 0;
        mt_stack st;
        make_stack(p, r->si, &st);
        mt_object o = {r->id, t, MT_NEVER, r->length, r->nsamples,
                       (mt_source)r->source, &st, 0};
        if (!mt_filter_accepts_alloc(s->filter, s->info, &o))
            return 0;
        lobj lo = {r->id, t, r->length, r->nsamples, r->si, 0, r->source, 1};
        if (ev && s->on_alloc) {
            s->shared_prefix = p->given_any && ev->domain == p->given_domain
                               ? p->given_shared : 0;
            p->given_any = 1;
            p->given_domain = ev->domain;
            p->given_shared = SIZE_MAX;
            if (s->on_alloc(s->ctx, ev, &lo.user)) {
                p->b.err = 1;
                return 1;
            }
        }
        o.user = lo.user;
        if (s->on_accept && s->on_accept(s->ctx, &o)) {
            p->b.err = 1;
            return 1;
        }
        if (ltab_put(&p->b.live, &lo)) {
            snprintf(s->err, sizeof s->err, "out of memory");
            p->b.err = 1;
            return 1;
        }
    } else if (r->kind == MT_EVENT_COLLECT) {
        lobj lo;
        if (ltab_take(&p->b.live, r->id, &lo) == 0)
            return decide(s, &lo, t);
    }
    return 0;
}

static int on_event(void *ctx, const mt_event *ev)
{
    mt_scan *s = ctx;
    rec r = {0};                /* (front fills what back reads; gcc cannot tell) */
    sent ns;
    if (front(s, ev, &r, &ns)) {
        ((scan_priv *)s->priv)->b.err = 1;
        return 1;
    }
    return back(s, &r, &ns, ev);
}

/* ---- threads: the reader on a thread of its own ------------------------
 *
 * Decoding (with the stack summaries) and the event side cost about the
 * same, so with s->threads the reader runs on a second thread and hands
 * records over in blocks through a ring of NBLK blocks; the event side
 * (and every callback but on_alloc, which needs the decoded backtrace and
 * so is not allowed then) stays on the caller's thread. The reader side
 * writes only its own state (reader, summaries, tick, diagnostics); the
 * event side has its own copy of the summaries, sent with the records.
 * Neither side writes a cache line the other reads at every event (see
 * scan_back, pipeline); so the reader side ticks every TICK_EVERY events.
 * A side that has to wait is woken only when a quarter of the ring is
 * ready for it (or at the end): waking it at every block costs two
 * context switches per block, which here (a VM) is more than the work. */

#define BLK 2048
#define NBLK 32
#define WAKE_AT (NBLK / 4)
#define STAGE 64                /* records staged before a copy to the ring */

typedef struct block {
    _Alignas(64) rec r[BLK];    /* (at multiples of STAGE: 16-byte aligned) */
    sent sums[BLK];             /* the new summaries, in record order */
    size_t n, nsums;
} block;

typedef struct pipeline {
    /* the reader side's: its own copy of the scan (the caller's mt_scan
     * sits next to data the event side writes at every event) */
    _Alignas(64) mt_scan s;
    block *blocks;              /* NBLK */
    size_t fill;                /* the block being filled (the reader's) */
    _Alignas(64) rec stage[STAGE];  /* records not yet in blocks[fill] */
    size_t nstage;
    void (*tick)(void *ctx, const mt_reader *r);  /* every TICK_EVERY events */
    void *tick_ctx;             /* (it writes the caller's memory)        */
    uint64_t nev;
    int front_err;
    /* shared, under mu */
    _Alignas(64) size_t filled, drained;   /* blocks handed over / back */
    int done;                   /* the reader side has finished */
    int reader_waits, event_waits;  /* a side sleeps on cv */
    int stop;                   /* the event side wants no more */
    int status;                 /* mt_reader_scan's */
    pthread_mutex_t mu;
    pthread_cond_t cv;
} pipeline;

#define TICK_EVERY 16

/* Records are made in a small staging area (in the L1 cache) and copied
 * into the ring STAGE at a time. The ring's lines were last read by the
 * other core, so ordinary stores there miss and stall the decoder; x86's
 * non-temporal stores go around the cache (the block is fenced before it
 * is handed over). */
static void stage_copy(rec *dst, const rec *src, size_t n)
{
#if defined(__x86_64__) && defined(__SSE2__)
    if (n == STAGE) {
        _Static_assert(STAGE * sizeof(rec) % 16 == 0, "whole 16-byte words");
        const __m128i *a = (const __m128i *)(const void *)src;
        __m128i *d = (__m128i *)(void *)dst;
        for (size_t i = 0; i < STAGE * sizeof(rec) / 16; i++)
            _mm_stream_si128(d + i, _mm_load_si128(a + i));
        return;
    }
#endif
    memcpy(dst, src, n * sizeof *src);
}

static inline void rec_fence(void)
{
#if defined(__x86_64__) && defined(__SSE2__)
    _mm_sfence();
#endif
}

static int pipe_event(void *ctx, const mt_event *ev)
{
    pipeline *pl = ctx;
    if (pl->tick && (++pl->nev & (TICK_EVERY - 1)) == 0)
        pl->tick(pl->tick_ctx, pl->s.reader);
    block *b = &pl->blocks[pl->fill % NBLK];
    rec *r = &pl->stage[pl->nstage];
    if (front(&pl->s, ev, r, &b->sums[b->nsums])) {
        pl->front_err = 1;
        return 1;
    }
    b->nsums += r->newsum;
    if (++pl->nstage < STAGE)
        return 0;
    stage_copy(&b->r[b->n], pl->stage, STAGE);
    pl->nstage = 0;
    if ((b->n += STAGE) < BLK)
        return 0;
    rec_fence();
    pthread_mutex_lock(&pl->mu);
    pl->filled = ++pl->fill;
    if (pl->event_waits && pl->filled - pl->drained >= WAKE_AT) {
        pl->event_waits = 0;
        pthread_cond_broadcast(&pl->cv);
    }
    while (pl->filled - pl->drained >= NBLK && !pl->stop) {
        pl->reader_waits = 1;
        pthread_cond_wait(&pl->cv, &pl->mu);
    }
    int stop = pl->stop;
    pthread_mutex_unlock(&pl->mu);
    b = &pl->blocks[pl->fill % NBLK];
    b->n = b->nsums = 0;
    return stop;
}

static void *pipe_reader(void *arg)
{
    pipeline *pl = arg;
    pl->blocks[0].n = pl->blocks[0].nsums = 0;
    int st = mt_reader_scan(pl->s.reader, pipe_event, pl);
    block *b = &pl->blocks[pl->fill % NBLK];
    stage_copy(&b->r[b->n], pl->stage, pl->nstage);
    b->n += pl->nstage;
    rec_fence();
    pthread_mutex_lock(&pl->mu);
    pl->status = st;
    if (pl->blocks[pl->fill % NBLK].n > 0 && !pl->stop)
        pl->filled = ++pl->fill;    /* the last, partial block */
    pl->done = 1;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* mt_reader_scan's status, with the events processed through the pipeline;
 * -1 when the thread could not be started (nothing was read). */
static int scan_threaded(mt_scan *s)
{
    scan_priv *p = s->priv;
    pipeline *pl = aligned_alloc(64, sizeof *pl);
    block *blocks = aligned_alloc(64, NBLK * sizeof *blocks);
    if (!pl || !blocks) {
        free(pl);
        free(blocks);
        return -1;
    }
    memset(pl, 0, sizeof *pl);
    pl->s = *s;
    pl->s.tick = NULL;          /* called by pipe_event instead */
    pl->tick = s->tick;
    pl->tick_ctx = s->tick_ctx;
    pl->blocks = blocks;
    pthread_mutex_init(&pl->mu, NULL);
    pthread_cond_init(&pl->cv, NULL);
    pthread_t th;
    int st = -1;
    if (pthread_create(&th, NULL, pipe_reader, pl))
        goto out;
    size_t drained = 0;         /* the event side's own count */
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        while (pl->filled == drained && !pl->done) {
            pl->event_waits = 1;
            pthread_cond_wait(&pl->cv, &pl->mu);
        }
        int empty = pl->filled == drained;
        pthread_mutex_unlock(&pl->mu);
        if (empty)
            break;
        const block *b = &blocks[drained % NBLK];
        size_t k = 0;
        int stop = 0;
        for (size_t i = 0; i < b->n && !stop; i++) {
            const sent *ns = b->r[i].newsum ? &b->sums[k++] : NULL;
            stop = back(s, &b->r[i], ns, NULL);
        }
        pthread_mutex_lock(&pl->mu);
        pl->drained = ++drained;
        if (stop)
            pl->stop = 1;
        if (stop || (pl->reader_waits && NBLK - (pl->filled - drained) >= WAKE_AT)) {
            pl->reader_waits = 0;
            pthread_cond_broadcast(&pl->cv);
        }
        pthread_mutex_unlock(&pl->mu);
        if (stop)
            break;
    }
    pthread_join(th, NULL);
    st = pl->status;
    if (pl->front_err) {
        p->b.err = 1;
        memcpy(s->err, pl->s.err, sizeof s->err);
    }
out:
    pthread_mutex_destroy(&pl->mu);
    pthread_cond_destroy(&pl->cv);
    free(blocks);
    free(pl);
    return st;
}

static const mt_filter no_filter;

int mt_scan_run(mt_scan *s, const char *path)
{
    s->err[0] = 0;
    if (!s->filter)
        s->filter = &no_filter;
    scan_priv *p = aligned_alloc(64, sizeof *p);   /* scan_back's lines */
    if (p)
        memset(p, 0, sizeof *p);
    if (s->filter->nin + s->filter->nnot_in > MAX_NEEDLES) {
        free(p);
        snprintf(s->err, sizeof s->err, "at most %d --in/--not-in options",
                 MAX_NEEDLES);
        return MT_ERR_ARG;
    }
    if (p) {
        size_t nin = s->filter->nin, nall = nin + s->filter->nnot_in;
        p->in_bits = nin ? (nin == 64 ? ~0ULL : ((uint64_t)1 << nin) - 1) : 0;
        p->not_in_bits = (nall == 64 ? ~0ULL : ((uint64_t)1 << nall) - 1) & ~p->in_bits;
    }
    mt_reader_options opt = {0};
    opt.skip_backtraces = !s->need_stacks && !mt_filter_needs_names(s->filter);
    opt.diag = s->diag;
    opt.diag_ctx = s->diag_ctx;
    s->reader = p ? mt_reader_create(&opt) : NULL;
    s->priv = p;
    if (!p || !s->reader) {
        snprintf(s->err, sizeof s->err, "out of memory");
        return MT_ERR_NOMEM;
    }
    int st = strcmp(path, "-") == 0 ? mt_reader_open_fd(s->reader, STDIN_FILENO)
                                    : mt_reader_open_file(s->reader, path);
    if (st != MT_OK) {
        snprintf(s->err, sizeof s->err, "%s", mt_reader_error(s->reader));
        return st;
    }
    s->info = mt_reader_info(s->reader);
    st = -1;
    if (s->threads && !s->on_alloc)
        st = scan_threaded(s);
    if (st == -1)                   /* one thread (or none could start) */
        st = mt_reader_scan(s->reader, on_event, s);
    s->end = p->b.end;
    s->total_samples = p->b.total_samples;
    s->odd_allocs = p->b.odd_allocs;
    s->accepted = p->b.accepted;
    if (p->b.err)
        return MT_ERR_FORMAT;
    if (p->b.stopped)
        return MT_OK;
    if (st != MT_EOF) {
        /* (read without backtraces: an earlier damage in them may exist,
         * which the other commands name) */
        if (!opt.skip_backtraces || !mt_first_damage(path, s->err, sizeof s->err))
            snprintf(s->err, sizeof s->err, "%s", mt_reader_error(s->reader));
        return st;
    }
    if (s->timeline) {
        /* Bins as wide as the trace's end makes them, whatever the filter
         * let in: a filtered timeline's times are then the whole one's. */
        tl_reach(s->timeline, s->end < 0 ? 0 : (uint64_t)s->end);
        s->timeline->end = s->end;
    }
    /* The end of the trace: every object still live is decided now. */
    ltab_drain(&p->b.live, decide_at_end, s);
    s->accepted = p->b.accepted;
    s->nstacks = p->nstacks;
    return MT_OK;
}

void mt_scan_free(mt_scan *s)
{
    scan_priv *p = s->priv;
    if (p) {
        ltab_free(&p->b.live);
        free(p->stacks);
        free(p->b.bstacks);
        u64map_free(&p->stack_ids);
        free(p->codes);
        u64map_free(&p->code_ids);
        free(p->cum);
        free(p);
    }
    s->priv = NULL;
    mt_reader_close(s->reader);
    s->reader = NULL;
}
