/*
 * strtab.c - distinct strings numbered in order of first use; see strtab.h.
 */
#include "util/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

int64_t strtab_id(strtab *t, const char *s)
{
    uint64_t h = hash_str(s, strlen(s));
    for (;; h++) {
        uint64_t *v = u64map_get(&t->ids, h);
        if (!v)
            break;
        if (strcmp(t->v[*v], s) == 0)
            return (int64_t)*v;
    }
    if (grow_array(&t->v, &t->cap, t->n + 1, sizeof *t->v) ||
        u64map_put(&t->ids, h, t->n))
        return -1;
    t->v[t->n] = (char *)s;
    return (int64_t)t->n++;
}

void strtab_free(strtab *t)
{
    free(t->v);
    u64map_free(&t->ids);
    memset(t, 0, sizeof *t);
}
