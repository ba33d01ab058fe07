/*
 * fork_churn.c - N rounds of: allocate 100 KB, fork a child that allocates
 * 1000 bytes and exits at once, wait for it, free. A program that forks
 * much without exec: each fork copies the process's page tables and each
 * child's exit tears them down, and pages written on either side after the
 * fork are copied, so what the profiler adds to the process (its libraries'
 * mappings, the pages its fork handlers write) is paid per fork.
 *   fork_churn N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    for (int i = 0; i < n; i++) {
        char *p = malloc(100000);
        if (!p)
            return 1;
        memset(p, 1, 100);
        pid_t k = fork();
        if (k < 0) {
            perror("fork_churn: fork");
            return 1;
        }
        if (k == 0) {
            char *q = malloc(1000);
            _exit(q && p[0] == 1 ? 0 : 1);
        }
        int st;
        if (waitpid(k, &st, 0) != k || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork_churn: child failed\n");
            return 1;
        }
        free(p);
    }
    printf("%d forks\n", n);
    return 0;
}
