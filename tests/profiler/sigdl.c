/*
 * sigdl.c - allocation from signal handlers (one on an alternate signal
 * stack) and from a dlopen'ed library that is closed and opened again.
 *   sigdl PLUGIN.so
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t handled;

static void handler(int sig)
{
    (void)sig;
    for (int i = 0; i < 8; i++) {
        char *p = malloc(4096); /* SITE_HANDLER */
        p[0] = 1;
        free(p);
    }
    handled++;
}

int main(int argc, char **argv)
{
    if (argc != 2)
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
        p[0] = 1;
        raise(i & 1 ? SIGUSR1 : SIGUSR2);
        free(p);
    }
    long total = 0;
    for (int round = 0; round < 2; round++) {
        void *h = dlopen(argv[1], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        long (*run)(long) = (long (*)(long))dlsym(h, "plugin_run");
        if (!run)
            return 1;
        total += run(4L << 20);
        dlclose(h);
    }
    printf("handled %d signals, plugin allocated %ld bytes\n", (int)handled, total);
    return handled == 2000 ? 0 : 1;
}
