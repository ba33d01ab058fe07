/*
 * cmd_diff.c - `memtrace diff [FILTERS] BASE NEW`: the allocation sites
 * whose estimated bytes allocated and live at the end changed most between
 * two traces (signed deltas NEW - BASE, sorted by absolute delta). Each
 * trace goes through the same site report as `memtrace top`.
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

void usage_diff(FILE *out)
{
    fprintf(out,
            "Usage: memtrace diff [FILTERS] [OPTIONS] BASE NEW\n"
            "\n"
            "Compare the allocation sites of two traces (e.g. before and after a\n"
            "change): for every site (innermost non-hidden function, as in 'memtrace\n"
            "top'), the estimated bytes allocated and live at the end in BASE and in\n"
            "NEW, and the signed change NEW - BASE. Sites are sorted by the absolute\n"
            "change (largest first). The filters apply to both traces. Bytes are\n"
            "estimates: samples / sample rate * word size, each trace with its own\n"
            "rate.\n"
            "\n"
            "Output columns:\n"
            "  DELTA ALLOC   change of the bytes allocated (+ more in NEW)\n"
            "  BASE, NEW     bytes allocated in each trace\n"
            "  DELTA END     change of the bytes live at the end (never collected)\n"
            "  SITE          FUNCTION, or FUNCTION (FILE:LINE) with --by line\n"
            "\n"
            "Options:\n"
            "  --by function|line  group by function (default) or function+line\n"
            "  --sort allocated|end  rank by |DELTA ALLOC| (default) or |DELTA END|\n"
            "  --limit N           show the first N sites (default 25; 0: all)\n"
            "  --json              one JSON object with the same numbers\n"
            "  -h, --help          show this help\n"
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "Both traces are read twice, so they must be files. Skipped packets are\n"
            "reported on standard error.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file and offset on standard error), 2 bad usage.\n");
}

typedef struct row {
    const char *name;
    double a0, a1, e0, e1;
} row;

static int g_by_end;

static double absd(double x)
{
    return x < 0 ? -x : x;
}

static int cmp_rows(const void *x, const void *y)
{
    const row *p = x, *q = y;
    double kp = g_by_end ? absd(p->e1 - p->e0) : absd(p->a1 - p->a0);
    double kq = g_by_end ? absd(q->e1 - q->e0) : absd(q->a1 - q->a0);
    if (kp != kq)
        return kp < kq ? 1 : -1;
    return strcmp(p->name, q->name);
}

static double est(const mt_site_report *r, int64_t ns)
{
    mt_trace_info info = {0};
    info.sample_rate = r->sample_rate;
    info.word_size = r->word_size;
    return mt_est_bytes(ns, &info);
}

static void sbytes(char *buf, size_t n, double b)
{
    char t[24];
    mt_fmt_bytes(t, sizeof t, absd(b));
    snprintf(buf, n, "%s%s", b > 0 ? "+" : b < 0 ? "-" : "", t);
}

int cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int npaths = 0, json = 0, rc;
    long limit = 25;
    mt_site_by by = MT_BY_FUNCTION;
    mt_filter f;
    mt_filter_init(&f);
    g_by_end = 0;
    int opts_done = 0;
    for (int i = 1; i < argc;) {
        const char *a = argv[i], *val;
        int k = cli_filter_arg("diff", &f, argc, argv, &i, &opts_done);
        if (k < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0)
            continue;
        if (opts_done || a[0] != '-' || a[1] == 0) {
            if (npaths == 2) {
                rc = cli_usage_error("diff", "expected BASE and NEW, got more");
                goto out;
            }
            paths[npaths++] = a;
            i++;
            continue;
        }
        if (cli_is_help(a)) {
            usage_diff(stdout);
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
        k = cli_opt_one_of("diff", argc, argv, &i, value_opts, &name, &val);
        if (k < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0) {
            i++;
            if (name[2] == 'l') {
                if (cli_limit("diff", val, &limit) < 0) {
                    rc = EXIT_USAGE;
                    goto out;
                }
            } else if (name[2] == 'b' && (strcmp(val, "function") == 0 || strcmp(val, "line") == 0))
                by = val[0] == 'l' ? MT_BY_LINE : MT_BY_FUNCTION;
            else if (name[2] == 's' && (strcmp(val, "allocated") == 0 || strcmp(val, "end") == 0))
                g_by_end = val[0] == 'e';
            else {
                rc = cli_usage_error("diff", "%s: invalid value '%s'", name, val);
                goto out;
            }
            continue;
        }
        rc = cli_usage_error("diff", "unknown option '%s'", a);
        goto out;
    }
    if (npaths != 2) {
        rc = cli_usage_error("diff", "expected two traces, BASE and NEW");
        goto out;
    }
    if ((rc = cli_filter_bounds("diff", &f)) != 0)
        goto out;
    for (int k = 0; k < 2; k++)
        if ((rc = cli_read_twice("diff", k ? "NEW is read twice" : "BASE is read twice",
                                 paths[k])) != 0)
            goto out;

    mt_site_report r[2];
    memset(r, 0, sizeof r);
    rc = EXIT_OK;
    for (int k = 0; k < 2 && rc == EXIT_OK; k++) {
        cli_progress prog;
        progress_start(&prog, "diff", paths[k]);
        unsigned flags = cli_threads() ? 0 : MT_SITES_ONE_THREAD;
        cli_diag_ctx dctx = {"diff", paths[k]};
        if (mt_site_report_run(&r[k], paths[k], &f, by, flags, cli_print_diag_named, &dctx,
                               progress_tick_fn, &prog) != MT_OK) {
            cli_error("diff", "%s: %s", paths[k], r[k].err);
            rc = EXIT_DATA;
        } else {
            cli_warn_odd("diff", paths[k], r[k].odd_allocs);
        }
        progress_done(&prog);
    }
    row *rows = NULL;
    size_t nrows = 0;
    mt_out o;
    if (rc == EXIT_OK) {
        rows = calloc(r[0].sites.n + r[1].sites.n + 1, sizeof *rows);
        if (!rows || out_init(&o, STDOUT_FILENO)) {
            cli_error("diff", "out of memory");
            free(rows);
            rc = EXIT_DATA;
        }
    }
    if (rc != EXIT_OK) {
        mt_site_report_free(&r[0]);
        mt_site_report_free(&r[1]);
        goto out;
    }
    for (size_t i = 0; i < r[0].sites.n; i++) {
        const mt_site *s = &r[0].sites.v[i];
        row *w = &rows[nrows++];
        w->name = s->name;
        w->a0 = est(&r[0], s->alloc);
        w->e0 = est(&r[0], s->end);
        int64_t j = mt_sites_find(&r[1].sites, s->name);
        if (j >= 0) {
            w->a1 = est(&r[1], r[1].sites.v[j].alloc);
            w->e1 = est(&r[1], r[1].sites.v[j].end);
        }
    }
    for (size_t i = 0; i < r[1].sites.n; i++) {
        const mt_site *s = &r[1].sites.v[i];
        if (mt_sites_find(&r[0].sites, s->name) >= 0)
            continue;
        row *w = &rows[nrows++];
        w->name = s->name;
        w->a1 = est(&r[1], s->alloc);
        w->e1 = est(&r[1], s->end);
    }
    if (nrows > 1)
        qsort(rows, nrows, sizeof *rows, cmp_rows);
    size_t shown = limit && (size_t)limit < nrows ? (size_t)limit : nrows;
    double ta0 = est(&r[0], r[0].sites.total.alloc), ta1 = est(&r[1], r[1].sites.total.alloc);
    double te0 = est(&r[0], r[0].sites.total.end), te1 = est(&r[1], r[1].sites.total.end);
    if (json) {
        out_str(&o, "{\n  \"base\": ");
        out_json(&o, paths[0]);
        out_str(&o, ",\n  \"new\": ");
        out_json(&o, paths[1]);
        out_printf(&o, ",\n  \"total\": {\"base_allocated_bytes\": %s, "
                 "\"new_allocated_bytes\": %s, \"delta_allocated_bytes\": %s, "
                 "\"base_end_bytes\": %s, \"new_end_bytes\": %s, \"delta_end_bytes\": %s},\n"
                 "  \"sites\": [",
             json_num(ta0).s, json_num(ta1).s,
             json_num(ta1 - ta0).s, json_num(te0).s, json_num(te1).s, json_num(te1 - te0).s);
        for (size_t i = 0; i < shown; i++) {
            const row *w = &rows[i];
            out_str(&o, i ? ",\n    {\"site\": " : "\n    {\"site\": ");
            out_json(&o, w->name);
            out_printf(&o, ", \"base_allocated_bytes\": %s, "
                     "\"new_allocated_bytes\": %s, \"delta_allocated_bytes\": %s, "
                     "\"base_end_bytes\": %s, \"new_end_bytes\": %s, \"delta_end_bytes\": %s}",
                 json_num(w->a0).s, json_num(w->a1).s,
                 json_num(w->a1 - w->a0).s, json_num(w->e0).s, json_num(w->e1).s,
                 json_num(w->e1 - w->e0).s);
            out_maybe_flush(&o);
        }
        out_str(&o, shown ? "\n  ]\n}\n" : "]\n}\n");
    } else {
        char b0[40], b1[40], b2[40], b3[40];
        sbytes(b0, sizeof b0, ta1 - ta0);
        sbytes(b1, sizeof b1, te1 - te0);
        out_printf(&o, "Base %s, new %s: allocated %s, live at end %s\n\n", paths[0], paths[1], b0, b1);
        out_printf(&o, "%12s %11s %11s %12s  %s\n", "DELTA ALLOC", "BASE", "NEW", "DELTA END", "SITE");
        for (size_t i = 0; i < shown; i++) {
            const row *w = &rows[i];
            sbytes(b0, sizeof b0, w->a1 - w->a0);
            mt_fmt_bytes(b1, sizeof b1, w->a0);
            mt_fmt_bytes(b2, sizeof b2, w->a1);
            sbytes(b3, sizeof b3, w->e1 - w->e0);
            char *tmp;
            out_printf(&o, "%12s %11s %11s %12s  %s\n", b0, b1, b2, b3,
                       out_clean(w->name, &tmp));
            free(tmp);
        }
        if (shown < nrows)
            out_printf(&o, "... %zu more sites (--limit 0 shows all)\n", nrows - shown);
    }
    out_flush(&o);
    if (o.err) {
        cli_error("diff", "writing standard output: %s", strerror(o.err));
        rc = EXIT_DATA;
    }
    out_free(&o);
    free(rows);
    mt_site_report_free(&r[0]);
    mt_site_report_free(&r[1]);
out:
    mt_filter_free(&f);
    return rc;
}
