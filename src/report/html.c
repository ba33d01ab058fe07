/*
 * html.c - fill the report page with the data it shows (see html.h), in
 * three JSON blocks, each of flat number arrays (columns) rather than an
 * array per row: the browser parses them into packed arrays without an
 * object per row, and a column of small numbers is short text.
 *
 * memtrace-data (parsed when the page opens):
 *   info      executable, pid, host, start, duration, rate, context, filters
 *   timeline  [us, cumulative samples allocated, collected, ...] (triples)
 *             at most 2000 points from the analysis timeline (bin ends)
 *   peak      time and live samples (mt_timeline_peak, as memtrace live)
 *   strings   the function and file names
 *   frames    [function string, file string, line, ...] (triples), in
 *             order of function, file and line
 *   nodes     the call tree (tree.h) in preorder, children in frame order:
 *             columns depth (root 0), frame, own samples alloc(ated), peak
 *             (live at peak), end (live at end)
 *   sites     columns name (string), frame (-1: none), alloc, peak, end,
 *             count (sampled allocations)
 *   smax, lmax  the largest size and lifetime class of any object
 * memtrace-bins (parsed when a time window is first chosen), bins
 *   bin_width_us wide, nbins of them (bin k: allocated at k * bin_width_us
 *   or later, before (k + 1) * bin_width_us):
 *   node, mask, n  the nonzero remainders of the binned nodes (tree.h),
 *             nodes in page order: node (page index) and mask (ceil(nbins /
 *             32) words, bit b % 32 of word b / 32 set when bin b is
 *             nonzero) per node, then n: the samples of each nonzero bin
 *             (bins in order, nodes after nodes; most binned nodes have most
 *             bins nonzero: a mask is shorter than a list of bins)
 *   site_bins each site's samples allocated per bin (nbins per site, flat)
 * memtrace-classes (parsed when the table's source, size or lifetime
 *   filter is first used): per site and object class, columns
 *   site (as the difference to the previous row's), class (source << 11 |
 *   size class << 5 | lifetime class), alloc, peak, end, count.
 * Each block goes into the page gzipped and base64-encoded (the page
 * inflates it with the browser's DecompressionStream): a third of the
 * text to load and tokenize.
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
#include "util/strtab.h"

#include <zlib.h>

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

/* v as the next element of a number array (comma unless first). */
static void num(mt_out *o, int64_t v, int first)
{
    char b[24];
    size_t n = 0;
    if (!first)
        b[n++] = ',';
    n += fmt_int_pad(b + n, v, 0, ' ');
    out_mem(o, b, n);
    out_maybe_flush(o);
}

/* The column name: [v[0], v[stride], ...] of n values. */
static void column(mt_out *o, const char *name, const int64_t *v, size_t n, size_t stride)
{
    out_printf(o, "\"%s\":[", name);
    for (size_t i = 0; i < n; i++)
        num(o, v[i * stride], i == 0);
    out_str(o, "]");
}

static const mt_location *const *sort_frames;

static int frame_cmp(const void *a, const void *b)
{
    const mt_location *x = sort_frames[*(const uint32_t *)a],
                      *y = sort_frames[*(const uint32_t *)b];
    int c = strcmp(x->function ? x->function : "", y->function ? y->function : "");
    if (!c)
        c = strcmp(x->filename ? x->filename : "", y->filename ? y->filename : "");
    if (!c)
        c = (x->line > y->line) - (x->line < y->line);
    if (!c)
        c = (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
    return c;
}

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The frames the kept nodes and the sites use, in name order: fl[k] is
 * the tree frame of page frame k (*nf of them), fmap[tree frame] its page
 * index + 1 (0: unused). 0, or -1 out of memory. */
static int page_frames(const rp_tree *tr, uint32_t *fmap, uint32_t **fl, size_t *nf)
{
    *nf = 0;
    for (size_t i = 1; i < tr->nnodes; i++)
        if (tr->nodes[i].keep)
            fmap[tr->trie.nodes[i].key] = 1;
    for (size_t i = 0; i < tr->nsites; i++)
        if (tr->sites[i].frame != UINT32_MAX)
            fmap[tr->sites[i].frame] = 1;
    if (!(*fl = malloc((tr->frames.n + 1) * sizeof **fl)))
        return -1;
    for (size_t i = 0; i < tr->frames.n; i++)
        if (fmap[i])
            (*fl)[(*nf)++] = (uint32_t)i;
    sort_frames = tr->frames.v;
    qsort(*fl, *nf, sizeof **fl, frame_cmp);
    for (size_t k = 0; k < *nf; k++)
        fmap[(*fl)[k]] = (uint32_t)k + 1;
    return 0;
}

typedef struct child {
    uint32_t parent, frame, kept;   /* kept indices; frame: page index */
} child;

static int child_cmp(const void *a, const void *b)
{
    const child *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    return (x->frame > y->frame) - (x->frame < y->frame);
}

/* The kept nodes in preorder, children in page frame order (hence name
 * order): order[page index] = tree node, depth[page index], page_of[kept
 * index] = page index. 0, or -1 out of memory. */
static int preorder(const rp_tree *tr, const uint32_t *fmap, uint32_t *order,
                    uint32_t *depth, uint32_t *page_of)
{
    size_t nk = tr->nkept, nc = 0, sp = 0, n = 0;
    child *ch = malloc((nk + 1) * sizeof *ch);
    uint32_t *first = calloc(nk + 1, sizeof *first), *byk = malloc((nk + 1) * sizeof *byk),
             *stack = malloc((nk + 1) * 2 * sizeof *stack);
    int rc = -1;
    if (!ch || !first || !byk || !stack)
        goto out;
    for (size_t i = 0; i < tr->nnodes; i++)
        if (tr->nodes[i].keep)
            byk[tr->nodes[i].keep - 1] = (uint32_t)i;
    for (size_t k = 1; k < nk; k++) {
        const idtrie_node *nd = &tr->trie.nodes[byk[k]];
        ch[nc].parent = tr->nodes[nd->parent].keep - 1;
        ch[nc].frame = fmap[nd->key] - 1;
        ch[nc++].kept = (uint32_t)k;
    }
    qsort(ch, nc, sizeof *ch, child_cmp);
    for (size_t i = 0; i < nc; i++)          /* first[p] .. first[p + 1] */
        first[ch[i].parent + 1]++;
    for (size_t k = 0; k + 1 < nk + 1; k++)
        first[k + 1] += first[k];
    stack[sp++] = 0;                        /* (kept index, depth) pairs */
    stack[sp++] = 0;
    while (sp) {
        uint32_t d = stack[--sp], k = stack[--sp];
        order[n] = byk[k];
        depth[n] = d;
        page_of[k] = (uint32_t)n++;
        for (size_t c = k + 1 < nk + 1 ? first[k + 1] : nc; c-- > first[k];) {
            stack[sp++] = ch[c].kept;      /* reversed: the first comes out first */
            stack[sp++] = d + 1;
        }
    }
    rc = n == nk ? 0 : -1;
out:
    free(ch);
    free(first);
    free(byk);
    free(stack);
    return rc;
}

static int write_data(mt_out *o, rp_profile *p, const char *filters, const rp_tree *tr,
                      const uint32_t *fl, size_t nf, const uint32_t *fmap,
                      const uint32_t *order, const uint32_t *depth)
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
                  "\"sample_rate\": %s, \"bytes_per_sample\": %s, "
                  "\"peak_time_us\": %lld, \"peak_samples\": %lld, \"bin_width_us\": %lld, "
                  "\"nbins\": %zu",
               (long long)info->pid, (long long)info->start_time, (long long)p->end,
               json_num(info->sample_rate).s, json_num(rp_bytes(p, 1)).s,
               (long long)p->peak_time, (long long)p->peak_samples, (long long)p->bin_width,
               tr->nbins);
    /* timeline */
    out_str(o, ",\n\"timeline\": [0,0,0");
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
            num(o, when < p->end ? when : p->end, 0);
            num(o, ca, 0);
            num(o, cc, 0);
        }
    }
    out_str(o, "]");
    /* strings: the frames' function and file names, the sites' names */
    size_t nk = tr->nkept, ncol = (nf * 3 > nk ? nf * 3 : nk) + tr->nsites * 2 + 1;
    int64_t *col = malloc(ncol * sizeof *col);
    strtab st;
    memset(&st, 0, sizeof st);
    if (!col)
        return -1;
    int64_t *fcols = col, *scols = col + nf * 3;
    for (size_t k = 0; k < nf && !oom; k++) {
        const mt_location *l = tr->frames.v[fl[k]];
        fcols[k * 3] = strtab_id(&st, l->function ? l->function : "");
        fcols[k * 3 + 1] = strtab_id(&st, l->filename ? l->filename : "");
        fcols[k * 3 + 2] = l->line;
        oom = fcols[k * 3] < 0 || fcols[k * 3 + 1] < 0;
    }
    for (size_t i = 0; i < tr->nsites && !oom; i++) {
        scols[i * 2] = strtab_id(&st, tr->sites[i].name);
        scols[i * 2 + 1] = tr->sites[i].frame == UINT32_MAX ? -1 : (int64_t)fmap[tr->sites[i].frame] - 1;
        oom = scols[i * 2] < 0;
    }
    out_str(o, ",\n\"strings\": [");
    for (size_t i = 0; i < st.n && !oom; i++) {
        if (i)
            out_str(o, i % 8 ? "," : ",\n");
        quoted(o, st.v[i], &oom);
        out_maybe_flush(o);
    }
    out_str(o, "],\n\"frames\": [");
    for (size_t k = 0; k < nf * 3 && !oom; k++)
        num(o, fcols[k], k == 0);
    strtab_free(&st);
    /* sites: columns name, frame, alloc, peak, end, count */
    out_str(o, "],\n\"sites\": {");
    int64_t *c2 = malloc((tr->nsites + 1) * sizeof *c2);
    if (!c2)
        oom = 1;
    for (int c = 0; c < 6 && !oom; c++) {
        static const char *const names[] = {"name", "frame", "alloc", "peak", "end", "count"};
        for (size_t i = 0; i < tr->nsites; i++)
            c2[i] = c < 2 ? scols[i * 2 + c] : c < 5 ? tr->sites[i].v[c - 2] : tr->sites[i].count;
        if (c)
            out_str(o, ",\n");
        column(o, names[c], c2, tr->nsites, 1);
    }
    free(c2);
    /* nodes in preorder, columns depth, frame, alloc, peak, end */
    out_str(o, "},\n\"nodes\": {");
    for (int c = 0; c < 5 && !oom; c++) {
        static const char *const names[] = {"depth", "frame", "alloc", "peak", "end"};
        for (size_t i = 0; i < nk; i++) {
            uint32_t nd = order[i];
            col[i] = c == 0 ? (int64_t)depth[i]
                   : c == 1 ? (nd ? (int64_t)fmap[tr->trie.nodes[nd].key] - 1 : -1)
                   : tr->self[tr->nodes[nd].keep - 1][c - 2];
        }
        if (c)
            out_str(o, ",\n");
        column(o, names[c], col, nk, 1);
    }
    free(col);
    int smax = 0, lmax = 0;
    for (size_t i = 0; i < p->class_ids.cap; i++)
        if (p->class_ids.used[i]) {
            uint64_t key = p->class_ids.keys[i];
            if ((int)(key >> 10 & 1023) > smax)
                smax = (int)(key >> 10 & 1023);
            if ((int)(key & 1023) > lmax)
                lmax = (int)(key & 1023);
        }
    out_printf(o, "},\n\"smax\": %d, \"lmax\": %d}", smax, lmax);
    return oom ? -1 : 0;
}

/* Word w of the mask of a node's nonzero bins, whose entries are e[0, n)
 * (bins in order): bit b set when bin w * 32 + b is nonzero. */
static uint32_t bin_mask(const rp_node_bin *e, size_t n, size_t w)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].bin / 32 == w)
            m |= (uint32_t)1 << (e[i].bin % 32);
    return m;
}

/* memtrace-bins: see the head of this file. 0, or -1 out of memory. */
static int write_bins(mt_out *o, const rp_tree *tr, const uint32_t *page_of)
{
    /* the binned nodes in page order: page index << 32 | binned index */
    uint64_t *nodes = malloc((tr->nbinned + 1) * sizeof *nodes);
    if (!nodes)
        return -1;
    for (size_t i = 0; i < tr->nbinned; i++)
        nodes[i] = (uint64_t)page_of[tr->binned_nodes[i]] << 32 | i;
    qsort(nodes, tr->nbinned, sizeof *nodes, u64_cmp);
    /* three columns over the binned nodes with a nonzero remainder, in
     * page order: node (page index) and mask (words of 32 bins) per node,
     * n per nonzero bin */
    static const char *const names[] = {"node", "mask", "n"};
    size_t nb = tr->nbins;
    out_str(o, "{");
    for (int c = 0; c < 3; c++) {
        out_printf(o, "%s\"%s\":[", c ? ",\n" : "", names[c]);
        int first = 1;
        for (size_t i = 0; i < tr->nbinned; i++) {
            size_t k = nodes[i] & 0xffffffffu, ne = tr->node_bins_at[k + 1] - tr->node_bins_at[k];
            const rp_node_bin *e = tr->node_bins + tr->node_bins_at[k];
            if (!ne)
                continue;
            if (c == 0) {
                num(o, (int64_t)(nodes[i] >> 32), first);
                first = 0;
            }
            for (size_t w = 0; c == 1 && w * 32 < nb; w++) {
                num(o, bin_mask(e, ne, w), first);
                first = 0;
            }
            for (size_t j = 0; c == 2 && j < ne; j++) {
                num(o, e[j].n, first);
                first = 0;
            }
        }
        out_str(o, "]");
    }
    free(nodes);
    out_str(o, ",\n\"site_bins\":[");
    for (size_t i = 0; i < tr->nsites * tr->nbins; i++) {
        num(o, tr->site_bins[i], i == 0);
        if (i % 64 == 63)
            out_str(o, "\n");
    }
    out_str(o, "]}");
    return 0;
}

/* memtrace-classes: see the head of this file. 0, or -1 out of memory. */
static int write_classes(mt_out *o, rp_profile *p, const rp_tree *tr)
{
    u64map agg;
    memset(&agg, 0, sizeof agg);
    rp_stack *sums = NULL;
    size_t nsums = 0, sums_cap = 0;
    int oom = 0;
    for (size_t i = 0; i < p->class_ids.cap && !oom; i++) {
        if (!p->class_ids.used[i])
            continue;
        uint64_t key = p->class_ids.keys[i];
        const rp_stack *c = &p->cls[p->class_ids.vals[i]];
        int64_t site = rp_tree_site_find(tr, p->class_site[key >> 24]);
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
    /* rows in order of site and class */
    uint64_t *rows = oom ? NULL : malloc((nsums + 1) * sizeof *rows);
    size_t nr = 0;
    if (!rows)
        oom = 1;
    for (size_t i = 0; i < agg.cap && !oom; i++)
        if (agg.used[i])
            rows[nr++] = agg.keys[i];
    if (!oom)
        qsort(rows, nr, sizeof *rows, u64_cmp);
    static const char *const names[] = {"site", "class", "alloc", "peak", "end", "count"};
    out_str(o, "{");
    for (int c = 0; c < 6 && !oom; c++) {
        out_printf(o, "%s\"%s\":[", c ? ",\n" : "", names[c]);
        uint64_t prev = 0;
        for (size_t i = 0; i < nr; i++) {
            uint64_t key = rows[i];
            const rp_stack *d = &sums[*u64map_get(&agg, key)];
            int64_t v;
            switch (c) {
            case 0: v = (int64_t)((key >> 24) - prev); prev = key >> 24; break;
            case 1: v = (int64_t)((key >> 20 & 15) << 11 | (key >> 10 & 1023) << 5 | (key & 1023)); break;
            case 2: v = d->alloc; break;
            case 3: v = d->peak; break;
            case 4: v = d->end; break;
            default: v = d->count; break;
            }
            num(o, v, i == 0);
        }
        out_str(o, "]");
    }
    out_str(o, "}");
    free(rows);
    u64map_free(&agg);
    free(sums);
    return oom ? -1 : 0;
}

#define PACK_LEVEL 6                 /* zlib's default */

/* buf[0..len) gzipped (RFC 1952) and base64-encoded to o. 0, or -1 out of
 * memory. */
static int packed(mt_out *o, const char *buf, size_t len)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, PACK_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    size_t cap = deflateBound(&z, (uLong)len) + 16, n;
    unsigned char *gz = malloc(cap);
    int rc = -1;
    if (!gz)
        goto out;
    z.next_in = (Bytef *)(uintptr_t)buf;
    z.avail_in = (uInt)len;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        goto out;
    n = cap - z.avail_out;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)gz[i] << 16 | (i + 1 < n ? (uint32_t)gz[i + 1] << 8 : 0) |
                     (i + 2 < n ? gz[i + 2] : 0);
        char q[4] = {b64[v >> 18], b64[v >> 12 & 63], i + 1 < n ? b64[v >> 6 & 63] : '=',
                     i + 2 < n ? b64[v & 63] : '='};
        out_mem(o, q, 4);
        if (i % 3072 == 3069)
            out_maybe_flush(o);
    }
    rc = 0;
out:
    deflateEnd(&z);
    free(gz);
    return rc;
}

/* A memory buffer to write a block into before it is packed. */
static int mem_init(mt_out *m)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    m->chunk = SIZE_MAX;             /* never flushed */
    m->cap = (size_t)1 << 16;
    return (m->buf = malloc(m->cap)) ? 0 : -1;
}

/* The template's three placeholders, in the order they appear. */
static const char *const marks[] = {"/*MEMTRACE_DATA*/null", "/*MEMTRACE_BINS*/null",
                                    "/*MEMTRACE_CLASSES*/null"};

int rp_write_html(rp_profile *p, const mt_filter *f, const char *filters, int fd)
{
    const char *at[3];
    for (int i = 0; i < 3; i++)
        if (!(at[i] = strstr(rp_report_html, marks[i])) || (i && at[i] < at[i - 1]))
            return -1;
    rp_tree tr;
    if (rp_tree_build(&tr, p, f, (size_t)p->nbins)) {
        rp_tree_free(&tr);
        return -1;
    }
    size_t nk = tr.nkept, nf = 0;
    uint32_t *fmap = calloc(tr.frames.n + 1, sizeof *fmap), *fl = NULL,
             *order = malloc((nk + 1) * sizeof *order), *depth = malloc((nk + 1) * sizeof *depth),
             *page_of = malloc((nk + 1) * sizeof *page_of);
    mt_out o;
    int rc = -1, oinit = 0;
    if (!fmap || !order || !depth || !page_of || page_frames(&tr, fmap, &fl, &nf) ||
        preorder(&tr, fmap, order, depth, page_of) || out_init(&o, fd))
        goto out;
    oinit = 1;
    const char *from = rp_report_html;
    for (int b = 0; b < 3; b++) {
        out_mem(&o, from, (size_t)(at[b] - from));
        from = at[b] + strlen(marks[b]);
        mt_out m;
        rc = mem_init(&m);
        if (rc == 0) {
            if (b == 0)
                rc = write_data(&m, p, filters, &tr, fl, nf, fmap, order, depth);
            else if (b == 1)
                rc = write_bins(&m, &tr, page_of);
            else
                rc = write_classes(&m, p, &tr);
        }
        if (rc == 0 && !m.err)
            rc = packed(&o, m.buf, m.len);
        else
            rc = -1;
        out_free(&m);
        if (rc)
            break;
    }
    out_str(&o, from);
    out_flush(&o);
    if (rc == 0 && o.err) {
        errno = o.err;
        rc = -2;
    }
out:
    if (oinit)
        out_free(&o);
    free(fmap);
    free(fl);
    free(order);
    free(depth);
    free(page_of);
    rp_tree_free(&tr);
    return rc;
}
