/*
 * cmd_speedscope.c - `memtrace speedscope [FILTERS] TRACE -o OUT.json`: the
 * trace's sampled allocations in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): three sampled
 * profiles weighted by estimated bytes - allocated, live at the peak, live
 * at the end - over shared frames with name, file and line.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "report/frames.h"
#include "report/profile.h"
#include "util/json.h"

void usage_speedscope(FILE *out)
{
    fprintf(out,
            "Usage: memtrace speedscope [FILTERS] TRACE -o OUT.json\n"
            "\n"
            "Write the sampled allocations of TRACE in speedscope's JSON file format\n"
            "(open it at https://www.speedscope.app or with the speedscope command).\n"
            "\n"
            "Output: frames shared by three sampled profiles, unit bytes:\n"
            "  allocated     estimated bytes allocated, per distinct backtrace\n"
            "  live at peak  of those, the bytes live at the peak of the heap\n"
            "                (the time memtrace top and live report)\n"
            "  live at end   the bytes never collected (leak candidates)\n"
            "Each sample is a backtrace, outermost caller first; a frame is one\n"
            "function, file and line of a location (inlined functions are frames of\n"
            "their own). Weights are samples / sample rate * word size, as in\n"
            "memtrace top, so each profile's total equals top's total.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   write the JSON to FILE ('-': standard output)\n"
            "  -h, --help          show this help\n"
            "\n"
            CLI_HELP_OUT_FILE
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "Filters select objects as in memtrace top; --hide leaves the frames of\n"
            "matching functions out of the stacks. TRACE is read twice (for the\n"
            "peak), so it must be a file (not '-').\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file on standard error), 2 bad usage.\n");
}

static void put_quoted(mt_out *o, const char *s, int *oom)
{
    char *q = json_quote(s);
    if (!q) {
        *oom = 1;
        return;
    }
    out_str(o, q);
    free(q);
}

/* One sampled profile: the stacks with a nonzero value of `which`
 * (0 allocated, 1 peak, 2 end). */
static int write_profile(mt_out *o, rp_profile *p, rp_frames *fr, const mt_filter *f,
                         int which, const char *name)
{
    int64_t total = which == 0 ? p->total.alloc : which == 1 ? p->total.peak : p->total.end;
    out_printf(o, "{\"type\": \"sampled\", \"name\": \"%s\", \"unit\": \"bytes\", "
                  "\"startValue\": 0, \"endValue\": %s, \"samples\": [",
               name, json_num(rp_bytes(p, total)).s);
    uint32_t *ids = NULL;
    size_t cap = 0, len, k = 0;
    for (size_t i = 0; i < p->n; i++) {
        const rp_stack *s = &p->v[i];
        int64_t v = which == 0 ? s->alloc : which == 1 ? s->peak : s->end;
        if (v <= 0)
            continue;
        if (rp_frames_of_stack(fr, p, f, (uint32_t)i, &ids, &cap, &len)) {
            free(ids);
            return -1;
        }
        out_str(o, k++ ? ",[" : "[");
        for (size_t j = 0; j < len; j++)
            out_printf(o, j ? ",%u" : "%u", ids[j]);
        out_str(o, "]");
        out_maybe_flush(o);
    }
    free(ids);
    out_str(o, "], \"weights\": [");
    k = 0;
    for (size_t i = 0; i < p->n; i++) {
        const rp_stack *s = &p->v[i];
        int64_t v = which == 0 ? s->alloc : which == 1 ? s->peak : s->end;
        if (v <= 0)
            continue;
        out_printf(o, k++ ? ",%s" : "%s", json_num(rp_bytes(p, v)).s);
        out_maybe_flush(o);
    }
    out_str(o, "]}");
    return 0;
}

static int write_speedscope(rp_profile *p, const mt_filter *f, int fd, const char *trace)
{
    rp_frames fr;
    memset(&fr, 0, sizeof fr);
    mt_out o;
    if (out_init(&o, fd)) {
        cli_error("speedscope", "out of memory");
        return -1;
    }
    int oom = 0;
    /* frames first: walk every stack once so all are interned */
    uint32_t *ids = NULL;
    size_t cap = 0, len;
    for (size_t i = 0; i < p->n && !oom; i++)
        if (p->v[i].count && rp_frames_of_stack(&fr, p, f, (uint32_t)i, &ids, &cap, &len))
            oom = 1;
    free(ids);
    const mt_trace_info *info = p->info;
    char name[600];
    snprintf(name, sizeof name, "%s [%lld]", info->executable_name, (long long)info->pid);
    out_str(&o, "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
                " \"exporter\": \"memtrace speedscope\",\n \"name\": ");
    put_quoted(&o, name, &oom);
    out_str(&o, ",\n \"activeProfileIndex\": 0,\n \"shared\": {\"frames\": [");
    for (size_t i = 0; i < fr.n && !oom; i++) {
        out_str(&o, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        put_quoted(&o, fr.v[i]->function, &oom);
        out_str(&o, ", \"file\": ");
        put_quoted(&o, fr.v[i]->filename, &oom);
        out_printf(&o, ", \"line\": %d}", fr.v[i]->line);
        out_maybe_flush(&o);
    }
    out_str(&o, "]},\n \"profiles\": [\n  ");
    if (!oom && (write_profile(&o, p, &fr, f, 0, "allocated") ||
                 (out_str(&o, ",\n  "), write_profile(&o, p, &fr, f, 1, "live at peak")) ||
                 (out_str(&o, ",\n  "), write_profile(&o, p, &fr, f, 2, "live at end"))))
        oom = 1;
    out_str(&o, "\n ]\n}\n");
    out_flush(&o);
    int rc = 0;
    if (oom) {
        cli_error("speedscope", "%s: invalid location code or out of memory", trace);
        rc = -1;
    } else if (o.err) {
        errno = o.err;
        rc = -2;
    }
    out_free(&o);
    rp_frames_free(&fr);
    return rc;
}

/* write_speedscope's arguments, for cli_out_write. */
typedef struct sp_job {
    rp_profile *p;
    const mt_filter *f;
    const char *trace;
} sp_job;

static int sp_write(void *ctx, int fd)
{
    sp_job *j = ctx;
    return write_speedscope(j->p, j->f, fd, j->trace);
}

int cmd_speedscope(int argc, char **argv)
{
    const char *path = NULL, *outpath = NULL;
    mt_filter f;
    mt_filter_init(&f);
    int rc = cli_parse_trace_out("speedscope", usage_speedscope, argc, argv, &f, &path, &outpath,
                             NULL, 0);
    if (rc >= 0)
        goto out;
    if (!path) {
        rc = cli_usage_error("speedscope", "missing TRACE argument");
        goto out;
    }
    if (!outpath || !outpath[0]) {
        rc = cli_usage_error("speedscope", outpath ? "empty output file name" : "missing -o OUT.json");
        goto out;
    }
    if ((rc = cli_read_twice("speedscope", "TRACE is read twice", path)) != 0)
        goto out;
    cli_out_file of;
    rc = EXIT_DATA;
    if (cli_out_open("speedscope", &of, outpath))
        goto out;
    rp_profile p;
    memset(&p, 0, sizeof p);
    p.need_timeline = 1;
    if (rp_profile_run(&p, "speedscope", path, &f) == MT_OK) {
        sp_job job = {&p, &f, path};
        if (cli_out_write("speedscope", &of, sp_write, &job) == 0)
            rc = EXIT_OK;
    } else {
        cli_out_abort(&of);
    }
    rp_profile_free(&p);
out:
    mt_filter_free(&f);
    return rc;
}
