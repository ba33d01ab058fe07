/*
 * test_backtrace.c - the backtrace codec of spec 6 (codec/backtrace.h):
 * hash functions H1/H2 on the codes of Appendix A.3; the first two events of
 * A.3 encoded byte for byte (7 misses on buckets 10493 6409 15590 6305 2628
 * 10578 1545, then misses + a hitN with 3 self-loop predictions) and decoded
 * back; the A.4 700-frame callstack (prediction runs longer than 255 split
 * into blocks) and its follow-up with a changed innermost frame; truncation
 * of 1000 fresh frames to 409 misses / 4090 bytes (outermost frames kept);
 * victim choice (ties to H2, otherwise the older date); date refresh on hits
 * but not on predictions; the writer's verifier sequence and values and the
 * reader's verifier check; rejection of code 0 and non-canonical codes;
 * mt_btr_skip consuming exactly the decoded bytes and both decoders' input
 * bound checks; random writer->reader round trips with the verifier
 * compared after every step.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codec/backtrace.h"
#include "codec/wire.h"

static uint8_t enc[MT_BT_MAX_LENGTH + 64];
static uint64_t misses[MT_BT_MAX_MISSES];

/* Callstacks below are written caller first (as the spec's examples list
 * them); the writer wants callee first. */
static void reverse(const uint64_t *in, size_t n, uint64_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = in[n - 1 - i];
}

static uint8_t *put_cw_miss(uint8_t *p, unsigned b, uint64_t code)
{
    mt_st16(p, (uint16_t)(b << 2 | 3));
    mt_st64(p + 2, code);
    return p + 10;
}

static uint8_t *put_cw_hit(uint8_t *p, unsigned b, unsigned k)
{
    if (k < 2) {
        mt_st16(p, (uint16_t)(b << 2 | k));
        return p + 2;
    }
    mt_st16(p, (uint16_t)(b << 2 | 2));
    p[2] = (uint8_t)k;
    return p + 3;
}

static void test_hash(void)
{
    CHECK_EQ(mt_bt_hash1(0x2ADBF7B8BCA4ULL), 1312);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7B8BCA4ULL), 10493);
    /* buckets of A.3 misses are H2 (fresh cache: ties) */
    CHECK_EQ(mt_bt_hash2(0x2ADBF7B8C81CULL), 6409);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7D04150ULL), 15590);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7D06048ULL), 6305);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7D28D34ULL), 2628);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7D205D8ULL), 10578);
    CHECK_EQ(mt_bt_hash2(0x2ADBF7D20714ULL), 1545);
    /* A.4 */
    CHECK_EQ(mt_bt_hash2(300), 5319);
    CHECK_EQ(mt_bt_hash2(301), 5446);
    CHECK_EQ(mt_bt_hash2(302), 5573);
    CHECK_EQ(mt_bt_hash2(303), 5700);
    /* formula, for a value whose product overflows 64 bits */
    uint64_t x = 0x3FFFFFFFFFFFFFFFULL;
    CHECK_EQ(mt_bt_hash1(x), ((x * 0x4983723ULL) >> 11) & 0x3FFF);
    CHECK_EQ(mt_bt_hash2(x), ((x * 0xFDEA731ULL) >> 21) & 0x3FFF);
    CHECK(mt_bt_hash1(x) < 16384 && mt_bt_hash2(x) < 16384);
    /* negative canonical code */
    x = (uint64_t)-12345;
    CHECK_EQ(mt_bt_hash1(x), ((x * 0x4983723ULL) >> 11) & 0x3FFF);
    CHECK_EQ(mt_bt_hash2(x), ((x * 0xFDEA731ULL) >> 21) & 0x3FFF);
}

static mt_frames frames_new(void)
{
    mt_frames f = {NULL, 0, 0, 1u << 20};
    return f;
}

#define X_A3 0x2ADBF7D15140ULL

static void test_a3(void)
{
    static mt_btw w;
    static mt_btr r;
    mt_btw_init(&w);
    memset(&r, 0, sizeof r);
    mt_frames f = frames_new();

    /* first event, id 0 */
    static const uint64_t ev1[7] = {0x2ADBF7B8BCA4ULL, 0x2ADBF7B8C81CULL,
                                    0x2ADBF7D04150ULL, 0x2ADBF7D06048ULL,
                                    0x2ADBF7D28D34ULL, 0x2ADBF7D205D8ULL,
                                    0x2ADBF7D20714ULL};
    uint64_t cs[16];
    reverse(ev1, 7, cs);
    size_t len = 0, nm = 0;
    int n = mt_btw_encode(&w, cs, 6, 0, enc, &len, misses, &nm);
    static const uint8_t want1[] = {
        0xf7, 0xa3, 0xa4, 0xbc, 0xb8, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x27, 0x64, 0x1c, 0xc8, 0xb8, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x9b, 0xf3, 0x50, 0x41, 0xd0, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x87, 0x62, 0x48, 0x60, 0xd0, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x13, 0x29, 0x34, 0x8d, 0xd2, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x4b, 0xa5, 0xd8, 0x05, 0xd2, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x27, 0x18, 0x14, 0x07, 0xd2, 0xf7, 0xdb, 0x2a, 0x00, 0x00};
    CHECK_EQ(n, 7);
    CHECK_MEM(enc, len, want1, sizeof want1);
    CHECK_EQ(nm, 7);
    for (int i = 0; i < 7 && i < (int)nm; i++)
        CHECK_EQ(misses[i], ev1[i]);           /* misses in encoding order */
    static const unsigned b1[7] = {10493, 6409, 15590, 6305, 2628, 10578, 1545};
    for (int i = 0; i < 7; i++) {
        CHECK_EQ(w.value[b1[i]], ev1[i]);
        CHECK_EQ(w.date[b1[i]], 0);
    }
    CHECK_EQ(w.next[0], 10493);
    CHECK_EQ(w.next[10493], 6409);
    CHECK_EQ(w.next[10578], 1545);

    const uint8_t *p = want1;
    long got = mt_btr_decode(&r, &p, want1 + sizeof want1, 7, &f, 0);
    CHECK_EQ(got, 7);
    CHECK_EQ(p - want1, sizeof want1);
    for (int i = 0; i < 7; i++)
        CHECK_EQ(f.v[i], ev1[i]);
    f.len = (size_t)got;
    /* reader state checked through mt_btr_verify (layout independent):
     * bucket b holds (pred, loc) */
    CHECK(mt_btr_verify(&r, 0, 10493, 0));
    CHECK(mt_btr_verify(&r, 10493, 6409, 0x2ADBF7B8BCA4ULL));
    CHECK(mt_btr_verify(&r, 10578, 1545, 0x2ADBF7D205D8ULL));
    CHECK(mt_btr_verify(&r, 1545, 0, 0x2ADBF7D20714ULL));

    /* second event, id 1, common prefix 1 */
    static const uint64_t ev2[11] = {0x2ADBF7B8BCA4ULL, 0x2ADBF7B8C814ULL,
                                     0x2ADBF7B8CACCULL, 0x2ADBF7D17524ULL,
                                     0x2ADBF7C065FCULL, X_A3, X_A3, X_A3, X_A3,
                                     X_A3, 0x2ADBF7D153DDULL};
    reverse(ev2, 11, cs);
    n = mt_btw_encode(&w, cs, 9, 1, enc, &len, misses, &nm);
    static const uint8_t want2[] = {
        0x47, 0x54, 0x14, 0xc8, 0xb8, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0xf3, 0xb8, 0xcc, 0xca, 0xb8, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x77, 0x98, 0x24, 0x75, 0xd1, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x5f, 0x64, 0xfc, 0x65, 0xc0, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x13, 0x66, 0x40, 0x51, 0xd1, 0xf7, 0xdb, 0x2a, 0x00, 0x00,
        0x12, 0x66, 0x03,
        0x2f, 0x95, 0xdd, 0x53, 0xd1, 0xf7, 0xdb, 0x2a, 0x00, 0x00};
    CHECK_EQ(n, 7);
    CHECK_MEM(enc, len, want2, sizeof want2);
    CHECK_EQ(nm, 6);
    CHECK_EQ(w.next[6532], 9547);              /* the final miss */
    CHECK_EQ(w.date[6532], 1);

    p = want2;
    got = mt_btr_decode(&r, &p, want2 + sizeof want2, 7, &f, 1);
    CHECK_EQ(got, 11);
    CHECK_EQ(p - want2, sizeof want2);
    for (int i = 0; i < 11; i++)
        CHECK_EQ(f.v[i], ev2[i]);
    CHECK(mt_btr_verify(&r, 6532, 9547, X_A3));
    CHECK(mt_btr_verify(&r, 9547, 0, 0x2ADBF7D153DDULL));
    CHECK(mt_btr_verify(&r, 0, 5393, 0));

    /* skip consumes the same bytes and does not touch the cache */
    mt_btr copy = r;
    p = want2;
    CHECK_EQ(mt_btr_skip(&p, want2 + sizeof want2, 7), 0);
    CHECK_EQ(p - want2, sizeof want2);
    CHECK(memcmp(&copy, &r, sizeof r) == 0);
    p = want2;
    CHECK_EQ(mt_btr_skip(&p, want2 + sizeof want2 - 1, 7), -2);
    CHECK(p == want2);
    p = want2;
    CHECK_EQ(mt_btr_skip(&p, want2 + 52, 6), -2);   /* ends inside the hitN */
    p = want2;
    CHECK_EQ(mt_btr_skip(&p, want2 + 53, 6), 0);
    CHECK_EQ(p - want2, 53);

    /* bounded decode of cut input reports -2 */
    mt_btr r2;
    memset(&r2, 0, sizeof r2);
    mt_frames f2 = frames_new();
    for (size_t cut = 0; cut < sizeof want1; cut += 3) {
        const uint8_t *q = want1;
        long res = mt_btr_decode(&r2, &q, want1 + cut, 7, &f2, 0);
        if (res != -2)
            CHECK_FAIL_("decode of %zu of %zu bytes gave %ld", cut, sizeof want1, res);
    }
    free(f2.v);

    /* verifier against this cache */
    CHECK(mt_btr_verify(&r, 0xFFFF, 1234, 5678));
    CHECK(mt_btr_verify(&r, 10493, 6409, 0x2ADBF7B8BCA4ULL));
    CHECK(mt_btr_verify(&r, 10493, 6409, 0x80002ADBF7B8BCA4ULL)); /* canon */
    CHECK(!mt_btr_verify(&r, 10493, 6408, 0x2ADBF7B8BCA4ULL));
    CHECK(!mt_btr_verify(&r, 10493, 6409, 0x2ADBF7B8BCA5ULL));
    CHECK(mt_btr_verify(&r, 16383, 0, 0));
    CHECK(!mt_btr_verify(&r, 16384, 0, 0));
    CHECK(!mt_btr_verify(&r, 0xFFFE, 0, 0));
    CHECK(mt_btr_verify(&r, 0, 5393, 0));
    free(f.v);
}

static void test_a4(void)
{
    static mt_btw w;
    static mt_btr r;
    mt_btw_init(&w);
    memset(&r, 0, sizeof r);
    static uint64_t cs[700];
    cs[0] = 300;
    for (int i = 1; i < 699; i++)
        cs[i] = 301;
    cs[699] = 302;
    size_t len, nm;
    int n = mt_btw_encode(&w, cs, 699, 0, enc, &len, misses, &nm);
    uint8_t want[64], *q = want;
    q = put_cw_miss(q, 5573, 302);
    q = put_cw_miss(q, 5446, 301);
    q = put_cw_hit(q, 5446, 255);
    q = put_cw_hit(q, 5446, 255);
    q = put_cw_hit(q, 5446, 184);
    q = put_cw_miss(q, 5319, 300);
    static const uint8_t lit[] = {0x17, 0x57, 0x2e, 0x01, 0, 0, 0, 0, 0, 0,
                                  0x1b, 0x55, 0x2d, 0x01, 0, 0, 0, 0, 0, 0,
                                  0x1a, 0x55, 0xff, 0x1a, 0x55, 0xff, 0x1a, 0x55, 0xb8,
                                  0x1f, 0x53, 0x2c, 0x01, 0, 0, 0, 0, 0, 0};
    CHECK_MEM(want, (size_t)(q - want), lit, sizeof lit);   /* spec's bytes */
    CHECK_EQ(n, 6);
    CHECK_MEM(enc, len, lit, sizeof lit);
    CHECK_EQ(nm, 3);
    CHECK_EQ(w.date[5446], 0);

    mt_frames f = frames_new();
    const uint8_t *p = lit;
    long got = mt_btr_decode(&r, &p, lit + sizeof lit, 6, &f, 0);
    CHECK_EQ(got, 700);
    CHECK_EQ(p - lit, sizeof lit);
    unsigned bad = 0;
    for (int i = 0; i < 700 && got == 700; i++)
        bad += f.v[i] != cs[699 - i];
    CHECK_EQ(bad, 0);
    f.len = 700;
    p = lit;
    CHECK_EQ(mt_btr_skip(&p, lit + sizeof lit, 6), 0);
    CHECK_EQ(p - lit, sizeof lit);

    /* same stack, innermost frame 303, id 1: common prefix 699, one miss */
    cs[0] = 303;
    n = mt_btw_encode(&w, cs, 0, 1, enc, &len, misses, &nm);
    static const uint8_t lit2[] = {0x13, 0x59, 0x2f, 0x01, 0, 0, 0, 0, 0, 0};
    CHECK_EQ(n, 1);
    CHECK_MEM(enc, len, lit2, sizeof lit2);
    p = lit2;
    got = mt_btr_decode(&r, &p, lit2 + sizeof lit2, 1, &f, 699);
    CHECK_EQ(got, 700);
    CHECK_EQ(f.v[699], 303);
    CHECK_EQ(f.v[698], 301);
    CHECK_EQ(f.v[0], 302);

    /* exactly 255 predictions fit one hitN; 256 need a second block */
    for (int extra = 254; extra <= 257; extra++) {
        static mt_btw w2;
        mt_btw_init(&w2);
        static uint64_t s[400];
        int L = 1 + extra;           /* 301 missed, hit, then extra-1 preds */
        for (int i = 0; i < L; i++)
            s[i] = 301;
        /* the first occurrence misses, the second hits, the rest predict */
        n = mt_btw_encode(&w2, s, L - 1, 0, enc, &len, misses, &nm);
        int preds = L - 2;           /* frames after the hit */
        int want_n = preds <= 255 ? 2 : 3;
        CHECK_EQ(n, want_n);
        CHECK_EQ(enc[10], 0x1a);
        CHECK_EQ(enc[11], 0x55);
        CHECK_EQ(enc[12], preds <= 255 ? preds : 255);
        if (preds > 255) {
            unsigned k = (unsigned)(preds - 256);
            CHECK_EQ(len, 10u + 3 + (k >= 2 ? 3 : 2));
            CHECK_EQ(mt_ld16(enc + 13), 5446u << 2 | (k >= 2 ? 2 : k));
        } else {
            CHECK_EQ(len, 13);
        }
        static mt_btr r3;
        memset(&r3, 0, sizeof r3);
        mt_frames f3 = frames_new();
        p = enc;
        got = mt_btr_decode(&r3, &p, enc + len, (unsigned)n, &f3, 0);
        CHECK_EQ(got, L);
        free(f3.v);
    }
    free(f.v);
}

static void test_truncation(void)
{
    static mt_btw w;
    static mt_btr r;
    mt_btw_init(&w);
    memset(&r, 0, sizeof r);
    static uint64_t cs[1000];
    for (int i = 0; i < 1000; i++)
        cs[i] = 0x100000000ULL + (uint64_t)i * 7919;
    size_t len, nm;
    int n = mt_btw_encode(&w, cs, 999, 0, enc, &len, misses, &nm);
    CHECK_EQ(n, 409);
    CHECK_EQ(len, 4090);
    CHECK_EQ(nm, 409);
    CHECK_EQ(misses[0], cs[999]);
    CHECK_EQ(misses[408], cs[591]);
    mt_frames f = frames_new();
    const uint8_t *p = enc;
    long got = mt_btr_decode(&r, &p, enc + len, (unsigned)n, &f, 0);
    CHECK_EQ(got, 409);
    unsigned bad = 0;
    for (int i = 0; i < 409 && got == 409; i++)
        bad += f.v[i] != cs[999 - i];         /* the outermost 409 frames */
    CHECK_EQ(bad, 0);

    /* The PRED state stops when cur + 2 > limit (4086): outermost first
     * M0..M407 (fresh, 4080 bytes), A B C (A hits, B C predicted: hitN,
     * 4083), D (hash hit, prediction fails: hit0, 4085), E (hash hit; PRED
     * at 4085 has 4087 > 4086: hit0, stop), F G would have been predicted
     * from E but are dropped. All codes use distinct buckets. */
    static mt_btw w2;
    static mt_btr r2;
    mt_btw_init(&w2);
    memset(&r2, 0, sizeof r2);
    static uint64_t M[408], AG[7];
    static uint8_t used[MT_BT_BUCKETS];
    memset(used, 0, sizeof used);
    used[0] = 1;
    uint64_t x = 0x5000000000ULL;
    for (int i = 0; i < 7 + 408; i++) {
        for (;; x += 977) {
            unsigned h1 = mt_bt_hash1(x), h2 = mt_bt_hash2(x);
            if (!used[h1] && !used[h2] && h1 != h2) {
                used[h1] = used[h2] = 1;
                break;
            }
        }
        if (i < 7)
            AG[i] = x;
        else
            M[i - 7] = x;
        x += 977;
    }
    mt_frames f2 = frames_new();
    /* setup encodings, decoded by the reader too: [A B C], [D], [E F G] */
    struct { int from, len; } setup[3] = {{0, 3}, {3, 1}, {4, 3}};
    for (int k = 0; k < 3; k++) {
        uint64_t st[3];
        reverse(AG + setup[k].from, (size_t)setup[k].len, st);
        n = mt_btw_encode(&w2, st, setup[k].len - 1, k + 1, enc, &len, misses, &nm);
        CHECK_EQ(n, setup[k].len);
        p = enc;
        CHECK_EQ(mt_btr_decode(&r2, &p, enc + len, (unsigned)n, &f2, 0), setup[k].len);
    }
    static uint64_t full[415], cs2[415];
    memcpy(full, M, sizeof M);
    memcpy(full + 408, AG, sizeof AG);
    reverse(full, 415, cs2);
    n = mt_btw_encode(&w2, cs2, 414, 10, enc, &len, misses, &nm);
    CHECK_EQ(n, 411);
    CHECK_EQ(len, 4087);
    CHECK_EQ(nm, 408);
    CHECK_EQ(mt_ld16(enc + 4080), mt_bt_hash2(AG[0]) << 2 | 2);
    CHECK_EQ(enc[4082], 2);
    CHECK_EQ(mt_ld16(enc + 4083), mt_bt_hash2(AG[3]) << 2);
    CHECK_EQ(mt_ld16(enc + 4085), mt_bt_hash2(AG[4]) << 2);
    p = enc;
    got = mt_btr_decode(&r2, &p, enc + len, (unsigned)n, &f2, 0);
    CHECK_EQ(got, 413);
    CHECK(got == 413 && memcmp(f2.v, full, 413 * sizeof *full) == 0);
    free(f2.v);
    free(f.v);
}

static unsigned find_code(unsigned bucket_h2, unsigned not_h1, uint64_t start)
{
    for (uint64_t x = start;; x++)
        if (mt_bt_hash2(x) == bucket_h2 && mt_bt_hash1(x) != bucket_h2 &&
            mt_bt_hash1(x) != not_h1)
            return (unsigned)x;
}

static void test_victim(void)
{
    static mt_btw w;
    size_t len, nm;
    uint64_t x = 0x2ADBF7B8BCA4ULL;   /* H1 1312, H2 10493 */
    struct { int64_t d1, d2; unsigned want; } c[] = {
        {0, 0, 10493}, {5, 5, 10493}, {3, 7, 1312}, {7, 3, 10493},
        {-1, 0, 1312}, {0, -1, 10493},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        mt_btw_init(&w);
        w.date[1312] = c[i].d1;
        w.date[10493] = c[i].d2;
        w.value[1312] = 11;
        w.value[10493] = 12;
        int n = mt_btw_encode(&w, &x, 0, 42, enc, &len, misses, &nm);
        CHECK_EQ(n, 1);
        CHECK_EQ(mt_ld16(enc), c[i].want << 2 | 3);
        CHECK_EQ(w.value[c[i].want], x);
        CHECK_EQ(w.date[c[i].want], 42);
        unsigned other = c[i].want == 1312 ? 10493 : 1312;
        CHECK_EQ(w.value[other], other == 1312 ? 11 : 12);
        CHECK_EQ(w.date[other], other == 1312 ? c[i].d1 : c[i].d2);
    }

    /* Natural sequence: a fills H2(a) at id 1; b with H2(b) == H2(a) and a
     * different, untouched H1(b) goes to H1(b) at id 2 (date 0 < 1). */
    mt_btw_init(&w);
    uint64_t a = 1000;
    unsigned ba = mt_bt_hash2(a);
    uint64_t b = find_code(ba, mt_bt_hash1(a), a + 1);
    CHECK_EQ(mt_btw_encode(&w, &a, 0, 1, enc, &len, misses, &nm), 1);
    CHECK_EQ(mt_ld16(enc), ba << 2 | 3);
    CHECK_EQ(mt_btw_encode(&w, &b, 0, 2, enc, &len, misses, &nm), 1);
    CHECK_EQ(mt_ld16(enc), mt_bt_hash1(b) << 2 | 3);
    CHECK_EQ(w.value[ba], a);                  /* a not evicted */
    /* a is still a hit (on its H2 bucket) */
    CHECK_EQ(mt_btw_encode(&w, &a, 0, 3, enc, &len, misses, &nm), 1);
    CHECK_EQ(len, 2);
    CHECK_EQ(mt_ld16(enc), ba << 2);
    CHECK_EQ(nm, 0);
    /* hit on H1 is preferred when both hold x (cannot happen naturally) */
    mt_btw_init(&w);
    w.value[1312] = x;
    w.value[10493] = x;
    mt_btw_encode(&w, &x, 0, 9, enc, &len, misses, &nm);
    CHECK_EQ(mt_ld16(enc), 1312u << 2);
    CHECK_EQ(w.date[1312], 9);
    CHECK_EQ(w.date[10493], 0);
}

static void test_dates(void)
{
    static mt_btw w;
    mt_btw_init(&w);
    uint64_t A = 0x2ADBF7B8BCA4ULL, B = 0x2ADBF7B8C81CULL, C = 0x2ADBF7D04150ULL;
    uint64_t cs[3] = {C, B, A};                 /* callee first: A outermost */
    size_t len, nm;
    CHECK_EQ(mt_btw_encode(&w, cs, 2, 1, enc, &len, misses, &nm), 3);
    unsigned bA = 10493, bB = 6409, bC = 15590;
    CHECK_EQ(w.date[bA], 1);
    CHECK_EQ(w.date[bB], 1);
    CHECK_EQ(w.next[bA], bB);
    CHECK_EQ(w.next[bB], bC);
    /* again at id 5: hit on A, then B and C predicted -> one hitN word */
    CHECK_EQ(mt_btw_encode(&w, cs, 2, 5, enc, &len, misses, &nm), 1);
    static const uint8_t want[] = {0xf6, 0xa3, 0x02};   /* 10493<<2|2, k=2 */
    CHECK_MEM(enc, len, want, sizeof want);
    CHECK_EQ(w.date[bA], 5);                    /* hit refreshes */
    CHECK_EQ(w.date[bB], 1);                    /* predictions do not */
    CHECK_EQ(w.date[bC], 1);
    /* [A, C]: hit A, prediction B fails, C hits by hash -> date refreshed */
    uint64_t cs2[2] = {C, A};
    CHECK_EQ(mt_btw_encode(&w, cs2, 1, 7, enc, &len, misses, &nm), 2);
    static const uint8_t want2[] = {0xf4, 0xa3, 0x98, 0xf3};   /* hit0 A, hit0 C */
    CHECK_MEM(enc, len, want2, sizeof want2);
    CHECK_EQ(w.date[bA], 7);
    CHECK_EQ(w.date[bC], 7);
    CHECK_EQ(w.date[bB], 1);
    CHECK_EQ(w.next[bA], bC);                   /* relearned */
    CHECK_EQ(w.next[0], bA);
    /* [A, C] again: A hit, C predicted -> hit1 */
    CHECK_EQ(mt_btw_encode(&w, cs2, 1, 8, enc, &len, misses, &nm), 1);
    CHECK_EQ(len, 2);
    CHECK_EQ(mt_ld16(enc), bA << 2 | 1);
    CHECK_EQ(w.date[bC], 7);
    /* hi = -1 encodes nothing */
    CHECK_EQ(mt_btw_encode(&w, cs2, -1, 9, enc, &len, misses, &nm), 0);
    CHECK_EQ(len, 0);
    CHECK_EQ(nm, 0);
}

static void test_verifier_and_rejects(void)
{
    static mt_btw w;
    mt_btw_init(&w);
    w.next[4242] = 77;
    w.value[4242] = 0x1234;
    w.next[9655] = 16383;
    w.value[9655] = (uint64_t)-2;
    uint16_t ix, pred;
    uint64_t val;
    static const unsigned seq[] = {4242, 9655, 15068, 4097, 9510, 14923};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        mt_btw_verifier(&w, &ix, &pred, &val);
        CHECK_EQ(ix, seq[i]);
        if (i == 0) {
            CHECK_EQ(pred, 77);
            CHECK_EQ(val, 0x1234);
        } else if (i == 1) {
            CHECK_EQ(pred, 16383);
            CHECK_EQ(val, (uint64_t)-2);
        } else {
            CHECK_EQ(pred, 0);
            CHECK_EQ(val, 0);
        }
    }
    /* the whole cycle stays in range */
    unsigned outside = 0;
    for (int i = 0; i < 40000; i++) {
        mt_btw_verifier(&w, &ix, &pred, &val);
        outside += ix >= 16384;
    }
    CHECK_EQ(outside, 0);

    /* (codes 0 and not canonical are the writer's to refuse, before the
     * encoder runs: test_errors.c) */
    size_t len = 99, nm = 99;
    mt_btw_init(&w);
    uint64_t okneg = 0xC000000000000000ULL;      /* canonical negative */
    CHECK_EQ(mt_btw_encode(&w, &okneg, 0, 0, enc, &len, misses, &nm), 1);
    CHECK_EQ(nm, 1);
    CHECK_EQ(misses[0], okneg);
}

/* ---- random round trips ------------------------------------------------- */

static uint64_t rng = 0x0123456789ABCDEFULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_random(void)
{
    static mt_btw w;
    static mt_btr r, rfast;
    static uint64_t fastout[MT_BT_MAX_LENGTH / 2 * 256];
    static uint64_t pool[4000];
    static uint64_t cs[400], prev[400], expect[800];
    size_t prev_len = 0;
    mt_frames f = frames_new();
    mt_btw_init(&w);
    memset(&r, 0, sizeof r);
    memset(&rfast, 0, sizeof rfast);
    unsigned fast_bad = 0, misses_bad = 0;
    for (int i = 0; i < 4000; i++) {
        uint64_t v = rnd() & 0x3FFFFFFFFFFFULL;
        if (i % 97 == 0)
            v = (uint64_t)-(int64_t)(i + 1);             /* some negative codes */
        pool[i] = v ? v : 1;
    }
    unsigned bad = 0, verify_bad = 0, skip_bad = 0;
    for (int step = 0; step < 3000; step++) {
        /* new callstack: keep some outer frames of prev, then new ones */
        size_t L = rnd() % 300;
        size_t keep = prev_len && rnd() % 3 ? rnd() % (prev_len + 1) : 0;
        if (keep > L)
            keep = L;
        size_t npool = step % 3 == 0 ? 4000 : step % 3 == 1 ? 300 : 20;
        /* outermost first into expect[] */
        for (size_t i = 0; i < keep; i++)
            expect[i] = prev[prev_len - 1 - i];
        uint64_t run = pool[rnd() % npool];
        for (size_t i = keep; i < L; i++) {
            if (rnd() % 4 == 0)
                run = pool[rnd() % npool];
            expect[i] = rnd() % 3 ? run : pool[rnd() % npool];
        }
        for (size_t i = 0; i < L; i++)
            cs[i] = expect[L - 1 - i];
        /* common suffix (spec 8.5) */
        long ci = (long)L - 1, pj = (long)prev_len - 1;
        while (ci >= 0 && pj >= 0 && cs[ci] == prev[pj]) {
            ci--;
            pj--;
        }
        size_t common = L - 1 - (size_t)ci;
        size_t len, nm;
        int n = mt_btw_encode(&w, cs, ci, step, enc, &len, misses, &nm);
        memcpy(prev, cs, L * sizeof *cs);
        prev_len = L;

        const uint8_t *p = enc;
        CHECK(common <= f.len);
        if (mt_btr_skip(&p, enc + len, (unsigned)n) != 0 || p != enc + len)
            skip_bad++;
        /* the unchecked decoder (needs n * 10 readable bytes) */
        memset(enc + len, 0, (size_t)n * MT_BT_MAX_CODEWORD - len + 1);
        p = enc;
        uint64_t fast_misses = rfast.misses, slow_misses = r.misses;
        unsigned fast_nm;
        size_t nfast = mt_btr_decode_fast(&rfast, &p, (unsigned)n, fastout, &fast_nm);
        if (nfast != L - common || p != enc + len ||
            memcmp(fastout, expect + common, nfast * sizeof *fastout) != 0)
            fast_bad++;
        p = enc;
        long got = mt_btr_decode(&r, &p, enc + len, (unsigned)n, &f, common);
        /* both count the miss codewords: the codes the writer reported new */
        if (rfast.misses - fast_misses != nm || fast_nm != nm || r.misses - slow_misses != nm)
            misses_bad++;
        if (got != (long)L || p != enc + len) {
            if (bad++ < 5)
                CHECK_FAIL_("step %d: decoded %ld frames of %zu (%d codewords)",
                            step, got, L, n);
            continue;
        }
        f.len = L;
        if (memcmp(f.v, expect, L * sizeof *expect) != 0 && bad++ < 5)
            CHECK_FAIL_("step %d: frames differ", step);
        /* the writer's verifier agrees with the reader's cache */
        uint16_t ix, pred;
        uint64_t val;
        mt_btw_verifier(&w, &ix, &pred, &val);
        if (!mt_btr_verify(&r, ix, pred, val))
            verify_bad++;
        for (int k = 0; k < 3; k++) {
            unsigned b = (unsigned)(rnd() % 16384);
            if (!mt_btr_verify(&r, b, w.next[b], w.value[b]))
                verify_bad++;
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(verify_bad, 0);
    CHECK_EQ(skip_bad, 0);
    CHECK_EQ(fast_bad, 0);
    CHECK_EQ(misses_bad, 0);
    /* whole caches equal at the end */
    unsigned differ = 0;
    for (unsigned b = 0; b < MT_BT_BUCKETS; b++)
        differ += !mt_btr_verify(&r, b, w.next[b], w.value[b]);
    CHECK_EQ(differ, 0);
    free(f.v);
}

int main(void)
{
    test_hash();
    test_a3();
    test_a4();
    test_truncation();
    test_victim();
    test_dates();
    test_verifier_and_rejects();
    test_random();
    return CHECK_DONE();
}
