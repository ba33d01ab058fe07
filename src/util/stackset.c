/*
 * stackset.c - distinct backtraces as a trie of prefixes; see stackset.h.
 */
#include "util/stackset.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

#define NONE UINT32_MAX

/* A slot holds a node id (0: empty, as the root is nobody's child) and 32
 * bits of its key's hash, so that a probe reads the node only when those
 * match: the node is then almost always the one sought, which the walk
 * reads next anyway. (A probe that read every candidate node missed the
 * cache twice; stackset_add took half the time of `pprof`.)
 *
 * The hash is hash_u64 of code + parent * seed[1], keyed by seed[0] (both
 * random): which keys share a home slot changes with the seeds, whatever
 * codes a trace holds, and codes in arithmetic progression spread
 * (util/hash.h, hash_slot). Its top bits pick the slot, its low 32 bits are
 * the tag. */
static inline uint64_t hash_of(const stackset *s, uint32_t parent, uint64_t code)
{
    return hash_u64(code + (uint64_t)parent * s->seed[1], s->seed[0]);
}

static inline size_t home_of(uint64_t h, size_t cap)
{
    return (size_t)(h >> (64 - __builtin_ctzll(cap)));  /* (as hash_slot) */
}

static int slots_grow(stackset *s)
{
    size_t cap = s->slots_cap ? s->slots_cap * 2 : 4096, mask = cap - 1;
    if (!s->slots_cap) {
        s->seed[0] = hash_key()[0] | 1;
        s->seed[1] = hash_key()[1] | 1;
    }
    uint64_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 1; i < s->nnodes; i++) {
        uint64_t h = hash_of(s, s->nodes[i].parent, s->nodes[i].code);
        size_t j = home_of(h, cap);
        while (t[j])
            j = (j + 1) & mask;
        t[j] = h << 32 | i;
    }
    free(s->slots);
    s->slots = t;
    s->slots_cap = cap;
    return 0;
}

/* The child of node `parent` for `code`, made if new; NONE when out of
 * memory. */
static uint32_t child(stackset *s, uint32_t parent, uint64_t code)
{
    stackset_node *p = &s->nodes[parent];
    uint32_t m = p->memo[0], m2 = p->memo[1];
    if (m && s->nodes[m].code == code)
        return m;
    if (m2 && s->nodes[m2].code == code) {
        p->memo[0] = m2;
        p->memo[1] = m;
        return m2;
    }
    uint64_t h = hash_of(s, parent, code), tag = h << 32;
    size_t mask = s->slots_cap - 1, j = home_of(h, s->slots_cap);
    for (uint64_t e; (e = s->slots[j]) != 0; j = (j + 1) & mask) {
        uint32_t c = (uint32_t)e;
        if ((e & ~(uint64_t)UINT32_MAX) == tag && s->nodes[c].code == code &&
            s->nodes[c].parent == parent) {
            p->memo[1] = m;
            p->memo[0] = c;
            return c;
        }
    }
    if (s->nnodes >= NONE - 1 ||
        grow_array(&s->nodes, &s->nodes_cap, s->nnodes + 1, sizeof *s->nodes))
        return NONE;
    if ((s->nnodes + 1) * 2 > s->slots_cap) {
        if (slots_grow(s))
            return NONE;
        mask = s->slots_cap - 1;
        for (j = home_of(h, s->slots_cap); s->slots[j]; j = (j + 1) & mask)
            ;
    }
    uint32_t c = (uint32_t)s->nnodes++;
    stackset_node *n = &s->nodes[c];
    n->code = code;
    n->parent = parent;
    n->depth = s->nodes[parent].depth + 1;
    n->stack = 0;
    n->memo[0] = n->memo[1] = 0;
    s->slots[j] = tag | c;
    p = &s->nodes[parent];         /* (nodes may have moved) */
    p->memo[1] = p->memo[0];
    p->memo[0] = c;
    return c;
}

int stackset_add(stackset *s, const uint64_t *codes, size_t len, uint32_t *id)
{
    return stackset_add_shared(s, codes, len, 0, id);
}

int stackset_add_shared(stackset *s, const uint64_t *codes, size_t len, size_t shared,
                        uint32_t *id)
{
    if (len > NONE - 2 || s->nstacks >= NONE - 2)
        return -1;
    if (!s->nnodes) {
        if (grow_array(&s->nodes, &s->nodes_cap, 1, sizeof *s->nodes) || slots_grow(s))
            return -1;
        memset(&s->nodes[0], 0, sizeof s->nodes[0]);
        s->nnodes = 1;
    }
    if (len > s->path_cap) {
        size_t cap = s->path_cap, cap2 = s->path_cap;
        uint64_t *sc;
        if (grow_array(&s->path, &cap, len, sizeof *s->path) ||
            grow_array(&s->last, &cap2, cap, sizeof *s->last) ||
            !(sc = realloc(s->scratch, cap2 * sizeof *sc)))
            return -1;     /* (what grew stays: path_cap is a lower bound) */
        s->scratch = sc;
        s->path_cap = cap < cap2 ? cap : cap2;
    }
    /* the prefix shared with the last stack added: the caller's word for
     * its first `shared` codes, then a run of compares with `last` (which
     * keeps its codes in order, for the processor to stream) */
    size_t n = len < s->path_len ? len : s->path_len, k = shared < n ? shared : n;
    while (k < n && s->last[k] == codes[k])
        k++;
    uint32_t at = k ? s->path[k - 1] : 0;
    for (size_t i = k; i < len; i++) {
        at = child(s, at, codes[i]);
        if (at == NONE) {
            s->path_len = i;
            return -1;
        }
        s->path[i] = at;
        s->last[i] = codes[i];
    }
    s->path_len = len;
    stackset_node *t = &s->nodes[at];
    if (!t->stack) {
        if (grow_array(&s->term, &s->term_cap, s->nstacks + 1, sizeof *s->term))
            return -1;
        s->term[s->nstacks] = at;
        t->stack = (uint32_t)++s->nstacks;
    }
    *id = t->stack - 1;
    return 0;
}

const uint64_t *stackset_get(stackset *s, uint32_t id, size_t *len)
{
    size_t shared;
    return stackset_get_shared(s, id, len, &shared);
}

const uint64_t *stackset_get_shared(stackset *s, uint32_t id, size_t *len, size_t *shared)
{
    static const uint64_t none[1];
    uint32_t at = s->term[id], b = s->held;
    size_t n = s->nodes[at].depth;
    /* scratch holds the codes of node `held`: only those below its common
     * ancestor with `at` change (every stack added fit path_cap, and
     * scratch has that room) */
    uint32_t a = at;
    while (s->nodes[a].depth > s->nodes[b].depth) {
        s->scratch[s->nodes[a].depth - 1] = s->nodes[a].code;
        a = s->nodes[a].parent;
    }
    while (s->nodes[b].depth > s->nodes[a].depth)
        b = s->nodes[b].parent;
    while (a != b) {
        s->scratch[s->nodes[a].depth - 1] = s->nodes[a].code;
        a = s->nodes[a].parent;
        b = s->nodes[b].parent;
    }
    s->held = at;
    *shared = s->nodes[a].depth;
    *len = n;
    return n ? s->scratch : none;   /* (scratch may still be NULL) */
}

int64_t stackset_map(const stackset *s, uint32_t id, uint32_t *map,
                     int64_t (*fn)(void *ctx, uint32_t parent, uint64_t code), void *ctx,
                     uint32_t **buf, size_t *cap)
{
    size_t n = 0;
    uint32_t at = s->term[id];
    for (; map[at] == NONE; at = s->nodes[at].parent) {
        if (grow_array(buf, cap, n + 1, sizeof **buf))
            return -1;
        (*buf)[n++] = at;
    }
    int64_t m = map[at];
    while (n--) {
        uint32_t c = (*buf)[n];
        if ((m = fn(ctx, map[s->nodes[c].parent], s->nodes[c].code)) < 0 || m >= NONE)
            return -1;
        map[c] = (uint32_t)m;
    }
    return m;
}

void stackset_free(stackset *s)
{
    free(s->nodes);
    free(s->slots);
    free(s->term);
    free(s->path);
    free(s->last);
    free(s->scratch);
    memset(s, 0, sizeof *s);
}
