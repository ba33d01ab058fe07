/*
 * cmd_live.c - `memtrace live [FILTERS] TRACE`: the estimated heap over
 * time: bytes allocated and collected so far and live, at N evenly spaced
 * times, a sparkline of the live bytes, and the peak (time and size).
 * Built on the analysis layer's timeline (src/analysis/scan.c).
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

void usage_live(FILE *out)
{
    fprintf(out,
            "Usage: memtrace live [FILTERS] [OPTIONS] TRACE\n"
            "\n"
            "Show how TRACE's estimated heap evolved: at N evenly spaced times from\n"
            "the start to the end of the trace, the bytes allocated so far, the\n"
            "bytes collected so far and the bytes live (allocated - collected), with\n"
            "a sparkline of the live bytes and the time and size of the peak.\n"
            "Only sampled objects passing the filters count. Bytes are estimates:\n"
            "samples / sample rate * word size (see 'memtrace top --help').\n"
            "\n"
            "Output columns:\n"
            "  TIME        seconds since the start of the trace; events at or before\n"
            "              it are counted (times are rounded down to the timeline's\n"
            "              resolution: exact below 65 ms, else 1/65536 of the trace;\n"
            "              the last row is the trace's end, with every event)\n"
            "  ALLOCATED   estimated bytes allocated up to TIME\n"
            "  COLLECTED   estimated bytes collected up to TIME\n"
            "  LIVE        ALLOCATED - COLLECTED\n"
            "then 'Live: SPARKLINE' (one character per row, scaled to the largest\n"
            "row) and 'Peak: BYTES live at TIME' (the largest live heap anywhere in\n"
            "the trace, to the same resolution).\n"
            "\n"
            "Options:\n"
            "  --points N    number of rows (default 20, 1 to 10000)\n"
            "  --ascii       sparkline in ASCII (_.-=+*#@) instead of block characters\n"
            "  --json        one JSON object with the same numbers (unrounded bytes)\n"
            "  -h, --help    show this help\n"
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "TRACE '-' reads standard input (except with --live-at peak, which reads\n"
            "the trace twice). Skipped packets are reported on standard error; a\n"
            "progress line is shown there for long runs. Without filters that need\n"
            "them, backtraces are skipped, not decoded, so damage inside them goes\n"
            "unnoticed (`memtrace check` finds it), unless other damage stops the\n"
            "reading: the error then names the first, as every command does.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file and offset on standard error), 2 bad usage.\n");
}

/* One pass: the timeline of the objects passing f (live-at resolved).
 * Skipped packets are reported on the first pass only. */
static int pass(const char *path, const mt_filter *f, int64_t live_at,
                mt_timeline *tl, cli_progress *prog, mt_trace_info *info,
                char **exe, int64_t *end, int first)
{
    mt_scan s = {0};
    s.filter = f;
    s.live_at = live_at;
    s.timeline = tl;
    s.threads = cli_threads();
    cli_diag_ctx dctx = {"live", path};
    s.diag = first ? cli_print_diag_named : NULL;
    s.diag_ctx = &dctx;
    s.tick = progress_tick_fn;
    s.tick_ctx = prog;
    int st = mt_scan_run(&s, path);
    if (st != MT_OK) {
        cli_error("live", "%s: %s", path, s.err);
    } else {
        *info = *s.info;
        free(*exe);
        *exe = strdup(s.info->executable_name);
        *end = s.end;
        if (first)
            cli_warn_odd("live", path, s.odd_allocs);
    }
    mt_scan_free(&s);
    return st;
}

int cmd_live(int argc, char **argv)
{
    const char *path = NULL;
    mt_filter f;
    mt_filter_init(&f);
    long points = 20;
    int json = 0, ascii = 0, rc;
    int opts_done = 0;
    for (int i = 1; i < argc;) {
        const char *a = argv[i], *val;
        int k = cli_filter_arg("live", &f, argc, argv, &i, &opts_done);
        if (k < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0)
            continue;
        if (opts_done || a[0] != '-' || a[1] == 0) {
            if (path) {
                rc = cli_usage_error("live", "expected one TRACE, got more");
                goto out;
            }
            path = a;
            i++;
            continue;
        }
        if (cli_is_help(a)) {
            usage_live(stdout);
            rc = EXIT_OK;
            goto out;
        }
        if (strcmp(a, "--json") == 0 || strcmp(a, "--ascii") == 0) {
            if (a[2] == 'j')
                json = 1;
            else
                ascii = 1;
            i++;
            continue;
        }
        if ((k = cli_opt_value("live", argc, argv, &i, "--points", &val)) < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (k > 0) {
            char *e;
            errno = 0;
            points = strtol(val, &e, 10);
            if (!mt_plain_integer(val) || *e || errno || points < 1 || points > 10000) {
                rc = cli_usage_error("live", "--points: expected 1 to 10000, got '%s'", val);
                goto out;
            }
            i++;
            continue;
        }
        rc = cli_usage_error("live", "unknown option '%s'", a);
        goto out;
    }
    if (!path) {
        rc = cli_usage_error("live", "missing TRACE argument");
        goto out;
    }
    if ((rc = cli_check_filters("live", &f, path)) != 0)
        goto out;

    mt_timeline tl;
    if (mt_timeline_init(&tl)) {
        cli_error("live", "out of memory");
        rc = EXIT_DATA;
        goto out;
    }
    cli_progress prog;
    progress_start(&prog, "live", path);
    mt_trace_info info;
    char *exe = NULL;
    int64_t end = 0, peak_t = 0, peak = 0;
    int st;
    if (f.live_mode == MT_LIVE_PEAK) {
        st = pass(path, &f, -1, &tl, &prog, &info, &exe, &end, 1);
        if (st == MT_OK) {
            mt_timeline_peak(&tl, &peak_t, &peak);
            mt_timeline_free(&tl);
            if (mt_timeline_init(&tl))
                st = MT_ERR_NOMEM;
            else
                st = pass(path, &f, peak_t, &tl, &prog, &info, &exe, &end, 0);
        }
    } else {
        st = pass(path, &f, mt_filter_live_at(&f, 0), &tl, &prog, &info, &exe, &end, 1);
    }
    progress_done(&prog);
    mt_out o;
    if (st != MT_OK || !exe || out_init(&o, STDOUT_FILENO)) {
        if (st == MT_OK)
            cli_error("live", "out of memory");
        mt_timeline_free(&tl);
        free(exe);
        rc = EXIT_DATA;
        goto out;
    }
    mt_timeline_peak(&tl, &peak_t, &peak);

    int64_t *ta = malloc((size_t)points * 3 * sizeof *ta);
    if (!ta) {
        cli_error("live", "out of memory");
        out_free(&o);
        mt_timeline_free(&tl);
        free(exe);
        rc = EXIT_DATA;
        goto out;
    }
    int64_t maxlive = 0;
    for (long k = 0; k < points; k++) {
        int64_t t = mt_timeline_resolve(&tl, (int64_t)((double)end * (double)(k + 1) / (double)points));
        if (t < 0)
            t = 0;
        int64_t a, c;
        mt_timeline_at(&tl, t, &a, &c);
        ta[3 * k] = t;
        ta[3 * k + 1] = a;
        ta[3 * k + 2] = c;
        if (a - c > maxlive)
            maxlive = a - c;
    }
    if (json) {
        out_str(&o, "{\n  \"trace\": ");
        out_json(&o, path);
        out_str(&o, ",\n  \"executable\": ");
        out_json(&o, exe);
        out_printf(&o, ",\n  \"pid\": %lld,\n"
                 "  \"sample_rate\": %s,\n  \"word_size\": %d,\n"
                 "  \"duration_s\": %.6f,\n  \"resolution_s\": %.6f,\n"
                 "  \"peak_time_s\": %.6f,\n  \"peak_bytes\": %s,\n"
                 "  \"peak_samples\": %lld,\n  \"points\": [",
             (long long)info.pid, json_num(info.sample_rate).s,
             info.word_size, (double)end / 1e6, (double)tl.width / 1e6,
             (double)peak_t / 1e6, json_num(mt_est_bytes(peak, &info)).s, (long long)peak);
        for (long k = 0; k < points; k++) {
            out_printf(&o, "%s\n    {\"time_s\": %.6f, \"allocated_bytes\": %s, "
                     "\"collected_bytes\": %s, \"live_bytes\": %s}",
                 k ? "," : "", (double)ta[3 * k] / 1e6,
                 json_num(mt_est_bytes(ta[3 * k + 1], &info)).s,
                 json_num(mt_est_bytes(ta[3 * k + 2], &info)).s,
                 json_num(mt_est_bytes(ta[3 * k + 1] - ta[3 * k + 2], &info)).s);
            out_maybe_flush(&o);
        }
        out_str(&o, "\n  ]\n}\n");
    } else {
        char b1[32], b2[32], b3[32], ts[32];
        mt_fmt_secs(ts, sizeof ts, end);
        char *tmp;
        out_printf(&o, "Trace %s: %s [%lld], sample rate %g, %d-bit words, %s\n\n",
             path, out_clean(exe, &tmp), (long long)info.pid, info.sample_rate,
             info.word_size, ts);
        free(tmp);
        out_printf(&o, "%14s %11s %11s %11s\n", "TIME", "ALLOCATED", "COLLECTED", "LIVE");
        for (long k = 0; k < points; k++) {
            mt_fmt_secs(ts, sizeof ts, ta[3 * k]);
            mt_fmt_bytes(b1, sizeof b1, mt_est_bytes(ta[3 * k + 1], &info));
            mt_fmt_bytes(b2, sizeof b2, mt_est_bytes(ta[3 * k + 2], &info));
            mt_fmt_bytes(b3, sizeof b3, mt_est_bytes(ta[3 * k + 1] - ta[3 * k + 2], &info));
            out_printf(&o, "%14s %11s %11s %11s\n", ts, b1, b2, b3);
            out_maybe_flush(&o);
        }
        static const char *const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                             "\u2585", "\u2586", "\u2587", "\u2588"};
        static const char asc[] = "_.-=+*#@";
        out_str(&o, "\nLive: ");
        for (long k = 0; k < points; k++) {
            int64_t live = ta[3 * k + 1] - ta[3 * k + 2];
            int lv = maxlive > 0 && live > 0
                         ? (int)((double)live * 7. / (double)maxlive + 0.5) : 0;
            if (lv > 7)
                lv = 7;
            if (ascii)
                out_mem(&o, &asc[lv], 1);
            else
                out_str(&o, blocks[lv]);
        }
        mt_fmt_bytes(b1, sizeof b1, mt_est_bytes(peak, &info));
        mt_fmt_secs(ts, sizeof ts, peak_t);
        out_printf(&o, "\nPeak: %s live at %s (%lld samples)\n", b1, ts, (long long)peak);
    }
    out_flush(&o);
    rc = EXIT_OK;
    if (o.err) {
        cli_error("live", "writing standard output: %s", strerror(o.err));
        rc = EXIT_DATA;
    }
    out_free(&o);
    free(ta);
    free(exe);
    mt_timeline_free(&tl);
out:
    mt_filter_free(&f);
    return rc;
}
