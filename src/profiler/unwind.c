/*
 * unwind.c - backtraces of the allocating thread without frame pointers:
 * return addresses from the DWARF unwind tables (.eh_frame), innermost
 * first, with the profiler's own frames dropped, and C++'s operator new
 * (the site of `new T` is its caller, as a C program's is malloc's). The
 * call itself is
 * mt_unwind in unwind.h, inlined into the sampled path (see there).
 *
 * The default unwinder is this file's own (mt_unwind_fast): on x86-64 a
 * frame's rule at a call site nearly always says "the caller's stack
 * pointer is this frame's stack or frame pointer plus N; the return
 * address and the caller's frame pointer are saved at offsets from it".
 * Those three numbers are read once per return address, from libdw's
 * reading of the module's .eh_frame (symbolize.c, mt_symbolize_cfi, under
 * the session lock), and kept in a table that is read without a lock; a
 * sample then costs a table lookup and two loads a frame. It was written
 * because libunwind's unw_backtrace spends ~80 ns a call before its first
 * frame (its context and cursor set up; ~13 ns a frame after that), half
 * of what a sample's unwinding cost in the 2-thread stress (5 frames).
 * Frames with any other rule (signal frames, expressions, JIT code without
 * unwind tables) make the whole backtrace libunwind's. MEMTRACE_UNWIND=
 * check unwinds every sample both ways and counts the differences (the
 * tests run it on threads, fork, signal handlers, plugins, C++, 1000-frame
 * stacks with variable-length arrays: none).
 *
 * libunwind's unw_backtrace (local-only, with its per-thread cache of
 * frame layouts) and libgcc's _Unwind_Backtrace are also built in:
 * MEMTRACE_UNWIND=libunwind|libgcc|step picks one instead (docs/PROFILER.md
 * has the measurements).
 *
 * The fast unwinder's rules, like unw_backtrace's per-thread caches of
 * frame layouts, are keyed by address and never flushed (libunwind's, not
 * even by unw_flush_cache): once dlclose has
 * unmapped a library and another has been mapped where it was, they may
 * describe the code that was there, and the unwinder would read the stack
 * where that layout says, unchecked. So the ranges that dlclose unmapped
 * are kept, each sample looks whether the loader has mapped something
 * since, and once something overlaps one of them, libunwind unwinds one
 * unw_step at a time, through the caches that unw_flush_cache does flush.
 * That is ~150 times slower (~2.5 us a frame here: libunwind blocks
 * signals around each frame's cache lookup), so it is not done at every
 * unload, only when an address is reused.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "profiler/unwind.h"

uintptr_t mt_self_lo, mt_self_hi;   /* this library's mapped range        */
int mt_unwinder;
static int fast_off;                /* MEMTRACE_UNWIND=libunwind          */
int mt_unwind_checking;             /* MEMTRACE_UNWIND=check              */
uint64_t mt_code_gen;

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

/* Is pc in one of operator new's ranges? Out of line, and called only for
 * a pc within their bounds: inlined into mt_unwind_keep, its loop over the
 * ranges made every sample load all sixteen of them first. */
static __attribute__((noinline)) int in_new(uint64_t pc)
{
    for (int i = 0; i < n_new; i++)
        if (pc > new_lo[i] && pc <= new_hi[i])
            return 1;
    return 0;
}

int mt_unwind_env_ok(void)
{
    static const char *const known[] = {"libunwind", "libgcc", "step", "check"};
    const char *u = getenv("MEMTRACE_UNWIND");
    if (!u || !*u)
        return 1;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(u, known[i]) == 0)
            return 1;
    return 0;
}

void mt_unwind_init(void)
{
    if (!mt_self_hi)
        dl_iterate_phdr(find_self, (void *)(uintptr_t)&mt_unwind_init);
    if (!n_new)
        find_new();
    const char *u = getenv("MEMTRACE_UNWIND");   /* (another name: mt_unwind_env_ok) */
    if (u && strcmp(u, "libgcc") == 0)
        mt_unwinder = MT_UNWIND_GCC;
    else if (u && strcmp(u, "step") == 0)       /* (to measure it) */
        mt_unwinder = MT_UNWIND_STEP;
    else if (u && strcmp(u, "check") == 0)      /* (to test the fast one) */
        mt_unwind_checking = 1;
    else if (u && strcmp(u, "libunwind") == 0)  /* unw_backtrace alone */
        fast_off = 1;
}

void mt_unwind_start(void)
{
    static int done;
    if (done || mt_unwinder == MT_UNWIND_GCC)
        return;
    done = 1;
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

const char *mt_unwind_name(void)
{
    return mt_unwinder == MT_UNWIND_GCC ? "libgcc" :
           mt_unwinder == MT_UNWIND_STEP ? "libunwind-step" :
           mt_unwind_checking ? "check" :
           fast_off ? "libunwind" : "cfi, else libunwind";
}

/* ---- what dlclose unmapped ---- */

/* Ranges of the loaded objects' segments, in a snapshot. */
typedef mt_unwind_seg seg;

typedef struct segs {
    seg *v;
    size_t n, max;
    int overflow;
} segs;

static int segs_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    segs *s = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !ph->p_memsz)
            continue;
        if (s->n == s->max) {
            s->overflow = 1;
            return 1;
        }
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        s->v[s->n++] = (seg){lo, lo + ph->p_memsz};
    }
    return 0;
}

#define MAX_SEGS 1024
static seg unmapped[64];        /* written under the session lock */
static size_t n_unmapped;       /* (published with a release store) */
static int unmapped_overflow;   /* more than fit: any new object may reuse */
int mt_unmapped_any;
static unsigned long long checked_adds;    /* loader's adds, last looked at */

seg *mt_unwind_objects(size_t *n)
{
    segs s = {malloc(MAX_SEGS * sizeof(seg)), 0, MAX_SEGS, 0};
    if (!s.v) {
        *n = SIZE_MAX;
        return NULL;
    }
    dl_iterate_phdr(segs_cb, &s);
    *n = s.overflow ? SIZE_MAX : s.n;
    return s.v;
}

static int listed(const seg *v, size_t n, seg g)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].lo == g.lo && v[i].hi == g.hi)
            return 1;
    return 0;
}

void mt_unwind_unmapped(seg *before, size_t n, unsigned long long adds)
{
    size_t m = 0;
    seg *now = mt_unwind_objects(&m);
    /* Something mapped meanwhile (another thread's dlopen) may sit where
     * the closed library was, with the same segments: assume it does. */
    if (!before || n == SIZE_MAX || !now || m == SIZE_MAX || mt_loader_adds() != adds) {
        __atomic_store_n(&unmapped_overflow, 1, __ATOMIC_RELAXED);
    } else {
        for (size_t i = 0; i < n; i++) {
            if (listed(now, m, before[i]) || listed(unmapped, n_unmapped, before[i]))
                continue;
            if (n_unmapped == sizeof unmapped / sizeof *unmapped) {
                __atomic_store_n(&unmapped_overflow, 1, __ATOMIC_RELAXED);
                break;
            }
            unmapped[n_unmapped] = before[i];
            __atomic_store_n(&n_unmapped, n_unmapped + 1, __ATOMIC_RELEASE);
        }
    }
    free(now);
    free(before);
    if (__atomic_load_n(&mt_unwinder, __ATOMIC_RELAXED) == MT_UNWIND_TRACE) {
        /* the next sample looks at everything mapped, whatever a sample
         * of another thread looked at before these ranges were known */
        __atomic_store_n(&checked_adds, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&mt_unmapped_any, 1, __ATOMIC_RELEASE);
    }
}

/* On the sampled path, before unwinding, once code has been unmapped:
 * a dl_iterate_phdr call (~15-40 ns) while nothing new is mapped; when
 * something is, its segments against the ranges unmapped. (A library's
 * constructors, which may allocate, run after it is counted.) */
void mt_unwind_check_loads(void)
{
    unsigned long long adds = mt_loader_adds();
    if (adds == __atomic_load_n(&checked_adds, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&checked_adds, adds, __ATOMIC_RELAXED);
    size_t m = 0, nu = __atomic_load_n(&n_unmapped, __ATOMIC_ACQUIRE);
    seg *now = mt_unwind_objects(&m);
    int reuse = !now || m == SIZE_MAX || __atomic_load_n(&unmapped_overflow, __ATOMIC_RELAXED);
    for (size_t i = 0; !reuse && i < m; i++)
        for (size_t j = 0; j < nu; j++)
            if (now[i].lo < unmapped[j].hi && unmapped[j].lo < now[i].hi)
                reuse = 1;
    free(now);
    if (reuse) {
        unw_flush_cache(unw_local_addr_space, 0, 0);
        __atomic_store_n(&mt_unwinder, MT_UNWIND_STEP, __ATOMIC_RELAXED);
        __atomic_store_n(&mt_unmapped_any, 0, __ATOMIC_RELAXED);
    }
}

/* ---- the fast unwinder ---- */

/* Rules by return address: written once each, under the session lock
 * (the rule, then the key with a release store), read without a lock.
 * Never evicted; full, the fast unwinder gives up for good. A rule and
 * its key share a line. */
#define RULE_BITS 15
#define RULE_PROBES 16
typedef struct rule_slot {
    uint64_t key;               /* a return address; 0: empty */
    mt_cfi_rule rule;
} rule_slot;
static rule_slot rules[1 << RULE_BITS];
static int rules_full;
void (*mt_unwind_filler)(uint64_t ra, mt_cfi_rule *r);

/* Return addresses are spread in their low bits: a shift and a mask. */
static inline size_t rule_hash(uint64_t ra)
{
    return (size_t)(ra ^ (ra >> RULE_BITS)) & ((1u << RULE_BITS) - 1);
}

static inline const mt_cfi_rule *rule_find(uint64_t ra)
{
    size_t h = rule_hash(ra);
    for (int i = 0; i < RULE_PROBES; i++) {
        const rule_slot *e = &rules[(h + (size_t)i) & ((1u << RULE_BITS) - 1)];
        uint64_t key = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
        if (key == ra)
            return &e->rule;
        if (!key)
            return NULL;
    }
    return NULL;
}

/* Under the session lock (mt_unwind_filler calls it). */
void mt_unwind_rule_add(uint64_t ra, const mt_cfi_rule *r)
{
    size_t h = rule_hash(ra);
    for (int i = 0; i < RULE_PROBES; i++) {
        rule_slot *e = &rules[(h + (size_t)i) & ((1u << RULE_BITS) - 1)];
        uint64_t key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        if (key == ra)
            return;
        if (!key) {
            e->rule = *r;
            __atomic_store_n(&e->key, ra, __ATOMIC_RELEASE);
            return;
        }
    }
    __atomic_store_n(&rules_full, 1, __ATOMIC_RELAXED);
}

/* Return addresses of the calling thread, innermost first (the first is
 * that of frame's function, or this function's own), found with the
 * rules above, each looked up once
 * in libdw's reading of .eh_frame (mt_unwind_filler) and kept: the
 * registers an x86-64 unwind needs are the stack pointer, the frame
 * pointer and the return address, and the rules of nearly every frame
 * say where they are as offsets. 0 if a frame has another kind of rule
 * (libunwind unwinds those). */
__attribute__((noinline)) size_t mt_unwind_fast(const void *frame, uint64_t *codes,
                                                size_t max)
{
#ifndef __x86_64__
    return 0;                   /* (the rules name x86-64's registers) */
#endif
    if (!mt_unwind_filler || fast_off || __atomic_load_n(&rules_full, __ATOMIC_RELAXED))
        return 0;
    /* __builtin_frame_address gives a function a frame pointer: its
     * caller's frame pointer is saved at fp, the return address above */
    const uint64_t *fp = frame ? frame : __builtin_frame_address(0);
    uint64_t ip = fp[1], sp = (uint64_t)(uintptr_t)(fp + 2), bp = fp[0], sp0 = sp;
    int bp_ok = 1;
    size_t n = 0;
    uint64_t last_ip = 0;
    mt_cfi_rule r = {0, 0, 0, MT_CFI_BAD};
    while (n < max) {
        codes[n++] = ip;
        if (ip != last_ip) {            /* (recursion: the same rule again) */
            const mt_cfi_rule *found = rule_find(ip);
            if (MT_LIKELY(found != NULL))
                r = *found;
            else
                mt_unwind_filler(ip, &r);   /* (bad ones kept too: asked once) */
            last_ip = ip;
        }
        if (r.flags & (MT_CFI_END | MT_CFI_BAD))
            return r.flags & MT_CFI_BAD ? 0 : n;
        if ((r.flags & MT_CFI_RBP_BASE) && !bp_ok)
            return 0;
        uint64_t cfa = ((r.flags & MT_CFI_RBP_BASE) ? bp : sp) + (uint64_t)(int64_t)r.cfa_off;
        /* A caller's frame lies above, and within reach (a stack deeper
         * than 1 GiB is left to libunwind). */
        if (cfa <= sp || (cfa & 7) || cfa - sp0 > ((uint64_t)1 << 30))
            return 0;
        ip = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)r.ra_off);
        if (r.flags & MT_CFI_RBP_SAVED)
            bp = *(const uint64_t *)(uintptr_t)(cfa + (uint64_t)(int64_t)r.rbp_off);
        else if (r.flags & MT_CFI_RBP_LOST)
            bp_ok = 0;
        sp = cfa;
        if (!ip)
            break;
    }
    return n;
}

/* MEMTRACE_UNWIND=check: samples, those the fast unwinder left to
 * libunwind, those where the two differ (and the first such sample's
 * frame counts). */
static unsigned long check_n, check_fallback, check_differ;
static size_t check_first_a, check_first_b;

size_t mt_unwind_check(const void *frame, uint64_t *codes, size_t max)
{
    uint64_t fast[MT_MAX_FRAMES];
    size_t a = mt_unwind_fast(frame, fast, max < MT_MAX_FRAMES ? max : MT_MAX_FRAMES);
    if (a)
        a = mt_unwind_keep(fast, a);
    size_t raw = mt_unwind_step(codes, max), b = mt_unwind_keep(codes, raw);
    /* A stack deeper than max: unw_step's codes end sooner, by the frames
     * of ours it walked and the fast unwinder started above (frame). */
    size_t want = raw == max && a > b ? b : a;
    __atomic_add_fetch(&check_n, 1, __ATOMIC_RELAXED);
    if (!a && b) {
        __atomic_add_fetch(&check_fallback, 1, __ATOMIC_RELAXED);
    } else if (want != b || memcmp(fast, codes, b * sizeof *codes) != 0) {
        if (__atomic_add_fetch(&check_differ, 1, __ATOMIC_RELAXED) == 1)
            check_first_a = a, check_first_b = b;
    }
    return b;
}

__attribute__((destructor)) static void check_report(void)
{
    if (mt_unwind_checking && check_n)
        fprintf(stderr, "memtrace: unwind check: %lu samples, %lu left to libunwind, "
                "%lu differ (first: %zu frames against %zu)\n",
                check_n, check_fallback, check_differ, check_first_a, check_first_b);
}

size_t mt_unwind_step(uint64_t *codes, size_t max)
{
    unw_context_t uc;
    unw_cursor_t c;
    size_t n = 0;
    if (unw_getcontext(&uc) < 0 || unw_init_local(&c, &uc) < 0)
        return 0;
    while (n < max && unw_step(&c) > 0) {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
            break;
        codes[n++] = ip;
    }
    return n;
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
    /* Bounds in locals (the stores to codes would make the compiler reload
     * globals of their type); c - lo < span is lo <= c < lo + span. The
     * bounds of operator new's ranges are inclusive: a return address may
     * be a range's end. */
    const uint64_t lo = mt_self_lo, self = mt_self_hi - mt_self_lo;
    const uint64_t nlo = new_min, nspan = new_max - new_min;
    size_t skip = 0;
    while (skip < n && codes[skip] - lo < self)
        skip++;
    while (skip < n && codes[skip] - nlo <= nspan && in_new(codes[skip]))
        skip++;
    /* Frames of ours further out are wrappers the program called (our
     * pthread_create, whose glibc namesake allocates the thread's TLS; our
     * dlclose, while a library's destructors run): the program called
     * glibc's function, which is the next frame. Codes are 2 .. 2^48 - 1. */
    size_t out = 0;
    uint64_t gen = __atomic_load_n(&mt_code_gen, __ATOMIC_RELAXED);
    for (size_t i = skip; i < n; i++) {
        uint64_t c = codes[i];
        if (c - 2 < ((uint64_t)1 << MT_CODE_ADDR_BITS) - 2 && c - lo >= self)
            codes[out++] = c | gen;
    }
    return out;
}
