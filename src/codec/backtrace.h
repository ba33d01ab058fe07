/*
 * backtrace.h - the backtrace codec (spec 6): a 2^14-bucket cache of
 * location codes with per-bucket predictions. The writer side encodes a
 * callstack into codewords; the reader side mirrors the cache to decode them.
 *
 * The writer's encoder and the reader's decode loops are static inline here
 * because they are the hottest code of the project: each runs once per
 * allocation event.
 */
#ifndef MT_BACKTRACE_H
#define MT_BACKTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wire.h"

/* The reader's decode functions below are inlined into the event loop: a
 * call there costs the loop its registers (spills around the call). */
#if defined(__GNUC__)
#define MT_BT_INLINE static inline __attribute__((always_inline))
#else
#define MT_BT_INLINE static inline
#endif

#define MT_BT_BUCKETS 16384
#define MT_BT_MASK (MT_BT_BUCKETS - 1)
#define MT_BT_MAX_LENGTH 4096   /* byte budget of one encoded backtrace      */
#define MT_BT_MAX_CODEWORD 10   /* largest codeword: u16 + u64               */
#define MT_BT_MAX_MISSES 512    /* > the most misses one encoding can emit   */
#define MT_VERIFY_NONE 0xFFFF   /* dummy verifier index                      */
#define MT_VERIFY_FIRST 4242
#define MT_VERIFY_STEP 5413

static inline unsigned mt_bt_hash1(uint64_t x) { return (unsigned)((x * 0x4983723u) >> 11) & MT_BT_MASK; }
static inline unsigned mt_bt_hash2(uint64_t x) { return (unsigned)((x * 0xFDEA731u) >> 21) & MT_BT_MASK; }

/* ---- writer ----------------------------------------------------------- */

typedef struct mt_btw {
    uint64_t value[MT_BT_BUCKETS];
    int64_t date[MT_BT_BUCKETS];
    uint16_t next[MT_BT_BUCKETS];
    unsigned verify_ix;
} mt_btw;

/* Ready a cache for a new trace. mt_btw_init_zeroed does the same for a
 * cache whose bytes are all zero already (calloc'd) without writing its
 * 288 KiB: the pages of a fresh calloc'd block then stay untouched until
 * used (72 page faults less for a traced process that samples little). */
void mt_btw_init(mt_btw *w);
static inline void mt_btw_init_zeroed(mt_btw *w) { w->verify_ix = MT_VERIFY_FIRST; }

/* HITWORD(anchor, k) of spec 6.4 at p; returns the end. */
static inline uint8_t *mt_btw_hitword(uint8_t *p, unsigned anchor, unsigned k)
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

/* Encode cs[hi], cs[hi-1], ..., cs[0] (cs is callee first; hi may be -1)
 * at out for allocation `id`; out must have room for MT_BT_MAX_LENGTH bytes.
 * Every code must be nonzero and in canonical 63-bit form (the writer checks
 * them first, so that a refused call changes nothing; an empty bucket holds
 * 0, which therefore never matches). Codes that missed the cache are
 * appended to misses[] (capacity MT_BT_MAX_MISSES). Returns the number of
 * codewords (*len gets the bytes written).
 *
 * The state machine of spec 6.4, written with gotos because that is how the
 * spec states it (NOPRED, HIT, PRED) and the transitions stay checkable
 * against it line by line. Inline: the writer runs it once per allocation,
 * and the call cost it 4% of its instructions (bench_write). */
MT_BT_INLINE int mt_btw_encode(mt_btw *w, const uint64_t *cs, long hi, int64_t id,
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
        cur = mt_btw_hitword(cur, anchor, k);
        goto done;
    }
    x = cs[pos];
    {
        unsigned q = next[p];
        if (value[q] == x) {
            if (k == 255) {
                cur = mt_btw_hitword(cur, anchor, 255);
                h = q;
                goto hit;
            }
            p = q;
            k++;
            pos--;
            goto pred;
        }
    }
    cur = mt_btw_hitword(cur, anchor, k);
    goto nopred;

done:
    *len = (size_t)(cur - out);
    *nmisses = nm;
    return n;
}

/* Next verifier triple for an events packet header (spec 6.7). */
void mt_btw_verifier(mt_btw *w, uint16_t *ix, uint16_t *pred, uint64_t *val);

/* ---- reader ----------------------------------------------------------- */

/* Codes and predictions in separate arrays: a prediction chain is a run of
 * dependent loads through pred[], which at 32 KiB stays in the L1 cache,
 * while the independent loads of loc[] overlap with it. */
typedef struct mt_btr {
    uint16_t pred[MT_BT_BUCKETS + 1];   /* + a slot written by unused lanes */
    uint64_t loc[MT_BT_BUCKETS];
    uint64_t misses;            /* miss codewords decoded so far */
} mt_btr;

/* Check a header's verifier against the cache: 1 = ok. */
static inline int mt_btr_verify(const mt_btr *r, unsigned ix, unsigned pred,
                                uint64_t val)
{
    if (ix == MT_VERIFY_NONE)
        return 1;
    return ix < MT_BT_BUCKETS && r->pred[ix] == pred && r->loc[ix] == mt_canon(val);
}

/* Growable frame buffer (the reader's "previous backtrace"). */
typedef struct mt_frames {
    uint64_t *v;
    size_t len;     /* frames of the current backtrace                        */
    size_t cap;
    size_t limit;   /* most frames ever allowed (bounds memory on bad input) */
} mt_frames;

/* Make room for at least `need` frames; 0 ok, -1 over limit or no memory. */
int mt_frames_reserve(mt_frames *f, size_t need);

/* Decode n codewords at *pp, writing frames to f->v from index `at` on.
 * Input bounds: when `end` is NULL the caller has checked that
 * n * MT_BT_MAX_CODEWORD bytes are readable; otherwise every codeword is
 * checked against end. Returns the index one past the last frame written,
 * -1 when the frame buffer cannot grow, -2 on input overrun. */
static inline long mt_btr_decode(mt_btr *restrict r, const uint8_t **pp,
                                 const uint8_t *end, unsigned n,
                                 mt_frames *f, size_t at)
{
    const uint8_t *p = *pp;
    uint64_t *restrict loc = r->loc;
    uint16_t *restrict pred = r->pred;
    uint64_t *out = f->v;
    size_t cap = f->cap;
    unsigned prev = 0;
    size_t len = at;
    for (unsigned i = 0; i < n; i++) {
        if (cap - len < 256) {          /* one codeword adds <= 256 frames */
            if (mt_frames_reserve(f, len + 256) < 0)
                return -1;
            out = f->v;
            cap = f->cap;
        }
        if (end && end - p < 2)
            return -2;
        unsigned w = mt_ld16(p);
        unsigned b = w >> 2;
        pred[prev] = (uint16_t)b;
        p += 2;
        switch (w & 3) {
        case 0:
            out[len++] = loc[b];
            prev = b;
            break;
        case 3:
            if (end && end - p < 8)
                return -2;
            r->misses++;
            loc[b] = mt_canon(mt_ld64(p));
            p += 8;
            out[len++] = loc[b];
            prev = b;
            break;
        default: {
            unsigned k = 1;
            if ((w & 3) == 2) {
                if (end && end - p < 1)
                    return -2;
                k = *p++;
            }
            out[len++] = loc[b];
            prev = b;
            while (k--) {
                prev = pred[prev];
                out[len++] = loc[prev];
            }
            break;
        }
        }
    }
    *pp = p;
    return (long)len;
}

/* mt_btr_decode_fast's path for backtraces of at most three codewords that
 * are all plain hits (tags 0 and 1): three in four allocations of the
 * benchmark trace. It decodes three lanes whatever n is, without a branch:
 * a lane past n writes its prediction to the spare slot pred[MT_BT_BUCKETS]
 * and its frames past the end, and the frame count comes from the used
 * codewords' tag bits. A loop of n steps cost a misprediction at its exit
 * in most allocations (n is 0, 1, 2, 3... in no order the predictor
 * learns). Three lanes for ~1 used on average (0.96 on the benchmark
 * trace), and still faster than two lanes with a branch to the general
 * loop for n = 3, or an early return for n = 0: both run fewer
 * instructions and take 8-12% more time (docs/HISTORY.md, 2026-12-06). */
MT_BT_INLINE size_t mt_btr_decode_upto3(mt_btr *restrict r, const uint8_t *p,
                                        size_t n, uint64_t *restrict out)
{
    uint64_t *restrict loc = r->loc;
    uint16_t *restrict pred = r->pred;
    uint64_t *o = out;
    size_t prev = 0;
    /* A lane past n writes its frames past the end and leaves prev and o
     * wrong, but every lane after it is unused too. */
#define MT_BT_LANE(i)                                                   \
    do {                                                                \
        size_t w = mt_ld16(p + 2 * (i)), b = w >> 2, tag = w & 1;       \
        size_t live = (size_t)0 - ((i) < n);   /* a mask, not a branch */ \
        pred[prev ^ ((prev ^ MT_BT_BUCKETS) & ~live)] = (uint16_t)b;    \
        size_t c = pred[b];                                             \
        o[0] = loc[b];                                                  \
        o[1] = loc[c];                                                  \
        o += 1 + tag;                                                   \
        prev = tag ? c : b;                                             \
    } while (0)
    MT_BT_LANE(0);
    MT_BT_LANE(1);
    MT_BT_LANE(2);
#undef MT_BT_LANE
    /* frames: n, plus one for each used codeword of tag 1 (the products of
     * the tag bits, 16 bits apart, add up in the top 16 bits) */
    static const uint64_t tag1[4] = {0, 0x1, 0x10001, 0x100010001};
    uint64_t ones = 0x0001000100010001u;
#if defined(__GNUC__)
    __asm__("" : "+r"(ones));   /* one imul: GCC makes the constant's
                                    multiply seven shifts and adds */
#endif
    return n + (size_t)(((mt_ld64(p) & tag1[n]) * ones) >> 48);
}

/* Frames predicted after a codeword of tag 0, 1 or 2: the tag, or for 2
 * (hitN) its count byte. Without a branch (one codeword in eight is a hitN,
 * in no order the predictor learns): GCC makes the plain ternary a branch,
 * and the mask form seven instructions; a cmov is three. */
static inline size_t mt_btr_hitn(size_t tag, size_t count)
{
#if defined(__GNUC__) && defined(__x86_64__)
    __asm__("cmp $2, %[t]\n\tcmovae %[c], %[t]" : [t] "+r"(tag) : [c] "r"(count) : "cc");
    return tag;
#else
    return tag ^ ((tag ^ count) & ((size_t)0 - (tag >> 1)));
#endif
}

/* Bit 1 of the tag of each of the first n <= 3 codewords at p, when they
 * are 2-byte codewords: set for hitN and misses. */
static const uint64_t mt_btr_hard[4] = {0, 0x2, 0x20002, 0x200020002};

/* The same decode without any checks: the caller guarantees
 * max(n * MT_BT_MAX_CODEWORD, 8) readable input bytes and room for
 * max(n * 256 + 1, 6) frames at out; the number of miss codewords goes to
 * *nmisses (and is added to r->misses). Written for the branch predictor and
 * for few instructions (the decoder runs at ~4 instructions a cycle, and a
 * mispredicted branch costs tens of instructions' worth): short all-hit
 * backtraces take mt_btr_decode_upto3; otherwise tags 0 and 1 and hitN of
 * up to three frames (99% of the codewords) share one path without a
 * branch: the first three frames of the prediction chain are computed and
 * stored whatever the codeword asks for, and only the output pointer's step
 * says how many count. Branching on the tag and looping over a hitN's
 * frames cost a misprediction in most backtraces that take this loop (5%
 * more MB/s on the benchmark trace, 5-9% on the corpus's ocamlopt trace,
 * for 8% more instructions). Misses and longer hitN take a branch. */
MT_BT_INLINE size_t mt_btr_decode_fast(mt_btr *restrict r, const uint8_t **pp,
                                        unsigned n, uint64_t *restrict out,
                                        unsigned *nmisses)
{
    const uint8_t *p = *pp;
    if (n <= 3) {
        if (!(mt_ld64(p) & mt_btr_hard[n])) {
            *nmisses = 0;
            *pp = p + 2 * n;
            return mt_btr_decode_upto3(r, p, n, out);
        }
    }
    uint64_t *restrict loc = r->loc;
    uint16_t *restrict pred = r->pred;
    uint64_t *o = out;
    size_t prev = 0;
    unsigned nm = 0;
    /* (size_t indices: no zero-extensions in the loop) */
    for (; n; n--) {
        size_t w = mt_ld16(p);
        size_t b = w >> 2, tag = w & 3;
        pred[prev] = (uint16_t)b;
        if (tag == 3) {
            uint64_t x = mt_canon(mt_ld64(p + 2));
            nm++;
            loc[b] = x;
            *o++ = x;
            p += 10;
            prev = b;
            continue;
        }
        /* frames predicted after b: the tag, or a hitN's count */
        size_t k = mt_btr_hitn(tag, p[2]);
        if (k > 3) {
            p += 3;
            *o++ = loc[b];
            prev = b;
            for (; k; k--) {
                prev = pred[prev];
                *o++ = loc[prev];
            }
            continue;
        }
        /* b and the first three frames of its prediction chain, whatever
         * the tag: k of the three count */
        size_t ch[4];
        ch[0] = b;
        ch[1] = pred[b];
        ch[2] = pred[ch[1]];
        ch[3] = pred[ch[2]];
        o[0] = loc[ch[0]];
        o[1] = loc[ch[1]];
        o[2] = loc[ch[2]];
        o[3] = loc[ch[3]];
        o += 1 + k;
        p += 2 + (tag >> 1);
        prev = ch[k];
    }
    if (nm)
        r->misses += nm;
    *nmisses = nm;
    *pp = p;
    return (size_t)(o - out);
}

/* The end of n codewords at p, skipped without touching the cache and
 * without checks (the caller guarantees max(n * MT_BT_MAX_CODEWORD, 8)
 * readable bytes). At most three plain hits (three backtraces in four) take
 * no loop: its exit mispredicted as mt_btr_decode_fast's did. */
MT_BT_INLINE const uint8_t *mt_btr_skip_fast(const uint8_t *p, unsigned n)
{
    if (n <= 3 && !(mt_ld64(p) & mt_btr_hard[n]))
        return p + 2 * n;
    static const uint8_t size[4] = {2, 2, 3, 10};
    for (unsigned i = 0; i < n; i++)
        p += size[p[0] & 3];
    return p;
}

/* Skip n codewords without touching the cache (spec 6.6). Returns 0, or -2
 * when they run past end. */
static inline int mt_btr_skip(const uint8_t **pp, const uint8_t *end, unsigned n)
{
    const uint8_t *p = *pp;
    for (unsigned i = 0; i < n; i++) {
        if (end - p < 2)
            return -2;
        unsigned tag = mt_ld16(p) & 3;
        p += 2 + (tag == 2 ? 1 : tag == 3 ? 8 : 0);
    }
    if (p > end)
        return -2;
    *pp = p;
    return 0;
}

#endif /* MT_BACKTRACE_H */
