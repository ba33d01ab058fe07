/*
 * sigdl.c - allocation from signal handlers (one on an alternate signal
 * stack) and from dlopen'ed libraries: PLUGIN.so, closed, then PLUGIN2.so
 * (the same code under other names), which the loader maps at the first
 * one's address, closed, then PLUGIN.so again. Says on stderr whether the
 * second library did land at the first one's address (the case to test:
 * the same return addresses naming other functions). On stderr, not
 * stdout: where the loader puts a library depends on every mapping made
 * before, the profiler's too (libdw reads the first plugin's file to name
 * its frames, at a time its flusher thread picks), so it is no part of the
 * output that must not change under the profiler (profiler.unwind_check
 * compares stdout; it once saw "no" in CI, on a loaded machine).
 *   sigdl PLUGIN.so PLUGIN2.so
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t handled;

/* p escapes: clang drops a block that nothing reads, malloc and free too */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void handler(int sig)
{
    (void)sig;
    for (int i = 0; i < 8; i++) {
        char *p = malloc(4096); /* SITE_HANDLER */
        KEEP(p);
        p[0] = 1;
        free(p);
    }
    handled++;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigaction(SIGUSR1, &sa, NULL);
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&ss, NULL);
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR2, &sa, NULL);
    for (int i = 0; i < 2000; i++) {
        char *p = malloc(512);
        KEEP(p);
        p[0] = 1;
        raise(i & 1 ? SIGUSR1 : SIGUSR2);
        free(p);
    }
    long total = 0;
    uintptr_t base[3] = {0};
    for (int round = 0; round < 3; round++) {
        void *h = dlopen(argv[round == 1 ? 2 : 1], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        long (*run)(long) = (long (*)(long))dlsym(h, "plugin_run");
        Dl_info info;
        if (!run || !dladdr((void *)(uintptr_t)run, &info))
            return 1;
        base[round] = (uintptr_t)info.dli_fbase;
        total += run(4L << 20);
        dlclose(h);
    }
    fprintf(stderr, "second library at the first one's address: %s\n",
            base[1] == base[0] ? "yes" : "no");
    printf("handled %d signals, plugin allocated %ld bytes\n", (int)handled, total);
    return handled == 2000 ? 0 : 1;
}
