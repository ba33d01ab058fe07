/*
 * dlthreads.c - three threads allocate while a fourth opens and closes two
 * plugins alternately, 300 times (each run of a plugin allocates 64 KiB in
 * it): dlclose and the remapping of a closed library's place race with
 * sampling threads.
 *   dlthreads PLUGIN.so PLUGIN2.so
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *paths[2];
static int stop;

static void *alloc_loop(void *arg)
{
    long sum = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        char *p = malloc(200 + (size_t)((long)arg * 37 % 800));
        p[0] = 1;
        sum += p[0];
        free(p);
    }
    return (void *)sum;
}

static void *plugin_loop(void *arg)
{
    (void)arg;
    long total = 0;
    for (int i = 0; i < 300; i++) {
        void *h = dlopen(paths[i & 1], RTLD_NOW);
        long (*run)(long) = h ? (long (*)(long))dlsym(h, "plugin_run") : NULL;
        if (!run) {
            fprintf(stderr, "dlopen %s: %s\n", paths[i & 1], dlerror());
            exit(1);
        }
        total += run(64 * 1024);
        dlclose(h);
    }
    return (void *)total;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    paths[0] = argv[1];
    paths[1] = argv[2];
    pthread_t a[3], p;
    for (long i = 0; i < 3; i++)
        pthread_create(&a[i], NULL, alloc_loop, (void *)i);
    pthread_create(&p, NULL, plugin_loop, NULL);
    void *r;
    pthread_join(p, &r);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 3; i++)
        pthread_join(a[i], NULL);
    printf("plugins allocated %ld bytes\n", (long)r);
    return 0;
}
