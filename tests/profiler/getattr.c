/*
 * getattr.c - threads whose first allocation is made inside their own
 * pthread_getattr_np, which holds the thread's lock while it allocates
 * (glibc's affinity buffer; the main thread's /proc/self/maps too), as
 * Rust's runtime does at the start of every program. The profiler must not
 * take that lock from its sampled path: with every allocation sampled, it
 * hung at the first sample.
 *   getattr THREADS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *worker(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    size_t size = 0;
    void *lo;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        pthread_attr_getstack(&a, &lo, &size);
        pthread_attr_destroy(&a);
    }
    return (void *)size;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        void *r;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, &r) != 0)
            return 1;
        total += r ? 1 : 0;
    }
    total += worker(NULL) ? 1 : 0;
    printf("%zu of %d stacks known\n", total, n + 1);
    return total == (size_t)n + 1 ? 0 : 1;
}
