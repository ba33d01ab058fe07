/*
 * unwind.c - backtraces of the allocating thread without frame pointers:
 * return addresses from the DWARF unwind tables (.eh_frame), innermost
 * first, with the profiler's own frames dropped. The call itself is
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

void mt_unwind_init(void)
{
    if (!mt_self_hi)
        dl_iterate_phdr(find_self, (void *)(uintptr_t)&mt_unwind_init);
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
    size_t out = 0;
    for (size_t i = skip; i < n; i++)
        if (codes[i] > 1 && codes[i] < ((uint64_t)1 << 62))
            codes[out++] = codes[i];
    return out;
}
