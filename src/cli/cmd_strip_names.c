/*
 * cmd_strip_names.c - `memtrace strip-names IN OUT`: write a shareable copy of
 * a trace with nothing that identifies the program, the machine or the code
 * (spec 11.6): a v003 trace whose info names "<anonymous>" as executable and
 * host, with pid 0, start time 0 and no context, holding every event of IN at
 * its time relative to the trace start, with the same ids, lengths, sample
 * counts and sources but empty backtraces (so no location events at all).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

#define CMD "strip-names"

void usage_strip_names(FILE *out)
{
    fprintf(out,
            "Usage: memtrace strip-names IN OUT\n"
            "\n"
            "Write to OUT an anonymised copy of the trace IN that can be shared\n"
            "without revealing the program, the machine or the source code. OUT is a\n"
            "format v003 trace whose info has:\n"
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
            "IN may be any format version; OUT must not be IN, even under another\n"
            "name. A multi-domain v003 trace whose allocation ids are not\n"
            "sequential cannot be stripped yet (exit status 1).\n"
            "\n"
            "If IN is damaged, OUT receives every event before the damage (a valid\n"
            "trace), the problem and its offset are reported on stderr and the\n"
            "command exits with status 1.\n"
            "\n"
            "Options:\n"
            "  --                   end of options (for file names starting with -)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Example:\n"
            "  memtrace strip-names app.ctf app-anonymous.ctf\n"
            "\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n");
}

static int same_file(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return 1;
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Re-emit every event; returns EXIT_OK or EXIT_DATA (message printed). */
static int strip_events(mt_reader *r, mt_writer *w, const char *in)
{
    const int64_t t0 = mt_reader_info(r)->start_time;
    mt_event ev;
    int st, rc = EXIT_OK;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        int ws;
        int64_t dt = ev.time - t0;
        if (ev.kind == MT_EVENT_ALLOC) {
            int64_t id;
            ws = mt_writer_alloc(w, dt, ev.length, ev.nsamples, ev.source,
                                 NULL, 0, NULL, NULL, &id);
            if (ws == MT_OK && id != ev.id) {
                cli_error(CMD, "%s: allocation ids are not sequential (event id "
                          "%lld, written as %lld): multi-domain traces cannot be "
                          "stripped yet", in, (long long)ev.id, (long long)id);
                rc = EXIT_DATA;
                break;
            }
        } else if (ev.kind == MT_EVENT_PROMOTE) {
            ws = mt_writer_promote(w, dt, ev.id);
        } else {
            ws = mt_writer_collect(w, dt, ev.id);
        }
        if (ws != MT_OK) {
            cli_error(CMD, "%s: event at offset %llu: %s", in,
                      (unsigned long long)mt_reader_offset(r), mt_writer_error(w));
            rc = EXIT_DATA;
            break;
        }
    }
    if (rc == EXIT_OK && st != MT_EOF) {
        cli_error(CMD, "%s: %s (the events before it were written)", in,
                  mt_reader_error(r));
        rc = EXIT_DATA;
    }
    return rc;
}

int cmd_strip_names(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0;
    int opts_done = 0;
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
        if (!opts_done && a[0] == '-' && a[1] != 0)
            return cli_usage_error(CMD, "unknown option '%s'", a);
        if (npaths == 2)
            return cli_usage_error(CMD, "expected IN and OUT, got more");
        paths[npaths++] = a;
    }
    if (npaths != 2)
        return cli_usage_error(CMD, "expected IN and OUT");
    const char *in = paths[0], *out = paths[1];
    if (same_file(in, out))
        return cli_usage_error(CMD, "OUT must not be the input file (%s)", out);

    mt_reader_options ropt = {0};
    ropt.skip_backtraces = 1;       /* they are dropped anyway */
    ropt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&ropt);
    if (!r) {
        cli_error(CMD, "out of memory");
        return EXIT_DATA;
    }
    if (mt_reader_open_file(r, in) != MT_OK) {
        cli_error(CMD, "%s: %s", in, mt_reader_error(r));
        mt_reader_close(r);
        return EXIT_DATA;
    }
    const mt_trace_info *src = mt_reader_info(r);
    mt_trace_info info = {0};
    info.sample_rate = src->sample_rate;
    info.word_size = src->word_size;
    info.executable_name = "<anonymous>";
    info.host_name = "<anonymous>";
    info.runtime_params = src->runtime_params;
    info.pid = 0;
    info.start_time = 0;
    info.context = NULL;

    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        cli_error(CMD, "cannot create %s: %s", out, strerror(errno));
        mt_reader_close(r);
        return EXIT_DATA;
    }
    mt_writer_options wopt = {0};
    wopt.format_version = 3;
    wopt.domain = 0;
    mt_writer *w;
    char err[256];
    int rc = EXIT_OK;
    if (mt_writer_open_fd(&w, fd, &info, &wopt, err, sizeof err)) {
        cli_error(CMD, "%s: %s", out, err);
        rc = EXIT_DATA;
    } else {
        rc = strip_events(r, w, in);
        if (mt_writer_finish(w) != MT_OK && rc == EXIT_OK) {
            cli_error(CMD, "%s: %s", out, mt_writer_error(w));
            rc = EXIT_DATA;
        }
        mt_writer_close(w);
    }
    if (close(fd) != 0 && rc == EXIT_OK) {
        cli_error(CMD, "%s: %s", out, strerror(errno));
        rc = EXIT_DATA;
    }
    mt_reader_close(r);
    return rc;
}
