/*
 * blocks.c - the malloc family's contract, checked under the profiler
 * where sampled blocks come from its own region and unsampled ones from
 * glibc (run at rate 1, where every block is sampled, and at lower rates,
 * where the two kinds mix): sizes and contents, malloc_usable_size,
 * alignment of memalign / posix_memalign / aligned_alloc / valloc /
 * pvalloc, sizes and alignments they must refuse or round up as glibc
 * does, many blocks live at once, calloc zeroing reused blocks (large
 * ones kept with their pages or given back), realloc keeping the contents
 * whichever kind the old and new blocks are, blocks freed by other threads
 * and by a forked child. With --all-sampled (run at rate 1), also that the
 * profiler's own allocations stay out of glibc's heap: with every block of
 * the program in the region, glibc's in-use bytes must not move while the
 * profiler unwinds, symbolizes and writes, and that a realloc within a
 * block's size stays in place. Prints "blocks: ok" and exits 0,
 * or names the first failure and exits 1.
 *   profiler_blocks [--all-sampled]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int fails;
#define CHECK(c, ...)                                                   \
    do {                                                                \
        if (!(c) && fails++ < 10) {                                     \
            fprintf(stderr, "blocks: line %d: ", __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                               \
            fputc('\n', stderr);                                        \
        }                                                               \
    } while (0)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7);
}

static int holds(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7))
            return 0;
    return 1;
}

static const size_t sizes[] = {0, 1, 7, 8, 16, 17, 24, 100, 1000, 4095, 4096, 4097,
                               32768, 40000, 65536, 65537, 300000, 2000000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void sizes_and_usable(void)
{
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < NSIZES; i++) {
            size_t n = sizes[i];
            unsigned char *p = malloc(n);
            CHECK(p, "malloc(%zu) failed", n);
            if (!p)
                continue;
            CHECK(((uintptr_t)p & 15) == 0, "malloc(%zu) = %p not 16-aligned", n, (void *)p);
            CHECK(malloc_usable_size(p) >= n, "usable %zu < %zu", malloc_usable_size(p), n);
            fill(p, malloc_usable_size(p), (unsigned)n);
            CHECK(holds(p, malloc_usable_size(p), (unsigned)n), "contents of %zu", n);
            free(p);
        }
    CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
    free(NULL);
}

static void alignment(void)
{
    for (size_t a = 1; a <= ((size_t)1 << 21); a <<= 1)
        for (size_t i = 0; i < NSIZES; i++) {
            size_t n = sizes[i] ? sizes[i] : 1;
            unsigned char *p = memalign(a, n);
            CHECK(p && ((uintptr_t)p & (a - 1)) == 0, "memalign(%zu, %zu) = %p", a, n, (void *)p);
            if (p) {
                fill(p, n, 3);
                free(p);
            }
            p = aligned_alloc(a, n);
            CHECK(p && ((uintptr_t)p & (a - 1)) == 0, "aligned_alloc(%zu, %zu) = %p", a, n, (void *)p);
            free(p);
            void *q = NULL;
            int r = posix_memalign(&q, a, n);
            if (a < sizeof(void *)) {
                CHECK(r != 0, "posix_memalign(%zu) accepted", a);
            } else {
                CHECK(r == 0 && ((uintptr_t)q & (a - 1)) == 0, "posix_memalign(%zu, %zu) = %p", a, n, q);
                if (!r) {
                    CHECK(malloc_usable_size(q) >= n, "usable of aligned");
                    free(q);
                }
            }
        }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *v = valloc(100), *pv = pvalloc(100);
    CHECK(v && ((uintptr_t)v & (page - 1)) == 0, "valloc");
    CHECK(pv && ((uintptr_t)pv & (page - 1)) == 0 && malloc_usable_size(pv) >= page, "pvalloc");
    free(v);
    free(pv);
}

/* Arguments the malloc family must refuse, or fix, as glibc does: sizes
 * that overflow or cannot be had, alignments that are not powers of two
 * (memalign rounds them up, posix_memalign refuses them). At rate 1 every
 * one of these calls takes the sampled path. (Called through volatile
 * pointers: a compiler may fold a failure it can see, or drop a block
 * nothing reads.) */
static void bad_arguments(void)
{
    void *(*volatile malloc_fn)(size_t) = malloc;
    void *(*volatile realloc_fn)(void *, size_t) = realloc;
    void *(*volatile reallocarray_fn)(void *, size_t, size_t) = reallocarray;
    void *(*volatile memalign_fn)(size_t, size_t) = memalign;
    void *(*volatile pvalloc_fn)(size_t) = pvalloc;
    int (*volatile posix_memalign_fn)(void **, size_t, size_t) = posix_memalign;
    /* (quarter * 4 wraps around to 4) */
    volatile size_t huge = SIZE_MAX - 4096, half = SIZE_MAX / 2, quarter = SIZE_MAX / 4 + 2;

    errno = 0;
    CHECK(malloc_fn(huge) == NULL && errno == ENOMEM, "malloc of SIZE_MAX - 4096");
    unsigned char *p = malloc(100);
    CHECK(p, "malloc(100)");
    if (p) {
        fill(p, 100, 9);
        errno = 0;
        CHECK(realloc_fn(p, huge) == NULL && errno == ENOMEM, "realloc to SIZE_MAX - 4096");
        CHECK(holds(p, 100, 9), "a failed realloc changed the block");
        errno = 0;
        CHECK(reallocarray_fn(p, quarter, 4) == NULL && errno == ENOMEM, "reallocarray overflow");
        CHECK(holds(p, 100, 9), "a failed reallocarray changed the block");
        free(p);
    }

    unsigned char *q = memalign_fn(24, 100);            /* rounded up to 32 */
    CHECK(q && ((uintptr_t)q & 31) == 0, "memalign(24, 100) = %p", (void *)q);
    free(q);
    errno = 0;
    CHECK(memalign_fn(half + 2, 1) == NULL && errno == EINVAL, "memalign(2^63 + 1)");

    void *r = &r;
    CHECK(posix_memalign_fn(&r, 24, 100) == EINVAL && r == &r, "posix_memalign(24)");
    errno = 0;
    CHECK(posix_memalign_fn(&r, 64, huge) == ENOMEM && r == &r && errno == ENOMEM,
          "posix_memalign(64, SIZE_MAX - 4096)");

    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *pv = pvalloc_fn(0);      /* (glibc's is smaller than a page) */
    CHECK(pv && ((uintptr_t)pv & (page - 1)) == 0, "pvalloc(0)");
    free(pv);
    errno = 0;
    CHECK(pvalloc_fn(huge) == NULL && errno == ENOMEM, "pvalloc(SIZE_MAX - 4096)");
}

static void calloc_zeroes(void)
{
    for (int round = 0; round < 4; round++)
        for (size_t i = 0; i < NSIZES; i++) {
            size_t n = sizes[i];
            unsigned char *p = malloc(n);
            if (p)
                memset(p, 0xa5, malloc_usable_size(p));
            free(p);
            unsigned char *z = calloc(1, n);
            CHECK(z, "calloc(%zu)", n);
            size_t bad = 0;
            for (size_t k = 0; z && k < n; k++)
                bad += z[k] != 0;
            CHECK(bad == 0, "calloc(%zu): %zu bytes not zero", n, bad);
            free(z);
        }
    volatile size_t huge = SIZE_MAX / 2;
    /* (through a pointer: clang may take a calloc whose block is unused as
     * one that succeeded, and drop it) */
    void *(*volatile calloc_fn)(size_t, size_t) = calloc;
    errno = 0;
    CHECK(calloc_fn(huge, 4) == NULL && errno == ENOMEM, "calloc overflow");
}

/* Large blocks freed then taken again by calloc: the region keeps the pages
 * of freed large blocks up to a budget (64 MiB, blocks up to 32 MiB) and
 * gives them back past it; either way calloc must return zeros. 24 blocks
 * of 3 MiB pass the budget, blocks of 40 MiB are never kept. */
static void large_reuse(void)
{
    static const struct { size_t size; int count; } cases[] = {{3u << 20, 24}, {40u << 20, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n = cases[c].size;
        unsigned char *v[24];
        int k, count = cases[c].count;
        for (k = 0; k < count; k++) {
            v[k] = malloc(n);
            CHECK(v[k], "malloc(%zu)", n);
            if (v[k])
                memset(v[k], 0x5a, n);
        }
        for (k = 0; k < count; k++)
            free(v[k]);
        for (k = 0; k < count; k++) {
            v[k] = calloc(n, 1);
            CHECK(v[k], "calloc(%zu) after free", n);
            size_t bad = 0;
            for (size_t i = 0; v[k] && i < n; i++)
                bad += v[k][i] != 0;
            CHECK(bad == 0, "calloc(%zu) of a reused block: %zu bytes not zero", n, bad);
        }
        for (k = 0; k < count; k++)
            free(v[k]);
    }
}

static void reallocs(void)
{
    for (int round = 0; round < 20; round++) {
        size_t n = 1 + (size_t)round * 13;
        unsigned char *p = malloc(n);
        fill(p, n, (unsigned)round);
        /* grow and shrink through both kinds of block */
        static const size_t steps[] = {5, 64, 3000, 100000, 70000, 2000, 40, 1, 500000, 9};
        size_t have = n;
        for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
            size_t m = steps[s];
            unsigned char *q = realloc(p, m);
            CHECK(q, "realloc(%zu)", m);
            if (!q)
                break;
            size_t keep = have < m ? have : m;
            CHECK(holds(q, keep, (unsigned)round), "realloc %zu -> %zu lost contents", have, m);
            fill(q, m, (unsigned)round);
            p = q;
            have = m;
        }
        CHECK(realloc(p, 0) == NULL, "realloc(p, 0)");
        p = realloc(NULL, 100);
        CHECK(p, "realloc(NULL)");
        p = reallocarray(p, 10, 30);
        CHECK(p && malloc_usable_size(p) >= 300, "reallocarray");
        free(p);
    }
}

#define RING 512
static void *ring[RING];

static void *other_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < RING; i++) {       /* frees the main thread's blocks */
        CHECK(holds(ring[i], 64 + (size_t)i, (unsigned)i), "cross-thread contents");
        free(ring[i]);
        ring[i] = malloc(32 + (size_t)i * 3);
    }
    return NULL;
}

static void threads_and_fork(void)
{
    for (int i = 0; i < RING; i++) {
        ring[i] = malloc(64 + (size_t)i);
        fill(ring[i], 64 + (size_t)i, (unsigned)i);
    }
    pthread_t th;
    pthread_create(&th, NULL, other_thread, NULL);
    pthread_join(th, NULL);
    pid_t pid = fork();
    if (pid == 0) {                         /* the child frees the parent's */
        for (int i = 0; i < RING; i++) {
            free(ring[i]);
            ring[i] = malloc(100);
        }
        for (int i = 0; i < RING; i++)
            free(ring[i]);
        exit(fails ? 1 : 0);   /* exit, not _exit: the child's trace is flushed */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed (status %d)", st);
    for (int i = 0; i < RING; i++)
        free(ring[i]);
}

/* Is the profiler tracing this process? (No: the plain run, where the
 * checks of its own behaviour have nothing to check.) */
static int profiling(void)
{
    int (*active)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "mt_profiler_active");
    return active && active();
}

/* Allocations from many stacks, deep and shallow, small and large, with
 * reallocs: enough events for the profiler to drain its buffers, meet new
 * codes, symbolize them and grow its tables. */
static void *nest(int depth, size_t size, void **keep)
{
    if (depth > 0)
        return nest(depth - 1, size + 24, keep);
    void *p = malloc(size);
    if (p) {
        memset(p, 1, size);
        p = realloc(p, size * 2);
        *keep = p;
    }
    return p;
}

static void heap_untouched(void)
{
    if (!profiling())
        return;
    enum { N = 3000 };
    static void *keep[N];
    struct mallinfo2 before = mallinfo2();
    for (int i = 0; i < N; i++)
        nest(i % 61, i % 7 == 0 ? (size_t)70000 + (size_t)i : (size_t)16 + (size_t)i, &keep[i]);
    for (int i = 0; i < N; i++)
        free(keep[i]);
    struct mallinfo2 after = mallinfo2();
    CHECK(after.uordblks == before.uordblks && after.hblkhd == before.hblkhd,
          "glibc's heap moved under the profiler at rate 1: %zu -> %zu bytes in use, "
          "%zu -> %zu mapped", before.uordblks, after.uordblks, before.hblkhd, after.hblkhd);
}

/* Many blocks live at once (at rate 1, 4 to 52 chunks of each size from
 * 256 bytes up): every block distinct (its contents survive the others'
 * filling), then the same again by calloc, from reused blocks: all zero.
 * The region cuts a chunk's blocks one at a time as they are asked for. */
#define NLIVE 5000
static void many_live(void)
{
    static unsigned char *live[NLIVE];
    static const size_t lsize[] = {16, 24, 48, 200, 1000, 4000};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < NLIVE; i++) {
            size_t n = lsize[i % 6];
            live[i] = round ? calloc(1, n) : malloc(n);
            CHECK(live[i], "allocation %zu of %zu bytes failed", i, n);
            if (!live[i])
                continue;
            size_t bad = 0;
            for (size_t k = 0; round && k < n; k++)
                bad += live[i][k] != 0;
            CHECK(bad == 0, "calloc(1, %zu) #%zu: %zu bytes not zero", n, i, bad);
            fill(live[i], n, (unsigned)i);
        }
        for (size_t i = 0; i < NLIVE; i++) {
            CHECK(!live[i] || holds(live[i], lsize[i % 6], (unsigned)i),
                  "block %zu (%zu bytes) overwritten", i, lsize[i % 6]);
            free(live[i]);
        }
    }
}

/* Every block sampled: a realloc within the block's size class stays
 * in place (the old object collected, the new allocated at the same
 * address), one past it moves, and the contents follow either way. */
static void resize_in_place(void)
{
    if (!profiling())
        return;
    unsigned char *p = malloc(3000);
    CHECK(p, "malloc(3000)");
    if (!p)
        return;
    fill(p, 3000, 5);
    size_t room = malloc_usable_size(p);
    unsigned char *q = realloc(p, 1000);
    CHECK(q == p, "realloc(3000 -> 1000) of a sampled block moved it");
    q = realloc(q, room);
    CHECK(q == p, "realloc(1000 -> %zu) within the block moved it", room);
    unsigned char *r = realloc(q, room + 1);
    CHECK(r && r != p, "realloc past the block's size stayed in place");
    unsigned char want[1000];
    fill(want, sizeof want, 5);
    CHECK(r && memcmp(r, want, sizeof want) == 0, "contents lost in resizes");
    free(r);
    /* Bytes past the size asked for, written after malloc_usable_size said
     * they may be, survive a realloc that moves the block. */
    p = malloc(100);
    if (!p)
        return;
    room = malloc_usable_size(p);
    fill(p, room, 9);
    q = realloc(p, room * 4);
    unsigned char *w = malloc(room);
    if (q && w) {
        fill(w, room, 9);
        CHECK(memcmp(q, w, room) == 0, "bytes past the size asked for lost by realloc");
    }
    free(w);
    free(q);
}

/* Every block sampled: a free of a pointer inside a sampled block (the
 * program's bug; glibc would abort) is left alone: the block keeps its
 * contents and the pointer never comes back from malloc. */
static void free_inside(void)
{
    if (!profiling())
        return;
    unsigned char *p = malloc(1000);
    if (!p)
        return;
    fill(p, 1000, 3);
    void (*volatile release)(void *) = free;    /* (no -Wfree-nonheap-object) */
    release(p + 16);
    CHECK(holds(p, 1000, 3), "a free inside a sampled block changed it");
    void *q[40];
    for (int i = 0; i < 40; i++) {
        q[i] = malloc(1000);
        CHECK(q[i] != p + 16, "a pointer freed inside a block came back from malloc");
    }
    for (int i = 0; i < 40; i++)
        free(q[i]);
    free(p);
}

/* errno, read through a volatile: clang takes malloc and free for
 * functions that leave errno alone and would fold the tests below. */
#define ERRNO (*(volatile int *)&errno)

/* errno as a successful malloc, calloc, realloc or free leaves it: the
 * profiler's work for a sampled block (unwinding reads a pipe, a flush
 * writes) must not show. */
static void errno_kept(void)
{
    for (int i = 0; i < 2000; i++) {
        size_t n = 16 + (size_t)(i % 50) * 40;
        ERRNO = 77;
        void *p = i % 2 ? malloc(n) : calloc(1, n);
        CHECK(p && ERRNO == 77, "errno %d after the allocation of %zu bytes", ERRNO, n);
        ERRNO = 77;
        void *q = realloc(p, n * 3);
        CHECK(q && ERRNO == 77, "errno %d after realloc", ERRNO);
        ERRNO = 77;
        free(q ? q : p);
        CHECK(ERRNO == 77, "errno %d after free", ERRNO);
    }
}

/* Sizes no machine of ours can give: NULL and ENOMEM, at once (one draw
 * per sample took hours for 2^44 bytes at rate 1). Then sizes the kernel
 * may or may not give, printed: the test compares the output with a run
 * without the profiler, where glibc's mmap meets the kernel's overcommit
 * check (the region's reserve escapes it unless the profiler asks). */
static void huge_sizes(void)
{
    /* (through a volatile: clang may drop an allocation whose pointer is
     * only tested and freed, and take it for a success) */
    void *volatile p;
    for (int k = 44; k <= 56; k += 4) {
        ERRNO = 0;
        p = malloc((size_t)1 << k);
        CHECK(!p && ERRNO == ENOMEM, "malloc(2^%d): %p, errno %d", k, p, ERRNO);
        free(p);
        p = calloc((size_t)1 << (k - 4), 16);
        CHECK(!p && ERRNO == ENOMEM, "calloc(2^%d, 16): %p, errno %d", k - 4, p, ERRNO);
        free(p);
    }
    for (int k = 36; k <= 40; k += 4) {
        p = malloc((size_t)1 << k);
        printf("malloc(2^%d): %s\n", k, p ? "a block" : "NULL");
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--all-sampled") == 0) {
        heap_untouched();
        resize_in_place();
        free_inside();
    }
    sizes_and_usable();
    alignment();
    bad_arguments();
    calloc_zeroes();
    many_live();
    large_reuse();
    reallocs();
    threads_and_fork();
    errno_kept();
    huge_sizes();
    if (fails) {
        printf("blocks: %d failures\n", fails);
        return 1;
    }
    printf("blocks: ok\n");
    return 0;
}
