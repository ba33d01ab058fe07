/*
 * deep.c - stacks for the fast unwinder's check (profiler_test.sh, case
 * unwind_check): a recursion DEPTH frames deep whose frames alternate between a
 * plain function and one with a variable-length array (its CFA is given
 * from the frame pointer), allocating at every level on the way back. The
 * frames with the array allocate through every function of the malloc
 * family: the unwinding of each starts at the frame of the profiler's
 * function it reaches, whose saved frame pointer is this frame's.
 *   deep DEPTH ROUNDS
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *volatile sink;
static long total;

static long vla_level(int depth, int width);

__attribute__((noinline)) static long plain_level(int depth, int width)
{
    long r = depth > 0 ? vla_level(depth - 1, width) : 0;
    char *p = malloc(64 + (size_t)(depth % 7) * 16);
    sink = p;
    free(p);
    return r + 1;
}

__attribute__((noinline)) static long vla_level(int depth, int width)
{
    char buf[width + depth % 5];        /* a frame of run-time size */
    memset(buf, depth, sizeof buf);
    sink = buf;
    long r = depth > 0 ? plain_level(depth - 1, width) : 0;
    char *p = malloc(200);
    sink = p;
    free(p);
    void *q = NULL;
    if (posix_memalign(&q, 64, 100) == 0)
        sink = q;
    free(q);
    sink = q = aligned_alloc(64, 128);
    free(q);
    sink = q = memalign(32, 96);
    free(q);
    sink = q = valloc(50);
    free(q);
    sink = q = calloc(3, 40);
    sink = q = realloc(q, 300);
    free(q);
    return r + buf[depth % width] + 1;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 1000;
    int rounds = argc > 2 ? atoi(argv[2]) : 20;
    for (int i = 0; i < rounds; i++)
        total += plain_level(depth, 16 + i % 9);
    printf("deep: %d levels, %d rounds, %ld\n", depth, rounds, total);
    return 0;
}
