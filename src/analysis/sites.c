/*
 * sites.c - allocation-site tables for `memtrace top` and `diff`: objects
 * are charged to the innermost frame not hidden by --hide (by function or
 * by function and line), with samples allocated, live at the peak and live
 * at the end; and the two-pass driver that finds the peak first.
 */
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "util/hash.h"

static int slots_grow(mt_sites *t)
{
    size_t cap = t->slots_cap ? t->slots_cap * 2 : 256;
    uint32_t *v = calloc(cap, sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash_str(t->v[i].name, strlen(t->v[i].name)) & (cap - 1);
        while (v[j])
            j = (j + 1) & (cap - 1);
        v[j] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = v;
    t->slots_cap = cap;
    return 0;
}

int64_t mt_sites_find(const mt_sites *t, const char *name)
{
    if (!t->slots_cap)
        return -1;
    size_t m = t->slots_cap - 1, j = hash_str(name, strlen(name)) & m;
    for (; t->slots[j]; j = (j + 1) & m)
        if (strcmp(t->v[t->slots[j] - 1].name, name) == 0)
            return t->slots[j] - 1;
    return -1;
}

static int64_t site_of(mt_sites *t, const mt_stack *st)
{
    char small[512], *name = small;
    const mt_location *l = st->site;
    if (!l)
        snprintf(small, sizeof small, "%s", st->len ? "(unknown)" : "(no backtrace)");
    else if (t->by == MT_BY_LINE) {
        size_t need = strlen(l->function) + strlen(l->filename) + 32;
        if (need > sizeof small && !(name = malloc(need)))
            return -1;
        snprintf(name, need > sizeof small ? need : sizeof small, "%s (%s:%d)",
                 l->function, l->filename, l->line);
    } else {
        name = (char *)l->function;
    }
    int64_t k = mt_sites_find(t, name);
    if (k < 0) {
        if ((t->n + 1) * 2 > t->slots_cap && slots_grow(t))
            goto nomem;
        if (t->n == t->cap) {
            size_t c = t->cap ? t->cap * 2 : 64;
            mt_site *v = realloc(t->v, c * sizeof *v);
            if (!v)
                goto nomem;
            t->v = v;
            t->cap = c;
        }
        mt_site *s = &t->v[t->n];
        memset(s, 0, sizeof *s);
        if (!(s->name = strdup(name)))
            goto nomem;
        size_t m = t->slots_cap - 1, j = hash_str(name, strlen(name)) & m;
        while (t->slots[j])
            j = (j + 1) & m;
        t->slots[j] = (uint32_t)t->n + 1;
        k = (int64_t)t->n++;
    }
    if (name != small && name != l->function)
        free(name);
    return k;
nomem:
    if (name != small && (!l || name != l->function))
        free(name);
    return -1;
}

/* The site index of o's stack, or -1 when out of memory. */
static int64_t site_index(mt_sites *t, const mt_object *o)
{
    uint32_t sid = o->stack->id;
    if (sid >= t->by_stack_cap) {
        size_t c = t->by_stack_cap ? t->by_stack_cap : 256;
        while (c <= sid)
            c *= 2;
        int32_t *v = realloc(t->by_stack, c * sizeof *v);
        if (!v)
            return -1;
        for (size_t i = t->by_stack_cap; i < c; i++)
            v[i] = -1;
        t->by_stack = v;
        t->by_stack_cap = c;
    }
    if (t->by_stack[sid] < 0) {
        int64_t k = site_of(t, o->stack);
        if (k < 0)
            return -1;
        t->by_stack[sid] = (int32_t)k;
    }
    return t->by_stack[sid];
}

/* Add o to its site, index k. */
static void add_to(mt_sites *t, int64_t k, const mt_object *o)
{
    mt_site *s = &t->v[k];
    int live_peak = !t->no_peak && o->alloc_time <= t->peak_time &&
                    (o->collect_time == MT_NEVER || o->collect_time > t->peak_time);
    int64_t ns = o->nsamples;
    s->alloc += ns;
    s->count++;
    t->total.alloc += ns;
    t->total.count++;
    if (live_peak) {
        s->peak += ns;
        t->total.peak += ns;
    }
    if (o->collect_time == MT_NEVER) {
        s->end += ns;
        t->total.end += ns;
    }
}

int mt_sites_add(mt_sites *t, const mt_object *o)
{
    int64_t k = site_index(t, o);
    if (k < 0)
        return -1;
    add_to(t, k, o);
    return 0;
}

void mt_sites_free(mt_sites *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    free(t->slots);
    free(t->by_stack);
    memset(t, 0, sizeof *t);
}

/* ---- the peak in one pass ----------------------------------------------
 *
 * The timeline's peak is the end of the first bin, at the timeline's final
 * bin width, after which the live heap is largest; the width doubles as the
 * trace grows and is known only at the end. With objects accepted or not
 * when allocated, and times in order, the live heap is known at every
 * event: so for every candidate width 2^k the running maximum over bin ends
 * is kept (a bin end is passed when an event's time enters a later bin; the
 * live heap then is the one before that event). When level k's maximum
 * moves, its epoch changes; a site about to change copies its live samples
 * into its snapshot of each level whose epoch it has not seen yet. At the
 * end, level K of the final width gives the peak, and each site's live
 * samples at it: its snapshot if it changed after the peak moved last,
 * else its current value. */

#define PT_LEVELS 48            /* bin widths 1 us .. 2^47 us (4 years) */

/* A site's state in two arrays: what every change touches (16 bytes a
 * site, so that the sites in use stay in the cache) and the snapshots,
 * touched only when some level's peak has moved since the site's last
 * change. */
typedef struct pt_hot {
    int64_t live;
    uint64_t gen;               /* pt.gen when the snapshots were brought up */
} pt_hot;

typedef struct pt_site {
    int64_t snap[PT_LEVELS];
    uint32_t epoch[PT_LEVELS];
} pt_site;

typedef struct peak_track {
    mt_site_report *r;
    mt_timeline *tl;
    pt_hot *hot;
    pt_site *v;
    size_t cap;
    int64_t live, tprev;
    int backwards;              /* a time went backwards: two passes */
    int64_t best[PT_LEVELS], best_t[PT_LEVELS];
    uint32_t epoch[PT_LEVELS];
    uint64_t moved_gen[PT_LEVELS];  /* gen of each level's last move */
    uint64_t gen;               /* bumped whenever an epoch changes */
} peak_track;

/* Pass the bin ends between the previous change and time t. */
static void pt_advance(peak_track *pt, int64_t t)
{
    if (t < 0)
        t = 0;                  /* as the timeline does */
    if (t < pt->tprev) {
        pt->backwards = 1;
        return;
    }
    for (int k = 0; k < PT_LEVELS && (t >> k) != (pt->tprev >> k); k++) {
        if (pt->live > pt->best[k]) {
            pt->best[k] = pt->live;
            pt->best_t[k] = (((pt->tprev >> k) + 1) << k) - 1;
            pt->epoch[k]++;
            pt->moved_gen[k] = ++pt->gen;
        }
    }
    pt->tprev = t;
}

/* Room for site in pt's arrays; 0 or -1. Out of line and cold: inlined, it
 * made pt_change (twice per object) save and restore registers. */
static __attribute__((noinline, cold)) int pt_grow(peak_track *pt, int64_t site)
{
    size_t c = pt->cap ? pt->cap * 2 : 64;
    while (c <= (size_t)site)
        c *= 2;
    pt_site *v = realloc(pt->v, c * sizeof *v);
    if (v)
        pt->v = v;
    pt_hot *h = v ? realloc(pt->hot, c * sizeof *h) : NULL;
    if (!h)
        return -1;
    memset(v + pt->cap, 0, (c - pt->cap) * sizeof *v);
    memset(h + pt->cap, 0, (c - pt->cap) * sizeof *h);
    pt->hot = h;
    pt->cap = c;
    return 0;
}

static int pt_change(peak_track *pt, int64_t site, int64_t t, int64_t delta)
{
    pt_advance(pt, t);
    if (pt->backwards)
        return 0;
    if ((size_t)site >= pt->cap && pt_grow(pt, site))
        return -1;
    pt_hot *ph = &pt->hot[site];
    if (ph->gen != pt->gen) {
        pt_site *ps = &pt->v[site];
        /* levels below the current width can no longer be the final one,
         * and level k has no bin end before 2^k - 1 */
        int lo = __builtin_ctzll((uint64_t)pt->tl->width);
        int hi = 64 - __builtin_clzll((uint64_t)pt->tprev + 1);
        if (hi > PT_LEVELS - 1)
            hi = PT_LEVELS - 1;
        for (int k = lo; k <= hi; k++)
            if (pt->moved_gen[k] > ph->gen) {   /* moved since we looked */
                ps->snap[k] = ph->live;
                ps->epoch[k] = pt->epoch[k];
            }
        ph->gen = pt->gen;
    }
    ph->live += delta;
    pt->live += delta;
    return 0;
}

static int pt_accept(void *ctx, const mt_object *o)
{
    peak_track *pt = ctx;
    int64_t k = site_index(&pt->r->sites, o);
    if (k < 0 || pt_change(pt, k, o->alloc_time, o->nsamples)) {
        snprintf(pt->r->err, sizeof pt->r->err, "out of memory");
        return 1;
    }
    return 0;
}

static int pt_object(void *ctx, const mt_object *o)
{
    peak_track *pt = ctx;
    mt_site_report *r = pt->r;
    int64_t k = site_index(&r->sites, o);  /* (pt_accept looked it up) */
    if (k >= 0)
        add_to(&r->sites, k, o);
    if (k < 0 ||
        (o->collect_time != MT_NEVER && pt_change(pt, k, o->collect_time, -o->nsamples))) {
        snprintf(r->err, sizeof r->err, "out of memory");
        return 1;
    }
    return 0;
}

/* The peak and the sites' samples live at it, once the pass is over.
 * Returns 0, or -1 when the final width is beyond the levels kept. */
static int pt_finish(peak_track *pt, int64_t end)
{
    int K = __builtin_ctzll((uint64_t)pt->tl->width);
    if (K >= PT_LEVELS)
        return -1;
    int moved = 0;
    if (pt->live > pt->best[K]) {       /* the bin of the last change */
        pt->best[K] = pt->live;
        pt->best_t[K] = (((pt->tprev >> K) + 1) << K) - 1;
        moved = 1;
    }
    mt_sites *t = &pt->r->sites;
    t->total.peak = 0;
    for (size_t i = 0; i < t->n; i++) {
        int64_t v = 0;
        if (i < pt->cap) {
            const pt_site *ps = &pt->v[i];
            int64_t live = pt->hot[i].live;
            if (moved)                  /* the peak is after the last change */
                v = live;
            else if (pt->epoch[K] == 0) /* the heap never rose above 0 */
                v = 0;
            else if (ps->epoch[K] == pt->epoch[K])  /* changed since */
                v = ps->snap[K];
            else                        /* unchanged since the peak */
                v = live;
        }
        t->v[i].peak = v;
        t->total.peak += v;
    }
    int64_t bt = pt->best[K] > 0 ? pt->best_t[K] : 0;
    pt->r->peak_time = bt > end ? end : bt;
    pt->r->peak_samples = pt->best[K];
    t->peak_time = pt->r->peak_time;
    return 0;
}

/* ---- the two-pass driver ------------------------------------------------ */

static int on_site_obj(void *ctx, const mt_object *o)
{
    mt_site_report *r = ctx;
    if (mt_sites_add(&r->sites, o)) {
        snprintf(r->err, sizeof r->err, "out of memory");
        return 1;
    }
    return 0;
}

/* The report's trace facts, from a finished scan. */
static void take_info(mt_site_report *r, const mt_scan *s)
{
    if (s->info) {
        r->sample_rate = s->info->sample_rate;
        r->word_size = s->info->word_size;
        r->pid = s->info->pid;
        r->executable = strdup(s->info->executable_name);
    }
    r->end = s->end;
    r->odd_allocs = s->odd_allocs;
}

/* One pass (see "the peak in one pass"). Returns MT_OK, an error, or
 * MT_ERR_UNSUPPORTED when the trace needs two passes after all (the sites
 * are then reset). */
static int one_pass(mt_site_report *r, const char *path, const mt_filter *f,
                    unsigned flags, mt_diag_fn diag, void *diag_ctx,
                    void (*tick)(void *, const mt_reader *),
                    void *tick_ctx)
{
    mt_timeline tl;
    if (mt_timeline_init(&tl)) {
        snprintf(r->err, sizeof r->err, "out of memory");
        return MT_ERR_NOMEM;
    }
    peak_track pt;
    memset(&pt, 0, sizeof pt);
    pt.r = r;
    pt.tl = &tl;
    r->sites.no_peak = 1;
    mt_scan s = {0};
    s.filter = f;
    s.live_at = -1;
    s.timeline = &tl;
    s.need_stacks = 1;
    s.threads = !(flags & MT_SITES_ONE_THREAD);
    s.on_accept = pt_accept;
    s.on_object = pt_object;
    s.ctx = &pt;
    s.diag = diag;
    s.diag_ctx = diag_ctx;
    s.tick = tick;
    s.tick_ctx = tick_ctx;
    int st = mt_scan_run(&s, path);
    if (st == MT_OK && r->err[0])
        st = MT_ERR_NOMEM;
    else if (st != MT_OK && !r->err[0])
        snprintf(r->err, sizeof r->err, "%s", s.err);
    if (st == MT_OK && (pt.backwards || pt_finish(&pt, s.end))) {
        mt_sites_free(&r->sites);
        st = MT_ERR_UNSUPPORTED;
    }
    if (st == MT_OK) {
        take_info(r, &s);
        r->sites.no_peak = 0;
        r->passes = 1;
    }
    free(pt.v);
    free(pt.hot);
    mt_timeline_free(&tl);
    mt_scan_free(&s);
    return st;
}

int mt_site_report_run(mt_site_report *r, const char *path, const mt_filter *f,
                       mt_site_by by, unsigned flags, mt_diag_fn diag, void *diag_ctx,
                       void (*tick)(void *, const mt_reader *), void *tick_ctx)
{
    memset(r, 0, sizeof *r);
    r->sites.by = by;
    if (!(flags & MT_SITES_TWO_PASS) && !f->has_min_life && !f->has_max_life &&
        f->live_mode == MT_LIVE_ANY && strcmp(path, "-") != 0) {
        int st = one_pass(r, path, f, flags, diag, diag_ctx, tick, tick_ctx);
        if (st != MT_ERR_UNSUPPORTED) {
            if (st == MT_OK && !r->executable) {
                snprintf(r->err, sizeof r->err, "out of memory");
                st = MT_ERR_NOMEM;
            }
            return st;
        }
        diag = NULL;            /* the first pass has reported them */
        memset(r, 0, sizeof *r);
        r->sites.by = by;
    }
    r->passes = 2;
    mt_timeline tl;
    if (mt_timeline_init(&tl)) {
        snprintf(r->err, sizeof r->err, "out of memory");
        return MT_ERR_NOMEM;
    }
    /* Pass 1: the timeline of the objects the filter selects (with --live-at
     * peak: before that restriction, which needs this pass's result). */
    mt_scan s1 = {0};
    s1.filter = f;
    s1.live_at = f->live_mode == MT_LIVE_PEAK ? -1 : mt_filter_live_at(f, 0);
    s1.timeline = &tl;
    s1.threads = !(flags & MT_SITES_ONE_THREAD);
    s1.diag = diag;
    s1.diag_ctx = diag_ctx;
    s1.tick = tick;
    s1.tick_ctx = tick_ctx;
    int st = mt_scan_run(&s1, path);
    if (st != MT_OK) {
        snprintf(r->err, sizeof r->err, "%s", s1.err);
        mt_scan_free(&s1);
        mt_timeline_free(&tl);
        return st;
    }
    mt_timeline_peak(&tl, &r->peak_time, &r->peak_samples);
    mt_timeline_free(&tl);
    mt_scan_free(&s1);

    /* Pass 2: the sites (skipped-packet messages were given by pass 1). */
    mt_scan s2 = {0};
    s2.filter = f;
    s2.live_at = mt_filter_live_at(f, r->peak_time);
    s2.on_object = on_site_obj;
    s2.ctx = r;
    s2.need_stacks = 1;
    s2.threads = !(flags & MT_SITES_ONE_THREAD);
    s2.tick = tick;
    s2.tick_ctx = tick_ctx;
    r->sites.peak_time = r->peak_time;
    st = mt_scan_run(&s2, path);
    if (st == MT_OK && r->err[0])
        st = MT_ERR_NOMEM;
    else if (st != MT_OK)
        snprintf(r->err, sizeof r->err, "%s", s2.err);
    take_info(r, &s2);
    mt_scan_free(&s2);
    if (st == MT_OK && !r->executable) {
        snprintf(r->err, sizeof r->err, "out of memory");
        st = MT_ERR_NOMEM;
    }
    return st;
}

void mt_site_report_free(mt_site_report *r)
{
    mt_sites_free(&r->sites);
    free(r->executable);
    r->executable = NULL;
}
