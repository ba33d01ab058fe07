/*
 * stackset.h - a set of distinct backtraces (arrays of 64-bit codes, caller
 * first), each named by a dense id 0, 1, 2, ... in order of first use. For
 * the commands that keep every distinct backtrace (the exporters) or an
 * object's backtrace until the object is decided (hotspots with filters).
 * Zero-initialise; stackset_free.
 *
 * The backtraces are kept as a trie of their prefixes: a node per distinct
 * (prefix, code), so memory grows with the frames that differ, not with the
 * frames stored. Stored whole, the corpus's 2 MB ocamlopt trace (84 270
 * allocations, each with a backtrace of its own, 116 frames deep on
 * average) took 9.8 M codes, 134 MB; as a trie, 0.53 M nodes.
 *
 * Adding walks the trie from the longest prefix shared with the previous
 * stack added (a run of compares in order, or known: stackset_add_shared),
 * then looks up the remaining frames one by one; each node remembers the
 * child last looked up from it, which answers most of those lookups
 * without the hash table.
 */
#ifndef MT_STACKSET_H
#define MT_STACKSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct stackset_node {
    uint64_t code;
    uint32_t parent;            /* node 0 is the root: the empty prefix */
    uint32_t depth;             /* codes from the root to this node      */
    uint32_t stack;             /* the id + 1 of the stack ending here   */
    uint32_t memo[2];           /* the two children last looked up       */
} stackset_node;

typedef struct stackset {
    stackset_node *nodes;       /* [0] is the root once anything is added */
    size_t nnodes, nodes_cap;
    uint64_t *slots;            /* open addressing on (parent, code): a    */
    size_t slots_cap;           /* hash tag << 32 | node id, 0 = empty     */
    uint64_t seed[2];           /* of their hash: set with the first slots */
    uint32_t *term;             /* by stack id: the node it ends at        */
    size_t nstacks, term_cap;
    uint32_t *path;             /* the nodes of the last stack added:      */
    size_t path_len, path_cap;  /* path[i] holds its first i + 1 codes     */
    uint64_t *last;             /* ... and its codes (path_cap of them)    */
    uint64_t *scratch;          /* stackset_get's output (path_cap codes): */
    uint32_t held;              /* the codes of this node's stack (0: none) */
} stackset;

/* The id of codes[0..len), added if new: 0, or -1 when out of memory (or
 * beyond 2^32 - 2 stacks or nodes). */
int stackset_add(stackset *s, const uint64_t *codes, size_t len, uint32_t *id);

/* The same, when the caller knows that codes[0..shared) are the first
 * codes of the last stack added (or all of them, when it has fewer): those
 * are not compared again, which makes an allocation's add cost its new
 * frames, not its depth (a trace of deep recursion: 100 000 allocations
 * 100 000 frames deep took 3.5 s to export by comparing). A wrong `shared`
 * gives a wrong id, so callers pass it only when they know (as
 * mt_scan.shared_prefix does, in analysis.h). */
int stackset_add_shared(stackset *s, const uint64_t *codes, size_t len, size_t shared,
                        uint32_t *id);

/* The number of codes of stack id. */
static inline size_t stackset_len(const stackset *s, uint32_t id)
{
    return s->nodes[s->term[id]].depth;
}

/* The codes of stack id, caller first; *len gets their number. The array is
 * the set's own: valid until the next stackset_get or stackset_add. Only
 * the codes that differ from the stack the last call gave are written, so
 * a run of calls costs the frames that change, not the depth. */
const uint64_t *stackset_get(stackset *s, uint32_t id, size_t *len);

/* The same, and *shared gets how many leading codes the stack shares with
 * the one the previous call gave (0 for the first call). */
const uint64_t *stackset_get_shared(stackset *s, uint32_t id, size_t *len, size_t *shared);

/* Map each distinct prefix to a node of another trie (the exporters'
 * trees of frames or locations), once per prefix rather than once per
 * stack and frame: map[node] is the other trie's node for the prefix that
 * ends at this set's node (UINT32_MAX: not mapped yet; map[0], the empty
 * prefix, the other's root), one entry for each of the set's nodes
 * (stackset_nodes). For stack id, the nodes not mapped yet are mapped from
 * the root's side by fn(ctx, parent's mapped node, code), which returns
 * the node for code below it or -1. *buf (grown as needed, *cap its size)
 * holds the nodes on the way. Returns the mapped node of id, or -1 (fn's
 * failure or out of memory). */
int64_t stackset_map(const stackset *s, uint32_t id, uint32_t *map,
                     int64_t (*fn)(void *ctx, uint32_t parent, uint64_t code), void *ctx,
                     uint32_t **buf, size_t *cap);

/* The number of nodes (distinct prefixes, the empty one included). */
static inline size_t stackset_nodes(const stackset *s)
{
    return s->nnodes;
}

void stackset_free(stackset *s);

#endif /* MT_STACKSET_H */
