/*
 * profile.c - the per-stack aggregation of pprof, speedscope and report;
 * see profile.h.
 */
#include "report/profile.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "util/grow.h"

double rp_bytes(const rp_profile *p, int64_t n)
{
    return mt_est_bytes(n, p->info);
}

int rp_code_frames(rp_profile *p, const mt_filter *f, uint64_t code,
                   const mt_location ***locs, size_t *cap, size_t *n)
{
    const mt_location *l;
    size_t k;
    *n = 0;
    if (mt_reader_locations(p->scan.reader, code, &l, &k) != MT_OK)
        return -1;
    if (grow_array(locs, cap, k ? k : 1, sizeof **locs))
        return -1;
    for (size_t i = 0; i < k; i++)
        if (!mt_filter_hides(f, l[i].function))
            (*locs)[(*n)++] = &l[i];
    return 0;
}

static int on_alloc(void *ctx, const mt_event *ev, uint32_t *user)
{
    rp_profile *p = ctx;
    if (stackset_add_shared(&p->stacks, ev->backtrace, ev->backtrace_len,
                            p->scan.shared_prefix, user)) {
        p->err = 1;
        return 1;
    }
    return 0;
}

static int live_at(const mt_object *o, int64_t t)
{
    if (t == INT64_MAX)
        return o->collect_time == MT_NEVER;
    return o->alloc_time <= t && (o->collect_time == MT_NEVER || o->collect_time > t);
}

static void add(rp_stack *s, const mt_object *o, int peak, int at, double obj)
{
    s->alloc += o->nsamples;
    s->alloc_obj += obj;
    s->count++;
    if (peak)
        s->peak += o->nsamples;
    if (o->collect_time == MT_NEVER)
        s->end += o->nsamples;
    if (at) {
        s->at += o->nsamples;
        s->at_obj += obj;
    }
}

/* Append stack id's pending bin sum to p->bins. 0, or -1 out of memory. */
static int bins_flush(rp_profile *p, uint32_t id)
{
    if (grow_array(&p->bins, &p->bins_cap, p->nbins_used + 1, sizeof *p->bins))
        return -1;
    rp_bin *b = &p->bins[p->nbins_used++];
    b->stack = id;
    b->bin = (uint32_t)p->run[id].cur;
    b->n = p->run[id].acc;
    p->run[id].cur = -1;
    return 0;
}

#define CLS_DM_BITS 14

static int on_object(void *ctx, const mt_object *o)
{
    rp_profile *p = ctx;
    uint32_t id = o->user;
    if (id >= p->n) {
        size_t cap = p->cap;
        if (grow_array(&p->v, &p->cap, (size_t)id + 1, sizeof *p->v))
            goto nomem;
        if (p->nbins > 0 && p->cap != cap) {
            struct rp_run *r = realloc(p->run, p->cap * sizeof *r);
            if (!r)
                goto nomem;
            p->run = r;
        }
        memset(p->v + p->n, 0, ((size_t)id + 1 - p->n) * sizeof *p->v);
        if (p->nbins > 0)
            for (size_t i = p->n; i <= id; i++)
                p->run[i].cur = -1;
        p->n = (size_t)id + 1;
    }
    const mt_trace_info *info = p->scan.info;
    double obj = (double)o->nsamples /
                 (info->sample_rate * (double)(o->length > 0 ? o->length : 1));
    int peak = live_at(o, p->peak_time), at = live_at(o, p->at_time);
    add(&p->v[id], o, peak, at, obj);
    add(&p->total, o, peak, at, obj);
    if (p->classes) {
        double bytes = (double)o->length * (double)(info->word_size / 8);
        int sc = 0, lc = 0;
        while (sc < 60 && bytes >= (double)(2ull << sc))
            sc++;
        int64_t life = (o->collect_time == MT_NEVER ? p->scan.end : o->collect_time) - o->alloc_time;
        for (int64_t d = 1; lc < 19 && life >= d; d *= 10)
            lc++;
        uint32_t sid = o->stack->id;
        if (sid >= p->class_site_cap) {
            size_t old = p->class_site_cap;
            if (grow_array(&p->class_site, &p->class_site_cap, (size_t)sid + 1,
                           sizeof *p->class_site))
                goto nomem;
            memset(p->class_site + old, 0, (p->class_site_cap - old) * sizeof *p->class_site);
        }
        if (!p->class_site[sid])
            p->class_site[sid] = o->stack->site ? o->stack->site->function
                                 : o->stack->len ? "(unknown)" : "(no backtrace)";
        uint64_t key = RP_CLASS_KEY(sid, o->source & 15, sc, lc);
        size_t dm = (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CLS_DM_BITS));
        if (p->cls_dm_idx[dm] && p->cls_dm_key[dm] == key) {
            add(&p->cls[p->cls_dm_idx[dm] - 1], o, peak, at, obj);
            goto bins;
        }
        uint64_t *v = u64map_get(&p->class_ids, key);
        if (!v) {
            if (grow_array(&p->cls, &p->cls_cap, p->ncls + 1, sizeof *p->cls) ||
                u64map_put(&p->class_ids, key, p->ncls))
                goto nomem;
            memset(&p->cls[p->ncls], 0, sizeof *p->cls);
            v = u64map_get(&p->class_ids, key);
            *v = p->ncls++;
        }
        add(&p->cls[*v], o, peak, at, obj);
        if (*v < UINT32_MAX) {
            p->cls_dm_key[dm] = key;
            p->cls_dm_idx[dm] = (uint32_t)*v + 1;
        }
    }
bins:
    if (p->nbins > 0) {
        int64_t b = o->alloc_time / p->bin_width;
        if (b >= p->nbins)
            b = p->nbins - 1;
        if (b < 0)
            b = 0;
        struct rp_run *r = &p->run[id];
        if (r->cur == (int32_t)b) {
            r->acc += o->nsamples;
        } else {
            if (r->cur >= 0 && bins_flush(p, id))
                goto nomem;
            r->cur = (int32_t)b;
            r->acc = o->nsamples;
        }
    }
    return 0;
nomem:
    p->err = 1;
    return 1;
}

int rp_profile_run(rp_profile *p, const char *cmd, const char *path,
                   const mt_filter *f)
{
    /* With live_as_time, --live-at names the moment of `at` and filters
     * nothing: the scans see f without it. */
    mt_filter fs = *f;
    if (p->live_as_time)
        fs.live_mode = MT_LIVE_ANY;
    p->peak_time = 0;
    int first = p->need_timeline || f->live_mode == MT_LIVE_PEAK;
    if (first) {
        if (mt_timeline_init(&p->timeline)) {
            cli_error(cmd, "out of memory");
            return MT_ERR_NOMEM;
        }
        p->has_timeline = 1;
        /* as mt_site_report_run: the filtered objects' timeline, before
         * --live-at peak's restriction, which needs this pass's result */
        mt_filter f1 = fs;
        if (f1.live_mode == MT_LIVE_PEAK)
            f1.live_mode = MT_LIVE_ANY;
        mt_scan s1 = {0};
        s1.timeline = &p->timeline;
        int st = cli_scan_filtered(cmd, &s1, &f1, path);
        if (st == MT_OK)
            p->end = s1.end;
        mt_scan_free(&s1);
        if (st != MT_OK)
            return st;
        mt_timeline_peak(&p->timeline, &p->peak_time, &p->peak_samples);
    }
    int64_t at = mt_filter_live_at(f, p->peak_time);
    p->at_time = at < 0 ? INT64_MAX : at;
    if (p->nbins > 0) {
        if (p->nbins > 65535)
            p->nbins = 65535;
        p->bin_width = p->end / p->nbins + 1;
    }
    mt_filter f2 = fs;
    if (f2.live_mode == MT_LIVE_PEAK) {   /* resolved: no second peak pass */
        f2.live_mode = MT_LIVE_TIME;
        f2.live_at = p->peak_time;
    }
    if (p->classes) {
        p->cls_dm_key = calloc((size_t)1 << CLS_DM_BITS, sizeof *p->cls_dm_key);
        p->cls_dm_idx = calloc((size_t)1 << CLS_DM_BITS, sizeof *p->cls_dm_idx);
        if (!p->cls_dm_key || !p->cls_dm_idx) {
            cli_error(cmd, "out of memory");
            return MT_ERR_NOMEM;
        }
    }
    p->scan.need_stacks = 1;
    p->scan.on_alloc = on_alloc;
    p->scan.on_object = on_object;
    p->scan.ctx = p;
    int st;
    if (!first) {
        st = cli_scan_filtered(cmd, &p->scan, &f2, path);
    } else {
        /* the second pass: skipped packets were reported by the first */
        char label[64];
        cli_progress prog;
        snprintf(label, sizeof label, "%s, second pass", cmd);
        progress_start(&prog, label, path);
        p->scan.filter = &f2;
        p->scan.live_at = mt_filter_live_at(&f2, p->peak_time);
        p->scan.tick = progress_tick_fn;
        p->scan.tick_ctx = &prog;
        st = mt_scan_run(&p->scan, path);
        progress_done(&prog);
        if (st != MT_OK && p->scan.err[0])
            cli_error(cmd, "%s: %s", path, p->scan.err);
    }
    p->info = p->scan.info;
    if (st == MT_OK && !p->err)
        cli_warn_odd(cmd, path, p->scan.odd_allocs);
    if (p->err) {
        cli_error(cmd, "out of memory");
        return MT_ERR_NOMEM;
    }
    if (st != MT_OK)
        return st;
    p->end = p->scan.end;
    for (size_t i = 0; p->nbins > 0 && i < p->n; i++)
        if (p->run[i].cur >= 0 && bins_flush(p, (uint32_t)i)) {
            cli_error(cmd, "out of memory");
            return MT_ERR_NOMEM;
        }
    if (p->n < p->stacks.nstacks) {
        if (grow_array(&p->v, &p->cap, p->stacks.nstacks, sizeof *p->v)) {
            cli_error(cmd, "out of memory");
            return MT_ERR_NOMEM;
        }
        memset(p->v + p->n, 0, (p->stacks.nstacks - p->n) * sizeof *p->v);
        p->n = p->stacks.nstacks;
    }
    return MT_OK;
}

void rp_profile_free(rp_profile *p)
{
    stackset_free(&p->stacks);
    free(p->v);
    if (p->has_timeline)
        mt_timeline_free(&p->timeline);
    free(p->bins);
    free(p->run);
    u64map_free(&p->class_ids);
    free(p->class_site);
    free(p->cls);
    free(p->cls_dm_key);
    free(p->cls_dm_idx);
    mt_scan_free(&p->scan);
    memset(p, 0, sizeof *p);
}
