/*
 * analysis.h - the analysis layer under `memtrace top`, `live` and `diff`:
 * byte estimates from samples, the shared object filter (mt_filter, with
 * its command-line parsing and help text), a scan engine that decides on
 * every sampled object when it is collected or at the end of the trace
 * (live-object table, interned stacks), and a live-heap timeline.
 *
 * Memory is bounded by the number of live objects, distinct stacks and
 * the timeline's fixed number of bins, never by the size of the trace.
 * All times in this layer are microseconds since the trace's start_time.
 */
#ifndef MT_ANALYSIS_H
#define MT_ANALYSIS_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "memtrace/memtrace.h"

/* The error of an allocation whose backtrace holds a code that no location
 * event defined: arguments (unsigned long long) the offset just past the
 * allocation (mt_reader_offset while it is the current event) and the code.
 * Every command words it the same; `check` adds the event's number. */
#define MT_BAD_CODE_FMT "offset %llu: invalid location code %08llx: no location event " \
                        "defines it (in the allocation ending at this offset)"

/* The first damage of the trace at path, every check made (backtraces
 * decoded, each code's locations looked up): for a command that read it
 * without backtraces and failed, the error every other command gives.
 * 1 with its message ("offset N: ...") in err; 0 when it finds none it
 * can name (path "-", which cannot be read again; out of memory; I/O). */
int mt_first_damage(const char *path, char *err, size_t errsize);

/* ---- estimates --------------------------------------------------------- */

/* Estimated bytes allocated by nsamples samples: nsamples / rate words of
 * word_size/8 bytes each (unbiased: each word is sampled with probability
 * rate). */
static inline double mt_est_bytes(int64_t nsamples, const mt_trace_info *info)
{
    return (double)nsamples / info->sample_rate * (double)(info->word_size / 8);
}

/* Relative standard error of an estimate built from n samples: the sample
 * count is (nearly) Poisson, so about 1/sqrt(n). 0 for n <= 0. */
static inline double mt_est_rse(int64_t n)
{
    return n > 0 ? 1.0 / sqrt((double)n) : 0.0;
}

/* Below this many samples an estimate's error is worth showing. */
#define MT_EST_FEW_SAMPLES 100

/* ---- filter ------------------------------------------------------------ */

typedef enum {
    MT_LIVE_ANY = 0,     /* no --live-at                                     */
    MT_LIVE_TIME,        /* --live-at SECONDS                                */
    MT_LIVE_PEAK,        /* --live-at peak (resolved by a first pass)        */
    MT_LIVE_END          /* --live-at end: never collected                   */
} mt_live_mode;

typedef struct mt_filter {
    int has_from, has_to;
    int64_t from, to;                 /* us since start: alloc in [from, to) */
    mt_live_mode live_mode;
    int64_t live_at;                  /* us since start (MT_LIVE_TIME)      */
    int has_min_size, has_max_size;
    double min_size, max_size;        /* bytes: length * word_size / 8      */
    int has_min_life, has_max_life;
    int64_t min_life, max_life;       /* us                                 */
    unsigned sources;                 /* bit (1 << mt_source); 0 = all      */
    char **in, **not_in, **hide;      /* function-name substrings           */
    size_t nin, nnot_in, nhide;
    struct substrset *hide_set;       /* hide, looked for at once, once     */
                                      /* mt_filter_ready made it (or NULL)  */
} mt_filter;

void mt_filter_init(mt_filter *f);
void mt_filter_free(mt_filter *f);

/* Try to parse argv[*i] (and its value, argv[*i + 1], when it takes one) as a
 * filter option. Returns 1 and advances *i past what it used when it was
 * one, 0 when argv[*i] is no filter option, -1 on a bad value or a missing
 * one (message in err). Both "--opt VALUE" and "--opt=VALUE" are accepted. */
int mt_filter_parse_arg(mt_filter *f, int argc, char **argv, int *i,
                        char *err, size_t errlen);

/* Check f once its command line is read: bounds that no object can meet
 * are a mistake (a usage error), not an empty report. Only the final
 * values count, so a repeated option (the last one wins) is judged by its
 * last value, in whatever order the options came. 0 when they can be met;
 * -1, with a message naming both options and their values in err (errlen
 * bytes), when --from is not before --to, or --min-size is above
 * --max-size, or --min-lifetime above --max-lifetime (equal sizes and
 * lifetimes are a window; equal times are not, --to being exclusive). */
int mt_filter_check(const mt_filter *f, char *err, size_t errlen);

/* Get f ready for use once its command line is read: the --hide names
 * made a set looked for at once (mt_filter_hides works without it, with a
 * search per name). 0, or -1 when out of memory. Copies of f made after it
 * share the set; mt_filter_free of f frees it. */
int mt_filter_ready(mt_filter *f);

/* Help text of the filter options (a section of every command's --help). */
void mt_filter_help(FILE *out);

/* Nonzero when any filter option was given. */
int mt_filter_active(const mt_filter *f);

/* Nonzero when the filter uses function names (needs backtraces). */
int mt_filter_needs_names(const mt_filter *f);

/* Nonzero when --hide names the function (a substring of it): its frames
 * are left out of backtraces. */
int mt_filter_hides(const mt_filter *f, const char *function);
/* The same for a name of len bytes (not NUL-terminated). */
int mt_filter_hides_n(const mt_filter *f, const char *name, size_t len);

/* ---- scan engine -------------------------------------------------------- */

/* A distinct backtrace, interned. site is the innermost location that is
 * not hidden by --hide (innermost code first, the last location of a code
 * first), or NULL when the backtrace has none. */
typedef struct mt_stack {
    uint32_t id;                      /* 0, 1, ... in order of first use     */
    const uint64_t *codes;            /* caller first                        */
    size_t len;
    const mt_location *site;
    int match;                        /* passes --in / --not-in              */
} mt_stack;

/* One sampled object, decided when collected or at the end of the trace. */
typedef struct mt_object {
    int64_t id;
    int64_t alloc_time;               /* us since start                      */
    int64_t collect_time;             /* us since start; -1: never collected */
    int64_t length;                   /* words                               */
    int64_t nsamples;
    mt_source source;
    const mt_stack *stack;
    uint32_t user;                    /* what mt_scan.on_alloc returned      */
} mt_object;

#define MT_NEVER (-1)

typedef struct mt_scan mt_scan;
typedef int (*mt_object_fn)(void *ctx, const mt_object *o);

/* Live-heap timeline: sample counts allocated and collected per time bin.
 * The bins start 1 us wide and double (adjacent bins merged, so nothing is
 * lost) whenever a time falls beyond the last one: the resolution is the
 * trace's duration / MT_TL_BINS or better, exact for traces shorter than
 * MT_TL_BINS us. A scan's timeline ends with bins as wide as the trace's
 * end makes them, whichever objects the filter let in. */
#define MT_TL_BINS 65536
typedef struct mt_timeline {
    int64_t width;                    /* us per bin                          */
    int64_t *alloc, *coll;            /* nsamples per bin                    */
    int64_t end;                      /* last event time of the trace        */
} mt_timeline;

int mt_timeline_init(mt_timeline *t);   /* 0, or -1 out of memory */
void mt_timeline_free(mt_timeline *t);
/* Account an object: alloc at time a, collected at c (MT_NEVER: never). */
int mt_timeline_add(mt_timeline *t, int64_t a, int64_t c, int64_t nsamples);
/* Cumulative samples allocated and collected at time t (events at or
 * before t; t is rounded down to the end of its bin's resolution, but a
 * time at or after the trace's end counts every event). */
void mt_timeline_at(const mt_timeline *t, int64_t time, int64_t *alloc,
                    int64_t *coll);
/* The time of the maximum live samples (the last microsecond of the first
 * bin where the maximum is reached, at most the trace's end) and that
 * maximum. An empty heap gives time 0, live 0. */
void mt_timeline_peak(const mt_timeline *t, int64_t *time, int64_t *live);
/* The time of the last bin boundary at or before `time` (what _at sees),
 * or the trace's end for a time at or after it. */
int64_t mt_timeline_resolve(const mt_timeline *t, int64_t time);

struct mt_scan {
    /* inputs */
    const mt_filter *filter;
    int64_t live_at;          /* resolved --live-at: -1 none, INT64_MAX end */
    mt_object_fn on_object;   /* optional                                   */
    /* optional: called for each allocation that passes the filters known at
     * allocation time; *user is kept with the object and handed back in
     * mt_object.user. Nonzero stops the scan (MT_ERR_FORMAT, s->err left to
     * the caller). */
    int (*on_alloc)(void *ctx, const mt_event *ev, uint32_t *user);
    /* optional: the same allocations as an object (collect_time MT_NEVER,
     * stack and user set) after on_alloc. Nonzero stops the scan. */
    int (*on_accept)(void *ctx, const mt_object *o);
    void *ctx;
    mt_timeline *timeline;    /* optional: fed with every accepted object   */
    int need_stacks;          /* decode backtraces even if no filter needs
                                 names (stack->site is NULL otherwise)      */
    int threads;              /* nonzero: decode on a second thread (not
                                 with on_alloc; tick and diag are called
                                 from that thread, tick every 16 events,
                                 the rest from this one)                   */
    mt_diag_fn diag;          /* optional: skipped-packet diagnostics       */
    void *diag_ctx;
    void (*tick)(void *ctx, const mt_reader *r);  /* optional, per event    */
    void *tick_ctx;
    /* outputs */
    mt_reader *reader;        /* open until mt_scan_free (locations valid)  */
    const mt_trace_info *info;
    int64_t end;              /* last event time, us since start            */
    int64_t total_samples;    /* all allocations, unfiltered                */
    int64_t odd_allocs;       /* allocations, unfiltered, with nsamples <= 0
                                 or a negative length: the format allows
                                 them, a real trace has none, estimates
                                 that count them mean nothing              */
    int64_t accepted;         /* objects that passed the filter             */
    size_t shared_prefix;     /* during on_alloc: how many leading frames
                                 its backtrace shares with the one on_alloc
                                 was given last (0: not known), for a
                                 stackset (stackset_add_shared). The
                                 reader's common_prefix, where no
                                 allocation came between; else their
                                 least one, over the allocations of that
                                 domain since (each backtrace is built on
                                 its domain's previous one); 0 after one of
                                 another domain was given                 */
    size_t nstacks;           /* distinct stacks interned                   */
    char err[512];
    void *priv;
};

/* Read the trace at path ("-": standard input) and call on_object for
 * every object passing the filter (--live-at resolved as scan->live_at).
 * Returns MT_OK (0), or an error with the message in scan->err. */
int mt_scan_run(mt_scan *s, const char *path);
void mt_scan_free(mt_scan *s);

/* The live-at time to use in a scan for filter f, given the peak time of a
 * first pass (ignored unless f asks for the peak). */
int64_t mt_filter_live_at(const mt_filter *f, int64_t peak_time);

/* Whether an allocation passes the filters known when it is allocated
 * (source, --from/--to, sizes, --in/--not-in). */
int mt_filter_accepts_alloc(const mt_filter *f, const mt_trace_info *info,
                            const mt_object *o);

/* Whether an object passes every filter whose value is known at its decision
 * (live_at as in mt_scan.live_at; end = the trace's end time). */
int mt_filter_accepts(const mt_filter *f, const mt_trace_info *info,
                      const mt_object *o, int64_t live_at, int64_t end);

/* ---- allocation sites (top, diff) -------------------------------------- */

typedef enum { MT_BY_FUNCTION = 0, MT_BY_LINE = 1 } mt_site_by;

/* One allocation site: the innermost non-hidden frame's function (and with
 * MT_BY_LINE its file:line). Sums are in samples. */
typedef struct mt_site {
    char *name;                       /* "FUNCTION" or "FUNCTION (FILE:LINE)" */
    int64_t alloc, peak, end;         /* allocated / live at peak / at end   */
    int64_t count;                    /* sampled allocations                 */
} mt_site;

typedef struct mt_sites {
    mt_site_by by;
    int64_t peak_time;                /* us since start: 'live at peak'      */
    mt_site *v;
    size_t n, cap;
    uint32_t *slots;                  /* site index + 1; 0 empty             */
    size_t slots_cap;
    int32_t *by_stack;                /* stack id -> site index, -1 unknown  */
    size_t by_stack_cap;
    int no_peak;                      /* mt_sites_add leaves .peak alone     */
    mt_site total;                    /* sums over all sites (name NULL)     */
} mt_sites;

/* Account an object (0, or -1 when out of memory). */
int mt_sites_add(mt_sites *t, const mt_object *o);
/* Index of the site named name, or -1. */
int64_t mt_sites_find(const mt_sites *t, const char *name);
void mt_sites_free(mt_sites *t);

/* The two passes of a site report: the live-heap timeline of the filtered
 * objects (for the peak), then the sites. TRACE must be a file. */
typedef struct mt_site_report {
    mt_sites sites;
    double sample_rate;
    int word_size;
    char *executable;
    int64_t pid;
    int64_t end;                      /* us since start                      */
    int64_t peak_time, peak_samples;  /* of the filtered live heap           */
    int passes;                       /* 1 or 2: how the report was made     */
    int64_t odd_allocs;               /* as mt_scan's                        */
    char err[600];
} mt_site_report;

/* When the filter is decided at allocation time (no lifetime filter, no
 * --live-at) and the trace's times never go backwards, one pass does:
 * the live heap is then known event by event, and each site's live samples
 * at the peak are kept as the peak moves (see sites.c). Otherwise, or with
 * MT_SITES_TWO_PASS, a first pass finds the peak and a second the sites.
 * Both give the same report. */
#define MT_SITES_TWO_PASS 1u
/* Decode on the calling thread too (mt_scan.threads = 0): the same report;
 * for tests, which compare both. */
#define MT_SITES_ONE_THREAD 2u
int mt_site_report_run(mt_site_report *r, const char *path, const mt_filter *f,
                       mt_site_by by, unsigned flags, mt_diag_fn diag, void *diag_ctx,
                       void (*tick)(void *, const mt_reader *), void *tick_ctx);
void mt_site_report_free(mt_site_report *r);

/* ---- helpers for reports ------------------------------------------------ */

/* Bytes with binary units ("512 B", "1.5 KiB", "3.20 MiB"). */
void mt_fmt_bytes(char *buf, size_t n, double bytes);
/* Seconds with a sensible number of decimals ("0.000123 s" ... "3600.0 s"). */
void mt_fmt_secs(char *buf, size_t n, int64_t us);

#endif /* MT_ANALYSIS_H */
