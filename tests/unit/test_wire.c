/*
 * test_wire.c - byte-level primitives of spec section 1 (codec/wire.h): the
 * canonical vint encoding at every form boundary (0/252/253/65535/65536,
 * 2^31-1/2^31, 2^32-1, 2^32+5, 2^40, 2^62-1, negatives down to -2^31 and the
 * 9-byte form below it) checked against hand-written byte sequences including
 * the examples of spec 1.3; mt_vint_size and mt_vint_len against the encoded
 * length; decoding of non-canonical forms and sign extension of form 254;
 * 63-bit canonicalisation (mt_canon, spec 1.4) of values whose bit 63
 * differs from bit 62, also through a form-255 vint; little-endian loads and
 * stores at unaligned addresses.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "codec/wire.h"

typedef struct {
    int64_t v;
    uint8_t bytes[9];
    unsigned len;
} vcase;

#define B(...) {__VA_ARGS__}

static const vcase cases[] = {
    {0, B(0x00), 1},
    {1, B(0x01), 1},
    {252, B(0xfc), 1},
    {253, B(0xfd, 0xfd, 0x00), 3},
    {699, B(0xfd, 0xbb, 0x02), 3},                          /* spec 1.3 */
    {65535, B(0xfd, 0xff, 0xff), 3},
    {65536, B(0xfe, 0x00, 0x00, 0x01, 0x00), 5},
    {70000, B(0xfe, 0x70, 0x11, 0x01, 0x00), 5},            /* spec 1.3 */
    {2147483647, B(0xfe, 0xff, 0xff, 0xff, 0x7f), 5},
    {2147483648LL, B(0xff, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00), 9},
    {4294967295LL, B(0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00), 9},
    {4294967301LL, B(0xff, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00), 9},
    {1099511627776LL, B(0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00), 9},
    {4611686018427387903LL,                                  /* 2^62-1 */
     B(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f), 9},
    {-1, B(0xfe, 0xff, 0xff, 0xff, 0xff), 5},
    {-5, B(0xfe, 0xfb, 0xff, 0xff, 0xff), 5},               /* spec 1.3 */
    {-253, B(0xfe, 0x03, 0xff, 0xff, 0xff), 5},
    {-2147483647LL - 1, B(0xfe, 0x00, 0x00, 0x00, 0x80), 5},
    {-2147483649LL,
     B(0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff), 9},
    {-4611686018427387904LL,                                 /* -2^62 */
     B(0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc0), 9},
};

static void test_vint_canonical(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const vcase *c = &cases[i];
        uint8_t buf[32];
        memset(buf, 0xAA, sizeof buf);
        uint8_t *end = mt_put_vint(buf, c->v);
        CHECK_EQ(end - buf, c->len);
        CHECK_MEM(buf, (size_t)(end - buf), c->bytes, c->len);
        CHECK_EQ(buf[c->len], 0xAA);            /* nothing written beyond */
        CHECK_EQ(mt_vint_size(c->v), c->len);
        CHECK_EQ(mt_vint_len(c->bytes[0]), c->len);

        int64_t got = 12345;
        const uint8_t *q = mt_get_vint(c->bytes, &got);
        CHECK_EQ(got, c->v);
        CHECK_EQ(q - c->bytes, c->len);
    }
}

static void test_vint_decode_forms(void)
{
    int64_t v;
    /* Non-canonical encodings are accepted. */
    static const uint8_t nc3[] = {0xfd, 0x05, 0x00};
    CHECK_EQ(mt_get_vint(nc3, &v) - nc3, 3);
    CHECK_EQ(v, 5);
    static const uint8_t nc5[] = {0xfe, 0x05, 0x00, 0x00, 0x00};
    CHECK_EQ(mt_get_vint(nc5, &v) - nc5, 5);
    CHECK_EQ(v, 5);
    static const uint8_t nc9[] = {0xff, 0x05, 0, 0, 0, 0, 0, 0, 0};
    CHECK_EQ(mt_get_vint(nc9, &v) - nc9, 9);
    CHECK_EQ(v, 5);
    static const uint8_t nc9neg[] = {0xff, 0xfb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    mt_get_vint(nc9neg, &v);
    CHECK_EQ(v, -5);
    static const uint8_t nc3big[] = {0xfd, 0x10, 0x00};   /* 16, fits one byte */
    mt_get_vint(nc3big, &v);
    CHECK_EQ(v, 16);

    /* Form 254 sign-extends: these are NOT 2^31 / 2^32-1. */
    static const uint8_t s1[] = {0xfe, 0x00, 0x00, 0x00, 0x80};
    mt_get_vint(s1, &v);
    CHECK_EQ(v, -2147483647LL - 1);
    static const uint8_t s2[] = {0xfe, 0xff, 0xff, 0xff, 0xff};
    mt_get_vint(s2, &v);
    CHECK_EQ(v, -1);
    static const uint8_t s3[] = {0xfe, 0xff, 0xff, 0xff, 0x7f};
    mt_get_vint(s3, &v);
    CHECK_EQ(v, 2147483647LL);

    /* Form 253 is unsigned 16-bit. */
    static const uint8_t u16[] = {0xfd, 0xff, 0xff};
    mt_get_vint(u16, &v);
    CHECK_EQ(v, 65535);

    /* Form 255 is canonicalised to 63 bits (spec 1.4). */
    static const uint8_t c1[] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0x80};  /* 2^63 */
    mt_get_vint(c1, &v);
    CHECK_EQ(v, 0);
    static const uint8_t c2[] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0x40};  /* 2^62 */
    mt_get_vint(c2, &v);
    CHECK_EQ(v, -4611686018427387904LL);
    static const uint8_t c3[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    mt_get_vint(c3, &v);
    CHECK_EQ(v, -1);

    /* The reader reads only the bytes of the form. */
    static const uint8_t two[] = {0x07, 0xfd, 0x00, 0x01, 0xfc};
    const uint8_t *p = two;
    p = mt_get_vint(p, &v);
    CHECK_EQ(v, 7);
    p = mt_get_vint(p, &v);
    CHECK_EQ(v, 256);
    p = mt_get_vint(p, &v);
    CHECK_EQ(v, 252);
    CHECK_EQ(p - two, 5);

    /* mt_vint_len of every tag class */
    CHECK_EQ(mt_vint_len(0), 1);
    CHECK_EQ(mt_vint_len(252), 1);
    CHECK_EQ(mt_vint_len(253), 3);
    CHECK_EQ(mt_vint_len(254), 5);
    CHECK_EQ(mt_vint_len(255), 9);
}

static void test_vint_sweep(void)
{
    /* Every value near each boundary: size agrees with the bytes, round trip. */
    static const int64_t centres[] = {0, 252, 253, 65535, 65536, 2147483647LL,
                                      2147483648LL, 4294967295LL, 4294967296LL,
                                      -2147483647LL - 1, -1, 1LL << 40,
                                      (1LL << 62) - 1, -(1LL << 62)};
    unsigned bad = 0;
    for (size_t i = 0; i < sizeof centres / sizeof centres[0]; i++) {
        for (int64_t d = -3; d <= 3; d++) {
            int64_t v = centres[i] + d;
            if (v > (1LL << 62) - 1 || v < -(1LL << 62))
                continue;
            uint8_t buf[16];
            uint8_t *e = mt_put_vint(buf, v);
            int64_t back;
            const uint8_t *q = mt_get_vint(buf, &back);
            unsigned want = (v >= 0 && v <= 252) ? 1
                          : (v >= 0 && v <= 65535) ? 3
                          : (v >= -2147483648LL && v <= 2147483647LL) ? 5 : 9;
            if ((unsigned)(e - buf) != want || mt_vint_size(v) != want ||
                back != v || q != e) {
                bad++;
                CHECK_FAIL_("vint %lld: len %d size %u want %u back %lld",
                            (long long)v, (int)(e - buf), mt_vint_size(v), want,
                            (long long)back);
            }
        }
    }
    CHECK_EQ(bad, 0);
}

static void test_canon(void)
{
    /* Values already in 63-bit form are unchanged. */
    CHECK_EQ(mt_canon(0), 0);
    CHECK_EQ(mt_canon(0x2ADBF7B8BCA4ULL), 0x2ADBF7B8BCA4ULL);
    CHECK_EQ(mt_canon(0x3FFFFFFFFFFFFFFFULL), 0x3FFFFFFFFFFFFFFFULL);
    CHECK_EQ(mt_canon(0xFFFFFFFFFFFFFFFFULL), 0xFFFFFFFFFFFFFFFFULL);
    CHECK_EQ(mt_canon(0xC000000000000000ULL), 0xC000000000000000ULL);
    /* Bit 63 differs from bit 62: bit 63 is replaced by bit 62. */
    CHECK_EQ(mt_canon(0x8000000000000000ULL), 0);
    CHECK_EQ(mt_canon(0x80002ADBF7B8BCA4ULL), 0x2ADBF7B8BCA4ULL);
    CHECK_EQ(mt_canon(0x4000000000000000ULL), 0xC000000000000000ULL);
    CHECK_EQ(mt_canon(0x7FFFFFFFFFFFFFFFULL), 0xFFFFFFFFFFFFFFFFULL);
    CHECK_EQ(mt_canon(0xBFFFFFFFFFFFFFFFULL), 0x3FFFFFFFFFFFFFFFULL);
    CHECK_EQ(mt_canon(0x4000000000000001ULL), 0xC000000000000001ULL);
    /* Idempotent. */
    CHECK_EQ(mt_canon(mt_canon(0x4123456789ABCDEFULL)), mt_canon(0x4123456789ABCDEFULL));
}

static void test_le(void)
{
    uint8_t buf[20];
    memset(buf, 0, sizeof buf);
    /* unaligned addresses on purpose */
    mt_st16(buf + 1, 0x1234);
    mt_st32(buf + 3, 0xC1FC1FC1u);
    mt_st64(buf + 7, 0x0005A3563F7C3AC4ULL);
    static const uint8_t want[] = {0x00, 0x34, 0x12, 0xc1, 0x1f, 0xfc, 0xc1,
                                   0xc4, 0x3a, 0x7c, 0x3f, 0x56, 0xa3, 0x05, 0x00,
                                   0x00};
    CHECK_MEM(buf, 16, want, 16);
    CHECK_EQ(mt_ld16(buf + 1), 0x1234);
    CHECK_EQ(mt_ld32(buf + 3), 0xC1FC1FC1u);
    CHECK_EQ(mt_ld64(buf + 7), 0x0005A3563F7C3AC4ULL);
    static const uint8_t hi[] = {0xff, 0xfe, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x80};
    CHECK_EQ(mt_ld16(hi), 0xfeff);
    CHECK_EQ(mt_ld32(hi + 1), 0x008001feu);
    CHECK_EQ(mt_ld64(hi + 1), 0x80000000008001feULL);
}

int main(void)
{
    test_vint_canonical();
    test_vint_decode_forms();
    test_vint_sweep();
    test_canon();
    test_le();
    return CHECK_DONE();
}
