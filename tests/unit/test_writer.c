/*
 * test_writer.c - writer behaviour of spec 4 and 8 through the public API,
 * checked by walking the packet headers of the output (memory sink, pipe):
 * the trace_info packet (dummy verifier, ids 0/0, times = start, exact body
 * bytes; v2 and v3 layouts) and the empty final events packet; the flush
 * triggers of spec 8.4 at their exact thresholds (more than 128 pending
 * locations, fewer than 4196 bytes left in the events buffer, more than
 * 30 000 000 us since the packet start, v3 id chunks of 10 000); location
 * packets before their events packet, stamped with the packet start time;
 * the verifier index sequence 4242, 9655, 15068 on later events packets;
 * promote/collect deltas (A.4: promote of id 0 with next_id 11 -> 0a) and
 * rejection of ids >= next_id; the short/long alloc form choice of spec 7.2
 * and the A.4 byte sequences; a sink failing with ENOSPC (MT_ERR_IO, sticky,
 * with a message, nothing more written); a file that stops growing (the
 * error names the offset, the file is cut back to its last whole packet
 * and reads back); and fork detection (the child's
 * flush returns MT_ERR_PID_CHANGED and writes nothing into the shared pipe);
 * an allocation with an empty (NULL, 0) callstack; random callstacks written
 * and read back with their common prefixes. Sections can be run on
 * their own: unit_test_writer <section>... (ctest runs one per test).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "memtrace/memtrace.h"
#include "tbuild.h"

#define T0 1600000000000000LL
#define PID 31337

static mt_location loc_one = {"w.ml", "f", 1, 2, 3};

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    (void)code;
    *locs = &loc_one;
    *n = 1;
    return 0;
}

static mt_trace_info make_info(const char *ctx)
{
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = 2e-05;
    info.word_size = 64;
    info.executable_name = "/bin/prog";
    info.host_name = "host";
    info.runtime_params = "a=0";
    info.pid = PID;
    info.start_time = T0;
    info.context = ctx;
    return info;
}

static mt_writer *open_w(msink *s, int version, int domain, const char *ctx)
{
    memset(s, 0, sizeof *s);
    s->fail_after = -1;
    mt_trace_info info = make_info(ctx);
    mt_writer_options opt = {0};
    opt.format_version = version;
    opt.domain = domain;
    mt_writer *w = NULL;
    char err[200] = "";
    int st = mt_writer_open_sink(&w, msink_fn, s, &info, &opt, err, sizeof err);
    CHECK_EQ(st, MT_OK);
    if (st)
        fprintf(stderr, "open: %s\n", err);
    return w;
}

static uint32_t word_of(unsigned code, int64_t t)
{
    return (uint32_t)code << 25 | ((uint32_t)t & 0x1FFFFFF);
}

static int alloc_empty(mt_writer *w, int64_t t)
{
    return mt_writer_alloc(w, t, 1, 1, MT_SOURCE_MINOR, NULL, 0, NULL, NULL, NULL);
}

/* Read the whole output back; returns the number of allocs, -1 on error. */
static int read_back(const msink *s)
{
    mt_reader *r = mt_reader_create(NULL);
    int n = 0, st = mt_reader_open_memory(r, s->p, s->len);
    mt_event ev;
    if (st == MT_OK)
        while ((st = mt_reader_next(r, &ev)) == MT_OK)
            n += ev.kind == MT_EVENT_ALLOC;
    if (st != MT_EOF) {
        fprintf(stderr, "read back: %s (%s)\n", mt_status_name(st), mt_reader_error(r));
        n = -1;
    }
    mt_reader_close(r);
    return n;
}

static pkt_t pk[64];

static void test_first_packet(void)
{
    for (int version = 2; version <= 3; version++) {
        msink s;
        mt_writer *w = open_w(&s, version, version == 3 ? 7 : 0,
                              version == 3 ? "ctx" : NULL);
        if (!w)
            return;
        unsigned hs = version == 3 ? 68 : 66;
        /* written at once, alone */
        int np = walk_packets(s.p, s.len, pk, 64);
        CHECK_EQ(np, 1);
        CHECK_EQ(s.calls, 1);
        const char *ctx = version == 3 ? "ctx" : "";
        size_t content = 4 + 8 + 1 + 10 + 5 + 4 + 8 + strlen(ctx) + 1;
        CHECK_EQ(pk[0].size, hs + content);
        CHECK_EQ(s.len, hs + content);
        CHECK_EQ(pk[0].hsize, hs);
        CHECK_EQ(pk[0].version, version);
        CHECK_EQ(pk[0].domain, version == 3 ? 7 : 0);
        CHECK_EQ(pk[0].tb, T0);
        CHECK_EQ(pk[0].te, T0);
        CHECK_EQ(pk[0].pid, PID);
        CHECK_EQ(pk[0].vix, 0xFFFF);
        CHECK_EQ(pk[0].vpred, 0);
        CHECK_EQ(pk[0].vval, 0);
        CHECK_EQ(pk[0].id_begin, 0);
        CHECK_EQ(pk[0].id_end, 0);
        CHECK_EQ(tb_ld(s.p + 24, 4), 0);             /* flush_duration */
        const uint8_t *e = s.p + hs;
        CHECK_EQ(tb_ld(e, 4), word_of(0, T0));
        CHECK_EQ(tb_ld(e + 4, 8), 0x3EF4F8B588E368F1ULL);   /* 2e-05, A.1 */
        CHECK_EQ(e[12], 64);
        static const char strs[] = "/bin/prog\0host\0a=0";
        CHECK_MEM(e + 13, sizeof strs, strs, sizeof strs);
        CHECK_EQ(tb_ld(e + 13 + sizeof strs, 8), PID);
        CHECK_MEM(e + 21 + sizeof strs, strlen(ctx) + 1, ctx, strlen(ctx) + 1);

        /* closing at once: one empty events packet with the dummy verifier */
        CHECK_EQ(mt_writer_close(w), MT_OK);
        np = walk_packets(s.p, s.len, pk, 64);
        CHECK_EQ(np, 2);
        CHECK_EQ(pk[1].size, hs);
        CHECK_EQ(pk[1].first_code, -1);
        CHECK_EQ(pk[1].vix, 0xFFFF);
        CHECK_EQ(pk[1].tb, T0);
        CHECK_EQ(pk[1].te, T0);
        CHECK_EQ(pk[1].id_begin, 0);
        CHECK_EQ(pk[1].id_end, 0);
        CHECK_EQ(pk[1].domain, version == 3 ? 7 : 0);
        CHECK_EQ(read_back(&s), 0);
        free(s.p);
    }
}

static void test_pending_trigger(void)
{
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    for (int i = 0; i < 129; i++) {
        uint64_t code = 0x1000 + (uint64_t)i;
        CHECK_EQ(mt_writer_alloc(w, T0 + i, 1, 1, MT_SOURCE_MINOR, &code, 1,
                                 locate, NULL, NULL), MT_OK);
    }
    CHECK_EQ(walk_packets(s.p, s.len, pk, 64), 1);    /* 129 pending: no flush yet */
    uint64_t code = 0x2000;
    CHECK_EQ(mt_writer_alloc(w, T0 + 200, 1, 1, MT_SOURCE_MINOR, &code, 1,
                             locate, NULL, NULL), MT_OK);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 3);
    if (np == 3) {
        /* location packet first: 129 location events */
        CHECK_EQ(pk[1].first_code, 1);
        CHECK_EQ(pk[1].size, 66 + (4 + 9 + 6 + 5 + 2) + 128 * (4 + 9 + 6));
        CHECK_EQ(pk[1].vix, 0xFFFF);
        CHECK_EQ(pk[1].tb, T0);
        CHECK_EQ(pk[1].te, T0);
        CHECK_EQ(pk[1].id_begin, 0);
        CHECK_EQ(pk[1].id_end, 0);
        /* every location event stamped with packet_time_start */
        const uint8_t *e = s.p + pk[1].off + 66;
        CHECK_EQ(tb_ld(e, 4), word_of(1, T0));
        CHECK_EQ(tb_ld(e + 4, 8), 0x1000);
        CHECK_EQ(tb_ld(e + 26, 4), word_of(1, T0));
        CHECK_EQ(tb_ld(e + 30, 8), 0x1001);
        CHECK_EQ(tb_ld(e + 26 + 127 * 19, 4), word_of(1, T0));
        CHECK_EQ(tb_ld(e + 26 + 127 * 19 + 4, 8), 0x1000 + 128);
        /* then the events packet with the 129 allocs */
        CHECK_EQ(pk[2].first_code, 101);
        CHECK_EQ(pk[2].size, 66 + 129 * 16);
        CHECK_EQ(pk[2].vix, 0xFFFF);                  /* first events packet */
        CHECK_EQ(pk[2].tb, T0);
        CHECK_EQ(pk[2].te, T0 + 128);
        CHECK_EQ(pk[2].id_begin, 0);
        CHECK_EQ(pk[2].id_end, 129);
    }
    CHECK_EQ(mt_writer_close(w), MT_OK);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 5);
    if (np == 5) {
        CHECK_EQ(pk[3].first_code, 1);
        CHECK_EQ(pk[3].size, 66 + 4 + 9 + 6);         /* file and def are hits */
        CHECK_EQ(pk[3].tb, T0 + 200);                 /* the flush's now */
        CHECK_EQ(pk[3].te, T0 + 200);
        CHECK_EQ(pk[3].id_begin, 129);
        CHECK_EQ(pk[3].id_end, 129);
        CHECK_EQ(pk[3].vix, 0xFFFF);
        CHECK_EQ(pk[4].first_code, 101);
        CHECK_EQ(pk[4].vix, 4242);                    /* second events packet */
        CHECK_EQ(pk[4].id_begin, 129);
        CHECK_EQ(pk[4].id_end, 130);
        CHECK_EQ(pk[4].tb, T0 + 200);
        CHECK_EQ(pk[4].te, T0 + 200);
        CHECK_EQ(tb_ld(s.p + pk[4].off + 66, 4), word_of(101, T0 + 200));
    }
    CHECK_EQ(read_back(&s), 130);
    free(s.p);
}

static void test_buffer_trigger(void)
{
    for (int version = 2; version <= 3; version++) {
        msink s;
        mt_writer *w = open_w(&s, version, 0, NULL);
        if (!w)
            return;
        /* 6-byte events (short alloc, empty backtrace): with h header bytes
         * the flush comes when 32768 - (h + 6k) < 4196 */
        unsigned hs = version == 3 ? 68 : 66;
        int k = version == 3 ? 4751 : 4752;
        for (int i = 0; i < k; i++)
            alloc_empty(w, T0 + 1);
        CHECK_EQ(walk_packets(s.p, s.len, pk, 64), 1);
        alloc_empty(w, T0 + 2);
        int np = walk_packets(s.p, s.len, pk, 64);
        CHECK_EQ(np, 2);
        CHECK_EQ(pk[1].size, hs + 6 * k);
        CHECK_EQ(pk[1].id_end, k);
        CHECK_EQ(pk[1].te, T0 + 1);
        CHECK_EQ(32768 - pk[1].size < 4196 + 6, 1);
        CHECK_EQ(mt_writer_close(w), MT_OK);
        np = walk_packets(s.p, s.len, pk, 64);
        CHECK_EQ(np, 3);
        CHECK_EQ(pk[2].size, hs + 6);
        CHECK_EQ(pk[2].id_begin, k);
        CHECK_EQ(pk[2].tb, T0 + 2);
        CHECK_EQ(read_back(&s), k + 1);
        free(s.p);
    }
}

static void test_time_trigger(void)
{
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    CHECK_EQ(alloc_empty(w, T0 + 5), MT_OK);
    CHECK_EQ(mt_writer_promote(w, T0 + 30000000, 0), MT_OK);   /* not > 30e6 */
    CHECK_EQ(walk_packets(s.p, s.len, pk, 64), 1);
    CHECK_EQ(alloc_empty(w, T0 + 30000001), MT_OK);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 2);
    CHECK_EQ(pk[1].tb, T0);
    CHECK_EQ(pk[1].te, T0 + 30000000);
    CHECK_EQ(pk[1].size, 66 + 6 + 5);
    CHECK_EQ(pk[1].id_end, 1);
    /* the new packet starts at the flush time; 30e6 more fit again */
    CHECK_EQ(alloc_empty(w, T0 + 60000001), MT_OK);
    CHECK_EQ(walk_packets(s.p, s.len, pk, 64), 2);
    CHECK_EQ(alloc_empty(w, T0 + 60000002), MT_OK);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 3);
    CHECK_EQ(pk[2].tb, T0 + 30000001);
    CHECK_EQ(pk[2].te, T0 + 60000001);
    CHECK_EQ(pk[2].id_begin, 1);
    CHECK_EQ(pk[2].id_end, 3);
    CHECK_EQ(pk[2].vix, 4242);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 4);
    CHECK_EQ(pk[3].vix, 9655);
    CHECK_EQ(pk[3].tb, T0 + 60000002);
    CHECK_EQ(read_back(&s), 4);
    free(s.p);

    /* the first packet starts at start_time: a first event 30e6+1 later
     * flushes an empty events packet first */
    w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    CHECK_EQ(alloc_empty(w, T0 + 30000001), MT_OK);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 2);
    CHECK_EQ(pk[1].size, 66);
    CHECK_EQ(pk[1].tb, T0);
    CHECK_EQ(pk[1].te, T0);
    mt_writer_close(w);
    free(s.p);
}

static void test_v3_chunks(void)
{
    msink s;
    mt_writer *w = open_w(&s, 3, 5, NULL);
    if (!w)
        return;
    for (int i = 0; i < 10000; i++)
        alloc_empty(w, T0 + 1);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 3);            /* two buffer flushes so far */
    int64_t id = -1;
    CHECK_EQ(mt_writer_alloc(w, T0 + 2, 1, 1, MT_SOURCE_MINOR, NULL, 0, NULL, NULL, &id), MT_OK);
    CHECK_EQ(id, 10000);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 4);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 5);
    static const uint64_t ids[5][2] = {{0, 0}, {0, 4751}, {4751, 9502},
                                       {9502, 10000}, {10000, 10001}};
    static const unsigned vix[5] = {0xFFFF, 0xFFFF, 4242, 9655, 15068};
    for (int i = 0; i < np && i < 5; i++) {
        CHECK_EQ(pk[i].version, 3);
        CHECK_EQ(pk[i].hsize, 68);
        CHECK_EQ(pk[i].domain, 5);
        CHECK_EQ(pk[i].id_begin, ids[i][0]);
        CHECK_EQ(pk[i].id_end, ids[i][1]);
        CHECK_EQ(pk[i].vix, vix[i]);
    }
    CHECK_EQ(pk[3].size, 68 + 6 * 498);
    CHECK_EQ(read_back(&s), 10001);
    free(s.p);
}

static void test_promote_collect(void)
{
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    for (int i = 0; i < 11; i++)
        alloc_empty(w, T0 + 1);
    CHECK_EQ(mt_writer_next_id(w), 11);
    CHECK_EQ(mt_writer_promote(w, T0 + 2, 0), MT_OK);
    CHECK_EQ(mt_writer_collect(w, T0 + 3, 1), MT_OK);
    CHECK_EQ(mt_writer_promote(w, T0 + 4, 10), MT_OK);
    CHECK_EQ(mt_writer_promote(w, T0 + 4, 11), MT_ERR_ARG);   /* id >= next_id */
    CHECK_EQ(mt_writer_collect(w, T0 + 4, 12), MT_ERR_ARG);
    /* a delta out of the 63-bit range (and INT64_MIN: no overflow) */
    CHECK_EQ(mt_writer_collect(w, T0 + 4, 11 - ((int64_t)1 << 62) - 1), MT_ERR_ARG);
    CHECK_EQ(mt_writer_collect(w, T0 + 4, INT64_MIN), MT_ERR_ARG);
    /* lengths and sample counts out of it would be read back as others */
    CHECK_EQ(mt_writer_alloc(w, T0 + 4, (int64_t)1 << 62, 1, MT_SOURCE_MAJOR, NULL, 0,
                             NULL, NULL, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_writer_alloc(w, T0 + 4, 1, -((int64_t)1 << 62) - 1, MT_SOURCE_MAJOR,
                             NULL, 0, NULL, NULL, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_writer_next_id(w), 11);
    CHECK(mt_writer_error(w)[0] != '\0');
    CHECK_EQ(mt_writer_collect(w, T0 + 5, 10), MT_OK);        /* not sticky */
    for (int i = 0; i < 289; i++)
        alloc_empty(w, T0 + 6);
    CHECK_EQ(mt_writer_collect(w, T0 + 7, 0), MT_OK);          /* delta 299 */
    CHECK_EQ(mt_writer_close(w), MT_OK);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 2);
    const uint8_t *e = s.p + pk[1].off + 66 + 11 * 6;
    uint8_t want[32];
    size_t n = 0;
    uint32_t wd;
    wd = word_of(3, T0 + 2); memcpy(want + n, &wd, 4); n += 4; want[n++] = 0x0a;
    wd = word_of(4, T0 + 3); memcpy(want + n, &wd, 4); n += 4; want[n++] = 0x09;
    wd = word_of(3, T0 + 4); memcpy(want + n, &wd, 4); n += 4; want[n++] = 0x00;
    wd = word_of(4, T0 + 5); memcpy(want + n, &wd, 4); n += 4; want[n++] = 0x00;
    CHECK_MEM(e, n, want, n);
    e += n + 289 * 6;
    static const uint8_t tail[] = {0xfd, 0x2b, 0x01};
    CHECK_EQ(tb_ld(e, 4), word_of(4, T0 + 7));
    CHECK_MEM(e + 4, 3, tail, 3);
    CHECK_EQ(pk[1].size, 66 + 300 * 6 + 4 * 5 + 7);

    /* read back: resolved ids */
    mt_reader *r = mt_reader_create(NULL);
    CHECK_EQ(mt_reader_open_memory(r, s.p, s.len), MT_OK);
    mt_event ev;
    int k = 0;
    static const int64_t want_ids[5] = {0, 1, 10, 10, 0};
    static const int want_kind[5] = {MT_EVENT_PROMOTE, MT_EVENT_COLLECT,
                                     MT_EVENT_PROMOTE, MT_EVENT_COLLECT,
                                     MT_EVENT_COLLECT};
    while (mt_reader_next(r, &ev) == MT_OK) {
        if (ev.kind == MT_EVENT_ALLOC)
            continue;
        if (k < 5) {
            CHECK_EQ(ev.kind, want_kind[k]);
            CHECK_EQ(ev.id, want_ids[k]);
        }
        k++;
    }
    CHECK_EQ(k, 5);
    mt_reader_close(r);
    free(s.p);
}

typedef struct {
    int64_t length, nsamples;
    mt_source source;
    int frames;
    int code;          /* expected event code */
} form_case;

static void test_forms(void)
{
    static const form_case cases[] = {
        {1, 1, MT_SOURCE_MINOR, 0, 101},
        {16, 1, MT_SOURCE_MINOR, 3, 116},
        {17, 1, MT_SOURCE_MINOR, 0, 2},
        {0, 1, MT_SOURCE_MINOR, 0, 2},
        {-1, 1, MT_SOURCE_MINOR, 0, 2},
        {3, 2, MT_SOURCE_MINOR, 0, 2},
        {3, 1, MT_SOURCE_MAJOR, 0, 2},
        {3, 1, MT_SOURCE_EXTERNAL, 0, 2},
        {5, 1, MT_SOURCE_MINOR, 255, 105},
        {5, 1, MT_SOURCE_MINOR, 256, 2},
    };
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    static uint64_t cs[300];
    uint64_t next_code = 0x100000;
    size_t prev_pk = 0;        /* index of the last events packet */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const form_case *fc = &cases[c];
        for (int i = 0; i < fc->frames; i++)
            cs[i] = next_code++;
        CHECK_EQ(mt_writer_alloc(w, T0 + 10 + (int64_t)c, fc->length, fc->nsamples,
                                 fc->source, cs, (size_t)fc->frames, locate, NULL,
                                 NULL), MT_OK);
        CHECK_EQ(mt_writer_flush(w), MT_OK);
        int np = walk_packets(s.p, s.len, pk, 64);
        CHECK(np >= 2);
        const pkt_t *k = &pk[np - 1];
        CHECK_EQ(k->id_end - k->id_begin, 1);
        const uint8_t *e = s.p + k->off + k->hsize;
        if (k->first_code != fc->code)
            CHECK_FAIL_("case %zu (length %lld nsamples %lld source %d frames %d):"
                        " code %d, expected %d", c, (long long)fc->length,
                        (long long)fc->nsamples, fc->source, fc->frames,
                        k->first_code, fc->code);
        else
            check_passed++;
        /* location packets (if any) come between the previous events packet
         * and this one */
        for (int i = (int)prev_pk + 1; i < np - 1; i++)
            CHECK_EQ(pk[i].first_code, 1);
        CHECK_EQ(np - 1 - ((int)prev_pk + 1), fc->frames ? 1 : 0);
        prev_pk = (size_t)np - 1;
        if (c == 2) {          /* long form, length 17 */
            static const uint8_t b[] = {0x11, 0x01, 0x00, 0x00, 0x00, 0x00};
            CHECK_MEM(e + 4, 6, b, 6);
        } else if (c == 4) {   /* length -1 */
            static const uint8_t b[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x00};
            CHECK_MEM(e + 4, 10, b, 10);
        } else if (c == 5) {   /* nsamples 2 */
            static const uint8_t b[] = {0x03, 0x02, 0x00, 0x00, 0x00, 0x00};
            CHECK_MEM(e + 4, 6, b, 6);
        } else if (c == 7) {   /* external */
            static const uint8_t b[] = {0x03, 0x01, 0x02, 0x00, 0x00, 0x00};
            CHECK_MEM(e + 4, 6, b, 6);
        } else if (c == 8) {   /* short, 255 new frames: u8 count 255 */
            CHECK_EQ(e[4], 0);
            CHECK_EQ(e[5], 255);
        } else if (c == 9) {   /* long, u16 count 256 */
            static const uint8_t b[] = {0x05, 0x01, 0x00, 0x00, 0x00, 0x01};
            CHECK_MEM(e + 4, 6, b, 6);
        } else if (c == 0) {   /* A.4: empty callstack -> 00 00 */
            CHECK_EQ(e[4], 0);
            CHECK_EQ(e[5], 0);
            CHECK_EQ(k->size, k->hsize + 6);
        }
    }
    CHECK_EQ(mt_writer_close(w), MT_OK);
    CHECK_EQ(read_back(&s), 10);
    free(s.p);

    /* A.4: 700 frames, then the same with innermost 303: common prefix 699
     * (vint fd bb 02) in the short form even though the callstack is long */
    w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    static uint64_t big[700];
    big[0] = 300;
    for (int i = 1; i < 699; i++)
        big[i] = 301;
    big[699] = 302;
    CHECK_EQ(mt_writer_alloc(w, T0 + 1, 3, 1, MT_SOURCE_MINOR, big, 700, locate, NULL, NULL), MT_OK);
    big[0] = 303;
    CHECK_EQ(mt_writer_alloc(w, T0 + 2, 3, 1, MT_SOURCE_MINOR, big, 700, locate, NULL, NULL), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 3);
    if (np == 3) {
        CHECK_EQ(pk[1].first_code, 1);
        const uint8_t *e = s.p + pk[2].off + 66;
        static const uint8_t ev1[] = {
            0x03, 0x01, 0x00, 0x00, 0x06, 0x00,
            0x17, 0x57, 0x2e, 0x01, 0, 0, 0, 0, 0, 0,
            0x1b, 0x55, 0x2d, 0x01, 0, 0, 0, 0, 0, 0,
            0x1a, 0x55, 0xff, 0x1a, 0x55, 0xff, 0x1a, 0x55, 0xb8,
            0x1f, 0x53, 0x2c, 0x01, 0, 0, 0, 0, 0, 0};
        CHECK_EQ(tb_ld(e, 4), word_of(2, T0 + 1));
        CHECK_MEM(e + 4, sizeof ev1, ev1, sizeof ev1);
        e += 4 + sizeof ev1;
        static const uint8_t ev2[] = {0xfd, 0xbb, 0x02, 0x01,
                                      0x13, 0x59, 0x2f, 0x01, 0, 0, 0, 0, 0, 0};
        CHECK_EQ(tb_ld(e, 4), word_of(103, T0 + 2));
        CHECK_MEM(e + 4, sizeof ev2, ev2, sizeof ev2);
        CHECK_EQ(pk[2].size, 66 + 4 + sizeof ev1 + 4 + sizeof ev2);
    }
    CHECK_EQ(read_back(&s), 2);
    free(s.p);
}

static void test_enospc(void)
{
    /* the info packet itself fails */
    msink s;
    memset(&s, 0, sizeof s);
    s.fail_after = 0;
    s.err = ENOSPC;
    mt_trace_info info = make_info(NULL);
    mt_writer *w = (mt_writer *)&s;
    char err[200] = "";
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s, &info, NULL, err, sizeof err), MT_ERR_IO);
    CHECK(w == NULL);
    CHECK(strstr(err, strerror(ENOSPC)) != NULL);

    /* fails at the first flush, inside a location packet */
    memset(&s, 0, sizeof s);
    s.fail_after = 1;
    s.err = ENOSPC;
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s, &info, NULL, err, sizeof err), MT_OK);
    if (!w)
        return;
    uint64_t code = 0x4444;
    CHECK_EQ(mt_writer_alloc(w, T0 + 1, 1, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, NULL), MT_OK);
    CHECK_EQ(s.calls, 1);
    CHECK_EQ(mt_writer_flush(w), MT_ERR_IO);
    CHECK_EQ(s.calls, 2);                 /* the events packet was not tried */
    CHECK(strstr(mt_writer_error(w), strerror(ENOSPC)) != NULL);
    CHECK_EQ(mt_writer_alloc(w, T0 + 2, 1, 1, MT_SOURCE_MINOR, NULL, 0, NULL, NULL, NULL), MT_ERR_IO);
    CHECK_EQ(mt_writer_promote(w, T0 + 2, 0), MT_ERR_IO);
    CHECK_EQ(mt_writer_collect(w, T0 + 2, 0), MT_ERR_IO);
    CHECK_EQ(mt_writer_flush(w), MT_ERR_IO);
    CHECK_EQ(mt_writer_finish(w), MT_ERR_IO);
    CHECK_EQ(s.calls, 2);                 /* nothing more attempted */
    CHECK_EQ(walk_packets(s.p, s.len, pk, 64), 1);   /* just the info packet */
    CHECK(strstr(mt_writer_error(w), strerror(ENOSPC)) != NULL);
    CHECK_EQ(mt_writer_close(w), MT_ERR_IO);
    free(s.p);

    /* fails on the buffer-full flush triggered inside an alloc */
    memset(&s, 0, sizeof s);
    s.fail_after = 1;
    s.err = ENOSPC;
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s, &info, NULL, err, sizeof err), MT_OK);
    if (!w)
        return;
    int st = MT_OK, i;
    for (i = 0; i < 5000 && st == MT_OK; i++)
        st = alloc_empty(w, T0 + 1);
    CHECK_EQ(st, MT_ERR_IO);
    CHECK_EQ(i, 4753);
    CHECK_EQ(mt_writer_next_id(w), 4752);     /* the failing alloc got no id */
    CHECK_EQ(alloc_empty(w, T0 + 1), MT_ERR_IO);
    CHECK_EQ(mt_writer_close(w), MT_ERR_IO);
    CHECK_EQ(s.calls, 2);
    free(s.p);
}

/* A file that stops growing (RLIMIT_FSIZE with SIGXFSZ ignored: write()
 * writes what fits, then fails with EFBIG): the writer reports MT_ERR_IO
 * naming the offset of the packet it could not write, cuts the file back
 * to there, and the file reads back as a valid trace of every packet
 * written before. prefix: bytes of the caller's already in the file,
 * which the descriptor appends to (O_APPEND, opened at offset 0: the
 * writer once took 0 for the trace's start, and cut the caller's bytes
 * away). */
static void test_file_limit(size_t prefix)
{
    char path[] = "/tmp/mt_test_fsizeXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        CHECK_FAIL_("mkstemp: %s", strerror(errno));
        return;
    }
    unlink(path);
    char mine[2000];
    memset(mine, 'u', sizeof mine);
    if (prefix) {
        CHECK(prefix <= sizeof mine);
        CHECK_EQ(write(fd, mine, prefix), (ssize_t)prefix);
        CHECK_EQ(lseek(fd, 0, SEEK_SET), 0);
        CHECK_EQ(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_APPEND), 0);
    }
    struct rlimit old, lim;
    struct sigaction ign, old_sa;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    CHECK_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 100000;                  /* three whole packets and a bit */
    CHECK_EQ(sigaction(SIGXFSZ, &ign, &old_sa), 0);
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);

    mt_trace_info info = make_info(NULL);
    mt_writer *w = NULL;
    char err[200] = "";
    CHECK_EQ(mt_writer_open_fd(&w, fd, &info, NULL, err, sizeof err), MT_OK);
    int st = MT_OK, i;
    for (i = 0; i < 100000 && st == MT_OK; i++)
        st = alloc_empty(w, T0 + 1);
    CHECK_EQ(st, MT_ERR_IO);
    char msg[300];
    snprintf(msg, sizeof msg, "%s", w ? mt_writer_error(w) : "");
    CHECK(strstr(msg, strerror(EFBIG)) != NULL);
    CHECK_EQ(alloc_empty(w, T0 + 1), MT_ERR_IO);            /* sticky */
    CHECK_EQ(mt_writer_close(w), MT_ERR_IO);
    CHECK_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
    CHECK_EQ(sigaction(SIGXFSZ, &old_sa, NULL), 0);

    struct stat sb;
    CHECK_EQ(fstat(fd, &sb), 0);
    size_t size = (size_t)sb.st_size;
    char want[64];
    snprintf(want, sizeof want, "write failed at offset %zu: ", size);
    CHECK(strstr(msg, want) != NULL);
    CHECK(size > 60000 && size < 100000);
    char head[sizeof mine];
    CHECK_EQ(pread(fd, head, prefix, 0), (ssize_t)prefix);
    CHECK(memcmp(head, mine, prefix) == 0);         /* the caller's bytes kept */
    size_t len = size > prefix ? size - prefix : 0;
    msink file = {0};
    file.p = malloc(len ? len : 1);
    file.len = len;
    CHECK_EQ(pread(fd, file.p, len, (off_t)prefix), (ssize_t)len);
    int np = walk_packets(file.p, len, pk, 64);
    CHECK(np >= 3);                         /* whole packets, end to end */
    if (np >= 3) {
        CHECK_EQ(pk[np - 1].off + pk[np - 1].size, len);
        CHECK_EQ(read_back(&file), (int)pk[np - 1].id_end);
        CHECK((int)pk[np - 1].id_end < i);  /* the last packet's events lost */
    }
    free(file.p);
    close(fd);
}

static void test_file_limit_plain(void)
{
    test_file_limit(0);
}

static void test_file_limit_append(void)
{
    test_file_limit(1000);
}

static void test_fork(void)
{
    int fds[2];
    if (pipe(fds) != 0) {
        CHECK_FAIL_("pipe: %s", strerror(errno));
        return;
    }
    mt_trace_info info = make_info(NULL);
    info.pid = getpid();
    mt_writer *w = NULL;
    char err[200];
    CHECK_EQ(mt_writer_open_fd(&w, fds[1], &info, NULL, err, sizeof err), MT_OK);
    if (!w)
        return;
    uint64_t code = 0x5555;
    CHECK_EQ(mt_writer_alloc(w, T0 + 1, 2, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, NULL), MT_OK);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        int bad = 0;
        if (mt_writer_flush(w) != MT_ERR_PID_CHANGED)
            bad |= 1;
        if (mt_writer_error(w)[0] == '\0')
            bad |= 2;
        if (mt_writer_alloc(w, T0 + 2, 2, 1, MT_SOURCE_MINOR, NULL, 0, NULL, NULL, NULL) == MT_OK)
            bad |= 4;
        if (mt_writer_close(w) != MT_ERR_PID_CHANGED)
            bad |= 8;
        _exit(bad);
    }
    CHECK(child > 0);
    int status = 0;
    waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    /* the parent goes on normally */
    CHECK_EQ(mt_writer_alloc(w, T0 + 3, 2, 1, MT_SOURCE_MINOR, &code, 1, locate, NULL, NULL), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    close(fds[1]);
    msink got;
    memset(&got, 0, sizeof got);
    got.fail_after = -1;
    uint8_t buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        msink_fn(&got, buf, (size_t)n);
    close(fds[0]);
    /* only the parent's packets: info, location packet, events packet */
    int np = walk_packets(got.p, got.len, pk, 64);
    CHECK_EQ(np, 3);
    if (np == 3) {
        CHECK_EQ(pk[1].first_code, 1);
        CHECK_EQ(pk[2].id_end, 2);
    }
    CHECK_EQ(read_back(&got), 2);
    free(got.p);
}

/* An allocation without frames (callstack NULL, n 0, which the API allows)
 * as the writer's very first allocation, and again later. */
static void test_empty_callstack(void)
{
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    int64_t id = -1;
    CHECK_EQ(mt_writer_alloc(w, T0 + 1, 3, 1, MT_SOURCE_MINOR, NULL, 0, NULL, NULL, &id), MT_OK);
    CHECK_EQ(id, 0);
    uint64_t one = 0x777;
    CHECK_EQ(mt_writer_alloc(w, T0 + 2, 3, 1, MT_SOURCE_MINOR, &one, 1, locate, NULL, &id), MT_OK);
    CHECK_EQ(mt_writer_alloc(w, T0 + 3, 3, 1, MT_SOURCE_MINOR, &one, 0, NULL, NULL, &id), MT_OK);
    CHECK_EQ(id, 2);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    int np = walk_packets(s.p, s.len, pk, 64);
    CHECK_EQ(np, 3);
    if (np == 3) {
        const uint8_t *e = s.p + pk[2].off + 66;
        CHECK_EQ(tb_ld(e, 4), word_of(103, T0 + 1));    /* A.4: 00 00 */
        CHECK_EQ(e[4], 0);
        CHECK_EQ(e[5], 0);
    }
    CHECK_EQ(read_back(&s), 3);
    free(s.p);
}

/* Random callstacks sharing outer frames with the previous one, written
 * and read back: every backtrace (caller first) and common_prefix (the
 * common suffix of spec 8.5, computed here naively) must come back. */
static uint64_t rng = 0xD1B54A32D192ED03ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_random_roundtrip(void)
{
    enum { N = 2000, MAXL = 300 };
    static uint64_t stacks[N][MAXL];
    static size_t lens[N];
    static int64_t prefix[N];
    static uint64_t pool[500];
    for (int i = 0; i < 500; i++)
        pool[i] = 0x10000 + (rnd() & 0xFFFFFFFFFFULL);
    msink s;
    mt_writer *w = open_w(&s, 2, 0, NULL);
    if (!w)
        return;
    for (int e = 0; e < N; e++) {
        size_t L = rnd() % MAXL;
        uint64_t *cs = stacks[e];
        if (e > 0 && rnd() % 4) {
            /* keep the outer k frames of the previous stack */
            size_t pl = lens[e - 1], k = pl ? rnd() % (pl + 1) : 0;
            if (k > L)
                L = k;
            for (size_t i = 0; i < k; i++)
                cs[L - 1 - i] = stacks[e - 1][pl - 1 - i];
            for (size_t i = 0; i < L - k; i++)
                cs[i] = pool[rnd() % (e % 2 ? 500 : 12)];
        } else {
            for (size_t i = 0; i < L; i++)
                cs[i] = pool[rnd() % (e % 2 ? 500 : 12)];
        }
        lens[e] = L;
        size_t c = 0;
        if (e > 0) {
            size_t pl = lens[e - 1];
            while (c < L && c < pl && cs[L - 1 - c] == stacks[e - 1][pl - 1 - c])
                c++;
        }
        prefix[e] = (int64_t)c;
        int64_t t = T0 + e * 1000;      /* crosses the 30 s packet limit */
        if (mt_writer_alloc(w, t, (int64_t)(rnd() % 20), 1 + (int64_t)(rnd() % 2),
                            (mt_source)(rnd() % 3), cs, L, locate, NULL, NULL) != MT_OK) {
            CHECK_FAIL_("alloc %d: %s", e, mt_writer_error(w));
            break;
        }
        if (e % 500 == 499)
            mt_writer_promote(w, t, e - 3);
    }
    CHECK_EQ(mt_writer_close(w), MT_OK);
    CHECK(walk_packets(s.p, s.len, pk, 64) > 3);

    mt_reader *r = mt_reader_create(NULL);
    CHECK_EQ(mt_reader_open_memory(r, s.p, s.len), MT_OK);
    mt_event ev;
    int e = 0, st;
    unsigned bad = 0;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        if (ev.kind != MT_EVENT_ALLOC)
            continue;
        if (e >= N) {
            bad++;
            break;
        }
        size_t L = lens[e];
        int ok = ev.id == e && ev.backtrace_len == L && ev.common_prefix == prefix[e];
        for (size_t i = 0; ok && i < L; i++)
            ok = ev.backtrace[i] == stacks[e][L - 1 - i];
        if (!ok && bad++ < 5)
            CHECK_FAIL_("alloc %d: len %zu (want %zu), prefix %lld (want %lld)", e,
                        ev.backtrace_len, L, (long long)ev.common_prefix,
                        (long long)prefix[e]);
        e++;
    }
    CHECK_EQ(st, MT_EOF);
    if (st != MT_EOF)
        fprintf(stderr, "reader: %s\n", mt_reader_error(r));
    CHECK_EQ(e, N);
    CHECK_EQ(bad, 0);
    mt_reader_close(r);
    free(s.p);
}

static const struct {
    const char *name;
    void (*fn)(void);
} sections[] = {
    {"first_packet", test_first_packet},
    {"pending_trigger", test_pending_trigger},
    {"buffer_trigger", test_buffer_trigger},
    {"time_trigger", test_time_trigger},
    {"v3_chunks", test_v3_chunks},
    {"promote_collect", test_promote_collect},
    {"forms", test_forms},
    {"enospc", test_enospc},
    {"file_limit", test_file_limit_plain},
    {"file_limit_append", test_file_limit_append},
    {"fork", test_fork},
    {"empty_callstack", test_empty_callstack},
    {"random_roundtrip", test_random_roundtrip},
};

/* No argument: every section. Otherwise only the named ones. */
int main(int argc, char **argv)
{
    size_t ns = sizeof sections / sizeof sections[0];
    for (size_t i = 0; i < ns; i++) {
        int run = argc < 2;
        for (int a = 1; a < argc; a++)
            run |= strcmp(argv[a], sections[i].name) == 0;
        if (run)
            sections[i].fn();
    }
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < ns && strcmp(argv[a], sections[i].name) != 0)
            i++;
        if (i == ns)
            CHECK_FAIL_("unknown section %s", argv[a]);
    }
    return CHECK_DONE();
}
