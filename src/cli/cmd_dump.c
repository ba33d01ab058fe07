/*
 * cmd_dump.c - `memtrace dump TRACE`: every event, one line each, in the
 * reference dump_trace format (spec 11.1; v003 traces add " dom=N").
 *
 * Most of the output is location text that repeats, so each code's text is
 * formatted once into a cache and copied from there; output goes through
 * the pipe-sized buffered writer of output.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "util/hash.h"

void usage_dump(FILE *out)
{
    fprintf(out,
            "Usage: memtrace dump [OPTIONS] TRACE\n"
            "\n"
            "Print every event of TRACE on standard output, one line each, in the\n"
            "format of the reference dump_trace tool:\n"
            "  TIME ID alloc NSAMPLES len=LENGTH PREFIX: FRAME...   (alloc, alloc_major, alloc_ext)\n"
            "  TIME ID promote\n"
            "  TIME ID collect\n"
            "TIME is microseconds since the trace start; frames are caller first, each\n"
            "FUNCTION@FILE:LINE:START-END (one per inlined location) or $CODE when the\n"
            "code has no location. Traces of format v003 add dom=DOMAIN after len=.\n"
            "Skipped packets are reported on standard error. TRACE '-' reads stdin.\n"
            "\n"
            "Options:\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (every event\n"
            "before the damage is printed first), 2 bad usage.\n");
}

/* ---- location text cache ---------------------------------------------- */

typedef struct text_entry {
    uint64_t code;
    uint32_t off, len;
    int used;
} text_entry;

typedef struct text_cache {
    text_entry *slots;
    size_t nslots, used;
    char *text;
    size_t text_len, text_cap;
    uint64_t seed;              /* random: hash_slot's                  */
} text_cache;

static int cache_grow(text_cache *c)
{
    size_t n = c->nslots ? c->nslots * 2 : 8192;
    text_entry *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    if (!c->nslots)
        c->seed = hash_key()[0];
    for (size_t i = 0; i < c->nslots; i++) {
        if (!c->slots[i].used)
            continue;
        size_t j = hash_slot(c->slots[i].code, c->seed, n);
        while (s[j].used)
            j = (j + 1) & (n - 1);
        s[j] = c->slots[i];
    }
    free(c->slots);
    c->slots = s;
    c->nslots = n;
    return 0;
}

static int text_append(text_cache *c, const char *s, size_t n)
{
    if (c->text_cap - c->text_len < n) {
        size_t cap = c->text_cap ? c->text_cap : 1 << 20;
        while (cap - c->text_len < n)
            cap *= 2;
        char *t = realloc(c->text, cap);
        if (!t)
            return -1;
        c->text = t;
        c->text_cap = cap;
    }
    memcpy(c->text + c->text_len, s, n);
    c->text_len += n;
    return 0;
}

/* Format the text of one code: " loc loc..." or " $code". */
static int format_code(text_cache *c, mt_reader *r, uint64_t code,
                       text_entry *e)
{
    const mt_location *locs;
    size_t n;
    if (mt_reader_locations(r, code, &locs, &n) != MT_OK)
        return -1;
    size_t start = c->text_len;
    char num[64];
    if (n == 0) {
        int k = snprintf(num, sizeof num, " $%lld", (long long)code);
        if (text_append(c, num, (size_t)k))
            return -2;
    }
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(num, sizeof num, ":%d:%d-%d", locs[i].line,
                         locs[i].start_char, locs[i].end_char);
        if (text_append(c, " ", 1) ||
            text_append(c, locs[i].function, strlen(locs[i].function)) ||
            text_append(c, "@", 1) ||
            text_append(c, locs[i].filename, strlen(locs[i].filename)) ||
            text_append(c, num, (size_t)k))
            return -2;
    }
    if (c->text_len - start > UINT32_MAX || c->text_len > UINT32_MAX)
        return -2;
    e->code = code;
    e->off = (uint32_t)start;
    e->len = (uint32_t)(c->text_len - start);
    e->used = 1;
    c->used++;
    return 0;
}

/* The cache entry of code, formatting it on first use. NULL with *err -1
 * for an undefined code, -2 when out of memory. */
static inline text_entry *cache_get(text_cache *c, mt_reader *r, uint64_t code,
                                    int *err)
{
    size_t mask = c->nslots - 1;
    size_t j = hash_slot(code, c->seed, c->nslots);
    for (;;) {
        text_entry *e = &c->slots[j];
        if (e->used && e->code == code)
            return e;
        if (!e->used)
            break;
        j = (j + 1) & mask;
    }
    if ((c->used + 1) * 2 > c->nslots) {
        if (cache_grow(c)) {
            *err = -2;
            return NULL;
        }
        return cache_get(c, r, code, err);
    }
    text_entry *e = &c->slots[j];
    *err = format_code(c, r, code, e);
    return *err ? NULL : e;
}

/* ---- the dump --------------------------------------------------------- */

static const char *source_name(mt_source s)
{
    return s == MT_SOURCE_MINOR ? " alloc " : s == MT_SOURCE_MAJOR ? " alloc_major "
                                                                   : " alloc_ext ";
}

typedef struct frame_text {
    uint32_t off, len;
} frame_text;

typedef struct dump_state {
    mt_out out;
    text_cache cache;
    frame_text *frames;
    size_t frames_cap;
} dump_state;

/* Write one alloc line; returns 0, -1 undefined code (*bad gets it), -2 OOM. */
static int dump_alloc(dump_state *s, mt_reader *r, const mt_event *ev,
                      int64_t dt, int v3, uint64_t *bad)
{
    if (ev->backtrace_len > s->frames_cap) {
        size_t cap = ev->backtrace_len * 2;
        frame_text *f = realloc(s->frames, cap * sizeof *f);
        if (!f)
            return -2;
        s->frames = f;
        s->frames_cap = cap;
    }
    /* Resolve every frame first, so an undefined code prints no partial
     * line. Offsets, not pointers: the cache may rehash and its text move. */
    size_t total = 0;
    for (size_t i = 0; i < ev->backtrace_len; i++) {
        int err = 0;
        text_entry *e = cache_get(&s->cache, r, ev->backtrace[i], &err);
        if (!e) {
            *bad = ev->backtrace[i];
            return err;
        }
        s->frames[i].off = e->off;
        s->frames[i].len = e->len;
        total += e->len;
    }
    if (out_room(&s->out, total + 160))
        return -2;
    char *p = s->out.buf + s->out.len;
    p += fmt_int_pad(p, dt, 10, '0');
    *p++ = ' ';
    p += fmt_int_pad(p, ev->id, 10, '0');
    const char *src = source_name(ev->source);
    size_t sl = strlen(src);
    memcpy(p, src, sl);
    p += sl;
    p += fmt_int_pad(p, ev->nsamples, 0, ' ');
    memcpy(p, " len=", 5);
    p += 5;
    p += fmt_int_pad(p, ev->length, 0, ' ');
    if (v3) {
        memcpy(p, " dom=", 5);
        p += 5;
        p += fmt_int_pad(p, ev->domain, 0, ' ');
    }
    *p++ = ' ';
    if (ev->common_prefix >= 1000)     /* printf "% 4d" */
        *p++ = ' ';
    p += fmt_int_pad(p, ev->common_prefix, 4, ' ');
    *p++ = ':';
    const char *text = s->cache.text;
    for (size_t i = 0; i < ev->backtrace_len; i++) {
        memcpy(p, text + s->frames[i].off, s->frames[i].len);
        p += s->frames[i].len;
    }
    *p++ = '\n';
    s->out.len = (size_t)(p - s->out.buf);
    return 0;
}

static void dump_simple(dump_state *s, int64_t dt, int64_t id, const char *what)
{
    if (out_room(&s->out, 64))
        return;
    char *p = s->out.buf + s->out.len;
    p += fmt_int_pad(p, dt, 10, '0');
    *p++ = ' ';
    p += fmt_int_pad(p, id, 10, '0');
    size_t n = strlen(what);
    memcpy(p, what, n);
    p += n;
    s->out.len = (size_t)(p - s->out.buf);
}

int cmd_dump(int argc, char **argv)
{
    const char *path = NULL;
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        if (!opts_done && strcmp(argv[i], "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (!opts_done && cli_is_help(argv[i])) {
            usage_dump(stdout);
            return EXIT_OK;
        }
        if (!opts_done && argv[i][0] == '-' && argv[i][1] != 0)
            return cli_usage_error("dump", "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error("dump", "expected one TRACE, got more");
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("dump", "missing TRACE argument");

    mt_reader_options opt = {0};
    opt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&opt);
    dump_state s;
    memset(&s, 0, sizeof s);
    if (!r || out_init(&s.out, STDOUT_FILENO) || cache_grow(&s.cache)) {
        cli_error("dump", "out of memory");
        mt_reader_close(r);
        return EXIT_DATA;
    }
    int st = strcmp(path, "-") == 0 ? mt_reader_open_fd(r, STDIN_FILENO)
                                    : mt_reader_open_file(r, path);
    int rc = EXIT_OK;
    if (st == MT_OK) {
        const mt_trace_info *info = mt_reader_info(r);
        int v3 = info->format_version >= 3;
        cli_progress prog;
        progress_start(&prog, "dump", path);
        mt_event ev;
        while ((st = mt_reader_next(r, &ev)) == MT_OK) {
            progress_tick(&prog, r);
            int64_t dt = ev.time - info->start_time;
            if (ev.kind == MT_EVENT_ALLOC) {
                uint64_t bad = 0;
                int e = dump_alloc(&s, r, &ev, dt, v3, &bad);
                if (e) {
                    out_flush(&s.out);
                    if (e == -1)
                        cli_error("dump", "%s: " MT_BAD_CODE_FMT, path,
                                  (unsigned long long)mt_reader_offset(r),
                                  (unsigned long long)bad);
                    else
                        cli_error("dump", "out of memory");
                    rc = EXIT_DATA;
                    break;
                }
            } else {
                dump_simple(&s, dt, ev.id, ev.kind == MT_EVENT_PROMOTE
                                               ? " promote\n" : " collect\n");
            }
            out_maybe_flush(&s.out);
            if (s.out.err)
                break;
        }
        progress_done(&prog);
    }
    out_flush(&s.out);
    /* (a failed write stops the loop with st still MT_OK: that first) */
    if (rc == EXIT_OK && s.out.err) {
        cli_error("dump", "writing standard output: %s", strerror(s.out.err));
        rc = EXIT_DATA;
    }
    if (rc == EXIT_OK && st != MT_EOF) {
        cli_error("dump", "%s: %s", path, mt_reader_error(r));
        rc = EXIT_DATA;
    }
    out_free(&s.out);
    free(s.cache.slots);
    free(s.cache.text);
    free(s.frames);
    mt_reader_close(r);
    return rc;
}
