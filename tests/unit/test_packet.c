/*
 * test_packet.c - packet headers (spec 2.2-2.4, trace/packet.h): the
 * trace_info packet of Appendix A.1 parsed byte for byte (and opened with the
 * public reader, giving the info record of spec 4); mt_header_write at the
 * field offsets of the layout table for v2 (66 bytes) and v3 (68 bytes,
 * domain at 38) and mt_header_parse back; mt_header_patch; and
 * mt_header_check's messages and their order (magic, version, signed size,
 * signed time order, signed id order); mt_event_time against spec 3.2's
 * words (time_begin's high bits plus the low 25, moved past a 2^25
 * boundary when they are below time_begin's low bits) at every boundary.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "codec/wire.h"
#include "memtrace/memtrace.h"
#include "trace/packet.h"

/* Appendix A.1: the 225-byte trace_info packet of test/ocamlopt.ctf. */
static size_t build_a1(uint8_t *p)
{
    static const uint8_t head[] = {
        0xc1, 0x1f, 0xfc, 0xc1, 0x08, 0x07, 0x00, 0x00,
        0xc4, 0x3a, 0x7c, 0x3f, 0x56, 0xa3, 0x05, 0x00,
        0xc4, 0x3a, 0x7c, 0x3f, 0x56, 0xa3, 0x05, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
        0x05, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0x42: event word, then sample_rate, word size */
        0xc4, 0x3a, 0x7c, 0x01,
        0xf1, 0x68, 0xe3, 0x88, 0xb5, 0xf8, 0xf4, 0x3e,
        0x40};
    size_t n = sizeof head;
    memcpy(p, head, n);
    static const char s1[] = "/home/stephen/jswork/memtrace/_build/default/trace_ocamlopt/main.exe";
    static const char s2[] = "tarski";
    static const char s3[] = "a=0,b=1,H=0,i=15,l=0,o=80,O=500,p=0,s=262144,t=0,v=0,w=1,W=0";
    memcpy(p + n, s1, sizeof s1);
    n += sizeof s1;
    memcpy(p + n, s2, sizeof s2);
    n += sizeof s2;
    memcpy(p + n, s3, sizeof s3);
    n += sizeof s3;
    static const uint8_t tail[] = {0x05, 0x43, 0, 0, 0, 0, 0, 0, 0x00};
    memcpy(p + n, tail, sizeof tail);
    n += sizeof tail;
    return n;
}

static void test_a1(void)
{
    uint8_t pkt[256];
    size_t n = build_a1(pkt);
    CHECK_EQ(n, 225);
    CHECK_EQ(pkt[0x4f - 1], 0x40);     /* layout sanity: offsets of A.1 */
    CHECK_EQ(memcmp(pkt + 0x94, "tarski", 7), 0);
    CHECK_EQ(pkt[0xd8], 0x05);

    mt_header h;
    memset(&h, 0x5a, sizeof h);
    mt_header_parse(&h, pkt, 2);
    CHECK_EQ(h.magic, 0xC1FC1FC1u);
    CHECK_EQ(h.size_bits, 1800);
    CHECK_EQ(h.size_bits / 8 - h.header_size, 159);
    CHECK_EQ(h.time_begin, 1586965711174340LL);
    CHECK_EQ(h.time_end, 1586965711174340LL);
    CHECK_EQ(h.version, 2);
    CHECK_EQ(h.pid, 17157);
    CHECK_EQ(h.domain, 0);
    CHECK_EQ(h.verify_ix, 0xFFFF);
    CHECK_EQ(h.verify_pred, 0);
    CHECK_EQ(h.verify_val, 0);
    CHECK_EQ(h.alloc_id_begin, 0);
    CHECK_EQ(h.alloc_id_end, 0);
    CHECK_EQ(h.header_size, 66);
    char buf[80];
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);
    CHECK(mt_header_check(&h, 3, buf, sizeof buf) == NULL);
    /* the same bytes through a v3-layout parse: version 2 has no domain */
    mt_header h3;
    mt_header_parse(&h3, pkt, 3);
    CHECK_EQ(h3.header_size, 66);
    CHECK_EQ(h3.verify_ix, 0xFFFF);
    CHECK_EQ(h3.domain, 0);

    /* event word: code 0, low 25 bits of time_begin */
    uint32_t word = mt_ld32(pkt + 0x42);
    CHECK_EQ(word >> 25, 0);
    CHECK_EQ(word & 0x1FFFFFF, h.time_begin & 0x1FFFFFF);

    /* The public reader gives the info record of spec 4. */
    mt_reader *r = mt_reader_create(NULL);
    CHECK(r != NULL);
    int st = mt_reader_open_memory(r, pkt, n);
    CHECK_EQ(st, MT_OK);
    const mt_trace_info *info = mt_reader_info(r);
    CHECK(info != NULL);
    if (info) {
        CHECK(info->sample_rate == 2e-05);
        CHECK_EQ(info->word_size, 64);
        CHECK_STR(info->executable_name,
                  "/home/stephen/jswork/memtrace/_build/default/trace_ocamlopt/main.exe");
        CHECK_STR(info->host_name, "tarski");
        CHECK_STR(info->runtime_params,
                  "a=0,b=1,H=0,i=15,l=0,o=80,O=500,p=0,s=262144,t=0,v=0,w=1,W=0");
        CHECK_EQ(info->pid, 17157);
        CHECK_EQ(info->start_time, 1586965711174340LL);
        CHECK(info->context == NULL);        /* "" means no context */
        CHECK_EQ(info->format_version, 2);
    }
    mt_event ev;
    CHECK_EQ(mt_reader_next(r, &ev), MT_EOF);
    mt_reader_close(r);

    /* One byte short: "trace info packet size" (spec 4). */
    r = mt_reader_create(NULL);
    st = mt_reader_open_memory(r, pkt, n - 1);
    CHECK(st != MT_OK);
    CHECK(strstr(mt_reader_error(r), "trace info packet size") != NULL);
    mt_reader_close(r);

    /* Not a trace at all, long or short: said so, not "cut short". */
    static const char text[] = "root:x:0:0:root:/root:/bin/bash\n";
    for (size_t len = 4; len <= sizeof text - 1; len += sizeof text - 5) {
        r = mt_reader_create(NULL);
        CHECK_EQ(mt_reader_open_memory(r, text, len), MT_ERR_FORMAT);
        CHECK_STR(mt_reader_error(r), "offset 0: not a memtrace trace (no magic number "
                  "0xc1fc1fc1 at its start)");
        mt_reader_close(r);
    }
}

static void fill(mt_header *h, unsigned version)
{
    memset(h, 0, sizeof *h);
    h->magic = MT_MAGIC;
    h->size_bits = 0x12345678;
    h->time_begin = 0x0102030405060708ULL;
    h->time_end = 0x1112131415161718ULL;
    h->version = (uint16_t)version;
    h->pid = 0x2122232425262728ULL;
    h->domain = version >= 3 ? 0x3132 : 0;
    h->verify_ix = 0x4142;
    h->verify_pred = 0x5152;
    h->verify_val = 0x6162636465666768ULL;
    h->alloc_id_begin = 0x7172737475767778ULL;
    h->alloc_id_end = 0x0182838485868788ULL;
}

static void test_write_parse(void)
{
    for (unsigned version = 1; version <= 3; version++) {
        mt_header h, back;
        fill(&h, version);
        uint8_t p[80];
        memset(p, 0xEE, sizeof p);
        size_t n = mt_header_write(p, &h);
        unsigned hs = version >= 3 ? 68 : 66;
        CHECK_EQ(n, hs);
        CHECK_EQ(p[hs], 0xEE);                       /* nothing beyond */
        static const uint8_t magic[] = {0xc1, 0x1f, 0xfc, 0xc1};
        CHECK_MEM(p, 4, magic, 4);
        CHECK_EQ(mt_ld32(p + 4), 0x12345678);
        CHECK_EQ(mt_ld64(p + 8), 0x0102030405060708ULL);
        CHECK_EQ(mt_ld64(p + 16), 0x1112131415161718ULL);
        CHECK_EQ(mt_ld32(p + 24), 0);                /* flush_duration */
        CHECK_EQ(mt_ld16(p + 28), version);
        CHECK_EQ(mt_ld64(p + 30), 0x2122232425262728ULL);
        unsigned o = 38;
        if (version >= 3) {
            CHECK_EQ(mt_ld16(p + 38), 0x3132);
            o = 40;
        }
        CHECK_EQ(mt_ld16(p + o), 0x4142);
        CHECK_EQ(mt_ld16(p + o + 2), 0x5152);
        CHECK_EQ(mt_ld64(p + o + 4), 0x6162636465666768ULL);
        CHECK_EQ(mt_ld64(p + o + 12), 0x7172737475767778ULL);
        CHECK_EQ(mt_ld64(p + o + 20), 0x0182838485868788ULL);
        CHECK_EQ(o + 28, hs);

        memset(&back, 0, sizeof back);
        mt_header_parse(&back, p, 3);
        CHECK_EQ(back.magic, h.magic);
        CHECK_EQ(back.size_bits, h.size_bits);
        CHECK_EQ(back.time_begin, h.time_begin);
        CHECK_EQ(back.time_end, h.time_end);
        CHECK_EQ(back.version, h.version);
        CHECK_EQ(back.pid, h.pid);
        CHECK_EQ(back.domain, h.domain);
        CHECK_EQ(back.verify_ix, h.verify_ix);
        CHECK_EQ(back.verify_pred, h.verify_pred);
        CHECK_EQ(back.verify_val, h.verify_val);
        CHECK_EQ(back.alloc_id_begin, h.alloc_id_begin);
        CHECK_EQ(back.alloc_id_end, h.alloc_id_end);
        CHECK_EQ(back.header_size, hs);
        CHECK_EQ(mt_header_size(version), hs);

        /* a v002 reader sees every packet with the 66-byte layout */
        mt_header_parse(&back, p, 2);
        CHECK_EQ(back.header_size, 66);
        CHECK_EQ(back.domain, 0);

        /* patch: size in bits, times, ids at the end of the header */
        mt_header_patch(p, 1000, 11, 22, 33, 44, hs);
        CHECK_EQ(mt_ld32(p + 4), 8000);
        CHECK_EQ(mt_ld64(p + 8), 11);
        CHECK_EQ(mt_ld64(p + 16), 22);
        CHECK_EQ(mt_ld64(p + o + 12), 33);
        CHECK_EQ(mt_ld64(p + o + 20), 44);
        CHECK_EQ(mt_ld16(p + o), 0x4142);            /* verifier untouched */
        CHECK_EQ(mt_ld64(p + o + 4), 0x6162636465666768ULL);
        CHECK_EQ(mt_ld16(p + 28), version);
    }
}

static void good(mt_header *h)
{
    memset(h, 0, sizeof *h);
    h->magic = MT_MAGIC;
    h->size_bits = 66 * 8;
    h->time_begin = 100;
    h->time_end = 200;
    h->version = 2;
    h->alloc_id_begin = 5;
    h->alloc_id_end = 9;
    h->header_size = 66;
}

static void test_check(void)
{
    char buf[80];
    mt_header h;
    good(&h);
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);

    /* Everything wrong: magic is reported first. */
    h.magic = 0xC1FC1FC0u;
    h.version = 3;
    h.size_bits = 0x80000000u;
    h.time_begin = 300;
    h.alloc_id_begin = 10;
    const char *m = mt_header_check(&h, 2, buf, sizeof buf);
    CHECK(strncmp(m, "Not a CTF packet (", 18) == 0);
    h.magic = MT_MAGIC;
    m = mt_header_check(&h, 2, buf, sizeof buf);
    CHECK_STR(m, "trace format v003, but expected v002");
    h.version = 2;
    m = mt_header_check(&h, 2, buf, sizeof buf);
    CHECK(strncmp(m, "Bad packet size (", 17) == 0);
    h.size_bits = 0x7FFFFFFFu;                 /* non-negative as int32 */
    m = mt_header_check(&h, 2, buf, sizeof buf);
    CHECK(strncmp(m, "Monotone packet timestamps (", 28) == 0);
    h.time_begin = 200;                        /* equal is fine */
    m = mt_header_check(&h, 2, buf, sizeof buf);
    CHECK(strncmp(m, "Monotone alloc IDs (", 20) == 0);
    h.alloc_id_begin = 9;                      /* equal is fine */
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);

    /* version rules (spec 2.3) */
    good(&h);
    h.version = 0;
    CHECK_STR(mt_header_check(&h, 2, buf, sizeof buf), "trace format v000, but expected v002");
    CHECK(mt_header_check(&h, 3, buf, sizeof buf) == NULL);
    h.version = 1;
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);
    CHECK(mt_header_check(&h, 3, buf, sizeof buf) == NULL);
    h.version = 3;
    CHECK(mt_header_check(&h, 3, buf, sizeof buf) == NULL);
    h.version = 4;
    CHECK_STR(mt_header_check(&h, 3, buf, sizeof buf), "trace format v004, but expected v003");
    h.version = 1234;
    CHECK_STR(mt_header_check(&h, 2, buf, sizeof buf), "trace format v1234, but expected v002");

    /* comparisons are signed 64-bit */
    good(&h);
    h.time_begin = UINT64_MAX;   /* -1 <= 200 */
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);
    h.time_begin = 0;
    h.time_end = UINT64_MAX;     /* 0 > -1 */
    CHECK(strncmp(mt_header_check(&h, 2, buf, sizeof buf), "Monotone packet timestamps (", 28) == 0);
    good(&h);
    h.alloc_id_begin = 0x8000000000000000ULL;  /* INT64_MIN <= 9 */
    CHECK(mt_header_check(&h, 2, buf, sizeof buf) == NULL);
    h.alloc_id_begin = 0;
    h.alloc_id_end = 0x8000000000000000ULL;
    CHECK(strncmp(mt_header_check(&h, 2, buf, sizeof buf), "Monotone alloc IDs (", 20) == 0);
    good(&h);
    h.size_bits = 0xFFFFFFFFu;   /* -1 as int32 */
    CHECK(strncmp(mt_header_check(&h, 2, buf, sizeof buf), "Bad packet size (", 17) == 0);
}

/* Spec 3.2 as it reads, for comparison. */
static uint64_t spec_event_time(uint64_t tb, uint32_t word)
{
    uint64_t low = word & MT_TIME_MASK, t = (tb & ~(uint64_t)MT_TIME_MASK) + low;
    return low < (tb & MT_TIME_MASK) ? t + ((uint64_t)1 << MT_TIME_BITS) : t;
}

static void test_event_time(void)
{
    static const uint64_t tbs[] = {0, 1, MT_TIME_MASK - 1, MT_TIME_MASK, MT_TIME_MASK + 1,
                                   1733486400000000ull, 1733486400000000ull | MT_TIME_MASK,
                                   UINT64_MAX - MT_TIME_MASK, UINT64_MAX};
    static const uint32_t lows[] = {0, 1, 2, 12345, MT_TIME_MASK / 2, MT_TIME_MASK - 1,
                                    MT_TIME_MASK};
    for (size_t i = 0; i < sizeof tbs / sizeof *tbs; i++) {
        uint32_t tl = (uint32_t)(tbs[i] & MT_TIME_MASK);
        for (size_t j = 0; j < sizeof lows / sizeof *lows; j++)
            for (uint32_t code = 0; code < 128; code += 127)
                for (int d = -1; d <= 1; d++) {
                    /* each low value, and time_begin's own low bits and
                     * their neighbours (the wrap's edge) */
                    uint32_t low = (j ? lows[j] : tl + (uint32_t)d) & MT_TIME_MASK;
                    uint32_t word = code << 25 | low;
                    CHECK(mt_event_time(tbs[i], word) == spec_event_time(tbs[i], word));
                }
    }
    /* an event at time_begin itself, and one 2^25 - 1 later */
    CHECK(mt_event_time(1733486400000000ull, (uint32_t)(1733486400000000ull & MT_TIME_MASK)) ==
          1733486400000000ull);
    CHECK(mt_event_time(1733486400000000ull,
                        (uint32_t)((1733486400000000ull - 1) & MT_TIME_MASK)) ==
          1733486400000000ull + MT_TIME_MASK);
}

int main(void)
{
    test_event_time();
    test_a1();
    test_write_parse();
    test_check();
    return CHECK_DONE();
}
