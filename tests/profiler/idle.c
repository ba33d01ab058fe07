/*
 * idle.c - allocates 8 MiB, then idles 3 seconds; with "thread" it starts a
 * thread first. The trace on disk must hold the allocations about a second
 * later (the flusher thread of a multi-threaded program), while the
 * program still runs. With "busy" it is single-threaded and allocates and
 * frees for 3 seconds instead of idling (flushed from the sampled path).
 * It prints "allocated" once the 8 MiB are.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *volatile keep[2048];

static void *sleeper(void *arg)
{
    (void)arg;
    sleep(3);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    int threaded = argc > 1 && strcmp(argv[1], "thread") == 0;
    if (threaded)
        pthread_create(&t, NULL, sleeper, NULL);
    for (int i = 0; i < 2048; i++) {
        keep[i] = malloc(4096);
        keep[i][0] = 1;
    }
    puts("allocated");      /* (the test's clock starts here) */
    fflush(stdout);
    if (threaded) {
        pthread_join(t, NULL);
    } else if (argc > 1 && strcmp(argv[1], "busy") == 0) {
        time_t end = time(NULL) + 3;
        while (time(NULL) < end)
            for (int i = 0; i < 1000; i++) {
                char *volatile p = malloc(1000);
                p[0] = 1;
                free(p);
            }
    } else {
        sleep(3);
    }
    puts("idle done");
    return 0;
}
