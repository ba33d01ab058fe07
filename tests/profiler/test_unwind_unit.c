/*
 * test_unwind_unit.c - unwind.c's watch over unmapped code (a dlclose
 * that unmaps a library, then another library mapped where it was: from
 * then on unw_backtrace's unflushable caches are not used), and the
 * step-by-step unwinder it changes to. The libraries are opened and closed
 * here directly; in a traced program the interposed dlclose does the same
 * calls (session.c, mt_dlclose). First, that a thread's first samples,
 * unwound step by step, and the later ones, by unw_backtrace, give the
 * same codes; that the fast unwinder gives unw_step's codes, and leaves
 * the work to libunwind once its table is full.
 *   profiler_unwind_unit PLUGIN.so PLUGIN2.so
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/unwind.h"

/* The thread state is preload.c's, which is not linked here. */
__thread mt_thread mt_self __attribute__((tls_model("initial-exec")));

static int fails;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                     \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
            fails++;                                                        \
        }                                                                   \
    } while (0)

/* The base address of the library `path`, opened; its handle in *h. */
static uintptr_t open_at(const char *path, void **h)
{
    Dl_info info;
    *h = dlopen(path, RTLD_NOW);
    void *f = *h ? dlsym(*h, "plugin_run") : NULL;
    if (!f || !dladdr(f, &info)) {
        printf("FAIL cannot open %s: %s\n", path, dlerror());
        exit(1);
    }
    return (uintptr_t)info.dli_fbase;
}

__attribute__((noinline)) static size_t step_here(uint64_t *codes, size_t max)
{
    size_t n = mt_unwind_step(codes, max);
    __asm__ volatile("" ::: "memory");      /* not a tail call */
    return n;
}

__attribute__((noinline)) static size_t sample_here(uint64_t *codes, size_t max)
{
    size_t n = mt_unwind(NULL, codes, max);
    __asm__ volatile("" ::: "memory");      /* not a tail call */
    return n;
}

/* A fresh thread samples from one call site, first step by step, then with
 * unw_backtrace (unwind.h, MT_UNWIND_COLD): the same codes, but for the two
 * innermost: sample_here's own (the call of one unwinder or the other; in
 * the library that frame is the profiler's, dropped) and the loop's call
 * of sample_here, which the compiler may copy (clang unrolls the loop). */
static void *same_codes(void *arg)
{
    (void)arg;
    uint64_t first[64], codes[64];
    size_t n0 = 0, differ = 0;
    for (int i = 0; i < 2 * MT_UNWIND_COLD + 2; i++) {
        size_t n = sample_here(codes, 64);
        if (i == 0) {
            memcpy(first, codes, sizeof codes);
            n0 = n;
        } else if (n != n0 || (n > 2 && memcmp(first + 2, codes + 2, (n - 2) * sizeof *codes))) {
            differ++;
        }
    }
    CHECK(n0 >= 3 && !differ && mt_self.unwinds == MT_UNWIND_COLD,
          "%zu frames (want 3 or more), %zu samples with other codes than the first, "
          "%d unwound step by step (want %d)", n0, differ, mt_self.unwinds, MT_UNWIND_COLD);
    return NULL;
}

/* The fast unwinder's rules, as session.c's unwind_fill gets them (one
 * thread here: no lock). */
static void test_fill(uint64_t ra, mt_cfi_rule *r)
{
    mt_symbolize_cfi(ra, r);
    mt_unwind_rule_add(ra, r);
}

/* Both unwinders called from here: their codes must be equal but for the
 * two innermost (this function's call of one or the other, and its
 * caller's call of this function, which the compiler may duplicate). */
__attribute__((noinline)) static size_t unwind_here(int fast, uint64_t *codes, size_t max)
{
    size_t n = fast ? mt_unwind_fast(NULL, codes, max) : mt_unwind_step(codes, max);
    __asm__ volatile("" ::: "memory");      /* not a tail call */
    return n;
}

/* depth frames of recursion, then leaf (a stack to unwind) */
__attribute__((noinline)) static int recurse(int depth, int (*leaf)(size_t *), size_t *frames)
{
    if (depth > 0) {
        int r = recurse(depth - 1, leaf, frames);
        __asm__ volatile("" ::: "memory");
        return r;
    }
    return leaf(frames);
}

__attribute__((noinline)) static int compare_here(size_t *frames)
{
    uint64_t a[64], b[64];
    size_t na = unwind_here(1, a, 64), nb = unwind_here(0, b, 64);
    *frames = na;
    return na >= 3 && na == nb && memcmp(a + 2, b + 2, (na - 2) * sizeof *a) == 0;
}

/* The fast unwinder started at an outer frame (as the sampled path starts
 * it at the frame of the function that malloc called) and at its own: the
 * same codes but for the frames inside the outer one. inner's two calls
 * are at two sites, so the first codes of the walks from its own frame
 * differ; the next, inner's return into outer, is skipped by the other. */
__attribute__((noinline)) static void from_inner(const void *frame, uint64_t *a, size_t *na,
                                                 uint64_t *b, size_t *nb)
{
    *na = mt_unwind_fast(frame, a, 64);
    __asm__ volatile("" ::: "memory");
    *nb = mt_unwind_fast(NULL, b, 64);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int from_outer(size_t *frames)
{
    uint64_t a[64], b[64];
    size_t na = 0, nb = 0;
    from_inner(__builtin_frame_address(0), a, &na, b, &nb);
    __asm__ volatile("" ::: "memory");
    *frames = na;
    return na >= 8 && na + 2 == nb && memcmp(a, b + 2, na * sizeof *a) == 0;
}

/* The fast unwinder against unw_step; then, its table full, it gives up
 * (returns 0) and mt_unwind's libunwind gives the codes. */
static void test_fast(void)
{
    int before = fails;
    mt_unwind_filler = test_fill;
    size_t frames = 0;
    int same = recurse(10, compare_here, &frames);
    CHECK(same && frames >= 12, "fast unwinder against unw_step: %s, %zu frames",
          same ? "same" : "different", frames);
    size_t outer_frames = 0;
    same = recurse(6, from_outer, &outer_frames);
    CHECK(same, "fast unwinder from an outer frame: %s, %zu frames",
          same ? "same codes" : "other codes", outer_frames);
    mt_cfi_rule end = {0, 0, 0, MT_CFI_END};
    for (uint64_t k = 1; k <= 40000; k++)       /* more than the table's slots */
        mt_unwind_rule_add(k * 16, &end);
    uint64_t codes[64];
    size_t n = unwind_here(1, codes, 64);
    CHECK(n == 0, "fast unwinder with its table full: %zu frames (want 0: libunwind's turn)", n);
    n = sample_here(codes, 64);
    CHECK(n >= 3, "table full: mt_unwind gives %zu frames (want 3 or more)", n);
    mt_unwind_filler = NULL;
    mt_symbolize_reset();
    if (fails == before)
        printf("ok   fast unwinder: same codes as unw_step (%zu frames), from an outer frame "
               "(%zu); table full, libunwind's\n", frames, outer_frames);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    pthread_t th;
    if (pthread_create(&th, NULL, same_codes, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 2;
    if (!fails)
        printf("ok   step-by-step and unw_backtrace unwinding give the same codes\n");
    test_fast();
    void *h;
    uintptr_t a = open_at(argv[1], &h);
    size_t n;
    unsigned long long adds = mt_loader_adds();
    mt_unwind_seg *before = mt_unwind_objects(&n);
    CHECK(before && n > 0 && n != SIZE_MAX, "segments listed: %zu", n);
    dlclose(h);
    mt_unwind_unmapped(before, n, adds);
    CHECK(mt_unmapped_any && mt_unwinder == MT_UNWIND_TRACE,
          "after the unmap: watching %d, unwinder %d", mt_unmapped_any, mt_unwinder);
    mt_unwind_check_loads();        /* nothing mapped since */
    CHECK(mt_unmapped_any && mt_unwinder == MT_UNWIND_TRACE,
          "nothing new mapped: watching %d, unwinder %d", mt_unmapped_any, mt_unwinder);
    uintptr_t b = open_at(argv[2], &h);
    CHECK(a == b, "the second library is not at the first one's address (%#lx, %#lx): "
                  "the case is not tested", (unsigned long)a, (unsigned long)b);
    mt_unwind_check_loads();
    CHECK(!mt_unmapped_any && mt_unwinder == MT_UNWIND_STEP,
          "code mapped where code was: watching %d, unwinder %d (want %d)",
          mt_unmapped_any, mt_unwinder, MT_UNWIND_STEP);
    if (!fails)
        printf("ok   a library mapped over an unmapped one changes the unwinder\n");

    /* The step-by-step unwinder: its frames, innermost first, reach main
     * (a return address within main's first 4 KiB: main is smaller). */
    uint64_t codes[64];
    size_t k = step_here(codes, 64);
    int found = 0;
    for (size_t i = 0; i < k; i++)
        if (codes[i] - (uintptr_t)main < 4096)
            found = 1;
    CHECK(k >= 2 && found, "unw_step: %zu frames, main %s", k, found ? "found" : "not found");
    if (k >= 2 && found)
        printf("ok   unw_step unwinder: %zu frames up to main\n", k);
    dlclose(h);

    /* More unmapped segments than can be kept: then any new mapping is
     * taken for a reuse. Back to unw_backtrace, with the second library
     * closed (nothing mapped over the first's place), 100 segments of a
     * low range where nothing is mapped are reported gone. */
    mt_unwinder = MT_UNWIND_TRACE;
    mt_unwind_seg *fake = malloc(100 * sizeof *fake);
    for (int i = 0; i < 100; i++)
        fake[i] = (mt_unwind_seg){0x100000 + 0x1000 * (uintptr_t)i, 0x100800 + 0x1000 * (uintptr_t)i};
    mt_unwind_unmapped(fake, 100, mt_loader_adds());
    int fails_before = fails;
    mt_unwind_check_loads();
    CHECK(mt_unwinder == MT_UNWIND_STEP, "more unmapped segments than kept: unwinder %d (want %d)",
          mt_unwinder, MT_UNWIND_STEP);
    if (fails == fails_before)
        printf("ok   more unmapped segments than kept: any mapping counts as a reuse\n");
    printf("%s\n", fails ? "FAILED" : "all unwinder unit tests passed");
    return fails ? 1 : 0;
}
