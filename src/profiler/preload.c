/*
 * preload.c - the malloc family, interposed when libmemtrace_preload.so is
 * preloaded (or linked). Unsampled blocks come from the next definitions
 * of the malloc family after this library's (glibc's, or an allocator's the
 * program is linked with: see `next` below); sampled blocks come from the
 * profiler's region (region.c).
 *
 * The unsampled path of an allocation is one subtraction from the thread's
 * byte countdown (initial-exec TLS), a branch and a tail call through a
 * pointer to the next malloc.
 * When the countdown runs out the sampling decision is taken before the
 * block exists, so a sampled block can be put in the region; free,
 * realloc and malloc_usable_size then tell the two kinds apart with one
 * range compare, and a free of an unsampled block reads two words of
 * memory that every free shares. Everything else is in session.c.
 *
 * The profiler's own allocations (made while the thread is inside it,
 * mt_thread.busy) also take the slow path, as the countdown is parked far
 * below zero meanwhile (mt_enter), and get blocks of the region marked as
 * the profiler's: the program's heap is the program's alone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profiler/profiler_int.h"
#include "profiler/unwind.h"

#define EXPORT __attribute__((visibility("default")))
#define SLOW __attribute__((noinline, cold))
/* malloc's and free's fast paths, each on a cache line of its own: where
 * the linker happened to put them, across a line, binary_trees took 2%
 * longer at the default rate (442 against 434 ms, median of 21 runs) with
 * the same instructions. */
#define FASTPATH __attribute__((aligned(64)))
/* The frame pointer of a SLOW function, where the unwinding of a sample
 * starts (sampled_block): only there, as it makes the function set up a
 * frame pointer, three instructions that the fast paths do without. The
 * function must still be there while the callee unwinds: it uses the
 * callee's result before returning, so that the call cannot become a tail
 * call (which pops the frame first; the callee's pushes then overwrite the
 * saved frame pointer that the unwinding starts from). */
#define FRAME __builtin_frame_address(0)

__thread mt_thread mt_self __attribute__((tls_model("initial-exec")));

/* ---- where unsampled blocks go ------------------------------------------
 * The next definitions of the malloc family after this library's: glibc's,
 * or those of an allocator the program is linked with (libjemalloc,
 * libtcmalloc), whose blocks must go back to it. Sending every unsampled
 * block to glibc (its __libc_* functions, as this library did) crashed a
 * C++ program linked with jemalloc: jemalloc's operator new, which is not
 * interposed, allocated, and libstdc++'s delete called free, which went to
 * glibc ("free(): invalid pointer"). They are looked up with dlsym at the
 * first call of any of them, which comes before the process has any block
 * (the main thread's first allocation takes the slow path, and ld.so
 * allocates only after every object is relocated): looked up later (in
 * the constructor) the blocks allocated before would go back to the wrong
 * allocator. Until then the pointers hold stubs that look them up. */
typedef struct next_fns {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*memalign)(size_t, size_t);
    size_t (*usable)(void *);
} next_fns;

void *memalign(size_t align, size_t n);     /* (defined below) */
size_t malloc_usable_size(void *p);

static void *first_malloc(size_t n);
static void first_free(void *p);
static void *first_calloc(size_t n, size_t m);
static void *first_realloc(void *p, size_t n);
static void *first_memalign(size_t a, size_t n);
static size_t first_usable(void *p);
static next_fns next = {first_malloc, first_free, first_calloc, first_realloc,
                        first_memalign, first_usable};

/* Without a next malloc_usable_size (glibc always has one). */
static size_t no_usable(void *p)
{
    (void)p;
    return 0;
}

/* glibc's, for the calls made while the others are looked up (by dlsym
 * itself, which allocates only to report a failure, or by another thread),
 * and for any function dlsym does not find. */
static const next_fns glibc_fns = {__libc_malloc, __libc_free, __libc_calloc,
                                   __libc_realloc, __libc_memalign, no_usable};

/* dlsym(RTLD_NEXT, name), or fallback when there is none (or this library's
 * own, which RTLD_NEXT never gives). */
static void *next_or(const char *name, void *fallback, void *own)
{
    void *f = dlsym(RTLD_NEXT, name);
    return f && f != own ? f : fallback;
}

/* The functions to call: `next`, looked up at the first call (0: not yet,
 * 1: being looked up, 2: done), or glibc's while that is going on. */
static int next_state;
static const next_fns *resolve(void)
{
    int st = 0;
    if (!__atomic_compare_exchange_n(&next_state, &st, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return st == 2 ? &next : &glibc_fns;
    mt_thread *t = &mt_self;
    mt_enter(t);
    next_fns n;
    n.malloc = (void *(*)(size_t))next_or("malloc", (void *)glibc_fns.malloc, (void *)malloc);
    n.free = (void (*)(void *))next_or("free", (void *)glibc_fns.free, (void *)free);
    n.calloc = (void *(*)(size_t, size_t))next_or("calloc", (void *)glibc_fns.calloc,
                                                  (void *)calloc);
    n.realloc = (void *(*)(void *, size_t))next_or("realloc", (void *)glibc_fns.realloc,
                                                   (void *)realloc);
    n.memalign = (void *(*)(size_t, size_t))next_or("memalign", (void *)glibc_fns.memalign,
                                                    (void *)memalign);
    n.usable = (size_t (*)(void *))next_or("malloc_usable_size", (void *)glibc_fns.usable,
                                           (void *)malloc_usable_size);
    __atomic_store_n(&next.malloc, n.malloc, __ATOMIC_RELAXED);
    __atomic_store_n(&next.free, n.free, __ATOMIC_RELAXED);
    __atomic_store_n(&next.calloc, n.calloc, __ATOMIC_RELAXED);
    __atomic_store_n(&next.realloc, n.realloc, __ATOMIC_RELAXED);
    __atomic_store_n(&next.memalign, n.memalign, __ATOMIC_RELAXED);
    __atomic_store_n(&next.usable, n.usable, __ATOMIC_RELAXED);
    __atomic_store_n(&next_state, 2, __ATOMIC_RELEASE);
    mt_leave(t);
    return &next;
}

static void *first_malloc(size_t n) { return resolve()->malloc(n); }
static void first_free(void *p) { resolve()->free(p); }
static void *first_calloc(size_t n, size_t m) { return resolve()->calloc(n, m); }
static void *first_realloc(void *p, size_t n) { return resolve()->realloc(p, n); }
static void *first_memalign(size_t a, size_t n) { return resolve()->memalign(a, n); }
static size_t first_usable(void *p) { return resolve()->usable(p); }

/* Countdown gone below 0 for an allocation of `bytes` aligned to `align`:
 * a block of the region if the allocation is sampled, else NULL (the
 * caller asks the next malloc). resize: the sampled block being resized, if
 * any, returned itself when the new size is sampled and fits in it. Inlined
 * into its callers, and the backtrace taken here, from `frame` outwards:
 * the frame pointer of the SLOW function that the exported one called
 * (FRAME below), so that the frames of ours inside it are not unwound
 * (unwind.h, mt_unwind). */
static inline __attribute__((always_inline)) void *
sampled_block(const void *frame, size_t bytes, size_t align, int zero, void *resize)
{
    int64_t samples = mt_sample_draw(bytes);
    if (!samples)
        return NULL;
    /* The sample's work must not show in errno, which a malloc that
     * succeeds leaves alone: unwinding reads libunwind's pipe (EAGAIN), a
     * flush writes the trace. */
    int saved_errno = errno;
    uint64_t codes[MT_MAX_FRAMES];
    size_t n = mt_unwind(frame, codes, MT_MAX_FRAMES);
    void *p;
    mt_block_meta m;
    if (resize && bytes <= mt_region_usable(resize)) {
        mt_sample_resize(resize, bytes, samples, codes, n);
        p = resize;
    } else if ((p = mt_region_alloc(bytes, align, zero, 0, &m)) != NULL) {
        mt_sample_record(&m, bytes, samples, codes, n);
    } else {
        mt_sample_drop();       /* region full: the sample is lost */
    }
    errno = saved_errno;
    return p;
}

/* An allocation of the profiler itself (the thread is busy): a block of
 * the region marked as its own, or NULL (the caller asks the next malloc)
 * before the region exists or when a signal handler interrupted the
 * region's code. */
static void *own_block(size_t bytes, size_t align, int zero)
{
    mt_thread *t = &mt_self;
    t->countdown = MT_BUSY_COUNTDOWN;   /* parked again, not drifting */
    if (t->in_region)
        return NULL;
    return mt_region_alloc(bytes, align, zero, 1, NULL);
}

/* The slow path's block: the profiler's own while the thread is inside it,
 * else a sampled one; NULL: the caller asks the next malloc. */
static void *slow_block(const void *frame, size_t bytes, size_t align, int zero)
{
    return mt_self.busy ? own_block(bytes, align, zero)
                        : sampled_block(frame, bytes, align, zero, NULL);
}

/* Count an allocation; nonzero: the countdown ran out (slow path). */
static inline int count(size_t bytes)
{
    mt_thread *t = &mt_self;
    t->countdown -= (int64_t)bytes;
    return MT_UNLIKELY(t->countdown < 0);   /* (see mt_thread.countdown) */
}

SLOW static void *malloc_slow(size_t n)
{
    void *p = slow_block(FRAME, n, 16, 0);
    return p ? p : next.malloc(n);
}

/* A block of the profiler's own given back (by the profiler, or by the
 * program when one passed to it: the loader's data of a library that
 * libdw opened, say). Inside the profiler, so that a signal handler that
 * interrupts the region's code takes nothing from it. */
static void free_own(void *p)
{
    mt_thread *t = &mt_self;
    mt_enter(t);
    mt_region_free_own(p);
    mt_leave(t);
}

SLOW static void free_slow(void *p)
{
    int saved_errno = errno;    /* (free leaves errno alone: POSIX 2024) */
    mt_block_meta m;
    int kind = mt_region_kind(p, &m);
    if (kind == MT_BLOCK_SAMPLED)
        mt_free_sampled(p, &m);
    else if (kind == MT_BLOCK_OWN)
        free_own(p);
    /* else: the program's bug, left alone */
    errno = saved_errno;
}

EXPORT FASTPATH void *malloc(size_t n)
{
    if (count(n))
        return malloc_slow(n);
    return next.malloc(n);
}

EXPORT FASTPATH void free(void *p)
{
    if (MT_UNLIKELY(mt_region_contains(p)))
        free_slow(p);
    else
        next.free(p);
}

SLOW static void *calloc_slow(size_t n, size_t m, size_t bytes)
{
    void *p = slow_block(FRAME, bytes, 16, 1);
    return p ? p : next.calloc(n, m);
}

EXPORT void *calloc(size_t n, size_t m)
{
    size_t bytes;
    if (MT_UNLIKELY(__builtin_mul_overflow(n, m, &bytes))) {
        errno = ENOMEM;
        return NULL;
    }
    if (count(bytes))
        return calloc_slow(n, m, bytes);
    return next.calloc(n, m);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (MT_UNLIKELY(mt_region_contains(p))) {
        /* The program may now use the whole block (redis's sds strings
         * do), so a realloc must copy all of it, not only what was asked. */
        size_t n = mt_region_usable(p);
        mt_region_set_size(p, n);
        return n;
    }
    return next.usable(p);
}

/* One of the profiler's own blocks resized: in place while it fits (blocks
 * are of fixed sizes), else moved to a new allocation (the profiler's own
 * when the profiler asks, which it nearly always is). */
static void *realloc_own(void *p, size_t n)
{
    if (n && n <= mt_region_usable(p)) {
        mt_region_set_size(p, n);
        return p;
    }
    size_t old = mt_region_size(p);
    void *q = n ? malloc(n) : NULL;
    if (n && !q)
        return NULL;
    if (q)
        memcpy(q, p, old);
    free_own(p);
    return q;
}

/* A block of the region resized. A sampled one: the new size is a new
 * allocation of n bytes, sampled or not. Sampled, and within the block's
 * usable size (blocks come in size classes), it stays where it is: the old
 * object is collected and the new one allocated at the same address.
 * Otherwise the contents move to a new block (of the region if sampled,
 * else the next malloc's) and the old block is collected and given back; if
 * no new block can be had the old one stays, still sampled. Only the bytes asked
 * for are copied, not the block's rounded size. */
SLOW static void *realloc_region(void *p, size_t n)
{
    mt_block_meta m;
    int kind = mt_region_kind(p, &m);
    if (kind == MT_BLOCK_NONE) {
        errno = EINVAL;         /* the program's bug: no block to resize */
        return NULL;
    }
    if (kind == MT_BLOCK_OWN)
        return realloc_own(p, n);
    int saved_errno = errno;    /* (as in free_slow) */
    if (n == 0) {
        mt_free_sampled(p, &m); /* what glibc's realloc(p, 0) does */
        errno = saved_errno;
        return NULL;
    }
    void *q = count(n) && !mt_self.busy ? sampled_block(FRAME, n, 16, 0, p) : NULL;
    if (q == p)
        return p;
    if (!q)
        q = next.malloc(n);
    if (!q)
        return NULL;
    size_t old = mt_region_size(p);
    memcpy(q, p, old < n ? old : n);
    mt_free_sampled(p, &m);
    errno = saved_errno;
    return q;
}

/* An unsampled block resized into a sampled one. (An unsampled block the
 * profiler itself resizes, one from before the region existed, stays with
 * the next malloc.) */
SLOW static void *realloc_slow(void *p, size_t n)
{
    void *q = mt_self.busy ? NULL : sampled_block(FRAME, n, 16, 0, NULL);
    if (!q)
        return next.realloc(p, n);
    size_t old = next.usable(p);
    memcpy(q, p, old < n ? old : n);
    next.free(p);
    return q;
}

EXPORT void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (MT_UNLIKELY(mt_region_contains(p)))
        return realloc_region(p, n);
    if (n == 0) {
        next.free(p);
        return NULL;
    }
    if (count(n))
        return realloc_slow(p, n);
    return next.realloc(p, n);
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

SLOW static void *aligned_slow(size_t align, size_t n)
{
    void *p = slow_block(FRAME, n, align < 16 ? 16 : align, 0);
    return p ? p : next.memalign(align, n);
}

/* The aligned allocations: align is a power of two (glibc rounds others
 * up, and so do we). */
static void *aligned(size_t align, size_t n)
{
    if (align & (align - 1)) {
        size_t a = 1;
        while (a < align && a)
            a <<= 1;
        if (!a) {
            errno = EINVAL;
            return NULL;
        }
        align = a;
    }
    if (count(n))
        return aligned_slow(align, n);
    return next.memalign(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    return aligned(align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    return aligned(align, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = aligned(align, n);
    if (!p)
        return ENOMEM;          /* (errno is ENOMEM too, as glibc leaves it) */
    *out = p;
    return 0;
}

EXPORT void *valloc(size_t n)
{
    return aligned((size_t)getpagesize(), n);
}

EXPORT void *pvalloc(size_t n)
{
    size_t page = (size_t)getpagesize();
    size_t r = (n + page - 1) & ~(page - 1);
    if (r < n || n == 0)
        r = r < n ? SIZE_MAX : page;   /* overflow: let glibc fail */
    return aligned(page, r);
}

/* ---- dlclose ----------------------------------------------------------- */

/* Not the malloc family either: a library unmapped by dlclose changes what
 * return addresses mean (session.c, mt_dlclose). glibc's dlclose is found
 * on first use. (dlopen is not interposed: it finds the caller's search
 * path from its return address, which an interposer would change.) */
EXPORT int dlclose(void *handle)
{
    typedef int (*dlclose_fn)(void *);
    static dlclose_fn real;
    dlclose_fn f = __atomic_load_n(&real, __ATOMIC_RELAXED);
    if (!f) {
        f = (dlclose_fn)(uintptr_t)dlsym(RTLD_NEXT, "dlclose");
        if (!f)
            return -1;
        __atomic_store_n(&real, f, __ATOMIC_RELAXED);
    }
    return mt_dlclose(f, handle);
}

/* ---- sigaltstack -------------------------------------------------------- */

/* The thread's alternate signal stack, kept in its mt_thread so that the
 * sampled path tells in one compare whether it runs there (session.c's
 * on_alt_stack: too small a place for unwinding). glibc's sigaltstack is
 * the bare system call. Signals are blocked meanwhile, so that no handler
 * runs on the new stack while the old range is kept. A new thread has
 * none, as the kernel gives it none; a stack set with the raw system call
 * is not seen. */
EXPORT int sigaltstack(const stack_t *ss, stack_t *old)
{
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before);
    int r = (int)syscall(SYS_sigaltstack, ss, old);
    int err = errno;
    if (r == 0 && ss) {
        mt_thread *t = &mt_self;
        int off = ss->ss_flags & SS_DISABLE;
        t->alt_lo = off ? 0 : (uintptr_t)ss->ss_sp;
        t->alt_hi = off ? 0 : (uintptr_t)ss->ss_sp + ss->ss_size;
    }
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    errno = err;
    return r;
}

/* ---- pipe2 ------------------------------------------------------------- */

/* Not the malloc family: libunwind's memory-validation pipe, made while the
 * thread is inside the profiler, goes out of the program's way (fds.c);
 * the program's own pipes are untouched. glibc's pipe2 is the bare system
 * call (not a cancellation point), made here directly: glibc exports no
 * other name for it. */
EXPORT int pipe2(int fds[2], int flags)
{
    int r = (int)syscall(SYS_pipe2, fds, flags);
    if (r == 0 && mt_self.busy) {
        fds[0] = mt_fd_high(fds[0]);
        fds[1] = mt_fd_high(fds[1]);
    }
    return r;
}
