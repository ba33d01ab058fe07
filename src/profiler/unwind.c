/*
 * unwind.c - backtraces of the allocating thread without frame pointers:
 * return addresses from the DWARF unwind tables (.eh_frame), innermost
 * first, with the profiler's own frames dropped.
 *
 * Two unwinders are built in: libunwind's unw_backtrace (local-only, with
 * its per-thread cache of frame layouts) and libgcc's _Unwind_Backtrace.
 * MEMTRACE_UNWIND=libgcc|libunwind picks one; the default is the faster
 * (docs/PROFILER.md has the measurements).
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "profiler/profiler_int.h"

static uintptr_t self_lo, self_hi;  /* this library's mapped range        */
static int use_libgcc;

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
        self_lo = lo;
        self_hi = hi;
        return 1;
    }
    return 0;
}

void mt_unwind_init(void)
{
    if (!self_hi)
        dl_iterate_phdr(find_self, (void *)(uintptr_t)&mt_unwind_init);
    const char *u = getenv("MEMTRACE_UNWIND");
    use_libgcc = u && strcmp(u, "libgcc") == 0;
    if (!use_libgcc)
        unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

const char *mt_unwind_name(void)
{
    return use_libgcc ? "libgcc" : "libunwind";
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

size_t mt_unwind(uint64_t *codes, size_t max)
{
    size_t n;
    if (use_libgcc) {
        gcc_state s = {codes, 0, max};
        _Unwind_Backtrace(gcc_frame, &s);
        n = s.n;
    } else {
        /* unw_backtrace fills void * slots; uint64_t has the same size. */
        int k = unw_backtrace((void **)codes, (int)max);
        n = k > 0 ? (size_t)k : 0;
    }
    size_t skip = 0;
    while (skip < n && codes[skip] >= self_lo && codes[skip] < self_hi)
        skip++;
    size_t out = 0;
    for (size_t i = skip; i < n; i++)
        if (codes[i] > 1 && codes[i] < ((uint64_t)1 << 62))
            codes[out++] = codes[i];
    return out;
}
