/*
 * cmd_flamegraph.c - `memtrace flamegraph [OPTIONS] TRACE`: folded stacks
 * ("a;b;c COUNT" lines) for flamegraph.pl, inferno or speedscope, in the
 * format of the reference flamegraph tool (spec 11.3).
 *
 * Each allocation's backtrace becomes a path of frame names, caller first:
 * every location of every code contributes its function name (codes with no
 * location contribute nothing), and only the first occurrence of each name
 * is kept (this also collapses runs of equal names, and folds recursion into
 * its outermost call). The path's node in a trie of names gets the
 * allocation's sample count. The trie is printed depth first, children in
 * byte order of their names; a node is printed when its count is positive
 * and its path has at least two names (the reference never prints paths of
 * one name, so their samples are lost; we keep that for identical output).
 *
 * Counts are OCaml ints in the reference: sums wrap at 63 bits, and so do
 * ours (only visible on deliberately absurd traces such as synth-abuse).
 *
 * Memory: the trie (distinct paths), the names, one entry per location code
 * and, with --live-at-end, one entry per live object. Nothing per event.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/ocaml_int.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "util/grow.h"
#include "util/hash.h"
#include "util/hugemem.h"
#include "util/u64map.h"

void usage_flamegraph(FILE *out)
{
    fprintf(out,
            "Usage: memtrace flamegraph [OPTIONS] TRACE\n"
            "\n"
            "Summarise the sampled allocations of TRACE as folded stacks, the input\n"
            "format of flamegraph.pl, inferno-flamegraph and speedscope:\n"
            "  memtrace flamegraph prog.ctf | flamegraph.pl > prog.svg\n"
            "Without options the output is byte for byte that of the reference\n"
            "memtrace flamegraph tool.\n"
            "\n"
            "Output: one line per distinct stack, 'FRAME1;FRAME2;...;FRAMEN WEIGHT',\n"
            "outermost caller first. Each frame is a function name (one per inlined\n"
            "location; codes without a location are left out). Only the first\n"
            "occurrence of a name in a stack is kept, so recursion is folded into its\n"
            "outermost call. WEIGHT is the number of samples allocated with exactly\n"
            "that stack. Lines appear in depth-first order, siblings sorted bytewise;\n"
            "stacks of a single frame are not printed (as in the reference tool).\n"
            "\n"
            "Options:\n"
            "  --bytes         weight in bytes: samples / sample rate * word size\n"
            "                  (the trace's word size, 8 bytes on 64-bit), rounded\n"
            "  --lines         frames as 'FUNCTION (FILE:LINE)' instead of FUNCTION\n"
            "  --inverted      callee first (allocation site at the root): for icicle\n"
            "                  graphs and 'who allocates' views\n"
            "  --live-at-end   count only allocations still live at the end of the\n"
            "                  trace (never collected): what a leak would retain\n"
            "                  (the same as --live-at end)\n"
            "  -h, --help      show this help\n"
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "With filters, each object is counted when the filters' answer is known\n"
            "(at its collection or the end of the trace); --hide drops matching\n"
            "frames from the stacks; --live-at peak reads TRACE twice (not '-').\n"
            "Without filters the output is the reference tool's.\n"
            "\n"
            "Collections of unknown or already collected objects are ignored (the\n"
            "reference tool stops with an assertion failure). Skipped packets are\n"
            "reported on standard error. TRACE '-' reads standard input.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace, unknown location code or\n"
            "I/O error (nothing is printed), 2 bad usage.\n");
}

/* ---- state ------------------------------------------------------------- */

typedef struct name_rec {
    uint32_t off, len;          /* into fg.text */
} name_rec;

typedef struct node {
    int64_t count;              /* samples, 63-bit wrapping sum */
    uint32_t name;
    uint32_t first_child;       /* 0 = none (node 0 is the root) */
    uint32_t next_sibling;
} node;

/* A trie edge: the child of (parent, name). child 0 marks an empty slot
 * (node 0 is the root, never a child). One slot is one cache line access. */
typedef struct edge {
    uint64_t key;               /* parent << 32 | name */
    uint32_t child;
    uint32_t pad;
} edge;

/* A slot of the table of distinct backtraces: 96 bits of the backtrace's
 * hash and its index (+ 1; 0 = empty) into the dense per-stack arrays.
 * 16 bytes, so that 4 slots share a cache line. */
typedef struct stack_slot {
    uint64_t h0;
    uint32_t h1;
    uint32_t idx;
} stack_slot;

/* An allocation whose stack entry is probed later (see on_alloc): its
 * hash, samples, and its codes as the difference to the allocation before
 * it: that one's first p codes, then suf[0 .. len - p). */
#define PEND_DEPTH 8

typedef struct pend_alloc {
    uint64_t h[2];
    int64_t ns;
    size_t p, len;
    uint64_t off;               /* mt_reader_offset just past it */
    uint64_t *suf;
    size_t suf_cap;
} pend_alloc;

typedef struct fg {
    mt_reader *r;
    int opt_lines, opt_inverted, opt_live;
    /* interned frame names */
    char *text;
    size_t text_len, text_cap;
    name_rec *names;
    size_t nnames, names_cap;
    uint32_t *name_slots;       /* open addressing: name id + 1, 0 = empty */
    size_t name_slots_cap;
    uint8_t *seen;              /* per name: 1 while on the current path */
    /* code -> (offset << 32 | count) into code_names */
    u64map codes;
    uint32_t *code_names;
    size_t code_names_len, code_names_cap;
    /* the trie */
    node *nodes;
    size_t nnodes, nodes_cap;
    edge *edges;                /* open addressing on parent << 32 | name */
    size_t edges_cap;           /* a power of two; nnodes - 1 edges in it  */
    /* --live-at-end: object id -> trie node, object id -> nsamples */
    u64map live_node, live_samples;
    /* v3 only: ids collected before their allocation was read. Domains
     * write their packets independently, so a collect may come before the
     * allocation it refers to (spec 7.3); v2 readers reject that. */
    u64map early_collect;
    int v3;
    /* distinct backtraces (see stack_of) */
    stack_slot *slots;
    size_t slots_cap;           /* a power of two, at least 2 * nstacks */
    uint32_t *st_node;          /* per distinct backtrace: its trie node   */
    int64_t *st_count;          /* and (no filters) its samples, wrapping  */
    size_t nstacks, st_node_cap, st_count_cap;
    uint64_t *prev_codes;       /* the previous backtrace                    */
    uint64_t (*prefix_hash)[2]; /* hashes of prev_codes[0..i]                */
    size_t prev_len, prev_cap, prefix_hash_cap;
    /* The frames the next stack_hash's backtrace is known to share with
     * prev_codes (the rest are compared): without filters every allocation
     * reaches it in order, so ev->common_prefix when the previous one was
     * of the same domain (last_domain); with filters mt_scan.shared_prefix */
    size_t known;
    int last_domain;
    /* allocations counted PEND_DEPTH allocations later (on_alloc) */
    pend_alloc pend[PEND_DEPTH];
    unsigned pend_first, npend;
    uint64_t *base;             /* the codes of the last one counted        */
    size_t base_cap;
    /* the names of the last new backtrace's path (marked in seen), and per
     * code of it (pc_codes): the names so far, the trie node so far */
    uint32_t *path;
    size_t path_cap;
    uint64_t *pc_codes;
    uint32_t *pc_names, *pc_nodes;
    size_t pc_len, pc_names_len, pc_cap, pc_names_cap, pc_nodes_cap;
    /* filters (the scan engine's path) */
    const mt_filter *filter;
    uint8_t *hidden;            /* per name: 0 unknown, 1 shown, 2 hidden */
    size_t hidden_len, hidden_cap;
    /* error report */
    int err;                    /* 0, -1 unknown code, -2 out of memory */
    uint64_t bad_code, bad_off; /* the unknown code, and where (its alloc's end) */
    uint64_t seed[2];           /* of the edges' and the backtraces' hashes */
} fg;

static int name_slots_grow(fg *g)
{
    size_t cap = g->name_slots_cap ? g->name_slots_cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < g->nnames; i++) {
        size_t j = hash_str(g->text + g->names[i].off, g->names[i].len) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i + 1;
    }
    free(g->name_slots);
    g->name_slots = s;
    g->name_slots_cap = cap;
    return 0;
}

/* Id of the name s[0..n), interned on first use; -1 when out of memory. */
static int64_t intern(fg *g, const char *s, size_t n)
{
    if ((g->nnames + 1) * 2 > g->name_slots_cap && name_slots_grow(g))
        return -1;
    size_t mask = g->name_slots_cap - 1;
    size_t j = hash_str(s, n) & mask;
    for (; g->name_slots[j]; j = (j + 1) & mask) {
        const name_rec *nr = &g->names[g->name_slots[j] - 1];
        if (nr->len == n && (n == 0 || memcmp(g->text + nr->off, s, n) == 0))
            return g->name_slots[j] - 1;
    }
    if (g->text_len + n > UINT32_MAX || g->nnames >= UINT32_MAX - 1)
        return -1;
    if (g->nnames == g->names_cap) {
        size_t cap = g->names_cap ? g->names_cap * 2 : 256;
        name_rec *nr = realloc(g->names, cap * sizeof *nr);
        if (!nr)
            return -1;
        g->names = nr;
        uint8_t *sn = realloc(g->seen, cap * sizeof *sn);
        if (!sn)
            return -1;
        g->seen = sn;
        g->names_cap = cap;
    }
    /* (a byte more than needed: text is never NULL once a name exists, even
     * if every name is empty, so text + off is always defined) */
    if (grow_array(&g->text, &g->text_cap, g->text_len + n + 1, 1))
        return -1;
    if (n)
        memcpy(g->text + g->text_len, s, n);
    size_t id = g->nnames++;
    g->names[id].off = (uint32_t)g->text_len;
    g->names[id].len = (uint32_t)n;
    g->seen[id] = 0;
    g->text_len += n;
    g->name_slots[j] = (uint32_t)id + 1;
    return (int64_t)id;
}

/* The frame names of a code: *first and *count into g->code_names.
 * Returns 0, -1 for a code no location event defined, -2 out of memory. */
static int code_frames(fg *g, uint64_t code, size_t *first, size_t *count)
{
    uint64_t *v = u64map_get(&g->codes, code);
    if (v) {
        *first = (size_t)(*v >> 32);
        *count = (size_t)(*v & 0xffffffffu);
        return 0;
    }
    const mt_location *locs;
    size_t n;
    if (mt_reader_locations(g->r, code, &locs, &n) != MT_OK)
        return -1;
    if (g->code_names_len + n > UINT32_MAX ||
        grow_array(&g->code_names, &g->code_names_cap, g->code_names_len + n,
             sizeof *g->code_names))
        return -2;
    size_t start = g->code_names_len;
    char *buf = NULL;
    size_t buf_cap = 0;
    for (size_t i = 0; i < n; i++) {
        const char *s = locs[i].function;
        size_t len = strlen(s);
        if (g->opt_lines) {
            size_t fl = strlen(locs[i].filename);
            if (grow_array(&buf, &buf_cap, len + fl + 32, 1)) {
                free(buf);
                return -2;
            }
            len = (size_t)snprintf(buf, buf_cap, "%s (%s:%d)", s,
                                   locs[i].filename, locs[i].line);
            s = buf;
        }
        int64_t id = intern(g, s, len);
        if (id < 0) {
            free(buf);
            return -2;
        }
        g->code_names[g->code_names_len++] = (uint32_t)id;
    }
    free(buf);
    if (u64map_put(&g->codes, code, (uint64_t)start << 32 | n))
        return -2;
    *first = start;
    *count = n;
    return 0;
}

static int edges_grow(fg *g)
{
    size_t cap = g->edges_cap ? g->edges_cap * 2 : 4096;
    edge *t = huge_calloc(cap * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < g->edges_cap; i++) {
        if (!g->edges[i].child)
            continue;
        size_t j = hash_u64(g->edges[i].key, g->seed[0]) & (cap - 1);
        while (t[j].child)
            j = (j + 1) & (cap - 1);
        t[j] = g->edges[i];
    }
    free(g->edges);
    g->edges = t;
    g->edges_cap = cap;
    return 0;
}

/* Child of parent named name, created on first use; 0 when out of memory. */
static uint32_t child(fg *g, uint32_t parent, uint32_t name)
{
    uint64_t key = (uint64_t)parent << 32 | name;
    if (g->nnodes * 2 > g->edges_cap && edges_grow(g))
        return 0;
    size_t mask = g->edges_cap - 1, j = hash_u64(key, g->seed[0]) & mask;
    for (; g->edges[j].child; j = (j + 1) & mask)
        if (g->edges[j].key == key)
            return g->edges[j].child;
    if (g->nnodes >= UINT32_MAX ||
        grow_array(&g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof *g->nodes))
        return 0;
    uint32_t c = (uint32_t)g->nnodes++;
    node *nd = &g->nodes[c];
    nd->count = 0;
    nd->name = name;
    nd->first_child = 0;
    nd->next_sibling = g->nodes[parent].first_child;
    g->nodes[parent].first_child = c;
    g->edges[j].key = key;
    g->edges[j].child = c;
    return c;
}

/* Is frame name nm hidden by --hide? (cached per name) 1, 0, or -1 when
 * out of memory. */
static int name_hidden(fg *g, uint32_t nm)
{
    if (!g->filter || !g->filter->nhide)
        return 0;
    if (grow_array(&g->hidden, &g->hidden_cap, (size_t)nm + 1, 1))
        return -1;
    for (size_t i = g->hidden_len; i <= nm; i++)
        g->hidden[i] = 0;               /* 0: not looked at yet */
    if (g->hidden_len <= nm)
        g->hidden_len = (size_t)nm + 1;
    if (!g->hidden[nm]) {
        const char *t = g->text + g->names[nm].off;
        size_t len = g->names[nm].len;
        g->hidden[nm] = 1;
        if (mt_filter_hides_n(g->filter, t, len))
            g->hidden[nm] = 2;
    }
    return g->hidden[nm] == 2;
}

/* The trie node of the names of bt[0..n) (created if new): 0, -1 unknown
 * code, -2 out of memory. Names caller first, the first occurrence of each
 * only.
 *
 * New backtraces mostly extend or branch off the previous new one, and the
 * node after codes[0..i) depends on those codes only; so the walk starts
 * where the previous one's first differing code was (caller first; the
 * inverted trie, built from the allocation site, walks from the root). The
 * names of the previous path stay marked in g->seen for that. */
static int path_node(fg *g, const uint64_t *bt, size_t n, uint32_t *at_node)
{
    size_t q = 0, len = 0;
    if (!g->opt_inverted) {
        size_t lim = n < g->pc_len ? n : g->pc_len;
        while (q < lim && bt[q] == g->pc_codes[q])
            q++;
        len = q ? g->pc_names[q - 1] : 0;
    }
    for (size_t k = len; k < g->pc_names_len; k++)
        g->seen[g->path[k]] = 0;    /* names beyond the kept part */
    g->pc_len = q;
    g->pc_names_len = len;
    if (grow_array(&g->pc_codes, &g->pc_cap, n, sizeof *g->pc_codes) ||
        grow_array(&g->pc_names, &g->pc_names_cap, n, sizeof *g->pc_names) ||
        grow_array(&g->pc_nodes, &g->pc_nodes_cap, n, sizeof *g->pc_nodes))
        return -2;
    uint32_t at = q ? g->pc_nodes[q - 1] : 0;
    for (size_t i = q; i < n; i++) {
        size_t first, count;
        int e = code_frames(g, bt[i], &first, &count);
        if (!e && grow_array(&g->path, &g->path_cap, len + count, sizeof *g->path))
            e = -2;
        if (e) {
            if (e == -1)
                g->bad_code = bt[i];
            return e;
        }
        for (size_t k = 0; k < count; k++) {
            uint32_t nm = g->code_names[first + k];
            int hidden = g->seen[nm] ? 1 : name_hidden(g, nm);
            if (hidden < 0)
                return -2;
            if (hidden)
                continue;
            g->seen[nm] = 1;
            g->path[len++] = nm;
            if (!g->opt_inverted && !(at = child(g, at, nm)))
                return -2;
        }
        /* the state after bt[0..i]: kept for the next call */
        g->pc_codes[i] = bt[i];
        g->pc_names[i] = (uint32_t)len;
        g->pc_nodes[i] = at;
        g->pc_len = i + 1;
        g->pc_names_len = len;
    }
    if (g->opt_inverted) {
        at = 0;
        for (size_t k = len; k-- > 0;)
            if (!(at = child(g, at, g->path[k])))
                return -2;
    }
    *at_node = at;
    return 0;
}

static int slots_grow(fg *g)
{
    size_t cap = g->slots_cap ? g->slots_cap * 2 : 4096;
    stack_slot *t = huge_calloc(cap * sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < g->slots_cap; i++) {
        if (!g->slots[i].idx)
            continue;
        size_t j = g->slots[i].h0 & (cap - 1);
        while (t[j].idx)
            j = (j + 1) & (cap - 1);
        t[j] = g->slots[i];
    }
    free(g->slots);
    g->slots = t;
    g->slots_cap = cap;
    return 0;
}

/* Distinct backtraces.
 *
 * Walking the trie for every allocation costs a cache miss per name once
 * the trie outgrows the cache (tens of seconds on the 320 MB benchmark
 * trace). Instead a backtrace is identified by a 128-bit hash of its codes,
 * kept for every prefix of the previous backtrace: consecutive backtraces
 * share most of their callers, so only the ~3 new codes are hashed, and
 * one probe finds the entry. Only a backtrace never seen before walks the
 * trie. (Two distinct backtraces would have to collide in the 96 bits kept
 * to be confused: about n^2 / 2^97 for n distinct backtraces, 10^-19 for a
 * million.) */

/* The hash of ev's backtrace; g->prev_codes becomes that backtrace, of
 * which the first *common (if common is not NULL) were those of the one
 * before. 0, or -2 out of memory. */
static int stack_hash(fg *g, const mt_event *ev, uint64_t h[2], size_t *common)
{
    size_t n = ev->backtrace_len;
    const uint64_t *bt = ev->backtrace;
    size_t p = 0;
    size_t lim = n < g->prev_len ? n : g->prev_len;
    p = g->known < lim ? g->known : lim;
    while (p < lim && bt[p] == g->prev_codes[p])
        p++;
    if (grow_array(&g->prev_codes, &g->prev_cap, n, sizeof *g->prev_codes) ||
        grow_array(&g->prefix_hash, &g->prefix_hash_cap, n, sizeof *g->prefix_hash))
        return -2;
    uint64_t h0 = p ? g->prefix_hash[p - 1][0] : g->seed[0];
    uint64_t h1 = p ? g->prefix_hash[p - 1][1] : g->seed[1];
    for (size_t i = p; i < n; i++) {
        /* two independent chains of one multiply per code each (the
         * rotation and the shift carry high bits down, so every bit of a
         * code reaches every bit of the state within a few steps); the
         * pair is only compared whole, h0 after a full mix */
        h0 = ((h0 << 29 | h0 >> 35) ^ bt[i]) * 0xff51afd7ed558ccdull;
        h1 = (h1 + bt[i]) * 0x9e3779b97f4a7c15ull;
        h1 ^= h1 >> 31;
        g->prev_codes[i] = bt[i];
        g->prefix_hash[i][0] = h0;
        g->prefix_hash[i][1] = h1;
    }
    g->prev_len = n;
    if (common)
        *common = p;
    h[0] = hash_u64(h0, 0);
    h[1] = h1;
    return 0;
}

/* The entry of the backtrace bt[0..n) whose hash is h, created with its
 * trie node if new: sets *idx; 0, -1 unknown code, -2 out of memory. */
static int stack_find(fg *g, const uint64_t h[2], const uint64_t *bt, size_t n,
                      size_t *idx)
{
    if ((g->nstacks + 1) * 2 > g->slots_cap && slots_grow(g))
        return -2;
    uint32_t h1 = (uint32_t)h[1];
    size_t mask = g->slots_cap - 1, j = h[0] & mask;
    for (; g->slots[j].idx; j = (j + 1) & mask)
        if (g->slots[j].h0 == h[0] && g->slots[j].h1 == h1) {
            *idx = g->slots[j].idx - 1;
            return 0;
        }
    if (g->nstacks >= UINT32_MAX - 1 ||
        grow_array(&g->st_node, &g->st_node_cap, g->nstacks + 1, sizeof *g->st_node) ||
        grow_array(&g->st_count, &g->st_count_cap, g->nstacks + 1, sizeof *g->st_count))
        return -2;
    uint32_t at;
    int e = path_node(g, bt, n, &at);
    if (e)
        return e;
    size_t k = g->nstacks++;
    g->st_node[k] = at;
    g->st_count[k] = 0;
    g->slots[j].h0 = h[0];
    g->slots[j].h1 = h1;
    g->slots[j].idx = (uint32_t)k + 1;
    *idx = k;
    return 0;
}

static int stack_of(fg *g, const mt_event *ev, size_t *idx)
{
    uint64_t h[2];
    int e = stack_hash(g, ev, h, NULL);
    if (!e)
        e = stack_find(g, h, ev->backtrace, ev->backtrace_len, idx);
    if (e == -1)
        g->bad_off = mt_reader_offset(g->r);
    return e;
}

/* Count the oldest pending allocation (see on_alloc); g->base becomes its
 * codes. */
static int count_pending(fg *g)
{
    pend_alloc *q = &g->pend[g->pend_first];
    g->pend_first = (g->pend_first + 1) % PEND_DEPTH;
    g->npend--;
    if (grow_array(&g->base, &g->base_cap, q->len, sizeof *g->base))
        return -2;
    if (q->len > q->p)          /* (memcpy's pointers must be valid even for 0) */
        memcpy(g->base + q->p, q->suf, (q->len - q->p) * sizeof *g->base);
    size_t idx;
    int e = stack_find(g, q->h, g->base, q->len, &idx);
    if (!e)
        g->st_count[idx] = ocaml_add(g->st_count[idx], q->ns);
    else if (e == -1)
        g->bad_off = q->off;
    return e;
}

/* Count every pending allocation. */
static int flush_pending(fg *g)
{
    int e = 0;
    while (g->npend && !e)
        e = count_pending(g);
    return e;
}

static int on_alloc(fg *g, const mt_event *ev)
{
    if (!g->opt_live) {
        /* Only counts are wanted: the stack table is probed for this
         * allocation PEND_DEPTH allocations later, after a prefetch now,
         * so the cache miss (the table is megabytes, probed at random)
         * overlaps the decoding in between: one allocation later hid a
         * third of it, eight hide most (flamegraph 10% faster). Meanwhile
         * only the codes that differ from the allocation before are kept:
         * a new stack's path needs them all. */
        int e = g->npend == PEND_DEPTH ? count_pending(g) : 0;
        pend_alloc *q = &g->pend[(g->pend_first + g->npend) % PEND_DEPTH];
        size_t n = ev->backtrace_len;
        if (!e)
            e = stack_hash(g, ev, q->h, &q->p);
        if (!e && grow_array(&q->suf, &q->suf_cap, n - q->p, sizeof *q->suf))
            e = -2;
        if (e)
            return e;
        if (n > q->p)
            memcpy(q->suf, ev->backtrace + q->p, (n - q->p) * sizeof *q->suf);
        q->len = n;
        q->ns = ev->nsamples;
        q->off = mt_reader_offset(g->r);
        g->npend++;
        if (g->slots)
            __builtin_prefetch(&g->slots[q->h[0] & (g->slots_cap - 1)]);
        return 0;
    }
    size_t idx;
    int e = stack_of(g, ev, &idx);
    if (e)
        return e;
    uint32_t at = g->st_node[idx];
    uint64_t v;
    if (g->v3 && u64map_del(&g->early_collect, (uint64_t)ev->id, &v))
        return 0;                   /* already collected: not live */
    if (u64map_put(&g->live_node, (uint64_t)ev->id, at) ||
        u64map_put(&g->live_samples, (uint64_t)ev->id, (uint64_t)ev->nsamples))
        return -2;
    return 0;
}

static int on_event(void *ctx, const mt_event *ev)
{
    fg *g = ctx;
    if (ev->kind == MT_EVENT_ALLOC) {
        /* (the first allocation has no prev_codes: nothing is shared) */
        g->known = ev->domain == g->last_domain && ev->common_prefix > 0
                   ? (size_t)ev->common_prefix : 0;
        g->last_domain = ev->domain;
        g->err = on_alloc(g, ev);
        return g->err;
    }
    /* The reference asserts that a collected id is live (and aborts on
     * synth-abuse). A collect of an unknown or already collected object
     * carries no information for the graph, so it is ignored (in v3 it is
     * remembered in case its allocation comes later). Without --live-at-end
     * no ids are kept at all: collections do not change the output, so
     * memory stays bounded by the number of distinct paths. */
    if (ev->kind == MT_EVENT_COLLECT && g->opt_live) {
        uint64_t v;
        if (!u64map_del(&g->live_node, (uint64_t)ev->id, &v) && g->v3 &&
            u64map_put(&g->early_collect, (uint64_t)ev->id, 0)) {
            g->err = -2;
            return g->err;
        }
        u64map_del(&g->live_samples, (uint64_t)ev->id, &v);
    }
    return 0;
}

/* ---- output -------------------------------------------------------------- */

static const fg *sort_g;

/* OCaml String.compare: bytewise, a proper prefix first. */
static int cmp_children(const void *a, const void *b)
{
    const name_rec *x = &sort_g->names[sort_g->nodes[*(const uint32_t *)a].name];
    const name_rec *y = &sort_g->names[sort_g->nodes[*(const uint32_t *)b].name];
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(sort_g->text + x->off, sort_g->text + y->off, n) : 0;
    if (c)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

/* Relink the children of every node in sorted order. */
static int sort_children(fg *g)
{
    uint32_t *tmp = NULL;
    size_t cap = 0;
    sort_g = g;
    for (size_t p = 0; p < g->nnodes; p++) {
        size_t n = 0;
        for (uint32_t c = g->nodes[p].first_child; c; c = g->nodes[c].next_sibling) {
            if (grow_array(&tmp, &cap, n + 1, sizeof *tmp)) {
                free(tmp);
                return -1;
            }
            tmp[n++] = c;
        }
        if (n < 2)
            continue;
        qsort(tmp, n, sizeof *tmp, cmp_children);
        g->nodes[p].first_child = tmp[0];
        for (size_t i = 0; i + 1 < n; i++)
            g->nodes[tmp[i]].next_sibling = tmp[i + 1];
        g->nodes[tmp[n - 1]].next_sibling = 0;
    }
    free(tmp);
    return 0;
}

/* round() without libm: half away from zero. */
static double round_away(double x)
{
    if (!(x < 4503599627370496.0 && x > -4503599627370496.0))
        return x;                   /* already integral, or inf/nan */
    double t = (double)(int64_t)x;  /* truncated */
    double d = x - t;               /* exact below 2^52 */
    if (d >= 0.5)
        t += 1;
    else if (d <= -0.5)
        t -= 1;
    return t;
}

static void print_weight(mt_out *o, int64_t count, int bytes,
                         double bytes_per_sample)
{
    char num[400];
    size_t k;
    if (bytes)
        k = (size_t)snprintf(num, sizeof num, " %.0f\n",
                             round_away((double)count * bytes_per_sample));
    else
        k = (size_t)snprintf(num, sizeof num, " %lld\n", (long long)count);
    out_mem(o, num, k);
}

/* Depth-first pre-order walk without recursion (paths can be thousands of
 * frames deep). */
static int print_trie(fg *g, mt_out *o, int bytes, double bytes_per_sample)
{
    uint32_t *stack = NULL;     /* the path from the root's child down */
    size_t cap = 0, depth = 0;
    uint32_t cur = g->nodes[0].first_child;
    while (cur) {
        if (grow_array(&stack, &cap, depth + 1, sizeof *stack)) {
            free(stack);
            return -1;
        }
        stack[depth++] = cur;
        const node *nd = &g->nodes[cur];
        if (nd->count > 0 && depth >= 2) {
            for (size_t i = 0; i < depth; i++) {
                const name_rec *nr = &g->names[g->nodes[stack[i]].name];
                if (i)
                    out_mem(o, ";", 1);
                out_mem(o, g->text + nr->off, nr->len);
            }
            print_weight(o, nd->count, bytes, bytes_per_sample);
            out_maybe_flush(o);
        }
        if (nd->first_child) {
            cur = nd->first_child;
            continue;
        }
        /* Up until a node with a next sibling. */
        cur = 0;
        while (depth > 0) {
            uint32_t sib = g->nodes[stack[--depth]].next_sibling;
            if (sib) {
                cur = sib;
                break;
            }
        }
    }
    free(stack);
    return 0;
}

static void fg_free(fg *g)
{
    free(g->text);
    free(g->names);
    free(g->name_slots);
    free(g->seen);
    free(g->base);
    for (int i = 0; i < PEND_DEPTH; i++)
        free(g->pend[i].suf);
    u64map_free(&g->codes);
    free(g->code_names);
    free(g->nodes);
    free(g->edges);
    u64map_free(&g->live_node);
    u64map_free(&g->live_samples);
    u64map_free(&g->early_collect);
    free(g->path);
    free(g->pc_codes);
    free(g->pc_names);
    free(g->pc_nodes);
    free(g->slots);
    free(g->st_node);
    free(g->st_count);
    free(g->prev_codes);
    free(g->prefix_hash);
    free(g->hidden);
}

/* ---- with filters: the analysis layer's scan decides each object ------ */

typedef struct fg_scan {
    fg *g;
    mt_scan *sc;
} fg_scan;

static int scan_alloc(void *ctx, const mt_event *ev, uint32_t *user)
{
    fg_scan *fs = ctx;
    fs->g->r = fs->sc->reader;
    size_t idx;
    fs->g->known = fs->sc->shared_prefix;
    fs->g->err = stack_of(fs->g, ev, &idx);
    if (!fs->g->err)
        *user = fs->g->st_node[idx];
    return fs->g->err;
}

static int scan_object(void *ctx, const mt_object *o)
{
    fg_scan *fs = ctx;
    node *nd = &fs->g->nodes[o->user];
    nd->count = ocaml_add(nd->count, o->nsamples);
    return 0;
}

/* Fill the trie with the objects passing f. Returns MT_OK or an error
 * status with the message printed; on success *sc holds the open scan (its
 * reader's info is needed for --bytes) for the caller to free. */
static int scan_filtered(fg *g, const mt_filter *f, const char *path, mt_scan *sc)
{
    fg_scan fs = {g, sc};
    sc->need_stacks = 1;
    sc->on_alloc = scan_alloc;
    sc->on_object = scan_object;
    sc->ctx = &fs;
    int st = cli_scan_filtered("flamegraph", sc, f, path);
    sc->ctx = NULL;                     /* (fs ends here; the scan lives on) */
    if (g->err == -1)
        cli_error("flamegraph", "%s: " MT_BAD_CODE_FMT, path,
                  (unsigned long long)g->bad_off, (unsigned long long)g->bad_code);
    else if (g->err)
        cli_error("flamegraph", "out of memory");
    return g->err ? MT_ERR_FORMAT : st;
}

/* The command with filters: same trie and output, objects decided by the
 * analysis layer (--live-at-end becomes --live-at end). */
static int run_filtered(fg *g, mt_filter *f, const char *path, int opt_bytes)
{
    if (g->opt_live) {
        if (f->live_mode != MT_LIVE_ANY && f->live_mode != MT_LIVE_END) {
            mt_filter_free(f);
            return cli_usage_error("flamegraph", "--live-at-end contradicts --live-at");
        }
        f->live_mode = MT_LIVE_END;
        g->opt_live = 0;
    }
    g->filter = f;
    mt_out o;
    int rc = EXIT_DATA;
    g->nodes_cap = 1024;
    g->nodes = calloc(g->nodes_cap, sizeof *g->nodes);   /* [0]: the root */
    g->nnodes = 1;
    if (!g->nodes || out_init(&o, STDOUT_FILENO)) {
        cli_error("flamegraph", "out of memory");
        fg_free(g);
        mt_filter_free(f);
        return EXIT_DATA;
    }
    mt_scan sc = {0};
    if (scan_filtered(g, f, path, &sc) == MT_OK) {
        const mt_trace_info *info = sc.info;
        double bps = (double)(info->word_size / 8) / info->sample_rate;
        if (sort_children(g) || print_trie(g, &o, opt_bytes, bps))
            cli_error("flamegraph", "out of memory");
        else
            rc = EXIT_OK;
    }
    out_flush(&o);
    if (rc == EXIT_OK && o.err) {
        cli_error("flamegraph", "writing standard output: %s", strerror(o.err));
        rc = EXIT_DATA;
    }
    out_free(&o);
    mt_scan_free(&sc);
    fg_free(g);
    mt_filter_free(f);
    return rc;
}

int cmd_flamegraph(int argc, char **argv)
{
    const char *path = NULL;
    int opt_bytes = 0;
    fg g;
    memset(&g, 0, sizeof g);
    memcpy(g.seed, hash_key(), sizeof g.seed);
    mt_filter f;
    mt_filter_init(&f);
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int k = cli_filter_arg("flamegraph", &f, argc, argv, &i, &opts_done);
        if (k < 0) {
            mt_filter_free(&f);
            return EXIT_USAGE;
        }
        if (k > 0) {
            i--;                        /* the loop's i++ steps past it */
            continue;
        }
        int option = !opts_done && a[0] == '-' && a[1] != 0;
        if (option && cli_is_help(a)) {
            mt_filter_free(&f);
            usage_flamegraph(stdout);
            return EXIT_OK;
        }
        if (option && strcmp(a, "--bytes") == 0)
            opt_bytes = 1;
        else if (option && strcmp(a, "--lines") == 0)
            g.opt_lines = 1;
        else if (option && strcmp(a, "--inverted") == 0)
            g.opt_inverted = 1;
        else if (option && strcmp(a, "--live-at-end") == 0)
            g.opt_live = 1;
        else if (option || path) {
            mt_filter_free(&f);
            return option
                       ? cli_usage_error("flamegraph", "unknown option '%s'", a)
                       : cli_usage_error("flamegraph", "expected one TRACE, got more");
        } else
            path = a;
    }
    if (!path) {
        mt_filter_free(&f);
        return cli_usage_error("flamegraph", "missing TRACE argument");
    }
    int rc = cli_check_filters("flamegraph", &f, path);
    if (rc) {
        mt_filter_free(&f);
        return rc;
    }
    if (mt_filter_active(&f))
        return run_filtered(&g, &f, path, opt_bytes);

    mt_reader_options opt = {0};
    opt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&opt);
    mt_out o;
    int out_ok = out_init(&o, STDOUT_FILENO) == 0;
    g.r = r;
    g.nodes_cap = 1024;
    g.nodes = malloc(g.nodes_cap * sizeof *g.nodes);
    if (!r || !out_ok || !g.nodes) {
        cli_error("flamegraph", "out of memory");
        if (out_ok)
            out_free(&o);
        free(g.nodes);
        mt_reader_close(r);
        return EXIT_DATA;
    }
    memset(&g.nodes[0], 0, sizeof g.nodes[0]);   /* the root */
    g.nnodes = 1;

    rc = EXIT_OK;
    int st = strcmp(path, "-") == 0 ? mt_reader_open_fd(r, STDIN_FILENO)
                                    : mt_reader_open_file(r, path);
    if (st == MT_OK) {
        g.v3 = mt_reader_info(r)->format_version >= 3;
        st = cli_scan(r, "flamegraph", path, on_event, &g);
        if (!g.err)
            g.err = flush_pending(&g);
    }
    if (g.err == -1) {
        cli_error("flamegraph", "%s: " MT_BAD_CODE_FMT, path,
                  (unsigned long long)g.bad_off, (unsigned long long)g.bad_code);
        rc = EXIT_DATA;
    } else if (g.err) {
        cli_error("flamegraph", "out of memory");
        rc = EXIT_DATA;
    } else if (st != MT_EOF) {
        cli_error("flamegraph", "%s: %s", path, mt_reader_error(r));
        rc = EXIT_DATA;
    }
    for (size_t i = 0; rc == EXIT_OK && i < g.nstacks; i++) {
        node *nd = &g.nodes[g.st_node[i]];
        nd->count = ocaml_add(nd->count, g.st_count[i]);
    }
    if (rc == EXIT_OK && g.opt_live) {
        for (size_t i = 0; i < g.live_node.cap; i++) {
            if (!g.live_node.used[i])
                continue;
            uint64_t id = g.live_node.keys[i];
            uint64_t *ns = u64map_get(&g.live_samples, id);
            node *nd = &g.nodes[g.live_node.vals[i]];
            nd->count = ocaml_add(nd->count, ns ? (int64_t)*ns : 0);
        }
    }
    if (rc == EXIT_OK) {
        const mt_trace_info *info = mt_reader_info(r);
        double bps = (double)(info->word_size / 8) / info->sample_rate;
        if (sort_children(&g) || print_trie(&g, &o, opt_bytes, bps)) {
            cli_error("flamegraph", "out of memory");
            rc = EXIT_DATA;
        }
    }
    out_flush(&o);
    if (rc == EXIT_OK && o.err) {
        cli_error("flamegraph", "writing standard output: %s", strerror(o.err));
        rc = EXIT_DATA;
    }
    out_free(&o);
    fg_free(&g);
    mt_reader_close(r);
    return rc;
}
