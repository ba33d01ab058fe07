/*
 * substrset.c - strings looked for at once (Aho-Corasick); see substrset.h.
 */
#include "util/substrset.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

static inline uint64_t edge_key(uint32_t node, unsigned char c)
{
    return (uint64_t)node << 8 | c;
}

/* The child of node for c, or 0 (the root is nobody's child). */
static inline uint32_t child(const substrset *s, uint32_t node, unsigned char c)
{
    const uint64_t *v = u64map_get(&s->next, edge_key(node, c));
    return v ? (uint32_t)*v : 0;
}

/* A new node below parent for c (the first one made is the root): its id,
 * or -1 when out of memory. */
static int64_t add_node(substrset *s, uint32_t parent, unsigned char c)
{
    size_t cap = s->cap, cap2 = s->cap, cap3 = s->cap, cap4 = s->cap;
    if (s->n >= UINT32_MAX ||
        grow_array(&s->fail, &cap, s->n + 1, sizeof *s->fail) ||
        grow_array(&s->hit, &cap2, s->n + 1, sizeof *s->hit) ||
        grow_array(&s->parent, &cap3, s->n + 1, sizeof *s->parent) ||
        grow_array(&s->byte, &cap4, s->n + 1, sizeof *s->byte))
        return -1;
    s->cap = cap;          /* (all four grow alike from the same capacity) */
    uint32_t id = (uint32_t)s->n;
    s->fail[id] = 0;
    s->hit[id] = 0;
    s->parent[id] = parent;
    s->byte[id] = c;
    if (id && u64map_put(&s->next, edge_key(parent, c), id))
        return -1;
    s->n++;
    return id;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int substrset_build(substrset *s, char *const *v, size_t n)
{
    memset(s, 0, sizeof *s);
    uint64_t *order = NULL;
    uint32_t *depth = NULL;
    size_t dcap = 0;
    if (add_node(s, 0, 0) < 0)          /* the root: id 0 */
        goto nomem;
    /* the trie of the strings */
    for (size_t i = 0; i < n; i++) {
        uint32_t at = 0;
        for (const unsigned char *p = (const unsigned char *)v[i]; *p; p++) {
            int64_t c = child(s, at, *p);
            if (!c && (c = add_node(s, at, *p)) < 0)
                goto nomem;
            if (grow_array(&depth, &dcap, s->n, sizeof *depth))
                goto nomem;
            depth[c] = at ? depth[at] + 1 : 1;
            at = (uint32_t)c;
        }
        s->hit[at] = 1;
    }
    /* the failure links, shallower nodes first: a node's is one step from
     * its parent's (or from a suffix of that), which is shallower */
    if (!(order = malloc(s->n * sizeof *order)))
        goto nomem;
    for (size_t i = 1; i < s->n; i++)
        order[i - 1] = (uint64_t)depth[i] << 32 | i;
    qsort(order, s->n - 1, sizeof *order, cmp_u64);
    for (size_t k = 0; k + 1 < s->n; k++) {
        uint32_t u = (uint32_t)order[k], p = s->parent[u], f = 0;
        if (p) {
            for (f = s->fail[p];; f = s->fail[f]) {
                uint32_t c = child(s, f, s->byte[u]);
                if (c) {
                    f = c;
                    break;
                }
                if (!f)
                    break;
            }
        }
        s->fail[u] = f;
        s->hit[u] |= s->hit[f];
    }
    free(order);
    free(depth);
    return 0;
nomem:
    free(order);
    free(depth);
    substrset_free(s);
    return -1;
}

int substrset_find(const substrset *s, const char *t, size_t len)
{
    if (!s->n)
        return 0;
    if (s->hit[0])
        return 1;
    uint32_t at = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        uint32_t to;
        while (!(to = child(s, at, c)) && at)
            at = s->fail[at];
        at = to;
        if (s->hit[at])
            return 1;
    }
    return 0;
}

void substrset_free(substrset *s)
{
    u64map_free(&s->next);
    free(s->fail);
    free(s->hit);
    free(s->parent);
    free(s->byte);
    memset(s, 0, sizeof *s);
}
