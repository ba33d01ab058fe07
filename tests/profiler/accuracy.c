/*
 * accuracy.c - allocates known amounts from known sites, for the profiler's
 * accuracy test (profiler_test.sh accuracy):
 *   A  alloc_a   200 MiB in 1 KiB blocks, all freed
 *   B  alloc_b    20 MiB in 48-byte blocks, all freed
 *   C  alloc_c     8 MiB in 4 KiB blocks, never freed (the leak)
 *   D  build_d    16 MiB in 256-byte blocks through make_block, inlined from
 *                 accuracy_helper.h, all freed
 * The SITE_* comments mark the lines the test expects in the trace. Prints
 * a checksum, so runs with and without the profiler can be compared.
 */
#include <stdio.h>
#include <stdlib.h>

#include "accuracy_helper.h"

#define MIB (1024L * 1024)

__attribute__((noinline)) static char *alloc_a(void)
{
    char *p = malloc(1024); /* SITE_A */
    p[0] = 1;
    return p;
}

__attribute__((noinline)) static char *alloc_b(void)
{
    char *p = malloc(48); /* SITE_B */
    p[0] = 1;
    return p;
}

__attribute__((noinline)) static char *alloc_c(void)
{
    char *p = malloc(4096); /* SITE_C */
    p[0] = 1;
    return p;
}

__attribute__((noinline)) static char *build_d(void)
{
    char *p = make_block(256); /* SITE_D_CALL */
    p[1] = 3;
    return p;
}

static char *leak[2048];

/* Allocate total bytes with f, n bytes at a time, freeing in batches. */
static long run(char *(*f)(void), long total, long n)
{
    char *batch[256];
    long sum = 0, k = 0;
    for (long i = 0; i < total / n; i++) {
        batch[k] = f();
        sum += batch[k][0];
        if (++k == 256) {
            while (k)
                free(batch[--k]);
        }
    }
    while (k)
        free(batch[--k]);
    return sum;
}

int main(void)
{
    long sum = run(alloc_a, 200 * MIB, 1024);
    sum += run(alloc_b, 20 * MIB, 48);
    sum += run(build_d, 16 * MIB, 256);
    for (int i = 0; i < 2048; i++) {
        leak[i] = alloc_c();
        sum += leak[i][0];
    }
    printf("checksum %ld\n", sum);
    return 0;
}
