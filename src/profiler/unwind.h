/*
 * unwind.h - the backtrace of a sampled allocation, taken in the frame of
 * the sampled path itself (mt_unwind is inline): libunwind walks every
 * frame from its caller outwards, the profiler's own included, at ~7 ns a
 * frame, so each frame of ours between the program and the unwinder costs
 * every sample that much. The call from the program's malloc to here is
 * two frames (malloc's cold part, slow_block); it was four when
 * session.c's mt_sample_record called a function of unwind.c.
 */
#ifndef MT_PROFILER_UNWIND_H
#define MT_PROFILER_UNWIND_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "profiler/profiler_int.h"

extern uintptr_t mt_self_lo MT_HIDDEN, mt_self_hi MT_HIDDEN;
extern int mt_unwind_libgcc MT_HIDDEN;          /* MEMTRACE_UNWIND=libgcc */

/* libgcc's _Unwind_Backtrace into codes, innermost first. */
MT_HIDDEN size_t mt_unwind_gcc(uint64_t *codes, size_t max);
/* Drop the profiler's own innermost frames, then those of C++'s operator
 * new, and the addresses that are not location codes; returns how many
 * remain (moved to the front). */
MT_HIDDEN size_t mt_unwind_keep(uint64_t *codes, size_t n);

/* Return addresses of the calling thread, innermost first, with the
 * profiler's own frames and operator new's dropped. Returns how many were
 * stored. */
static inline __attribute__((always_inline)) size_t mt_unwind(uint64_t *codes,
                                                             size_t max)
{
    size_t n;
    if (mt_unwind_libgcc) {
        n = mt_unwind_gcc(codes, max);
    } else {
        /* unw_backtrace fills void * slots; uint64_t has the same size. */
        int k = unw_backtrace((void **)codes, (int)max);
        n = k > 0 ? (size_t)k : 0;
    }
    return mt_unwind_keep(codes, n);
}

#endif /* MT_PROFILER_UNWIND_H */
