/*
 * idtrie.c - a trie of 32-bit keys with dense node ids; see idtrie.h.
 */
#include "util/idtrie.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

/* A (parent, key)'s home slot, keyed by the random seed so that no trace's
 * keys can crowd one probe run (util/hash.h). */
static inline size_t home_of(const idtrie *t, uint32_t parent, uint32_t key, size_t cap)
{
    return hash_slot((uint64_t)parent << 32 | key, t->seed, cap);
}

static int slots_grow(idtrie *t)
{
    size_t cap = t->slots_cap ? t->slots_cap * 2 : 1024, mask = cap - 1;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 1; i < t->n; i++) {
        size_t j = home_of(t, t->nodes[i].parent, t->nodes[i].key, cap);
        while (s[j])
            j = (j + 1) & mask;
        s[j] = (uint32_t)i;
    }
    free(t->slots);
    t->slots = s;
    t->slots_cap = cap;
    return 0;
}

int idtrie_init(idtrie *t)
{
    if (t->n)
        return 0;
    t->seed = hash_key()[0];
    if (grow_array(&t->nodes, &t->cap, 1, sizeof *t->nodes) || slots_grow(t))
        return -1;
    t->nodes[0].parent = t->nodes[0].key = 0;
    t->n = 1;
    return 0;
}

int64_t idtrie_child(idtrie *t, uint32_t parent, uint32_t key)
{
    if (!t->n && idtrie_init(t))
        return -1;
    size_t mask = t->slots_cap - 1, j = home_of(t, parent, key, t->slots_cap);
    for (uint32_t c; (c = t->slots[j]) != 0; j = (j + 1) & mask)
        if (t->nodes[c].key == key && t->nodes[c].parent == parent)
            return c;
    if (t->n >= UINT32_MAX || grow_array(&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes))
        return -1;
    if ((t->n + 1) * 2 > t->slots_cap) {
        if (slots_grow(t))
            return -1;
        mask = t->slots_cap - 1;
        for (j = home_of(t, parent, key, t->slots_cap); t->slots[j]; j = (j + 1) & mask)
            ;
    }
    uint32_t c = (uint32_t)t->n++;
    t->nodes[c].parent = parent;
    t->nodes[c].key = key;
    t->slots[j] = c;
    return c;
}

void idtrie_free(idtrie *t)
{
    free(t->nodes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
