/*
 * cmd_hotspots.c - `memtrace hotspots TRACE`: the allocation sites that
 * account for more than 0.5% of the samples, each with the callers through
 * which most of its allocations come, exactly as the reference hotspots tool
 * reports them (spec 11.4).
 *
 * The algorithm, per allocation (backtrace caller first, length len):
 *  - every location code gets an *entry* (created once, on first sight)
 *    describing its innermost inlined location, or the location up to two
 *    frames further out when the code has none, or "??"/"#CODE"; entries
 *    belong to *functions* keyed by (file, function name), numbered 0, 1, ...
 *    in creation order;
 *  - the allocation point a = entry(len-1) gets the samples (alloc_count);
 *  - each function f on the rest of the stack (innermost first, once per
 *    allocation) gets total_count += samples, and the pair (f, a's function)
 *    is counted (+1 per allocation, not per sample) in a Misra-Gries
 *    heavy-hitters summary of capacity 10000.
 * The report lists the functions whose direct samples exceed 0.5% of the
 * total and, for each, the heavy pairs that pass the reference's thresholds.
 *
 * Equal sort keys keep the order in which the reference's OCaml hash tables
 * happen to iterate (its sorts are stable), so those tables are reproduced
 * here: chained tables with insertion at the bucket head, bucket = hash &
 * (buckets - 1), the reference's hash functions and initial sizes, doubling
 * (order preserving) when entries exceed twice the buckets, and in-place
 * filtering that keeps the order. Sums are OCaml ints: they wrap at 63 bits.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"
#include "util/hash.h"
#include "util/json.h"
#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/ocaml_int.h"
#include "cli/progress.h"
#include "util/stackset.h"
#include "util/u64map.h"
#include "cli/output.h"

void usage_hotspots(FILE *out)
{
    fprintf(out,
            "Usage: memtrace hotspots [OPTIONS] TRACE\n"
            "\n"
            "Report where TRACE's program allocates: every function that allocated\n"
            "more than 0.5%% of the sampled memory directly, with its allocation\n"
            "sites and the callers through which most of it came. The report is that\n"
            "of the reference memtrace hotspots tool, byte for byte.\n"
            "\n"
            "Output:\n"
            "  Trace for EXECUTABLE [PID]:\n"
            "     SAMPLES samples of SIZE allocations\n"
            "\n"
            "  SIZE (PCT%%) at FUNCTION (FILE:LINE:START-END, ...)\n"
            "        including:\n"
            "      SIZE via CALLER (PCT%% of this)\n"
            "\n"
            "Hot functions come in decreasing order of their direct allocations; the\n"
            "sites listed are the (up to three) busiest of the function's allocation\n"
            "points, with '...' when there are more. A caller is listed when it is\n"
            "among the most frequent (caller, allocating function) pairs and more\n"
            "than 10%% of its allocations (and more than 1.2 times the function's\n"
            "share of the program) end in the function; its SIZE counts one sample\n"
            "per allocation and its PCT is the share of the caller's allocations.\n"
            "A function is reported only if some of its allocations have a caller\n"
            "(samples with a one-frame backtrace still count in the total).\n"
            "Sizes assume 8-byte words: samples / sample rate * 8 bytes, printed in\n"
            "B, kB, MB, GB or TB (powers of 1024).\n"
            "\n"
            "Allocations with an empty backtrace are left out entirely (the\n"
            "reference tool stops with 'index out of bounds' on them). Skipped\n"
            "packets are reported on standard error. TRACE '-' reads standard input.\n"
            "\n"
            "Options:\n"
            "  --json       the same report as one JSON object: executable, pid,\n"
            "               samples, bytes, and 'hot': functions with file, bytes,\n"
            "               percent, every allocation site (line, start, end,\n"
            "               samples) and callers (function, bytes,\n"
            "               percent_of_caller)\n"
            "  -h, --help   show this help\n"
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "With filters, only the allocations that pass them are counted (the\n"
            "total too), each when the filters' answer is known: at its collection\n"
            "or at the end of the trace, so the callers' frequency summary sees\n"
            "them in that order. --hide leaves out the frames of matching functions:\n"
            "an allocation is charged to its innermost frame not hidden. --live-at\n"
            "peak reads TRACE twice (not '-'). Without filters the output is the\n"
            "reference tool's.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace, unknown location code or\n"
            "I/O error (nothing is printed), 2 bad usage.\n");
}

/* ---- state ------------------------------------------------------------- */

typedef struct func {
    char *name, *filename;
    uint64_t hash;              /* of (filename, name), for the func map */
    int64_t total_count;
    int32_t locs;               /* newest entry first (the reference's list) */
    /* its place in the list of the callers' distinct functions (see
     * account): the position of its innermost frame among the callers
     * (-1: not a caller), and its neighbours, innermost side first */
    int32_t lpos, lprev, lnext;
    /* the counter of the pair (this function, al) that it was last counted
     * in, while its inc is unchanged (see account): the same pair as the
     * previous time, most times, found without the table's lookup */
    int32_t hh_node;
    uint32_t hh_al, hh_inc;
} func;

typedef struct entry {
    int line, start, end;
    uint32_t func;
    int64_t alloc_count;
    int32_t next;               /* older entry of the same function, -1 end */
    int hidden;                 /* its function is one --hide names        */
} entry;

/* Heavy-hitters counter of one (caller, allocating function) pair. Its
 * misses are not counted one by one (see hh_add): they are the sweeps since
 * it was made, and it goes at sweep number `die` = its birth sweep + hits. */
typedef struct hh_node {
    uint32_t f, al;
    int64_t hits;
    uint64_t die;
    int32_t next;               /* bucket chain (-1 end), or free list     */
    int32_t prev;               /* back, in an indexed bucket (-1: head)   */
    int32_t cnext;              /* calendar list it waits in (see hh_add)  */
    uint32_t inc;               /* times it was freed (func.hh_node)       */
#ifdef MT_HOTSPOTS_ORACLE
    int64_t misses;             /* the reference's own count (test build)  */
#endif
} hh_node;

/* What account() found at one position of the previous backtrace: the
 * backtraces of consecutive allocations share most of their frames (the
 * benchmark trace: 3.5 new frames in 54), whose functions are not looked
 * up again. */
typedef struct pslot {
    uint64_t code;
    int32_t func;               /* its function; -1 hidden                 */
    /* what making this the function's innermost frame changed: its place
     * before (lpos -1: it was not a caller), restored when it goes */
    int32_t was_pos, was_prev, was_next;
} pslot;

#define HH_CAPACITY 10000
#define HH_BUCKETS 16384        /* Hashtbl.create 10000: power of 2 >= 10000 */
#define HH_NOMEM (-2)
#define HH_CAL 16384            /* calendar slots (power of 2), by die mod */
#ifdef MT_HOTSPOTS_ORACLE
#define HH_LONG INT32_MAX       /* (the test's reference: plain chains)    */
#else
#define HH_LONG 16              /* a walk longer than this indexes its bucket */
#endif

typedef struct hs {
    mt_reader *r;
    func *funcs;
    size_t nfuncs, funcs_cap;
    uint32_t *func_slots;       /* func index + 1, 0 = empty */
    size_t func_slots_cap;
    entry *entries;
    size_t nentries, entries_cap;
    u64map codes;                /* code -> its entry index */
    int64_t total;
    /* heavy hitters */
    hh_node *hh;
    size_t hh_used, hh_cap;     /* nodes handed out from the pool */
    int32_t hh_free;
    int32_t hh_head[HH_BUCKETS];   /* first counter, -1 none, or -2 - it
                                      when the bucket is indexed         */
    u64map hh_index;            /* f << 32 | al -> counter, of indexed buckets */
    size_t hh_len;              /* live counters (t.len of the reference) */
    uint64_t hh_sweeps;         /* times every counter took a miss        */
    int32_t hh_cal[HH_CAL];     /* counters by die mod HH_CAL             */
    pslot *prev;                /* the previous backtrace's positions      */
    size_t nprev, prev_cap;     /* prev[0 .. nprev) are valid              */
    int32_t lhead;              /* the callers' distinct functions, by
                                   their innermost frames, innermost first */
    int prev_whole;             /* prev is the last allocation's callers    */
    int prev_domain;            /* (and its domain), for on_alloc's hint   */
    /* with filters */
    const mt_filter *filter;
    mt_scan *scan;
    stackset stacks;            /* backtraces of the undecided objects */
    /* errors */
    int err;                    /* 0, -1 unknown code, -2 out of memory */
    uint64_t bad_code, bad_off;     /* an undefined code, and where */
} hs;

static int func_slots_grow(hs *h)
{
    size_t cap = h->func_slots_cap ? h->func_slots_cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < h->nfuncs; i++) {
        size_t j = h->funcs[i].hash & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(h->func_slots);
    h->func_slots = s;
    h->func_slots_cap = cap;
    return 0;
}

/* The function (filename, name), created with the next id on first use.
 * Returns its index, or -1 when out of memory. */
static int64_t get_func(hs *h, const char *filename, const char *name)
{
    if ((h->nfuncs + 1) * 2 > h->func_slots_cap && func_slots_grow(h))
        return -1;
    uint64_t hv = hash_str_more(hash_str(filename, strlen(filename)), name, strlen(name));
    size_t mask = h->func_slots_cap - 1, j = hv & mask;
    for (; h->func_slots[j]; j = (j + 1) & mask) {
        const func *f = &h->funcs[h->func_slots[j] - 1];
        if (f->hash == hv && strcmp(f->filename, filename) == 0 &&
            strcmp(f->name, name) == 0)
            return h->func_slots[j] - 1;
    }
    if (h->nfuncs >= INT32_MAX ||
        grow_array(&h->funcs, &h->funcs_cap, h->nfuncs + 1, sizeof *h->funcs))
        return -1;
    func *f = &h->funcs[h->nfuncs];
    memset(f, 0, sizeof *f);
    f->filename = strdup(filename);
    f->name = strdup(name);
    if (!f->filename || !f->name) {
        free(f->filename);
        free(f->name);
        return -1;
    }
    f->hash = hv;
    f->locs = -1;
    f->lpos = -1;
    f->hh_node = -1;
    h->func_slots[j] = (uint32_t)h->nfuncs + 1;
    return (int64_t)h->nfuncs++;
}

/* The entry of bt[i], created on first sight of its code. Returns its
 * index, -1 for an undefined code (h->bad_code), -2 when out of memory. */
static int64_t add_loc(hs *h, const uint64_t *bt, size_t i)
{
    uint64_t code = bt[i];
    const uint64_t *known = u64map_get(&h->codes, code);
    if (known)
        return (int64_t)*known;

    /* describe_location: an empty code is described by its caller, at most
     * two steps out; then "??" and the code in hex (an OCaml %x: the 63-bit
     * value taken as unsigned). Otherwise the innermost inlined location. */
    size_t k = i;
    int steps = 2;
    const mt_location *locs;
    size_t n;
    for (;;) {
        if (mt_reader_locations(h->r, bt[k], &locs, &n) != MT_OK) {
            h->bad_code = bt[k];
            h->bad_off = mt_reader_offset(h->r);
            return -1;
        }
        if (n > 0 || k == 0 || steps == 0)
            break;
        k--;
        steps--;
    }
    char hex[32];
    const char *filename, *name;
    int line = 0, start = 0, end = 0;
    if (n == 0) {
        snprintf(hex, sizeof hex, "#%llx",
                 (unsigned long long)(bt[k] & 0x7fffffffffffffffULL));
        filename = "??";
        name = hex;
    } else {
        const mt_location *l = &locs[n - 1];
        filename = l->filename;
        name = l->function;
        line = l->line;
        start = l->start_char;
        end = l->end_char;
    }
    int64_t fi = get_func(h, filename, name);
    if (fi < 0 || h->nentries >= INT32_MAX ||
        grow_array(&h->entries, &h->entries_cap, h->nentries + 1,
             sizeof *h->entries))
        return -2;
    entry *e = &h->entries[h->nentries];
    e->line = line;
    e->start = start;
    e->end = end;
    e->func = (uint32_t)fi;
    e->alloc_count = 0;
    e->hidden = h->filter && mt_filter_hides(h->filter, name);
    e->next = h->funcs[fi].locs;
    h->funcs[fi].locs = (int32_t)h->nentries;
    if (u64map_put(&h->codes, code, h->nentries))
        return -2;
    return (int64_t)h->nentries++;
}

/* ---- heavy hitters (the reference's Misra-Gries summary) --------------- */

static inline size_t hh_bucket(uint32_t f, uint32_t al)
{
    return (size_t)((uint64_t)f * 1231441u + (uint64_t)al * 3821u) & (HH_BUCKETS - 1);
}

/* The reference's bucket function is linear in the function numbers, so a
 * trace can put every counter in one bucket (10 000 counters: a walk of
 * 5 000 for each caller of each allocation; 17 MB took 3.6 s, 82 MB 18 s).
 * The chains stay, for their order, but a bucket whose walk grows longer
 * than HH_LONG becomes *indexed* until it empties: its counters are in a
 * keyed map (hh_index), its chain is linked both ways, and its head is
 * stored as -2 - head, so the hot paths tell it by one comparison (an
 * empty bucket, -1, is never indexed). Lookups there are one probe, and an
 * unlink needs no walk. A real trace's buckets hold ~0.6 counters; a
 * bucket length kept up to date cost `hotspots` 13% on the 32 MB
 * synthetic trace (counters come and go by millions), and a keyed table
 * instead of the chains 30% (it scattered what the chains kept close). */
static inline uint64_t hh_key(uint32_t f, uint32_t al)
{
    return (uint64_t)f << 32 | al;
}

/* Index bucket b, whose chain starts at counter i. 0, or HH_NOMEM. */
__attribute__((noinline, cold)) static int hh_make_indexed(hs *h, size_t b, int32_t i)
{
    h->hh_head[b] = -2 - i;
    for (int32_t k = i, p = -1; k >= 0; p = k, k = h->hh[k].next) {
        h->hh[k].prev = p;
        if (u64map_put(&h->hh_index, hh_key(h->hh[k].f, h->hh[k].al), (uint64_t)k))
            return HH_NOMEM;
    }
    return 0;
}

__attribute__((noinline, cold)) static int32_t hh_find_indexed(const hs *h, uint32_t f,
                                                               uint32_t al)
{
    const uint64_t *v = u64map_get(&h->hh_index, hh_key(f, al));
    return v ? (int32_t)*v : -1;
}

/* The counter of (f, al) in bucket b, or -1, or HH_NOMEM. A chain grows
 * only after a walk of all of it missed (hh_add), so one that is not
 * indexed holds at most HH_LONG + 1 counters. */
static inline int32_t hh_find(hs *h, size_t b, uint32_t f, uint32_t al)
{
    int32_t i = h->hh_head[b];
    if (i < -1)
        return hh_find_indexed(h, f, al);
    for (int n = 0; i >= 0; i = h->hh[i].next) {
        if (h->hh[i].f == f && h->hh[i].al == al)
            return i;
        if (++n > HH_LONG)
            return hh_make_indexed(h, b, h->hh_head[b]) ? HH_NOMEM
                                                        : hh_find_indexed(h, f, al);
    }
    return -1;
}

/* Counter i goes to the head of indexed bucket b. 0, or HH_NOMEM. */
__attribute__((noinline, cold)) static int hh_link_indexed(hs *h, size_t b, int32_t i)
{
    hh_node *c = &h->hh[i];
    c->next = -2 - h->hh_head[b];
    c->prev = -1;
    h->hh[c->next].prev = i;
    h->hh_head[b] = -2 - i;
    return u64map_put(&h->hh_index, hh_key(c->f, c->al), (uint64_t)i) ? HH_NOMEM : 0;
}

/* Counter i goes to the head of bucket b (Hashtbl.add). 0, or HH_NOMEM. */
static inline int hh_link(hs *h, size_t b, int32_t i)
{
    if (h->hh_head[b] < -1)
        return hh_link_indexed(h, b, i);
    h->hh[i].next = h->hh_head[b];
    h->hh_head[b] = i;
    return 0;
}

__attribute__((noinline, cold)) static void hh_unlink_indexed(hs *h, size_t b, hh_node *c)
{
    if (c->prev >= 0)
        h->hh[c->prev].next = c->next;
    else                                /* (empty: -1, no longer indexed) */
        h->hh_head[b] = c->next >= 0 ? -2 - c->next : -1;
    if (c->next >= 0)
        h->hh[c->next].prev = c->prev;
    uint64_t v;
    u64map_del(&h->hh_index, hh_key(c->f, c->al), &v);
}

/* Counter i leaves its bucket, the others keeping their order, for the
 * free list. */
static inline void hh_unlink(hs *h, int32_t i)
{
    hh_node *c = &h->hh[i];
    size_t b = hh_bucket(c->f, c->al);
    if (h->hh_head[b] < -1) {
        hh_unlink_indexed(h, b, c);
    } else {
        int32_t *link = &h->hh_head[b];
        while (*link != i)
            link = &h->hh[*link].next;
        *link = c->next;
    }
    c->next = h->hh_free;
    c->inc++;
    h->hh_free = i;
    h->hh_len--;
}

/* The first counter of bucket b (-1: none). */
static inline int32_t hh_first(const hs *h, size_t b)
{
    int32_t i = h->hh_head[b];
    return i < -1 ? -2 - i : i;
}

static void cal_push(hs *h, int32_t i)
{
    int32_t *head = &h->hh_cal[h->hh[i].die & (HH_CAL - 1)];
    h->hh[i].cnext = *head;
    *head = i;
}

/* Count one allocation of the pair (f, al). Returns the pair's counter, or
 * -1 when the table is full and the pair is not kept (a sweep), or
 * HH_NOMEM.
 *
 * At most HH_CAPACITY counters live in HH_BUCKETS buckets, so the table
 * never reaches 2 x HH_BUCKETS entries and never resizes.
 *
 * When the table is full, the reference gives every counter a miss and
 * drops those with hits <= misses: a pass over all 10 000 counters (and
 * 16 384 buckets) for each new pair; on the 320 MB benchmark trace (4 538
 * passes in its first 16 MB) the command took 27-28 s with them, 21 s
 * without. Here a counter made at sweep B with H hits
 * has had (sweeps - B) misses, so it goes at the sweep where sweeps reaches
 * B + H (`die`, one more at each hit). Counters wait in a calendar of
 * lists, in the slot of their die (mod HH_CAL) as it was when they were
 * put there, and a sweep visits only the list of its number: those whose
 * die is now go, those hit since move on to the slot of their new die (a
 * hit itself touches nothing but the counter). The counters that stay keep
 * their order in their buckets, as the reference's in-place filter keeps
 * it, so the report is the same. */
static int32_t hh_add(hs *h, uint32_t f, uint32_t al)
{
    size_t b = hh_bucket(f, al);
    int32_t found = hh_find(h, b, f, al);
    if (found >= 0) {
        h->hh[found].hits++;
        h->hh[found].die++;
        return found;
    }
    if (found == HH_NOMEM)
        return HH_NOMEM;
    if (h->hh_len < HH_CAPACITY) {
        int32_t i = h->hh_free;
        if (i >= 0) {
            h->hh_free = h->hh[i].next;
        } else {
            if (grow_array(&h->hh, &h->hh_cap, h->hh_used + 1, sizeof *h->hh))
                return HH_NOMEM;
            i = (int32_t)h->hh_used++;
            h->hh[i].inc = 0;
        }
        hh_node *c = &h->hh[i];
        c->f = f;
        c->al = al;
        c->hits = 1;
        c->die = h->hh_sweeps + 1;
#ifdef MT_HOTSPOTS_ORACLE
        c->misses = 0;
#endif
        h->hh_len++;
        if (hh_link(h, b, i))           /* Hashtbl.add: at the bucket head */
            return HH_NOMEM;
#ifndef MT_HOTSPOTS_ORACLE
        cal_push(h, i);
#endif
        return i;
    }
    /* Full: the new pair is not kept; every counter takes a miss and those
     * whose misses reach their hits go. */
#ifdef MT_HOTSPOTS_ORACLE
    /* The reference's pass over every counter, for the test that compares
     * the two (a test build of tests/hotspots/CMakeLists.txt). */
    h->hh_sweeps++;
    for (size_t k = 0; k < HH_BUCKETS; k++) {
        for (int32_t i = hh_first(h, k), next; i >= 0; i = next) {
            hh_node *c = &h->hh[i];
            next = c->next;
            if (++c->misses >= c->hits)
                hh_unlink(h, i);
        }
    }
    return -1;
#endif
    uint64_t now = ++h->hh_sweeps;
    int32_t i = h->hh_cal[now & (HH_CAL - 1)];
    h->hh_cal[now & (HH_CAL - 1)] = -1;
    while (i >= 0) {
        hh_node *c = &h->hh[i];
        int32_t after = c->cnext;
        if (c->die == now) {
            hh_unlink(h, i);
        } else {
            cal_push(h, i);     /* (die > now: hit since it was put here) */
        }
        i = after;
    }
    return -1;
}

/* ---- reading ------------------------------------------------------------ */

/* The list of the callers' distinct functions (hs.lhead): a function
 * joins it, or moves to its head, when a frame of it becomes the innermost
 * caller (list_push), and goes back to where it was when that frame goes
 * (list_pop). The callers change as a stack between allocations (the
 * frames past the shared prefix go, the new ones come), so a pop finds the
 * list as its push left it. */
static void list_link(hs *h, int32_t fi, int32_t before, int32_t after)
{
    func *f = &h->funcs[fi];
    f->lprev = before;
    f->lnext = after;
    if (before >= 0)
        h->funcs[before].lnext = fi;
    else
        h->lhead = fi;
    if (after >= 0)
        h->funcs[after].lprev = fi;
}

static void list_unlink(hs *h, int32_t fi)
{
    const func *f = &h->funcs[fi];
    if (f->lprev >= 0)
        h->funcs[f->lprev].lnext = f->lnext;
    else
        h->lhead = f->lnext;
    if (f->lnext >= 0)
        h->funcs[f->lnext].lprev = f->lprev;
}

static void list_push(hs *h, pslot *s, int32_t pos)
{
    func *f = &h->funcs[s->func];
    s->was_pos = f->lpos;
    if (f->lpos >= 0) {
        s->was_prev = f->lprev;
        s->was_next = f->lnext;
        list_unlink(h, s->func);
    }
    f->lpos = pos;
    list_link(h, s->func, -1, h->lhead);
}

static void list_pop(hs *h, const pslot *s)
{
    list_unlink(h, s->func);            /* (the head) */
    h->funcs[s->func].lpos = s->was_pos;
    if (s->was_pos >= 0)
        list_link(h, s->func, s->was_prev, s->was_next);
}

/* Account one allocation of nsamples with backtrace bt[0..len) (caller
 * first), whose first `shared` frames are known to be the previous
 * allocation's (0: compared here). Frames whose function --hide names are
 * left out, so the allocation point is the innermost frame not hidden.
 * The work is the frames that changed plus the distinct functions among
 * the callers, not the depth: deep recursion (100 000 allocations 100 000
 * frames deep) took 15.8 s when every caller frame was visited. */
static int account(hs *h, const uint64_t *bt, size_t len, size_t shared,
                   int64_t nsamples)
{
    h->prev_whole = 0;          /* (until the end: prev may be cut short) */
    /* The reference indexes backtrace[len-1] and dies on an empty backtrace
     * (synth-emptystack). Such an allocation has no site to charge, so it is
     * skipped entirely, and not counted in the total either: the total is
     * the denominator of every percentage, and samples that can appear on
     * no line would only dilute them. */
    int64_t a = -1;
    while (len > 0) {
        a = add_loc(h, bt, len - 1);
        if (a < 0)
            return (int)a;
        if (!h->entries[a].hidden)
            break;
        len--;
    }
    if (len == 0)
        return 0;
    entry *ae = &h->entries[a];
    ae->alloc_count = ocaml_add(ae->alloc_count, nsamples);
    uint32_t al = ae->func;
    if (len - 1 > h->prev_cap &&
        grow_array(&h->prev, &h->prev_cap, len - 1, sizeof *h->prev))
        return -2;
    /* The callers bt[0 .. len-1): those the previous backtrace shares
     * (pslot) stay, the previous one's others go, innermost first, then
     * the new ones are looked up, innermost first (the reference's order,
     * which numbers the functions), and come in, outermost first. */
    size_t lim = h->nprev < len - 1 ? h->nprev : len - 1;
    size_t common = shared < lim ? shared : lim;
    while (common < lim && h->prev[common].code == bt[common])
        common++;
    for (size_t i = h->nprev; i-- > common;)
        if (h->prev[i].func >= 0)
            list_pop(h, &h->prev[i]);
    h->nprev = common;          /* (valid so far, should a lookup fail) */
    for (size_t i = len - 1; i-- > common;) {
        int64_t e = add_loc(h, bt, i);
        if (e < 0)
            return (int)e;
        h->prev[i].code = bt[i];
        h->prev[i].func = h->entries[e].hidden ? -1 : (int32_t)h->entries[e].func;
    }
    for (size_t i = common; i < len - 1; i++)
        if (h->prev[i].func >= 0)
            list_push(h, &h->prev[i], (int32_t)i);
    h->nprev = len - 1;
    /* Each distinct caller once, innermost first (as the reference counts
     * them); each function keeps its last pair's counter (func.hh_node) */
    for (int32_t fi = h->lhead; fi >= 0; fi = h->funcs[fi].lnext) {
        func *f = &h->funcs[fi];
        f->total_count = ocaml_add(f->total_count, nsamples);
        hh_node *c = f->hh_node >= 0 && f->hh_al == al ? &h->hh[f->hh_node] : NULL;
        if (c && c->inc == f->hh_inc) {
            c->hits++;          /* (hh_add's hit, without the lookup) */
            c->die++;
        } else {
            int32_t node = hh_add(h, (uint32_t)fi, al);
            if (node == HH_NOMEM)
                return -2;
            f = &h->funcs[fi];
            f->hh_node = node;
            f->hh_al = al;
            f->hh_inc = node >= 0 ? h->hh[node].inc : 0;
        }
    }
    h->total = ocaml_add(h->total, nsamples);
    h->prev_whole = 1;
    return 0;
}

/* Without filters every allocation comes here in the trace's order: when
 * the previous one, in the same domain, was accounted whole, the reader's
 * common_prefix says how many frames the two share. */
static int on_alloc(hs *h, const mt_event *ev)
{
    size_t shared = h->prev_whole && h->prev_domain == ev->domain && ev->common_prefix > 0
                    ? (size_t)ev->common_prefix : 0;
    h->prev_domain = ev->domain;
    return account(h, ev->backtrace, ev->backtrace_len, shared, ev->nsamples);
}

/* With filters: objects come from the analysis layer's scan when decided
 * (collected, or at the end). Their backtraces are kept meanwhile, each
 * distinct one once. */
static int scan_alloc(void *ctx, const mt_event *ev, uint32_t *user)
{
    hs *h = ctx;
    if (stackset_add_shared(&h->stacks, ev->backtrace, ev->backtrace_len,
                            h->scan->shared_prefix, user))
        h->err = -2;
    return h->err;
}

static int on_object(void *ctx, const mt_object *o)
{
    hs *h = ctx;
    size_t len, shared;
    const uint64_t *bt = stackset_get_shared(&h->stacks, o->user, &len, &shared);
    h->r = h->scan->reader;
    /* (the stack the last call gave is the last object's, accounted here) */
    h->err = account(h, bt, len, h->prev_whole ? shared : 0, o->nsamples);
    return h->err;
}

static int on_event(void *ctx, const mt_event *ev)
{
    hs *h = ctx;
    if (ev->kind != MT_EVENT_ALLOC)
        return 0;
    h->err = on_alloc(h, ev);
    return h->err;
}

/* ---- report ------------------------------------------------------------- */

static int64_t direct_allocs(const hs *h, const func *f)
{
    int64_t k = 0;
    for (int32_t e = f->locs; e >= 0; e = h->entries[e].next)
        k = ocaml_add(k, h->entries[e].alloc_count);
    return k;
}

static void print_bytes(mt_out *o, double n)
{
    char buf[512];
    int k;
    if (n < 100.)
        k = snprintf(buf, sizeof buf, "%4.0f B", n);
    else if (n < 100. * 1024.)
        k = snprintf(buf, sizeof buf, "%4.1f kB", n / 1024.);
    else if (n < 100. * 1024. * 1024.)
        k = snprintf(buf, sizeof buf, "%4.1f MB", n / 1024. / 1024.);
    else if (n < 100. * 1024. * 1024. * 1024.)
        k = snprintf(buf, sizeof buf, "%4.1f GB", n / 1024. / 1024. / 1024.);
    else
        k = snprintf(buf, sizeof buf, "%4.1f TB", n / 1024. / 1024. / 1024. / 1024.);
    out_mem(o, buf, (size_t)k);
}

/* Items for stable sorting: key descending, then the prior position. */
typedef struct sitem {
    int64_t key;
    size_t pos;
    uint32_t a;                 /* function / entry index */
    int64_t b;                  /* caller's pair count */
} sitem;

static int cmp_desc_stable(const void *x, const void *y)
{
    const sitem *p = x, *q = y;
    if (p->key != q->key)
        return p->key < q->key ? 1 : -1;
    return p->pos < q->pos ? -1 : p->pos > q->pos;
}

/* A hot site: its function and its callers, in the reference's list order. */
typedef struct hot {
    uint32_t al;
    sitem *callers;
    size_t ncallers, callers_cap;
    int32_t next;               /* bucket chain of the hot-site table */
} hot;

typedef struct hot_tbl {
    hot *v;
    size_t n, cap;
    int32_t *head;
    size_t nbuckets;
} hot_tbl;

static size_t hot_bucket(uint32_t id, size_t nbuckets)
{
    return (size_t)((uint64_t)id * 21089245u) & (nbuckets - 1);
}

/* Func_tbl.add hot_allocs al: at the bucket head; doubling (order kept)
 * when the entries exceed twice the buckets. Returns the index or -1. */
static int32_t hot_add(hot_tbl *t, uint32_t al)
{
    if (grow_array(&t->v, &t->cap, t->n + 1, sizeof *t->v))
        return -1;
    int32_t i = (int32_t)t->n++;
    hot *x = &t->v[i];
    memset(x, 0, sizeof *x);
    x->al = al;
    size_t b = hot_bucket(al, t->nbuckets);
    x->next = t->head[b];
    t->head[b] = i;
    if (t->n > 2 * t->nbuckets) {
        size_t nb = t->nbuckets * 2;
        int32_t *nh = malloc(nb * sizeof *nh), *tail = malloc(nb * sizeof *tail);
        if (!nh || !tail) {
            free(nh);
            free(tail);
            return -1;
        }
        for (size_t k = 0; k < nb; k++)
            nh[k] = tail[k] = -1;
        for (size_t k = 0; k < t->nbuckets; k++) {
            for (int32_t e = t->head[k]; e >= 0;) {
                int32_t nx = t->v[e].next;
                size_t d = hot_bucket(t->v[e].al, nb);
                t->v[e].next = -1;
                if (tail[d] < 0)
                    nh[d] = e;
                else
                    t->v[tail[d]].next = e;
                tail[d] = e;
                e = nx;
            }
        }
        free(t->head);
        free(tail);
        t->head = nh;
        t->nbuckets = nb;
    }
    return i;
}

static int32_t hot_find(const hot_tbl *t, uint32_t al)
{
    for (int32_t e = t->head[hot_bucket(al, t->nbuckets)]; e >= 0; e = t->v[e].next)
        if (t->v[e].al == al)
            return e;
    return -1;
}

/* The report: the reference's text, or with json the same facts as JSON. */
static int report(hs *h, mt_out *o, const mt_trace_info *info, int json)
{
    const double wordsize = 8.;   /* the reference's constant, any trace */
    const double total = (double)h->total;
    int rc = -1;
    hot_tbl t = {0};
    int64_t *direct = NULL, *all = NULL;
    sitem *list = NULL;
    size_t list_cap = 0;

    if (json) {
        out_str(o, "{\"executable\": ");
        out_json(o, info->executable_name);
        out_printf(o, ", \"pid\": %lld, \"samples\": %lld, \"bytes\": %s, \"hot\": [",
                   (long long)info->pid, (long long)h->total,
                   json_num(total / info->sample_rate * wordsize).s);
    } else {
        out_printf(o, "Trace for %s [%lld]:\n   %lld samples of ", info->executable_name,
             (long long)info->pid, (long long)h->total);
        print_bytes(o, total / info->sample_rate * wordsize);
        out_str(o, " allocations\n\n");
    }

    direct = malloc((h->nfuncs + 1) * sizeof *direct);
    all = malloc((h->nfuncs + 1) * sizeof *all);
    t.nbuckets = 128;             /* Func_tbl.create 100 */
    t.head = malloc(t.nbuckets * sizeof *t.head);
    if (!direct || !all || !t.head)
        goto done;
    for (size_t k = 0; k < t.nbuckets; k++)
        t.head[k] = -1;
    for (size_t i = 0; i < h->nfuncs; i++) {
        direct[i] = direct_allocs(h, &h->funcs[i]);
        all[i] = ocaml_add(h->funcs[i].total_count, direct[i]);
    }

    /* HH.iter: bucket order, head to tail. */
    for (size_t b = 0; b < HH_BUCKETS; b++) {
        for (int32_t i = hh_first(h, b); i >= 0; i = h->hh[i].next) {
            const hh_node *c = &h->hh[i];
            double alloc_prop = (double)direct[c->al] / total;
            if (!(alloc_prop > 0.005))
                continue;
            int32_t x = hot_find(&t, c->al);
            if (x < 0 && (x = hot_add(&t, c->al)) < 0)
                goto done;
            double pair_freq = (double)c->hits;
            double fn_freq = (double)all[c->f];
            double lim = 0.10 >= alloc_prop * 1.2 ? 0.10 : alloc_prop * 1.2;
            if (pair_freq / fn_freq > lim && pair_freq / total > 0.005) {
                hot *hx = &t.v[x];
                if (grow_array(&hx->callers, &hx->callers_cap, hx->ncallers + 1,
                         sizeof *hx->callers))
                    goto done;
                sitem *s = &hx->callers[hx->ncallers++];
                s->a = c->f;
                s->b = c->hits;
            }
        }
    }

    /* Func_tbl.fold prepends: the list is the reverse of the iteration. */
    if (grow_array(&list, &list_cap, t.n + 1, sizeof *list))
        goto done;
    size_t nhot = 0;
    for (size_t b = 0; b < t.nbuckets; b++)
        for (int32_t e = t.head[b]; e >= 0; e = t.v[e].next)
            list[nhot++].a = (uint32_t)e;
    for (size_t i = 0; i < nhot; i++) {
        list[i].pos = nhot - 1 - i;
        list[i].key = direct[t.v[list[i].a].al];
    }
    if (nhot > 1)
        qsort(list, nhot, sizeof *list, cmp_desc_stable);

    sitem *locs = NULL;
    size_t locs_cap = 0;
    for (size_t s = 0; s < nhot; s++) {
        hot *hx = &t.v[list[s].a];
        const func *al = &h->funcs[hx->al];
        double d = (double)direct[hx->al];
        if (json) {
            out_str(o, s ? ", {\"function\": " : "{\"function\": ");
            out_json(o, al->name);
            out_str(o, ", \"file\": ");
            out_json(o, al->filename);
            out_printf(o, ", \"bytes\": %s, \"percent\": %s, \"sites\": [",
                       json_num(d / info->sample_rate * wordsize).s,
                       json_num(100. * (d / total)).s);
        } else {
            print_bytes(o, d / info->sample_rate * wordsize);
            out_printf(o, " (%4.1f%%) at %s (%s:", 100. * (d / total), al->name, al->filename);
        }

        size_t nl = 0;
        for (int32_t e = al->locs; e >= 0; e = h->entries[e].next) {
            if (grow_array(&locs, &locs_cap, nl + 1, sizeof *locs)) {
                free(locs);
                goto done;
            }
            locs[nl].a = (uint32_t)e;
            locs[nl].key = h->entries[e].alloc_count;
            locs[nl].pos = nl;
            nl++;
        }
        if (nl > 1)
            qsort(locs, nl, sizeof *locs, cmp_desc_stable);
        int printed = 0;
        for (size_t k = 0; k < nl; k++) {
            const entry *e = &h->entries[locs[k].a];
            if (e->alloc_count <= 0)
                continue;
            if (json)
                out_printf(o, "%s{\"line\": %d, \"start\": %d, \"end\": %d, "
                           "\"samples\": %lld}", printed ? ", " : "", e->line,
                           e->start, e->end, (long long)e->alloc_count);
            else if (printed < 3)
                out_printf(o, "%s%d:%d-%d", printed ? ", " : "", e->line, e->start, e->end);
            else if (printed == 3)
                out_str(o, "...");
            printed++;
        }
        out_str(o, json ? "], \"callers\": [" : ")\n");

        /* The callers list was built by prepending during the iteration. */
        for (size_t k = 0; k < hx->ncallers; k++) {
            hx->callers[k].key = hx->callers[k].b;
            hx->callers[k].pos = hx->ncallers - 1 - k;
        }
        if (hx->ncallers > 1)
            qsort(hx->callers, hx->ncallers, sizeof *hx->callers, cmp_desc_stable);
        int first = 1;
        for (size_t k = 0; k < hx->ncallers; k++) {
            const sitem *c = &hx->callers[k];
            double fa = (double)all[c->a];
            if (!(fa / total > 0.005))
                continue;
            if (json) {
                out_str(o, first ? "{\"function\": " : ", {\"function\": ");
                out_json(o, h->funcs[c->a].name);
                out_printf(o, ", \"bytes\": %s, \"percent_of_caller\": %s}",
                           json_num((double)c->b / info->sample_rate * wordsize).s,
                           json_num(100. * ((double)c->b / fa)).s);
                first = 0;
                continue;
            }
            if (first)
                out_str(o, "      including:\n");
            first = 0;
            out_str(o, "    ");
            print_bytes(o, (double)c->b / info->sample_rate * wordsize);
            out_printf(o, " via %s (%.0f%% of this)\n", h->funcs[c->a].name,
                 100. * ((double)c->b / fa));
        }
        out_str(o, json ? "]}" : "\n");
        out_maybe_flush(o);
    }
    free(locs);
    if (json)
        out_str(o, "]}\n");
    rc = 0;
done:
    for (size_t i = 0; i < t.n; i++)
        free(t.v[i].callers);
    free(t.v);
    free(t.head);
    free(list);
    free(direct);
    free(all);
    return rc;
}

static void hs_free(hs *h)
{
    for (size_t i = 0; i < h->nfuncs; i++) {
        free(h->funcs[i].name);
        free(h->funcs[i].filename);
    }
    free(h->funcs);
    free(h->func_slots);
    free(h->entries);
    u64map_free(&h->codes);
    u64map_free(&h->hh_index);
    free(h->hh);
    free(h->prev);
    stackset_free(&h->stacks);
    free(h);
}

static hs *hs_new(void)
{
    hs *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->hh_free = -1;
    h->lhead = -1;
    for (size_t b = 0; b < HH_BUCKETS; b++)
        h->hh_head[b] = -1;
    for (size_t k = 0; k < HH_CAL; k++)
        h->hh_cal[k] = -1;
    return h;
}

/* Print the report (or the error) and free; the exit status. */
static int finish(hs *h, mt_out *o, const mt_trace_info *info, int rc,
                  const char *path, int json)
{
#ifdef MT_HOTSPOTS_DUMP
    /* Test builds (tests/hotspots/sweep.sh, tests/analysis/shared_prefix.sh):
     * the whole heavy-hitters table, in the order the report iterates it,
     * on stderr: bucket, caller and site (function numbers), hits, the
     * caller's and the site's names. */
    fprintf(stderr, "hotspots table: %llu sweeps, %zu counters\n",
            (unsigned long long)h->hh_sweeps, h->hh_len);
    for (size_t b = 0; b < HH_BUCKETS; b++)
        for (int32_t i = hh_first(h, b); i >= 0; i = h->hh[i].next)
            fprintf(stderr, "%zu %u %u %lld %s %s\n", b, h->hh[i].f, h->hh[i].al,
                    (long long)h->hh[i].hits, h->funcs[h->hh[i].f].name,
                    h->funcs[h->hh[i].al].name);
#endif
    if (h->err == -1) {
        cli_error("hotspots", "%s: " MT_BAD_CODE_FMT, path,
                  (unsigned long long)h->bad_off, (unsigned long long)h->bad_code);
        rc = EXIT_DATA;
    } else if (h->err) {
        cli_error("hotspots", "out of memory");
        rc = EXIT_DATA;
    }
    if (rc == EXIT_OK && report(h, o, info, json)) {
        cli_error("hotspots", "out of memory");
        rc = EXIT_DATA;
    }
    out_flush(o);
    if (rc == EXIT_OK && o->err) {
        cli_error("hotspots", "writing standard output: %s", strerror(o->err));
        rc = EXIT_DATA;
    }
    out_free(o);
    hs_free(h);
    return rc;
}

/* The command with filters: the objects the analysis layer accepts. */
static int run_filtered(const mt_filter *f, const char *path, int json)
{
    hs *h = hs_new();
    mt_out o;
    int out_ok = out_init(&o, STDOUT_FILENO) == 0;
    if (!h || !out_ok) {
        cli_error("hotspots", "out of memory");
        if (out_ok)
            out_free(&o);
        free(h);
        return EXIT_DATA;
    }
    mt_scan sc = {0};
    h->filter = f;
    h->scan = &sc;
    sc.need_stacks = 1;
    sc.on_alloc = scan_alloc;
    sc.on_object = on_object;
    sc.ctx = h;
    int st = cli_scan_filtered("hotspots", &sc, f, path);
    int rc = st == MT_OK || h->err ? EXIT_OK : EXIT_DATA;
    rc = finish(h, &o, sc.info, rc, path, json);
    mt_scan_free(&sc);
    return rc;
}

int cmd_hotspots(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    mt_filter f;
    mt_filter_init(&f);
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        int k = cli_filter_arg("hotspots", &f, argc, argv, &i, &opts_done);
        if (k < 0) {
            mt_filter_free(&f);
            return EXIT_USAGE;
        }
        if (k > 0) {
            i--;                        /* the loop's i++ steps past it */
            continue;
        }
        int option = !opts_done && argv[i][0] == '-' && argv[i][1] != 0;
        if (option && cli_is_help(argv[i])) {
            mt_filter_free(&f);
            usage_hotspots(stdout);
            return EXIT_OK;
        }
        if (option && strcmp(argv[i], "--json") == 0) {
            json = 1;
            continue;
        }
        if (option || path) {
            mt_filter_free(&f);
            return option
                       ? cli_usage_error("hotspots", "unknown option '%s'", argv[i])
                       : cli_usage_error("hotspots", "expected one TRACE, got more");
        }
        path = argv[i];
    }
    if (!path) {
        mt_filter_free(&f);
        return cli_usage_error("hotspots", "missing TRACE argument");
    }
    int rc = cli_check_filters("hotspots", &f, path);
    if (rc) {
        mt_filter_free(&f);
        return rc;
    }
    if (mt_filter_active(&f)) {
        int frc = run_filtered(&f, path, json);
        mt_filter_free(&f);
        return frc;
    }
    mt_filter_free(&f);

    mt_reader_options opt = {0};
    opt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&opt);
    hs *h = hs_new();
    mt_out o;
    int out_ok = out_init(&o, STDOUT_FILENO) == 0;
    if (!r || !h || !out_ok) {
        cli_error("hotspots", "out of memory");
        if (out_ok)
            out_free(&o);
        free(h);
        mt_reader_close(r);
        return EXIT_DATA;
    }
    h->r = r;

    rc = EXIT_OK;
    int st = strcmp(path, "-") == 0 ? mt_reader_open_fd(r, STDIN_FILENO)
                                    : mt_reader_open_file(r, path);
    if (st == MT_OK)
        st = cli_scan(r, "hotspots", path, on_event, h);
    if (!h->err && st != MT_EOF) {
        cli_error("hotspots", "%s: %s", path, mt_reader_error(r));
        rc = EXIT_DATA;
    }
    rc = finish(h, &o, mt_reader_info(r), rc, path, json);
    mt_reader_close(r);
    return rc;
}
