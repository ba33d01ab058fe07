/*
 * thread_churn.c - N short threads, one after another, each allocating 64
 * blocks of 4000 bytes (256 KB) and freeing them: a program that starts a
 * thread per task. At the default rate one thread in three samples once;
 * what a thread's first sample costs the profiler (a fresh thread's
 * unwinder state) is what this measures.
 *   thread_churn N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *worker(void *arg)
{
    char *p[64];
    long sum = 0;
    for (int i = 0; i < 64; i++) {
        p[i] = malloc(4000);
        memset(p[i], i, 64);
        sum += p[i][63];
    }
    for (int i = 0; i < 64; i++)
        free(p[i]);
    *(long *)arg = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000, total = 0;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        long s = 0;
        if (pthread_create(&t, NULL, worker, &s) != 0 || pthread_join(t, NULL) != 0) {
            perror("thread_churn: pthread");
            return 1;
        }
        total += s;
    }
    printf("%ld\n", total);
    return 0;
}
