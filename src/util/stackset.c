/*
 * stackset.c - distinct backtraces with dense ids; see stackset.h.
 */
#include "util/stackset.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

static uint64_t hash_codes(const uint64_t *c, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ c[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static int slots_grow(stackset *s)
{
    size_t cap = s->slots_cap ? s->slots_cap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->nrecs; i++) {
        size_t j = s->recs[i].hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    free(s->slots);
    s->slots = t;
    s->slots_cap = cap;
    return 0;
}

int stackset_add(stackset *s, const uint64_t *codes, size_t len, uint32_t *id)
{
    if (len > UINT32_MAX - 1 || s->nrecs >= UINT32_MAX - 2)
        return -1;
    if ((s->nrecs + 1) * 2 > s->slots_cap && slots_grow(s))
        return -1;
    uint64_t h = hash_codes(codes, len);
    size_t mask = s->slots_cap - 1, j = h & mask;
    for (; s->slots[j]; j = (j + 1) & mask) {
        const struct stackset_rec *r = &s->recs[s->slots[j] - 1];
        if (r->hash == h && r->len == len &&
            (len == 0 || memcmp(s->codes + r->off, codes, len * sizeof *codes) == 0)) {
            *id = s->slots[j] - 1;
            return 0;
        }
    }
    if (grow_array(&s->codes, &s->codes_cap, s->ncodes + len, sizeof *s->codes) ||
        grow_array(&s->recs, &s->recs_cap, s->nrecs + 1, sizeof *s->recs))
        return -1;
    if (len)
        memcpy(s->codes + s->ncodes, codes, len * sizeof *codes);
    struct stackset_rec *r = &s->recs[s->nrecs];
    r->hash = h;
    r->off = s->ncodes;
    r->len = (uint32_t)len;
    s->ncodes += len;
    *id = (uint32_t)s->nrecs++;
    s->slots[j] = *id + 1;
    return 0;
}

void stackset_free(stackset *s)
{
    free(s->codes);
    free(s->recs);
    free(s->slots);
    memset(s, 0, sizeof *s);
}
