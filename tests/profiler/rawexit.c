/*
 * rawexit.c - THREADS threads (the main thread alone if 1) each allocate
 * and free a 1 KiB block every 2 us for MS milliseconds, then the process
 * ends with the exit_group system call, as Go's runtime ends a program: no
 * destructor runs, so the trace holds only what the profiler had flushed.
 * Prints the bytes allocated. With HOW "_exit", it ends by calling _exit
 * (the profiler's: which lets a packet being written be finished). With
 * HOW "vfork", the main thread allocates and, 200 times, vforks a child
 * that calls _exit at once (the profiler's _exit must leave the parent's
 * memory, which the child shares, as it was), then prints "vfork ok" and
 * ends with exit().
 *   rawexit THREADS MS [HOW]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long ms;

static long elapsed_ns(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000000000L + (t.tv_nsec - t0->tv_nsec);
}

static void *worker(void *arg)
{
    (void)arg;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n = 0, e;
    while ((e = elapsed_ns(&t0)) < ms * 1000000L) {
        if (e >= n * 2000) {
            char *volatile p = malloc(1024);
            if (!p)
                break;
            p[0] = 1;
            free(p);
            n++;
        }
    }
    return (void *)(n * 1024);
}

/* Allocate and free blocks of 16 B to 3 KiB as fast as it can, for ever. */
static void *busy(void *arg)
{
    (void)arg;
    for (unsigned i = 0;; i++) {
        char *volatile p = malloc(16 + i % 3000);
        if (p)
            p[0] = 1;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    ms = argc > 2 ? atol(argv[2]) : 400;
    int by_exit = argc > 3 && strcmp(argv[3], "_exit") == 0;
    if (argc > 3 && strcmp(argv[3], "vfork") == 0) {
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < 2000; i++) {
                char *volatile p = malloc(100 + (size_t)i);
                if (p)
                    p[0] = 1;
                free(p);
            }
            pid_t c = vfork();
            if (c == 0)
                _exit(3);
            int st;
            if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
                return 1;
        }
        puts("vfork ok");
        return 0;
    }
    long bytes = 0;
    if (threads <= 1) {
        bytes = (long)worker(NULL);
    } else if (by_exit) {
        /* threads still allocating when main ends the process */
        pthread_t t[64];
        for (int i = 0; i < threads && i < 64; i++)
            pthread_create(&t[i], NULL, busy, NULL);
        usleep((useconds_t)(ms * 1000 / 2));
        _exit(0);
    } else {
        pthread_t t[64];
        for (int i = 0; i < threads && i < 64; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < threads && i < 64; i++) {
            void *r;
            pthread_join(t[i], &r);
            bytes += (long)r;
        }
    }
    printf("%ld\n", bytes);
    fflush(stdout);
    syscall(SYS_exit_group, 0);
    return 1;
}
