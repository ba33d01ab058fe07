/*
 * stress.c - 16 threads allocate and free (blocks also freed by other
 * threads than the one that allocated them), while the main thread forks a
 * child that allocates, and runs an exec'd copy of itself ("exec" mode).
 * Then waves of short-lived threads, each freeing the blocks the previous
 * wave left (a finished thread's buffer, with its events, passes to a new
 * thread: every collect must still follow its alloc). Prints a
 * deterministic summary; exits non-zero if a child failed.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 16
#define ITERS 60000
#define RING 64

static _Atomic(char *) exchange[THREADS];
static char *volatile sink;   /* keeps the compiler from eliding malloc+free */

static void *worker(void *arg)
{
    long me = (long)arg;
    unsigned s = (unsigned)me * 2654435761u + 1;
    char *ring[RING] = {0};
    long bytes = 0;
    for (int i = 0; i < ITERS; i++) {
        s = s * 1103515245u + 12345u;
        size_t n = 16 + (s >> 8) % 4096;
        char *p = (i & 7) == 0 ? calloc(1, n) : malloc(n);
        if (!p)
            abort();
        p[0] = (char)i;
        bytes += (long)n;
        if ((i & 15) == 3)
            p = realloc(p, n * 2);
        int k = i % RING;
        if ((i & 31) == 5) {          /* hand a block to another thread */
            char *old = atomic_exchange(&exchange[(me + 1) % THREADS], p);
            free(old);
            p = NULL;
        }
        free(ring[k]);
        ring[k] = p;
    }
    for (int k = 0; k < RING; k++)
        free(ring[k]);
    return (void *)bytes;
}

/* Waves: each thread of a wave frees the blocks a thread of the previous
 * wave left in its slot, and leaves its own. */
#define WAVES 6
#define WAVE_THREADS 8
#define WAVE_BLOCKS 400
static char *left[WAVE_THREADS][WAVE_BLOCKS];

static void *wave_worker(void *arg)
{
    long me = (long)arg;
    for (int i = 0; i < WAVE_BLOCKS; i++) {
        free(left[me][i]);
        left[me][i] = malloc(64 + (size_t)(i * 37 % 3000));
        if (!left[me][i])
            abort();
        left[me][i][0] = 1;
    }
    return NULL;
}

static void waves(void)
{
    for (int w = 0; w < WAVES; w++) {
        pthread_t th[WAVE_THREADS];
        for (long i = 0; i < WAVE_THREADS; i++)
            pthread_create(&th[i], NULL, wave_worker, (void *)((i + w) % WAVE_THREADS));
        for (int i = 0; i < WAVE_THREADS; i++)
            pthread_join(th[i], NULL);
    }
    for (int i = 0; i < WAVE_THREADS; i++)
        for (int k = 0; k < WAVE_BLOCKS; k++)
            free(left[i][k]);
}

static int exec_mode(void)
{
    long sum = 0;
    for (int i = 0; i < 20000; i++) {
        char *p = malloc(100 + i % 900);
        p[0] = 1;
        sink = p;
        sum += sink[0];
        free(p);
    }
    return sum == 20000 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exec") == 0)
        return exec_mode();
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)i);

    usleep(20000);
    int bad = 0;
    pid_t pid = fork();               /* while the workers run */
    if (pid == 0) {
        long sum = 0;
        for (int i = 0; i < 5000; i++) {
            char *p = malloc(2048);
            p[0] = 1;
            sink = p;
            sum += sink[0];
            free(p);
        }
        exit(sum == 5000 ? 0 : 1);   /* exit, not _exit: the trace is flushed */
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bad++;
    pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        bad++;

    long total = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        total += (long)r;
    }
    for (int i = 0; i < THREADS; i++)
        free(atomic_load(&exchange[i]));
    waves();
    printf("stress: %d threads, %ld bytes allocated, fork and exec %s\n", THREADS, total,
           bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
