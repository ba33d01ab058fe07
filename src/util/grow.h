/*
 * grow.h - growing arrays, for the tools (CLI and analysis).
 */
#ifndef MT_GROW_H
#define MT_GROW_H

#include <stddef.h>

/* Grow the array whose address is pp (e.g. &items, any element type) so it
 * holds at least need elements of elem bytes; *cap is its capacity (0 for
 * a NULL array). Returns 0, or -1 when out of memory (the array is kept). */
int grow_array_slow(void *pp, size_t *cap, size_t need, size_t elem);

/* Inline so that the common case (room already there) costs a compare on
 * the tools' per-event paths. */
static inline int grow_array(void *pp, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : grow_array_slow(pp, cap, need, elem);
}

#endif /* MT_GROW_H */
