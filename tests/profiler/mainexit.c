/*
 * mainexit.c - main starts four threads that allocate and then calls
 * pthread_exit: the process ends when the last thread does (glibc then
 * calls exit(0), which flushes stdout). Under the profiler it hung for
 * ever, the flusher thread counted among the live ones (profiler_test.sh,
 * case threads).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ring.h"

static pthread_t tid[4];

static void *worker(void *arg)
{
    void *ring[64] = {0};
    unsigned s = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (int i = 0; i < 200000; i++)
        s = ring_step(ring, s);
    for (int k = 0; k < 64; k++)
        free(ring[k]);
    usleep(100000 * (useconds_t)(uintptr_t)arg);   /* after main's exit */
    /* in order, whatever the load: the output is compared with a plain run's */
    if ((uintptr_t)arg > 1)
        pthread_join(tid[(uintptr_t)arg - 2], NULL);
    printf("worker %u done\n", (unsigned)(uintptr_t)arg);
    return NULL;
}

int main(void)
{
    for (uintptr_t i = 0; i < 4; i++)
        if (pthread_create(&tid[i], NULL, worker, (void *)(i + 1)) != 0)
            return 1;
    pthread_exit(NULL);
}
