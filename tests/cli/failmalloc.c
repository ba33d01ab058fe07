/*
 * failmalloc.c - an LD_PRELOAD library for nomem_test.sh: makes one
 * allocation of the process fail, or every one from it on, so that each
 * out-of-memory path of a command can be reached in turn.
 *
 *   MT_FAIL_AT=K      the K-th call (from 1) of malloc, calloc, realloc,
 *                     posix_memalign or aligned_alloc returns NULL (ENOMEM)
 *   MT_FAIL_FROM=1    ... and every call after it too
 *   MT_FAIL_COUNT=F   at exit, write the number of calls made to file F
 *   MT_FAIL_GETRANDOM=F  getrandom(2) fails (ENOSYS), as on a kernel
 *                     without it (the tools' hash keys then come from the
 *                     clock: util/hash.h, hash_random); at exit, the number
 *                     of calls that failed goes to file F
 *
 * The calls go to glibc's own entry points (__libc_malloc...), so nothing
 * is looked up with dlsym, which itself allocates. Not for sanitizer
 * builds, whose runtimes own malloc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);

static long calls, fail_at = -1, getrandom_failed;
static int fail_from, started;

/* Whether this call is to fail (counting it). */
static int failing(void)
{
    if (!started) {            /* (getenv allocates nothing) */
        const char *at = getenv("MT_FAIL_AT");
        fail_at = at ? atol(at) : -1;
        fail_from = getenv("MT_FAIL_FROM") != NULL;
        started = 1;
    }
    calls++;
    if (calls == fail_at || (fail_from && fail_at > 0 && calls > fail_at)) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return failing() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    return failing() ? NULL : __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    return failing() ? NULL : __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (failing())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    return failing() ? NULL : __libc_memalign(align, n);
}

ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
    if (getenv("MT_FAIL_GETRANDOM")) {
        getrandom_failed++;
        errno = ENOSYS;
        return -1;
    }
    return syscall(SYS_getrandom, buf, n, flags);
}

__attribute__((destructor)) static void write_count(void)
{
    long n[2] = {calls, getrandom_failed}; /* (before fopen's allocations) */
    const char *path[2] = {getenv("MT_FAIL_COUNT"), getenv("MT_FAIL_GETRANDOM")};
    for (int i = 0; i < 2; i++) {
        FILE *f = path[i] ? fopen(path[i], "w") : NULL;
        if (f) {
            fprintf(f, "%ld\n", n[i]);
            fclose(f);
        }
    }
}
