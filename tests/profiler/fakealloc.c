/*
 * fakealloc.c - a shared library that replaces the malloc family, as
 * libjemalloc and libtcmalloc do: its blocks carry a header of its own and
 * its free refuses (aborts on) a block that is not its own, as a real
 * allocator's free may crash on one. It also has an entry point of its own
 * (fake_alloc, as jemalloc's mallocx) whose blocks the program gives back
 * with free. Under the profiler, the unsampled blocks must come from it and
 * go back to it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *__libc_malloc(size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);

#define MAGIC 0xFA4EA110C0FFEEull
#define HEADER 32

typedef struct header {
    uint64_t magic;
    size_t size;
    void *base;
    uint64_t pad;
} header;

static unsigned long served;

unsigned long fake_served(void)
{
    return __atomic_load_n(&served, __ATOMIC_RELAXED);
}

static void *block(size_t align, size_t n)
{
    size_t off = align > HEADER ? align : HEADER;
    char *base = align > 16 ? __libc_memalign(align, off + n) : __libc_malloc(off + n);
    if (!base)
        return NULL;
    header *h = (header *)(base + off) - 1;
    h->magic = MAGIC;
    h->size = n;
    h->base = base;
    __atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
    return base + off;
}

static header *own(void *p)
{
    header *h = (header *)p - 1;
    if (h->magic != MAGIC)
        abort();                /* not one of ours: a real allocator may crash */
    return h;
}

void *fake_alloc(size_t n) { return block(16, n); }
void *malloc(size_t n) { return block(16, n); }
void *memalign(size_t a, size_t n) { return block(a, n); }
size_t malloc_usable_size(void *p) { return p ? own(p)->size : 0; }

void free(void *p)
{
    if (!p)
        return;
    header *h = own(p);
    h->magic = 0;
    __libc_free(h->base);
}

void *calloc(size_t n, size_t m)
{
    void *p = n && m > SIZE_MAX / n ? NULL : block(16, n * m);
    if (p)
        memset(p, 0, n * m);
    return p;
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    void *q = malloc(n);
    if (q) {
        size_t old = own(p)->size;
        memcpy(q, p, old < n ? old : n);
        free(p);
    }
    return q;
}
