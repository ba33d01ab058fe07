/*
 * loctable.h - the reader's location table: location code -> interned list
 * of locations, plus the string interning and arena memory behind it. Memory
 * grows with the number of distinct codes and strings, never with file size.
 */
#ifndef MT_LOCTABLE_H
#define MT_LOCTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/memtrace.h"

typedef struct mt_arena_chunk mt_arena_chunk;

typedef struct mt_loctable {
    /* code -> entry, open addressing */
    struct mt_locentry *slots;
    size_t nslots, used;
    /* interned strings, open addressing over pointers */
    const char **strs;
    size_t nstrs, strs_used;
    mt_arena_chunk *arena;
    uint64_t key[2];            /* the hashes' random key (util/hash.h) */
} mt_loctable;

struct mt_locentry {
    uint64_t code;
    const mt_location *locs;
    uint32_t n;
    uint32_t used;
};

void mt_loctable_init(mt_loctable *t);
void mt_loctable_free(mt_loctable *t);

/* Intern a string of len bytes (no NUL inside). NULL when out of memory. */
const char *mt_loctable_intern(mt_loctable *t, const char *s, size_t len);

/* Define code with n locations (strings already interned). Returns 0 when
 * new, 1 when already defined with an equal list, -1 when defined with a
 * different list, -2 when out of memory. */
int mt_loctable_define(mt_loctable *t, uint64_t code, const mt_location *locs,
                       size_t n);

/* Look up a code: 0 and *locs and *n, or -1 when never defined. */
int mt_loctable_find(const mt_loctable *t, uint64_t code,
                     const mt_location **locs, size_t *n);

#endif /* MT_LOCTABLE_H */
