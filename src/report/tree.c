/*
 * tree.c - the report's call tree and sites; see tree.h.
 */
#include "report/tree.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

/* The frame path of a prefix one code longer: stackset_map's fn. */
typedef struct extend_ctx {
    rp_tree *t;
    rp_profile *p;
    const mt_filter *f;
} extend_ctx;

static int64_t extend(void *ctx, uint32_t parent, uint64_t code)
{
    extend_ctx *x = ctx;
    const uint32_t *ids;
    size_t n;
    if (rp_frames_of_code(&x->t->frames, x->p, x->f, code, &ids, &n))
        return -1;
    int64_t at = parent;
    for (size_t j = 0; j < n && at >= 0; j++)
        at = idtrie_child(&x->t->trie, (uint32_t)at, ids[j]);
    return at;
}

static int64_t site_of(rp_tree *t, const char *name, uint32_t frame)
{
    uint64_t h = hash_str(name, strlen(name));
    for (;; h++) {
        uint64_t *v = u64map_get(&t->site_ids, h);
        if (!v)
            break;
        if (strcmp(t->sites[*v].name, name) == 0)
            return (int64_t)*v;
    }
    if (grow_array(&t->sites, &t->sites_cap, t->nsites + 1, sizeof *t->sites))
        return -1;
    rp_site *s = &t->sites[t->nsites];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name)) || u64map_put(&t->site_ids, h, t->nsites))
        return -1;
    s->frame = frame;
    return (int64_t)t->nsites++;
}

int64_t rp_tree_site_find(const rp_tree *t, const char *name)
{
    uint64_t h = hash_str(name, strlen(name));
    for (;; h++) {
        const uint64_t *v = u64map_get(&t->site_ids, h);
        if (!v)
            return -1;
        if (strcmp(t->sites[*v].name, name) == 0)
            return (int64_t)*v;
    }
}

/* Whether part is at least 1/k of whole (k > 0), without the overflow
 * of part * k (an abusive trace can hold 2^62 samples). */
static int at_least(int64_t part, int64_t whole, int64_t k)
{
    return part >= whole / k + (whole > 0 && whole % k != 0);
}

/* Mark (binned = 1) the nodes whose subtree holds at least 1/RP_BIN_PRUNE
 * of the samples allocated in some time bin. Bin by bin: each stack's
 * samples on its node (node_of), summed up the trie in one pass from the
 * last node (children come after their parents, so a node's sum is whole
 * when the pass reaches it), so one array of a sum per node serves every
 * bin. The pass moves only the nonzero sums (most nodes have none in a
 * bin) and leaves the array zero behind it. 0, or -1 out of memory. */
static int mark_bin_heavy(rp_tree *t, const rp_profile *p, const uint32_t *node_of)
{
    size_t nb = t->nbins, ne = p->nbins_used;
    size_t *start = calloc(nb + 2, sizeof *start);
    uint32_t *by_bin = malloc((ne + 1) * sizeof *by_bin);
    int64_t *acc = calloc(t->nnodes, sizeof *acc);
    int rc = -1;
    if (!start || !by_bin || !acc)
        goto out;
    /* the entries of p->bins grouped by bin (a counting sort): bin b's
     * are by_bin[start[b] .. start[b + 1]) */
    for (size_t e = 0; e < ne; e++)
        if (p->bins[e].bin < nb)
            start[p->bins[e].bin + 2]++;
    for (size_t b = 2; b < nb + 2; b++)
        start[b] += start[b - 1];
    for (size_t e = 0; e < ne; e++)
        if (p->bins[e].bin < nb)
            by_bin[start[p->bins[e].bin + 1]++] = (uint32_t)e;
    for (size_t b = 0; b < nb; b++) {
        if (start[b] == start[b + 1])
            continue;
        int64_t total = 0;        /* (the root's sum, wrapping as acc's) */
        for (size_t k = start[b]; k < start[b + 1]; k++) {
            const rp_bin *e = &p->bins[by_bin[k]];
            acc[node_of[e->stack]] += e->n;
            total += e->n;
        }
        for (size_t i = t->nnodes; i-- > 1;) {
            int64_t v = acc[i];
            if (!v)
                continue;
            if (v > 0 && at_least(v, total, RP_BIN_PRUNE))
                t->nodes[i].binned = 1;
            acc[t->trie.nodes[i].parent] += v;
            acc[i] = 0;
        }
        acc[0] = 0;
    }
    rc = 0;
out:
    free(start);
    free(by_bin);
    free(acc);
    return rc;
}

static int node_bin_cmp(const void *a, const void *b)
{
    const rp_node_bin *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->bin > y->bin) - (x->bin < y->bin);
}

/* t->node_bins: the binned nodes' nonzero remainders, by node and bin,
 * from p's (stack, bin) entries, each stack's on its nearest binned
 * ancestor node_of[stack]. Summed (wrapping, as an abusive trace's counts
 * may) in a dense array of a sum per binned node and bin when that is no
 * bigger than a list of the entries, else by sorting the entries: the
 * corpus's ocamlopt trace has 265 779 binned nodes x 64 bins for 67 258
 * entries, the benchmark trace millions of entries for a few thousand
 * binned nodes. 0, or -1 out of memory. */
static int node_bins_build(rp_tree *t, const rp_profile *p, const uint32_t *node_of)
{
    size_t nb = t->nbins, ne = p->nbins_used, k = 0;
    rp_node_bin *v = NULL;
    t->node_bins_at = calloc(t->nbinned + 1, sizeof *t->node_bins_at);
    if (!t->node_bins_at)
        return -1;
    if (t->nbinned <= ne * sizeof *v / sizeof(uint64_t) / nb) {
        uint64_t *acc = calloc(t->nbinned * nb + 1, sizeof *acc);
        if (!acc)
            return -1;
        for (size_t e = 0; e < ne; e++)
            if (p->bins[e].bin < nb)
                acc[(size_t)(t->nodes[node_of[p->bins[e].stack]].binned - 1) * nb +
                    p->bins[e].bin] += (uint64_t)p->bins[e].n;
        size_t nz = 0;
        for (size_t i = 0; i < t->nbinned * nb; i++)
            nz += acc[i] != 0;
        v = malloc((nz + 1) * sizeof *v);
        if (!v) {
            free(acc);
            return -1;
        }
        for (size_t i = 0; i < t->nbinned * nb; i++)
            if (acc[i]) {
                v[k].node = (uint32_t)(i / nb);
                v[k].bin = (uint32_t)(i % nb);
                v[k++].n = (int64_t)acc[i];
            }
        free(acc);
    } else {
        v = malloc((ne + 1) * sizeof *v);
        if (!v)
            return -1;
        size_t m = 0;
        for (size_t e = 0; e < ne; e++)
            if (p->bins[e].bin < nb) {
                v[m].node = t->nodes[node_of[p->bins[e].stack]].binned - 1;
                v[m].bin = (uint32_t)p->bins[e].bin;
                v[m++].n = p->bins[e].n;
            }
        qsort(v, m, sizeof *v, node_bin_cmp);
        for (size_t i = 0; i < m;) {
            rp_node_bin x = v[i];
            uint64_t sum = 0;
            for (; i < m && v[i].node == x.node && v[i].bin == x.bin; i++)
                sum += (uint64_t)v[i].n;
            if (sum) {
                x.n = (int64_t)sum;
                v[k++] = x;
            }
        }
        rp_node_bin *w = realloc(v, (k + 1) * sizeof *v);
        if (w)
            v = w;
    }
    t->node_bins = v;
    t->nnode_bins = k;
    for (size_t i = 0; i < k; i++)
        t->node_bins_at[v[i].node + 1] = i + 1;
    for (size_t i = 1; i <= t->nbinned; i++)      /* (nodes without entries) */
        if (t->node_bins_at[i] < t->node_bins_at[i - 1])
            t->node_bins_at[i] = t->node_bins_at[i - 1];
    return 0;
}

int rp_tree_build(rp_tree *t, rp_profile *p, const mt_filter *f, size_t nbins)
{
    memset(t, 0, sizeof *t);
    t->nbins = nbins ? nbins : 1;
    size_t nmap = stackset_nodes(&p->stacks), cap = 0;
    uint32_t *path = NULL, *node_of = calloc(p->n ? p->n : 1, sizeof *node_of),
             *site_at = calloc(p->n ? p->n : 1, sizeof *site_at),
             *map = malloc((nmap ? nmap : 1) * sizeof *map);
    int rc = -1;
    if (!node_of || !site_at || !map || idtrie_init(&t->trie))
        goto out;
    /* the trie of frame paths, mapped from the stacks' trie once per
     * distinct prefix (not once per stack and frame: the corpus's ocamlopt
     * trace has 9.8 M codes in its stacks for 0.53 M prefixes), and each
     * stack's node and site */
    memset(map, 0xff, nmap * sizeof *map);
    map[0] = 0;
    extend_ctx x = {t, p, f};
    for (size_t i = 0; i < p->n; i++) {
        const rp_stack *s = &p->v[i];
        if (!s->count)
            continue;
        int64_t at = stackset_map(&p->stacks, (uint32_t)i, map, extend, &x, &path, &cap);
        if (at < 0)
            goto out;
        node_of[i] = (uint32_t)at;
        const char *name = at ? t->frames.v[t->trie.nodes[at].key]->function
                          : stackset_len(&p->stacks, (uint32_t)i) ? "(unknown)"
                                                                  : "(no backtrace)";
        int64_t si = site_of(t, name, at ? t->trie.nodes[at].key : UINT32_MAX);
        if (si < 0)
            goto out;
        rp_site *st = &t->sites[si];
        st->v[0] += s->alloc;
        st->v[1] += s->peak;
        st->v[2] += s->end;
        st->count += s->count;
        site_at[i] = (uint32_t)si;
    }
    free(map);
    map = NULL;
    /* subtree sums: each stack's samples on its node, then children (which
     * come after their parents) into their parents */
    t->nnodes = t->trie.n;
    if (!(t->nodes = calloc(t->nnodes, sizeof *t->nodes)))
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        const rp_stack *s = &p->v[i];
        if (!s->count)
            continue;
        int64_t *c = t->nodes[node_of[i]].cum;
        c[0] += s->alloc;
        c[1] += s->peak;
        c[2] += s->end;
    }
    for (size_t i = t->nnodes; i-- > 1;)
        for (int k = 0; k < 3; k++)
            t->nodes[t->trie.nodes[i].parent].cum[k] += t->nodes[i].cum[k];
    /* the nodes heavy in some time bin (binned = 1 for now) */
    if (mark_bin_heavy(t, p, node_of))
        goto out;
    /* prune: a node stays when its subtree reaches 1/RP_PRUNE of a total
     * or is heavy in a bin (so do its ancestors); a pruned subtree's
     * samples go to the nearest kept ancestor's own */
    const int64_t *tot = t->nodes[0].cum;
    for (size_t i = 0; i < t->nnodes; i++) {
        rp_node *n = &t->nodes[i];
        int keep = i == 0 || n->binned;
        for (int k = 0; k < 3 && !keep; k++)
            keep = n->cum[k] > 0 && at_least(n->cum[k], tot[k], RP_PRUNE);
        if (keep && (i == 0 || t->nodes[t->trie.nodes[i].parent].keep))
            n->keep = (uint32_t)++t->nkept;
    }
    /* a kept node's own samples: its subtree's less its kept children's
     * (its pruned children's subtrees stay in it) */
    if (!(t->self = malloc((t->nkept + 1) * sizeof *t->self)))
        goto out;
    for (size_t i = 0; i < t->nnodes; i++)
        if (t->nodes[i].keep)
            memcpy(t->self[t->nodes[i].keep - 1], t->nodes[i].cum, sizeof *t->self);
    for (size_t i = 1; i < t->nnodes; i++)
        if (t->nodes[i].keep)
            for (int k = 0; k < 3; k++)
                t->self[t->nodes[t->trie.nodes[i].parent].keep - 1][k] -= t->nodes[i].cum[k];
    /* time bins: the root and the kept nodes heavy in a bin. (A heavy node
     * has heavy ancestors, so all are kept, unless a trace's negative
     * sample counts made an ancestor's sum smaller than the node's.) */
    for (size_t i = 0; i < t->nnodes; i++) {
        rp_node *n = &t->nodes[i];
        n->binned = i == 0 || (n->binned && n->keep) ? (uint32_t)++t->nbinned : 0;
    }
    t->binned_nodes = calloc(t->nbinned, sizeof *t->binned_nodes);
    t->site_bins = calloc(t->nsites * t->nbins + 1, sizeof *t->site_bins);
    if (!t->binned_nodes || !t->site_bins)
        goto out;
    for (size_t i = 0; i < t->nnodes; i++)
        if (t->nodes[i].binned)
            t->binned_nodes[t->nodes[i].binned - 1] = t->nodes[i].keep - 1;
    /* the remainders: each stack's samples per bin on its nearest binned
     * ancestor (parents come before their children), found once per
     * stack, not per bin */
    for (size_t i = 0; i < p->n; i++) {
        uint32_t at = node_of[i];
        while (!t->nodes[at].binned)
            at = t->trie.nodes[at].parent;
        node_of[i] = at;
    }
    for (size_t b = 0; b < p->nbins_used; b++) {
        uint64_t bin = p->bins[b].bin, n = (uint64_t)p->bins[b].n;
        uint32_t sid = p->bins[b].stack;
        if (bin < t->nbins)
            t->site_bins[(size_t)site_at[sid] * t->nbins + bin] += (int64_t)n;
    }
    if (node_bins_build(t, p, node_of))
        goto out;
    rc = 0;
out:
    free(path);
    free(map);
    free(node_of);
    free(site_at);
    return rc;
}

void rp_tree_free(rp_tree *t)
{
    rp_frames_free(&t->frames);
    idtrie_free(&t->trie);
    free(t->nodes);
    free(t->self);
    for (size_t i = 0; i < t->nsites; i++)
        free(t->sites[i].name);
    free(t->sites);
    u64map_free(&t->site_ids);
    free(t->node_bins);
    free(t->node_bins_at);
    free(t->binned_nodes);
    free(t->site_bins);
    memset(t, 0, sizeof *t);
}
