/*
 * cmd_copy.c - `memtrace copy [--format-version N] IN OUT`: re-encode a
 * trace event by event (spec 8.9). A trace the reference writer produced in
 * one pass comes out bit for bit identical; v001 input is upgraded to v002,
 * and --format-version 3 writes the single-domain v003 encoding.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"

void usage_copy(FILE *out)
{
    fprintf(out,
            "Usage: memtrace copy [OPTIONS] IN OUT\n"
            "\n"
            "Re-encode the trace IN into OUT with the same events, info and\n"
            "timestamps. Copying a trace written in one pass by the reference writer\n"
            "reproduces it bit for bit; v001 traces are upgraded to v002.\n"
            "If IN is damaged, OUT receives every event before the damage (a valid\n"
            "trace) and the command exits with status 1.\n"
            "\n"
            "Options:\n"
            "  --format-version N   write format version N: 2 (default) or 3\n"
            "                       (v003 with a single domain)\n"
            "  -h, --help           show this help\n"
            "\n"
            "Exit status: 0 success, 1 bad trace or I/O error, 2 bad usage.\n");
}

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    return mt_reader_locations(ctx, code, locs, n) == MT_OK ? 0 : -1;
}

/* Copy every event; returns EXIT_OK or EXIT_DATA (message printed). */
static int copy_events(mt_reader *r, mt_writer *w, const char *in)
{
    cli_progress prog;
    progress_start(&prog, "memtrace copy", in);
    uint64_t *cs = NULL;
    size_t cap = 0;
    mt_event ev;
    int st, rc = EXIT_OK;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        int ws;
        progress_tick(&prog, r);
        if (ev.kind == MT_EVENT_ALLOC) {
            if (ev.backtrace_len > cap) {
                cap = ev.backtrace_len * 2;
                uint64_t *p = realloc(cs, cap * sizeof *p);
                if (!p) {
                    cli_error("copy", "out of memory");
                    rc = EXIT_DATA;
                    break;
                }
                cs = p;
            }
            size_t n = ev.backtrace_len;
            for (size_t i = 0; i < n; i++)      /* caller first -> callee first */
                cs[i] = ev.backtrace[n - 1 - i];
            int64_t id;
            ws = mt_writer_alloc(w, ev.time, ev.length, ev.nsamples, ev.source,
                                 cs, n, locate, r, &id);
            if (ws == MT_OK && id != ev.id) {
                cli_error("copy", "%s: allocation ids are not sequential (event id "
                          "%lld, written as %lld): multi-domain traces cannot be "
                          "copied yet", in, (long long)ev.id, (long long)id);
                rc = EXIT_DATA;
                break;
            }
        } else if (ev.kind == MT_EVENT_PROMOTE) {
            ws = mt_writer_promote(w, ev.time, ev.id);
        } else {
            ws = mt_writer_collect(w, ev.time, ev.id);
        }
        if (ws != MT_OK) {
            cli_error("copy", "%s: event at offset %llu: %s", in,
                      (unsigned long long)mt_reader_offset(r), mt_writer_error(w));
            rc = EXIT_DATA;
            break;
        }
    }
    progress_done(&prog);
    if (rc == EXIT_OK && st != MT_EOF) {
        cli_error("copy", "%s: %s (the events before it were copied)", in,
                  mt_reader_error(r));
        rc = EXIT_DATA;
    }
    free(cs);
    return rc;
}

int cmd_copy(int argc, char **argv)
{
    const char *paths[2];
    int npaths = 0, version = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage_copy(stdout);
            return EXIT_OK;
        }
        if (strcmp(a, "--format-version") == 0 ||
            strncmp(a, "--format-version=", 17) == 0) {
            const char *v = a[16] == '=' ? a + 17 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || (strcmp(v, "2") != 0 && strcmp(v, "3") != 0))
                return cli_usage_error("copy", "--format-version takes 2 or 3");
            version = v[0] - '0';
            continue;
        }
        if (a[0] == '-' && a[1] != 0)
            return cli_usage_error("copy", "unknown option '%s'", a);
        if (npaths == 2)
            return cli_usage_error("copy", "expected IN and OUT, got more");
        paths[npaths++] = a;
    }
    if (npaths != 2)
        return cli_usage_error("copy", "expected IN and OUT");
    const char *in = paths[0], *out = paths[1];

    mt_reader_options ropt = {0};
    ropt.diag = cli_print_diag;
    mt_reader *r = mt_reader_create(&ropt);
    if (!r) {
        cli_error("copy", "out of memory");
        return EXIT_DATA;
    }
    if (mt_reader_open_file(r, in) != MT_OK) {
        cli_error("copy", "%s: %s", in, mt_reader_error(r));
        mt_reader_close(r);
        return EXIT_DATA;
    }
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        cli_error("copy", "cannot create %s: %s", out, strerror(errno));
        mt_reader_close(r);
        return EXIT_DATA;
    }
    mt_writer_options wopt = {0};
    wopt.format_version = version;
    mt_writer *w;
    char err[256];
    int rc = EXIT_OK;
    if (mt_writer_open_fd(&w, fd, mt_reader_info(r), &wopt, err, sizeof err)) {
        cli_error("copy", "%s: %s", out, err);
        rc = EXIT_DATA;
    } else {
        rc = copy_events(r, w, in);
        if (mt_writer_finish(w) != MT_OK && rc == EXIT_OK) {
            cli_error("copy", "%s: %s", out, mt_writer_error(w));
            rc = EXIT_DATA;
        }
        mt_writer_close(w);
    }
    if (close(fd) != 0 && rc == EXIT_OK) {
        cli_error("copy", "%s: %s", out, strerror(errno));
        rc = EXIT_DATA;
    }
    mt_reader_close(r);
    return rc;
}
