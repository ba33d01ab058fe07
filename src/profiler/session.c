/*
 * session.c - one tracing session per process: the trace file and its
 * writer behind one lock, the start from the environment (spec 10.4) or
 * the in-process API, the sampled allocation / collection events (buffered
 * per thread, merged into the writer under the lock), their clock, the
 * background flusher, and fork handling.
 *
 * Never harm the program: a bad setting, a file that cannot be opened or a
 * failed write prints one line on stderr and the program goes on untraced.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cpuid.h>
#include <x86intrin.h>

#include "memtrace/profiler.h"
#include "profiler/profiler_int.h"
#include "profiler/unwind.h"
#include "util/numtext.h"

#define EXPORT __attribute__((visibility("default")))
/* Without a session a thread looks again after this many bytes: a session
 * started later (mt_profiler_start) misses at most that much of each
 * thread's allocations. The cost is a slow-path call per 16 KiB. */
#define INACTIVE_COUNTDOWN ((int64_t)1 << 14)
#define DEFAULT_RATE 1e-5

int mt_active;
uint32_t mt_epoch;
double mt_coef;

static int trace_fd = -1;              /* high: out of the program's way (fds.c) */
static dev_t trace_dev;                /* ... and what it must still be         */
static ino_t trace_ino;
static off_t trace_good;               /* end of the last whole packet written  */
static int trace_lost;                 /* the program closed or replaced it     */
static char trace_path[PATH_MAX];
static char child_pattern[PATH_MAX];   /* follow-fork: path with %p       */
/* (MT_PROFILER_CONTEXT_MAX bytes and its NUL: with the longest names the
 * other strings can have, the trace info packet still holds it) */
static char context_buf[MT_PROFILER_CONTEXT_MAX + 1];
static int have_context;
static double session_rate;
static int follow_fork;
static pid_t session_pid;               /* the process the session is for   */
/* The session lock and what the thread that holds it writes at every
 * event it writes out, on cache lines of their own: next to what the
 * sampled path reads (mt_active, the sampler's and the clock's constants,
 * flusher_started) each drain took those lines away from the other
 * threads' cores. With them the region's lock and the writer, which the
 * fork handlers write too: aligned to its size, the struct lies on one
 * page, which a fork's copy-on-write faults in once (profiler_int.h,
 * mt_region_mutex). */
static struct {
    pthread_mutex_t lock;
    int64_t last_time;
    int64_t last_flush;                /* time of the last timed flush    */
    int64_t start;                     /* the session's start time        */
    int dirty;                         /* events since the last flush     */
    size_t nspare;                     /* see drain_all                   */
    mt_writer *writer;                 /* the session's, or NULL          */
    pthread_mutex_t region_lock        /* mt_region_mutex: a line of its  */
        __attribute__((aligned(64)));  /* own (sampled paths take it)     */
} __attribute__((aligned(256))) ds = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                      .region_lock = PTHREAD_MUTEX_INITIALIZER};
_Static_assert(sizeof ds <= 256, "ds lies on one page");
pthread_mutex_t *const mt_region_mutex = &ds.region_lock;
static int failed;                     /* a write failure was reported    */
static int flusher_started;
static int main_exited;                /* main called pthread_exit: no flusher */
static pthread_t flusher;
static pthread_cond_t flusher_cond = PTHREAD_COND_INITIALIZER;

/* The session lock, on a thread of the program's, with cancellation
 * disabled while it is held: a thread cancelled at a cancellation point
 * inside a drain (the trace's write, libdw's reads) ended holding it, and
 * every other thread waited for it for ever (a program that cancels its
 * allocating threads hung). The flusher thread takes ds.lock itself. */
static void session_lock(void)
{
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    pthread_mutex_lock(&ds.lock);
    mt_self.cancel_state = old;
}

static void session_unlock(void)
{
    int old = mt_self.cancel_state;
    pthread_mutex_unlock(&ds.lock);
    pthread_setcancelstate(old, &old);
}

/* Descriptor 2 as it was when the first session started. A message goes
 * there only while it is that file, or anything but a regular file (a
 * terminal, a pipe): a program that closed its descriptors and opened its
 * own files on the first numbers has one of its data files there, and the
 * message "tracing stopped" landed in it. (Noted at the first message
 * when that comes before any session: a bad MEMTRACE_RATE at start-up.) */
static dev_t stderr_dev;
static ino_t stderr_ino;
static int stderr_known;

static void note_stderr(void)
{
    struct stat st;
    if (!stderr_known && fstat(2, &st) == 0) {
        stderr_dev = st.st_dev;
        stderr_ino = st.st_ino;
        stderr_known = 1;
    }
}

static int stderr_is_for_messages(void)
{
    struct stat st;
    if (fstat(2, &st) != 0)
        return 0;
    return !S_ISREG(st.st_mode) ||
           (stderr_known && st.st_dev == stderr_dev && st.st_ino == stderr_ino);
}

static void say(const char *fmt, ...)
{
    note_stderr();              /* (before any session: the start-up's errors) */
    if (!stderr_is_for_messages())
        return;
    char buf[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof buf - 2)
        n = (int)sizeof buf - 2;
    buf[n++] = '\n';
    ssize_t r = write(2, buf, (size_t)n);
    (void)r;
}

static int64_t real_us(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* Under the lock: the writer needs non-decreasing times. */
static int64_t ordered(int64_t t)
{
    if (t < ds.last_time)
        t = ds.last_time;
    ds.last_time = t;
    return t;
}

/* Event times: gettimeofday costs 30-90 ns on this project's VMs
 * (kvm-clock), a lot at one sample per 4 KiB, so each thread takes a real
 * reading at most once a millisecond and moves it on with the TSC in
 * between (when the CPU's TSC is invariant: cpuid 0x80000007, EDX bit 8).
 * The TSC rate is measured against the first real reading 20 ms or more
 * after the session started: tsc_ms is ticks per millisecond, us_q32
 * microseconds per tick << 32 (a multiply, not a division, per event);
 * both 0 until then. */
static int tsc_invariant;
static uint64_t tsc_ms, us_q32;
static uint64_t start_tsc;
static int64_t start_us;

static void clock_init(int64_t now)
{
    unsigned a, b, c, d;
    tsc_invariant = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
    start_tsc = __rdtsc();
    start_us = now;
}

/* The time in us; the TSC it was read at in *tsc_out. */
static int64_t clock_us(uint64_t *tsc_out)
{
    mt_thread *t = &mt_self;
    uint64_t ms = __atomic_load_n(&tsc_ms, __ATOMIC_ACQUIRE);
    uint64_t tsc = __rdtsc();
    *tsc_out = tsc;
    if (ms && tsc - t->clk_tsc < ms)
        return t->clk_us + (int64_t)(((tsc - t->clk_tsc) *
                                      __atomic_load_n(&us_q32, __ATOMIC_RELAXED)) >> 32);
    int64_t us = real_us();
    t->clk_tsc = tsc;
    t->clk_us = us;
    if (!ms && tsc_invariant && us - start_us >= 20000 && tsc > start_tsc) {
        double per_us = (double)(tsc - start_tsc) / (double)(us - start_us);
        if (per_us >= 1.0 && per_us < 15000.0) {        /* 1 MHz to 15 GHz */
            __atomic_store_n(&us_q32, (uint64_t)(4294967296.0 / per_us), __ATOMIC_RELAXED);
            __atomic_store_n(&tsc_ms, (uint64_t)(per_us * 1000.0), __ATOMIC_RELEASE);
        }
    }
    return us;
}

/* Is trace_fd still the trace file? A program may close descriptors it did
 * not open, or dup2 a file of its own onto the number: then trace_fd is
 * never written, truncated or closed again. */
static int trace_fd_ours(void)
{
    struct stat st;
    if (trace_fd >= 0 && !trace_lost && fstat(trace_fd, &st) == 0 &&
        st.st_dev == trace_dev && st.st_ino == trace_ino)
        return 1;
    trace_lost = 1;
    return 0;
}

/* The writer's sink: whole packets to the trace file, checked to be that
 * first; a failed write is cut back to the last whole packet, so the file
 * stays readable. */
static int trace_sink(void *ctx, const void *buf, size_t len)
{
    (void)ctx;
    if (!trace_fd_ours())
        return EBADF;
    const char *p = buf;
    size_t left = len;
    while (left) {
        ssize_t n = write(trace_fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            (void)!ftruncate(trace_fd, trace_good);
            return e;
        }
        p += n;
        left -= (size_t)n;
    }
    trace_good += (off_t)len;
    return 0;
}

static void trace_close(void)
{
    if (trace_fd >= 0 && trace_fd_ours())
        close(trace_fd);
    trace_fd = -1;
}

/* MEMTRACE_RUN_STATUS (set by memtrace run): a file it made, where the
 * process it started writes why its tracing stopped, so that memtrace run
 * reports the trace cut short, not written, and says why on its own
 * stderr (the program's descriptor 2 may be anything by then). Opened only
 * then, for the one write: no descriptor is kept. 0: written there. */
static char run_status[PATH_MAX];
static pid_t run_status_pid;    /* the process it is for (not a fork) */

static int note_run_status(const char *msg)
{
    if (!run_status[0] || getpid() != run_status_pid)
        return -1;
    int fd = open(run_status, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(msg);
    ssize_t r = write(fd, msg, n);
    close(fd);
    return r == (ssize_t)n ? 0 : -1;
}

/* The message for a trace that cannot be written any more (st: the
 * writer's status). */
static void say_lost(int st)
{
    char msg[PATH_MAX + 256];
    if (trace_lost)
        snprintf(msg, sizeof msg, "memtrace: the program closed or replaced the trace's "
                 "file descriptor %d (%s); tracing stopped", trace_fd, trace_path);
    else
        snprintf(msg, sizeof msg, "memtrace: cannot write the trace %s: %s; tracing stopped",
                 trace_path, ds.writer ? mt_writer_error(ds.writer) : mt_status_name(st));
    if (note_run_status(msg) != 0)
        say("%s", msg);
}

/* Under the lock: a writer call failed. Stop tracing for good (a pid change
 * in a forked child is silent, as in the reference). */
static void writer_failed(int st)
{
    if (st != MT_ERR_PID_CHANGED && !failed)
        say_lost(st);
    failed = 1;
    __atomic_store_n(&mt_active, 0, __ATOMIC_RELEASE);
}

/* Under the lock, the buffers drained: flush the trace if anything was
 * written since the last flush. Not otherwise: a flush writes an events
 * packet even when it is empty (spec 8.6), and flushing at every fork of a
 * program that forks much wrote 204 KB of them for fork_churn's 3000 forks,
 * with a write() and an fstat() each. 0, or -1 (no session, or the write
 * failed). */
static int flush_dirty(void)
{
    if (!mt_active || !ds.writer)
        return -1;
    if (!ds.dirty)
        return 0;
    int st = mt_writer_flush(ds.writer);
    ds.dirty = 0;
    if (st == MT_OK)
        return 0;
    writer_failed(st);
    return -1;
}

/* How old the trace on disk may get at time now: a tenth of the session's
 * age, from 10 ms to a second. A program that ends without exit() loses
 * what was buffered since the last flush (no destructor runs: Go's
 * runtime ends with the exit_group system call, others call _exit or die
 * of a signal); with a fixed second, a cgo program that ran half a second
 * lost every sample. Growing with the age, at most a tenth of a run is
 * lost, for ~35 flushes in the first second (33-35 writes measured in a
 * 1 s run of two threads) and one a second after ten. */
static int64_t stale_limit(int64_t now)
{
    int64_t l = (now - __atomic_load_n(&ds.start, __ATOMIC_RELAXED)) / 10;
    return l < 10000 ? 10000 : l > 1000000 ? 1000000 : l;
}

/* Under the lock, after an event at time now: the trace on disk is never
 * older than stale_limit, even without the flusher thread
 * (single-threaded programs, see start_flusher). */
static void maybe_flush(int64_t now)
{
    if (now - ds.last_flush < stale_limit(now))
        return;
    __atomic_store_n(&ds.last_flush, now, __ATOMIC_RELAXED);
    flush_dirty();
}

/* ---- sampled path -------------------------------------------------------- */

/* On the alternate signal stack the thread set (preload.c's sigaltstack
 * keeps its range)? One compare, no call: asking the system
 * (pthread_getattr_np for the thread's own stack, then sigaltstack) cost a
 * sigaltstack call per sample off a known stack, and pthread_getattr_np
 * takes the thread's lock, which glibc holds while it allocates in that
 * same function: a program whose first sampled allocation was made there
 * (Rust's runtime calls it at start-up) hung. */
static int on_alt_stack(const mt_thread *t)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    return sp - t->alt_lo < t->alt_hi - t->alt_lo;
}

int64_t mt_sample_draw(size_t bytes)
{
    mt_thread *t = &mt_self;
    if (!__atomic_load_n(&mt_active, __ATOMIC_ACQUIRE)) {
        mt_countdown_set(t, INACTIVE_COUNTDOWN);
        return 0;
    }
    uint32_t epoch = __atomic_load_n(&mt_epoch, __ATOMIC_ACQUIRE);
    if (t->epoch != epoch) {
        /* This thread's first allocation of the session: its countdown is
         * stale (another rate, or the inactive one), so a fresh draw starts
         * the count at this allocation. */
        t->epoch = epoch;
        mt_countdown_set(t, mt_sampler_draw(&t->rng, mt_coef) * 8 - (int64_t)bytes);
        if (t->countdown >= 0)
            return 0;
    }
    if (t->countdown < -((int64_t)1 << 50)) {
        /* An impossible size (the allocation will fail): no draw loop of
         * billions of rounds. */
        mt_countdown_set(t, mt_sampler_draw(&t->rng, mt_coef) * 8);
        return 0;
    }
    /* (the countdown is one below the bytes left: see mt_thread) */
    int64_t samples = 0;
    double words = (double)-(t->countdown + 1) / 8;  /* past the first sample */
    if (words * session_rate > 1024) {
        /* A block of gigabytes at a high rate: one draw per sample took
         * minutes for a malloc(2^40) at rate 1 (which then failed). The
         * samples after the first are those of `words` words, each a sample
         * with probability rate, drawn at once; the gaps are memoryless, so
         * the next countdown is a fresh draw. */
        samples = 1 + mt_sampler_binomial(&t->rng, words, session_rate);
        mt_countdown_set(t, mt_sampler_draw(&t->rng, mt_coef) * 8);
    }
    while (t->countdown < 0) {
        t->countdown += mt_sampler_draw(&t->rng, mt_coef) * 8;
        samples++;
    }
    /* Inside the profiler (its own allocations, or a signal handler that
     * interrupted it), or on a signal stack that may be too small for
     * unwinding and symbolizing: the draws are spent, nothing is sampled
     * (draws are memoryless, so the program's samples stay unbiased). */
    if (t->busy)
        return 0;
    mt_enter(t);
    if (on_alt_stack(t)) {
        mt_leave(t);
        return 0;
    }
    return samples;
}

void mt_sample_drop(void)
{
    mt_leave(&mt_self);
}

/* ---- object tags -------------------------------------------------------- */

/* Which object a sampled block holds is in its tag (mt_block_meta), read
 * and written under the lock: the object's id + 1 in the low TAG_ID_BITS
 * bits, the session's generation above them. A new session or a child
 * after fork moves to the next generation (forget_objects), so the blocks
 * sampled before it, whose frees must not become collects of this trace's
 * objects that got the same ids, are forgotten without visiting them.
 * (A block would have to outlive 2^20 sessions to be taken for one of a
 * later session's objects.) An open-addressing table keyed by address
 * held the ids before: ~256 bytes a live sampled block (see region.c). */
#define TAG_ID_BITS 44
#define TAG_ID_MASK (((uint64_t)1 << TAG_ID_BITS) - 1)
static uint64_t tag_gen = 1;    /* 1 to 2^20 - 1 */

static void tag_set(uint64_t *tag, int64_t id)
{
    uint64_t v = (uint64_t)id + 1;
    /* (an id past 2^44 - 2: the object will look leaked) */
    *tag = v <= TAG_ID_MASK ? tag_gen << TAG_ID_BITS | v : 0;
}

/* The id of the object a block holds (its tag: *tag), in *id, and the
 * tag cleared; 0 if it holds none of this session's. */
static int tag_take(uint64_t *tag, int64_t *id)
{
    uint64_t v = *tag;
    *tag = 0;
    if (v >> TAG_ID_BITS != tag_gen || !(v & TAG_ID_MASK))
        return 0;
    *id = (int64_t)(v & TAG_ID_MASK) - 1;
    return 1;
}

static void forget_objects(void)
{
    tag_gen = tag_gen + 1 < ((uint64_t)1 << (64 - TAG_ID_BITS)) ? tag_gen + 1 : 1;
}

/* Under the lock: the alloc event of a block (its tag; NULL: external)
 * at time now; its id + 1, or 0. */
static uint64_t write_alloc(uint64_t *tag, int64_t now, int64_t words, int64_t samples,
                            const uint64_t *codes, size_t n)
{
    if (!mt_active || !ds.writer)
        return 0;
    int64_t id;
    int st = mt_writer_alloc(ds.writer, ordered(now), words, samples, MT_SOURCE_EXTERNAL,
                             codes, n, mt_symbolize, NULL, &id);
    if (st != MT_OK && st != MT_ERR_LOCATION) {   /* (that one: written) */
        writer_failed(st);
        return 0;
    }
    ds.dirty = 1;
    if (tag)
        tag_set(tag, id);
    return (uint64_t)id + 1;
}

/* Under the lock: the collect event of object id at time now. */
static void collect_id(int64_t id, int64_t now)
{
    if (mt_active && ds.writer && id < mt_writer_next_id(ds.writer)) {
        int st = mt_writer_collect(ds.writer, ordered(now), id);
        if (st == MT_OK)
            ds.dirty = 1;
        else
            writer_failed(st);
    }
}

/* ---- per-thread event buffers -------------------------------------------- */

/* Two threads sampling at one sample per 4 KiB spent most of their time
 * handing the session lock to each other, so a thread appends its events
 * (alloc: the block, size, samples, backtrace; collect: the block) to a
 * buffer of its own, under a lock of the buffer (tb_lock) that only a
 * drain contends for. Object ids are positions in the event sequence and a
 * collect must follow its alloc, so every event gets an order stamp as it
 * is appended, and a drain, under the session lock, takes every buffer's
 * events at one instant (drain_all), merges them by stamp and writes
 * them: allocs get their
 * ids and their blocks' tags then, collects find theirs there. The
 * stamp is the TSC, raised where needed above the thread's previous stamp
 * (a buffer is in increasing order) and above the block's previous event's
 * stamp, kept in the region next to the block (mt_block_meta): a
 * collect after its alloc, and an alloc of a reused address after the
 * collect of the block that was there, whatever the clocks of the cores
 * say. (One atomic counter for all threads did the same, but its cache
 * line bouncing between the cores cost ~8% at one sample per 4 KiB.)
 * Buffers are drained when one fills, once a second (the flusher thread,
 * or the sampled path of a single-threaded program), before fork, at stop
 * and exit; a finished thread's buffer, with its events, goes to the next
 * new thread. Times are those of the events, made non-decreasing in the
 * merged order. */
/* 1024 events (16 codes each on average) rather than 256: the 2-thread
 * stress at one sample per 4 KiB drained a quarter as often and took 14%
 * less wall time and 10% less CPU (the writer's state moves between the
 * cores at each drain); 200 sampling threads used less memory, not more
 * (pages are touched only as far as a buffer fills). 2048 gained no more. */
#define TB_EVENTS 1024
#define TB_CODES 16384
_Static_assert(TB_CODES >= MT_MAX_FRAMES, "one event's codes fit an empty buffer");

typedef struct tb_event {
    uint64_t seq;               /* the order stamp                         */
    int64_t time;
    uint64_t *tag;              /* its block's tag (mt_block_meta)         */
    int64_t words;              /* -1: a collect                           */
    int64_t samples;
    uint32_t at, n;             /* its codes: codes[at .. at + n)          */
} tb_event;

/* A buffer's events and their codes. A drain swaps a buffer's store for an
 * empty one, so that the thread appends again at once while the drain
 * writes the full store out (see drain_all). */
typedef struct tbstore {
    tb_event ev[TB_EVENTS];
    uint64_t codes[TB_CODES];
} tbstore;

typedef struct tbuf {
    int m;                      /* its lock: tb_lock, tb_unlock            */
    struct tbuf *next;          /* all buffers, under the session lock     */
    int owned;                  /* a live thread appends to it             */
    int held;                   /* a drain writes its store in place       */
    uint32_t n, ncodes;         /* events, codes used                      */
    tbstore *s;                 /* under m                                 */
    tbstore first;              /* its store until the first drain          */
} tbuf;

/* A buffer's lock: its thread takes it for every event, a drain briefly.
 * A pthread mutex's unlock is an atomic exchange (it must look for
 * waiters to wake), which waits until every store of the event has left
 * the core: 13% of the 2-thread stress's time at one sample per 4 KiB.
 * This one's unlock is a plain release store. A waiter spins a little,
 * then yields: a drain holds the lock only while it swaps the buffer's
 * store (with no memory for a spare, while it writes the store out). */
static void tb_lock(int *l)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
            if (++spins < 128)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static void tb_unlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

static tbuf *tbufs;             /* under the session lock */
static pthread_key_t tb_key;
static int tb_key_ok;

/* The drain's merge: a binary min-heap of the stores taken from the
 * buffers that held events, keyed by the stamp of each one's next event,
 * so that a program with many threads (each has a buffer) pays
 * log(buffers) an event, not a scan of them all. The arrays have room for
 * every buffer (new_tbuf grows them); spare holds the empty stores that
 * drains hand out, at most one per buffer. */
typedef struct tbrun {
    tbstore *s;
    uint32_t n, pos;            /* events, drain cursor                    */
    tbuf *held;                 /* no spare store: the buffer stays locked */
} tbrun;
static tbrun *runs, **heap;
static tbstore **spare;
static size_t heap_cap, ntbufs;

static uint64_t head_seq(const tbrun *r)
{
    return r->s->ev[r->pos].seq;
}

static void heap_down(size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && head_seq(heap[l]) < head_seq(heap[m]))
            m = l;
        if (l + 1 < n && head_seq(heap[l + 1]) < head_seq(heap[m]))
            m = l + 1;
        if (m == i)
            return;
        tbrun *x = heap[i];
        heap[i] = heap[m];
        heap[m] = x;
        i = m;
    }
}

/* Under the lock, every buffer unlocked by this thread: write out every
 * buffered event in stamp order. Every buffer is locked at once while
 * their stores are swapped for empty ones, so the events taken are a
 * consistent cut (see above); then the buffers are unlocked and the
 * threads append again while the taken stores are written: a thread never
 * waits for a whole drain at its buffer's lock (a spinlock, tb_lock). A
 * buffer for which no empty store can be had stays locked and is written
 * in place: nothing is ever dropped for want of memory. In a
 * single-threaded process no other thread can append, and the buffers are
 * not locked: each lock is a write to its buffer's page, which before
 * every fork (fork_prepare drains) is a copy-on-write fault after the
 * previous one. */
static void drain_all(void)
{
    size_t n = 0;
    int solo = __libc_single_threaded;
    if (!solo)
        for (tbuf *b = tbufs; b; b = b->next)
            tb_lock(&b->m);
    for (tbuf *b = tbufs; b; b = b->next) {
        if (!b->n)
            continue;
        tbrun *r = &runs[n];
        heap[n++] = r;
        r->s = b->s;
        r->n = b->n;
        r->pos = 0;
        r->held = NULL;
        tbstore *e = ds.nspare ? spare[--ds.nspare] : NULL;
        if (!e) {               /* (new_tbuf could not map this one) */
            void *m = mmap(NULL, sizeof(tbstore), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            e = m == MAP_FAILED ? NULL : m;
        }
        if (e) {
            b->s = e;
            b->n = b->ncodes = 0;
        } else {
            r->held = b;
            b->held = 1;
        }
    }
    if (!solo)
        for (tbuf *b = tbufs; b; b = b->next)
            if (!b->held)
                tb_unlock(&b->m);
    for (size_t i = n / 2; i-- > 0;)
        heap_down(n, i);
    while (n) {
        tbrun *min = heap[0];
        const tb_event *e = &min->s->ev[min->pos++];
        if (e->words >= 0) {
            write_alloc(e->tag, e->time, e->words, e->samples, min->s->codes + e->at, e->n);
        } else {
            int64_t id;
            if (tag_take(e->tag, &id))
                collect_id(id, e->time);
        }
        if (min->pos == min->n) {
            if (min->held) {
                tbuf *b = min->held;
                b->n = b->ncodes = 0;
                b->held = 0;
                if (!solo)
                    tb_unlock(&b->m);
            } else {
                spare[ds.nspare++] = min->s;   /* (at most one per buffer) */
            }
            heap[0] = heap[--n];
        }
        heap_down(n, 0);
    }
    if (mt_active && ds.writer)
        maybe_flush(ds.last_time);
}

/* A thread ends (tb_key's destructor): its buffer is free for another
 * thread, its events still in it for the next drain (draining at every
 * thread's end cost a program that runs a thousand threads a thousand
 * drains of a thousand buffers). */
static void tb_release(void *arg)
{
    tbuf *b = arg;
    mt_thread *t = &mt_self;
    mt_enter(t);
    session_lock();
    b->owned = 0;
    session_unlock();
    t->tbuf = NULL;
    mt_leave(t);
}

/* The thread's buffer (created or reused on first use); NULL if none can
 * be had (the caller writes directly). Out of line, so that the test for
 * a thread that has one costs no saved registers. */
static __attribute__((noinline, cold)) tbuf *new_tbuf(mt_thread *t)
{
    if (!tb_key_ok)
        return NULL;
    session_lock();
    tbuf *b = tbufs;
    while (b && b->owned)
        b = b->next;
    if (!b && ntbufs == heap_cap) {     /* the drain's arrays hold them all */
        size_t cap = heap_cap ? heap_cap * 2 : 16;
        /* (the profiler's own allocations; each kept as it grows, so that
         * a failure leaves every array at least heap_cap long) */
        tbrun *r = realloc(runs, cap * sizeof *r);
        if (r)
            runs = r;
        tbrun **h = r ? realloc(heap, cap * sizeof *h) : NULL;
        if (h)
            heap = h;
        tbstore **sp = h ? realloc(spare, cap * sizeof *sp) : NULL;
        if (sp) {
            spare = sp;
            heap_cap = cap;
        }
    }
    if (!b && ntbufs < heap_cap) {
        void *m = mmap(NULL, sizeof(tbuf), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            ntbufs++;
            b = m;
            b->s = &b->first;
            b->next = tbufs;
            tbufs = b;
            /* its spare store for the drains, mapped here rather than by a
             * drain while every buffer is locked (which still maps one if
             * this fails); untouched until a drain hands it out */
            void *e = mmap(NULL, sizeof(tbstore), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (e != MAP_FAILED)
                spare[ds.nspare++] = e;
        }
    }
    if (b) {
        b->owned = 1;
        /* A buffer may still hold a finished thread's events: this thread's
         * stamps continue above them, so the buffer stays in order. */
        if (b->n && t->last_stamp < b->s->ev[b->n - 1].seq)
            t->last_stamp = b->s->ev[b->n - 1].seq;
    }
    session_unlock();
    if (b && pthread_setspecific(tb_key, b) != 0) {
        session_lock();
        b->owned = 0;
        session_unlock();
        b = NULL;
    }
    t->tbuf = b;
    return b;
}

static inline tbuf *my_tbuf(mt_thread *t)
{
    return MT_LIKELY(t->tbuf != NULL) ? t->tbuf : new_tbuf(t);
}

/* Stamp an event (codes: n of them; time now, read at TSC value tsc) and
 * store it in buffer b, which this thread holds and which has room. */
static inline void tb_put(mt_thread *t, tbuf *b, const mt_block_meta *m, int64_t now,
                          uint64_t tsc, int64_t words, int64_t samples,
                          const uint64_t *codes, size_t n)
{
    tb_event *e = &b->s->ev[b->n];
    uint64_t *bs = m->stamp;
    uint64_t stamp = tsc;
    if (stamp <= t->last_stamp)
        stamp = t->last_stamp + 1;
    if (stamp <= *bs)
        stamp = *bs + 1;
    *bs = t->last_stamp = stamp;
    e->seq = stamp;
    e->time = now;
    e->tag = m->tag;
    e->words = words;
    e->samples = samples;
    e->at = b->ncodes;
    e->n = (uint32_t)n;
    uint64_t *to = b->s->codes + b->ncodes;
    for (size_t i = 0; i < n; i++)      /* (a few codes: no call of memcpy) */
        to[i] = codes[i];
    b->ncodes += (uint32_t)n;
    b->n++;
}

static inline int tb_full(const tbuf *b, size_t n)
{
    return b->n == TB_EVENTS || b->ncodes + n > TB_CODES;
}

/* No flusher thread (a single-threaded program): a drain and a flush from
 * the sampled path, as often as stale_limit says. */
static inline int tb_flush_due(int64_t now)
{
    return !__atomic_load_n(&flusher_started, __ATOMIC_RELAXED) &&
           now - __atomic_load_n(&ds.last_flush, __ATOMIC_RELAXED) >= stale_limit(now);
}

/* A drain now. It returns tb_append's 0, so that tb_append can end in a
 * tail call to it. */
static __attribute__((noinline, cold)) int tb_drain_now(void)
{
    session_lock();
    drain_all();
    session_unlock();
    return 0;
}

/* tb_append's every other case: the thread has no buffer yet, its buffer's
 * lock is taken (a drain), or the buffer is full. */
static __attribute__((noinline, cold)) int tb_append_slow(mt_thread *t, const mt_block_meta *m,
                                                          int64_t now, uint64_t tsc,
                                                          int64_t words, int64_t samples,
                                                          const uint64_t *codes, size_t n)
{
    tbuf *b = my_tbuf(t);
    if (!b)
        return -1;
    tb_lock(&b->m);
    while (tb_full(b, n)) {
        tb_unlock(&b->m);
        tb_drain_now();
        tb_lock(&b->m);
    }
    tb_put(t, b, m, now, tsc, words, samples, codes, n);
    tb_unlock(&b->m);
    if (tb_flush_due(now))
        tb_drain_now();
    return 0;
}

/* Append an event (codes: n of them; time now, read at TSC value tsc) to
 * the thread's buffer; 0, or -1 if the thread has no buffer (the caller
 * writes the event itself). The common case (a buffer with room, its lock
 * free) makes no call: every other case is a tail call to tb_append_slow,
 * and the lock's first attempt is inline. With the calls in this function
 * it took ~50 instructions more a sampled block with its collect (the
 * 2-thread stress at one sample per 4 KiB, callgrind: 676.9 M -> 665.1 M). */
static int tb_append(mt_thread *t, const mt_block_meta *m, int64_t now, uint64_t tsc, int64_t words,
                     int64_t samples, const uint64_t *codes, size_t n)
{
    tbuf *b = t->tbuf;
    if (MT_UNLIKELY(!b))
        return tb_append_slow(t, m, now, tsc, words, samples, codes, n);
    if (MT_UNLIKELY(__atomic_exchange_n(&b->m, 1, __ATOMIC_ACQUIRE)))
        return tb_append_slow(t, m, now, tsc, words, samples, codes, n);
    if (MT_UNLIKELY(tb_full(b, n))) {
        tb_unlock(&b->m);
        return tb_append_slow(t, m, now, tsc, words, samples, codes, n);
    }
    tb_put(t, b, m, now, tsc, words, samples, codes, n);
    tb_unlock(&b->m);
    if (MT_UNLIKELY(tb_flush_due(now)))
        return tb_drain_now();
    return 0;
}

uint64_t mt_sample_record(const mt_block_meta *m, size_t bytes, int64_t samples,
                          const uint64_t *codes, size_t n)
{
    mt_thread *t = &mt_self;
    uint64_t token = 0;
    int64_t words = (int64_t)((bytes + 7) / 8);
    uint64_t tsc;
    int64_t now = clock_us(&tsc);
    if (m && tb_append(t, m, now, tsc, words, samples, codes, n) == 0) {
        mt_leave(t);
        return 1;
    }
    /* External allocations (their token is the id, wanted now) and
     * threads without a buffer: written at once, after what is buffered. */
    session_lock();
    drain_all();
    token = write_alloc(m ? m->tag : NULL, now, words, samples, codes, n);
    maybe_flush(ds.last_time);
    session_unlock();
    mt_leave(t);
    return token;
}

/* The collect event of a sampled block (its words: *m); the thread is
 * inside the profiler. */
static void collect_event(mt_thread *t, const mt_block_meta *m)
{
    uint64_t tsc;
    int64_t now = clock_us(&tsc);
    if (tb_append(t, m, now, tsc, -1, 0, NULL, 0) != 0) {
        session_lock();
        drain_all();
        int64_t id;
        if (tag_take(m->tag, &id))
            collect_id(id, now);
        maybe_flush(ds.last_time);
        session_unlock();
    }
}

void mt_free_sampled(void *ptr, const mt_block_meta *m)
{
    mt_thread *t = &mt_self;
    /* Inside the profiler, the lock may be this thread's own (a signal
     * handler that interrupted the sampled path): the collect is lost and
     * the object looks leaked, rather than a deadlock. */
    if (t->busy) {
        mt_region_free(ptr, 0);
        return;
    }
    mt_enter(t);
    collect_event(t, m);
    mt_region_free(ptr, 1);
    mt_leave(t);
}

uint64_t mt_sample_resize(void *ptr, size_t bytes, int64_t samples,
                          const uint64_t *codes, size_t n)
{
    mt_block_meta m = mt_region_meta(ptr);
    collect_event(&mt_self, &m);
    mt_region_set_size(ptr, bytes);
    return mt_sample_record(&m, bytes, samples, codes, n);
}

/* ---- flusher ------------------------------------------------------------- */

/* Writes what was buffered as often as stale_limit says (about once a
 * second once the program has run ten), so the trace on disk is never much
 * older than that. It runs with every signal blocked, so the program's
 * signals never land on it. */
static void *flusher_main(void *arg)
{
    (void)arg;
    mt_enter(&mt_self);         /* for good: its allocations are the profiler's */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    pthread_mutex_lock(&ds.lock);
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + stale_limit(real_us()) * 1000;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&flusher_cond, &ds.lock, &ts);
        if (main_exited)        /* see pthread_exit */
            break;
        if (mt_active && ds.writer)
            drain_all();
        flush_dirty();
    }
    flusher_started = 0;        /* the sampled paths flush from now on */
    pthread_mutex_unlock(&ds.lock);
    return NULL;
}

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static create_fn real_create;

/* Under the lock. The flusher thread exists only in a program that has
 * threads of its own: a second thread makes glibc's malloc take its locks
 * with atomic instructions, which would double the cost of every malloc
 * and free of a single-threaded program (measured: binary-trees 1.85x).
 * Single-threaded programs are flushed from the sampled path instead
 * (maybe_flush). */
static void start_flusher(void)
{
    if (flusher_started || main_exited || __libc_single_threaded)
        return;
    if (!real_create)
        real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real_create)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (real_create(&flusher, &attr, flusher_main, NULL) == 0)
        flusher_started = 1;
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The program's pthread_create: once it has a thread, the flusher joins. */
EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                          void *(*fn)(void *), void *arg)
{
    if (!real_create)
        real_create = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real_create)
        return EAGAIN;
    int r = real_create(th, attr, fn, arg);
    if (r == 0 && !flusher_started && __atomic_load_n(&mt_active, __ATOMIC_ACQUIRE)) {
        mt_thread *t = &mt_self;
        mt_enter(t);
        session_lock();
        if (mt_active)
            start_flusher();
        session_unlock();
        mt_leave(t);
    }
    return r;
}

/* The program's pthread_exit. When the main thread calls it, the process
 * lives on until its last thread ends, and glibc then calls exit(0); but
 * glibc counts every thread, the flusher too, which never ends: the
 * process hung for ever, a zombie main thread and the flusher, with every
 * signal but SIGKILL blocked. So the flusher ends here, and the threads
 * left flush from their sampled paths, as a single-threaded program does
 * (tb_append). */
typedef void (*exit_fn)(void *);
EXPORT void pthread_exit(void *ret)
{
    static exit_fn real_exit;
    if (!real_exit)
        real_exit = (exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
    if (getpid() == gettid()) {
        mt_thread *t = &mt_self;
        mt_enter(t);
        session_lock();
        main_exited = 1;
        pthread_cond_signal(&flusher_cond);
        session_unlock();
        mt_leave(t);
    }
    real_exit(ret);
    __builtin_unreachable();    /* (real_exit is found: this library is
                                 * loaded after libc, which defines it) */
}

/* May thread t, about to leave the program (exec, _exit), act on the
 * session: not from inside the profiler (a signal handler that
 * interrupted it: the session's lock may be its own), with a session, and
 * in the session's own process, not a (v)forked child (a vfork child
 * shares its parent's memory: a lock it took would stay taken there). */
static int may_act_for_session(const mt_thread *t)
{
    return t->busy == 0 && __atomic_load_n(&mt_active, __ATOMIC_ACQUIRE) &&
           getpid() == session_pid;
}

/* The program's _exit and _Exit. They end every thread at once, and one
 * that was writing a packet to the trace left it cut short (the kernel
 * stops a write between pages when the process dies): readers then skip
 * that packet, with a warning, in ~1 of 8 runs of three threads that
 * allocate as fast as they can while main calls _exit (profiler.threads).
 * So the write in progress ends first: _exit takes the session lock (the
 * drains write under it) and ends the process holding it, so that no
 * other write starts. At most ~100 ms of tries (a drain stalled on a full
 * disk or a FIFO does not hold the exit). Not when this thread is inside
 * the profiler (a signal handler that interrupted it: the lock may be its
 * own), nor in a process that is not the session's: a vfork child shares
 * its parent's memory, and a lock it took would stay taken in the parent,
 * which would then wait for it for ever. The events buffered since the
 * last flush are still lost, as documented. exit() reaches glibc's own
 * _exit, not this one (after the destructor's flush). */
static __attribute__((noreturn)) void exit_after_write(int status)
{
    if (may_act_for_session(&mt_self)) {
        struct timespec pause = {0, 100000};
        for (int i = 0; i < 1000 && pthread_mutex_trylock(&ds.lock) != 0; i++)
            nanosleep(&pause, NULL);
    }
    for (;;)                    /* (as glibc's _exit) */
        syscall(SYS_exit_group, status);
}

EXPORT void _exit(int status)
{
    exit_after_write(status);
}

EXPORT void _Exit(int status)
{
    exit_after_write(status);
}

/* ---- start and stop ------------------------------------------------------ */

static void set_err(char *errbuf, size_t size, const char *fmt, ...)
{
    if (!errbuf || !size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, size, fmt, ap);
    va_end(ap);
}

static const char *exe_name(char *buf, size_t size)
{
    ssize_t k = readlink("/proc/self/exe", buf, size - 1);
    if (k <= 0)
        return "";
    buf[k] = 0;
    return buf;
}

/* Under the lock, with the thread's guard set. */
static int start_locked(const char *path, double rate, const char *context,
                        char *errbuf, size_t errbuf_size)
{
    note_stderr();
    if (!(rate > 0 && rate <= 1)) {
        set_err(errbuf, errbuf_size, "sampling rate must be between 0 and 1");
        return -1;
    }
    if (context && strlen(context) > MT_PROFILER_CONTEXT_MAX) {
        set_err(errbuf, errbuf_size, "the context is %zu bytes long, more than the %d a "
                "trace holds", strlen(context), MT_PROFILER_CONTEXT_MAX);
        return -1;
    }
    if (ds.writer) {
        set_err(errbuf, errbuf_size, "only one memtrace session may be active at a time");
        return -1;
    }
    if (strlen(path) >= sizeof trace_path) {
        set_err(errbuf, errbuf_size, "trace file name too long");
        return -1;
    }
    if (mt_region_reserve() != 0) {
        set_err(errbuf, errbuf_size, "cannot reserve address space for the sampled blocks");
        return -1;
    }
    /* (O_NONBLOCK: a FIFO that no process reads is refused, not waited
     * for with the program stopped before main; cleared at once after) */
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0) {
        if (errno == ENXIO)
            set_err(errbuf, errbuf_size, "cannot open memtrace file %s: it is a FIFO "
                    "that no process reads", path);
        else
            set_err(errbuf, errbuf_size, "cannot open memtrace file %s: %s", path,
                    strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    /* (before the lock: closing the old number would drop it) */
    fd = mt_fd_high(fd);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        set_err(errbuf, errbuf_size, "cannot open memtrace file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (lockf(fd, F_TLOCK, 0) != 0) {
        set_err(errbuf, errbuf_size, "cannot lock memtrace file %s: is another process using it?", path);
        close(fd);
        return -1;
    }
    if (ftruncate(fd, 0) != 0) {
        /* ignored, as the reference does */
    }
    char exe[PATH_MAX], host[256] = "", params[128];
    gethostname(host, sizeof host - 1);
    snprintf(params, sizeof params, "memtrace-c %s native preload (unwinder %s)",
             mt_version(), mt_unwind_name());
    have_context = context && *context;
    if (have_context)
        snprintf(context_buf, sizeof context_buf, "%s", context);
    mt_trace_info info = {0};
    info.sample_rate = rate;
    info.word_size = 64;
    info.executable_name = exe_name(exe, sizeof exe);
    info.host_name = host;
    info.runtime_params = params;
    info.pid = getpid();
    session_pid = info.pid;
    info.start_time = real_us();
    ds.last_time = info.start_time;
    clock_init(info.start_time);
    ds.last_flush = ds.start = info.start_time;
    info.context = have_context ? context_buf : NULL;
    char msg[256];
    mt_writer *w = NULL;
    trace_fd = fd;
    trace_dev = st.st_dev;
    trace_ino = st.st_ino;
    trace_good = 0;
    trace_lost = 0;
    if (mt_writer_open_sink(&w, trace_sink, NULL, &info, NULL, msg, sizeof msg) != MT_OK) {
        set_err(errbuf, errbuf_size, "cannot write memtrace file %s: %s", path, msg);
        trace_close();
        return -1;
    }
    ds.writer = w;
    mt_unwind_start();
    snprintf(trace_path, sizeof trace_path, "%s", path);
    session_rate = rate;
    mt_coef = mt_sampler_coef(rate);
    ds.dirty = 0;
    failed = 0;
    /* A previous session's leftovers are not this trace's: events buffered
     * after its last drain are dropped (mt_active is 0: drain_all writes
     * nothing), and its sampled blocks still live are forgotten, or their
     * frees would be written as collects of this trace's objects that got
     * the same ids. */
    drain_all();
    forget_objects();
    __atomic_add_fetch(&mt_epoch, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&mt_active, 1, __ATOMIC_RELEASE);
    start_flusher();
    return 0;
}

/* Under the lock. Returns 0 or -1 (the trace is incomplete). */
static int stop_locked(int drain)
{
    if (!ds.writer)
        return -1;
    if (drain)
        drain_all();
    __atomic_store_n(&mt_active, 0, __ATOMIC_RELEASE);
    int st = mt_writer_finish(ds.writer);
    if (st != MT_OK && st != MT_ERR_PID_CHANGED && !failed)
        say_lost(st);
    mt_writer_close(ds.writer);
    ds.writer = NULL;
    trace_close();
    return st == MT_OK ? 0 : -1;
}

EXPORT int mt_profiler_start(const char *path, double rate, const char *context,
                             char *errbuf, size_t errbuf_size)
{
    mt_thread *t = &mt_self;
    mt_enter(t);
    session_lock();
    int r = start_locked(path, rate, context, errbuf, errbuf_size);
    session_unlock();
    mt_leave(t);
    if (r == 0)
        mt_countdown_set(t, 0); /* the caller's next allocation draws afresh */
    return r;
}

EXPORT int mt_profiler_stop(void)
{
    mt_thread *t = &mt_self;
    mt_enter(t);
    session_lock();
    int r = stop_locked(1);
    session_unlock();
    mt_leave(t);
    return r;
}

EXPORT int mt_profiler_active(void)
{
    return __atomic_load_n(&mt_active, __ATOMIC_ACQUIRE);
}

EXPORT int mt_profiler_flush(void)
{
    mt_thread *t = &mt_self;
    mt_enter(t);
    session_lock();
    if (mt_active && ds.writer)
        drain_all();
    int r = flush_dirty();
    session_unlock();
    mt_leave(t);
    return r;
}

void mt_session_before_exec(void)
{
    if (may_act_for_session(&mt_self))
        mt_profiler_flush();
}

EXPORT uint64_t mt_profiler_ext_alloc(size_t bytes)
{
    mt_thread *t = &mt_self;
    t->countdown -= (int64_t)bytes;
    if (MT_LIKELY(t->countdown >= 0))
        return 0;
    int64_t samples = mt_sample_draw(bytes);
    if (!samples)
        return 0;
    uint64_t codes[MT_MAX_FRAMES];
    size_t n = mt_unwind(NULL, codes, MT_MAX_FRAMES);
    return mt_sample_record(NULL, bytes, samples, codes, n);
}

EXPORT void mt_profiler_ext_free(uint64_t token)
{
    if (!token || !mt_active)
        return;
    mt_thread *t = &mt_self;
    mt_enter(t);
    uint64_t tsc;
    int64_t now = clock_us(&tsc);
    session_lock();
    drain_all();
    collect_id((int64_t)(token - 1), now);
    if (mt_active && ds.writer)
        maybe_flush(ds.last_time);
    session_unlock();
    mt_leave(t);
}

/* ---- dlclose ------------------------------------------------------------- */

/* A library that dlclose unmaps takes its code with it, and another one
 * may be mapped at the same addresses later: the same return addresses,
 * other functions. A trace gives a code its locations once, so after such
 * an unload codes carry a new generation (mt_code_gen: new codes, resolved
 * afresh) and the symbolizer reports the process's modules again. The
 * events taken before are written first, while the library is still
 * mapped, and those of its destructors right after it went, while the
 * symbolizer still holds the closed module: each code is resolved in the
 * library it was taken in. The unwinder's part is in unwind.c: the ranges
 * unmapped are kept, and code mapped over one later makes it change.
 * (A thread that runs a library's code while another closes it is the
 * program's bug; its frames may be named by whatever is there when they
 * are written.) */
int mt_dlclose(int (*real)(void *), void *handle)
{
    mt_thread *t = &mt_self;
    if (t->busy)                        /* (the profiler's own) */
        return real(handle);
    mt_enter(t);
    if (__atomic_load_n(&mt_active, __ATOMIC_RELAXED)) {
        session_lock();
        drain_all();
        session_unlock();
    }
    unsigned long long subs = mt_loader_subs(), adds = mt_loader_adds();
    size_t nobj;
    mt_unwind_seg *objs = mt_unwind_objects(&nobj);
    mt_leave(t);
    int r = real(handle);
    mt_enter(t);
    if (mt_loader_subs() != subs) {
        session_lock();
        drain_all();
        uint64_t gen = mt_code_gen + ((uint64_t)1 << MT_CODE_ADDR_BITS);
        if (gen >> 62)                  /* 2^14 generations: wrap to 1 */
            gen = (uint64_t)1 << MT_CODE_ADDR_BITS;
        __atomic_store_n(&mt_code_gen, gen, __ATOMIC_RELAXED);
        mt_symbolize_unloaded();
        mt_unwind_unmapped(objs, nobj, adds);
        session_unlock();
    } else {
        free(objs);
    }
    mt_leave(t);
    return r;
}

/* ---- fork ---------------------------------------------------------------- */

static void fork_prepare(void)
{
    mt_enter(&mt_self);
    session_lock();
    drain_all();
    flush_dirty();                      /* the parent's trace up to date */
    pthread_mutex_lock(&ds.region_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&ds.region_lock);
    session_unlock();
    mt_leave(&mt_self);
}

/* Expand %p in pattern to the pid. */
static void expand(char *out, size_t size, const char *pattern, long pid)
{
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < size; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            int k = snprintf(out + o, size - o, "%ld", pid);
            if (k < 0 || (size_t)k >= size - o)
                break;
            o += (size_t)k;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
}

/* In the child, the only thread: the two locks are re-created (another thread
 * may have held one at the fork), the parent's writer dropped without
 * writing, the flusher is gone. With follow-fork a new session writes the
 * child's own trace. The parent's writer is dropped, not freed: its memory
 * is the parent's pages, shared until one of the two writes them, and
 * freeing writes (the blocks' metadata): a program that forks 3000 times
 * (fork_churn's loop) took 807-894 ms of CPU with the free, 662-822 without
 * (3 runs each; 46-48 and 36-37 page faults a fork). It stays allocated in
 * the child, which never uses it. For the same reason the child writes as
 * few pages as it can: the locks are re-created by assignment (no call
 * into libc's code), a buffer's words are written only if they change,
 * and without follow-fork the trace's descriptor is left open, not
 * checked and closed (two system calls): it is close-on-exec, high
 * (fds.c), and never written by the child. */
static void fork_child(void)
{
    static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    ds.region_lock = fresh;
    ds.lock = fresh;
    pthread_setcancelstate(mt_self.cancel_state, NULL);   /* (session_lock's) */
    /* The buffers were drained before the fork; the other threads' are
     * free for new threads. */
    for (tbuf *b = tbufs; b; b = b->next) {
        int owned = b == mt_self.tbuf;
        if (b->m || b->n || b->ncodes || b->held || b->owned != owned) {
            b->m = 0;
            b->n = b->ncodes = 0;
            b->held = 0;
            b->owned = owned;
        }
    }
    flusher_started = 0;
    forget_objects();
    int was_active = mt_active && ds.writer;
    __atomic_store_n(&mt_active, 0, __ATOMIC_RELEASE);
    if (ds.writer) {
        ds.writer = NULL;
        if (follow_fork)
            trace_close();
        else
            trace_fd = -1;
    }
    if (was_active && follow_fork) {
        char path[PATH_MAX], err[PATH_MAX + 128];
        expand(path, sizeof path, child_pattern, (long)getpid());
        if (start_locked(path, session_rate, have_context ? context_buf : NULL,
                         err, sizeof err) < 0)
            say("memtrace: %s; the child process %ld runs untraced", err, (long)getpid());
    }
    mt_leave(&mt_self);
}

/* ---- start from the environment (spec 10.4) and exit ---------------------- */

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* The fast unwinder's rule for a return address it meets for the first
 * time: the symbolizer's libdw reads it, under the session lock. */
static void unwind_fill(uint64_t ra, mt_cfi_rule *r)
{
    session_lock();
    mt_symbolize_cfi(ra, r);
    mt_unwind_rule_add(ra, r);
    session_unlock();
}

__attribute__((constructor)) static void mt_profiler_init(void)
{
    mt_enter(&mt_self);
    mt_unwind_init();
    mt_unwind_filler = unwind_fill;
    tb_key_ok = pthread_key_create(&tb_key, tb_release) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    mt_env_init();
    const char *env = getenv("MEMTRACE");
    if (!env || !*env) {
        mt_leave(&mt_self);
        return;
    }
    char pattern[PATH_MAX], path[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s", env);
    double rate = DEFAULT_RATE;
    const char *rs = getenv("MEMTRACE_RATE");
    const char *context = getenv("MEMTRACE_CONTEXT");
    int follow_exec = env_flag("MEMTRACE_FOLLOW_EXEC");
    follow_fork = env_flag("MEMTRACE_FOLLOW_FORK");
    /* Children (forked or exec'd, when followed) write name.PID.ctf, or
     * expand %p in MEMTRACE. */
    if (strstr(pattern, "%p")) {
        snprintf(child_pattern, sizeof child_pattern, "%s", pattern);
    } else {
        size_t k = strlen(pattern);
        if (k > 4 && strcmp(pattern + k - 4, ".ctf") == 0)
            k -= 4;
        snprintf(child_pattern, sizeof child_pattern, "%.*s.%%p.ctf", (int)k, pattern);
    }
    /* MEMTRACE_ROOT_PID (memtrace run sets it) names the process that
     * writes MEMTRACE's file; any other is a program it exec'd, which
     * writes its own file even when the environment it got is the root's
     * unchanged (a shell's children). */
    const char *rp = getenv("MEMTRACE_ROOT_PID");
    int descendant = rp && *rp && strtol(rp, NULL, 10) != (long)getpid();
    const char *status = getenv("MEMTRACE_RUN_STATUS");
    if (status && *status && !descendant && strlen(status) < sizeof run_status) {
        strcpy(run_status, status);
        run_status_pid = getpid();
    }
    expand(path, sizeof path, descendant ? child_pattern : pattern, (long)getpid());
    mt_env_save();
    if (!follow_exec)
        mt_env_untrace();               /* children run untraced */
    else if (!rp || !*rp)
        setenv("MEMTRACE", child_pattern, 1);
    if (rs && *rs && mt_env_rate(rs, &rate) < 0) {
        say("memtrace: MEMTRACE_RATE=%s: the sampling rate must be a number between 0 and 1; "
            "running untraced", rs);
        mt_leave(&mt_self);
        return;
    }
    if (!mt_unwind_env_ok()) {
        say("memtrace: MEMTRACE_UNWIND=%s: not an unwinder (libunwind, libgcc, step or "
            "check; unset for the default); running untraced", getenv("MEMTRACE_UNWIND"));
        mt_leave(&mt_self);
        return;
    }
    char err[PATH_MAX + 128];
    session_lock();
    int r = start_locked(path, rate, context, err, sizeof err);
    session_unlock();
    if (r < 0) {
        char msg[PATH_MAX + 160];
        snprintf(msg, sizeof msg, "memtrace: %s; running untraced", err);
        if (note_run_status(msg) != 0)  /* (memtrace run says it, see there) */
            say("%s", msg);
    } else {    /* a program exec'd in this one's place is traced too (env.c) */
        mt_env_follow_own_exec(follow_exec && (!rp || !*rp) ? child_pattern : NULL);
    }
    mt_leave(&mt_self);
}

/* At exit. exit() may be called by a signal handler that interrupted this
 * thread inside the profiler (a SIGTERM handler, say), which may hold the
 * session lock or its buffer's lock: waiting for them would hang the
 * program (12 of 30 runs of such a program did, at a high rate). Then the
 * trace is finished only if the session lock is free, without the
 * buffered events (a drain takes every buffer's lock). */
__attribute__((destructor)) static void mt_profiler_fini(void)
{
    mt_thread *t = &mt_self;
    int interrupted = t->busy > 0;
    mt_enter(t);
    if (!interrupted) {
        session_lock();
        if (ds.writer)
            stop_locked(1);
        session_unlock();
    } else if (pthread_mutex_trylock(&ds.lock) == 0) {
        if (ds.writer)
            stop_locked(0);
        pthread_mutex_unlock(&ds.lock);
    }
    mt_leave(t);
}
