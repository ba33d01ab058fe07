/*
 * big_buffers.c - a loop that allocates a large buffer, fills it and frees
 * it, as a program with per-request I/O or encoding buffers does. At the
 * default rate most such buffers are sampled, so this measures what a
 * sampled large block costs when it is freed and allocated again (the
 * region's handling of freed large blocks' pages).
 *   big_buffers N BYTES      N rounds with a buffer of BYTES bytes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3000;
    size_t size = argc > 2 ? (size_t)atol(argv[2]) : 1000000;
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        unsigned char *p = malloc(size);
        if (!p)
            return 1;
        memset(p, (int)i, size);
        sum += p[size / 2];
        free(p);
    }
    printf("%lu\n", sum);
    return 0;
}
