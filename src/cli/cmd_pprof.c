/*
 * cmd_pprof.c - `memtrace pprof [FILTERS] TRACE -o OUT.pb.gz`: the trace's
 * sampled allocations as a gzipped pprof profile (profile.proto), for
 * `go tool pprof`, Pyroscope, Parca and the other tools that read it.
 * Aggregation in src/report/profile.c, encoding in src/report/pprof.c.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "report/pprof.h"
#include "report/profile.h"

void usage_pprof(FILE *out)
{
    fprintf(out,
            "Usage: memtrace pprof [FILTERS] TRACE -o OUT.pb.gz\n"
            "\n"
            "Write the sampled allocations of TRACE as a gzipped pprof profile\n"
            "(profile.proto), for go tool pprof, Pyroscope, Parca and the like:\n"
            "  memtrace pprof prog.ctf -o prog.pb.gz && go tool pprof -top prog.pb.gz\n"
            "\n"
            "Sample types (go tool pprof -sample_index=NAME; inuse_space is shown\n"
            "by default):\n"
            "  alloc_objects  estimated objects allocated\n"
            "  alloc_space    estimated bytes allocated\n"
            "  inuse_objects  estimated objects live at the end of the trace, or\n"
            "                 at the time --live-at names\n"
            "  inuse_space    estimated bytes live then\n"
            "Estimates: a sample stands for 1 / sample-rate words, so bytes are\n"
            "samples / rate * word size (as in memtrace top); an object of LENGTH\n"
            "words is counted as samples / (rate * LENGTH) objects. Both are\n"
            "unbiased; each value is rounded to an integer per pprof sample.\n"
            "\n"
            "One pprof sample per distinct list of locations (backtraces that\n"
            "differ only in hidden frames or codes without a location are one);\n"
            "one location per backtrace code with a location, its lines the\n"
            "code's inlined functions (innermost first); one function per name\n"
            "and file. The period is the bytes one sample stands for; time and\n"
            "duration are the trace's.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE   write the profile to FILE ('-': standard output,\n"
            "                      not a terminal)\n"
            "  -h, --help          show this help\n"
            "\n"
            CLI_HELP_OUT_FILE
            "\n");
    mt_filter_help(out);
    fprintf(out,
            "\n"
            "Every filter selects objects as in memtrace top, except --live-at: it\n"
            "only chooses the moment of the inuse_* values (alloc_* count every\n"
            "object the other filters select). --hide leaves the frames of matching\n"
            "functions out of the stacks. TRACE '-' reads standard input, but with\n"
            "--live-at peak, which reads TRACE twice.\n"
            "\n"
            "Exit status: 0 success, 1 malformed trace or I/O error (message with\n"
            "the file on standard error), 2 bad usage.\n");
}

/* rp_write_pprof's arguments, for cli_out_write; err gets its message. */
typedef struct pp_job {
    rp_profile *p;
    const mt_filter *f;
    const char *name;
    char *err;
    size_t errlen;
} pp_job;

static int pp_write(void *ctx, int fd)
{
    pp_job *j = ctx;
    return rp_write_pprof(j->p, j->f, fd, j->name, j->err, j->errlen);
}

int cmd_pprof(int argc, char **argv)
{
    const char *path = NULL, *outpath = NULL;
    mt_filter f;
    mt_filter_init(&f);
    char err[512];
    int rc = cli_parse_trace_out("pprof", usage_pprof, argc, argv, &f, &path, &outpath,
                             NULL, 0);
    if (rc >= 0)
        goto out;
    if (!path) {
        rc = cli_usage_error("pprof", "missing TRACE argument");
        goto out;
    }
    if (!outpath || !outpath[0]) {
        rc = cli_usage_error("pprof", outpath ? "empty output file name" : "missing -o OUT.pb.gz");
        goto out;
    }
    if ((rc = cli_check_filters("pprof", &f, path)) != 0)
        goto out;
    if (strcmp(outpath, "-") == 0 && isatty(STDOUT_FILENO)) {   /* (gzip) */
        rc = cli_usage_error("pprof", "OUT is - and standard output is a terminal: "
                             "redirect it to a file or a pipe");
        goto out;
    }
    cli_out_file of;
    rc = EXIT_DATA;
    if (cli_out_open("pprof", &of, outpath))
        goto out;
    rp_profile p;
    memset(&p, 0, sizeof p);
    p.live_as_time = 1;
    if (rp_profile_run(&p, "pprof", path, &f) == MT_OK) {
        pp_job job = {&p, &f, cli_out_name(outpath), err, sizeof err};
        int w = cli_out_write("pprof", &of, pp_write, &job);
        if (w == 0)
            rc = EXIT_OK;
        else if (w < 0)
            cli_error("pprof", "%s%s", err, of.partial ? " (the file is incomplete)" : "");
    } else {
        cli_out_abort(&of);
    }
    rp_profile_free(&p);
out:
    mt_filter_free(&f);
    return rc;
}
