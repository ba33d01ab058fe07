/*
 * newcodes.h - which frames of a decoded backtrace can hold a location
 * code not seen before in the trace, for consumers that look every code up
 * once (to check that a location event defines it, or to cache facts about
 * it): `memtrace check`, the scan engine's stack summaries, and through
 * mt_newcodes_undefined the trace-to-trace commands and mt_first_damage.
 *
 * A code enters a backtrace only through the decoder's cache, and enters
 * the cache only through a miss codeword, which the reader counts in
 * mt_event.new_codes. So a backtrace decoded without one holds codes of
 * earlier backtraces (looked up then), or 0 from a bucket never filled.
 * One exception: a decode the reader discards (a common prefix longer than
 * the previous backtrace, spec 6.5) fills the cache without showing its
 * codes; after one, every frame must be looked up.
 */
#ifndef MT_NEWCODES_H
#define MT_NEWCODES_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/memtrace.h"

typedef struct mt_newcodes {
    int check_all;              /* a discarded decode brought new codes */
} mt_newcodes;

/* 1 when ev->backtrace[from .. backtrace_len) may hold a code the consumer
 * has not looked up; 0 when all of them were seen before. Valid only if
 * the consumer looked up the frames of every earlier allocation for which
 * this returned 1, from `from` on, where the frames before `from` are the
 * previous backtrace's (its common prefix). */
static inline int mt_newcodes_possible(mt_newcodes *g, const mt_event *ev, size_t from)
{
    if (ev->new_codes && (uint64_t)ev->common_prefix > ev->backtrace_len)
        g->check_all = 1;
    if (ev->new_codes || g->check_all)
        return 1;
    for (size_t i = from; i < ev->backtrace_len; i++)
        if (ev->backtrace[i] == 0)
            return 1;
    return 0;
}

/* For a consumer that only checks codes: whether allocation ev's frames
 * that may be new hold a code no location event of r defined, the first
 * in *code. Call it for every allocation, in order. */
static inline int mt_newcodes_undefined(mt_newcodes *g, mt_reader *r, const mt_event *ev,
                                        uint64_t *code)
{
    size_t from = (uint64_t)ev->common_prefix < ev->backtrace_len
                      ? (size_t)ev->common_prefix : ev->backtrace_len;
    if (!mt_newcodes_possible(g, ev, from))
        return 0;
    for (size_t i = from; i < ev->backtrace_len; i++) {
        const mt_location *l;
        size_t n;
        if (mt_reader_locations(r, ev->backtrace[i], &l, &n) != MT_OK) {
            *code = ev->backtrace[i];
            return 1;
        }
    }
    return 0;
}

#endif /* MT_NEWCODES_H */
