/*
 * frames.h - the frames of the speedscope export and the HTML report: one
 * frame per distinct (function, file, line) of the trace's locations, and
 * each backtrace code's frames (its inline chain, outermost first, without
 * the functions --hide names).
 */
#ifndef MT_REPORT_FRAMES_H
#define MT_REPORT_FRAMES_H

#include <stdint.h>

#include "report/profile.h"

typedef struct rp_frames {
    const mt_location **v;      /* by frame id */
    size_t n, cap;
    u64map ids;                 /* hash (probed +1) -> frame id */
    u64map codes;               /* code -> offset << 32 | count into list */
    uint32_t *list;
    size_t nlist, list_cap;
    const mt_location **buf;
    size_t buf_cap;
} rp_frames;

/* The frame ids of code (*ids valid until the next call): 0, or -1 for an
 * unknown code or out of memory. */
int rp_frames_of_code(rp_frames *fr, rp_profile *p, const mt_filter *f,
                      uint64_t code, const uint32_t **ids, size_t *n);

/* The frames of stack id, caller first, appended to *out (grown as
 * needed; *len set). 0 or -1. */
int rp_frames_of_stack(rp_frames *fr, rp_profile *p, const mt_filter *f,
                       uint32_t id, uint32_t **out, size_t *cap, size_t *len);

void rp_frames_free(rp_frames *fr);

#endif /* MT_REPORT_FRAMES_H */
