/*
 * html.c - fill the report page with the data it shows (see html.h):
 *   info      executable, pid, host, start, duration, rate, context
 *   timeline  [us, cumulative samples allocated, collected] at most 2000
 *             points from the analysis timeline (bin ends)
 *   peak      time and live samples (mt_timeline_peak, as memtrace live)
 *   frames    [function, file, line]
 *   stacks    [frames caller first, allocated, live at peak, live at end,
 *             sampled allocations, has codes] in samples
 *   bins      [stack, bin, samples allocated] (bin_width_us wide), for the
 *             allocated-in-window view
 * The page turns samples into bytes with bytes_per_sample.
 */
#include "report/html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/output.h"
#include "report/frames.h"
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
    /* stacks, then frames (interned while walking the stacks) */
    rp_frames fr;
    memset(&fr, 0, sizeof fr);
    uint32_t *ids = NULL, *page = calloc(p->n ? p->n : 1, sizeof *page);
    size_t cap = 0, len, k = 0;
    if (!page)
        oom = 1;
    out_str(o, "],\n\"stacks\": [");
    for (size_t i = 0; i < p->n && !oom; i++) {
        const rp_stack *s = &p->v[i];
        if (!s->count)
            continue;
        if (rp_frames_of_stack(&fr, p, f, (uint32_t)i, &ids, &cap, &len)) {
            oom = 1;
            break;
        }
        size_t nc;
        stackset_get(&p->stacks, (uint32_t)i, &nc);
        out_str(o, k ? ",\n[[" : "\n[[");
        for (size_t j = 0; j < len; j++)
            out_printf(o, j ? ",%u" : "%u", ids[j]);
        out_printf(o, "],%lld,%lld,%lld,%lld,%d]", (long long)s->alloc,
                   (long long)s->peak, (long long)s->end, (long long)s->count, nc > 0);
        /* the page's stack index: k */
        page[i] = (uint32_t)k++;
        out_maybe_flush(o);
    }
    free(ids);
    out_str(o, "],\n\"frames\": [");
    for (size_t i = 0; i < fr.n && !oom; i++) {
        out_str(o, i ? ",\n[" : "\n[");
        quoted(o, fr.v[i]->function, &oom);
        out_str(o, ",");
        quoted(o, fr.v[i]->filename, &oom);
        out_printf(o, ",%d]", fr.v[i]->line);
        out_maybe_flush(o);
    }
    rp_frames_free(&fr);
    out_str(o, "],\n\"bins\": [");
    k = 0;
    for (size_t i = 0; i < p->bins.cap && !oom; i++) {
        if (!p->bins.used[i])
            continue;
        uint64_t key = p->bins.keys[i];
        uint32_t sid = (uint32_t)(key >> 16);
        out_printf(o, k++ ? ",[%u,%u,%llu]" : "[%u,%u,%llu]", page[sid], (unsigned)(key & 0xffff),
                   (unsigned long long)p->bins.vals[i]);
        if (k % 16 == 0)
            out_str(o, "\n");
        out_maybe_flush(o);
    }
    free(page);
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
