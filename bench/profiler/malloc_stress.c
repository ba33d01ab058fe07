/*
 * malloc_stress.c - 2 threads, each allocating and freeing blocks of 16 to
 * 1024 bytes (a ring of 256 live blocks per thread).
 *   malloc_stress ITERATIONS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long iters;

static void *worker(void *arg)
{
    unsigned s = (unsigned)(long)arg * 2654435761u + 7;
    char *ring[256] = {0};
    long sum = 0;
    for (long i = 0; i < iters; i++) {
        s = s * 1103515245u + 12345u;
        int k = (int)(s >> 24);
        free(ring[k]);
        ring[k] = malloc(16 + (s >> 8) % 1009);
        ring[k][0] = (char)i;
        sum += ring[k][0];
    }
    for (int k = 0; k < 256; k++)
        free(ring[k]);
    return (void *)sum;
}

int main(int argc, char **argv)
{
    iters = argc > 1 ? atol(argv[1]) : 20000000;
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long total = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("%ld\n", total);
    return 0;
}
