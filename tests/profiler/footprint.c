/*
 * footprint.c - what sampled blocks cost in memory: 96 MiB in blocks of
 * SIZE bytes (default 1000), all live at once and written through, then
 * freed. Run with every block sampled (all in the profiler's region), its
 * peak RSS against a plain run's shows the region's overhead: the
 * rounding of blocks to powers of two and the per-block metadata (which
 * was half the size of the blocks when it was a flat array).
 * Prints a checksum on stdout and its peak RSS (VmHWM, KiB) on stderr.
 *   profiler_footprint [SIZE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peak_rss.h"

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? (size_t)atol(argv[1]) : 1000;
    if (size < 16)
        size = 16;
    size_t n = ((size_t)96 << 20) / size;
    unsigned char **v = malloc(n * sizeof *v);
    if (!v)
        return 2;
    long sum = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = malloc(size);
        if (!v[i])
            return 2;
        memset(v[i], (int)(i & 255), size);
    }
    for (size_t i = 0; i < n; i++) {
        sum += v[i][size - 1];
        free(v[i]);
    }
    free(v);
    printf("%ld\n", sum);
    print_peak_rss();
    return 0;
}
