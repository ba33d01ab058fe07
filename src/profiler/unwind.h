/*
 * unwind.h - the backtrace of a sampled allocation, taken in the frame of
 * the sampled path itself (mt_unwind is inline): an unwinder walks every
 * frame from its start outwards at ~4-13 ns a frame, so each frame of ours
 * between the program and the unwinder's start costs every sample that
 * much. The fast unwinder starts at the frame of the function that the
 * program's malloc reached (preload.c's SLOW functions pass it down), so
 * it walks at most one frame of ours (our exported function's, when it
 * calls rather than jumps); libunwind and libgcc start at their own and
 * walk the few between.
 */
#ifndef MT_PROFILER_UNWIND_H
#define MT_PROFILER_UNWIND_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "profiler/profiler_int.h"

extern uintptr_t mt_self_lo MT_HIDDEN, mt_self_hi MT_HIDDEN;

/* Which unwinder: libunwind's unw_backtrace, which keeps a per-thread cache
 * of frame layouts; libgcc's (MEMTRACE_UNWIND=libgcc); or libunwind one
 * unw_step at a time, which needs no such cache (once code has been mapped
 * where a dlclose unmapped some: unw_backtrace's caches cannot be flushed;
 * unwind.c). */
enum { MT_UNWIND_TRACE, MT_UNWIND_GCC, MT_UNWIND_STEP };
/* MEMTRACE_UNWIND=check (for the tests): while the unwinder is
 * MT_UNWIND_TRACE, every sample is unwound by the fast unwinder and by
 * unw_step, the step's codes kept; at exit, how many differed is printed. */
extern int mt_unwind_checking MT_HIDDEN;
MT_HIDDEN size_t mt_unwind_check(const void *frame, uint64_t *codes, size_t max);
extern int mt_unwinder MT_HIDDEN;
/* Nonzero while a dlclose has unmapped code and the unwinder is still
 * unw_backtrace: each sample first looks whether something was mapped
 * since (mt_unwind_check_loads). */
extern int mt_unmapped_any MT_HIDDEN;
MT_HIDDEN void mt_unwind_check_loads(void);

/* The fast unwinder (unwind.c): return addresses, innermost first, by
 * rules looked up once per return address through mt_unwind_filler (set
 * by the session: it takes the session lock, asks the symbolizer for the
 * rule, mt_symbolize_cfi, and keeps it with mt_unwind_rule_add); 0 when
 * a frame needs libunwind. The walk starts at `frame`, a frame pointer
 * (__builtin_frame_address(0)) of a caller of the fast unwinder, or at
 * the unwinder's own frame when it is NULL (see mt_unwind). */
extern void (*mt_unwind_filler)(uint64_t ra, mt_cfi_rule *r) MT_HIDDEN;
MT_HIDDEN void mt_unwind_rule_add(uint64_t ra, const mt_cfi_rule *r);
MT_HIDDEN size_t mt_unwind_fast(const void *frame, uint64_t *codes, size_t max);
/* libgcc's _Unwind_Backtrace into codes, innermost first. */
MT_HIDDEN size_t mt_unwind_gcc(uint64_t *codes, size_t max);
/* libunwind's unw_step, frame by frame, into codes, innermost first. */
MT_HIDDEN size_t mt_unwind_step(uint64_t *codes, size_t max);
/* Drop the profiler's own innermost frames, then those of C++'s operator
 * new, then every other frame of the profiler's (its wrappers of glibc
 * functions) and the addresses that are not location codes; the rest,
 * moved to the front, become codes (mt_code_gen added); returns how many. */
MT_HIDDEN size_t mt_unwind_keep(uint64_t *codes, size_t n);

/* A thread's first MT_UNWIND_COLD samples are unwound one unw_step at a
 * time, not by unw_backtrace: the per-thread cache that unw_backtrace makes
 * at its first call in a thread (a 256 KiB mapping with every entry
 * written, unmapped when the thread ends) costs ~160 us, as much as ~8
 * step-by-step unwinds 28 frames deep (~20 us each, against ~0.4 us for
 * unw_backtrace once its cache is warm). So a thread that samples a few
 * times only, as short-lived threads do at the default rate, never pays
 * for the cache (a program that starts and joins 20 000 threads, each
 * allocating 256 KiB, took 1.5x its plain time at the default rate, nearly
 * all of it in that cache), and a thread that samples more pays at most
 * ~80 us more, once. Both unwinders give the same return addresses,
 * so the codes do not depend on which one ran. */
#define MT_UNWIND_COLD 4

/* Return addresses of the calling thread, innermost first, with the
 * profiler's own frames and operator new's dropped. Returns how many were
 * stored. frame: NULL, or the frame pointer of the outermost function of
 * the sampled path (__builtin_frame_address(0) in the function that the
 * program's call of malloc reaches, which must be a caller of this one):
 * the fast unwinder then starts there, not walking the frames of ours
 * inside it (three of the eight frames of a sample in main, ~110
 * instructions). Its saved frame pointer and return address are the
 * program's, or those of our exported function that called it, which
 * the walk unwinds like any frame and mt_unwind_keep drops. The other
 * unwinders start at their own frame and drop ours. */
static inline __attribute__((always_inline)) size_t mt_unwind(const void *frame,
                                                             uint64_t *codes, size_t max)
{
    size_t n;
    if (MT_UNLIKELY(__atomic_load_n(&mt_unmapped_any, __ATOMIC_RELAXED)))
        mt_unwind_check_loads();
    int u = __atomic_load_n(&mt_unwinder, __ATOMIC_RELAXED);
    if (MT_UNLIKELY(mt_unwind_checking) && u == MT_UNWIND_TRACE)
        return mt_unwind_check(frame, codes, max);
    if (MT_LIKELY(u == MT_UNWIND_TRACE) && (n = mt_unwind_fast(frame, codes, max)) != 0)
        return mt_unwind_keep(codes, n);
    mt_thread *t = &mt_self;
    if (MT_UNLIKELY(u == MT_UNWIND_TRACE && t->unwinds < MT_UNWIND_COLD)) {
        t->unwinds++;
        u = MT_UNWIND_STEP;
    }
    if (MT_LIKELY(u == MT_UNWIND_TRACE)) {
        /* unw_backtrace fills void * slots; uint64_t has the same size. */
        int k = unw_backtrace((void **)codes, (int)max);
        n = k > 0 ? (size_t)k : 0;
    } else {
        n = u == MT_UNWIND_GCC ? mt_unwind_gcc(codes, max) : mt_unwind_step(codes, max);
    }
    return mt_unwind_keep(codes, n);
}

#endif /* MT_PROFILER_UNWIND_H */
