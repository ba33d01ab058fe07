/*
 * u64map.c - the CLI's hash map from 64-bit keys (object ids, location
 * codes) to 64-bit values: linear probing with backward-shift deletion, so
 * a table of live objects needs no tombstones however many objects die.
 */
#include "util/u64map.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

static inline size_t u64_slot(const u64map *m, uint64_t k)
{
    return hash_slot(k, m->seed, m->cap);
}

static int u64map_grow(u64map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    u64map t = {calloc(cap, 8), calloc(cap, 8), calloc(cap, 1), cap, m->n,
                m->cap ? m->seed : hash_key()[0]};
    if (!t.keys || !t.vals || !t.used) {
        free(t.keys);
        free(t.vals);
        free(t.used);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = u64_slot(&t, m->keys[i]);
        while (t.used[j])
            j = (j + 1) & (cap - 1);
        t.used[j] = 1;
        t.keys[j] = m->keys[i];
        t.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = t;
    return 0;
}

/* Pointer to the value of k, or NULL. */
uint64_t *u64map_get(const u64map *m, uint64_t k)
{
    if (!m->cap)
        return NULL;
    for (size_t j = u64_slot(m, k);; j = (j + 1) & (m->cap - 1)) {
        if (!m->used[j])
            return NULL;
        if (m->keys[j] == k)
            return &m->vals[j];
    }
}

/* Insert or overwrite; 0, or -1 when out of memory. */
int u64map_put(u64map *m, uint64_t k, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap && u64map_grow(m))
        return -1;
    size_t j = u64_slot(m, k);
    while (m->used[j] && m->keys[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->used[j]) {
        m->used[j] = 1;
        m->keys[j] = k;
        m->n++;
    }
    m->vals[j] = v;
    return 0;
}

/* Remove k; returns 1 if it was present (value in *v). */
int u64map_del(u64map *m, uint64_t k, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1, j = u64_slot(m, k);
    for (;; j = (j + 1) & mask) {
        if (!m->used[j])
            return 0;
        if (m->keys[j] == k)
            break;
    }
    *v = m->vals[j];
    /* Backward shift: move later members of the probe run into the hole. */
    size_t hole = j;
    for (size_t i = (j + 1) & mask; m->used[i]; i = (i + 1) & mask) {
        size_t home = u64_slot(m, m->keys[i]);
        /* i may move to hole if home is not cyclically in (hole, i]. */
        int stays = hole <= i ? (home > hole && home <= i)
                              : (home > hole || home <= i);
        if (!stays) {
            m->keys[hole] = m->keys[i];
            m->vals[hole] = m->vals[i];
            hole = i;
        }
    }
    m->used[hole] = 0;
    m->n--;
    return 1;
}

void u64map_free(u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}
