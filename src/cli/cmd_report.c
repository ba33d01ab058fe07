/*
 * cmd_report.c - `memtrace report [FILTERS] TRACE [-o REPORT.html]`: one
 * self-contained HTML file (no network, no server) with the trace's info,
 * the live heap over time, a flame graph (allocated in a time window, live
 * at the peak, live at the end) and the top allocation sites. Aggregated
 * in C (src/report/profile.c), page in web/report.html (src/report/html.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "report/html.h"
#include "report/profile.h"

#define REPORT_BINS 64

void usage_report(FILE *out)
{
    fprintf(out,
            "Usage: memtrace report [FILTERS] TRACE [-o REPORT.html]\n"
            "\n"
            "Write one self-contained HTML file (all data, script and style inline;\n"
            "it opens in any browser without a server or network access) showing:\n"
            "  - the trace: program, host, pid, start, duration, sample rate as\n"
            "    'one sample per N bytes', context, filters, and the peak;\n"
            "  - the estimated live heap over time (allocated, collected, live)\n"
            "    with the peak marked; drag over it to select a time window;\n"
            "  - a flame graph (or icicle) of the allocations, switchable between\n"
            "    allocated in the window, live at the peak and live at the end;\n"
            "    click a frame to zoom, the breadcrumb to zoom out, hover for bytes,\n"
            "    samples, percent and file:line;\n"
            "  - the allocation sites (innermost frame, as memtrace top), sortable by\n"
            "    each column and filterable by function name.\n"
            "The numbers are those of memtrace top and live for the same filters:\n"
            "bytes are samples / sample rate * word size; the peak is the time of the\n"
            "largest live heap (to 1/65536 of the trace). The time window snaps to\n"
            "64 bins of the trace's duration, and the page names it as the --from\n"
            "and --to that give its flame graph's numbers (memtrace flamegraph)\n"
            "and its allocated column (memtrace top). The data is aggregated here,\n"
            "per distinct backtrace, so the file's size follows the number of\n"
            "distinct stacks, not the trace's.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   write to FILE (default: TRACE's name with its\n"
            "                      .ctf replaced by .html, or .html added; named\n"
            "                      on standard error; '-': standard output)\n"
            "  -h, --help          show this help\n"
            "\n"
            CLI_HELP_OUT_FILE
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "Filters select objects as in memtrace top; --hide leaves the frames of\n"
            "matching functions out. TRACE is read twice, so it must be a file.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file on standard error), 2 bad usage.\n");
}

/* rp_write_html's arguments, for cli_out_write. */
typedef struct html_job {
    rp_profile *p;
    const mt_filter *f;
    const char *filters;
} html_job;

static int html_write(void *ctx, int fd)
{
    html_job *j = ctx;
    return rp_write_html(j->p, j->f, j->filters, fd);
}

int cmd_report(int argc, char **argv)
{
    const char *path = NULL, *outpath = NULL;
    char *outbuf = NULL, filters[1024] = "";
    mt_filter f;
    mt_filter_init(&f);
    int rc = cli_parse_trace_out("report", usage_report, argc, argv, &f, &path, &outpath,
                             filters, sizeof filters);
    if (rc >= 0)
        goto out;
    if (!path) {
        rc = cli_usage_error("report", "missing TRACE argument");
        goto out;
    }
    if ((rc = cli_read_twice("report", "TRACE is read twice", path)) != 0)
        goto out;
    if (outpath && !outpath[0]) {
        rc = cli_usage_error("report", "empty output file name");
        goto out;
    }
    if (!outpath) {
        /* t.ctf -> t.html; any other name gets .html added (x.trace and
         * x.TRACE would both have been x.html, one overwriting the other) */
        size_t n = strlen(path);
        const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
        if (strlen(base) > 4 && strcmp(path + n - 4, ".ctf") == 0)
            n -= 4;
        outbuf = malloc(n + 6);
        if (!outbuf) {
            cli_error("report", "out of memory");
            rc = EXIT_DATA;
            goto out;
        }
        memcpy(outbuf, path, n);
        strcpy(outbuf + n, ".html");
        outpath = outbuf;
        if (cli_same_file(path, outpath)) {
            rc = cli_usage_error("report", "the output must not be the input file (%s): "
                                 "give -o OUT.html", outpath);
            goto out;
        }
    }
    cli_out_file of;
    rc = EXIT_DATA;
    if (cli_out_open("report", &of, outpath)) {
        if (outbuf)                 /* a name the user did not give */
            cli_error("report", "(by default the report goes next to TRACE; "
                      "-o FILE writes it elsewhere)");
        goto out;
    }
    rp_profile p;
    memset(&p, 0, sizeof p);
    p.need_timeline = 1;
    p.nbins = REPORT_BINS;
    p.classes = 1;
    if (rp_profile_run(&p, "report", path, &f) == MT_OK) {
        html_job job = {&p, &f, filters};
        int w = cli_out_write("report", &of, html_write, &job);
        if (w == 0) {
            rc = EXIT_OK;
            if (outbuf)             /* a name the user did not give: say it */
                fprintf(stderr, "memtrace report: wrote %s\n", outpath);
        } else if (w < 0) {
            cli_error("report", "%s: invalid location code or out of memory", path);
        }
    } else {
        cli_out_abort(&of);
    }
    rp_profile_free(&p);
out:
    free(outbuf);
    mt_filter_free(&f);
    return rc;
}
