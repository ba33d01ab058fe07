/*
 * grow.c - growing arrays; see grow.h.
 */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Make the array at *pp (any object pointer type, passed as its address)
 * hold at least need elements. 0, or -1 when out of memory. The pointer is
 * copied in and out with memcpy, so no T ** is accessed as void **. */
int grow_array_slow(void *pp, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem)
        return -1;
    void *p;
    memcpy(&p, pp, sizeof p);
    void *q = realloc(p, c * elem);
    if (!q)
        return -1;
    memcpy(pp, &q, sizeof q);
    *cap = c;
    return 0;
}
