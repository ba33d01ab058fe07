/*
 * test_stale.c - the stale-backtrace rule of spec 6.5 through the public
 * API: a trace written to a memory sink with a callstack of 1000 distinct
 * frames (truncated by the encoder to its outermost 409), then the same
 * callstack with a different innermost frame (common prefix 999 > 409
 * decoded frames). Reading back, the second allocation reports
 * common_prefix 999 and the first allocation's decoded (stale) backtrace,
 * while its codeword still updates the reader's cache: later allocations
 * that hit that cache entry, or predict through the truncated stack, decode
 * correctly and every packet's cache verifier passes. Also checks the wire
 * form of the second allocation (short form, vint fd e7 03, one miss) and
 * which codes got location events, and each event's count of new codes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memtrace/memtrace.h"
#include "tbuild.h"

#define T0 1600000000000000LL

static mt_location loc_buf;
static char fn_buf[32];

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    snprintf(fn_buf, sizeof fn_buf, "fn_%llx", (unsigned long long)code);
    loc_buf = (mt_location){"stale.ml", fn_buf, (int)(code & 0xFFFF), 1, 2};
    *locs = &loc_buf;
    *n = 1;
    return 0;
}

int main(void)
{
    static uint64_t cs1[1000], cs2[1000];
    for (int i = 0; i < 1000; i++)
        cs1[i] = 0x10000 + (uint64_t)i * 13;     /* callee first */
    memcpy(cs2, cs1, sizeof cs1);
    const uint64_t inner2 = 0x99999;
    cs2[0] = inner2;

    msink sink = {0};
    sink.fail_after = -1;
    mt_trace_info info = {0};
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "stale";
    info.host_name = "h";
    info.runtime_params = "";
    info.pid = 77;
    info.start_time = T0;
    mt_writer *w = NULL;
    char err[200];
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &sink, &info, NULL, err, sizeof err), MT_OK);
    if (!w)
        return CHECK_DONE();
    int64_t id = -1;
    CHECK_EQ(mt_writer_alloc(w, T0 + 10, 5, 1, MT_SOURCE_MINOR, cs1, 1000, locate, NULL, &id), MT_OK);
    CHECK_EQ(id, 0);
    CHECK_EQ(mt_writer_alloc(w, T0 + 20, 5, 1, MT_SOURCE_MINOR, cs2, 1000, locate, NULL, &id), MT_OK);
    CHECK_EQ(id, 1);
    CHECK_EQ(mt_writer_flush(w), MT_OK);
    uint64_t cs3[1] = {inner2};
    CHECK_EQ(mt_writer_alloc(w, T0 + 30, 5, 1, MT_SOURCE_MINOR, cs3, 1, locate, NULL, &id), MT_OK);
    CHECK_EQ(mt_writer_flush(w), MT_OK);
    uint64_t cs4[2] = {cs1[998], cs1[999]};
    CHECK_EQ(mt_writer_alloc(w, T0 + 40, 5, 1, MT_SOURCE_MINOR, cs4, 2, locate, NULL, &id), MT_OK);
    CHECK_EQ(id, 3);
    CHECK_EQ(mt_writer_close(w), MT_OK);

    /* wire form of the second alloc: first event of its events packet */
    pkt_t pk[32];
    int np = walk_packets(sink.p, sink.len, pk, 32);
    CHECK(np > 0);
    int found = 0;
    for (int i = 0; i < np; i++) {
        if (pk[i].first_code != 105)
            continue;
        const uint8_t *e = sink.p + pk[i].off + pk[i].hsize;
        if (tb_ld(e, 4) != ((uint64_t)105 << 25 | ((T0 + 20) & 0x1FFFFFF)))
            continue;
        found++;
        static const uint8_t want[] = {0xfd, 0xe7, 0x03, 0x01};
        CHECK_MEM(e + 4, 4, want, 4);
        CHECK_EQ(tb_ld(e + 8, 2) & 3, 3);
        CHECK_EQ(tb_ld(e + 10, 8), inner2);
        CHECK_EQ(pk[i].id_begin, 1);
        CHECK(pk[i].vix != 0xFFFF);        /* not the first events packet */
    }
    CHECK_EQ(found, 1);

    /* read back */
    mt_reader *r = mt_reader_create(NULL);
    CHECK_EQ(mt_reader_open_memory(r, sink.p, sink.len), MT_OK);
    mt_event ev;
    static uint64_t first[409];
    int st = mt_reader_next(r, &ev);
    CHECK_EQ(st, MT_OK);
    CHECK_EQ(ev.kind, MT_EVENT_ALLOC);
    CHECK_EQ(ev.id, 0);
    CHECK_EQ(ev.common_prefix, 0);
    CHECK_EQ(ev.length, 5);
    CHECK_EQ(ev.backtrace_len, 409);
    CHECK_EQ(ev.new_codes, 409);            /* every frame a miss */
    if (st == MT_OK && ev.backtrace_len == 409) {
        unsigned bad = 0;
        for (int i = 0; i < 409; i++)
            bad += ev.backtrace[i] != cs1[999 - i];
        CHECK_EQ(bad, 0);
        memcpy(first, ev.backtrace, sizeof first);
    }

    st = mt_reader_next(r, &ev);
    CHECK_EQ(st, MT_OK);
    CHECK_EQ(ev.id, 1);
    CHECK_EQ(ev.common_prefix, 999);
    CHECK_EQ(ev.backtrace_len, 409);
    CHECK_EQ(ev.new_codes, 1);              /* inner2, decoded and dropped */
    if (st == MT_OK && ev.backtrace_len == 409)
        CHECK(memcmp(ev.backtrace, first, sizeof first) == 0);

    st = mt_reader_next(r, &ev);
    CHECK_EQ(st, MT_OK);
    CHECK_EQ(ev.id, 2);
    CHECK_EQ(ev.common_prefix, 0);
    CHECK_EQ(ev.backtrace_len, 1);
    CHECK_EQ(ev.new_codes, 0);              /* inner2 from the cache */
    if (st == MT_OK && ev.backtrace_len == 1)
        CHECK_EQ(ev.backtrace[0], inner2);

    st = mt_reader_next(r, &ev);
    CHECK_EQ(st, MT_OK);
    CHECK_EQ(ev.id, 3);
    CHECK_EQ(ev.backtrace_len, 2);
    CHECK_EQ(ev.new_codes, 0);
    if (st == MT_OK && ev.backtrace_len == 2) {
        CHECK_EQ(ev.backtrace[0], cs1[999]);
        CHECK_EQ(ev.backtrace[1], cs1[998]);
    }
    st = mt_reader_next(r, &ev);
    CHECK_EQ(st, MT_EOF);
    if (st != MT_EOF)
        fprintf(stderr, "reader: %s\n", mt_reader_error(r));

    /* location events exist for emitted misses only */
    const mt_location *l;
    size_t nl;
    CHECK_EQ(mt_reader_locations(r, cs1[999], &l, &nl), MT_OK);
    CHECK_EQ(nl, 1);
    if (nl == 1) {
        CHECK_STR(l[0].filename, "stale.ml");
        CHECK_EQ(l[0].line, (int)(cs1[999] & 0xFFFF));
    }
    CHECK_EQ(mt_reader_locations(r, cs1[591], &l, &nl), MT_OK);
    CHECK_EQ(mt_reader_locations(r, cs1[590], &l, &nl), MT_ERR_LOCATION);
    CHECK_EQ(mt_reader_locations(r, cs1[0], &l, &nl), MT_ERR_LOCATION);
    CHECK_EQ(mt_reader_locations(r, inner2, &l, &nl), MT_OK);
    mt_reader_close(r);
    free(sink.p);
    return CHECK_DONE();
}
