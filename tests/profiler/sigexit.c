/*
 * sigexit.c - allocates and frees until SIGTERM, whose handler calls
 * exit(3): the profiler's exit code then runs on a thread that the signal
 * may have interrupted inside the profiler, holding its locks, and must not
 * wait for them (profiler_test.sh, case signal_dlopen). Prints "ready" once
 * it allocates.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ring.h"

static void on_term(int sig)
{
    (void)sig;
    exit(3);
}

int main(void)
{
    signal(SIGTERM, on_term);
    void *ring[64] = {0};
    unsigned s = 1;
    for (long i = 0;; i++) {
        s = ring_step(ring, s);
        if (i == 1000) {
            puts("ready");
            fflush(stdout);
        }
    }
}
