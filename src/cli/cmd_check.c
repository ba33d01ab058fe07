/*
 * cmd_check.c - `memtrace check [--json] TRACE`: validate a whole trace and
 * print a one-screen summary.
 *
 * Every packet and event goes through the library's reader with backtrace
 * decoding on (so cache verifiers are checked too), and every location code
 * a backtrace references is resolved once: a code that no location event
 * defined is an error, as it is for `dump`. On top of what the format
 * forbids, semantic oddities the reference writer accepts are counted as
 * warnings (collect of an unknown or dead id, promote of an object that is
 * not a live minor allocation, negative lengths, nsamples <= 0).
 *
 * A backtrace's codes are looked up only when it may hold a code not seen
 * before (analysis/newcodes.h): the reader's count of new codes makes that
 * rare. Memory: a set of the distinct location codes and the live object
 * ids (a ring of recent ids, a hash table of older survivors); nothing
 * grows with the size of the file otherwise.
 *
 * What the public API does not tell: packet counts (only the skipped ones,
 * through the diagnostics callback) and the byte offset where an event
 * starts (mt_reader_offset gives the offset just past it, so an undefined
 * location code is reported there).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "util/json.h"
#include "cli/progress.h"
#include "util/u64map.h"
#include "analysis/newcodes.h"

void usage_check(FILE *out)
{
    fputs(
        "Usage: memtrace check [OPTIONS] TRACE\n"
        "\n"
        "Validate TRACE completely: every packet header, every event, every\n"
        "backtrace (decoded in full, with the codec's cache verifiers checked),\n"
        "and the locations of every location code a backtrace uses (a code that\n"
        "no location event defines is an error). Then print a summary on\n"
        "standard output:\n"
        "\n"
        "  file             TRACE and its size in bytes\n"
        "  format           format version of the trace (v001, v002, v003)\n"
        "  result           valid (\"valid\", \"valid, with N warnings\", then\n"
        "                   \", N packets skipped\" or \"and N packets skipped\"\n"
        "                   when the reader skipped some), or INVALID (\"INVALID\n"
        "                   at offset N (read up to there)\", or \"INVALID (could\n"
        "                   not be read)\" when TRACE could not be opened)\n"
        "  skipped packets  packets the reader skipped, by reason: out of order\n"
        "                   (after a lost packet), wrong pid (another process's\n"
        "                   packet), truncated (cut by the end of the file); the\n"
        "                   first few are listed with their byte offsets\n"
        "  events           allocations (minor / major / external), promotions,\n"
        "                   collections\n"
        "  location codes   distinct codes referenced by backtraces, and how many\n"
        "                   of them have an empty location list\n"
        "  backtraces       longest backtrace (frames), frames in all, empty ones\n"
        "  time span        seconds from the first to the last event\n"
        "  warnings:        semantic oddities that the format allows and the\n"
        "                   reference writer accepts, each with a count and its\n"
        "                   first occurrence (event number, object id):\n"
        "                   collect or promote of an id never allocated or no\n"
        "                   longer live, promote of an object that is not a live\n"
        "                   minor allocation (major, external, already promoted),\n"
        "                   negative length, nsamples <= 0\n"
        "\n"
        "On the first error the summary covers what was read before it, and the\n"
        "error goes to standard error as\n"
        "  memtrace check: TRACE: offset N: MESSAGE\n"
        "(for an undefined location code, N is the offset just after the\n"
        "allocation event that uses it).\n"
        "The packet total is not reported (the library does not expose it).\n"
        "TRACE '-' reads stdin.\n"
        "\n"
        "Options:\n"
        "  --json       print the summary as one JSON object instead: the same\n"
        "               fields, \"valid\" (true/false), \"error\" (null, or its\n"
        "               offset and message) and one entry per warning kind\n"
        "  -h, --help   show this help\n"
        "\n"
        "Exit status: 0 the trace is valid (warnings and skipped packets do not\n"
        "change this: the reference tools read such traces); 1 malformed trace,\n"
        "undefined location code or I/O error; 2 bad usage.\n",
        out);
}

/* ---- the check -------------------------------------------------------- */

enum { LIVE_MINOR = 1, LIVE_MAJOR, LIVE_EXTERNAL, LIVE_PROMOTED };

enum {
    W_COLLECT_UNKNOWN,
    W_COLLECT_DEAD,
    W_PROMOTE_UNKNOWN,
    W_PROMOTE_DEAD,
    W_PROMOTE_NOT_MINOR,
    W_NEGATIVE_LENGTH,
    W_NSAMPLES,
    W_COUNT
};

static const char *const warn_key[W_COUNT] = {
    "collect_never_allocated", "collect_not_live", "promote_never_allocated",
    "promote_not_live", "promote_not_minor", "negative_length",
    "nsamples_not_positive"};
static const char *const warn_text[W_COUNT] = {
    "collect of an id never allocated",
    "collect of an id no longer live (already collected)",
    "promote of an id never allocated",
    "promote of an id no longer live (already collected)",
    "promote of an object not on the minor heap (major, external or promoted)",
    "allocation with a negative length",
    "allocation with nsamples <= 0"};

typedef struct warning {
    uint64_t count;
    uint64_t event;              /* 1-based event number of the first one  */
    int64_t id, value;           /* its object id; length or nsamples      */
} warning;

#define MAX_SKIPS_LISTED 5

typedef struct skip_rec {
    mt_diag_kind kind;
    uint64_t offset;
    char message[160];
} skip_rec;

/* Live object ids and their LIVE_* tags. Ids are handed out in sequence
 * and most objects die young, so the last ID_RING ids sit in a ring of tags
 * indexed by id (a put and a take touch one byte, where a hash table misses
 * the cache on both); an id still live when the ring moves past it goes to
 * a hash table of older survivors. */
#define ID_RING (1u << 16)
#define ID_MASK (ID_RING - 1)

typedef struct idset {
    uint8_t *ring;               /* tag + 1 of ids [base, base + ID_RING); 0 */
    uint64_t base;               /* (ids as unsigned: any int64 works)       */
    u64map old;
} idset;

static int in_ring(const idset *t, uint64_t id)
{
    return t->ring && id - t->base < ID_RING && (int64_t)id >= (int64_t)t->base;
}

/* Insert or overwrite; 0, or -1 when out of memory. */
static int idset_put(idset *t, int64_t sid, unsigned tag)
{
    uint64_t id = (uint64_t)sid;
    if (!t->ring) {
        if (!(t->ring = calloc(ID_RING, 1)))
            return -1;
        t->base = id;
    }
    if (sid < (int64_t)t->base)
        return u64map_put(&t->old, id, tag);
    if (id - t->base >= ID_RING) {      /* move the ring to end at id */
        uint64_t nb = id - ID_RING + 1, steps = nb - t->base;
        for (uint64_t i = 0; i < steps && i < ID_RING; i++) {
            uint8_t *e = &t->ring[(t->base + i) & ID_MASK];
            if (*e && u64map_put(&t->old, t->base + i, *e - 1u))
                return -1;
            *e = 0;
        }
        t->base = nb;
    }
    t->ring[id & ID_MASK] = (uint8_t)(tag + 1);
    return 0;
}

/* 1 and the tag in *tag if id is live, else 0. */
static int idset_get(const idset *t, int64_t sid, unsigned *tag)
{
    uint64_t id = (uint64_t)sid;
    if (in_ring(t, id)) {
        unsigned e = t->ring[id & ID_MASK];
        *tag = e - 1u;
        return e != 0;
    }
    const uint64_t *v = u64map_get(&t->old, id);
    if (v)
        *tag = (unsigned)*v;
    return v != NULL;
}

/* Remove id; 1 if it was live, else 0. */
static int idset_del(idset *t, int64_t sid)
{
    uint64_t id = (uint64_t)sid, v;
    if (in_ring(t, id)) {
        uint8_t *e = &t->ring[id & ID_MASK];
        int was = *e != 0;
        *e = 0;
        return was;
    }
    return u64map_del(&t->old, id, &v);
}

static void idset_free(idset *t)
{
    free(t->ring);
    u64map_free(&t->old);
}

typedef struct check_state {
    mt_reader *r;
    int64_t start_time;
    /* skipped packets */
    uint64_t skipped[4];         /* by mt_diag_kind (1..3)                 */
    skip_rec skips[MAX_SKIPS_LISTED];
    size_t nskips;
    /* events */
    uint64_t events, allocs[3], promotes, collects;
    int64_t first_time, last_time;
    /* backtraces and codes */
    u64map codes;                /* code -> number of locations            */
    uint64_t codes_empty, frames, empty_bt, longest;
    int have_prev_bt, prev_domain;
    uint64_t prev_len;           /* frames of the previous allocation      */
    mt_newcodes newcodes;        /* which frames may hold unchecked codes  */
    /* object ids */
    idset live;                  /* id -> LIVE_*                           */
    int any_alloc;
    int64_t min_id, max_id;
    warning warn[W_COUNT];
    /* failure inside the callback */
    int oom, bad_code;
    uint64_t bad_code_value, bad_event;
} check_state;

static void on_diag(void *ctx, mt_diag_kind kind, uint64_t offset,
                    const char *message)
{
    check_state *s = ctx;
    if (kind >= 1 && kind <= 3)
        s->skipped[kind]++;
    if (s->nskips < MAX_SKIPS_LISTED) {
        skip_rec *k = &s->skips[s->nskips++];
        k->kind = kind;
        k->offset = offset;
        snprintf(k->message, sizeof k->message, "%s", message);
    }
}

static void warn(check_state *s, int w, int64_t id, int64_t value)
{
    warning *x = &s->warn[w];
    if (x->count++ == 0) {
        x->event = s->events;
        x->id = id;
        x->value = value;
    }
}

static int allocated_before(const check_state *s, int64_t id)
{
    return s->any_alloc && id >= s->min_id && id <= s->max_id;
}

static int on_event(void *ctx, const mt_event *ev)
{
    check_state *s = ctx;
    s->events++;
    if (s->events == 1)
        s->first_time = ev->time;
    s->last_time = ev->time;
    unsigned tag;
    switch (ev->kind) {
    case MT_EVENT_ALLOC: {
        size_t n = ev->backtrace_len;
        if ((unsigned)ev->source < 3)
            s->allocs[ev->source]++;
        s->frames += n;
        if (n == 0)
            s->empty_bt++;
        if (n > s->longest)
            s->longest = n;
        /* The first common_prefix frames are the previous allocation's
         * (same domain), whose codes were checked then: start after them. */
        size_t from = 0;
        if (s->have_prev_bt && ev->domain == s->prev_domain &&
            ev->common_prefix > 0 && (uint64_t)ev->common_prefix <= s->prev_len &&
            (uint64_t)ev->common_prefix <= n)
            from = (size_t)ev->common_prefix;
        s->have_prev_bt = 1;
        s->prev_domain = ev->domain;
        s->prev_len = n;
        uint64_t prev = 0;
        int have_prev = 0;
        if (!mt_newcodes_possible(&s->newcodes, ev, from))
            from = n;                       /* every code was checked before */
        for (size_t i = from; i < n; i++) {
            uint64_t code = ev->backtrace[i];
            if (have_prev && code == prev)      /* runs of recursion */
                continue;
            prev = code;
            have_prev = 1;
            if (u64map_get(&s->codes, code))
                continue;
            const mt_location *locs;
            size_t nl;
            if (mt_reader_locations(s->r, code, &locs, &nl) != MT_OK) {
                s->bad_code = 1;
                s->bad_code_value = code;
                s->bad_event = s->events;
                return 1;
            }
            if (u64map_put(&s->codes, code, nl)) {
                s->oom = 1;
                return 1;
            }
            if (nl == 0)
                s->codes_empty++;
        }
        if (ev->length < 0)
            warn(s, W_NEGATIVE_LENGTH, ev->id, ev->length);
        if (ev->nsamples <= 0)
            warn(s, W_NSAMPLES, ev->id, ev->nsamples);
        tag = ev->source == MT_SOURCE_MINOR ? LIVE_MINOR
              : ev->source == MT_SOURCE_MAJOR ? LIVE_MAJOR : LIVE_EXTERNAL;
        if (idset_put(&s->live, ev->id, tag)) {
            s->oom = 1;
            return 1;
        }
        if (!s->any_alloc || ev->id < s->min_id)
            s->min_id = ev->id;
        if (!s->any_alloc || ev->id > s->max_id)
            s->max_id = ev->id;
        s->any_alloc = 1;
        break;
    }
    case MT_EVENT_PROMOTE:
        s->promotes++;
        if (!idset_get(&s->live, ev->id, &tag))
            warn(s, allocated_before(s, ev->id) ? W_PROMOTE_DEAD : W_PROMOTE_UNKNOWN,
                 ev->id, 0);
        else if (tag != LIVE_MINOR)
            warn(s, W_PROMOTE_NOT_MINOR, ev->id, 0);
        else if (idset_put(&s->live, ev->id, LIVE_PROMOTED)) {
            s->oom = 1;
            return 1;
        }
        break;
    case MT_EVENT_COLLECT:
        s->collects++;
        if (!idset_del(&s->live, ev->id))
            warn(s, allocated_before(s, ev->id) ? W_COLLECT_DEAD : W_COLLECT_UNKNOWN,
                 ev->id, 0);
        break;
    }
    return 0;
}

/* ---- output ----------------------------------------------------------- */

typedef struct result {
    const char *path;
    const mt_trace_info *info;   /* NULL if the trace could not be opened  */
    int have_size;
    uint64_t size;
    int valid;
    int has_offset;
    uint64_t err_offset;
    const char *err_message;     /* without the "offset N: " prefix        */
} result;

static const char *skip_name(mt_diag_kind k)
{
    return k == MT_DIAG_OUT_OF_ORDER ? "out_of_order"
           : k == MT_DIAG_WRONG_PID ? "wrong_pid"
           : k == MT_DIAG_TRUNCATED ? "truncated" : "other";
}

static uint64_t total_warnings(const check_state *s)
{
    uint64_t n = 0;
    for (int i = 0; i < W_COUNT; i++)
        n += s->warn[i].count;
    return n;
}

static void print_text(FILE *out, const result *res, const check_state *s)
{
    fprintf(out, "file:            %s", res->path);
    if (res->have_size)
        fprintf(out, " (%llu bytes)", (unsigned long long)res->size);
    fputc('\n', out);
    if (res->info)
        fprintf(out, "format:          v%03d\n", res->info->format_version);
    uint64_t nw = total_warnings(s);
    uint64_t nskip = s->skipped[1] + s->skipped[2] + s->skipped[3];
    if (!res->valid && res->has_offset)
        fprintf(out, "result:          INVALID at offset %llu (read up to there)\n",
                (unsigned long long)res->err_offset);
    else if (!res->valid)
        fputs("result:          INVALID (could not be read)\n", out);
    else {
        fputs("result:          valid", out);
        if (nw)
            fprintf(out, ", with %llu warning%s", (unsigned long long)nw, nw == 1 ? "" : "s");
        if (nskip)
            fprintf(out, "%s %llu packet%s skipped", nw ? " and" : ",",
                    (unsigned long long)nskip, nskip == 1 ? "" : "s");
        fputc('\n', out);
    }
    if (!res->info)
        return;
    fprintf(out, "skipped packets: %llu", (unsigned long long)nskip);
    if (nskip)
        fprintf(out, " (out of order %llu, wrong pid %llu, truncated %llu)",
                (unsigned long long)s->skipped[MT_DIAG_OUT_OF_ORDER],
                (unsigned long long)s->skipped[MT_DIAG_WRONG_PID],
                (unsigned long long)s->skipped[MT_DIAG_TRUNCATED]);
    fputc('\n', out);
    for (size_t i = 0; i < s->nskips; i++)
        fprintf(out, "  offset %llu: %s\n", (unsigned long long)s->skips[i].offset,
                s->skips[i].message);
    if (nskip > s->nskips)
        fprintf(out, "  ... %llu more\n", (unsigned long long)(nskip - s->nskips));
    uint64_t na = s->allocs[0] + s->allocs[1] + s->allocs[2];
    fprintf(out, "events:          %llu\n", (unsigned long long)s->events);
    fprintf(out, "  allocs:        %llu (minor %llu, major %llu, external %llu)\n",
            (unsigned long long)na, (unsigned long long)s->allocs[0],
            (unsigned long long)s->allocs[1], (unsigned long long)s->allocs[2]);
    fprintf(out, "  promotes:      %llu\n", (unsigned long long)s->promotes);
    fprintf(out, "  collects:      %llu\n", (unsigned long long)s->collects);
    fprintf(out, "location codes:  %llu distinct, %llu without location\n",
            (unsigned long long)s->codes.n, (unsigned long long)s->codes_empty);
    fprintf(out, "backtraces:      longest %llu frames, %llu frames in all, %llu empty\n",
            (unsigned long long)s->longest, (unsigned long long)s->frames,
            (unsigned long long)s->empty_bt);
    if (s->events)
        fprintf(out, "time span:       %.6f s (events from +%.6f s to +%.6f s after the start)\n",
                (double)(s->last_time - s->first_time) * 1e-6,
                (double)(s->first_time - s->start_time) * 1e-6,
                (double)(s->last_time - s->start_time) * 1e-6);
    else
        fputs("time span:       0 s (no events)\n", out);
    if (nw) {
        fputs("warnings:\n", out);
        for (int i = 0; i < W_COUNT; i++) {
            const warning *w = &s->warn[i];
            if (!w->count)
                continue;
            fprintf(out, "  %s: %llu (first: event %llu, id %lld",
                    warn_text[i], (unsigned long long)w->count,
                    (unsigned long long)w->event, (long long)w->id);
            if (i == W_NEGATIVE_LENGTH)
                fprintf(out, ", length %lld", (long long)w->value);
            else if (i == W_NSAMPLES)
                fprintf(out, ", nsamples %lld", (long long)w->value);
            fputs(")\n", out);
        }
    }
}

static void print_json(FILE *out, const result *res, const check_state *s)
{
    fputs("{\n  \"file\": ", out);
    json_str(out, res->path);
    if (res->have_size)
        fprintf(out, ",\n  \"file_size\": %llu", (unsigned long long)res->size);
    else
        fputs(",\n  \"file_size\": null", out);
    if (res->info)
        fprintf(out, ",\n  \"format_version\": %d", res->info->format_version);
    else
        fputs(",\n  \"format_version\": null", out);
    fprintf(out, ",\n  \"valid\": %s", res->valid ? "true" : "false");
    if (res->valid) {
        fputs(",\n  \"error\": null", out);
    } else {
        fputs(",\n  \"error\": {\"offset\": ", out);
        if (res->has_offset)
            fprintf(out, "%llu", (unsigned long long)res->err_offset);
        else
            fputs("null", out);
        fputs(", \"message\": ", out);
        json_str(out, res->err_message);
        fputs("}", out);
    }
    uint64_t nskip = s->skipped[1] + s->skipped[2] + s->skipped[3];
    fprintf(out, ",\n  \"skipped_packets\": {\"total\": %llu, \"out_of_order\": %llu, "
            "\"wrong_pid\": %llu, \"truncated\": %llu, \"first\": [",
            (unsigned long long)nskip,
            (unsigned long long)s->skipped[MT_DIAG_OUT_OF_ORDER],
            (unsigned long long)s->skipped[MT_DIAG_WRONG_PID],
            (unsigned long long)s->skipped[MT_DIAG_TRUNCATED]);
    for (size_t i = 0; i < s->nskips; i++) {
        fprintf(out, "%s\n    {\"reason\": \"%s\", \"offset\": %llu, \"message\": ",
                i ? "," : "", skip_name(s->skips[i].kind),
                (unsigned long long)s->skips[i].offset);
        json_str(out, s->skips[i].message);
        fputs("}", out);
    }
    fputs(s->nskips ? "\n  ]}" : "]}", out);
    uint64_t na = s->allocs[0] + s->allocs[1] + s->allocs[2];
    fprintf(out, ",\n  \"events\": {\"total\": %llu, \"allocs\": %llu, "
            "\"allocs_minor\": %llu, \"allocs_major\": %llu, "
            "\"allocs_external\": %llu, \"promotes\": %llu, \"collects\": %llu}",
            (unsigned long long)s->events, (unsigned long long)na,
            (unsigned long long)s->allocs[0], (unsigned long long)s->allocs[1],
            (unsigned long long)s->allocs[2], (unsigned long long)s->promotes,
            (unsigned long long)s->collects);
    fprintf(out, ",\n  \"location_codes\": {\"distinct\": %llu, \"without_location\": %llu}",
            (unsigned long long)s->codes.n, (unsigned long long)s->codes_empty);
    fprintf(out, ",\n  \"backtraces\": {\"longest\": %llu, \"frames\": %llu, \"empty\": %llu}",
            (unsigned long long)s->longest, (unsigned long long)s->frames,
            (unsigned long long)s->empty_bt);
    if (s->events)
        fprintf(out, ",\n  \"time\": {\"first_event_us\": %lld, \"last_event_us\": %lld, "
                "\"span_s\": %.6f}",
                (long long)(s->first_time - s->start_time),
                (long long)(s->last_time - s->start_time),
                (double)(s->last_time - s->first_time) * 1e-6);
    else
        fputs(",\n  \"time\": {\"first_event_us\": null, \"last_event_us\": null, "
              "\"span_s\": 0}", out);
    fprintf(out, ",\n  \"warnings\": {\"total\": %llu", (unsigned long long)total_warnings(s));
    for (int i = 0; i < W_COUNT; i++) {
        const warning *w = &s->warn[i];
        fprintf(out, ",\n    \"%s\": {\"count\": %llu", warn_key[i],
                (unsigned long long)w->count);
        if (w->count)
            fprintf(out, ", \"first_event\": %llu, \"first_id\": %lld",
                    (unsigned long long)w->event, (long long)w->id);
        if (w->count && (i == W_NEGATIVE_LENGTH || i == W_NSAMPLES))
            fprintf(out, ", \"first_value\": %lld", (long long)w->value);
        fputs("}", out);
    }
    fputs("\n  }\n}\n", out);
}

/* ---- the command ------------------------------------------------------ */

int cmd_check(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0;
    int opts_done = 0;
    for (int i = 1; i < argc; i++) {
        if (!opts_done && strcmp(argv[i], "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (!opts_done && cli_is_help(argv[i])) {
            usage_check(stdout);
            return EXIT_OK;
        }
        if (!opts_done && strcmp(argv[i], "--json") == 0) {
            json = 1;
            continue;
        }
        if (!opts_done && argv[i][0] == '-' && argv[i][1] != 0)
            return cli_usage_error("check", "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error("check", "expected one TRACE, got more");
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("check", "missing TRACE argument");

    check_state *s = calloc(1, sizeof *s);
    if (!s) {
        cli_error("check", "out of memory");
        return EXIT_DATA;
    }
    mt_reader_options opt = {0};
    opt.diag = on_diag;
    opt.diag_ctx = s;
    mt_reader *r = mt_reader_create(&opt);
    if (!r) {
        free(s);
        cli_error("check", "out of memory");
        return EXIT_DATA;
    }
    s->r = r;
    int is_stdin = strcmp(path, "-") == 0;
    int st = is_stdin ? mt_reader_open_fd(r, STDIN_FILENO)
                      : mt_reader_open_file(r, path);

    result res;
    memset(&res, 0, sizeof res);
    res.path = path;
    struct stat sb;
    if (is_stdin ? fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)
                 : stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        res.have_size = 1;
        res.size = (uint64_t)sb.st_size;
    }

    char msg[600];
    int oom = 0;
    if (st == MT_OK) {
        res.info = mt_reader_info(r);
        s->start_time = res.info->start_time;
        st = cli_scan(r, "check", path, on_event, s);
        if (st == MT_OK && s->bad_code) {
            res.has_offset = 1;
            res.err_offset = mt_reader_offset(r);
            snprintf(msg, sizeof msg, "invalid location code %08llx: no location "
                     "event defines it (in event %llu, an allocation ending at this offset)",
                     (unsigned long long)s->bad_code_value,
                     (unsigned long long)s->bad_event);
            res.err_message = msg;
        } else if (st == MT_OK && s->oom) {
            oom = 1;
        } else if (st == MT_EOF) {
            res.valid = 1;
            if (!res.have_size) {           /* a pipe: everything was read */
                res.have_size = 1;
                res.size = mt_reader_offset(r);
            }
        }
    }
    if (!res.valid && !oom && !res.err_message) {
        /* the library's message: "offset N: text" (no offset for open errors) */
        const char *e = mt_reader_error(r);
        unsigned long long off;
        int used = 0;
        if (sscanf(e, "offset %llu: %n", &off, &used) == 1 && used > 0) {
            res.has_offset = 1;
            res.err_offset = off;
            e += used;
        }
        snprintf(msg, sizeof msg, "%s", e);
        res.err_message = msg;
    }

    int rc = EXIT_OK;
    if (oom) {
        cli_error("check", "out of memory");
        rc = EXIT_DATA;
    } else {
        if (json)
            print_json(stdout, &res, s);
        else
            print_text(stdout, &res, s);
        if (!res.valid) {
            if (res.has_offset)
                cli_error("check", "%s: offset %llu: %s", path,
                          (unsigned long long)res.err_offset, res.err_message);
            else
                cli_error("check", "%s: %s", path, res.err_message);
            rc = EXIT_DATA;
        }
    }
    if (cli_flush_stdout("check", rc == EXIT_OK))
        rc = EXIT_DATA;
    u64map_free(&s->codes);
    idset_free(&s->live);
    free(s);
    mt_reader_close(r);
    return rc;
}
