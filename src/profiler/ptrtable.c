/*
 * ptrtable.c - the table of sampled live pointers and their object ids.
 * free() no longer asks it about every pointer (a sampled block is one of
 * region.c's, a range compare), only about blocks of the region; lookups
 * stay lock-free and O(1): open addressing with linear probing over atomic
 * slots, kept at most 1/4 full.
 *
 * Inserts and removals happen under the session lock (sampled path only).
 * A removal leaves a tombstone; when slots in use pass 1/4 of the table it
 * is rebuilt into a second buffer of the same size (or a fresh one twice as
 * large) which is then published with one atomic store. Buffers are mmap'ed
 * and never unmapped, so a reader that loaded an old table pointer always
 * reads valid memory. The spare buffer is reused at the next same-size
 * rebuild; a generation count, bumped before a buffer is rewritten and
 * checked by a reader after a miss (a seqlock), makes a reader that was
 * stalled during a rebuild look again instead of missing its pointer.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "profiler/profiler_int.h"

#define EMPTY 0
#define TOMB 1
#define MIN_BITS 10

typedef struct slot {
    _Atomic uintptr_t addr;
    int64_t id;
} slot;

typedef struct table {
    unsigned bits;
    size_t cap;
    slot *slots;
} table;

static table *_Atomic cur;
static _Atomic unsigned gen;    /* bumped before a spare buffer is reused */

static void bump_gen(void)
{
    atomic_fetch_add_explicit(&gen, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
}
static table *spare;            /* same size as cur, or NULL               */
static size_t used, live;       /* slots not EMPTY / holding a pointer     */

static inline size_t hash(uintptr_t a, unsigned bits)
{
    return (size_t)(((uint64_t)(a >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

int mt_ptrtable_contains(uintptr_t addr)
{
    for (;;) {
        unsigned g = atomic_load_explicit(&gen, memory_order_acquire);
        table *t = atomic_load_explicit(&cur, memory_order_acquire);
        if (!t)
            return 0;
        size_t mask = t->cap - 1;
        for (size_t i = hash(addr, t->bits);; i = (i + 1) & mask) {
            uintptr_t a = atomic_load_explicit(&t->slots[i].addr, memory_order_relaxed);
            if (a == EMPTY)
                break;
            if (a == addr)
                return addr > TOMB;
        }
        atomic_thread_fence(memory_order_acquire);
        if (MT_LIKELY(atomic_load_explicit(&gen, memory_order_relaxed) == g))
            return 0;
    }
}

static table *table_new(unsigned bits)
{
    size_t cap = (size_t)1 << bits;
    size_t sz = sizeof(table) + cap * sizeof(slot);
    void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    table *t = m;
    t->bits = bits;
    t->cap = cap;
    t->slots = (slot *)(t + 1);
    return t;
}

static void put(table *t, uintptr_t addr, int64_t id)
{
    size_t mask = t->cap - 1;
    size_t i = hash(addr, t->bits);
    while (atomic_load_explicit(&t->slots[i].addr, memory_order_relaxed) > TOMB)
        i = (i + 1) & mask;
    t->slots[i].id = id;
    atomic_store_explicit(&t->slots[i].addr, addr, memory_order_release);
}

/* Rebuild into a table with room for one more pointer; 0 or -1. */
static int rebuild(table *t)
{
    unsigned bits = t ? t->bits : MIN_BITS;
    table *n;
    if (t && (live + 1) * 8 > t->cap) {
        bits++;
        n = table_new(bits);
        if (!n)
            return -1;
        spare = NULL;           /* the old pair is retired for good */
    } else if (t && spare) {
        n = spare;
        bump_gen();
        for (size_t i = 0; i < n->cap; i++)
            atomic_store_explicit(&n->slots[i].addr, EMPTY, memory_order_relaxed);
    } else {
        n = table_new(bits);
        if (!n)
            return -1;
    }
    if (t)
        for (size_t i = 0; i < t->cap; i++) {
            uintptr_t a = atomic_load_explicit(&t->slots[i].addr, memory_order_relaxed);
            if (a > TOMB)
                put(n, a, t->slots[i].id);
        }
    used = live;
    atomic_store_explicit(&cur, n, memory_order_release);
    if (t && t->bits == n->bits)
        spare = t;
    bump_gen();
    return 0;
}

int mt_ptrtable_insert(uintptr_t addr, int64_t id)
{
    table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    if (!t || (used + 1) * 4 > t->cap) {
        if (rebuild(t) < 0)
            return -1;
        t = atomic_load_explicit(&cur, memory_order_relaxed);
    }
    /* An address already present (freed behind our back, e.g. through
     * __libc_free) takes the new id; else the first tombstone or empty slot
     * on its probe path. */
    size_t mask = t->cap - 1, tomb = (size_t)-1, i;
    for (i = hash(addr, t->bits);; i = (i + 1) & mask) {
        uintptr_t a = atomic_load_explicit(&t->slots[i].addr, memory_order_relaxed);
        if (a == addr) {
            t->slots[i].id = id;
            return 0;
        }
        if (a == TOMB && tomb == (size_t)-1)
            tomb = i;
        if (a == EMPTY)
            break;
    }
    if (tomb != (size_t)-1)
        i = tomb;
    else
        used++;
    t->slots[i].id = id;
    atomic_store_explicit(&t->slots[i].addr, addr, memory_order_release);
    live++;
    return 0;
}

int mt_ptrtable_remove(uintptr_t addr, int64_t *id)
{
    table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    if (!t)
        return 0;
    size_t mask = t->cap - 1;
    for (size_t i = hash(addr, t->bits);; i = (i + 1) & mask) {
        uintptr_t a = atomic_load_explicit(&t->slots[i].addr, memory_order_relaxed);
        if (a == EMPTY)
            return 0;
        if (a == addr && addr > TOMB) {
            *id = t->slots[i].id;
            atomic_store_explicit(&t->slots[i].addr, TOMB, memory_order_release);
            live--;
            return 1;
        }
    }
}

void mt_ptrtable_clear(void)
{
    table *t = atomic_load_explicit(&cur, memory_order_relaxed);
    bump_gen();
    if (t)
        for (size_t i = 0; i < t->cap; i++)
            atomic_store_explicit(&t->slots[i].addr, EMPTY, memory_order_relaxed);
    used = live = 0;
}

size_t mt_ptrtable_count(void)
{
    return live;
}
