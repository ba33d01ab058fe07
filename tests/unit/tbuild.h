/*
 * tbuild.h - helpers for the unit tests: build v2 traces byte by byte (our
 * own little-endian stores, independent of the library's packet code), a
 * growable memory sink for the writer, and a walker over the packets of a
 * trace that reports each packet's header fields and first event code.
 */
#ifndef MT_TEST_TBUILD_H
#define MT_TEST_TBUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *p;
    size_t len, cap;
    size_t pkt;          /* start of the packet being built */
} tbuf;

static inline void tb_reserve(tbuf *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        b->cap = cap;
    }
}

static inline void tb_bytes(tbuf *b, const void *s, size_t n)
{
    tb_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static inline void tb_le(tbuf *b, uint64_t v, unsigned n)
{
    tb_reserve(b, n);
    for (unsigned i = 0; i < n; i++)
        b->p[b->len++] = (uint8_t)(v >> (8 * i));
}

static inline void tb_str(tbuf *b, const char *s) { tb_bytes(b, s, strlen(s) + 1); }

static inline void tb_set_le(tbuf *b, size_t at, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        b->p[at + i] = (uint8_t)(v >> (8 * i));
}

/* v2 header (66 bytes) with dummy verifier; size patched by tb_end. */
static inline void tb_begin(tbuf *b, uint64_t tbeg, uint64_t tend, uint64_t pid,
                            uint64_t id_begin, uint64_t id_end)
{
    b->pkt = b->len;
    tb_le(b, 0xC1FC1FC1u, 4);
    tb_le(b, 0, 4);
    tb_le(b, tbeg, 8);
    tb_le(b, tend, 8);
    tb_le(b, 0, 4);
    tb_le(b, 2, 2);
    tb_le(b, pid, 8);
    tb_le(b, 0xFFFF, 2);
    tb_le(b, 0, 2);
    tb_le(b, 0, 8);
    tb_le(b, id_begin, 8);
    tb_le(b, id_end, 8);
}

static inline void tb_end(tbuf *b)
{
    tb_set_le(b, b->pkt + 4, (uint64_t)(b->len - b->pkt) * 8, 4);
}

static inline void tb_word(tbuf *b, unsigned code, uint64_t t)
{
    tb_le(b, (uint64_t)code << 25 | (t & 0x1FFFFFF), 4);
}

/* The trace_info packet's header and its event up to the strings (event
 * word at event_time, sample rate, word size), of a trace started at t0. */
static inline void tb_info_head(tbuf *b, uint64_t t0, uint64_t event_time, uint64_t pid)
{
    tb_begin(b, t0, t0, pid, 0, 0);
    tb_word(b, 0, event_time);
    double rate = 1e-4;
    uint64_t bits;
    memcpy(&bits, &rate, 8);
    tb_le(b, bits, 8);
    tb_le(b, 64, 1);
}

/* The trace_info packet (v2, context "") of a trace started at t0. */
static inline void tb_info(tbuf *b, uint64_t t0, uint64_t pid)
{
    tb_info_head(b, t0, t0, pid);
    tb_str(b, "exe");
    tb_str(b, "host");
    tb_str(b, "");
    tb_le(b, pid, 8);
    tb_str(b, "");
    tb_end(b);
}

/* ---- a growable memory sink for mt_writer_open_sink --------------------- */

typedef struct {
    uint8_t *p;
    size_t len, cap;
    unsigned calls;
    int fail_after;      /* >= 0: calls after this many succeed fail        */
    int err;             /* errno returned when failing                     */
} msink;

static inline int msink_fn(void *ctx, const void *buf, size_t len)
{
    msink *s = ctx;
    if (s->fail_after >= 0 && s->calls >= (unsigned)s->fail_after) {
        s->calls++;
        return s->err;
    }
    s->calls++;
    if (s->len + len > s->cap) {
        size_t cap = s->cap ? s->cap : 65536;
        while (cap < s->len + len)
            cap *= 2;
        s->p = realloc(s->p, cap);
        s->cap = cap;
    }
    memcpy(s->p + s->len, buf, len);
    s->len += len;
    return 0;
}

/* ---- packet walker ------------------------------------------------------ */

typedef struct {
    size_t off, size;          /* offset in the trace, bytes incl. header   */
    unsigned hsize, version, domain;
    uint64_t tb, te, pid;
    unsigned vix, vpred;
    uint64_t vval;
    uint64_t id_begin, id_end;
    int first_code;            /* -1 when the packet has no content         */
} pkt_t;

static inline uint64_t tb_ld(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Split a trace into packets; returns the count or -1 if malformed. */
static inline int walk_packets(const uint8_t *p, size_t len, pkt_t *out, int max)
{
    size_t off = 0;
    int n = 0;
    while (off < len) {
        if (len - off < 30 || n == max)
            return -1;
        if (len - off < (tb_ld(p + off + 28, 2) >= 3 ? 68u : 66u))
            return -1;
        const uint8_t *h = p + off;
        pkt_t *k = &out[n];
        if (tb_ld(h, 4) != 0xC1FC1FC1u)
            return -1;
        k->off = off;
        k->size = (size_t)tb_ld(h + 4, 4) / 8;
        k->tb = tb_ld(h + 8, 8);
        k->te = tb_ld(h + 16, 8);
        k->version = (unsigned)tb_ld(h + 28, 2);
        k->pid = tb_ld(h + 30, 8);
        unsigned o = 38;
        k->domain = 0;
        if (k->version >= 3) {
            k->domain = (unsigned)tb_ld(h + 38, 2);
            o = 40;
        }
        k->hsize = o + 28;
        k->vix = (unsigned)tb_ld(h + o, 2);
        k->vpred = (unsigned)tb_ld(h + o + 2, 2);
        k->vval = tb_ld(h + o + 4, 8);
        k->id_begin = tb_ld(h + o + 12, 8);
        k->id_end = tb_ld(h + o + 20, 8);
        if (k->size < k->hsize || off + k->size > len)
            return -1;
        k->first_code = k->size > k->hsize + 3
                            ? (int)(tb_ld(h + k->hsize, 4) >> 25) : -1;
        off += k->size;
        n++;
    }
    return n;
}

#endif /* MT_TEST_TBUILD_H */
