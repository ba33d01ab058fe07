/*
 * unwind.c - backtraces of the allocating thread without frame pointers:
 * return addresses from the DWARF unwind tables (.eh_frame), innermost
 * first, with the profiler's own frames dropped, and C++'s operator new
 * (the site of `new T` is its caller, as a C program's is malloc's). The
 * call itself is
 * mt_unwind in unwind.h, inlined into the sampled path (see there).
 *
 * Two unwinders are built in: libunwind's unw_backtrace (local-only, with
 * its per-thread cache of frame layouts) and libgcc's _Unwind_Backtrace.
 * MEMTRACE_UNWIND=libgcc|libunwind picks one; the default is the faster
 * (docs/PROFILER.md has the measurements).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "profiler/unwind.h"

uintptr_t mt_self_lo, mt_self_hi;   /* this library's mapped range        */
int mt_unwind_libgcc;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    uintptr_t probe = (uintptr_t)data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (s < lo)
            lo = s;
        if (s + ph->p_memsz > hi)
            hi = s + ph->p_memsz;
    }
    if (probe >= lo && probe < hi) {
        mt_self_lo = lo;
        mt_self_hi = hi;
        return 1;
    }
    return 0;
}

/* The operator new and new[] variants that the program calls (libstdc++'s,
 * or its own replacements), each a range of code; found at start-up, so a
 * C++ library dlopen'ed later keeps these frames. */
#define MAX_NEW 8
static uintptr_t new_lo[MAX_NEW], new_hi[MAX_NEW];
static uintptr_t new_min = UINTPTR_MAX, new_max;   /* bounds of them all */
static int n_new;

static void find_new(void)
{
    static const char *const names[MAX_NEW] = {
        "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
        "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
        "_ZnwmSt11align_val_tRKSt9nothrow_t", "_ZnamSt11align_val_tRKSt9nothrow_t"};
    for (int i = 0; i < MAX_NEW && n_new < MAX_NEW; i++) {
        void *a = dlsym(RTLD_DEFAULT, names[i]);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (!a || !dladdr1(a, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
            !sym->st_size)
            continue;
        new_lo[n_new] = (uintptr_t)a;
        new_hi[n_new] = (uintptr_t)a + sym->st_size;
        if (new_lo[n_new] < new_min)
            new_min = new_lo[n_new];
        if (new_hi[n_new] > new_max)
            new_max = new_hi[n_new];
        n_new++;
    }
}

static int in_new(uint64_t pc)
{
    if (pc < new_min || pc > new_max)      /* (a return address may be the end) */
        return 0;
    for (int i = 0; i < n_new; i++)
        if (pc > new_lo[i] && pc <= new_hi[i])
            return 1;
    return 0;
}

void mt_unwind_init(void)
{
    if (!mt_self_hi)
        dl_iterate_phdr(find_self, (void *)(uintptr_t)&mt_unwind_init);
    if (!n_new)
        find_new();
    const char *u = getenv("MEMTRACE_UNWIND");
    mt_unwind_libgcc = u && strcmp(u, "libgcc") == 0;
    if (!mt_unwind_libgcc)
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

const char *mt_unwind_name(void)
{
    return mt_unwind_libgcc ? "libgcc" : "libunwind";
}

typedef struct gcc_state {
    uint64_t *codes;
    size_t n, max;
} gcc_state;

static _Unwind_Reason_Code gcc_frame(struct _Unwind_Context *ctx, void *arg)
{
    gcc_state *s = arg;
    int before = 0;
    uintptr_t ip = _Unwind_GetIPInfo(ctx, &before);
    if (!ip || s->n >= s->max)
        return _URC_END_OF_STACK;
    s->codes[s->n++] = ip;
    return _URC_NO_REASON;
}

size_t mt_unwind_gcc(uint64_t *codes, size_t max)
{
    gcc_state s = {codes, 0, max};
    _Unwind_Backtrace(gcc_frame, &s);
    return s.n;
}

size_t mt_unwind_keep(uint64_t *codes, size_t n)
{
    size_t skip = 0;
    while (skip < n && codes[skip] >= mt_self_lo && codes[skip] < mt_self_hi)
        skip++;
    while (skip < n && in_new(codes[skip]))
        skip++;
    size_t out = 0;
    for (size_t i = skip; i < n; i++)
        if (codes[i] > 1 && codes[i] < ((uint64_t)1 << 62))
            codes[out++] = codes[i];
    return out;
}
