/*
 * cmd_copy.c - `memtrace copy [--format-version N] IN OUT`: re-encode a
 * trace event by event (spec 8.9). A trace the reference writer produced in
 * one pass comes out bit for bit identical; v001 input is upgraded to v002,
 * and --format-version 3 writes the single-domain v003 encoding.
 */
#include <string.h>

#include "cli/cli.h"
#include "cli/rewrite.h"

void usage_copy(FILE *out)
{
    fprintf(out,
            "Usage: memtrace copy [OPTIONS] IN OUT\n"
            "\n"
            "Re-encode the trace IN into OUT with the same events, info and\n"
            "timestamps. Copying a trace written in one pass by the reference writer\n"
            "reproduces it bit for bit; v001 traces are upgraded to v002. A\n"
            "multi-domain v003 trace whose allocation ids are not sequential cannot\n"
            "be copied yet (exit status 1).\n"
            "If IN is damaged, OUT receives every event before the damage (a valid\n"
            "trace) and the command exits with status 1.\n"
            CLI_HELP_OUT_FILE
            "IN may be - for standard input, OUT - for standard output (not a\n"
            "terminal); OUT must not be IN, even under another name.\n"
            "\n"
            "Options:\n"
            "  --format-version N   write format version N: 2 (default) or 3\n"
            "                       (v003 with a single domain)\n"
            "  --                   end of options (for file names starting with -)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n");
}

/* Every event as it is: same ids, times, backtraces. */
static int copy_event(cli_rewrite *rw, const mt_event *ev, void *ctx)
{
    (void)ctx;
    if (ev->kind == MT_EVENT_PROMOTE)
        return mt_writer_promote(rw->w, ev->time, ev->id);
    if (ev->kind == MT_EVENT_COLLECT)
        return mt_writer_collect(rw->w, ev->time, ev->id);
    int64_t id;
    int st = cli_rewrite_alloc(rw, ev, ev->time, ev->nsamples, &id);
    return st ? st : cli_rewrite_same_id(rw, ev, id);
}

int cmd_copy(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0, version = 2, opts_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts_done && a[0] == '-' && a[1] != 0) {
            if (strcmp(a, "--") == 0) {
                opts_done = 1;
                continue;
            }
            if (cli_is_help(a)) {
                usage_copy(stdout);
                return EXIT_OK;
            }
            int k = cli_rewrite_version_opt("copy", argc, argv, &i, &version);
            if (k < 0)
                return EXIT_USAGE;
            if (k == 0)
                return cli_usage_error("copy", "unknown option '%s'", a);
            continue;
        }
        if (npaths == 2)
            return cli_usage_error("copy", "expected IN and OUT, got more");
        paths[npaths++] = a;
    }
    if (npaths != 2)
        return cli_usage_error("copy", "expected IN and OUT");
    cli_rewrite_spec spec = {0};
    spec.cmd = "copy";
    spec.in = paths[0];
    spec.out = paths[1];
    spec.format_version = version;
    spec.on_event = copy_event;
    return cli_rewrite_run(&spec);
}
