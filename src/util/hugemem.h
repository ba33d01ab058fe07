/*
 * hugemem.h - zeroed memory for big tables that are probed at random (the
 * live-object ring, hash tables of distinct stacks): asked for in
 * transparent huge pages, so a probe does not also miss the TLB.
 */
#ifndef MT_HUGEMEM_H
#define MT_HUGEMEM_H

#include <stddef.h>

/* n zeroed bytes (free with free()); NULL when out of memory. Below 2 MiB
 * this is calloc. */
void *huge_calloc(size_t n);

#endif /* MT_HUGEMEM_H */
