/*
 * idtrie.h - a trie of 32-bit keys whose nodes are dense ids 0, 1, 2, ...
 * (0: the root), for the exporters' trees: the report's call tree of frame
 * ids and pprof's distinct location lists. Each is built from the
 * backtraces' own trie (util/stackset), once per backtrace node, so it
 * holds what the trace's distinct stacks hold, and its nodes carry no
 * payload: callers keep theirs in arrays by node id. Zero-initialise;
 * idtrie_free.
 *
 * Memory: 8 bytes a node and a 4-byte slot of the table that finds a
 * (parent, key)'s child, at a load of 1/4 to 1/2: 16-24 bytes a node. (It
 * replaced a u64map from (parent, key) to node of ~50 bytes a node.)
 */
#ifndef MT_IDTRIE_H
#define MT_IDTRIE_H

#include <stddef.h>
#include <stdint.h>

typedef struct idtrie_node {
    uint32_t parent, key;       /* the root's are 0 */
} idtrie_node;

typedef struct idtrie {
    idtrie_node *nodes;         /* [0] is the root once anything is added */
    size_t n, cap;
    uint32_t *slots;            /* open addressing: a node id, 0 = empty   */
    size_t slots_cap;
    uint64_t seed;              /* random: set with the first slots        */
} idtrie;

/* The child of parent (a node id) for key, made if new: its id, or -1 when
 * out of memory (or beyond 2^32 - 1 nodes). The root exists after the
 * first call; call idtrie_init for an empty trie with just its root. */
int64_t idtrie_child(idtrie *t, uint32_t parent, uint32_t key);

/* Make the root: 0, or -1 when out of memory. */
int idtrie_init(idtrie *t);

void idtrie_free(idtrie *t);

#endif /* MT_IDTRIE_H */
