/*
 * test_errors.c - the error paths that the reference lacks or that no
 * corpus file reaches, on hand-built v2 traces and through the public API:
 * a packet smaller than its header, a complete packet larger than the
 * format's 32 KiB maximum (an error) versus one cut by the end of the file
 * (skipped and reported as truncated, with its offset), a negative common
 * prefix, sticky errors with messages that name the offset; and on the
 * writer side a failing location callback, code 0 in a callstack, a promote
 * of an id not yet allocated, and events after mt_writer_finish; NULL
 * arguments to the reader's event calls.
 */
#include <stdint.h>
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

/* Read a copy of b at its exact size: final status, events, last message. */
static int read_all(const tbuf *b, int *nevents, diag_log *d, char *msg, size_t msgsz)
{
    uint8_t *copy = malloc(b->len);
    memcpy(copy, b->p, b->len);
    mt_reader_options opt = {0};
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
    free(copy);
    *nevents = n;
    return st;
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

static mt_writer *open_writer(msink *s)
{
    mt_trace_info info = {0};
    info.sample_rate = 1e-3;
    info.word_size = 64;
    info.executable_name = info.host_name = info.runtime_params = "";
    info.pid = PID;
    info.start_time = (int64_t)T0;
    mt_writer *w = NULL;
    char err[256];
    CHECK_EQ(mt_writer_open_sink(&w, msink_fn, s, &info, NULL, err, sizeof err), MT_OK);
    return w;
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

    /* a failing location callback stops the writer with a message */
    msink s2 = {0};
    s2.fail_after = -1;
    w = open_writer(&s2);
    const uint64_t fresh[1] = {0x3000};
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, fresh, 1,
                             locate_fail, NULL, NULL), MT_ERR_ARG);
    CHECK(strstr(mt_writer_error(w), "location callback failed") != NULL);
    CHECK_EQ(mt_writer_collect(w, (int64_t)T0 + 2, 0), MT_ERR_ARG);   /* sticky */
    mt_writer_close(w);
    free(s2.p);

    /* code 0 never reaches the file */
    msink s3 = {0};
    s3.fail_after = -1;
    w = open_writer(&s3);
    const uint64_t zero[2] = {0, 0x1000};
    CHECK_EQ(mt_writer_alloc(w, (int64_t)T0 + 1, 2, 1, MT_SOURCE_MINOR, zero, 2,
                             locate_ok, NULL, NULL), MT_ERR_ARG);
    CHECK(strstr(mt_writer_error(w), "code 0") != NULL);
    mt_writer_close(w);
    free(s3.p);

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
    CHECK_EQ(mt_reader_open_memory(r, b.p, b.len), MT_OK);
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

int main(void)
{
    test_small_packet();
    test_oversized_packet();
    test_negative_prefix();
    test_writer_errors();
    test_reader_args();
    return CHECK_DONE();
}
