/*
 * test_profiler_unit.c - the profiler's parts that do not replace malloc,
 * tested directly (also under ASan/UBSan): the geometric sampler's
 * distribution (spec 10.2), the symbolizer on this very
 * binary (file, line, inlined chain) and on a library without debug
 * information (ELF symbol and module name), and the unwinding rules it
 * reads for the fast unwinder.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <link.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/location.h"
#include "profiler/profiler_int.h"

static int fails;
#define CHECK(c, ...)                                                      \
    do {                                                                   \
        if (!(c)) {                                                        \
            fails++;                                                       \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
        }                                                                  \
    } while (0)

/* ---- sampler ------------------------------------------------------------- */

static void test_log_approx(void)
{
    double worst = 0;
    for (double y = 1; y < 2147483648.0; y = y * 1.37 + 1) {
        double d = fabs(mt_sampler_log_approx(y) - log(y / 2147483648.0));
        if (d > worst)
            worst = d;
    }
    CHECK(worst < 2e-3, "log_approx off by %g", worst);
    printf("ok   log_approx within %.2g of ln(y/2^31)\n", worst);
}

static void test_distribution(double rate, long n)
{
    uint64_t rng = 12345;
    double c = mt_sampler_coef(rate);
    double sum = 0;
    long k1 = 0, k3 = 0;
    for (long i = 0; i < n; i++) {
        int64_t d = mt_sampler_draw(&rng, c);
        CHECK(d >= 1, "draw %lld < 1", (long long)d);
        sum += (double)d;
        k1 += d == 1;
        k3 += d == 3;
    }
    double mean = sum / n, want = 1 / rate;
    /* the mean of n geometric draws has sd sqrt(1-p)/p/sqrt(n) */
    double tol = 5 * sqrt(1 - rate) / rate / sqrt((double)n) + 1e-9;
    CHECK(fabs(mean - want) <= tol, "rate %g: mean %g, expected %g +- %g", rate, mean, want, tol);
    double p1 = (double)k1 / n, p3 = (double)k3 / n;
    double w3 = (1 - rate) * (1 - rate) * rate;
    CHECK(fabs(p1 - rate) < 0.01 && fabs(p3 - w3) < 0.01,
          "rate %g: P(1)=%g P(3)=%g, expected %g %g", rate, p1, p3, rate, w3);
    printf("ok   rate %g: mean %.6g (expected %.6g), P(X=1) %.4f, P(X=3) %.4f (expected %.4f)\n",
           rate, mean, want, p1, p3, w3);
}

/* The binomial draws that count the samples of a huge block at once: their
 * mean and spread are the law's, none leaves [0, n], and p = 1 gives n. */
static void test_binomial(double n, double p, long draws)
{
    uint64_t rng = 777;
    double want = n * p, wvar = n * p * (1 - p);
    double sum = 0, sq = 0;     /* of the differences from the law's mean */
    for (long i = 0; i < draws; i++) {
        int64_t k = mt_sampler_binomial(&rng, n, p);
        CHECK(k >= 0 && (double)k <= n && (p < 1 || (double)k == n), "binomial(%g, %g) gave %lld",
              n, p, (long long)k);
        double d = (double)k - want;
        sum += d;
        sq += d * d;
    }
    double mean = want + sum / draws, var = sq / draws - (sum / draws) * (sum / draws);
    double tol = 5 * sqrt(wvar / draws) + 0.5;  /* (+0.5: rounding to integers) */
    CHECK(fabs(mean - want) <= tol, "binomial(%g, %g): mean %g, expected %g +- %g", n, p, mean,
          want, tol);
    CHECK(wvar == 0 || fabs(var / wvar - 1) < 0.05,
          "binomial(%g, %g): variance %g, expected %g", n, p, var, wvar);
    printf("ok   binomial(%g, %g): mean %.6g (expected %.6g), variance %.6g (expected %.6g)\n",
           n, p, mean, want, var, wvar);
}

/* ---- symbolizer ---------------------------------------------------------- */

uintptr_t nodebug_return_address(void);
uintptr_t noaranges_return_address(void);
uintptr_t nosym_return_address(void);

__attribute__((noinline)) static uintptr_t ret_addr(void)
{
    uintptr_t r = (uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return r;
}

static inline __attribute__((always_inline)) uintptr_t inlined_here(void)
{
    return ret_addr() + 0; /* LINE_INLINED */
}

__attribute__((noinline)) static uintptr_t direct_caller(void)
{
    uintptr_t r = ret_addr(); /* LINE_DIRECT */
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) static uintptr_t outer_caller(void)
{
    uintptr_t r = inlined_here(); /* LINE_OUTER */
    __asm__ volatile("" ::: "memory");
    return r;
}

/* Functions with names of 1024 characters (P2 pastes its argument to
 * itself: 2^6 times a 16-character piece), four of them inlined one in
 * the next: too long for one location event of the format (4096 bytes). */
#define PASTE(a, b) a##b
#define P2(x) PASTE(x, x)
#define LONG_NAME(x) P2(P2(P2(P2(P2(P2(x))))))
#define INLINE_LONG(name, callee)                                         \
    static inline __attribute__((always_inline)) uintptr_t name(void)      \
    {                                                                      \
        uintptr_t r = callee();                                            \
        __asm__ volatile("" ::: "memory");                                 \
        return r;                                                          \
    }
INLINE_LONG(LONG_NAME(long_name_inner_), ret_addr)
INLINE_LONG(LONG_NAME(long_name_midle_), LONG_NAME(long_name_inner_))
INLINE_LONG(LONG_NAME(long_name_next__), LONG_NAME(long_name_midle_))
INLINE_LONG(LONG_NAME(long_name_outer_), LONG_NAME(long_name_next__))

__attribute__((noinline)) static uintptr_t long_names_caller(void)
{
    uintptr_t r = LONG_NAME(long_name_outer_)();
    __asm__ volatile("" ::: "memory");
    return r;
}

/* The line of marker in file (0 if not found). */
static int line_in(const char *file, const char *marker)
{
    FILE *f = fopen(file, "r");
    char buf[512];
    int line = 0, found = 0;
    while (f && fgets(buf, sizeof buf, f)) {
        line++;
        if (strstr(buf, marker) && !strstr(buf, "line_of(")) {
            found = line;
            break;
        }
    }
    if (f)
        fclose(f);
    return found;
}

static int line_of(const char *marker)
{
    return line_in(SOURCE_FILE, marker);
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* The symbolizer's ELF symbol lookup (its own sorted table) against
 * libdwfl's dwfl_module_addrname, at 4000 addresses spread over libc's
 * code (no DWARF there: every location is an ELF symbol or module+addr). */
typedef struct span {
    uintptr_t lo, hi;
} span;

static int libc_text(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    if (!strstr(info->dlpi_name, "/libc.so"))
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            ((span *)data)->lo = info->dlpi_addr + ph->p_vaddr;
            ((span *)data)->hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            return 1;
        }
    }
    return 0;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                        Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                        GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
    (void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
    return -1;
}

/* gen: the code generation of the codes asked (profiler_int.h). */
static void test_symbols_like_dwfl(uint64_t gen)
{
    span text = {0, 0};
    dl_iterate_phdr(libc_text, &text);
    /* (no separate debug files, as the profiler by default) */
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_linux_proc_find_elf,
                                      .find_debuginfo = no_debuginfo};
    Dwfl *d = dwfl_begin(&cb);
    CHECK(text.hi > text.lo && d, "libc's code or a Dwfl");
    if (!(text.hi > text.lo && d))
        return;
    dwfl_report_begin(d);
    dwfl_linux_proc_report(d, getpid());
    dwfl_report_end(d, NULL, NULL);
    int same = 0, named = 0, bad = 0;
    for (int i = 0; i < 4000; i++) {
        uintptr_t pc = text.lo + (text.hi - text.lo) / 4000 * (uintptr_t)i + (uintptr_t)(i % 7);
        Dwfl_Module *m = dwfl_addrmodule(d, pc);
        const char *want = m ? dwfl_module_addrname(m, pc) : NULL;
        const mt_location *l;
        size_t n;
        mt_symbolize(NULL, (pc + 1) | gen, &l, &n);    /* a code is a return address */
        const char *got = n == 1 ? l[0].function : "?";
        if (want) {
            named++;
            same += strcmp(got, want) == 0;
            if (strcmp(got, want) != 0 && bad++ < 5)
                printf("     at %#lx: %s, libdwfl %s\n", (unsigned long)pc, got, want);
        } else {
            same += strstr(got, "libc.so") == got && strstr(got, "+0x") != NULL;
        }
    }
    dwfl_end(d);
    CHECK(same == 4000 && named > 500, "ELF symbols: %d of 4000 as libdwfl names them (%d named)",
          same, named);
    if (same == 4000 && named > 500)
        printf("ok   ELF symbols: 4000 addresses in libc named as libdwfl names them (%d by a "
               "symbol)\n", named);
}

static void test_symbolize(void)
{
    const mt_location *l;
    size_t n;
    uintptr_t code = direct_caller();
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, "direct_caller") == 0 &&
              strcmp(base(l[0].filename), "test_profiler_unit.c") == 0 &&
              l[0].line == line_of("LINE_DIRECT"),
          "direct: %zu locations, last %s@%s:%d (expected line %d)", n, l[n - 1].function,
          l[n - 1].filename, l[n - 1].line, line_of("LINE_DIRECT"));
    const mt_location *again;
    size_t n2;
    mt_symbolize(NULL, code, &again, &n2);
    CHECK(again == l && n2 == n, "not cached");

    code = outer_caller();
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 2 && strcmp(l[0].function, "outer_caller") == 0 &&
              l[0].line == line_of("LINE_OUTER") &&
              strcmp(l[1].function, "inlined_here") == 0 &&
              l[1].line == line_of("LINE_INLINED") &&
              strcmp(base(l[1].filename), "test_profiler_unit.c") == 0,
          "inlined: %zu locations: %s:%d %s:%d (expected outer_caller:%d inlined_here:%d)", n,
          l[0].function, l[0].line, n > 1 ? l[1].function : "-", n > 1 ? l[1].line : 0,
          line_of("LINE_OUTER"), line_of("LINE_INLINED"));
    if (n == 2)
        printf("ok   inlined chain: %s@%s:%d:%d, %s@%s:%d:%d\n", l[0].function,
               base(l[0].filename), l[0].line, l[0].start_char, l[1].function,
               base(l[1].filename), l[1].line, l[1].start_char);

    code = nodebug_return_address();
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, "nodebug_function") == 0 &&
              strcmp(l[0].filename, "libprofiler_nodebug.so") == 0 && l[0].line == 0,
          "no debug info: %zu locations, %s@%s:%d", n, l[0].function, l[0].filename, l[0].line);

    /* DWARF without .debug_aranges (clang's default): file and line all
     * the same, the compile unit found by its ranges */
    code = noaranges_return_address();
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, "noaranges_return_address") == 0 &&
              strcmp(base(l[0].filename), "noaranges.c") == 0 &&
              l[0].line == line_in(NOARANGES_FILE, "LINE_NOARANGES"),
          "no .debug_aranges: %zu locations, %s@%s:%d (expected noaranges.c:%d)", n,
          l[0].function, l[0].filename, l[0].line, line_in(NOARANGES_FILE, "LINE_NOARANGES"));

    /* names over 1000 bytes are clipped, and the middle of the inline
     * chain dropped until the locations fit in one location event */
    code = long_names_caller();
    mt_symbolize(NULL, code, &l, &n);
    size_t clipped = 0;
    for (size_t i = 0; i < n; i++)
        clipped += strlen(l[i].function) == 1000 &&
                   strcmp(l[i].function + 997, "...") == 0 &&
                   strncmp(l[i].function, "long_name_", 10) == 0;
    CHECK(n >= 2 && n < 6 && clipped == n - 1 &&
              strcmp(l[0].function, "long_names_caller") == 0 &&
              strncmp(l[n - 1].function, "long_name_inner_", 16) == 0 &&
              mt_locw_max_size(l, n) <= MT_LOC_MAX_LENGTH,
          "long names: %zu locations, %zu clipped, first %.20s, last %.20s, %zu bytes", n,
          clipped, l[0].function, l[n - 1].function, mt_locw_max_size(l, n));

    /* no symbol: the module and the address in its file (the library's
     * first segment is at address 0 in the file, so: minus its base) */
    code = nosym_return_address();
    Dl_info dl;
    char want[128] = "?";
    if (dladdr((void *)code, &dl) && dl.dli_fbase)
        snprintf(want, sizeof want, "libprofiler_nodebug.so+0x%lx",
                 (unsigned long)(code - (uintptr_t)dl.dli_fbase));
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, want) == 0 &&
              strcmp(l[0].filename, "libprofiler_nodebug.so") == 0 && l[0].line == 0,
          "no symbol: %zu locations, %s@%s:%d (expected %s)", n, l[0].function,
          l[0].filename, l[0].line, want);

    mt_symbolize(NULL, 0x10, &l, &n);     /* mapped nowhere */
    CHECK(n == 1 && strcmp(l[0].function, "0x10") == 0, "unmapped: %s@%s", l[0].function,
          l[0].filename);
    printf("ok   symbolizer: DWARF lines, inlined chain, long names, ELF symbol fallback, module+address, unmapped code\n");
    test_symbols_like_dwfl(0);

    /* After a dlclose that unmapped something: every module reported
     * again (the symbol tables of those still there kept), and codes of a
     * new generation, the same addresses, resolved afresh to the same
     * locations. */
    mt_symbolize_unloaded();
    const uint64_t gen = (uint64_t)1 << MT_CODE_ADDR_BITS;
    code = direct_caller() | gen;
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, "direct_caller") == 0 &&
              l[0].line == line_of("LINE_DIRECT"),
          "after an unload, generation 1: %zu locations, %s:%d", n, l[0].function, l[0].line);
    code = nodebug_return_address() | gen;
    mt_symbolize(NULL, code, &l, &n);
    CHECK(n == 1 && strcmp(l[0].function, "nodebug_function") == 0,
          "after an unload, no debug info: %s", l[0].function);
    test_symbols_like_dwfl(2 * gen);
    if (!fails)
        printf("ok   after an unload: modules reported again, new generation's codes named alike\n");
    mt_symbolize_reset();
}

/* ---- unwinding rules (the fast unwinder's, from .eh_frame) -------------- */

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000  /* (the kernel's; glibc sets it, does not export it) */
#endif

/* A frame of run-time size: its CFA is given from the frame pointer. */
__attribute__((noinline)) static uintptr_t vla_caller(int n)
{
    volatile char buf[n];
    buf[0] = 1;
    uintptr_t r = ret_addr();
    __asm__ volatile("" ::: "memory");
    return r + (uintptr_t)buf[0] - 1;
}

static void test_cfi(void)
{
    int before = fails;
    mt_cfi_rule r;
    /* a plain frame: the CFA from the stack pointer (or, in a build
     * without optimization, the frame pointer), the return address below it */
    mt_symbolize_cfi(direct_caller(), &r);
    CHECK(!(r.flags & (MT_CFI_BAD | MT_CFI_END)) && r.ra_off == -8 && r.cfa_off >= 8 &&
              r.cfa_off % 8 == 0,
          "plain frame: flags %#x, cfa %+d, ra %+d", r.flags, r.cfa_off, r.ra_off);
    /* a frame with a variable-length array: CFA = frame pointer + 16, the
     * caller's frame pointer saved at CFA - 16 */
    static volatile int width = 40;     /* (not a constant the compiler folds) */
    mt_symbolize_cfi(vla_caller(width), &r);
    CHECK(r.flags == (MT_CFI_RBP_BASE | MT_CFI_RBP_SAVED) && r.cfa_off == 16 &&
              r.ra_off == -8 && r.rbp_off == -16,
          "VLA frame: flags %#x, cfa %+d, ra %+d, rbp %+d", r.flags, r.cfa_off, r.ra_off,
          r.rbp_off);
    /* a library without debug information still has .eh_frame */
    mt_symbolize_cfi(nodebug_return_address(), &r);
    CHECK(!(r.flags & (MT_CFI_BAD | MT_CFI_END)) && r.ra_off == -8,
          "library frame: flags %#x", r.flags);
    /* a signal frame (the handler returns to glibc's restorer): left to
     * libunwind; so is an address in no module */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGUSR2, NULL, &old);
    if (old.sa_flags & SA_RESTORER) {
        mt_symbolize_cfi((uint64_t)(uintptr_t)old.sa_restorer, &r);
        CHECK(r.flags == MT_CFI_BAD, "signal frame: flags %#x", r.flags);
    }
    mt_symbolize_cfi(0x10, &r);
    CHECK(r.flags == MT_CFI_BAD, "unmapped: flags %#x", r.flags);
    if (fails == before)
        printf("ok   unwinding rules: plain frame, frame-pointer frame, library, signal frame, "
               "unmapped\n");
    mt_symbolize_reset();
}

int main(void)
{
    test_log_approx();
    test_distribution(0.01, 400000);
    test_distribution(0.13, 400000);
    test_distribution(0.42, 400000);
    test_distribution(0.73, 400000);
    test_distribution(1.0, 1000);
    test_distribution(1e-5, 400000);
    test_binomial(1e6, 0.01, 200000);
    test_binomial(1e9, 1e-5, 200000);
    test_binomial(3e10, 1.0, 1000);
    test_symbolize();
    test_cfi();
    printf("%s\n", fails ? "FAILED" : "all profiler unit tests passed");
    return fails ? 1 : 0;
}
