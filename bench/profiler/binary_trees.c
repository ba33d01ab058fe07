/*
 * binary_trees.c - the benchmarks game's binary-trees: allocation-heavy
 * (millions of 24-byte nodes made and freed), the classic malloc stress.
 *   binary_trees MAX_DEPTH
 */
#include <stdio.h>
#include <stdlib.h>

typedef struct node {
    struct node *left, *right;
    long v;
} node;

static node *make(int d)
{
    node *n = malloc(sizeof *n);
    if (!n)
        abort();
    n->v = d;
    n->left = d > 0 ? make(d - 1) : NULL;
    n->right = d > 0 ? make(d - 1) : NULL;
    return n;
}

static long check(const node *n)
{
    return n->left ? 1 + check(n->left) + check(n->right) : 1;
}

static void drop(node *n)
{
    if (n->left) {
        drop(n->left);
        drop(n->right);
    }
    free(n);
}

int main(int argc, char **argv)
{
    int max = argc > 1 ? atoi(argv[1]) : 16;
    if (max < 6)
        max = 6;
    node *s = make(max + 1);
    printf("stretch tree of depth %d\t check: %ld\n", max + 1, check(s));
    drop(s);
    node *longlived = make(max);
    for (int d = 4; d <= max; d += 2) {
        long iters = 1L << (max - d + 4), c = 0;
        for (long i = 0; i < iters; i++) {
            node *t = make(d);
            c += check(t);
            drop(t);
        }
        printf("%ld\t trees of depth %d\t check: %ld\n", iters, d, c);
    }
    printf("long lived tree of depth %d\t check: %ld\n", max, check(longlived));
    drop(longlived);
    return 0;
}
