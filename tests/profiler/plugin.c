/*
 * plugin.c - a library that sigdl.c opens with dlopen, runs, and closes:
 * plugin_run allocates `total` bytes in 1 KiB blocks and frees them.
 */
#include <stdlib.h>

__attribute__((noinline)) static char *plugin_block(void)
{
    char *p = malloc(1024); /* SITE_PLUGIN */
    p[0] = 1;
    return p;
}

long plugin_run(long total)
{
    long n = total / 1024, done = 0;
    char **v = malloc((size_t)n * sizeof *v);
    for (long i = 0; i < n; i++) {
        v[i] = plugin_block();
        done += 1024;
    }
    for (long i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return done;
}
