/*
 * region.c - where sampled blocks live: one range of address space reserved
 * at the first session (PROT_NONE, MAP_NORESERVE: it costs no memory until
 * used), so that free, realloc and malloc_usable_size tell a sampled block
 * from a glibc block with one subtraction and one compare
 * (mt_region_contains), and unsampled frees never look anything up.
 *
 * The profiler's own allocations (its writer, libdw, libunwind: whatever is
 * allocated while a thread is inside the profiler) live here too, marked by
 * a bit of their block's stamp word (mt_region_kind). In the program's heap
 * they changed its behaviour: one large block allocated or freed there makes
 * glibc consolidate its fast bins (2-4 times per binary_trees run at the
 * default rate, task-clock 446 ms against 441 ms without).
 *
 * The region is cut into 64 KiB chunks, made readable and writable as they
 * are first used. Small blocks (16 B - 32 KiB, in size classes four a
 * doubling) are cut, one at a time as they are asked for, from chunks that
 * hold one class each; large ones (powers of two, 64 KiB and up) are runs
 * of whole chunks. A block of a power-of-two size 2^k is aligned to
 * min(2^k, 64 KiB), so memalign and friends are served by picking such a
 * size of at least the alignment; larger alignments get a run of chunks
 * aligned to it. Freed blocks go to a free list per class. A freed large
 * block keeps its pages while the large blocks kept so (DIRTY_MAX_BLOCK at
 * most each) add up to DIRTY_BUDGET; past that it gives them back with
 * MADV_DONTNEED (but the first, which holds the link and the flag saying
 * which it did).
 * Giving them back at every free made a loop that allocates and frees a
 * 1 MB buffer 160 times slower at the default rate: three in four of those
 * buffers are sampled, and each reuse faulted its 256 pages in again. The
 * rounding of large blocks wastes address space, not memory: pages past
 * what is touched are never backed.
 *
 * The region is never unmapped (a block may outlive every session); one
 * mutex protects the lists, and each thread keeps up to MT_RCACHE_MAX freed
 * blocks of each size up to 4 KiB for itself (no lock), which go back to
 * the lists when the thread ends (a thread-specific key's destructor:
 * without it a program that ran 8000 short threads at one sample per 512
 * bytes grew to 440 MB, ~55 KiB stranded per thread). Every caller is
 * marked inside the profiler (mt_thread.busy), and the code here marks the
 * thread in_region: a signal handler that interrupts it gets its allocations from
 * the next malloc (preload.c) and its frees do not wait for the mutex, so it never
 * finds a list half updated nor waits for a lock its own thread holds.
 * Fork: the mutex is session.c's (mt_region_mutex in profiler_int.h), on
 * the page of the session's own, and its atfork handlers take it, release
 * it and re-create it in the child.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "profiler/profiler_int.h"

#define CHUNK_SHIFT 16
#define CHUNK ((uintptr_t)1 << CHUNK_SHIFT)
#define PAGE 4096
#define COMMIT_STEP ((uintptr_t)1 << 20)    /* mprotect'ed at a time      */

mt_region_bounds mt_region;                 /* {0, 0}: contains nothing   */

static uintptr_t bump;          /* offset of the first never-used chunk       */
static uintptr_t committed;     /* offsets below are readable and writable    */

/* Size classes. Small: 16, 32, 48, 64, then four a doubling (80, 96, 112,
 * 128, 160, ... 32 KiB), which waste at most a fifth of a block (powers of
 * two alone wasted up to half: 96 MiB of 6000-byte blocks, all sampled,
 * took 140 MB against 100 plain). Large: powers of two from 64 KiB. A
 * request aligned to more than 16 bytes gets a power of two, aligned to
 * its size up to 64 KiB (its blocks lie at multiples of the size from
 * their chunk's start). */
#define NSMALL 40
#define SMALL_MAX 32768
#define LARGE(s) (NSMALL + (s))     /* the class of a large block of 2^s bytes */
static void *free_list[NSMALL + 64];    /* per class, linked through the blocks */
static uintptr_t carve_pos[NSMALL], carve_end[NSMALL];
                                /* per small class: its newest chunk's unused rest */
/* Each block has an entry and a tag of its own, which stay with the block,
 * live or free. The entry: [0] its stamp (mt_block_meta, and OWN_BIT),
 * [1] its requested size (mt_region_size; 16-byte blocks, whose size is
 * their usable size, have no such word). The tag: which object it holds
 * (mt_block_meta). A chunk's entries and tags are cut, all at once, from
 * the meta arena when the chunk is cut (one of each for a run of chunks
 * that makes a large block) and found through the chunk's descriptor:
 * the metadata of the blocks in use lies side by side. Before, a flat
 * array of two words per 16 bytes of the region was half as large as the
 * blocks of 8 KiB and less (a page of it for every 8 KiB of region, whatever
 * the blocks' size), and an open-addressing table held the tags: 256 bytes
 * a live sampled block (600 MB more than plain for 96 MiB of 48-byte
 * blocks all sampled; now 20 MB). Tags are apart from entries because a
 * drain writes them, on whichever thread it runs: in the entries' lines
 * they made the lines of the blocks' own threads miss (the 2-thread stress
 * at one sample per 4 KiB took 29% more CPU time). Entries of blocks of
 * 512 bytes and more get a line each, so that two threads' blocks side by
 * side do not share one (the same stress took 9% more CPU time when those
 * of 1 KiB shared them, 7% more when those of 640-896 bytes did). */
/* A chunk's descriptor: its blocks' size and class and where their
 * metadata is. (One line holds two chunks' descriptors: a block's size and
 * its entry's address come from one load's line.) */
typedef struct chunk_desc {
    uint64_t *meta;             /* its entries (NULL: none)                   */
    uint64_t *tags;             /* its tags                                   */
    uint64_t size;              /* its blocks' size (0: none)                 */
    uint32_t recip;             /* small: ceil(2^32 / size), for k = off / size */
    uint16_t cls;
    uint8_t eshift;             /* log2 of the bytes of an entry              */
    uint8_t unused;
} chunk_desc;
static chunk_desc *chunks;      /* per chunk of the region                    */
static uint64_t *arena;         /* the meta arena, reserved like the region   */
static uintptr_t arena_size, arena_used, arena_committed;   /* in bytes        */
static uint64_t no_meta[3];     /* the entry ([0], [1]) and the tag ([2]) of a */
                                /* pointer that starts no block                */

/* A block's requested size is kept in its entry's second word: blocks of
 * 32 bytes or more have one; a 16-byte block's size is its usable size.
 * Reads are clamped to the usable size all the same. */
static int has_size_word(uintptr_t usable)
{
    return usable >= 32;
}

/* log2 of the bytes of an entry of a block of `size` bytes: the stamp
 * word, and the size word if it has one. */
static unsigned entry_shift(uintptr_t size)
{
    return !has_size_word(size) ? 3 : size < 512 ? 4 : 6;
}

static unsigned log2_ceil(size_t n)
{
    return n <= 1 ? 0 : 64 - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
}

/* The size of small class c. */
static uintptr_t class_size(unsigned c)
{
    if (c < 4)
        return (uintptr_t)16 * (c + 1);
    uintptr_t base = (uintptr_t)1 << (6 + (c - 4) / 4);
    return base + (base / 4) * ((c - 4) % 4 + 1);
}

/* The small class of a block of n bytes (n <= SMALL_MAX). */
static unsigned size_class(size_t n)
{
    if (n <= 64)
        return n <= 16 ? 0 : (unsigned)((n + 15) / 16) - 1;
    unsigned s = log2_ceil(n);                  /* 7 to 15 */
    size_t base = (size_t)1 << (s - 1), step = base / 4;
    return 4 + (s - 7) * 4 + (unsigned)((n - base + step - 1) >> (s - 3)) - 1;
}

/* Freed large blocks that keep their pages: each at most DIRTY_MAX_BLOCK,
 * together at most DIRTY_BUDGET (dirty_bytes, under the lock). */
#define DIRTY_MAX_BLOCK ((uintptr_t)32 << 20)
#define DIRTY_BUDGET ((uintptr_t)64 << 20)
static uintptr_t dirty_bytes;

/* In a block's stamp word: the block is the profiler's own. (Stamps are
 * TSC readings, far below 2^63.) */
#define OWN_BIT ((uint64_t)1 << 63)

/* The entry (stamp) and the tag of the block at p (in the region): of the
 * block p falls in, or no_meta (harmless to read and write) where there is
 * no block: inside a large block's run, or where the region was never cut
 * (pointers that a buggy program frees). Inline: callers that want one of
 * the two words compute only that one. */
static inline mt_block_meta meta_of(const void *p)
{
    uintptr_t off = (uintptr_t)p - mt_region.base;
    const chunk_desc *d = &chunks[off >> CHUNK_SHIFT];
    mt_block_meta m = {d->meta, d->tags};
    if (MT_UNLIKELY(!m.stamp))
        return (mt_block_meta){no_meta, no_meta + 2};
    if (d->cls < NSMALL) {
        uintptr_t k = ((off & (CHUNK - 1)) * (uint64_t)d->recip) >> 32;
        m.stamp += k << (d->eshift - 3);
        m.tag += k;
    }
    return m;
}

/* The descriptor of the chunk p is in (p in the region). Small blocks
 * share their chunk's size; a large block starts a chunk. */
static const chunk_desc *desc_of(uintptr_t p)
{
    return &chunks[(p - mt_region.base) >> CHUNK_SHIFT];
}

static uint64_t *stamp_of(const void *p)
{
    return meta_of(p).stamp;
}

/* Under the lock: bytes of the meta arena, aligned to a line and zeroed; NULL
 * if it is full. */
static uint64_t *arena_cut(uintptr_t bytes)
{
    bytes = (bytes + 63) & ~(uintptr_t)63;
    if (bytes > arena_size - arena_used)
        return NULL;
    if (arena_used + bytes > arena_committed) {
        uintptr_t end = (arena_used + bytes + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
        if (end > arena_size)
            end = arena_size;
        if (mprotect((char *)arena + arena_committed, end - arena_committed,
                     PROT_READ | PROT_WRITE) != 0)
            return NULL;
        arena_committed = end;
    }
    uint64_t *m = arena + arena_used / sizeof(uint64_t);
    arena_used += bytes;
    return m;
}

/* Under the lock: the descriptor of the chunk at region offset c, for blocks
 * of class cls and `size` bytes (one block if large), with its entries and
 * tags; 0, or -1 if the arena is full. (The arena needs at most 64 KiB a
 * chunk: as much as the region.) */
static int cut_meta(uintptr_t c, unsigned cls, uintptr_t size)
{
    uintptr_t n = cls >= NSMALL ? 1 : CHUNK / size;
    unsigned e = entry_shift(size);
    uint64_t *m = arena_cut(n << e);
    uint64_t *t = m ? arena_cut(n * sizeof(uint64_t)) : NULL;
    if (!t)
        return -1;
    chunk_desc *d = &chunks[c >> CHUNK_SHIFT];
    d->tags = t;
    d->size = size;
    d->recip = cls >= NSMALL ? 0 : (uint32_t)((((uint64_t)1 << 32) + size - 1) / size);
    d->cls = (uint16_t)cls;
    d->eshift = (uint8_t)e;
    d->meta = m;
    return 0;
}

int mt_region_reserve(void)
{
    if (mt_region.size)
        return 0;
    /* 256 GiB (and as much for the meta arena, which needs that much only
     * if every chunk held 16-byte blocks), or less where address space is
     * limited (ulimit -v): at most an eighth of the limit for the two, as
     * reserved space counts against it even though it costs no memory
     * (with 4 GB allowed, 2 GiB reserved made a program that needed 3
     * fail); a region that fills only loses samples (their blocks go to
     * the next malloc, preload.c). */
    uintptr_t cap = UINTPTR_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        cap = (uintptr_t)rl.rlim_cur / 16;
    for (unsigned bits = 38; bits >= 24; bits -= 2) {
        uintptr_t size = (uintptr_t)1 << bits;
        if (size > cap)
            continue;
        void *m = mmap(NULL, size + CHUNK, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            continue;
        uintptr_t map_size = (size >> CHUNK_SHIFT) * sizeof(chunk_desc);
        void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        void *ar = mmap(NULL, size, PROT_NONE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (map == MAP_FAILED || ar == MAP_FAILED) {
            munmap(m, size + CHUNK);
            if (map != MAP_FAILED)
                munmap(map, map_size);
            if (ar != MAP_FAILED)
                munmap(ar, size);
            continue;
        }
        chunks = map;
        arena = ar;
        arena_size = size;
        uintptr_t base = ((uintptr_t)m + CHUNK - 1) & ~(CHUNK - 1);
        __atomic_store_n(&mt_region.size, size, __ATOMIC_RELAXED);
        __atomic_store_n(&mt_region.base, base, __ATOMIC_RELEASE);
        return 0;
    }
    return -1;
}

/* ---- the threads' caches ------------------------------------------------ */

static pthread_once_t rc_once = PTHREAD_ONCE_INIT;
static pthread_key_t rc_key;
static int rc_key_ok;

/* rc_key's destructor: the ending thread's cached blocks back on the lists. */
static void rcache_return(void *arg)
{
    (void)arg;
    mt_thread *t = &mt_self;
    t->in_region++;
    pthread_mutex_lock(mt_region_mutex);
    for (unsigned c = 0; c < MT_RCACHE_CLASSES; c++) {
        while (t->rcache[c]) {
            void *b = t->rcache[c];
            t->rcache[c] = *(void **)b;
            *(void **)b = free_list[c];
            free_list[c] = b;
        }
        t->rcount[c] = 0;
    }
    pthread_mutex_unlock(mt_region_mutex);
    t->rc_keyed = 0;
    t->in_region--;
}

static void rc_key_create(void)
{
    rc_key_ok = pthread_key_create(&rc_key, rcache_return) == 0;
}

/* May the thread keep blocks in its cache? Only once its cache is sure to
 * be given back when it ends. (pthread_setspecific may allocate: from
 * glibc, as the thread is in_region.) */
static int rc_usable(mt_thread *t)
{
    if (MT_LIKELY(t->rc_keyed))
        return 1;
    pthread_once(&rc_once, rc_key_create);
    if (rc_key_ok && pthread_setspecific(rc_key, t) == 0)
        t->rc_keyed = 1;
    return t->rc_keyed;
}

/* Under the lock: `size` bytes (a multiple of CHUNK) of never-used address
 * space aligned to `align`, readable and writable; 0 when the region is full. */
static uintptr_t carve(uintptr_t size, uintptr_t align)
{
    uintptr_t base = mt_region.base;
    uintptr_t off = ((base + bump + align - 1) & ~(align - 1)) - base;
    if (off < bump || off + size < off || off + size > mt_region.size)
        return 0;
    if (off + size > committed) {
        uintptr_t end = (off + size + COMMIT_STEP - 1) & ~(COMMIT_STEP - 1);
        if (end > mt_region.size)
            end = mt_region.size;
        if (mprotect((void *)(mt_region.base + committed), end - committed,
                     PROT_READ | PROT_WRITE) != 0)
            return 0;
        committed = end;
    }
    bump = off + size;
    return mt_region.base + off;
}

/* Would the kernel give the next malloc n bytes? The region's pages escape
 * the overcommit check that refuses a mapping larger than memory and swap
 * allow (they are reserved MAP_NORESERVE), so without asking, a sampled
 * malloc(64 GiB) succeeded where glibc's fails with ENOMEM. Asked for
 * blocks of PROBE_MIN bytes and more (two system calls, nothing touched). */
#define PROBE_MIN ((size_t)1 << 26)
static int kernel_would_map(size_t n)
{
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 0;
    munmap(m, n);
    return 1;
}

void *mt_region_alloc(size_t n, size_t align, int zero, int own, mt_block_meta *meta)
{
    if (!mt_region.size || n > ((size_t)1 << 62) || align > ((size_t)1 << 40))
        return NULL;
    if (n >= PROBE_MIN && !kernel_would_map(n))
        return NULL;
    mt_thread *t = &mt_self;
    t->in_region++;
    size_t want = n > align ? n : align;
    if (align > 16)
        want = (size_t)1 << log2_ceil(want);
    unsigned c, s = 0;
    uintptr_t size = 0;         /* (a small class's: below, off the cache's path) */
    if (want <= SMALL_MAX) {
        c = size_class(want);
    } else {
        s = log2_ceil(want);
        c = LARGE(s);
        size = (uintptr_t)1 << s;
    }
    void *p = NULL;
    int fresh = 0, dirty = 0;
    int locked = 0;
    if (c < MT_RCACHE_CLASSES && !t->rcache[c] && rc_usable(t)) {
        /* Refill this thread's cache: half of what it may hold. */
        pthread_mutex_lock(mt_region_mutex);
        locked = 1;
        for (int k = 0; k < MT_RCACHE_MAX / 2 && free_list[c]; k++) {
            void *b = free_list[c];
            free_list[c] = *(void **)b;
            *(void **)b = t->rcache[c];
            t->rcache[c] = b;
            t->rcount[c]++;
        }
    }
    if (c < MT_RCACHE_CLASSES && t->rcache[c]) {
        if (locked)
            pthread_mutex_unlock(mt_region_mutex);
        p = t->rcache[c];
        t->rcache[c] = *(void **)p;
        t->rcount[c]--;
        goto got;
    }
    if (!locked)
        pthread_mutex_lock(mt_region_mutex);
    if (c < NSMALL)
        size = class_size(c);
    if (free_list[c] && (align <= CHUNK || ((uintptr_t)free_list[c] & (align - 1)) == 0)) {
        p = free_list[c];
        free_list[c] = *(void **)p;
        if (c >= NSMALL && (dirty = (int)((uintptr_t *)p)[1]) != 0)
            dirty_bytes -= size;
    } else if (c < NSMALL) {
        /* The next never-used block of this class's newest chunk, or the
         * first of a new chunk. Blocks are cut one at a time, not all put
         * on the list at once: that wrote into every page of the chunk,
         * 16 page faults for the first 16-byte block. */
        if (carve_pos[c] == carve_end[c]) {
            uintptr_t ch = carve(CHUNK, CHUNK);
            if (ch && cut_meta(ch - mt_region.base, c, size) == 0) {
                carve_pos[c] = ch;
                carve_end[c] = ch + CHUNK / size * size;
            }
        }
        if (carve_pos[c] != carve_end[c]) {
            p = (void *)carve_pos[c];
            carve_pos[c] += size;
            fresh = 1;
        }
    } else {
        uintptr_t ch = carve(size, align > CHUNK ? align : CHUNK);
        if (ch && cut_meta(ch - mt_region.base, c, size) == 0) {
            p = (void *)ch;
            fresh = 1;
        }
    }
    pthread_mutex_unlock(mt_region_mutex);
got:
    if (p && zero && !fresh) {
        /* A reused large block that gave its pages back is zero past its
         * first page. */
        size_t z = c >= NSMALL && n > PAGE && !dirty ? PAGE : n;
        memset(p, 0, z);
    } else if (p && !fresh) {
        /* no stale list link (or flag) in the program's data */
        ((void **)p)[0] = NULL;
        if (c >= NSMALL)
            ((void **)p)[1] = NULL;
    }
    if (p) {
        /* (mt_region_set_size's work, with the entry looked up once) */
        mt_block_meta bm = meta_of(p);
        uint64_t *m = bm.stamp;
        *m = own ? *m | OWN_BIT : *m & ~OWN_BIT;
        if (has_size_word(desc_of((uintptr_t)p)->size))
            m[1] = n;
        if (meta)
            *meta = bm;
    }
    t->in_region--;
    return p;
}

size_t mt_region_size(const void *p)
{
    size_t usable = mt_region_usable(p);
    if (!has_size_word(usable))
        return usable;
    uint64_t n = stamp_of(p)[1];
    return n < usable ? (size_t)n : usable;
}

void mt_region_set_size(void *p, size_t n)
{
    if (has_size_word(mt_region_usable(p)))
        stamp_of(p)[1] = n;
}

size_t mt_region_usable(const void *p)
{
    return (size_t)desc_of((uintptr_t)p)->size;
}

/* Does p start a block (of the chunk described by d)? Not if the program
 * passes a pointer it never got, or one inside a block. */
static int starts_block(const chunk_desc *d, uintptr_t p)
{
    uintptr_t size = d->size, in = (p - mt_region.base) & (CHUNK - 1);
    if (!size)
        return 0;
    if (d->cls >= NSMALL)
        return in == 0;
    return ((in * (uint64_t)d->recip) >> 32) * size == in && in + size <= CHUNK;
}

int mt_region_kind(const void *p, mt_block_meta *meta)
{
    if (!starts_block(desc_of((uintptr_t)p), (uintptr_t)p))
        return MT_BLOCK_NONE;
    mt_block_meta m = meta_of(p);
    if (meta)
        *meta = m;
    return (*m.stamp & OWN_BIT) ? MT_BLOCK_OWN : MT_BLOCK_SAMPLED;
}

/* Take the lock, or (may_block 0: a signal handler inside the allocator)
 * try to; 1 if held. */
static int lock_lists(int may_block)
{
    if (may_block)
        return pthread_mutex_lock(mt_region_mutex) == 0;
    return pthread_mutex_trylock(mt_region_mutex) == 0;
}

/* A large block (of `size` bytes, a power of two) back on its list, with
 * its pages kept while the budget allows, else given back. If the lock
 * cannot be had (may_block 0) the block is kept out of use. */
static void free_large(void *p, uintptr_t size, int may_block)
{
    unsigned c = LARGE((unsigned)__builtin_ctzll(size));
    if (!lock_lists(may_block))
        return;
    int keep = size <= DIRTY_MAX_BLOCK && dirty_bytes + size <= DIRTY_BUDGET;
    if (keep) {
        dirty_bytes += size;
    } else {
        pthread_mutex_unlock(mt_region_mutex);   /* no syscall under the lock */
        madvise((char *)p + PAGE, size - PAGE, MADV_DONTNEED);
        if (!lock_lists(may_block))
            return;
    }
    ((void **)p)[0] = free_list[c];
    ((uintptr_t *)p)[1] = (uintptr_t)keep;
    free_list[c] = p;
    pthread_mutex_unlock(mt_region_mutex);
}

void mt_region_free(void *p, int may_block)
{
    /* (p starts a block: every caller asked mt_region_kind first) */
    const chunk_desc *d = desc_of((uintptr_t)p);
    uintptr_t size = d->size;
    unsigned c = d->cls;
    mt_thread *t = &mt_self;
    if (t->in_region)
        may_block = 0;          /* a signal handler that interrupted us */
    t->in_region++;
    if (c >= NSMALL) {
        free_large(p, size, may_block);
    } else if (may_block && c < MT_RCACHE_CLASSES && t->rcount[c] < MT_RCACHE_MAX &&
               rc_usable(t)) {
        *(void **)p = t->rcache[c];
        t->rcache[c] = p;
        t->rcount[c]++;
    } else if (lock_lists(may_block)) {
        *(void **)p = free_list[c];
        free_list[c] = p;
        pthread_mutex_unlock(mt_region_mutex);
    }   /* else: a signal handler inside the allocator; the block is kept */
    t->in_region--;
}

void mt_region_free_own(void *p)
{
    *stamp_of(p) &= ~OWN_BIT;
    mt_region_free(p, 1);
}

mt_block_meta mt_region_meta(const void *p)
{
    return meta_of(p);
}
