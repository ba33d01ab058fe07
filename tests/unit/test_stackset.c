/*
 * test_stackset.c - the tools' set of distinct backtraces (src/util/stackset):
 * ids in order of first use, the codes given back exactly, against a plain
 * model (every stack kept whole, found by a linear search) over random
 * stacks shaped like a trace's (shared prefixes, repeats, alternation,
 * the empty stack, very deep ones); and memory that grows with the frames
 * that differ, not with the frames added. And stackset_map into an idtrie
 * (src/util/idtrie), as the exporters use it: each stack's mapped path is
 * the model's, one call of the mapping per distinct prefix.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/idtrie.h"
#include "util/stackset.h"

/* ---- the model -------------------------------------------------------- */

typedef struct {
    uint64_t **v;
    size_t *len, n;
} model;

static uint32_t model_add(model *m, const uint64_t *c, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->len[i] == len && (len == 0 || memcmp(m->v[i], c, len * sizeof *c) == 0))
            return (uint32_t)i;
    m->v = realloc(m->v, (m->n + 1) * sizeof *m->v);
    m->len = realloc(m->len, (m->n + 1) * sizeof *m->len);
    m->v[m->n] = malloc(len * sizeof *c + 1);
    if (len)
        memcpy(m->v[m->n], c, len * sizeof *c);
    m->len[m->n] = len;
    return (uint32_t)m->n++;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i]);
    free(m->v);
    free(m->len);
}

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The number of leading codes two of the model's stacks share. */
static size_t model_shared(const model *m, size_t a, size_t b)
{
    size_t k = 0, n = m->len[a] < m->len[b] ? m->len[a] : m->len[b];
    while (k < n && m->v[a][k] == m->v[b][k])
        k++;
    return k;
}

/* Every stack of s equal to the model's, and its length, got in order and
 * then in a random order (stackset_get writes only what changed since the
 * last get; stackset_get_shared says how much that was not). */
static uint64_t next(void);
static void check_all(stackset *s, const model *m)
{
    CHECK_EQ(s->nstacks, m->n);
    size_t last = SIZE_MAX;
    for (size_t k = 0; k < 2 * m->n && m->n == s->nstacks; k++) {
        size_t i = k < m->n ? k : (size_t)(next() % m->n), len, shared;
        const uint64_t *c = stackset_get_shared(s, (uint32_t)i, &len, &shared);
        CHECK_EQ(len, m->len[i]);
        CHECK_EQ(stackset_len(s, (uint32_t)i), m->len[i]);
        CHECK(c != NULL);
        if (len == m->len[i] && len)
            CHECK(memcmp(c, m->v[i], len * sizeof *c) == 0);
        if (last != SIZE_MAX)
            CHECK_EQ(shared, model_shared(m, last, i));
        last = i;
    }
}

/* ---- tests ------------------------------------------------------------ */

/* Random stacks as a trace makes them: each keeps a random part of the
 * previous one (or of one from a while ago: alternation), then adds a few
 * codes from a small alphabet (so that codes recur at many depths). */
static void test_random(void)
{
    for (int round = 0; round < 20; round++) {
        stackset s;
        memset(&s, 0, sizeof s);
        model m = {0};
        uint64_t cur[600], old[600];
        size_t len = 0, oldlen = 0, kept = 0;
        int bad = 0;
        for (int i = 0; i < 3000 && !bad; i++) {
            unsigned r = (unsigned)(next() % 8);
            if (r == 0) {                       /* back to an older stack */
                uint64_t t[600];
                memcpy(t, cur, len * sizeof *cur);
                memcpy(cur, old, oldlen * sizeof *cur);
                memcpy(old, t, len * sizeof *cur);
                size_t tl = len;
                len = oldlen;
                oldlen = tl;
            } else if (r == 1) {
                memcpy(old, cur, len * sizeof *cur);
                oldlen = len;
            } else {
                len = len ? (size_t)(next() % (len + 1)) : 0;
                kept = len;
                size_t add = (size_t)(next() % (round < 10 ? 4 : 40));
                for (size_t k = 0; k < add && len < 600; k++)
                    cur[len++] = next() % (round % 2 ? 5 : 1000);
            }
            uint32_t id, want = model_add(&m, cur, len);
            /* every third round says what the stack shares with the
             * previous one (stackset_add_shared): nothing after a swap,
             * more than it has (clipped) when it is the same, else what
             * was kept of it, or a part of that */
            size_t shared = r == 0 ? 0 : r == 1 ? len + 5 : kept - kept / 3 * (size_t)(i % 2);
            int st = round % 3 != 2 ? stackset_add(&s, cur, len, &id)
                                    : stackset_add_shared(&s, cur, len, shared, &id);
            if (st != 0) {
                CHECK(0);
                bad = 1;
                break;
            }
            if (id != want) {
                CHECK_EQ(id, want);
                bad = 1;
            }
            if (i % 500 == 0) {                 /* a get between adds */
                size_t gl;
                const uint64_t *g = stackset_get(&s, id, &gl);
                CHECK_EQ(gl, len);
                CHECK(gl != len || !len || memcmp(g, cur, len * sizeof *g) == 0);
            }
        }
        check_all(&s, &m);
        stackset_free(&s);
        model_free(&m);
    }
}

/* The empty stack, a stack that is a prefix of another, and the other way
 * round, are distinct stacks; code 0 and repeated codes are codes. */
static void test_prefixes(void)
{
    stackset s;
    memset(&s, 0, sizeof s);
    const uint64_t a[4] = {7, 0, 7, 7};
    uint32_t id[6];
    CHECK_EQ(stackset_add(&s, a, 4, &id[0]), 0);
    CHECK_EQ(stackset_add(&s, a, 2, &id[1]), 0);
    CHECK_EQ(stackset_add(&s, a, 0, &id[2]), 0);
    CHECK_EQ(stackset_add(&s, a, 3, &id[3]), 0);
    CHECK_EQ(stackset_add(&s, a, 4, &id[4]), 0);
    CHECK_EQ(stackset_add(&s, a + 1, 0, &id[5]), 0);
    CHECK_EQ(id[0], 0);
    CHECK_EQ(id[1], 1);
    CHECK_EQ(id[2], 2);
    CHECK_EQ(id[3], 3);
    CHECK_EQ(id[4], 0);
    CHECK_EQ(id[5], 2);
    size_t len;
    const uint64_t *c = stackset_get(&s, 3, &len);
    CHECK_EQ(len, 3);
    CHECK(len == 3 && c[0] == 7 && c[1] == 0 && c[2] == 7);
    stackset_get(&s, 2, &len);
    CHECK_EQ(len, 0);
    CHECK_EQ(s.nnodes, 5);          /* the root and the four codes of a */
    stackset_free(&s);
    /* an empty stack first of all */
    memset(&s, 0, sizeof s);
    CHECK_EQ(stackset_add(&s, NULL, 0, &id[0]), 0);
    CHECK_EQ(id[0], 0);
    stackset_get(&s, 0, &len);
    CHECK_EQ(len, 0);
    stackset_free(&s);
}

/* Deep stacks that share most of their frames (a recursive compiler's):
 * one node per distinct prefix, not one code per frame added. */
static void test_shared_depth(void)
{
    enum { DEPTH = 5000, TAIL = 10, N = 300 };
    stackset s;
    memset(&s, 0, sizeof s);
    static uint64_t c[DEPTH + TAIL];
    for (size_t i = 0; i < DEPTH; i++)
        c[i] = 0x400000 + i;
    for (uint32_t k = 0; k < N; k++) {
        for (size_t i = 0; i < TAIL; i++)
            c[DEPTH + i] = (uint64_t)k << 20 | i;
        uint32_t id;
        CHECK_EQ(stackset_add(&s, c, DEPTH + TAIL, &id), 0);
        CHECK_EQ(id, k);
    }
    CHECK_EQ(s.nstacks, N);
    CHECK_EQ(s.nnodes, 1 + DEPTH + (size_t)N * TAIL);   /* not N * (DEPTH + TAIL) */
    size_t len;
    const uint64_t *g = stackset_get(&s, 17, &len);
    CHECK_EQ(len, DEPTH + TAIL);
    CHECK(len == DEPTH + TAIL && g[0] == 0x400000 && g[DEPTH - 1] == 0x400000 + DEPTH - 1 &&
          g[DEPTH] == (uint64_t)17 << 20 && g[DEPTH + TAIL - 1] == ((uint64_t)17 << 20 | (TAIL - 1)));
    stackset_free(&s);
}

/* stackset_map's fn: code c becomes key c % 7 below parent, except that
 * codes divisible by 5 add nothing (as a hidden frame) and code 999 fails
 * while fail_999 is set. */
typedef struct map_ctx {
    idtrie *t;
    size_t calls;
    int fail_999;
} map_ctx;

static int64_t map_fn(void *ctx, uint32_t parent, uint64_t code)
{
    map_ctx *x = ctx;
    x->calls++;
    if (code == 999 && x->fail_999)
        return -1;
    if (code % 5 == 0)
        return parent;
    return idtrie_child(x->t, parent, (uint32_t)(code % 7));
}

/* The keys of idtrie node at from the root: n of them into out. */
static size_t trie_path(const idtrie *t, uint32_t at, uint32_t *out)
{
    size_t n = 0;
    for (uint32_t a = at; a; a = t->nodes[a].parent)
        n++;
    for (size_t k = n; at; at = t->nodes[at].parent)
        out[--k] = t->nodes[at].key;
    return n;
}

/* Random stacks (as test_random's, codes 1..40 and 999), mapped in a random
 * order: each mapped node's path is the stack's codes mapped by map_fn;
 * two stacks get one node exactly when those are equal; fn runs once per
 * node of the set (plus the calls that failed); a failure leaves the rest
 * unmapped and the same stack maps later. */
static void test_map(void)
{
    for (int round = 0; round < 10; round++) {
        stackset s;
        memset(&s, 0, sizeof s);
        model m = {0};
        uint64_t cur[300];
        size_t len = 0;
        for (int i = 0; i < 2000; i++) {
            len = len ? (size_t)(next() % (len + 1)) : 0;
            size_t add = (size_t)(next() % 6);
            for (size_t k = 0; k < add && len < 300; k++)
                cur[len++] = next() % 50 == 0 ? 999 : 1 + next() % 40;
            uint32_t id;
            CHECK_EQ(stackset_add(&s, cur, len, &id), 0);
            CHECK_EQ(id, model_add(&m, cur, len));
        }
        idtrie t = {0};
        CHECK_EQ(idtrie_init(&t), 0);
        size_t nn = stackset_nodes(&s), cap = 0, failed = 0;
        uint32_t *map = malloc(nn * sizeof *map), *buf = NULL, *node = malloc(m.n * sizeof *node);
        memset(map, 0xff, nn * sizeof *map);
        map[0] = 0;
        map_ctx x = {&t, 0, 1};
        for (size_t k = 0; k < 2 * m.n; k++) {
            size_t i = k < m.n ? (size_t)(next() % m.n) : k - m.n;   /* then all */
            if (k == m.n)
                x.fail_999 = 0;
            size_t before = x.calls;
            int64_t at = stackset_map(&s, (uint32_t)i, map, map_fn, &x, &buf, &cap);
            int has999 = 0;
            for (size_t j = 0; j < m.len[i]; j++)
                has999 |= m.v[i][j] == 999;
            if (at < 0) {
                CHECK(x.fail_999 && has999);
                failed += x.calls > before;     /* (its last call failed) */
                continue;
            }
            node[i] = (uint32_t)at;
            uint32_t want[300], got[300];
            size_t nw = 0;
            for (size_t j = 0; j < m.len[i]; j++)
                if (m.v[i][j] % 5)
                    want[nw++] = (uint32_t)(m.v[i][j] % 7);
            size_t ng = trie_path(&t, (uint32_t)at, got);
            CHECK_EQ(ng, nw);
            CHECK(ng != nw || nw == 0 || memcmp(got, want, nw * sizeof *got) == 0);
        }
        CHECK(failed > 0);
        CHECK_EQ(x.calls, nn - 1 + failed);
        /* one node per distinct mapped list */
        for (size_t a = 0; a < m.n && a < 300; a++)
            for (size_t b = a + 1; b < m.n; b++) {
                uint32_t pa[300], pb[300];
                size_t la = trie_path(&t, node[a], pa), lb = trie_path(&t, node[b], pb);
                int same = la == lb && (la == 0 || memcmp(pa, pb, la * sizeof *pa) == 0);
                CHECK_EQ(same, node[a] == node[b]);
            }
        free(map);
        free(buf);
        free(node);
        idtrie_free(&t);
        stackset_free(&s);
        model_free(&m);
    }
}

int main(void)
{
    test_map();
    test_random();
    test_prefixes();
    test_shared_depth();
    return CHECK_DONE();
}
