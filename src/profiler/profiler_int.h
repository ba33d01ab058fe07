/*
 * profiler_int.h - what the pieces of the native heap profiler share
 * (libmemtrace_preload.so): the per-thread sampler state, the table of
 * sampled live pointers, the unwinder, the symbolizer and the session.
 * Nothing here is exported from the library (-fvisibility=hidden).
 */
#ifndef MT_PROFILER_INT_H
#define MT_PROFILER_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/memtrace.h"

#define MT_HIDDEN __attribute__((visibility("hidden")))
#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- sampler.c: geometric draws (spec 10.2) ------------------------------ */

/* Per-thread state. It lives in initial-exec TLS (a GNU extension: the
 * fast path of malloc is one %fs-relative subtraction, no __tls_get_addr
 * call); a fresh thread starts with countdown 0, so its first allocation
 * takes the slow path, which seeds it. */
typedef struct mt_thread {
    int64_t countdown;      /* bytes until the next sample                  */
    uint64_t rng;           /* xorshift64* state (0 = not seeded)           */
    uint32_t epoch;         /* session the countdown was drawn for          */
    int busy;               /* re-entrancy guard: inside the profiler       */
    uintptr_t stack_lo, stack_hi;  /* the thread's own stack (0: unknown)   */
} mt_thread;

extern __thread mt_thread mt_self
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Coefficient c of spec 10.2 for rate lambda: 1/log1p(-lambda), 0 if 1. */
MT_HIDDEN double mt_sampler_coef(double rate);
/* One geometric draw (>= 1) from 30 random bits of *rng (seeded if 0). */
MT_HIDDEN int64_t mt_sampler_draw(uint64_t *rng, double coef);
/* The reference's log approximation of ln(y / 2^31), y = 2n+1 (10.2). */
MT_HIDDEN double mt_sampler_log_approx(double y);
/* A fresh seed from getrandom(), or time, address and thread id. */
MT_HIDDEN uint64_t mt_sampler_seed(void);

/* ---- ptrtable.c: sampled live pointers ----------------------------------- */

/* In front of the table, an 8192-bit filter (1 KiB: it stays in the L1
 * cache of a malloc-heavy program, where the table would not): a clear bit
 * means "certainly not sampled", so nearly every free costs a hash and one
 * load of a hot line. Bits are set at insert and dropped when the filter
 * is rebuilt (into the other buffer) from the table; the generation count
 * makes a reader that saw a rebuild answer "maybe". */
#define MT_FILTER_BITS 13
typedef struct mt_ptrfilter {
    _Atomic unsigned gen;
    _Atomic(_Atomic uint64_t *) bits;
} mt_ptrfilter;
extern mt_ptrfilter mt_filter MT_HIDDEN;

/* The address bits above glibc's 16-byte alignment, unhashed: a multiply
 * would add its latency to every free. */
static inline size_t mt_filter_index(uintptr_t a)
{
    return (size_t)((a >> 4) & ((1u << MT_FILTER_BITS) - 1));
}

/* 0: addr is certainly not in the table; 1: look in the table. */
static inline int mt_ptrtable_maybe(uintptr_t addr)
{
    unsigned g = atomic_load_explicit(&mt_filter.gen, memory_order_acquire);
    _Atomic uint64_t *b = atomic_load_explicit(&mt_filter.bits, memory_order_acquire);
    size_t i = mt_filter_index(addr);
    if ((atomic_load_explicit(&b[i >> 6], memory_order_relaxed) >> (i & 63)) & 1)
        return 1;
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&mt_filter.gen, memory_order_relaxed) != g;
}

/* Lookups are lock-free (any thread, any time); insert and remove must be
 * called under the session lock. */
MT_HIDDEN int mt_ptrtable_contains(uintptr_t addr);
MT_HIDDEN int mt_ptrtable_insert(uintptr_t addr, int64_t id);
/* Remove addr; its id in *id. Returns 0 if addr was not in the table. */
MT_HIDDEN int mt_ptrtable_remove(uintptr_t addr, int64_t *id);
/* Forget everything (in a child after fork: no other thread exists). */
MT_HIDDEN void mt_ptrtable_clear(void);
MT_HIDDEN size_t mt_ptrtable_count(void);

/* Allocation of the profiler's own memory: glibc's entry points directly,
 * so it never recurses into the interposed malloc. */
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);

/* ---- unwind.c ------------------------------------------------------------ */

#define MT_MAX_FRAMES 256
/* Return addresses of the calling thread, innermost first, with the
 * profiler's own frames dropped. Returns how many were stored. */
MT_HIDDEN size_t mt_unwind(uint64_t *codes, size_t max);
MT_HIDDEN const char *mt_unwind_name(void);
/* Text range of this library, so its frames can be dropped. */
MT_HIDDEN void mt_unwind_init(void);

/* ---- symbolize.c --------------------------------------------------------- */

/* The writer's location callback: locations of return address `code`
 * (for the call instruction at code - 1), outermost first, cached. Must be
 * called under the session lock. */
MT_HIDDEN int mt_symbolize(void *ctx, uint64_t code, const mt_location **locs,
                           size_t *n);
/* Drop all symbolizer state (session end). */
MT_HIDDEN void mt_symbolize_reset(void);

/* ---- session.c ----------------------------------------------------------- */

/* Nonzero while a session accepts events (read without the lock). */
extern int mt_active MT_HIDDEN;
/* Incremented at each session start: threads redraw their countdown. */
extern uint32_t mt_epoch MT_HIDDEN;
extern double mt_coef MT_HIDDEN;

/* Slow path of an allocation of `bytes` at `ptr`, once the thread's
 * countdown has reached <= 0: draws the next countdown and, if the session
 * is active and the thread not inside the profiler, writes the alloc event
 * and remembers ptr (NULL: nothing to remember, as for external
 * allocations; a NULL ptr of a failed malloc is never sampled). Returns the
 * object id + 1, or 0 if not sampled. */
MT_HIDDEN uint64_t mt_sample(void *ptr, size_t bytes, int external);
/* A sampled pointer is being freed: emit its collect event. */
MT_HIDDEN void mt_collect_ptr(void *ptr);

#endif /* MT_PROFILER_INT_H */
