/*
 * test_errors.c - the error paths that the reference lacks or that no
 * corpus file reaches, on hand-built v2 traces and through the public API:
 * a packet smaller than its header, a complete packet larger than the
 * format's 32 KiB maximum (an error) versus one cut by the end of the file
 * (skipped and reported as truncated, with its offset), a negative common
 * prefix, sticky errors with messages that name the offset; a trace_info
 * event whose time is not its packet's or that is cut short; an event
 * whose time goes back, a long alloc of source 3, codewords, a collect's
 * delta or a location event cut by the packet's end, a code defined twice
 * differently, a location naming an empty move-to-front slot, and a cache
 * verifier that disagrees (v2 and v3), each checked for status, message,
 * offset and the events delivered before it, by mt_reader_next and
 * mt_reader_scan alike; and on the writer side a failing location
 * callback, code 0 in a callstack, a promote of an id not yet allocated,
 * and events after mt_writer_finish; NULL arguments to the
 * reader's event calls; the status codes' names.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memtrace/memtrace.h"
#include "tbuild.h"

#define T0 1600000000000000ULL
#define PID 4242

typedef struct diag_log {
    int n;
    mt_diag_kind kind;
    uint64_t offset;
} diag_log;

static void on_diag(void *ctx, mt_diag_kind kind, uint64_t offset, const char *msg)
{
    diag_log *d = ctx;
    d->n++;
    d->kind = kind;
    d->offset = offset;
    (void)msg;
}

static int count_event(void *ctx, const mt_event *ev)
{
    (void)ev;
    ++*(int *)ctx;
    return 0;
}

/* Read a copy of b at its exact size, with backtraces decoded or skipped:
 * final status, events, last message. The same copy is also read by
 * mt_reader_scan, which must stop with the same status after as many
 * events. */
static int read_all_opt(const tbuf *b, int skip, int *nevents, diag_log *d, char *msg,
                        size_t msgsz)
{
    uint8_t *copy = malloc(b->len);
    memcpy(copy, b->p, b->len);
    mt_reader_options opt = {0};
    opt.skip_backtraces = skip;
    opt.diag = on_diag;
    opt.diag_ctx = d;
    mt_reader *r = mt_reader_create(&opt);
    int st = mt_reader_open_memory(r, copy, b->len), n = 0;
    mt_event ev;
    if (st == MT_OK)
        while ((st = mt_reader_next(r, &ev)) == MT_OK)
            n++;
    if (st != MT_EOF)
        CHECK_EQ(mt_reader_next(r, &ev), st);          /* errors are sticky */
    snprintf(msg, msgsz, "%s", mt_reader_error(r));
    mt_reader_close(r);

    diag_log d2 = {0};
    opt.diag_ctx = &d2;
    r = mt_reader_create(&opt);
    int st2 = mt_reader_open_memory(r, copy, b->len), n2 = 0;
    if (st2 == MT_OK)
        st2 = mt_reader_scan(r, count_event, &n2);
    CHECK_EQ(st2, st);
    CHECK_EQ(n2, n);
    CHECK_EQ(d2.n, d->n);
    CHECK(strcmp(mt_reader_error(r), msg) == 0);
    mt_reader_close(r);
    free(copy);
    *nevents = n;
    return st;
}

static int read_all(const tbuf *b, int *nevents, diag_log *d, char *msg, size_t msgsz)
{
    return read_all_opt(b, 0, nevents, d, msg, msgsz);
}

/* Check a failed read: status st after n events, the message naming the
 * offset first ("offset N: ...") and containing what. */
static void expect_error(const tbuf *b, int skip, int st, int n, size_t offset,
                         const char *what)
{
    int got_n;
    diag_log d = {0};
    char msg[512], want[64];
    CHECK_EQ(read_all_opt(b, skip, &got_n, &d, msg, sizeof msg), st);
    CHECK_EQ(got_n, n);
    snprintf(want, sizeof want, "offset %zu: ", offset);
    if (strstr(msg, want) != msg || !strstr(msg, what)) {
        fprintf(stderr, "message: %s\nwanted: %s... %s\n", msg, want, what);
        CHECK(0);
    }
}

/* One events packet holding one collect of id 0 after one short alloc with
 * an empty backtrace: a valid base the tests then damage. */
static void base_trace(tbuf *b)
{
    tb_info(b, T0, PID);
    tb_begin(b, T0, T0 + 10, PID, 0, 1);
    tb_word(b, 101, T0 + 1);        /* short alloc, length 1 */
    tb_le(b, 0, 1);                 /* common prefix 0 */
    tb_le(b, 0, 1);                 /* no codewords */
    tb_word(b, 4, T0 + 2);          /* collect */
    tb_le(b, 0, 1);                 /* delta 0: id 0 */
    tb_end(b);
}

static void test_small_packet(void)
{
    tbuf b = {0};
    base_trace(&b);
    tb_begin(&b, T0 + 10, T0 + 10, PID, 1, 1);
    tb_end(&b);
    tb_set_le(&b, b.pkt + 4, 32 * 8, 4);            /* 32 bytes < 66 */
    int n;
    diag_log d = {0};
    char msg[512];
    CHECK_EQ(read_all(&b, &n, &d, msg, sizeof msg), MT_ERR_FORMAT);
    CHECK_EQ(n, 2);                                 /* the events before it */
    CHECK(strstr(msg, "smaller than its 66-byte header") != NULL);
    CHECK(strstr(msg, "offset ") == msg);
    free(b.p);
}

static void test_oversized_packet(void)
{
    /* complete in the file: an error */
    tbuf b = {0};
    base_trace(&b);
    size_t at = b.len;
    tb_begin(&b, T0 + 10, T0 + 10, PID, 1, 1);
    for (int i = 0; i < 40000; i++)
        tb_le(&b, 0, 1);
    tb_end(&b);
    int n;
    diag_log d = {0};
    char msg[512];
    CHECK_EQ(read_all(&b, &n, &d, msg, sizeof msg), MT_ERR_UNSUPPORTED);
    CHECK_EQ(n, 2);
    CHECK(strstr(msg, "exceeds the format's 32768-byte maximum") != NULL);
    char want[64];
    snprintf(want, sizeof want, "offset %zu:", at);
    CHECK(strstr(msg, want) == msg);

    /* cut by the end of the file: skipped as truncated, like the reference */
    b.len = at + 1000;
    d.n = 0;
    CHECK_EQ(read_all(&b, &n, &d, msg, sizeof msg), MT_EOF);
    CHECK_EQ(n, 2);
    CHECK_EQ(d.n, 1);
    CHECK_EQ(d.kind, MT_DIAG_TRUNCATED);
    CHECK_EQ(d.offset, at);
    free(b.p);
}

static void test_negative_prefix(void)
{
    tbuf b = {0};
    tb_info(&b, T0, PID);
    tb_begin(&b, T0, T0 + 10, PID, 0, 1);
    tb_word(&b, 101, T0 + 1);
    tb_le(&b, 254, 1);
    tb_le(&b, 0xFFFFFFFFu, 4);      /* vint -1 */
    tb_le(&b, 0, 1);
    tb_end(&b);
    int n;
    diag_log d = {0};
    char msg[512];
    CHECK_EQ(read_all(&b, &n, &d, msg, sizeof msg), MT_ERR_FORMAT);
    CHECK_EQ(n, 0);
    CHECK(strstr(msg, "negative common prefix -1") != NULL);
    free(b.p);
}

/* ---- malformed trace_info and events (no corpus file has these) -------- */

#define HDR 66                      /* a v2 packet header */

static void test_bad_info(void)
{
    /* its event's time is not the packet's */
    tbuf b = {0};
    tb_info_head(&b, T0, T0 + 5, PID);
    tb_str(&b, "exe");
    tb_str(&b, "host");
    tb_str(&b, "");
    tb_le(&b, PID, 8);
    tb_str(&b, "");
    tb_end(&b);
    expect_error(&b, 0, MT_ERR_FORMAT, 0, HDR, "malformed trace: trace info packet time");
    free(b.p);

    /* cut before the word size */
    memset(&b, 0, sizeof b);
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_word(&b, 0, T0);
    tb_le(&b, 0, 8);
    tb_end(&b);
    expect_error(&b, 0, MT_ERR_TRUNCATED, 0, HDR, "trace info event is cut short");
    free(b.p);

    /* cut in the strings, then before the pid */
    for (int cut = 0; cut < 2; cut++) {
        memset(&b, 0, sizeof b);
        tb_info_head(&b, T0, T0, PID);
        tb_str(&b, "exe");
        tb_str(&b, "host");
        if (cut == 0) {
            tb_bytes(&b, "params", 6);          /* no NUL */
        } else {
            tb_str(&b, "");
            tb_le(&b, PID, 4);
        }
        tb_end(&b);
        expect_error(&b, 0, MT_ERR_TRUNCATED, 0, HDR, "trace info event is cut short");
        free(b.p);
    }
}

/* A trace whose one events packet, [T0, T0 + 10], holds a short alloc with
 * no codewords at T0 + 5 and then what the caller adds; returns where the
 * caller's first byte goes. */
static size_t events_start(tbuf *b, uint64_t id_end)
{
    memset(b, 0, sizeof *b);
    tb_info(b, T0, PID);
    tb_begin(b, T0, T0 + 10, PID, 0, id_end);
    tb_word(b, 101, T0 + 5);
    tb_le(b, 0, 1);
    tb_le(b, 0, 1);
    return b->len;
}

/* End that packet and expect status st after its first event, with the
 * message what at offset at; then free the trace. */
static void events_expect(tbuf *b, int skip, int st, size_t at, const char *what)
{
    tb_end(b);
    expect_error(b, skip, st, 1, at, what);
    free(b->p);
}

static void test_bad_events(void)
{
    tbuf b;
    size_t at;

    /* time going back inside a packet */
    at = events_start(&b, 1);
    tb_word(&b, 4, T0 + 3);
    tb_le(&b, 0, 1);
    events_expect(&b, 0, MT_ERR_FORMAT, at, "malformed trace: monotone timestamps");

    /* a long alloc with source 3 */
    at = events_start(&b, 2);
    tb_word(&b, 2, T0 + 6);
    tb_le(&b, 1, 1);                /* length */
    tb_le(&b, 1, 1);                /* nsamples */
    tb_le(&b, 3, 1);                /* source */
    tb_le(&b, 0, 1);                /* common prefix */
    tb_le(&b, 0, 2);                /* no codewords */
    events_expect(&b, 0, MT_ERR_FORMAT, at, "malformed trace: source");

    /* codewords past the packet's end, decoded or skipped */
    for (int skip = 0; skip < 2; skip++) {
        at = events_start(&b, 2);
        tb_word(&b, 101, T0 + 6);
        tb_le(&b, 0, 1);
        tb_le(&b, 3, 1);            /* three codewords ... */
        tb_le(&b, 0, 2);            /* ... one there */
        events_expect(&b, skip, MT_ERR_TRUNCATED, at,
                      "malformed trace: backtrace runs past its packet");
    }

    /* a collect whose delta is cut by the packet's end (a 3-byte vint of
     * which one byte is there) */
    at = events_start(&b, 1);
    tb_word(&b, 4, T0 + 6);
    tb_le(&b, 253, 1);
    tb_le(&b, 0, 1);
    events_expect(&b, 0, MT_ERR_TRUNCATED, at, "malformed trace: event runs past its packet");

    /* a location event cut by the packet's end */
    at = events_start(&b, 1);
    tb_word(&b, 1, T0 + 6);
    tb_le(&b, 0x1234, 5);
    events_expect(&b, 0, MT_ERR_TRUNCATED, at,
                  "malformed trace: location event runs past its packet");

    /* a code defined twice, first with no location, then with one (line 5,
     * its file and function names new) */
    events_start(&b, 1);
    tb_word(&b, 1, T0 + 6);
    tb_le(&b, 0x1234, 8);
    tb_le(&b, 0, 1);
    at = b.len;
    tb_word(&b, 1, T0 + 6);
    tb_le(&b, 0x1234, 8);
    tb_le(&b, 1, 1);
    uint64_t packed = 5 | (uint64_t)31 << 38 | (uint64_t)31 << 43;
    tb_le(&b, packed & 0xFFFFFFFFu, 4);
    tb_le(&b, packed >> 32, 2);
    tb_str(&b, "a.c");
    tb_str(&b, "f");
    events_expect(&b, 0, MT_ERR_FORMAT, at, "malformed trace: consistent location info");

    /* a location whose file name is slot 0 of a still empty move-to-front
     * table (the pre-2024 writer's bug); the code in hex, as the
     * reference's "invalid location code" has it */
    at = events_start(&b, 1);
    tb_word(&b, 1, T0 + 6);
    tb_le(&b, 0x1234, 8);
    tb_le(&b, 1, 1);
    tb_le(&b, 5, 4);                /* line 5, file and function codes 0 */
    tb_le(&b, 0, 2);
    events_expect(&b, 0, MT_ERR_FORMAT, at, "malformed trace: location of code 00001234 "
                  "names an empty move-to-front slot");
}

/* A second events packet whose cache verifier disagrees with the cache:
 * an error when backtraces are decoded, not checked when they are skipped. */
static void test_bad_verifier(void)
{
    tbuf b = {0};
    base_trace(&b);
    size_t at = b.len;
    tb_begin(&b, T0 + 10, T0 + 20, PID, 1, 2);
    tb_set_le(&b, at + 38, 5, 2);           /* verify_ix 5 */
    tb_set_le(&b, at + 40, 1, 2);           /* next[5] = 1: it is 0 */
    tb_word(&b, 101, T0 + 11);
    tb_le(&b, 0, 1);
    tb_le(&b, 0, 1);
    tb_end(&b);
    expect_error(&b, 0, MT_ERR_FORMAT, 2, at, "malformed trace: cache verification");
    int n;
    diag_log d = {0};
    char msg[512];
    CHECK_EQ(read_all_opt(&b, 1, &n, &d, msg, sizeof msg), MT_EOF);
    CHECK_EQ(n, 3);
    free(b.p);
}

/* ---- writer ------------------------------------------------------------ */

static const mt_location loc = {"f.c", "f", 1, 2, 3};

static int locate_ok(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    (void)code;
    *l = &loc;
    *n = 1;
    return 0;
}

static int locate_fail(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    (void)ctx;
    (void)code;
    (void)l;
    (void)n;
    return -1;
}

/* Names NULL: the writer must take them as empty. */
static int locate_null_names(void *ctx, uint64_t code, const mt_location **l, size_t *n)
{
    static const mt_location nul = {NULL, NULL, 7, 1, 2};
    (void)ctx;
    (void)code;
    *l = &nul;
    *n = 1;
    return 0;
}

/* s's trace reads back whole: n events, and code has nloc locations (the
 * one of locate_ok, or locate_null_names's with empty names). */
static void written_back(const msink *s, int n, uint64_t code, size_t nloc)
{
    mt_reader *r = mt_reader_create(NULL);
    CHECK_EQ(mt_reader_open_memory(r, s->p, s->len), MT_OK);
    mt_event ev;
    int got = 0, st;
    while ((st = mt_reader_next(r, &ev)) == MT_OK)
        got++;
    CHECK_EQ(st, MT_EOF);
    CHECK_EQ(got, n);
    const mt_location *l = NULL;
    size_t k = 99;
    CHECK_EQ(mt_reader_locations(r, code, &l, &k), MT_OK);
    CHECK_EQ(k, nloc);
    if (k == 1)
        CHECK(l[0].line == 1 ? strcmp(l[0].filename, "f.c") == 0
                             : l[0].line == 7 && !*l[0].filename && !*l[0].function);
    mt_reader_close(r);
}

/* The trace info of the writer tests. */
static mt_trace_info writer_info(void)
{
    mt_trace_info info = {0};
    info.sample_rate = 1e-3;
    info.word_size = 64;
    info.executable_name = info.host_name = info.runtime_params = "";
    info.pid = PID;
    info.start_time = (int64_t)T0;
    return info;
}

static mt_writer *open_writer_v(msink *s, int version)
{
    mt_trace_info info = writer_info();
    mt_writer_options opt = {0};
    opt.format_version = version;
    mt_writer *w = NULL;
    char err[256];
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, s, &info, &opt, err, sizeof err), MT_OK);
    return w;
}

static mt_writer *open_writer(msink *s)
{
    return open_writer_v(s, 2);
}

/* One allocation of cs (locations from locate) by a fresh writer: written,
 * and read back whole with code's one location. */
static void one_alloc_written(const uint64_t *cs, size_t n, mt_locate_fn locate, uint64_t code)
{
    msink s = {0};
    s.fail_after = -1;
    mt_writer *w = open_writer(&s);
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, n, locate, NULL,
                             NULL), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    written_back(&s, 1, code, 1);
    free(s.p);
}

/* The writer's output in s as a trace to damage, checked first to read
 * back whole: n events. */
static tbuf read_back(const msink *s, int n)
{
    tbuf b = {s->p, s->len, s->cap, 0};
    int got;
    diag_log d = {0};
    char msg[512];
    CHECK_EQ(read_all(&b, &got, &d, msg, sizeof msg), MT_EOF);
    CHECK_EQ(got, n);
    return b;
}

/* v3 checks a packet's verifier against its domain's cache before its
 * first event (v2 in every header: test_bad_verifier). A trace of two
 * events packets, each with an allocation, by the writer; the second's
 * verifier then damaged. */
static void test_bad_verifier_v3(void)
{
    msink s = {0};
    s.fail_after = -1;
    mt_writer *w = open_writer_v(&s, 3);
    const uint64_t cs[2] = {0x1000, 0x2000};
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1 + k, 2, 1, MT_SOURCE_MINOR, cs, 2,
                                 locate_ok, NULL, NULL), MT_OK);
        CHECK_EQ(mt_writer_flush(w), MT_OK);
    }
    CHECK_EQ(mt_writer_close(w), MT_OK);
    pkt_t pk[16];
    int np = walk_packets(s.p, s.len, pk, 16), bad = -1;
    for (int i = 0; i < np && bad < 0; i++)
        if (pk[i].version == 3 && pk[i].vix != 0xFFFF)
            bad = i;
    CHECK(bad > 0);
    if (bad <= 0) {
        free(s.p);
        return;
    }
    tbuf b = read_back(&s, 2);
    int n;
    diag_log d = {0};
    char msg[512];
    b.p[pk[bad].off + 42] ^= 1;                                 /* its pred */
    expect_error(&b, 0, MT_ERR_FORMAT, 1, pk[bad].off, "malformed trace: cache verification");
    CHECK_EQ(read_all_opt(&b, 1, &n, &d, msg, sizeof msg), MT_EOF);
    CHECK_EQ(n, 2);
    free(s.p);
}

/* v3 has no packet-order check: a domain's packet may begin, and end,
 * before that domain's last event. Its events must still lie within the
 * packet's own time range, in both decoding paths (the fast path's single
 * compare of lb <= t <= te would wrap round if it ever saw te < lb: the
 * slow path decodes each packet's first event, so it never does). */
static void test_v3_time_before_last(void)
{
    msink s = {0};
    s.fail_after = -1;
    mt_writer *w = open_writer_v(&s, 3);
    const uint64_t cs[2] = {0x1000, 0x2000};
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 100, 2, 1, MT_SOURCE_MINOR, cs, 2,
                             locate_ok, NULL, NULL), MT_OK);
    CHECK_EQ(mt_writer_flush(w), MT_OK);
    /* six events: the first is well inside the packet (the fast path) */
    for (int k = 0; k < 6; k++)
        CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 300 + k, 2, 1, MT_SOURCE_MINOR, cs, 2,
                                 locate_ok, NULL, NULL), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    pkt_t pk[16];
    int np = walk_packets(s.p, s.len, pk, 16), last = np - 1;
    CHECK(np >= 3 && pk[last].id_begin == 1 && pk[last].id_end == 7);
    if (np < 3) {
        free(s.p);
        return;
    }
    tbuf b = read_back(&s, 7);
    /* the last packet now spans T0+50..T0+80: before the domain's last
     * event (T0+100), and its events (T0+300...) after its end */
    tb_set_le(&b, pk[last].off + 8, T0 + 50, 8);
    tb_set_le(&b, pk[last].off + 16, T0 + 80, 8);
    size_t at = pk[last].off + pk[last].hsize;
    expect_error(&b, 0, MT_ERR_FORMAT, 1, at, "malformed trace: time in packet bounds");
    expect_error(&b, 1, MT_ERR_FORMAT, 1, at, "malformed trace: time in packet bounds");
    free(s.p);
}

static void test_writer_errors(void)
{
    msink s = {0};
    s.fail_after = -1;
    mt_writer *w = open_writer(&s);
    const uint64_t cs[2] = {0x1000, 0x2000};
    int64_t id = -1;
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, 2,
                             locate_ok, NULL, &id), MT_OK);
    CHECK_EQ(id, 0);
    /* an id not yet allocated: refused, nothing written, writer still usable */
    CHECK_EQ(mt_writer_promote(w, (int64_t)T0 + 2, 1), MT_ERR_ARG);
    CHECK(strstr(mt_writer_error(w), "Invalid ID in promotion") != NULL);
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 2, 2, 1, (mt_source)7, cs, 2,
                             locate_ok, NULL, NULL), MT_ERR_ARG);
    CHECK(strstr(mt_writer_error(w), "invalid source 7") != NULL);
    CHECK_EQ(mt_writer_collect(w, (int64_t)T0 + 2, 0), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    free(s.p);

    /* a failing location callback: the event is written, its new code with
     * no location, MT_ERR_LOCATION says so, and the writer goes on */
    msink s2 = {0};
    s2.fail_after = -1;
    w = open_writer(&s2);
    const uint64_t fresh[1] = {0x3000};
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, 2,
                             locate_ok, NULL, NULL), MT_OK);
    id = -1;
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 2, 2, 1, MT_SOURCE_MINOR, fresh, 1,
                             locate_fail, NULL, &id), MT_ERR_LOCATION);
    CHECK_EQ(id, 1);
    CHECK(strstr(mt_writer_error(w), "location callback failed for code 00003000") != NULL);
    CHECK_EQ(mt_writer_collect(w, (int64_t)T0 + 3, 1), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    written_back(&s2, 3, 0x3000, 0);
    free(s2.p);

    /* a code 0 or not in 63-bit form, or a time that goes back: refused,
     * nothing written, and the events before and after it kept (the
     * codec's cache untouched: what follows decodes) */
    const uint64_t bad[][2] = {{0, 0x1000}, {0x2000, 0x8000000000000001ull},
                               {0x4000, 0x4000000000000000ull}, {0x1000, 0}};
    for (int k = 0; k < 5; k++) {
        msink s3 = {0};
        s3.fail_after = -1;
        w = open_writer(&s3);
        CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 5, 2, 1, MT_SOURCE_MINOR, cs, 2,
                                 locate_ok, NULL, NULL), MT_OK);
        if (k < 4) {     /* (k 3: the 0 is the outer frame) */
            CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 6, 2, 1, MT_SOURCE_MINOR, bad[k], 2,
                                     locate_ok, NULL, NULL), MT_ERR_ARG);
            CHECK(strstr(mt_writer_error(w), "not in 63-bit form") != NULL);
        } else {
            CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 4, 2, 1, MT_SOURCE_MINOR, cs, 2,
                                     locate_ok, NULL, NULL), MT_ERR_ARG);
            CHECK(strstr(mt_writer_error(w), "times must not decrease") != NULL);
            CHECK_EQ(mt_writer_collect(w, (int64_t)T0 + 4, 0), MT_ERR_ARG);
            CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 - 1, 2, 1, MT_SOURCE_MINOR, cs, 2,
                                     locate_ok, NULL, NULL), MT_ERR_ARG);
        }
        CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 7, 2, 1, MT_SOURCE_MINOR, fresh, 1,
                                 locate_ok, NULL, NULL), MT_OK);
        CHECK_EQ(mt_writer_collect(w, (int64_t)T0 + 8, 0), MT_OK);
        CHECK_EQ(mt_writer_close(w), MT_OK);
        written_back(&s3, 3, 0x3000, 1);
        free(s3.p);
    }

    /* a callstack NULL or longer than any reader takes: refused, no crash
     * (the frames are never read) */
    msink s6 = {0};
    s6.fail_after = -1;
    w = open_writer(&s6);
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, NULL, 3,
                             locate_ok, NULL, NULL), MT_ERR_ARG);
    CHECK(strstr(mt_writer_error(w), "NULL callstack") != NULL);
    const size_t huge[] = {((size_t)1 << 20) + 1, (size_t)1 << 61, SIZE_MAX};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, huge[k],
                                 locate_ok, NULL, NULL), MT_ERR_ARG);
        CHECK(strstr(mt_writer_error(w), "readers take 1048576 at most") != NULL);
    }
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, 2,
                             locate_ok, NULL, NULL), MT_OK);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    written_back(&s6, 1, 0x1000, 1);
    free(s6.p);

    /* a v003 domain outside a header's 16 bits */
    mt_trace_info info = {0};
    info.sample_rate = 1e-3;
    info.word_size = 64;
    info.start_time = (int64_t)T0;
    mt_writer_options opt = {0};
    opt.format_version = 3;
    char err[128];
    for (int dom = -1; dom <= 0x10000; dom += 0x10001) {
        opt.domain = dom;
        w = (mt_writer *)&opt;
        CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s6, &info, &opt, err, sizeof err),
                 MT_ERR_ARG);
        CHECK(w == NULL && strstr(err, "domain must be 0 to 65535") != NULL);
    }

    /* a canonical negative code is a code like any other */
    const uint64_t neg[2] = {0xC000000000000000ull, 0xFFFFFFFFFFFFFFFFull};
    one_alloc_written(neg, 2, locate_ok, 0xC000000000000000ull);

    /* NULL names from the callback are written as "" */
    one_alloc_written(fresh, 1, locate_null_names, 0x3000);

    /* after mt_writer_finish no more events, and close writes nothing more */
    msink s4 = {0};
    s4.fail_after = -1;
    w = open_writer(&s4);
    CHECK_EQ(mt_writer_finish(w), MT_OK);
    size_t len = s4.len;
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, cs, 2,
                             locate_ok, NULL, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_writer_close(w), MT_OK);
    CHECK_EQ(s4.len, len);
    free(s4.p);
}

/* NULL reader or event: MT_ERR_ARG, before and after events were read. */
static void test_reader_args(void)
{
    tbuf b = {0};
    base_trace(&b);
    mt_reader *r = mt_reader_create(NULL);
    mt_event ev;
    CHECK_EQ(mt_reader_next(NULL, &ev), MT_ERR_ARG);
    CHECK_EQ(mt_reader_next(r, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_reader_next(r, &ev), MT_ERR_ARG);       /* not open yet: */
    CHECK_EQ(mt_reader_scan(r, count_event, &(int){0}), MT_ERR_ARG);
    CHECK_EQ(mt_reader_open_memory(r, b.p, b.len), MT_OK);  /* no harm done */
    CHECK_EQ(mt_reader_next(r, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_reader_next(r, &ev), MT_OK);
    CHECK_EQ(ev.kind, MT_EVENT_ALLOC);
    CHECK_EQ(mt_reader_next(r, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_reader_next(r, &ev), MT_OK);
    CHECK_EQ(ev.kind, MT_EVENT_COLLECT);
    CHECK_EQ(mt_reader_scan(NULL, NULL, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_reader_scan(r, NULL, NULL), MT_ERR_ARG);
    CHECK_EQ(mt_reader_next(r, &ev), MT_EOF);
    mt_reader_close(r);
    free(b.p);
}

/* The options' reserved fields (room for options to come) must be zero:
 * otherwise the reader's open calls and the writer's open refuse with
 * MT_ERR_ARG (the writer saying why), for each reserved word; zeroed
 * options with the same fields work. */
static void test_reserved_options(void)
{
    tbuf b = {0};
    base_trace(&b);
    size_t nres = sizeof ((mt_reader_options *)0)->reserved / sizeof(uint64_t);
    for (size_t i = 0; i < nres; i++) {
        mt_reader_options ro = {.skip_backtraces = 1};
        ro.reserved[i] = 1;
        mt_reader *r = mt_reader_create(&ro);
        CHECK(r != NULL);
        CHECK_EQ(mt_reader_open_memory(r, b.p, b.len), MT_ERR_ARG);
        CHECK_EQ(mt_reader_open_fd(r, 0), MT_ERR_ARG);
        CHECK_EQ(mt_reader_open_file(r, "/dev/null"), MT_ERR_ARG);
        mt_reader_close(r);
    }
    mt_reader_options ro = {.skip_backtraces = 1};
    mt_reader *r = mt_reader_create(&ro);
    mt_event ev;
    CHECK_EQ(mt_reader_open_memory(r, b.p, b.len), MT_OK);
    CHECK_EQ(mt_reader_next(r, &ev), MT_OK);
    mt_reader_close(r);
    free(b.p);

    mt_trace_info info = writer_info();
    size_t nwres = sizeof ((mt_writer_options *)0)->reserved / sizeof(uint64_t);
    for (size_t i = 0; i < nwres; i++) {
        msink s = {0};
        s.fail_after = -1;
        mt_writer_options wo = {.format_version = 3};
        wo.reserved[i] = (uint64_t)1 << 63;
        mt_writer *w = (mt_writer *)&s;            /* (must come back NULL) */
        char err[256] = "";
        CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s, &info, &wo, err, sizeof err), MT_ERR_ARG);
        CHECK(w == NULL);
        CHECK(strstr(err, "reserved") != NULL);
        CHECK_EQ(s.len, 0);                        /* nothing written */
        free(s.p);
    }
    msink s = {0};
    s.fail_after = -1;
    mt_writer_options wo = {.format_version = 3};
    mt_writer *w = NULL;
    char err[256];
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, &s, &info, &wo, err, sizeof err), MT_OK);
    mt_writer_close(w);
    free(s.p);
}

/* Every status has its own name, and a code that is none is named unknown. */
static void test_status_names(void)
{
    static const struct {
        int status;
        const char *name;
    } all[] = {{MT_OK, "MT_OK"}, {MT_EOF, "MT_EOF"}, {MT_ERR_FORMAT, "MT_ERR_FORMAT"},
               {MT_ERR_TRUNCATED, "MT_ERR_TRUNCATED"}, {MT_ERR_IO, "MT_ERR_IO"},
               {MT_ERR_NOMEM, "MT_ERR_NOMEM"}, {MT_ERR_ARG, "MT_ERR_ARG"},
               {MT_ERR_LOCATION, "MT_ERR_LOCATION"},
               {MT_ERR_PID_CHANGED, "MT_ERR_PID_CHANGED"},
               {MT_ERR_UNSUPPORTED, "MT_ERR_UNSUPPORTED"}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK(strcmp(mt_status_name(all[i].status), all[i].name) == 0);
    CHECK(strcmp(mt_status_name(2), "MT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(mt_status_name(-9), "MT_ERR_UNKNOWN") == 0);
    CHECK(strcmp(mt_version(), MT_VERSION_STRING) == 0);
}

int main(void)
{
    test_small_packet();
    test_oversized_packet();
    test_negative_prefix();
    test_bad_info();
    test_bad_events();
    test_bad_verifier();
    test_bad_verifier_v3();
    test_v3_time_before_last();
    test_writer_errors();
    test_reader_args();
    test_reserved_options();
    test_status_names();
    return CHECK_DONE();
}
