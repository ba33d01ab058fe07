/*
 * substrset.h - a set of strings looked for at once as substrings of a text
 * (Aho-Corasick): whether a function name contains any of --hide's names,
 * in one pass over the name whatever their number. (A strstr per name per
 * function took 16 s for 10 000 names on 100 000 functions.) Zero-
 * initialise; substrset_free.
 */
#ifndef MT_SUBSTRSET_H
#define MT_SUBSTRSET_H

#include <stddef.h>
#include <stdint.h>

#include "util/u64map.h"

typedef struct substrset {
    u64map next;                /* node << 8 | byte -> the trie's child    */
    uint32_t *fail;             /* by node: its longest proper suffix that  */
                                /* is a node                                */
    unsigned char *hit;         /* by node: a string ends here or at its    */
                                /* suffixes                                 */
    uint32_t *parent;           /* by node (for the build)                  */
    unsigned char *byte;
    size_t n, cap;              /* nodes; [0] is the root                   */
} substrset;

/* Make s the set of the n strings v (an empty one is in every text). 0, or
 * -1 when out of memory (s is then empty: free it all the same). */
int substrset_build(substrset *s, char *const *v, size_t n);

/* Whether any string of s occurs in t[0..len). */
int substrset_find(const substrset *s, const char *t, size_t len);

void substrset_free(substrset *s);

#endif /* MT_SUBSTRSET_H */
