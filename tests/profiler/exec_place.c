/*
 * exec_place.c - execs itself, in its own place, through the exec function
 * MODE names, as "final": then allocates 4 MiB in 1 KiB blocks in
 * final_work (the trace must show that function: the exec'd program was
 * traced) and prints MEMTRACE as it sees it (emptied again by the
 * profiler, for its own children).
 *   exec_place MODE
 * MODE: execl execle execlp execv execve execvp execvpe fexecve execveat
 *       (execle and execve pass an environment of their own, X=1 only);
 *       fail: an exec that fails, then final's work in this process and a
 *       child shell printing [$MEMTRACE] (still untraced); forkexec: a
 *       child allocates 256 KiB in final_work, then execs true (its trace
 *       must hold that work: an exec runs no destructor); final.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static __attribute__((noinline)) long final_work(int blocks)
{
    long sum = 0;
    for (int i = 0; i < blocks; i++) {
        char *p = malloc(1024);
        if (!p)
            return -1;
        __asm__ volatile("" : : "r"(p) : "memory");   /* (clang drops unused blocks) */
        p[0] = (char)i;
        sum += p[0];
        free(p);
    }
    return sum;
}

static int final(void)
{
    long s = final_work(4096);
    const char *m = getenv("MEMTRACE");
    printf("final %ld [%s]\n", s, m ? m : "(unset)");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    if (strcmp(mode, "final") == 0)
        return final();
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 3;
    self[n] = 0;
    char *args[] = {self, "final", NULL};
    char *env[] = {"X=1", NULL};
    fflush(stdout);
    if (strcmp(mode, "execl") == 0)
        execl(self, self, "final", (char *)NULL);
    else if (strcmp(mode, "execle") == 0)
        execle(self, self, "final", (char *)NULL, env);
    else if (strcmp(mode, "execlp") == 0)
        execlp(self, self, "final", (char *)NULL);
    else if (strcmp(mode, "execv") == 0)
        execv(self, args);
    else if (strcmp(mode, "execve") == 0)
        execve(self, args, env);
    else if (strcmp(mode, "execvp") == 0)
        execvp(self, args);
    else if (strcmp(mode, "execvpe") == 0)
        execvpe(self, args, environ);
    else if (strcmp(mode, "fexecve") == 0) {
        int fd = open(self, O_RDONLY);
        if (fd >= 0)
            fexecve(fd, args, environ);
    } else if (strcmp(mode, "execveat") == 0)
        execveat(AT_FDCWD, self, args, environ, 0);
    else if (strcmp(mode, "forkexec") == 0) {
        pid_t k = fork();
        if (k == 0) {
            final_work(256);    /* fewer events than fill a buffer */
            execl("/bin/true", "true", (char *)NULL);
            _exit(6);
        }
        int st;
        return k > 0 && waitpid(k, &st, 0) == k && WIFEXITED(st) ? WEXITSTATUS(st) : 7;
    } else if (strcmp(mode, "fail") == 0) {
        execlp("no-such-command-memtrace-test", "x", (char *)NULL);
        final();
        fflush(stdout);
        return system("echo \"child [$MEMTRACE]\"") == 0 ? 0 : 4;
    }
    perror(mode);
    return 5;
}
