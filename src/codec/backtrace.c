/*
 * backtrace.c - the backtrace codec's out-of-line parts: the writer's cache
 * set-up and verifier (spec 6.7) and the reader's frame buffer. The encoder
 * (spec 6.4) and the decode loops are inline in backtrace.h.
 */
#include "codec/backtrace.h"

#include <stdlib.h>
#include <string.h>

void mt_btw_init(mt_btw *w)
{
    memset(w, 0, sizeof *w);
    mt_btw_init_zeroed(w);
}

void mt_btw_verifier(mt_btw *w, uint16_t *ix, uint16_t *pred, uint64_t *val)
{
    unsigned i = w->verify_ix;
    *ix = (uint16_t)i;
    *pred = w->next[i];
    *val = w->value[i];
    w->verify_ix = (i + MT_VERIFY_STEP) & MT_BT_MASK;
}

int mt_frames_reserve(mt_frames *f, size_t need)
{
    if (need <= f->cap)
        return 0;
    if (need > f->limit)
        return -1;
    size_t cap = f->cap ? f->cap : 1024;
    while (cap < need)
        cap *= 2;
    if (cap > f->limit)
        cap = f->limit;
    uint64_t *v = realloc(f->v, cap * sizeof *v);
    if (!v)
        return -1;
    f->v = v;
    f->cap = cap;
    return 0;
}
