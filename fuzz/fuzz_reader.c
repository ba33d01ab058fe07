/*
 * fuzz_reader.c - libFuzzer target for the trace reader. Reads the input as
 * a trace from memory: info record, every event, every backtrace code's
 * locations (all strings touched); then a second pass in skip_backtraces
 * mode. Also checks a few API promises and aborts if one is broken:
 * statuses stay sticky after EOF/error, the skip pass delivers at least the
 * events of the full pass with the same non-backtrace fields.
 */
#include <memtrace/memtrace.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EVENTS 50000000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A summary of one event, kept to compare the two passes. */
typedef struct summary {
    int kind, source, domain;
    int64_t time, id, length, nsamples;
} summary;

typedef struct pass {
    summary *ev;
    size_t n, cap;
    int status;
    volatile size_t touched;     /* keeps the strlen calls alive           */
} pass;

static void must(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_reader: broken promise: %s\n", what);
        abort();
    }
}

static size_t touch(const char *s)
{
    return s ? strlen(s) : 0;
}

static void diag_cb(void *ctx, mt_diag_kind kind, uint64_t offset, const char *msg)
{
    pass *p = ctx;
    must(kind >= MT_DIAG_OUT_OF_ORDER && kind <= MT_DIAG_TRUNCATED, "diag kind");
    p->touched += touch(msg) + (size_t)offset;
}

static void touch_info(pass *p, const mt_trace_info *in)
{
    must(in != NULL, "info after open");
    p->touched += touch(in->executable_name) + touch(in->host_name) +
                  touch(in->runtime_params) + touch(in->context) +
                  (size_t)in->pid + (size_t)in->start_time +
                  (size_t)in->word_size + (size_t)in->format_version +
                  (size_t)in->initial_domain + (in->sample_rate > 0.5);
}

static void touch_code(pass *p, mt_reader *r, uint64_t code)
{
    const mt_location *locs = NULL;
    size_t n = 0;
    int st = mt_reader_locations(r, code, &locs, &n);
    must(st == MT_OK || st == MT_ERR_LOCATION, "locations status");
    if (st != MT_OK)
        return;
    must(n == 0 || locs != NULL, "locations array");
    for (size_t i = 0; i < n; i++)
        p->touched += touch(locs[i].filename) + touch(locs[i].function) +
                      (size_t)locs[i].line + (size_t)locs[i].start_char +
                      (size_t)locs[i].end_char;
}

static void record(pass *p, const mt_event *ev)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->ev = realloc(p->ev, p->cap * sizeof *p->ev);
        must(p->ev != NULL, "memory");
    }
    summary *s = &p->ev[p->n++];
    memset(s, 0, sizeof *s);
    s->kind = ev->kind;
    s->time = ev->time;
    s->id = ev->id;
    s->domain = ev->domain;
    if (ev->kind == MT_EVENT_ALLOC) {
        s->source = ev->source;
        s->length = ev->length;
        s->nsamples = ev->nsamples;
    }
}

static void check_event(pass *p, mt_reader *r, const mt_event *ev, int skip)
{
    must(ev->kind >= MT_EVENT_ALLOC && ev->kind <= MT_EVENT_COLLECT, "event kind");
    if (ev->kind == MT_EVENT_ALLOC) {
        must(ev->source >= MT_SOURCE_MINOR && ev->source <= MT_SOURCE_EXTERNAL, "source");
        must(!skip || ev->backtrace_len == 0, "skip mode gives empty backtraces");
        must(ev->backtrace_len == 0 || ev->backtrace != NULL, "backtrace pointer");
        for (size_t i = 0; i < ev->backtrace_len; i++)
            touch_code(p, r, ev->backtrace[i]);
    }
    record(p, ev);
}

static void run_pass(pass *p, const uint8_t *data, size_t size, int skip)
{
    mt_reader_options opt = {.skip_backtraces = skip, .diag = diag_cb, .diag_ctx = p};
    mt_reader *r = mt_reader_create(&opt);
    mt_event ev;
    must(r != NULL, "reader");
    p->status = mt_reader_open_memory(r, data, size);
    must(p->status <= 0, "open status");
    if (p->status == MT_OK) {
        touch_info(p, mt_reader_info(r));
        while ((p->status = mt_reader_next(r, &ev)) == MT_OK && p->n < MAX_EVENTS)
            check_event(p, r, &ev, skip);
        must(p->status == MT_EOF || p->status < 0, "final status");
        must(mt_reader_next(r, &ev) == p->status, "sticky final status");
    }
    p->touched += touch(mt_reader_error(r)) + touch(mt_status_name(p->status)) +
                  (size_t)mt_reader_offset(r);
    mt_reader_close(r);
}

/* Skip mode decodes the same bytes minus backtrace semantics, so it can only
 * go further than the full pass, never deliver different events. */
static void compare_passes(const pass *full, const pass *skip)
{
    must(skip->n >= full->n, "skip pass delivers fewer events than full pass");
    for (size_t i = 0; i < full->n; i++)
        must(memcmp(&full->ev[i], &skip->ev[i], sizeof full->ev[i]) == 0,
             "skip pass event differs from full pass");
    if (full->status == MT_EOF)
        must(skip->status == MT_EOF && skip->n == full->n, "skip pass end");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    pass full, skip;
    memset(&full, 0, sizeof full);
    memset(&skip, 0, sizeof skip);
    run_pass(&full, data, size, 0);
    run_pass(&skip, data, size, 1);
    compare_passes(&full, &skip);
    free(full.ev);
    free(skip.ev);
    return 0;
}
