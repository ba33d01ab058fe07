/*
 * backtrace.c - writer side of the backtrace codec (spec 6.4, 6.7) and the
 * reader's frame buffer. The reader's decode loop is inline in backtrace.h.
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

static uint8_t *put_hitword(uint8_t *p, unsigned anchor, unsigned k)
{
    if (k == 0) {
        mt_st16(p, (uint16_t)(anchor << 2));
        return p + 2;
    }
    if (k == 1) {
        mt_st16(p, (uint16_t)(anchor << 2 | 1));
        return p + 2;
    }
    mt_st16(p, (uint16_t)(anchor << 2 | 2));
    p[2] = (uint8_t)k;
    return p + 3;
}

/* The state machine of spec 6.4, written with gotos because that is how the
 * spec states it (NOPRED, HIT, PRED) and the transitions stay checkable
 * against it line by line. */
int mt_btw_encode(mt_btw *w, const uint64_t *cs, long hi, int64_t id,
                  uint8_t *out, size_t *len, uint64_t *misses, size_t *nmisses)
{
    uint64_t *value = w->value;
    int64_t *date = w->date;
    uint16_t *next = w->next;
    uint8_t *cur = out;
    const uint8_t *limit = out + MT_BT_MAX_LENGTH - MT_BT_MAX_CODEWORD;
    unsigned p = 0, h, anchor = 0, k = 0;
    long pos = hi;
    int n = 0;
    size_t nm = 0;
    uint64_t x;

nopred:
    if (pos < 0 || cur > limit)
        goto done;
    x = cs[pos];
    if (x == 0 || mt_canon(x) != x)
        return -1;
    {
        unsigned b1 = mt_bt_hash1(x), b2 = mt_bt_hash2(x);
        if (value[b1] == x) {
            h = b1;
            goto hit;
        }
        if (value[b2] == x) {
            h = b2;
            goto hit;
        }
        unsigned v = date[b1] < date[b2] ? b1 : b2;
        misses[nm++] = x;
        value[v] = x;
        date[v] = id;
        next[p] = (uint16_t)v;
        mt_st16(cur, (uint16_t)(v << 2 | 3));
        mt_st64(cur + 2, x);
        cur += 10;
        p = v;
        pos--;
        n++;
        goto nopred;
    }

hit:
    date[h] = id;
    next[p] = (uint16_t)h;
    anchor = h;
    p = h;
    k = 0;
    pos--;
    n++;

pred:
    if (pos < 0 || cur + 2 > limit) {
        cur = put_hitword(cur, anchor, k);
        goto done;
    }
    x = cs[pos];
    {
        unsigned q = next[p];
        if (value[q] == x && x != 0) {
            if (k == 255) {
                cur = put_hitword(cur, anchor, 255);
                h = q;
                goto hit;
            }
            p = q;
            k++;
            pos--;
            goto pred;
        }
    }
    cur = put_hitword(cur, anchor, k);
    goto nopred;

done:
    *len = (size_t)(cur - out);
    *nmisses = nm;
    return n;
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
