/*
 * stackset.h - a set of distinct backtraces (arrays of 64-bit codes), each
 * stored once and named by a dense id 0, 1, 2, ... in order of first use.
 * For the commands that must keep an object's backtrace until the object
 * is decided (hotspots with filters). Zero-initialise; stackset_free.
 */
#ifndef MT_STACKSET_H
#define MT_STACKSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct stackset {
    uint64_t *codes;            /* every stack's codes, back to back */
    size_t ncodes, codes_cap;
    struct stackset_rec {
        uint64_t hash;
        size_t off;
        uint32_t len;
    } *recs;                    /* by id */
    size_t nrecs, recs_cap;
    uint32_t *slots;            /* open addressing: id + 1, 0 = empty */
    size_t slots_cap;
} stackset;

/* The id of codes[0..len), added if new: 0, or -1 when out of memory (or
 * beyond 2^32 - 2 stacks or 2^32 - 1 codes in one stack). */
int stackset_add(stackset *s, const uint64_t *codes, size_t len, uint32_t *id);

/* The codes of stack id (valid until the next stackset_add). */
static inline const uint64_t *stackset_get(const stackset *s, uint32_t id,
                                           size_t *len)
{
    *len = s->recs[id].len;
    return s->codes + s->recs[id].off;
}

void stackset_free(stackset *s);

#endif /* MT_STACKSET_H */
