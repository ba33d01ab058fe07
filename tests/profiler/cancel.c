/*
 * cancel.c - threads that allocate and free in a loop with deferred
 * cancellation, cancelled and joined, 100 rounds of three. Under the
 * profiler a thread may be cancelled at a cancellation point inside a drain
 * (the trace's write): it must not end holding the session lock, or the
 * other threads wait for ever (profiler_test.sh, case threads).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

static void *worker(void *arg)
{
    void *ring[64] = {0};
    unsigned s = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    for (;;) {
        s = ring_step(ring, s);
        if ((s & 1023) == 0)
            pthread_testcancel();
    }
    return NULL;
}

int main(void)
{
    int cancelled = 0;
    for (int r = 0; r < 100; r++) {
        pthread_t t[3];
        for (int i = 0; i < 3; i++)
            if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(r * 3 + i)) != 0)
                return 2;
        usleep(2000);
        for (int i = 0; i < 3; i++) {
            void *res;
            pthread_cancel(t[i]);
            pthread_join(t[i], &res);
            cancelled += res == PTHREAD_CANCELED;
        }
    }
    printf("%d threads cancelled\n", cancelled);
    return 0;
}
