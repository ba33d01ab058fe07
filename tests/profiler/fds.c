/*
 * fds.c - a program that takes descriptors it did not open, as shells and
 * daemons do: its own file dup2'ed onto fds 3 to 9 (a shell's `exec 3>f`),
 * then, with "closeall", every descriptor from 3 up closed (closefrom), a
 * second file opened and a third dup2'ed onto every number left. It allocates between its writes, then reads its
 * files back and says whether they hold exactly what it wrote: under the
 * profiler, none of the profiler's descriptors may be among these numbers
 * (the trace's, libunwind's pipe, libdw's files). With "closestd",
 * every descriptor is closed, 0-2 too, and a file of the program's opened
 * on all of them: the profiler, whose trace is gone, must not write its
 * message into that file through descriptor 2; the exit status says
 * (0: the file holds nothing; 3: it does). profiler_test.sh, case fds.
 *   profiler_fds [closeall | closestd]
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 20
#define LIVE 512

static void churn(unsigned *seed)
{
    static void *live[LIVE];
    for (int i = 0; i < 20000; i++) {
        *seed = *seed * 1103515245u + 12345u;
        unsigned k = (*seed >> 16) % LIVE;
        free(live[k]);
        live[k] = malloc(16 + (*seed >> 8) % 2000);
        if (live[k])
            memset(live[k], 1, 16);
    }
}

/* write each round's lines to the fds lo..hi; the expected text into want */
static void rounds(int lo, int hi, unsigned *seed, char *want, size_t cap)
{
    size_t w = strlen(want);
    for (int r = 0; r < ROUNDS; r++) {
        churn(seed);
        for (int fd = lo; fd <= hi; fd++) {
            char line[64];
            int n = snprintf(line, sizeof line, "round %d fd %d\n", r, fd);
            if (write(fd, line, (size_t)n) != n)
                printf("write to fd %d failed in round %d\n", fd, r);
            if (w + (size_t)n < cap) {
                memcpy(want + w, line, (size_t)n + 1);
                w += (size_t)n;
            }
        }
    }
}

static int same(const char *path, const char *want)
{
    static char got[1 << 16];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, got, sizeof got - 1);
    if (fd >= 0)
        close(fd);
    int ok = n >= 0 && (size_t)n == strlen(want) && memcmp(got, want, (size_t)n) == 0;
    printf("%s: %s (%zd bytes)\n", path, ok ? "as written" : "NOT as written", n);
    return ok;
}

/* "closestd": a daemon that closes everything and opens its own file on
 * the standard descriptors; its file must stay empty. */
static int close_std(unsigned *seed)
{
    for (int fd = 0; fd < 1024; fd++)
        close(fd);
    int d = open("d.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (d != 0)
        return 2;
    for (int fd = 1; fd < 1024 && dup2(d, fd) == fd; fd++)
        ;
    churn(seed);
    /* a second later the profiler's next sample writes the trace (it
     * flushes at least every second), and finds its descriptor replaced */
    struct timespec ts = {1, 200000000};
    nanosleep(&ts, NULL);
    for (int r = 0; r < ROUNDS; r++)
        churn(seed);
    for (int fd = 1; fd < 1024; fd++)
        close(fd);
    struct stat st;
    return fstat(d, &st) == 0 && st.st_size == 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
    int closeall = argc > 1 && strcmp(argv[1], "closeall") == 0;
    if (argc > 1 && strcmp(argv[1], "closestd") == 0) {
        unsigned seed = 11;
        return close_std(&seed);
    }
    static char want_a[1 << 16], want_b[1 << 16];
    unsigned seed = 7;
    int a = open("a.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (a < 0)
        return 2;
    for (int fd = 3; fd <= 9; fd++)
        if (fd != a && dup2(a, fd) < 0)
            return 2;
    if (a > 9)
        close(a);
    rounds(3, 9, &seed, want_a, sizeof want_a);
    int ok = 1;
    if (closeall) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        int b = open("b.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int c = open("c.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (b < 0 || c < 0)
            return 2;
        /* c.txt on every other number (up to the limit): whatever the
         * profiler had there is gone, and it must not write into c.txt */
        for (int fd = c + 1; fd < 1024 && dup2(c, fd) == fd; fd++)
            ;
        rounds(b, b, &seed, want_b, sizeof want_b);
        for (int fd = c; fd < 1024; fd++)
            close(fd);
        close(b);
        ok &= same("b.txt", want_b);
        ok &= same("c.txt", "");
    }
    ok &= same("a.txt", want_a);
    return ok ? 0 : 1;
}
