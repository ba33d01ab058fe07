/*
 * loctable.c - the reader's location table and string interning (spec 5.6,
 * 9.5). Records live in an arena so pointers handed out stay valid for the
 * reader's lifetime.
 */
#include "trace/loctable.h"

#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

struct mt_arena_chunk {
    mt_arena_chunk *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK 65536

static void *arena_alloc(mt_loctable *t, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    mt_arena_chunk *c = t->arena;
    if (!c || c->size - c->used < n) {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = malloc(sizeof *c + size);
        if (!c)
            return NULL;
        c->next = t->arena;
        c->used = 0;
        c->size = size;
        t->arena = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

void mt_loctable_init(mt_loctable *t)
{
    memset(t, 0, sizeof *t);
    t->key[0] = hash_random(&t->key[0]);
    t->key[1] = hash_random(&t->key[1]);
}

void mt_loctable_free(mt_loctable *t)
{
    mt_arena_chunk *c = t->arena;
    while (c) {
        mt_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(t->slots);
    free(t->strs);
    memset(t, 0, sizeof *t);
}

static int grow_strs(mt_loctable *t)
{
    size_t n = t->nstrs ? t->nstrs * 2 : 1024;
    const char **s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->nstrs; i++) {
        const char *v = t->strs[i];
        if (!v)
            continue;
        size_t j = siphash24(t->key, v, strlen(v)) & (n - 1);
        while (s[j])
            j = (j + 1) & (n - 1);
        s[j] = v;
    }
    free(t->strs);
    t->strs = s;
    t->nstrs = n;
    return 0;
}

const char *mt_loctable_intern(mt_loctable *t, const char *s, size_t len)
{
    if (t->strs_used * 2 >= t->nstrs && grow_strs(t))
        return NULL;
    size_t j = siphash24(t->key, s, len) & (t->nstrs - 1);
    for (const char *v; (v = t->strs[j]) != NULL; j = (j + 1) & (t->nstrs - 1))
        if (strncmp(v, s, len) == 0 && v[len] == 0)
            return v;
    char *copy = arena_alloc(t, len + 1);
    if (!copy)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = 0;
    t->strs[j] = copy;
    t->strs_used++;
    return copy;
}

static struct mt_locentry *find_slot(const mt_loctable *t, uint64_t code)
{
    size_t mask = t->nslots - 1;
    size_t j = hash_u64(code, t->key[0]) & mask;
    while (t->slots[j].used && t->slots[j].code != code)
        j = (j + 1) & mask;
    return &t->slots[j];
}

static int grow_slots(mt_loctable *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 4096;
    struct mt_locentry *old = t->slots;
    size_t oldn = t->nslots;
    t->slots = calloc(n, sizeof *t->slots);
    if (!t->slots) {
        t->slots = old;
        return -1;
    }
    t->nslots = n;
    for (size_t i = 0; i < oldn; i++)
        if (old[i].used)
            *find_slot(t, old[i].code) = old[i];
    free(old);
    return 0;
}

static int same_list(const mt_location *a, const mt_location *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* strings are interned: equal strings have equal pointers */
        if (a[i].filename != b[i].filename || a[i].function != b[i].function ||
            a[i].line != b[i].line || a[i].start_char != b[i].start_char ||
            a[i].end_char != b[i].end_char)
            return 0;
    }
    return 1;
}

int mt_loctable_define(mt_loctable *t, uint64_t code, const mt_location *locs,
                       size_t n)
{
    if ((t->used + 1) * 2 > t->nslots && grow_slots(t))
        return -2;
    struct mt_locentry *e = find_slot(t, code);
    if (e->used)
        return e->n == n && same_list(e->locs, locs, n) ? 1 : -1;
    mt_location *copy = NULL;
    if (n) {
        copy = arena_alloc(t, n * sizeof *copy);
        if (!copy)
            return -2;
        memcpy(copy, locs, n * sizeof *copy);
    }
    e->code = code;
    e->locs = copy;
    e->n = (uint32_t)n;
    e->used = 1;
    t->used++;
    return 0;
}

int mt_loctable_find(const mt_loctable *t, uint64_t code,
                     const mt_location **locs, size_t *n)
{
    if (!t->nslots)
        return -1;
    const struct mt_locentry *e = find_slot(t, code);
    if (!e->used)
        return -1;
    *locs = e->locs;
    *n = e->n;
    return 0;
}
