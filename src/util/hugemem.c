/*
 * hugemem.c - zeroed memory in transparent huge pages; see hugemem.h.
 */
#include "util/hugemem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *huge_calloc(size_t n)
{
    const size_t huge = (size_t)2 << 20;
    if (n < huge)
        return calloc(1, n);
    void *p = NULL;
    if (posix_memalign(&p, huge, n))
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE);       /* a hint: failure is fine */
#endif
    memset(p, 0, n);
    return p;
}
