/*
 * unwind_cost.c - cost of one sampled allocation at a given stack depth:
 * recurse DEPTH frames, then N mallocs of 64 bytes (freed at once). Run it
 * with MEMTRACE_RATE=1 (every allocation sampled) and without the profiler;
 * the difference divided by N is the price of a sample (unwind, writer,
 * lock, table). bench/profiler/run.sh does this for both unwinders.
 *   unwind_cost DEPTH N
 */
#include <stdio.h>
#include <stdlib.h>

static char *volatile sink;

__attribute__((noinline)) static long work(int depth, long n)
{
    if (depth > 0) {
        long r = work(depth - 1, n);
        sink = NULL;              /* no tail call: every level is a frame */
        return r;
    }
    long sum = 0;
    for (long i = 0; i < n; i++) {
        char *p = malloc(64);
        p[0] = 1;
        sink = p;
        sum += sink[0];
        free(p);
    }
    return sum;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    long n = argc > 2 ? atol(argv[2]) : 200000;
    printf("%ld\n", work(depth, n));
    return 0;
}
