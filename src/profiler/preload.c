/*
 * preload.c - the malloc family, interposed when libmemtrace_preload.so is
 * preloaded (or linked). Every entry point forwards to glibc's own
 * __libc_* functions, so no dlsym bootstrap is needed and the library
 * works from the first allocation of the process on.
 *
 * The unsampled path of an allocation is one subtraction from the thread's
 * byte countdown (initial-exec TLS) and a branch; free asks the filter in
 * front of the lock-free table of sampled pointers (one hot load), and the
 * table only when the filter says maybe. Everything else is in session.c (mt_sample).
 *
 * malloc_usable_size is not interposed: every block, sampled or not, is a
 * glibc block, so glibc's own answers for all of them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "profiler/profiler_int.h"

#define EXPORT __attribute__((visibility("default")))

__thread mt_thread mt_self __attribute__((tls_model("initial-exec")));

static inline void *counted(void *p, size_t bytes)
{
    mt_thread *t = &mt_self;
    t->countdown -= (int64_t)bytes;
    if (MT_UNLIKELY(t->countdown <= 0))
        mt_sample(p, bytes, 0);
    return p;
}

/* malloc's slow path: the countdown already went to <= 0. */
__attribute__((noinline)) static void *malloc_slow(size_t n)
{
    void *p = __libc_malloc(n);
    mt_sample(p, n, 0);
    return p;
}

static inline void forget(void *p)
{
    if (MT_UNLIKELY(mt_ptrtable_maybe((uintptr_t)p)) &&
        mt_ptrtable_contains((uintptr_t)p))
        mt_collect_ptr(p);
}

/* free's slow path: the filter said maybe. */
__attribute__((noinline)) static void free_slow(void *p)
{
    if (mt_ptrtable_contains((uintptr_t)p))
        mt_collect_ptr(p);
    __libc_free(p);
}

/* Counted before the call, so the common case is a tail call to glibc. */
EXPORT void *malloc(size_t n)
{
    mt_thread *t = &mt_self;
    t->countdown -= (int64_t)n;
    if (MT_LIKELY(t->countdown > 0))
        return __libc_malloc(n);
    return malloc_slow(n);
}

EXPORT void free(void *p)
{
    if (MT_UNLIKELY(mt_ptrtable_maybe((uintptr_t)p)))
        free_slow(p);
    else
        __libc_free(p);
}

EXPORT void *calloc(size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes))
        bytes = SIZE_MAX;
    return counted(__libc_calloc(n, m), bytes);
}

/* A sampled block that realloc moves or frees is collected first (glibc may
 * hand its address to another thread as soon as it is released); the
 * result is a new allocation of n bytes. If glibc then fails, the old
 * block lives on untracked. */
EXPORT void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    forget(p);
    if (n == 0) {
        __libc_free(p);        /* what glibc's realloc(p, 0) does */
        return NULL;
    }
    return counted(__libc_realloc(p, n), n);
}

EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
}

EXPORT void *memalign(size_t align, size_t n)
{
    return counted(__libc_memalign(align, n), n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    return counted(__libc_memalign(align, n), n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    int saved = errno;
    void *p = __libc_memalign(align, n);
    if (!p) {
        errno = saved;
        return ENOMEM;
    }
    *out = counted(p, n);
    return 0;
}

EXPORT void *valloc(size_t n)
{
    return counted(__libc_valloc(n), n);
}

EXPORT void *pvalloc(size_t n)
{
    return counted(__libc_pvalloc(n), n);
}
