/*
 * aslimit.c - allocates MIB mebibytes in 64 MiB blocks, all live at once,
 * touching a byte of each, then frees them: run under `ulimit -v`, it
 * needs most of the address space the limit allows, which the profiler's
 * reserved region must not take away.
 *   aslimit MIB
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = (argc > 1 ? atoi(argv[1]) : 1024) / 64;
    char **v = calloc((size_t)n, sizeof *v);
    if (!v)
        return 1;
    for (int i = 0; i < n; i++) {
        v[i] = malloc((size_t)64 << 20);
        if (!v[i]) {
            printf("out of memory at block %d of %d\n", i, n);
            return 1;
        }
        v[i][0] = (char)i;
    }
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
    printf("%d blocks of 64 MiB\n", n);
    return 0;
}
