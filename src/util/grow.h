/*
 * grow.h - growing arrays, for the tools (CLI and analysis).
 */
#ifndef MT_GROW_H
#define MT_GROW_H

#include <stddef.h>

/* Grow the array whose address is pp (e.g. &items, any element type) so it
 * holds at least need elements of elem bytes; *cap is its capacity (0 for
 * a NULL array). Returns 0, or -1 when out of memory (the array is kept). */
int grow_array(void *pp, size_t *cap, size_t need, size_t elem);

#endif /* MT_GROW_H */
