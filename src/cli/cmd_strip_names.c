/*
 * cmd_strip_names.c - `memtrace strip-names IN OUT`: write a shareable copy of
 * a trace with nothing that identifies the program, the machine or the code
 * (spec 11.6): a v003 trace (v002 on request) whose info names "<anonymous>"
 * as executable and host, with pid 0, start time 0 and no context, holding
 * every event of IN at its time relative to the trace start, with the same
 * ids, lengths, sample counts and sources but empty backtraces (so no
 * location events at all).
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/rewrite.h"

#define CMD "strip-names"

void usage_strip_names(FILE *out)
{
    fprintf(out,
            "Usage: memtrace strip-names [OPTIONS] IN OUT\n"
            "\n"
            "Write to OUT an anonymised copy of the trace IN that can be shared\n"
            "without revealing the program, the machine or the source code. OUT is a\n"
            "trace (format v003 unless --format-version says 2) whose info has:\n"
            "  executable name and host name  \"<anonymous>\"\n"
            "  pid and start time             0 (timestamps count from the epoch,\n"
            "                                 so they equal the time since IN started)\n"
            "  context                        none\n"
            "  sample rate, word size and runtime parameters as in IN.\n"
            "Every event of IN (allocation, promotion, collection) is written in\n"
            "order with the same object id and time since the start of the trace;\n"
            "allocations keep their length, sample count and source but get an\n"
            "empty backtrace, so OUT holds no location (file or function name) at\n"
            "all. Statistics such as `memtrace info` still work on OUT; reports that\n"
            "need backtraces (flamegraph, hotspots) have nothing to show.\n"
            "\n"
            "IN may be any format version, and - for standard input; OUT - for\n"
            "standard output (not a terminal). OUT must not be IN, even under\n"
            "another name. A multi-domain v003 trace whose allocation ids are not\n"
            "sequential cannot be stripped yet (exit status 1).\n"
            "\n"
            "If IN is damaged, OUT receives every event before the damage (a valid\n"
            "trace), the problem and its offset are reported on stderr and the\n"
            "command exits with status 1. IN's backtraces are skipped, not decoded,\n"
            "so damage inside them goes unnoticed (it is not copied either); `memtrace\n"
            "check` finds it.\n"
            CLI_HELP_OUT_FILE
            "\n"
            "Options:\n"
            "  --format-version V   write OUT in format version V: 3 (the default,\n"
            "                       as the reference's strip_names) or 2, for readers\n"
            "                       that do not know v003 (the released reference\n"
            "                       tools read v001 and v002)\n"
            "  --                   end of options (for file names starting with -)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Example:\n"
            "  memtrace strip-names app.ctf app-anonymous.ctf\n"
            "\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n");
}

/* Re-emit every event; returns EXIT_OK or EXIT_DATA (message printed). */
/* The output's info: nothing that names the program, machine or time. */
static void anonymous_info(mt_trace_info *info, void *ctx)
{
    (void)ctx;
    info->executable_name = "<anonymous>";
    info->host_name = "<anonymous>";
    info->pid = 0;
    info->start_time = 0;
    info->context = NULL;
}

/* Every event at its time since the trace start, allocations without
 * backtraces (the reader skips them), ids unchanged. */
static int strip_event(cli_rewrite *rw, const mt_event *ev, void *ctx)
{
    (void)ctx;
    int64_t dt = ev->time - mt_reader_info(rw->r)->start_time;
    if (ev->kind == MT_EVENT_PROMOTE)
        return mt_writer_promote(rw->w, dt, ev->id);
    if (ev->kind == MT_EVENT_COLLECT)
        return mt_writer_collect(rw->w, dt, ev->id);
    int64_t id;
    int st = cli_rewrite_alloc(rw, ev, dt, ev->nsamples, &id);
    return st ? st : cli_rewrite_same_id(rw, ev, id);
}

int cmd_strip_names(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0, version = 3, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && strcmp(a, "--") == 0) {
            opts_done = 1;
            continue;
        }
        if (!opts_done && cli_is_help(a)) {
            usage_strip_names(stdout);
            return EXIT_OK;
        }
        if (!opts_done && a[0] == '-' && a[1] != 0) {
            int k = cli_rewrite_version_opt(CMD, argc, argv, &i, &version);
            if (k < 0)
                return EXIT_USAGE;
            if (k == 0)
                return cli_usage_error(CMD, "unknown option '%s'", a);
            continue;
        }
        if (npaths == 2)
            return cli_usage_error(CMD, "expected IN and OUT, got more");
        paths[npaths++] = a;
    }
    if (npaths != 2)
        return cli_usage_error(CMD, "expected IN and OUT");
    cli_rewrite_spec spec = {0};
    spec.cmd = CMD;
    spec.in = paths[0];
    spec.out = paths[1];
    spec.skip_backtraces = 1;       /* they are dropped anyway */
    spec.format_version = version;
    spec.edit_info = anonymous_info;
    spec.on_event = strip_event;
    return cli_rewrite_run(&spec);
}
