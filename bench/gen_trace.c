/*
 * gen_trace.c - deterministic synthetic trace generator for the benchmarks.
 *
 *   gen_trace OUT.ctf [SIZE_MB (default 320)] [SEED (default 1)]
 *
 * Writes a memtrace trace (format v2) through the library's writer
 * (mt_writer_open_fd) until the file reaches SIZE_MB * 10^6 bytes. The trace
 * is shaped like a real OCaml trace:
 *  - a call tree of NCODES location codes; each code (a call site) has 1-3
 *    locations (inline chains) in ~100 files and ~1000 functions;
 *  - one call stack that moves between allocations like a program does:
 *    mostly the innermost 1-4 frames change (hot loops), sometimes deeper
 *    excursions; depth stays within 20..80 frames; children are picked with
 *    a skewed distribution so paths recur (the codec's predictor hits);
 *  - a program has a bounded set of call stacks (the OCaml compiler's corpus
 *    trace: 21 thousand distinct folded stacks in 84 thousand allocations),
 *    where an unbounded random walk makes almost every stack new (12 million
 *    distinct in 18 million allocations, a 14 GB flame graph). So the walk
 *    runs for the first RECORD_LEN allocations and its stacks are recorded;
 *    afterwards the program replays stretches of that record, jumping to a
 *    random place every ~JUMP_EVERY allocations: the same moves between
 *    stacks, depths and shared prefixes, at most RECORD_LEN distinct stacks;
 *  - ~80% short minor allocations (1..16 words), the rest long minor, major
 *    and external ones;
 *  - a minor-GC model: every 100-400 allocations the minor allocations since
 *    the previous GC are collected (most) or promoted (some); promoted,
 *    major and external objects are collected later by "major slices";
 *  - timestamps grow by 0-2 us per event from a fixed start time.
 * Everything comes from a seeded PRNG, so the output is byte-identical for a
 * given (SIZE_MB, SEED).
 *
 * After writing, the file is read back with mt_reader and checked against
 * what was written (event counts and a hash of every event and backtrace, and
 * the locations of every code); then the trace's shape is printed.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memtrace/memtrace.h>

#include "bench_util.h"

#define NCODES 3000
#define NFILES 100
#define NFUNCS 1000
#define MAX_CHILD 6
#define MIN_DEPTH 20
#define MAX_DEPTH 80
#define RECORD_LEN 100000 /* allocations walked freely, then replayed */
#define JUMP_EVERY 2000   /* mean replayed stretch, in allocations */
#define CODE_BASE 0x2AAA00000000ull /* codes look like (address >> 1) */
#define CODE_STRIDE_SHIFT 12
#define START_TIME 1764676800000000ll /* 2025-12-02 12:00:00 UTC, in us */

/* ---- the synthetic program ------------------------------------------- */

typedef struct code_info {
    uint64_t code;
    int nchild;
    int child[MAX_CHILD];
    int loc_first; /* index into g_locs */
    int nlocs;
} code_info;

static char g_files[NFILES][40];
static char g_funcs[NFUNCS][48];
static int g_func_file[NFUNCS];
static code_info g_codes[NCODES];
static mt_location g_locs[NCODES * 3];
static int g_nlocs_total;

static void build_program(bench_rng *rng)
{
    for (int f = 0; f < NFILES; f++)
        snprintf(g_files[f], sizeof g_files[f], "src/lib%02d/module_%02d.ml",
                 f / 10, f);
    for (int fn = 0; fn < NFUNCS; fn++) {
        int file = (int)bench_rng_below(rng, NFILES);
        g_func_file[fn] = file;
        snprintf(g_funcs[fn], sizeof g_funcs[fn], "Module_%02d.fn_%04d%s",
                 file, fn, (fn % 7 == 0) ? ".loop" : "");
    }
    g_nlocs_total = 0;
    for (int c = 0; c < NCODES; c++) {
        code_info *ci = &g_codes[c];
        /* distinct: the index sits above the jitter bits */
        ci->code = CODE_BASE + ((uint64_t)c << CODE_STRIDE_SHIFT) +
                   bench_rng_below(rng, 1u << CODE_STRIDE_SHIFT);
        ci->nchild = (int)bench_rng_range(rng, 2, MAX_CHILD);
        for (int k = 0; k < ci->nchild; k++)
            ci->child[k] = (int)bench_rng_below(rng, NCODES);
        double u = bench_rng_unit(rng);
        ci->nlocs = u < 0.85 ? 1 : (u < 0.95 ? 2 : 3);
        ci->loc_first = g_nlocs_total;
        int fn = c % NFUNCS; /* call site c lies in function fn */
        for (int k = 0; k < ci->nlocs; k++) {
            /* inline chain: outermost first; the last is the call site's own
             * function, the others are functions it was inlined into */
            int f = (k == ci->nlocs - 1) ? fn : (int)bench_rng_below(rng, NFUNCS);
            mt_location *l = &g_locs[g_nlocs_total++];
            l->filename = g_files[g_func_file[f]];
            l->function = g_funcs[f];
            l->line = (int)bench_rng_range(rng, 1, 4000);
            l->start_char = (int)bench_rng_range(rng, 0, 120);
            l->end_char = l->start_char + (int)bench_rng_range(rng, 3, 90);
        }
    }
}

static int code_index(uint64_t code)
{
    if (code < CODE_BASE)
        return -1;
    uint64_t idx = (code - CODE_BASE) >> CODE_STRIDE_SHIFT;
    if (idx >= NCODES || g_codes[idx].code != code)
        return -1;
    return (int)idx;
}

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    (void)ctx;
    int idx = code_index(code);
    if (idx < 0)
        return 1;
    *locs = &g_locs[g_codes[idx].loc_first];
    *n = (size_t)g_codes[idx].nlocs;
    return 0;
}

/* ---- FNV-style hash of events (writer side and reader side) ------------- */

#define FNV_INIT 0xcbf29ce484222325ull
static inline uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    /* FNV-style, one 64-bit word at a time */
    h ^= v;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

static uint64_t hash_alloc(uint64_t h, int64_t time, int64_t id, int source,
                           int64_t length, int64_t nsamples,
                           const uint64_t *bt_caller_first, size_t n)
{
    h = fnv_u64(h, 1);
    h = fnv_u64(h, (uint64_t)time);
    h = fnv_u64(h, (uint64_t)id);
    h = fnv_u64(h, (uint64_t)source);
    h = fnv_u64(h, (uint64_t)length);
    h = fnv_u64(h, (uint64_t)nsamples);
    h = fnv_u64(h, (uint64_t)n);
    for (size_t i = 0; i < n; i++)
        h = fnv_u64(h, bt_caller_first[i]);
    return h;
}

static uint64_t hash_pc(uint64_t h, int kind, int64_t time, int64_t id)
{
    h = fnv_u64(h, (uint64_t)kind);
    h = fnv_u64(h, (uint64_t)time);
    h = fnv_u64(h, (uint64_t)id);
    return h;
}

/* ---- statistics -------------------------------------------------------- */

typedef struct stats {
    uint64_t events, allocs, short_allocs, minor, major, external;
    uint64_t promotes, collects, frames, new_frames;
    uint64_t hash;
    unsigned char code_used[NCODES];
} stats;

static uint64_t count_codes(const unsigned char *used)
{
    uint64_t n = 0;
    for (int i = 0; i < NCODES; i++)
        n += used[i] != 0;
    return n;
}

/* ---- generator state ----------------------------------------------------- */

typedef struct gen {
    bench_rng rng;
    mt_writer *w;
    int64_t time;
    int stack[MAX_DEPTH]; /* code indices, [0] = outermost */
    int depth;
    int prev_stack[MAX_DEPTH];
    int prev_depth;
    uint16_t *record;     /* RECORD_LEN stacks of MAX_DEPTH codes */
    uint8_t *record_depth;
    size_t nrecord, replay; /* stacks recorded; next to replay */
    uint64_t cs[MAX_DEPTH]; /* callstack for the writer, callee first */
    uint64_t bt[MAX_DEPTH]; /* same, caller first (for the hash) */
    /* minor allocations since the last minor GC */
    int64_t *young;
    size_t nyoung, cap_young;
    /* promoted / major / external objects awaiting collection */
    int64_t *old;
    size_t nold, cap_old;
    uint64_t next_gc;
    stats st;
} gen;

static void push_id(int64_t **a, size_t *n, size_t *cap, int64_t id)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        *a = realloc(*a, *cap * sizeof **a);
        if (!*a) {
            fprintf(stderr, "gen_trace: out of memory\n");
            exit(1);
        }
    }
    (*a)[(*n)++] = id;
}

static void advance_time(gen *g)
{
    /* half of the events share their predecessor's timestamp */
    uint64_t r = bench_rng_below(&g->rng, 4);
    g->time += r < 2 ? 0 : (int64_t)(r - 1);
}

static void push_frame(gen *g)
{
    int top = g->stack[g->depth - 1];
    const code_info *ci = &g_codes[top];
    double u = bench_rng_unit(&g->rng);
    int k;
    if (u < 0.50)
        k = 0;
    else if (u < 0.75)
        k = 1;
    else
        k = (int)bench_rng_below(&g->rng, (uint64_t)ci->nchild);
    g->stack[g->depth++] = ci->child[k];
}

/* Move the call stack to the next allocation's stack: a step of the walk
 * (recorded) while the record has room, then the next recorded stack. */
static void step_stack(gen *g)
{
    if (g->nrecord == RECORD_LEN) {
        if (g->replay == RECORD_LEN || bench_rng_below(&g->rng, JUMP_EVERY) == 0)
            g->replay = (size_t)bench_rng_below(&g->rng, RECORD_LEN);
        const uint16_t *r = &g->record[g->replay * MAX_DEPTH];
        g->depth = g->record_depth[g->replay++];
        for (int i = 0; i < g->depth; i++)
            g->stack[i] = r[i];
        return;
    }
    double u = bench_rng_unit(&g->rng);
    int pop, push;
    if (u < 0.08) {
        pop = push = 0; /* same stack again (allocation loop) */
    } else if (u < 0.45) {
        pop = push = 1; /* another allocation site in the same function */
    } else if (u < 0.80) {
        pop = (int)bench_rng_range(&g->rng, 2, 4);
        push = (int)bench_rng_range(&g->rng, 2, 4);
    } else if (u < 0.95) {
        pop = (int)bench_rng_range(&g->rng, 5, 12);
        push = (int)bench_rng_range(&g->rng, 5, 12);
    } else {
        pop = (int)bench_rng_range(&g->rng, 13, 40);
        push = (int)bench_rng_range(&g->rng, 13, 40);
    }
    if (pop > g->depth - 1)
        pop = g->depth - 1;
    g->depth -= pop;
    if (g->depth + push > MAX_DEPTH)
        push = MAX_DEPTH - g->depth;
    if (g->depth + push < MIN_DEPTH)
        push = MIN_DEPTH - g->depth + (int)bench_rng_below(&g->rng, 8);
    for (int i = 0; i < push; i++)
        push_frame(g);
    uint16_t *r = &g->record[g->nrecord * MAX_DEPTH];
    for (int i = 0; i < g->depth; i++)
        r[i] = (uint16_t)g->stack[i];
    g->record_depth[g->nrecord++] = (uint8_t)g->depth;
}

static void die_mt(const char *what, int rc, mt_writer *w)
{
    fprintf(stderr, "gen_trace: %s: %s: %s\n", what, mt_status_name(rc),
            w ? mt_writer_error(w) : "");
    exit(1);
}

static void emit_alloc(gen *g)
{
    step_stack(g);
    advance_time(g);

    double u = bench_rng_unit(&g->rng);
    mt_source source = MT_SOURCE_MINOR;
    int64_t length, nsamples = 1;
    if (u < 0.80) {
        /* short: lengths weighted like real traces (2-5 words common) */
        static const int lens[16] = {1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5, 6, 7, 8, 0};
        length = lens[bench_rng_below(&g->rng, 15)];
        if (length == 8)
            length = bench_rng_range(&g->rng, 8, 16);
    } else if (u < 0.90) {
        length = bench_rng_range(&g->rng, 17, 256);
        if (bench_rng_below(&g->rng, 4) == 0)
            nsamples = 2;
    } else if (u < 0.97) {
        source = MT_SOURCE_MAJOR;
        length = 257 + (int64_t)(bench_rng_next(&g->rng) >> (64 - bench_rng_range(&g->rng, 8, 16)));
        nsamples = 1 + (int64_t)bench_rng_below(&g->rng, 3);
    } else {
        source = MT_SOURCE_EXTERNAL;
        length = 128 + (int64_t)(bench_rng_next(&g->rng) >> (64 - bench_rng_range(&g->rng, 8, 23)));
        nsamples = 1 + (int64_t)bench_rng_below(&g->rng, 100);
    }

    int L = g->depth;
    for (int i = 0; i < L; i++) {
        uint64_t c = g_codes[g->stack[i]].code;
        g->bt[i] = c;
        g->cs[L - 1 - i] = c;
        g->st.code_used[g->stack[i]] = 1;
    }
    /* frames the writer has to encode (not covered by the common prefix) */
    int cp = 0;
    while (cp < L && cp < g->prev_depth && g->stack[cp] == g->prev_stack[cp])
        cp++;
    int new_len = L - cp;
    memcpy(g->prev_stack, g->stack, (size_t)L * sizeof g->stack[0]);
    g->prev_depth = L;

    int64_t id = -1;
    int rc = mt_writer_alloc(g->w, g->time, length, nsamples, source, g->cs,
                             (size_t)L, locate, NULL, &id);
    if (rc != MT_OK)
        die_mt("mt_writer_alloc", rc, g->w);
    if (id != (int64_t)g->st.allocs) {
        fprintf(stderr, "gen_trace: writer gave id %" PRId64 ", expected %" PRIu64 "\n",
                id, g->st.allocs);
        exit(1);
    }
    g->st.hash = hash_alloc(g->st.hash, g->time, id, (int)source, length,
                            nsamples, g->bt, (size_t)L);
    g->st.events++;
    g->st.allocs++;
    g->st.frames += (uint64_t)L;
    g->st.new_frames += (uint64_t)new_len;
    if (source == MT_SOURCE_MINOR) {
        g->st.minor++;
        if (length >= 1 && length <= 16 && nsamples == 1 && new_len <= 255)
            g->st.short_allocs++;
        push_id(&g->young, &g->nyoung, &g->cap_young, id);
    } else {
        if (source == MT_SOURCE_MAJOR)
            g->st.major++;
        else
            g->st.external++;
        if (bench_rng_below(&g->rng, 100) >= 3) /* 3% live forever */
            push_id(&g->old, &g->nold, &g->cap_old, id);
    }
}

static void emit_pc(gen *g, int kind, int64_t id)
{
    advance_time(g);
    int rc = kind == MT_EVENT_PROMOTE ? mt_writer_promote(g->w, g->time, id)
                                      : mt_writer_collect(g->w, g->time, id);
    if (rc != MT_OK)
        die_mt(kind == MT_EVENT_PROMOTE ? "mt_writer_promote" : "mt_writer_collect",
               rc, g->w);
    g->st.hash = hash_pc(g->st.hash, kind, g->time, id);
    g->st.events++;
    if (kind == MT_EVENT_PROMOTE)
        g->st.promotes++;
    else
        g->st.collects++;
}

/* Minor GC: young objects die (most) or get promoted; then a major slice
 * collects some old objects. */
static void minor_gc(gen *g)
{
    for (size_t i = 0; i < g->nyoung; i++) {
        int64_t id = g->young[i];
        if (bench_rng_below(&g->rng, 100) < 90) {
            emit_pc(g, MT_EVENT_COLLECT, id);
        } else {
            emit_pc(g, MT_EVENT_PROMOTE, id);
            if (bench_rng_below(&g->rng, 100) >= 5)
                push_id(&g->old, &g->nold, &g->cap_old, id);
        }
    }
    g->nyoung = 0;
    for (size_t i = 0; i < g->nold;) {
        if (bench_rng_below(&g->rng, 100) < 8) {
            emit_pc(g, MT_EVENT_COLLECT, g->old[i]);
            g->old[i] = g->old[--g->nold];
        } else {
            i++;
        }
    }
    g->next_gc = g->st.allocs + (uint64_t)bench_rng_range(&g->rng, 100, 400);
}

/* ---- read back and verify ----------------------------------------------- */

static int verify(const char *path, const stats *want, uint64_t file_bytes)
{
    mt_reader *r = mt_reader_create(NULL);
    if (!r) {
        fprintf(stderr, "gen_trace: mt_reader_create failed\n");
        return 1;
    }
    int rc = mt_reader_open_file(r, path);
    if (rc != MT_OK) {
        fprintf(stderr, "gen_trace: verify: open: %s: %s\n", mt_status_name(rc),
                mt_reader_error(r));
        mt_reader_close(r);
        return 1;
    }
    static stats got;
    memset(&got, 0, sizeof got);
    got.hash = FNV_INIT;
    uint64_t len_hist_short = 0;
    int64_t last_id = -1;
    int bad = 0;
    mt_event ev;
    while ((rc = mt_reader_next(r, &ev)) == MT_OK) {
        got.events++;
        if (ev.kind == MT_EVENT_ALLOC) {
            if (ev.id != last_id + 1 && !bad) {
                fprintf(stderr, "gen_trace: verify: alloc id %" PRId64 " after %" PRId64 "\n",
                        ev.id, last_id);
                bad = 1;
            }
            last_id = ev.id;
            got.allocs++;
            got.frames += ev.backtrace_len;
            got.new_frames += ev.backtrace_len - (uint64_t)ev.common_prefix;
            if (ev.source == MT_SOURCE_MINOR) {
                got.minor++;
                if (ev.length >= 1 && ev.length <= 16 && ev.nsamples == 1 &&
                    ev.backtrace_len - (uint64_t)ev.common_prefix <= 255)
                    len_hist_short++;
            } else if (ev.source == MT_SOURCE_MAJOR) {
                got.major++;
            } else {
                got.external++;
            }
            for (size_t i = 0; i < ev.backtrace_len; i++) {
                int idx = code_index(ev.backtrace[i]);
                if (idx < 0) {
                    if (!bad)
                        fprintf(stderr, "gen_trace: verify: unknown code %" PRIu64 "\n",
                                ev.backtrace[i]);
                    bad = 1;
                } else {
                    got.code_used[idx] = 1;
                }
            }
            got.hash = hash_alloc(got.hash, ev.time, ev.id, (int)ev.source, ev.length,
                                  ev.nsamples, ev.backtrace, ev.backtrace_len);
        } else {
            if (ev.kind == MT_EVENT_PROMOTE)
                got.promotes++;
            else
                got.collects++;
            got.hash = hash_pc(got.hash, (int)ev.kind, ev.time, ev.id);
        }
    }
    if (rc != MT_EOF) {
        fprintf(stderr, "gen_trace: verify: read error after %" PRIu64 " events: %s: %s\n",
                got.events, mt_status_name(rc), mt_reader_error(r));
        bad = 1;
    }
    got.short_allocs = len_hist_short;

    /* locations of every code seen */
    uint64_t loc_mismatch = 0;
    for (int c = 0; c < NCODES; c++) {
        if (!got.code_used[c])
            continue;
        const mt_location *locs;
        size_t n;
        rc = mt_reader_locations(r, g_codes[c].code, &locs, &n);
        int ok = rc == MT_OK && n == (size_t)g_codes[c].nlocs;
        for (size_t k = 0; ok && k < n; k++) {
            const mt_location *a = &locs[k], *b = &g_locs[g_codes[c].loc_first + (int)k];
            ok = strcmp(a->filename, b->filename) == 0 &&
                 strcmp(a->function, b->function) == 0 && a->line == b->line &&
                 a->start_char == b->start_char && a->end_char == b->end_char;
        }
        loc_mismatch += !ok;
    }
    mt_reader_close(r);

#define CHECK(field)                                                           \
    do {                                                                       \
        if (got.field != want->field) {                                        \
            fprintf(stderr, "gen_trace: verify: %s: read %" PRIu64             \
                            ", wrote %" PRIu64 "\n",                           \
                    #field, (uint64_t)got.field, (uint64_t)want->field);       \
            bad = 1;                                                           \
        }                                                                      \
    } while (0)
    CHECK(events);
    CHECK(allocs);
    CHECK(minor);
    CHECK(major);
    CHECK(external);
    CHECK(promotes);
    CHECK(collects);
    CHECK(frames);
    CHECK(new_frames);
    CHECK(hash);
    if (count_codes(got.code_used) != count_codes(want->code_used)) {
        fprintf(stderr, "gen_trace: verify: distinct codes differ\n");
        bad = 1;
    }
    if (loc_mismatch) {
        fprintf(stderr, "gen_trace: verify: %" PRIu64 " codes with wrong locations\n",
                loc_mismatch);
        bad = 1;
    }

    double nev = (double)got.events;
    printf("verify: read back %s: %s\n", path, bad ? "MISMATCH" : "OK (counts, event hash, locations)");
    printf("shape (from the reader):\n");
    printf("  file bytes             %" PRIu64 "\n", file_bytes);
    printf("  events                 %" PRIu64 "\n", got.events);
    printf("  avg event size         %.2f bytes\n", (double)file_bytes / nev);
    printf("  allocs                 %" PRIu64 " (%.1f%% of events)\n", got.allocs,
           100.0 * (double)got.allocs / nev);
    printf("  short allocs           %.1f%% of allocs, %.1f%% of events"
           " (minor, 1..16 words, nsamples 1)\n",
           100.0 * (double)got.short_allocs / (double)got.allocs,
           100.0 * (double)got.short_allocs / nev);
    printf("  minor/major/external   %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n",
           got.minor, got.major, got.external);
    printf("  promotes / collects    %" PRIu64 " / %" PRIu64 "\n", got.promotes,
           got.collects);
    printf("  avg backtrace depth    %.1f frames\n", (double)got.frames / (double)got.allocs);
    printf("  avg new frames/alloc   %.2f (not covered by the common prefix)\n",
           (double)got.new_frames / (double)got.allocs);
    printf("  distinct codes         %" PRIu64 "\n", count_codes(got.code_used));
    printf("  events hash            %016" PRIx64 "\n", got.hash);
    return bad;
}

/* ---- main ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s OUT.ctf [SIZE_MB (default 320)] [SEED (default 1)]\n",
                argv[0]);
        return 2;
    }
    const char *out = argv[1];
    double size_mb = argc > 2 ? strtod(argv[2], NULL) : 320.0;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    if (!(size_mb > 0)) {
        fprintf(stderr, "gen_trace: bad SIZE_MB\n");
        return 2;
    }
    uint64_t target = (uint64_t)(size_mb * 1e6);

    static gen g;
    bench_rng_seed(&g.rng, seed);
    build_program(&g.rng);
    bench_rng_seed(&g.rng, seed ^ 0x5eed5eed5eedull);

    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "gen_trace: %s: %s\n", out, strerror(errno));
        return 1;
    }
    char ctx[128];
    snprintf(ctx, sizeof ctx, "memtrace-c synthetic benchmark trace, seed %" PRIu64, seed);
    mt_trace_info info;
    memset(&info, 0, sizeof info);
    info.sample_rate = 1e-4;
    info.word_size = 64;
    info.executable_name = "/opt/synthetic/bin/gen_trace_workload.exe";
    info.host_name = "bench-host";
    info.runtime_params = "a=2,b=0,c=0,H=0,i=1048576,l=1048576,M=20,m=100,n=0,o=120,O=500,p=0,s=262144,t=0,v=0,w=1,W=0";
    info.pid = 4242;
    info.start_time = START_TIME;
    info.context = ctx;
    mt_writer_options wopt;
    memset(&wopt, 0, sizeof wopt);
    wopt.format_version = 2;
    wopt.no_fork_check = 1;
    char errbuf[256] = "";
    int rc = mt_writer_open_fd(&g.w, fd, &info, &wopt, errbuf, sizeof errbuf);
    if (rc != MT_OK) {
        fprintf(stderr, "gen_trace: mt_writer_open_fd: %s: %s\n", mt_status_name(rc), errbuf);
        return 1;
    }

    g.time = START_TIME;
    g.st.hash = FNV_INIT;
    g.record = malloc((size_t)RECORD_LEN * MAX_DEPTH * sizeof *g.record);
    g.record_depth = malloc(RECORD_LEN);
    if (!g.record || !g.record_depth) {
        fprintf(stderr, "gen_trace: out of memory\n");
        return 1;
    }
    g.stack[0] = 0;
    g.depth = 1;
    while (g.depth < 40)
        push_frame(&g);
    g.next_gc = (uint64_t)bench_rng_range(&g.rng, 100, 400);

    double t0 = bench_now();
    for (uint64_t iter = 0;; iter++) {
        if ((iter & 0xFFF) == 0) {
            struct stat sb;
            if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size >= target)
                break;
        }
        emit_alloc(&g);
        if (g.st.allocs >= g.next_gc)
            minor_gc(&g);
    }
    /* final GC so that the trace ends with collections, then close */
    minor_gc(&g);
    rc = mt_writer_close(g.w);
    g.w = NULL;
    if (rc != MT_OK)
        die_mt("mt_writer_close", rc, NULL);
    double t1 = bench_now();
    struct stat sb;
    if (fstat(fd, &sb) != 0 || close(fd) != 0) {
        fprintf(stderr, "gen_trace: %s: %s\n", out, strerror(errno));
        return 1;
    }
    uint64_t bytes = (uint64_t)sb.st_size;

    printf("gen_trace: wrote %s: %" PRIu64 " bytes, %" PRIu64 " events in %.2f s (seed %" PRIu64 ")\n",
           out, bytes, g.st.events, t1 - t0, seed);
    printf("shape (from the generator):\n");
    printf("  allocs %" PRIu64 " (short form %.1f%%: minor %" PRIu64 ", major %" PRIu64
           ", external %" PRIu64 "), promotes %" PRIu64 ", collects %" PRIu64 "\n",
           g.st.allocs, 100.0 * (double)g.st.short_allocs / (double)g.st.allocs,
           g.st.minor, g.st.major, g.st.external, g.st.promotes, g.st.collects);
    printf("  short-form allocs are %.1f%% of all events; avg event size %.2f bytes\n",
           100.0 * (double)g.st.short_allocs / (double)g.st.events,
           (double)bytes / (double)g.st.events);
    printf("  avg backtrace depth %.1f frames, avg new frames/alloc %.2f, distinct codes %" PRIu64
           " (of %d)\n",
           (double)g.st.frames / (double)g.st.allocs,
           (double)g.st.new_frames / (double)g.st.allocs, count_codes(g.st.code_used), NCODES);
    fflush(stdout);
    return verify(out, &g.st, bytes) ? 1 : 0;
}
