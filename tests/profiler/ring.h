/*
 * ring.h - the allocation loop of the profiler's test programs that run
 * until stopped (cancel.c, sigexit.c): one step frees a random block of a
 * ring of 64 and allocates a new one of 16 B to 2 KiB in its place.
 */
#ifndef MT_TEST_RING_H
#define MT_TEST_RING_H

#include <stdlib.h>
#include <string.h>

/* One step with random state s; returns the next state. */
static inline unsigned ring_step(void **ring, unsigned s)
{
    s = s * 1103515245u + 12345u;
    unsigned k = (s >> 24) & 63;
    free(ring[k]);
    ring[k] = malloc(16 + (s >> 8) % 2000);
    if (ring[k])
        memset(ring[k], 0, 16);
    return s;
}

#endif
