/*
 * mmapfail.c - a preload shim for profiler.threads: every mmap of exactly
 * $MT_TEST_FAIL_MMAP bytes fails (ENOMEM), all others go to the kernel.
 * Given the size of the profiler's event stores, it makes every drain find
 * no spare store, so each buffer is written in place, still locked (the
 * fallback of session.c's drain_all). At exit it prints to stderr how many
 * mmaps it failed, so that the test knows the fallback ran.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t fail_len;
static long failed;

__attribute__((constructor)) static void init(void)
{
    const char *s = getenv("MT_TEST_FAIL_MMAP");
    fail_len = s ? (size_t)strtoull(s, NULL, 10) : 0;
}

__attribute__((destructor)) static void report(void)
{
    if (fail_len)
        fprintf(stderr, "mmapfail: %ld mmaps of %zu bytes failed\n",
                __atomic_load_n(&failed, __ATOMIC_RELAXED), fail_len);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (fail_len && len == fail_len) {
        __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
