/*
 * test_one_pass.c - the site report's one-pass peak (src/analysis/sites.c)
 * against the two-pass one, on every trace named on the command line: the
 * same peak time and size and, for every site, the same samples allocated,
 * live at the peak, live at the end and count, with and without filters
 * and by function and by line. Also checks that traces whose times are in
 * order were done in one pass.
 *   analysis_one_pass TRACE...
 */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"

static int fails, checks;

static void check(int ok, const char *what, const char *trace, const char *detail)
{
    checks++;
    if (!ok) {
        fails++;
        printf("FAIL %s: %s (%s)\n", trace, what, detail);
    }
}

static void compare(const char *trace, const mt_filter *f, mt_site_by by,
                    const char *label)
{
    mt_site_report a, b;
    int sa = mt_site_report_run(&a, trace, f, by, 0, NULL, NULL, NULL, NULL);
    int sb = mt_site_report_run(&b, trace, f, by, MT_SITES_TWO_PASS, NULL, NULL, NULL, NULL);
    check(sa == sb, "same status", trace, label);
    if (sa == MT_OK && sb == MT_OK) {
        check(b.passes == 2, "forced two passes", trace, label);
        check(a.peak_time == b.peak_time, "peak time", trace, label);
        check(a.peak_samples == b.peak_samples, "peak samples", trace, label);
        check(a.sites.n == b.sites.n, "number of sites", trace, label);
        check(a.sites.total.peak == b.sites.total.peak, "total live at peak", trace, label);
        check(a.sites.total.peak == a.peak_samples, "sites sum to the peak", trace, label);
        for (size_t i = 0; i < a.sites.n; i++) {
            const mt_site *x = &a.sites.v[i];
            int64_t j = mt_sites_find(&b.sites, x->name);
            int same = j >= 0 && b.sites.v[j].alloc == x->alloc &&
                       b.sites.v[j].peak == x->peak && b.sites.v[j].end == x->end &&
                       b.sites.v[j].count == x->count;
            check(same, "site figures", trace, x->name);
        }
    }
    mt_site_report_free(&a);
    mt_site_report_free(&b);
}

int main(int argc, char **argv)
{
    int one = 0;
    for (int i = 1; i < argc; i++) {
        const char *t = argv[i];
        mt_filter f;
        mt_filter_init(&f);
        compare(t, &f, MT_BY_FUNCTION, "no filter");
        compare(t, &f, MT_BY_LINE, "by line");
        mt_site_report r;
        if (mt_site_report_run(&r, t, &f, MT_BY_FUNCTION, 0, NULL, NULL, NULL, NULL) == MT_OK)
            one += r.passes == 1;
        mt_site_report_free(&r);
        f.sources = 1u << MT_SOURCE_MINOR;
        compare(t, &f, MT_BY_FUNCTION, "--source minor");
        f.sources = 0;
        f.has_min_size = 1;
        f.min_size = 64;
        compare(t, &f, MT_BY_FUNCTION, "--min-size 64");
        mt_filter_free(&f);
    }
    /* the corpus traces are written in time order */
    check(one > 0 && one >= (argc - 1) / 2, "most traces done in one pass", "all", "");
    printf("%d checks, %d failed; %d of %d traces in one pass\n", checks, fails, one,
           argc - 1);
    return fails != 0;
}
