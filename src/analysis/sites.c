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
        size_t j = fnv1a(FNV_OFFSET, t->v[i].name, strlen(t->v[i].name)) & (cap - 1);
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
    size_t m = t->slots_cap - 1, j = fnv1a(FNV_OFFSET, name, strlen(name)) & m;
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
        size_t m = t->slots_cap - 1, j = fnv1a(FNV_OFFSET, name, strlen(name)) & m;
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

int mt_sites_add(mt_sites *t, const mt_object *o)
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
    mt_site *s = &t->v[t->by_stack[sid]];
    int live_peak = o->alloc_time <= t->peak_time &&
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

int mt_site_report_run(mt_site_report *r, const char *path, const mt_filter *f,
                       mt_site_by by, mt_diag_fn diag,
                       void (*tick)(void *, const mt_reader *), void *tick_ctx)
{
    memset(r, 0, sizeof *r);
    r->sites.by = by;
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
    s1.diag = diag;
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
    s2.tick = tick;
    s2.tick_ctx = tick_ctx;
    r->sites.peak_time = r->peak_time;
    st = mt_scan_run(&s2, path);
    if (st == MT_OK && r->err[0])
        st = MT_ERR_NOMEM;
    else if (st != MT_OK)
        snprintf(r->err, sizeof r->err, "%s", s2.err);
    if (s2.info) {
        r->sample_rate = s2.info->sample_rate;
        r->word_size = s2.info->word_size;
        r->pid = s2.info->pid;
        r->executable = strdup(s2.info->executable_name);
    }
    r->end = s2.end;
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
