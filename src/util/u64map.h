/*
 * u64map.h - hash map from uint64_t keys to uint64_t values, used by the
 * commands for live objects (id -> data) and per-code tables. Zero-initialise
 * a u64map before use; u64map_free releases it.
 */
#ifndef MT_U64MAP_H
#define MT_U64MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct u64map {
    uint64_t *keys;
    uint64_t *vals;
    unsigned char *used;
    size_t cap, n;
    uint64_t seed;              /* random: set when the table is made      */
} u64map;

/* Pointer to the value of k (valid until the next put/del), or NULL. */
uint64_t *u64map_get(const u64map *m, uint64_t k);

/* Insert or overwrite; 0, or -1 when out of memory. */
int u64map_put(u64map *m, uint64_t k, uint64_t v);

/* Remove k; 1 if it was present (its value in *v), else 0. */
int u64map_del(u64map *m, uint64_t k, uint64_t *v);

void u64map_free(u64map *m);

#endif /* MT_U64MAP_H */
