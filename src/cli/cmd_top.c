/*
 * cmd_top.c - `memtrace top [FILTERS] TRACE`: allocation sites ranked by
 * estimated bytes allocated, with the bytes they hold live at the heap's
 * peak and at the end of the trace (leak candidates). One pass over the
 * trace when the filters are decided at allocation, else two: the
 * live-heap timeline for the peak, then the sites (src/analysis/sites.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "util/numtext.h"
#include "util/json.h"
#include "cli/output.h"
#include "cli/progress.h"

void usage_top(FILE *out)
{
    fprintf(out,
            "Usage: memtrace top [FILTERS] [OPTIONS] TRACE\n"
            "\n"
            "Rank the allocation sites of TRACE by the memory they allocated, with\n"
            "what they kept live at the peak of the heap and at the end of the\n"
            "trace. A site is the innermost frame of an allocation's backtrace (the\n"
            "innermost inlined function), or its caller when --hide drops it.\n"
            "\n"
            "Estimates: a sample stands for 1 / sample-rate words, so a site's bytes\n"
            "are samples / rate * word size (8 bytes on 64-bit). The estimate is\n"
            "unbiased; its relative standard error is about 1/sqrt(samples), shown\n"
            "as \u00b1N%% when a site has fewer than 100 samples.\n"
            "\n"
            "Output columns:\n"
            "  ALLOCATED  estimated bytes allocated at the site\n"
            "  ERR        relative standard error of ALLOCATED (few samples only)\n"
            "  %%          share of the total allocated (of the filtered objects)\n"
            "  AT PEAK    bytes allocated there and live at the peak: the time of\n"
            "             the largest estimated live heap (of the filtered objects,\n"
            "             to the timeline's resolution: 1/65536 of the trace)\n"
            "  AT END     bytes allocated there and never collected\n"
            "  SAMPLES    samples (sampled allocations in ALLOCS with --json)\n"
            "  SITE       FUNCTION, or FUNCTION (FILE:LINE) with --by line;\n"
            "             '(no backtrace)' / '(unknown)' when there is no location\n"
            "A header gives the trace, the totals and the peak's time; the last\n"
            "line counts the sites left out by --limit.\n"
            "\n"
            "Options:\n"
            "  --by function|line    group by function (default) or function+line\n"
            "  --sort allocated|peak|end\n"
            "                        column to rank by (default allocated)\n"
            "  --limit N             show the first N sites (default 25; 0: all)\n"
            "  --json                one JSON object: trace, totals, sites with the\n"
            "                        same numbers (bytes unrounded, rse as fractions;\n"
            "                        word_size in bits, as the trace stores it)\n"
            "  -h, --help            show this help\n"
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "TRACE is read once or twice (twice with --min-lifetime, --max-lifetime\n"
            "or --live-at, the peak first, and for a trace whose peak one pass cannot\n"
            "place), so it must be a file (not '-'). Skipped packets\n"
            "are reported on standard error; a progress line is shown there for\n"
            "long runs.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file and offset on standard error), 2 bad usage.\n");
}

typedef enum { SORT_ALLOC, SORT_PEAK, SORT_END } sort_key;
static sort_key g_sort;

static int64_t key_of(const mt_site *s)
{
    return g_sort == SORT_PEAK ? s->peak : g_sort == SORT_END ? s->end : s->alloc;
}

static int cmp_sites(const void *a, const void *b)
{
    const mt_site *x = a, *y = b;
    int64_t kx = key_of(x), ky = key_of(y);
    if (kx != ky)
        return kx < ky ? 1 : -1;
    if (x->alloc != y->alloc)
        return x->alloc < y->alloc ? 1 : -1;
    return strcmp(x->name, y->name);
}

static double bytes(const mt_site_report *r, int64_t ns)
{
    mt_trace_info info = {0};
    info.sample_rate = r->sample_rate;
    info.word_size = r->word_size;
    return mt_est_bytes(ns, &info);
}

static void json_site(mt_out *o, const mt_site_report *r, const mt_site *s,
                      double total)
{
    double a = bytes(r, s->alloc);
    out_printf(o, "\"allocated_bytes\": %s, \"allocated_rse\": %.6g, "
            "\"percent\": %.6g, \"peak_bytes\": %s, \"peak_rse\": %.6g, "
            "\"end_bytes\": %s, \"end_rse\": %.6g, \"samples\": %lld, "
            "\"allocs\": %lld",
         json_num(a).s, mt_est_rse(s->alloc), total > 0 ? 100. * a / total : 0.,
         json_num(bytes(r, s->peak)).s, mt_est_rse(s->peak),
         json_num(bytes(r, s->end)).s, mt_est_rse(s->end), (long long)s->alloc,
         (long long)s->count);
}

static void report(mt_out *o, const mt_site_report *r, const char *path,
                   size_t limit, int json, mt_site_by by)
{
    const mt_sites *t = &r->sites;
    size_t shown = limit && limit < t->n ? limit : t->n;
    double total = bytes(r, t->total.alloc);
    static const char *const sorts[] = {"allocated", "peak", "end"};
    if (json) {
        out_str(o, "{\n  \"trace\": ");
        out_json(o, path);
        out_str(o, ",\n  \"executable\": ");
        out_json(o, r->executable);
        out_printf(o, ",\n  \"pid\": %lld,\n"
                "  \"sample_rate\": %s,\n  \"word_size\": %d,\n"
                "  \"duration_s\": %.6f,\n  \"peak_time_s\": %.6f,\n"
                "  \"by\": \"%s\",\n  \"sort\": \"%s\",\n  \"total\": {",
             (long long)r->pid, json_num(r->sample_rate).s,
             r->word_size, (double)r->end / 1e6, (double)r->peak_time / 1e6,
             by == MT_BY_LINE ? "line" : "function", sorts[g_sort]);
        json_site(o, r, &t->total, total);
        out_printf(o, ", \"sites\": %zu},\n  \"sites\": [", t->n);
        for (size_t i = 0; i < shown; i++) {
            out_str(o, i ? ",\n    {\"site\": " : "\n    {\"site\": ");
            out_json(o, t->v[i].name);
            out_str(o, ", ");
            json_site(o, r, &t->v[i], total);
            out_str(o, "}");
            out_maybe_flush(o);
        }
        out_str(o, shown ? "\n  ]\n}\n" : "]\n}\n");
        return;
    }
    char b1[32], b2[32], b3[32], ts[32], te[32];
    mt_fmt_secs(te, sizeof te, r->end);
    mt_fmt_secs(ts, sizeof ts, r->peak_time);
    char *tmp;
    out_printf(o, "Trace %s: %s [%lld], sample rate %g, %d-bit words, %s\n", path,
         out_clean(r->executable, &tmp), (long long)r->pid, r->sample_rate, r->word_size, te);
    free(tmp);
    mt_fmt_bytes(b1, sizeof b1, total);
    mt_fmt_bytes(b2, sizeof b2, bytes(r, t->total.peak));
    mt_fmt_bytes(b3, sizeof b3, bytes(r, t->total.end));
    out_printf(o, "Allocated %s (%lld sample%s) at %zu site%s; live at peak (%s): %s; "
            "live at end: %s\n\n",
         b1, (long long)t->total.alloc, t->total.alloc == 1 ? "" : "s", t->n,
         t->n == 1 ? "" : "s", ts, b2, b3);
    out_printf(o, "%11s %5s %6s %11s %11s %8s  %s\n", "ALLOCATED", "ERR", "%",
         "AT PEAK", "AT END", "SAMPLES", "SITE");
    for (size_t i = 0; i < shown; i++) {
        const mt_site *s = &t->v[i];
        double a = bytes(r, s->alloc);
        char err[16] = "";
        if (s->alloc < MT_EST_FEW_SAMPLES)
            snprintf(err, sizeof err, "\u00b1%.0f%%", 100. * mt_est_rse(s->alloc));
        mt_fmt_bytes(b1, sizeof b1, a);
        mt_fmt_bytes(b2, sizeof b2, bytes(r, s->peak));
        mt_fmt_bytes(b3, sizeof b3, bytes(r, s->end));
        /* the ± sign is two bytes of UTF-8 but one column */
        out_printf(o, "%11s %*s %5.1f%% %11s %11s %8lld  %s\n", b1, err[0] ? 6 : 5, err,
             total > 0 ? 100. * a / total : 0., b2, b3, (long long)s->alloc,
             out_clean(s->name, &tmp));
        free(tmp);
        out_maybe_flush(o);
    }
    if (shown < t->n) {
        int64_t rest = 0;
        for (size_t i = shown; i < t->n; i++)
            rest += t->v[i].alloc;
        mt_fmt_bytes(b1, sizeof b1, bytes(r, rest));
        out_printf(o, "... %zu more sites (%s allocated; --limit 0 shows all)\n",
             t->n - shown, b1);
    }
}

int cmd_top(int argc, char **argv)
{
    const char *path = NULL;
    mt_filter f;
    mt_filter_init(&f);
    mt_site_by by = MT_BY_FUNCTION;
    long limit = 25;
    int json = 0, rc;
    g_sort = SORT_ALLOC;
    int opts_done = 0;
    for (int i = 1; i < argc;) {
        const char *a = argv[i], *val;
        int k = cli_filter_arg("top", &f, argc, argv, &i, &opts_done);
        if (k < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0)
            continue;
        if (opts_done || a[0] != '-' || a[1] == 0) {
            if (path) {
                rc = cli_usage_error("top", "expected one TRACE, got more");
                goto out;
            }
            path = a;
            i++;
            continue;
        }
        if (cli_is_help(a)) {
            usage_top(stdout);
            rc = EXIT_OK;
            goto out;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
            i++;
            continue;
        }
        static const char *const value_opts[] = {"--by", "--sort", "--limit", NULL};
        const char *name = NULL;
        k = cli_opt_one_of("top", argc, argv, &i, value_opts, &name, &val);
        if (k < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0) {
            i++;
            if (name[2] == 'b') {
                if (strcmp(val, "function") == 0)
                    by = MT_BY_FUNCTION;
                else if (strcmp(val, "line") == 0)
                    by = MT_BY_LINE;
                else {
                    rc = cli_usage_error("top", "--by: expected function or line, got '%s'", val);
                    goto out;
                }
            } else if (name[2] == 's') {
                if (strcmp(val, "allocated") == 0)
                    g_sort = SORT_ALLOC;
                else if (strcmp(val, "peak") == 0)
                    g_sort = SORT_PEAK;
                else if (strcmp(val, "end") == 0)
                    g_sort = SORT_END;
                else {
                    rc = cli_usage_error("top", "--sort: expected allocated, peak or end, got '%s'", val);
                    goto out;
                }
            } else {
                if (cli_limit("top", val, &limit) < 0) {
                    rc = EXIT_USAGE;
                    goto out;
                }
            }
            continue;
        }
        rc = cli_usage_error("top", "unknown option '%s'", a);
        goto out;
    }
    if (!path) {
        rc = cli_usage_error("top", "missing TRACE argument");
        goto out;
    }
    if ((rc = cli_filter_bounds("top", &f)) != 0)
        goto out;
    if ((rc = cli_read_twice("top", "TRACE is read twice", path)) != 0)
        goto out;

    cli_progress prog;
    progress_start(&prog, "top", path);
    mt_site_report r;
    unsigned flags = cli_threads() ? 0 : MT_SITES_ONE_THREAD;
    cli_diag_ctx dctx = {"top", path};
    int st = mt_site_report_run(&r, path, &f, by, flags, cli_print_diag_named, &dctx,
                                progress_tick_fn, &prog);
    progress_done(&prog);
    if (st != MT_OK) {
        cli_error("top", "%s: %s", path, r.err);
        mt_site_report_free(&r);
        rc = EXIT_DATA;
        goto out;
    }
    cli_warn_odd("top", path, r.odd_allocs);
    if (r.sites.n > 1)
        qsort(r.sites.v, r.sites.n, sizeof *r.sites.v, cmp_sites);
    mt_out o;
    if (out_init(&o, STDOUT_FILENO)) {
        cli_error("top", "out of memory");
        mt_site_report_free(&r);
        rc = EXIT_DATA;
        goto out;
    }
    report(&o, &r, path, (size_t)limit, json, by);
    out_flush(&o);
    rc = EXIT_OK;
    if (o.err) {
        cli_error("top", "writing standard output: %s", strerror(o.err));
        rc = EXIT_DATA;
    }
    out_free(&o);
    mt_site_report_free(&r);
out:
    mt_filter_free(&f);
    return rc;
}
