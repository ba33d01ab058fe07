/*
 * hash.h - FNV-1a, the string hash of the tools' tables (names, sites).
 */
#ifndef MT_HASH_H
#define MT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV_OFFSET 1469598103934665603ULL

/* Continue the FNV-1a hash h over n bytes at p. */
static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

#endif /* MT_HASH_H */
