/*
 * fakeuse.c - a program linked with libprofiler_fakealloc (an allocator
 * that replaces malloc, fakealloc.c): blocks from its own entry point
 * freed with free, then 20 MiB in blocks of 16 to 1024 bytes through
 * malloc, calloc, realloc and memalign. Prints how many blocks the
 * allocator served: under the profiler, every unsampled one.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *fake_alloc(size_t n);
unsigned long fake_served(void);

int main(void)
{
    for (int i = 0; i < 1000; i++) {
        char *volatile p = fake_alloc(64);
        p[0] = 1;
        free(p);
    }
    unsigned long before = fake_served();
    size_t total = 0;
    for (int i = 0; total < (20u << 20); i++) {
        size_t n = 16 + (size_t)(i * 37) % 1009;
        char *p = (i & 3) == 0 ? calloc(1, n) : (i & 3) == 1 ? memalign(64, n) : malloc(n);
        if (!p)
            return 1;
        p = realloc(p, n + 8);
        if (!p || malloc_usable_size(p) < n + 8)
            return 2;
        memset(p, 1, n + 8);
        free(p);
        total += n;
    }
    printf("the allocator served %s\n", fake_served() - before > 1000 ? "the program" : "nothing");
    return 0;
}
