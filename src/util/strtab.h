/*
 * strtab.h - a table of distinct strings numbered in order of first use:
 * the string tables of the pprof profile and of the report page.
 */
#ifndef MT_STRTAB_H
#define MT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"

typedef struct strtab {
    char **v;                   /* the strings (not copied: the caller's) */
    size_t n, cap;
    u64map ids;                 /* hash_str (probed +1) -> index */
} strtab;

/* The index of s, added if new; -1 when out of memory. s must outlive t. */
int64_t strtab_id(strtab *t, const char *s);

void strtab_free(strtab *t);

#endif /* MT_STRTAB_H */
