/*
 * churn.c - 2000 short threads, four at a time, each allocating and freeing
 * 100 blocks of 100 B to 1 KiB: under the profiler at a high rate every
 * thread samples and frees sampled blocks into its cache of region blocks,
 * which must go back when the thread ends (it stranded ~55 KiB a thread).
 * Prints a checksum on stdout and its peak RSS (VmHWM, KiB) on stderr.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peak_rss.h"

static void *worker(void *arg)
{
    long sum = 0;
    void *p[100];
    for (int i = 0; i < 100; i++) {
        p[i] = malloc(100 + (size_t)i * 9);
        memset(p[i], i, 8);
        sum += ((unsigned char *)p[i])[0];
    }
    for (int i = 0; i < 100; i++)
        free(p[i]);
    *(long *)arg = sum;
    return NULL;
}

int main(void)
{
    long total = 0;
    for (int r = 0; r < 500; r++) {
        pthread_t t[4];
        long s[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, worker, &s[i]) != 0)
                return 2;
        for (int i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            total += s[i];
        }
    }
    printf("%ld\n", total);
    print_peak_rss();
    return 0;
}
