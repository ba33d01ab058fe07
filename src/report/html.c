/*
 * html.c - fill the report page with the data it shows (see html.h):
 *   info      executable, pid, host, start, duration, rate, context
 *   timeline  [us, cumulative samples allocated, collected] at most 2000
 *             points from the analysis timeline (bin ends)
 *   peak      time and live samples (mt_timeline_peak, as memtrace live)
 *   frames    [function, file, line]
 *   nodes     the call tree (tree.h): [parent, frame, own samples allocated,
 *             live at peak, live at end]; node 0 is the root
 *   sites     [function, frame, samples allocated, live at peak, live at
 *             end, sampled allocations]
 *   node_bins [node, [samples allocated per bin]] for the nodes with
 *             bins (tree.h), bins bin_width_us wide
 *   site_bins [site, bin, samples allocated]
 *   site_classes
 *             [site, source, size class, lifetime class, samples allocated,
 *             live at peak, live at end, allocations] for the table's
 *             source, size and lifetime filters
 * The page turns samples into bytes with bytes_per_sample.
 */
#include "report/html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"
#include "report/tree.h"
#include "util/grow.h"
#include "util/json.h"

extern const char rp_report_html[];
extern const size_t rp_report_html_len;

static void quoted(mt_out *o, const char *s, int *oom)
{
    char *q = json_quote(s ? s : "");
    if (!q) {
        *oom = 1;
        return;
    }
    /* "</" inside a <script> would end it */
    for (char *c = q; *c; c++) {
        if (c[0] == '<' && c[1] == '/') {
            out_str(o, "<\\");
            continue;
        }
        out_mem(o, c, 1);
    }
    free(q);
}

static int write_data(mt_out *o, rp_profile *p, const mt_filter *f, const char *filters)
{
    const mt_trace_info *info = p->info;
    int oom = 0;
    out_str(o, "{\"executable\": ");
    quoted(o, info->executable_name, &oom);
    out_str(o, ", \"host\": ");
    quoted(o, info->host_name, &oom);
    out_str(o, ", \"context\": ");
    quoted(o, info->context, &oom);
    out_str(o, ", \"filters\": ");
    quoted(o, filters, &oom);
    out_printf(o, ", \"pid\": %lld, \"start_time_us\": %lld, \"end_us\": %lld, "
                  "\"sample_rate\": %.17g, \"bytes_per_sample\": %.17g, "
                  "\"peak_time_us\": %lld, \"peak_samples\": %lld, \"bin_width_us\": %lld",
               (long long)info->pid, (long long)info->start_time, (long long)p->end,
               info->sample_rate, rp_bytes(p, 1), (long long)p->peak_time,
               (long long)p->peak_samples, (long long)p->bin_width);
    /* timeline */
    out_str(o, ",\n\"timeline\": [[0,0,0]");
    const mt_timeline *t = &p->timeline;
    int64_t nb = t->width > 0 ? t->end / t->width + 1 : 1;
    if (nb > MT_TL_BINS)
        nb = MT_TL_BINS;
    int64_t step = nb / 2000 + 1, ca = 0, cc = 0;
    for (int64_t i = 0; i < nb; i++) {
        ca += t->alloc[i];
        cc += t->coll[i];
        if ((i + 1) % step == 0 || i == nb - 1) {
            int64_t when = (i + 1) * t->width - 1;
            out_printf(o, ",[%lld,%lld,%lld]", (long long)(when < p->end ? when : p->end),
                       (long long)ca, (long long)cc);
        }
    }
    rp_tree tr;
    if (rp_tree_build(&tr, p, f, (size_t)p->nbins)) {
        rp_tree_free(&tr);
        return -1;
    }
    /* frames the kept nodes and the sites use, renumbered */
    uint32_t *fmap = calloc(tr.frames.n ? tr.frames.n : 1, sizeof *fmap), nf = 0;
    if (!fmap)
        oom = 1;
    for (size_t i = 1; i < tr.nnodes && !oom; i++)
        if (tr.nodes[i].keep && !fmap[tr.nodes[i].frame])
            fmap[tr.nodes[i].frame] = ++nf;
    for (size_t i = 0; i < tr.nsites && !oom; i++)
        if (tr.sites[i].frame != UINT32_MAX && !fmap[tr.sites[i].frame])
            fmap[tr.sites[i].frame] = ++nf;
    out_str(o, "],\n\"frames\": [");
    for (size_t i = 0, k = 0; i < tr.frames.n && !oom; i++) {
        if (!fmap[i])
            continue;
        fmap[i] = (uint32_t)k;         /* index on the page */
        out_str(o, k++ ? ",\n[" : "\n[");
        quoted(o, tr.frames.v[i]->function, &oom);
        out_str(o, ",");
        quoted(o, tr.frames.v[i]->filename, &oom);
        out_printf(o, ",%d]", tr.frames.v[i]->line);
        out_maybe_flush(o);
    }
    /* nodes: [parent, frame, own allocated, own live at peak, own at end] */
    out_str(o, "],\n\"nodes\": [[-1,-1");
    for (int k = 0; k < 3; k++)
        out_printf(o, ",%lld", (long long)tr.nodes[0].self[k]);
    out_str(o, "]");
    for (size_t i = 1; i < tr.nnodes && !oom; i++) {
        const rp_node *n = &tr.nodes[i];
        if (!n->keep)
            continue;
        out_printf(o, ",\n[%u,%u,%lld,%lld,%lld]", tr.nodes[n->parent].keep - 1,
                   fmap[n->frame], (long long)n->self[0], (long long)n->self[1],
                   (long long)n->self[2]);
        out_maybe_flush(o);
    }
    /* sites: [name, frame or -1, allocated, live at peak, at end, allocs] */
    out_str(o, "],\n\"sites\": [");
    for (size_t i = 0; i < tr.nsites && !oom; i++) {
        const rp_site *st = &tr.sites[i];
        out_str(o, i ? ",\n[" : "\n[");
        quoted(o, st->name, &oom);
        out_printf(o, ",%lld,%lld,%lld,%lld,%lld]",
                   st->frame == UINT32_MAX ? -1LL : (long long)fmap[st->frame],
                   (long long)st->v[0], (long long)st->v[1], (long long)st->v[2],
                   (long long)st->count);
        out_maybe_flush(o);
    }
    free(fmap);
    /* samples allocated per time bin: nodes [node, [per bin]], sites
     * [site, bin, samples] */
    out_str(o, "],\n\"node_bins\": [");
    for (size_t i = 0; i < tr.nbinned && !oom; i++) {
        out_printf(o, i ? ",\n[%u,[" : "\n[%u,[", tr.binned_nodes[i]);
        for (size_t b = 0; b < tr.nbins; b++)
            out_printf(o, b ? ",%lld" : "%lld", (long long)tr.node_bins[i * tr.nbins + b]);
        out_str(o, "]]");
        out_maybe_flush(o);
    }
    out_str(o, "],\n\"site_bins\": [");
    size_t k = 0;
    for (size_t i = 0; i < tr.site_bins.cap && !oom; i++) {
        if (!tr.site_bins.used[i])
            continue;
        uint64_t key = tr.site_bins.keys[i];
        out_printf(o, k++ ? ",[%llu,%u,%llu]" : "[%llu,%u,%llu]",
                   (unsigned long long)(key >> 16), (unsigned)(key & 0xffff),
                   (unsigned long long)tr.site_bins.vals[i]);
        if (k % 16 == 0)
            out_str(o, "\n");
        out_maybe_flush(o);
    }
    /* sites by object class: [site, source, size class, lifetime class,
     * allocated, live at peak, live at end, allocations] (profile.h) */
    out_str(o, "],\n\"site_classes\": [");
    u64map agg;
    memset(&agg, 0, sizeof agg);
    rp_stack *sums = NULL;
    size_t nsums = 0, sums_cap = 0;
    for (size_t i = 0; i < p->class_ids.cap && !oom; i++) {
        if (!p->class_ids.used[i])
            continue;
        uint64_t key = p->class_ids.keys[i];
        const rp_stack *c = &p->cls[p->class_ids.vals[i]];
        int64_t site = rp_tree_site_find(&tr, p->class_site[key >> 24]);
        if (site < 0)
            continue;                   /* cannot happen: every stack has a site */
        uint64_t skey = RP_CLASS_KEY(site, 0, 0, 0) | (key & 0xffffff);
        uint64_t *v = u64map_get(&agg, skey);
        if (!v) {
            if (grow_array(&sums, &sums_cap, nsums + 1, sizeof *sums) ||
                u64map_put(&agg, skey, nsums)) {
                oom = 1;
                break;
            }
            memset(&sums[nsums], 0, sizeof *sums);
            v = u64map_get(&agg, skey);
            *v = nsums++;
        }
        rp_stack *d = &sums[*v];
        d->alloc += c->alloc;
        d->peak += c->peak;
        d->end += c->end;
        d->count += c->count;
    }
    size_t k2 = 0;
    for (size_t i = 0; i < agg.cap && !oom; i++) {
        if (!agg.used[i])
            continue;
        uint64_t key = agg.keys[i];
        const rp_stack *d = &sums[agg.vals[i]];
        out_printf(o, "%s[%llu,%u,%u,%u,%lld,%lld,%lld,%lld]", k2++ ? ",\n" : "",
                   (unsigned long long)(key >> 24), (unsigned)(key >> 20 & 15),
                   (unsigned)(key >> 10 & 1023), (unsigned)(key & 1023),
                   (long long)d->alloc, (long long)d->peak, (long long)d->end,
                   (long long)d->count);
        out_maybe_flush(o);
    }
    u64map_free(&agg);
    free(sums);
    rp_tree_free(&tr);
    out_str(o, "]}");
    return oom ? -1 : 0;
}

int rp_write_html(rp_profile *p, const mt_filter *f, const char *filters, int fd)
{
    static const char mark[] = "/*MEMTRACE_DATA*/null";
    const char *at = strstr(rp_report_html, mark);
    if (!at)
        return -1;
    mt_out o;
    if (out_init(&o, fd))
        return -1;
    out_mem(&o, rp_report_html, (size_t)(at - rp_report_html));
    int rc = write_data(&o, p, f, filters);
    out_str(&o, at + sizeof mark - 1);
    out_flush(&o);
    if (rc == 0 && o.err) {
        errno = o.err;
        rc = -2;
    }
    out_free(&o);
    return rc;
}
