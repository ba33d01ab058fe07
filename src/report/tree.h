/*
 * tree.h - what the HTML report draws, aggregated from a per-stack profile:
 * the call tree of frames (a trie of the stacks' frame paths, caller first,
 * with each node's own samples allocated / live at peak / live at end),
 * pruned to the nodes the page can show, the samples allocated per time bin
 * of the nodes a time window can show, and the allocation sites (the
 * innermost frame's function, as `memtrace top` groups them) with their
 * samples per time bin.
 *
 * Time bins of the tree: a node is "binned" when its subtree holds at least
 * 1/RP_BIN_PRUNE of the samples allocated in some bin (so are its
 * ancestors: a subtree holds at least what any subtree below it holds).
 * Each binned node keeps, per bin, the samples of its subtree less those
 * of its binned children (its own samples and those of the subtrees below
 * it that are not binned): its remainder. A binned node's subtree in a
 * window is then its remainder plus its binned children's subtrees, exactly;
 * a node that is not binned holds less than 1/RP_BIN_PRUNE of every bin,
 * so of every window, and is left out of window views. Most remainders are
 * zero (a chain of single callers has all its samples in its last node),
 * and only the nonzero ones are written.
 */
#ifndef MT_REPORT_TREE_H
#define MT_REPORT_TREE_H

#include "report/frames.h"
#include "report/profile.h"
#include "util/idtrie.h"

/* A node's subtree below 1/RP_PRUNE of each total (allocated, live at
 * peak, live at end) and below 1/RP_BIN_PRUNE of the samples allocated in
 * every time bin is folded into the node's parent's own samples. */
#define RP_PRUNE 10000
/* A node whose subtree holds at least 1/RP_BIN_PRUNE of the samples
 * allocated in some time bin has time bins (see above): the flame graph is
 * 1200 pixels wide, so the others are under a pixel in every window. */
#define RP_BIN_PRUNE 1200

/* A node of the call tree: its frame and parent are the trie's (node i is
 * trie.nodes[i], key = frame id); children come after their parents. */
typedef struct rp_node {
    int64_t cum[3];                   /* allocated, live at peak, at end, of */
                                      /* the subtree                         */
    uint32_t keep;                    /* index among kept nodes + 1, or 0    */
    uint32_t binned;                  /* index among binned nodes + 1, or 0  */
} rp_node;

typedef struct rp_site {
    char *name;
    uint32_t frame;                   /* UINT32_MAX: no frame                */
    int64_t v[3];                     /* allocated, live at peak, at end     */
    int64_t count;                    /* sampled allocations                 */
} rp_site;

/* A binned node's remainder in one bin. Kept sparse: most of the binned
 * nodes have samples in a few bins only (the corpus's ocamlopt trace:
 * 265 779 binned nodes, 64 bins, 67 258 nonzero pairs; a dense array took
 * 136 MB). */
typedef struct rp_node_bin {
    uint32_t node, bin;               /* binned index, bin                   */
    int64_t n;
} rp_node_bin;

typedef struct rp_tree {
    rp_frames frames;
    idtrie trie;                      /* the frame paths                     */
    rp_node *nodes;                   /* by trie node                        */
    size_t nnodes, nkept;
    int64_t (*self)[3];               /* by kept index: the node's own       */
                                      /* samples and its pruned subtrees'    */
    rp_site *sites;
    size_t nsites, sites_cap;
    u64map site_ids;                  /* name hash (probed +1) -> site       */
    rp_node_bin *node_bins;           /* the nonzero remainders (above), by  */
    size_t nnode_bins;                /* binned index, then bin              */
    size_t *node_bins_at;             /* binned index -> its first entry     */
                                      /* there (nbinned + 1 of them)         */
    uint32_t *binned_nodes;           /* binned index -> kept index          */
    size_t nbinned, nbins;
    int64_t *site_bins;               /* [site * nbins + bin] samples        */
} rp_tree;

/* Build t from p (frames without those --hide names). 0, or -1 unknown
 * code / out of memory. */
int rp_tree_build(rp_tree *t, rp_profile *p, const mt_filter *f, size_t nbins);
/* Index of the site named name, or -1. */
int64_t rp_tree_site_find(const rp_tree *t, const char *name);
void rp_tree_free(rp_tree *t);

#endif /* MT_REPORT_TREE_H */
