/*
 * cmd_info.c - `memtrace info [--json] TRACE`: the reference `identify`
 * report (spec 11.2): who wrote the trace, when, where, and allocation
 * rates computed from the samples. The text output is byte for byte the
 * reference's on every trace the reference could read.
 *
 * The trace is iterated with backtrace decoding off (mt_reader_scan). The
 * only state is the set of live sampled objects (minor-heap allocations,
 * and major/external ones with nsamples > 1), so memory is bounded by the
 * number of live objects, not by the size of the file.
 *
 * Integer arithmetic: the reference computes the sample sums and
 * `szmax * word_size / 8` with OCaml's 63-bit native ints. We do the same
 * on purpose (wrap modulo 2^63: ocaml_add and ocaml_mul, cli/ocaml_int.h):
 * that is what makes a trace with length = max_int print "Max:  -8 B"
 * exactly like the reference (synth-basic), and nsamples of 2^33 print
 * "61215 TB/s". The floating-point
 * part uses the same double operations in the same order, so inf/nan come
 * out as the reference prints them ("-nan" for 0/0 on x86-64 glibc).
 *
 * Deliberate difference: the reference aborts (assertion) on a promote of an
 * id that is not a live minor allocation (synth-abuse: promote after
 * collect, double promote, promote of major/external ids). We count such a
 * promote as one of an object that is not minor-live: it is ignored (it
 * adds nothing to the promoted total and creates no major entry), and the
 * report is printed normally.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "util/json.h"
#include "cli/ocaml_int.h"
#include "cli/progress.h"
#include "util/u64map.h"

void usage_info(FILE *out)
{
    fputs(
            "Usage: memtrace info [OPTIONS] TRACE\n"
            "\n"
            "Describe TRACE: the program that wrote it, when and where, and its\n"
            "allocation statistics. The text report is the one of the reference\n"
            "`identify` tool, line for line:\n"
            "\n"
            "  Trace file TRACE (SIZE)          TRACE as given on the command line\n"
            "     of EXECUTABLE\n"
            "     at DAY MON MDAY HH:MM:SS YEAR UTC   start of the trace\n"
            "     on host HOST (WORD-bit), pid PID, sample rate RATE\n"
            "     with OCaml GC params PARAMS\n"
            "     with context: CONTEXT         only if the trace has a context\n"
            "  Trace statistics:\n"
            "     Minor: R/s allocations, P% promoted\n"
            "     Major: R/s allocations (R/s direct), R/s collections\n"
            "     Sizes (by word): P% <= 4w, P% <= 16w, P% <= 256w. Max: SIZE\n"
            "     Runtime: SECONDS s\n"
            "\n"
            "Rates are estimated bytes per second of the traced program: sample\n"
            "counts divided by the sample rate, times the word size, divided by the\n"
            "runtime (time of the last event). Minor: allocations on the minor heap\n"
            "and the share of them promoted. Major: direct major and external\n"
            "allocations plus promotions (direct: without promotions), and\n"
            "collections of major objects. Sizes: share of allocated bytes in\n"
            "objects of at most 4, 16 and 256 words; Max: largest object. Sizes are\n"
            "printed with B, kB, MB, GB, TB (powers of 1024). Like the reference,\n"
            "the numbers use 63-bit integer and IEEE double arithmetic, so extreme\n"
            "traces can print wrapped values, inf or nan (a trace with no events\n"
            "has a runtime of 0; with no minor allocation, as in every trace of\n"
            "`memtrace run`, the share promoted is -nan%).\n"
            "\n"
            "Unlike the reference, a promotion of an object that is not a live\n"
            "minor allocation is ignored instead of aborting the report.\n"
            "Skipped packets are reported on standard error. TRACE '-' reads stdin.\n"
            "Backtraces are skipped, not decoded, so damage inside them goes\n"
            "unnoticed (`memtrace check` finds it), unless other damage stops the\n"
            "reading: the error then names the first, as every command does.\n"
            "\n"
            "Options:\n"
            "  --json       print the same facts as one JSON object: the trace info\n"
            "               fields, the raw sample counts, their byte estimates and\n"
            "               the rates and percentages as numbers (null for inf/nan);\n"
            "               word_size in bits (64), as the trace stores it\n"
            "  -h, --help   show this help\n"
            "\n"
            "Exit status: 0 success; 1 malformed trace or I/O error (the error, with\n"
            "its byte offset, goes to standard error; the text report then stops\n"
            "after \"Trace statistics:\", as the reference's does, and --json prints\n"
            "nothing); 2 bad usage.\n",
          out);
}

/* ---- the statistics (spec 11.2) --------------------------------------- */

typedef struct info_stats {
    u64map minor_live;           /* id -> nsamples of live minor allocations */
    u64map major_multi;          /* id -> nsamples (> 1) of major objects    */
    int64_t tmax;                /* dt of the last event                     */
    int64_t start_time;
    int64_t minor_alloc, minor_collect, promote;
    int64_t major_alloc, major_collect;
    int64_t dist4, dist16, dist256, szmax;
    int64_t allocs, promotes, collects, ignored_promotes;
    int oom;
} info_stats;

static int on_event(void *ctx, const mt_event *ev)
{
    info_stats *s = ctx;
    s->tmax = ev->time - s->start_time;
    uint64_t v;
    switch (ev->kind) {
    case MT_EVENT_ALLOC: {
        int64_t ns = ev->nsamples;
        s->allocs++;
        if (ev->source != MT_SOURCE_MINOR) {
            s->major_alloc = ocaml_add(s->major_alloc, ns);
            if (ns > 1 && u64map_put(&s->major_multi, (uint64_t)ev->id, (uint64_t)ns))
                goto oom;
        } else {
            s->minor_alloc = ocaml_add(s->minor_alloc, ns);
            if (u64map_put(&s->minor_live, (uint64_t)ev->id, (uint64_t)ns))
                goto oom;
        }
        if (ev->length <= 4)
            s->dist4 = ocaml_add(s->dist4, ns);
        if (ev->length <= 16)
            s->dist16 = ocaml_add(s->dist16, ns);
        if (ev->length <= 256)
            s->dist256 = ocaml_add(s->dist256, ns);
        if (ev->length > s->szmax)
            s->szmax = ev->length;
        break;
    }
    case MT_EVENT_PROMOTE:
        s->promotes++;
        if (!u64map_del(&s->minor_live, (uint64_t)ev->id, &v)) {
            /* The reference asserts here; we ignore it (see the top). */
            s->ignored_promotes++;
            break;
        }
        {
            int64_t ns = (int64_t)v;
            s->promote = ocaml_add(s->promote, ns);
            if (ns > 1 && u64map_put(&s->major_multi, (uint64_t)ev->id, (uint64_t)ns))
                goto oom;
        }
        break;
    case MT_EVENT_COLLECT:
        s->collects++;
        if (u64map_del(&s->minor_live, (uint64_t)ev->id, &v)) {
            s->minor_collect = ocaml_add(s->minor_collect, (int64_t)v);
        } else {
            int64_t ns = 1;
            if (u64map_del(&s->major_multi, (uint64_t)ev->id, &v))
                ns = (int64_t)v;
            s->major_collect = ocaml_add(s->major_collect, ns);
        }
        break;
    }
    return 0;
oom:
    s->oom = 1;
    return 1;
}

/* ---- printing --------------------------------------------------------- */

/* The reference's size formatter B(v). */
static void print_bytes(FILE *out, double n)
{
    static const char *const unit[] = {"kB", "MB", "GB", "TB"};
    if (n < 1000.) {
        fprintf(out, "%3.0f B", n);
        return;
    }
    double lim = 1000. * 1024.;
    double d = n / 1024.;
    int u = 0;
    while (u < 3 && !(n < lim)) {
        lim *= 1024.;
        d /= 1024.;
        u++;
    }
    fprintf(out, "%3.*f %s", d < 10. ? 1 : 0, d, unit[u]);
}

typedef struct report {
    double duration;
    double minor_alloc, minor_collect, promote, major_alloc, major_collect;
    double total_alloc, dist4, dist16, dist256;
    double r_minor, pct_promoted, r_major, r_direct, r_collect;
    double pct4, pct16, pct256, max_bytes;
    int64_t max_bytes_int;
} report;

static void compute(const info_stats *s, const mt_trace_info *info, report *r)
{
    double rate = info->sample_rate;
    double wb = (double)(info->word_size / 8);
#define BYTES(n) ((double)(n) / rate * wb)
    r->duration = (double)s->tmax * 1e-6;
    r->minor_alloc = BYTES(s->minor_alloc);
    r->minor_collect = BYTES(s->minor_collect);
    r->promote = BYTES(s->promote);
    r->major_alloc = BYTES(s->major_alloc);
    r->major_collect = BYTES(s->major_collect);
    r->total_alloc = r->minor_alloc + r->major_alloc;
    r->dist4 = BYTES(s->dist4);
    r->dist16 = BYTES(s->dist16);
    r->dist256 = BYTES(s->dist256);
#undef BYTES
    r->r_minor = r->minor_alloc / r->duration;
    r->pct_promoted = 100. * r->promote / r->minor_alloc;
    r->r_major = (r->major_alloc + r->promote) / r->duration;
    r->r_direct = r->major_alloc / r->duration;
    r->r_collect = r->major_collect / r->duration;
    r->pct4 = 100. * r->dist4 / r->total_alloc;
    r->pct16 = 100. * r->dist16 / r->total_alloc;
    r->pct256 = 100. * r->dist256 / r->total_alloc;
    /* OCaml: szmax * word_size / 8 in 63-bit ints, `/` truncating. */
    r->max_bytes_int = ocaml_mul(s->szmax, info->word_size) / 8;
    r->max_bytes = (double)r->max_bytes_int;
}

static const char *const wday_name[] = {"Sun", "Mon", "Tue", "Wed", "Thu",
                                        "Fri", "Sat"};
static const char *const mon_name[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Unix.gmtime of start_time * 1e-6 (the float is truncated to time_t). */
static int start_tm(const mt_trace_info *info, struct tm *tm)
{
    time_t t = (time_t)((double)info->start_time * 1e-6);
    return gmtime_r(&t, tm) != NULL;
}

static void print_header(FILE *out, const char *path, uint64_t size,
                         const mt_trace_info *info)
{
    fprintf(out, "Trace file %s (", path);
    print_bytes(out, (double)size);
    fprintf(out, ")\n   of %s\n", info->executable_name);
    struct tm tm;
    if (start_tm(info, &tm))
        fprintf(out, "   at %s %s %d %02d:%02d:%02d %d UTC\n", wday_name[tm.tm_wday],
                mon_name[tm.tm_mon], tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec, tm.tm_year + 1900);
    else
        fprintf(out, "   at ? (start time %lld us out of range) UTC\n",
                (long long)info->start_time);
    fprintf(out, "   on host %s (%d-bit), pid %lld, sample rate %.1e\n",
            info->host_name, info->word_size, (long long)info->pid,
            info->sample_rate);
    fprintf(out, "   with OCaml GC params %s\n", info->runtime_params);
    if (info->context)
        fprintf(out, "   with context: %s\n", info->context);
    fprintf(out, "Trace statistics:\n");
}

static void print_stats(FILE *out, const report *r)
{
    fputs("   Minor: ", out);
    print_bytes(out, r->r_minor);
    fprintf(out, "/s allocations, %.1f%% promoted\n", r->pct_promoted);
    fputs("   Major: ", out);
    print_bytes(out, r->r_major);
    fputs("/s allocations (", out);
    print_bytes(out, r->r_direct);
    fputs("/s direct), ", out);
    print_bytes(out, r->r_collect);
    fputs("/s collections\n", out);
    fprintf(out, "   Sizes (by word): %.0f%% <= 4w, %.0f%% <= 16w, %.0f%% <= 256w. Max: ",
            r->pct4, r->pct16, r->pct256);
    print_bytes(out, r->max_bytes);
    fprintf(out, "\n   Runtime: %.3f s\n", r->duration);
}

/* ---- JSON ------------------------------------------------------------- */

static void put_num(FILE *out, double v)
{
    fputs(json_num(v).s, out);
}

static void print_json(FILE *out, const char *path, uint64_t size,
                       const mt_trace_info *info, const info_stats *s,
                       const report *r)
{
    struct tm tm;
    fputs("{\n  \"file\": ", out);
    json_str(out, path);
    fprintf(out, ",\n  \"file_size\": %llu", (unsigned long long)size);
    fprintf(out, ",\n  \"format_version\": %d", info->format_version);
    fputs(",\n  \"executable_name\": ", out);
    json_str(out, info->executable_name);
    fputs(",\n  \"host_name\": ", out);
    json_str(out, info->host_name);
    fprintf(out, ",\n  \"word_size\": %d", info->word_size);
    fprintf(out, ",\n  \"pid\": %lld", (long long)info->pid);
    fputs(",\n  \"sample_rate\": ", out);
    put_num(out, info->sample_rate);
    fprintf(out, ",\n  \"start_time_us\": %lld", (long long)info->start_time);
    if (start_tm(info, &tm))
        fprintf(out, ",\n  \"start_time\": \"%04d-%02d-%02dT%02d:%02d:%02dZ\"",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec);
    else
        fputs(",\n  \"start_time\": null", out);
    fputs(",\n  \"ocaml_runtime_params\": ", out);
    json_str(out, info->runtime_params);
    fputs(",\n  \"context\": ", out);
    json_str(out, info->context);
    fputs(",\n  \"statistics\": {", out);
    fprintf(out, "\n    \"events\": {\"allocs\": %lld, \"promotes\": %lld, "
            "\"collects\": %lld, \"promotes_ignored\": %lld}",
            (long long)s->allocs, (long long)s->promotes,
            (long long)s->collects, (long long)s->ignored_promotes);
    fprintf(out, ",\n    \"samples\": {\"minor_alloc\": %lld, \"minor_collect\": %lld, "
            "\"promote\": %lld, \"major_alloc\": %lld, \"major_collect\": %lld, "
            "\"le_4w\": %lld, \"le_16w\": %lld, \"le_256w\": %lld}",
            (long long)s->minor_alloc, (long long)s->minor_collect,
            (long long)s->promote, (long long)s->major_alloc,
            (long long)s->major_collect, (long long)s->dist4,
            (long long)s->dist16, (long long)s->dist256);
    static const char *const bnames[] = {
        "minor_alloc", "minor_collect", "promote", "major_alloc",
        "major_collect", "total_alloc", "le_4w", "le_16w", "le_256w"};
    const double bvals[] = {r->minor_alloc, r->minor_collect, r->promote,
                            r->major_alloc, r->major_collect, r->total_alloc,
                            r->dist4, r->dist16, r->dist256};
    fputs(",\n    \"bytes\": {", out);
    for (size_t i = 0; i < sizeof bvals / sizeof bvals[0]; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", bnames[i]);
        put_num(out, bvals[i]);
    }
    fputs("}", out);
    static const char *const names[] = {
        "runtime_s", "minor_alloc_bytes_per_s", "promoted_percent",
        "major_alloc_bytes_per_s", "major_direct_bytes_per_s",
        "major_collect_bytes_per_s", "le_4w_percent", "le_16w_percent",
        "le_256w_percent"};
    const double vals[] = {r->duration, r->r_minor, r->pct_promoted, r->r_major,
                           r->r_direct, r->r_collect, r->pct4, r->pct16,
                           r->pct256};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        fprintf(out, ",\n    \"%s\": ", names[i]);
        put_num(out, vals[i]);
    }
    fprintf(out, ",\n    \"max_length_words\": %lld", (long long)s->szmax);
    fprintf(out, ",\n    \"max_bytes\": %lld", (long long)r->max_bytes_int);
    fputs("\n  }\n}\n", out);
}

/* ---- the command ------------------------------------------------------ */

int cmd_info(int argc, char **argv)
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
            usage_info(stdout);
            return EXIT_OK;
        }
        if (!opts_done && strcmp(argv[i], "--json") == 0) {
            json = 1;
            continue;
        }
        if (!opts_done && argv[i][0] == '-' && argv[i][1] != 0)
            return cli_usage_error("info", "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error("info", "expected one TRACE, got more");
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("info", "missing TRACE argument");

    mt_reader_options opt = {0};
    opt.skip_backtraces = 1;
    opt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&opt);
    if (!r) {
        cli_error("info", "out of memory");
        return EXIT_DATA;
    }
    int is_stdin = strcmp(path, "-") == 0;
    int st = is_stdin ? mt_reader_open_fd(r, STDIN_FILENO)
                      : mt_reader_open_file(r, path);
    if (st != MT_OK) {
        cli_error("info", "%s: %s", path, mt_reader_error(r));
        mt_reader_close(r);
        return EXIT_DATA;
    }
    /* The file size, as the reference's fstat; for a pipe, the bytes read
     * (known only at the end, so the header is printed after the scan). */
    struct stat sb;
    int have_size = is_stdin ? fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode)
                             : stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
    uint64_t size = have_size ? (uint64_t)sb.st_size : 0;

    const mt_trace_info *info = mt_reader_info(r);
    if (have_size && !json) {
        /* Like the reference: the header goes out before the statistics are
         * computed, so it precedes any skipped-packet message. */
        print_header(stdout, path, size, info);
        fflush(stdout);
    }

    info_stats s;
    memset(&s, 0, sizeof s);
    s.start_time = info->start_time;
    st = cli_scan(r, "info", path, on_event, &s);
    int rc = EXIT_OK;
    if (s.oom) {
        cli_error("info", "out of memory");
        rc = EXIT_DATA;
    } else if (st != MT_EOF) {
        if (!have_size && !json)
            print_header(stdout, path, mt_reader_offset(r), info);
        /* (read without backtraces: the first damage may be in one) */
        char first[300];
        cli_error("info", "%s: %s", path, mt_first_damage(path, first, sizeof first)
                                              ? first : mt_reader_error(r));
        rc = EXIT_DATA;
    } else {
        if (!have_size)
            size = mt_reader_offset(r);
        report rep;
        compute(&s, info, &rep);
        if (json) {
            print_json(stdout, path, size, info, &s, &rep);
        } else {
            if (!have_size)
                print_header(stdout, path, size, info);
            print_stats(stdout, &rep);
        }
    }
    if (cli_flush_stdout("info", rc == EXIT_OK))
        rc = EXIT_DATA;
    u64map_free(&s.minor_live);
    u64map_free(&s.major_multi);
    mt_reader_close(r);
    return rc;
}
