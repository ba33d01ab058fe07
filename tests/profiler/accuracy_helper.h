/*
 * accuracy_helper.h - a function the accuracy program calls and the compiler
 * inlines (always_inline, -O2): its allocation must be reported at this
 * file's line and its caller's line in accuracy.c.
 */
#ifndef ACCURACY_HELPER_H
#define ACCURACY_HELPER_H
#include <stdlib.h>

static inline __attribute__((always_inline)) char *make_block(size_t n)
{
    char *p = malloc(n); /* SITE_D_INNER */
    if (p)
        p[0] = 2;
    return p;
}
#endif
