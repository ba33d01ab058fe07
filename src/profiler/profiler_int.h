/*
 * profiler_int.h - what the pieces of the native heap profiler share
 * (libmemtrace_preload.so): the per-thread sampler state, the region that
 * holds the sampled blocks, the unwinder, the symbolizer and the session.
 * Nothing here is exported from the library (-fvisibility=hidden).
 */
#ifndef MT_PROFILER_INT_H
#define MT_PROFILER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/memtrace.h"

#define MT_HIDDEN __attribute__((visibility("hidden")))
#define MT_LIKELY(x) __builtin_expect(!!(x), 1)
#define MT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- sampler.c: geometric draws (spec 10.2) ------------------------------ */

/* Small blocks of the region a thread keeps for itself (its size classes
 * 0 to 27, 16 B to 4 KiB; at most MT_RCACHE_MAX of each). */
#define MT_RCACHE_CLASSES 28
#define MT_RCACHE_MAX 16

/* Per-thread state. It lives in initial-exec TLS (a GNU extension: the
 * fast path of malloc is one %fs-relative subtraction, no __tls_get_addr
 * call); a fresh thread starts with countdown 0, so its first allocation
 * of a byte or more takes the slow path, which seeds it.
 *
 * The countdown is kept one below the bytes left until the next sample, so
 * that the allocation that takes it below zero (not to zero) is the
 * sampled one: the fast path is then one subtraction from the thread-local
 * word and a jump on its sign (`sub %rdi,%fs:...; js`), four instructions
 * in malloc where a test for <= 0 took seven. Every place that sets it
 * from a number of bytes does so through mt_countdown_set, below. */
typedef struct mt_thread {
    int64_t countdown;      /* bytes until the next sample, minus one       */
    uint64_t rng;           /* xorshift64* state (0 = not seeded)           */
    uint32_t epoch;         /* session the countdown was drawn for          */
    int busy;               /* re-entrancy guard: inside the profiler       */
    int in_region;          /* region.c's code is running on this thread    */
    int64_t held;           /* the countdown, parked while busy             */
    uintptr_t alt_lo, alt_hi;   /* the alternate signal stack the thread set
                                 * with sigaltstack (preload.c); 0, 0: none */
    void *tbuf;             /* session.c: the thread's event buffer         */
    uint64_t last_stamp;    /* session.c: order stamp of its last event     */
    uint64_t clk_tsc;       /* session.c's clock: the last real reading,    */
    int64_t clk_us;         /* at this TSC value                            */
    void *rcache[MT_RCACHE_CLASSES];        /* region.c: freed small blocks */
    uint8_t rcount[MT_RCACHE_CLASSES];      /* kept by this thread, by size */
    uint8_t rc_keyed;       /* region.c: given back when the thread ends    */
    uint8_t unwinds;        /* unwind.h: samples unwound step by step       */
    int cancel_state;       /* session.c: restored by session_unlock        */
} mt_thread;

extern __thread mt_thread mt_self
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Set the countdown for `left` bytes until the next sample (stored one
 * below, see mt_thread): the allocation that uses up the last of them is
 * sampled. */
static inline void mt_countdown_set(mt_thread *t, int64_t left)
{
    t->countdown = left - 1;
}

/* While a thread is inside the profiler its countdown is parked here, so
 * that every allocation it makes takes the slow path, which serves it
 * from the region as one of the profiler's own blocks (preload.c): the
 * profiler's memory never mixes with the program's heap. */
#define MT_BUSY_COUNTDOWN (INT64_MIN / 4)

/* Enter and leave the profiler (the re-entrancy guard nests). */
static inline void mt_enter(mt_thread *t)
{
    if (t->busy++ == 0) {
        t->held = t->countdown;
        t->countdown = MT_BUSY_COUNTDOWN;
    }
}

static inline void mt_leave(mt_thread *t)
{
    if (--t->busy == 0)
        t->countdown = t->held;
}

/* Coefficient c of spec 10.2 for rate lambda: 1/log1p(-lambda), 0 if 1. */
MT_HIDDEN double mt_sampler_coef(double rate);
/* One geometric draw (>= 1) from 30 random bits of *rng (seeded if 0). */
MT_HIDDEN int64_t mt_sampler_draw(uint64_t *rng, double coef);
/* A draw from the binomial law of n trials of probability p, by its
 * normal approximation (for n * p in the thousands and more). */
MT_HIDDEN int64_t mt_sampler_binomial(uint64_t *rng, double n, double p);
/* The reference's log approximation of ln(y / 2^31), y = 2n+1 (10.2). */
MT_HIDDEN double mt_sampler_log_approx(double y);
/* A fresh seed from getrandom(), or time, address and thread id. */
MT_HIDDEN uint64_t mt_sampler_seed(void);

/* ---- region.c: where sampled blocks live --------------------------------- */

/* The reserved range; {0, 0} until the first session reserves it. Both
 * words are read on every free, so they share a line. */
typedef struct mt_region_bounds {
    uintptr_t base, size;
} __attribute__((aligned(16))) mt_region_bounds;
extern mt_region_bounds mt_region MT_HIDDEN;

/* Is p a block of the region (a sampled block, or one of the profiler's
 * own)? One compare. */
static inline int mt_region_contains(const void *p)
{
    return (uintptr_t)p - mt_region.base < mt_region.size;
}
/* Reserve the range (once; 0 or -1). */
MT_HIDDEN int mt_region_reserve(void);
/* Two words per block that stay with the block, live or free, and never
 * move: its stamp, the order stamp of its last event (session.c), and its
 * tag, which sampled object of which session it holds, 0 if none (read and
 * written under the session lock only). Found once per event, when the
 * block is allocated or identified, and handed down with it. */
typedef struct mt_block_meta {
    uint64_t *stamp, *tag;
} mt_block_meta;
/* A block of at least n bytes aligned to align (a power of two; 16 at
 * least is given anyway), zeroed if asked; NULL if the region is full or
 * not reserved. own: a block of the profiler itself (marked as such, see
 * mt_region_kind), not a sampled one. meta (may be NULL): its words. */
MT_HIDDEN void *mt_region_alloc(size_t n, size_t align, int zero, int own,
                                mt_block_meta *meta);
/* What p (in the region) is: the start of a sampled block, of one of the
 * profiler's own, or neither (a pointer inside a block, or where no block
 * was cut: only pointers that start one may be freed). meta (may be NULL):
 * its words, if it starts a block. */
enum { MT_BLOCK_NONE, MT_BLOCK_SAMPLED, MT_BLOCK_OWN };
MT_HIDDEN int mt_region_kind(const void *p, mt_block_meta *meta);
/* Usable size of a block of the region. */
MT_HIDDEN size_t mt_region_usable(const void *p);
/* The size asked for the block at p (what realloc must copy), and its
 * update when a block is resized in place; never more than usable. */
MT_HIDDEN size_t mt_region_size(const void *p);
MT_HIDDEN void mt_region_set_size(void *p, size_t n);
/* Give a block back (p starts one: mt_region_kind said so; a pointer that
 * starts none must be left alone, or the lists would be corrupted);
 * may_block = 0 (a signal handler that interrupted the profiler): the
 * thread's cache is left alone, and if the allocator is busy the block is
 * kept, not waited for. */
MT_HIDDEN void mt_region_free(void *p, int may_block);
/* Give back one of the profiler's own blocks (the same condition). */
MT_HIDDEN void mt_region_free_own(void *p);
/* The words of the block at p (in the region). */
MT_HIDDEN mt_block_meta mt_region_meta(const void *p);
/* The region's lock. It lives in session.c, on the page of the session's
 * own lock and writer, and the fork handlers there take it before every
 * fork and release it in both processes after: each page written after a fork
 * costs a page fault in each process (bench/profiler/fork_churn, 300 forks
 * traced: 29 faults a child and 11.8 in the parent a fork before; 24 and
 * 9.7 with the locks together and the child's other writes avoided, see
 * session.c's fork_child). */
MT_HIDDEN extern pthread_mutex_t *const mt_region_mutex;

/* glibc's entry points: where preload.c sends unsampled blocks while the
 * next definitions of the malloc family are being looked up. */
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);

/* ---- unwind.c ------------------------------------------------------------ */

#define MT_MAX_FRAMES 256
/* (mt_unwind itself is in unwind.h) */
MT_HIDDEN const char *mt_unwind_name(void);
/* Text range of this library, so its frames can be dropped; the unwinder
 * chosen by MEMTRACE_UNWIND. */
MT_HIDDEN void mt_unwind_init(void);
/* MEMTRACE_UNWIND unset, empty or one of the names mt_unwind_init knows. */
MT_HIDDEN int mt_unwind_env_ok(void);
/* libunwind's set-up, at the first session's start (under the session
 * lock), not at load: it opens its memory-validation pipe then, two
 * descriptors that a process not traced (MEMTRACE unset, or its trace
 * could not be opened) would lose for nothing. */
MT_HIDDEN void mt_unwind_start(void);
/* Around dlclose (unwind.c's comment says why): the loaded objects'
 * segments before it (*n is SIZE_MAX if they could not all be listed);
 * after it, under the session lock, those that are gone are remembered,
 * given the segments and the loader's adds before it (before is freed). */
typedef struct mt_unwind_seg {
    uintptr_t lo, hi;              /* a segment's addresses: [lo, hi) */
} mt_unwind_seg;
MT_HIDDEN mt_unwind_seg *mt_unwind_objects(size_t *n);
MT_HIDDEN void mt_unwind_unmapped(mt_unwind_seg *before, size_t n, unsigned long long adds);

/* Location codes are return addresses; after the n-th library unmapped by
 * dlclose, a code also carries n (mod 2^14) in bits 48-61, so that an
 * address that now holds another library's code is a new code, with its
 * own locations (a trace gives a code its locations once). Bits 0-47 are
 * the address (x86-64 user space is below 2^47). */
#define MT_CODE_ADDR_BITS 48
extern uint64_t mt_code_gen MT_HIDDEN;     /* n << MT_CODE_ADDR_BITS */
static inline uint64_t mt_code_addr(uint64_t code)
{
    return code & (((uint64_t)1 << MT_CODE_ADDR_BITS) - 1);
}

/* ---- symbolize.c --------------------------------------------------------- */

/* The writer's location callback: locations of return address `code`
 * (for the call instruction at code - 1), outermost first, cached. Must be
 * called under the session lock. */
MT_HIDDEN int mt_symbolize(void *ctx, uint64_t code, const mt_location **locs,
                           size_t *n);
/* How to unwind one frame (unwind.c's fast unwinder): the caller's stack
 * pointer (the CFA) is the frame's stack pointer, or its frame pointer
 * (MT_CFI_RBP_BASE), plus cfa_off; the return address is at CFA + ra_off;
 * the caller's frame pointer is at CFA + rbp_off (MT_CFI_RBP_SAVED), lost
 * (MT_CFI_RBP_LOST), or unchanged. MT_CFI_END: the outermost frame;
 * MT_CFI_BAD: a frame only libunwind can unwind. */
typedef struct mt_cfi_rule {
    int32_t cfa_off;
    int16_t rbp_off;
    int8_t ra_off;
    uint8_t flags;
} mt_cfi_rule;
enum {
    MT_CFI_RBP_BASE = 1, MT_CFI_RBP_SAVED = 2, MT_CFI_RBP_LOST = 4,
    MT_CFI_END = 8, MT_CFI_BAD = 16
};
/* The rule of the frame that returns to ra. Under the session lock. */
MT_HIDDEN void mt_symbolize_cfi(uint64_t ra, mt_cfi_rule *r);
/* Drop all symbolizer state (session end). */
MT_HIDDEN void mt_symbolize_reset(void);
/* A library was unmapped: read the process's modules afresh before the
 * next code is resolved. Under the session lock. */
MT_HIDDEN void mt_symbolize_unloaded(void);
/* How many objects the dynamic loader has mapped (dlpi_adds) and
 * unmapped (dlpi_subs) so far. */
MT_HIDDEN unsigned long long mt_loader_adds(void);
MT_HIDDEN unsigned long long mt_loader_subs(void);

/* ---- fds.c --------------------------------------------------------------- */

/* fd moved near the top of the descriptor limit, out of the program's way
 * (the old number closed, FD_CLOEXEC kept); fd itself if it cannot be. */
MT_HIDDEN int mt_fd_high(int fd);

/* ---- env.c: the environment of the programs a traced one runs ------------ */

/* Look up the exec family's next definitions (at start-up: dlsym may
 * allocate). */
MT_HIDDEN void mt_env_init(void);
/* Keep MEMTRACE, MEMTRACE_* and this library's LD_PRELOAD entry as they
 * are now, before mt_env_untrace changes them. */
MT_HIDDEN void mt_env_save(void);
/* Children run untraced: MEMTRACE emptied and this library taken out of
 * LD_PRELOAD, in the environment's strings. */
MT_HIDDEN void mt_env_untrace(void);
/* The session from the environment started in this process: a program it
 * execs in its own place gets the saved variables back and is traced into
 * the same file. set: what MEMTRACE was set to for children, or NULL. */
MT_HIDDEN void mt_env_follow_own_exec(const char *set);

/* ---- session.c ----------------------------------------------------------- */

/* Nonzero while a session accepts events (read without the lock). */
extern int mt_active MT_HIDDEN;
/* Incremented at each session start: threads redraw their countdown. */
extern uint32_t mt_epoch MT_HIDDEN;
/* dlclose(handle) through real, glibc's: see session.c. */
MT_HIDDEN int mt_dlclose(int (*real)(void *), void *handle);
extern double mt_coef MT_HIDDEN;

/* Slow path of an allocation of `bytes`, once the thread's countdown has
 * gone below 0: draws the next countdown and returns the number of samples
 * if the allocation is to be sampled (a session is active, the thread is
 * not inside the profiler nor on a signal stack), 0 if not. When it
 * returns > 0 the thread is marked inside the profiler until
 * mt_sample_record or mt_sample_drop: the caller allocates the block
 * (from the region) in between. */
MT_HIDDEN int64_t mt_sample_draw(size_t bytes);
/* The alloc event of a sampled block whose words are *m (buffered;
 * returns 1), or of an external allocation (m NULL: written at once;
 * returns its id + 1, or 0 if no event was written); codes: its backtrace
 * (mt_unwind, taken by the caller). */
MT_HIDDEN uint64_t mt_sample_record(const mt_block_meta *m, size_t bytes, int64_t samples,
                                    const uint64_t *codes, size_t n);
/* The block could not be allocated in the region: no event. */
MT_HIDDEN void mt_sample_drop(void);
/* A sampled block (its words: *m) is being freed: write its collect
 * event, then give it back to the region. */
MT_HIDDEN void mt_free_sampled(void *ptr, const mt_block_meta *m);
/* A sampled block resized in place (it fits, and the new size is sampled
 * too; after mt_sample_draw): the collect of the old object and the alloc
 * of the new, at the same address. */
MT_HIDDEN uint64_t mt_sample_resize(void *ptr, size_t bytes, int64_t samples,
                                    const uint64_t *codes, size_t n);

/* The process is about to exec: its trace is flushed, if the session is
 * this process's and the thread is not inside the profiler. */
MT_HIDDEN void mt_session_before_exec(void);

#endif /* MT_PROFILER_INT_H */
