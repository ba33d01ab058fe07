/*
 * plugin.c - a library that sigdl.c and dlthreads.c open with dlopen, run,
 * and close: plugin_run allocates `total` bytes in 1 KiB blocks and frees
 * them.
 * Built twice: as libprofiler_plugin.so, and with PLUGIN_BLOCK=other_block
 * as libprofiler_plugin2.so, the same code under another name, which the
 * loader maps where the first one was once it is closed: the same return
 * addresses, other locations.
 */
#include <stdlib.h>

#ifndef PLUGIN_BLOCK
#define PLUGIN_BLOCK plugin_block
#endif

__attribute__((noinline)) static char *PLUGIN_BLOCK(void)
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
        v[i] = PLUGIN_BLOCK();
        done += 1024;
    }
    for (long i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return done;
}
