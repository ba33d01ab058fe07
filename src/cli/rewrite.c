/*
 * rewrite.c - the shared skeleton of copy, subsample and strip-names; see
 * rewrite.h.
 */
#include "cli/rewrite.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "cli/cli.h"
#include "util/grow.h"

/* "-": standard input for IN, standard output for OUT. */
static int is_std(const char *path)
{
    return strcmp(path, "-") == 0;
}

static int locate(void *ctx, uint64_t code, const mt_location **locs, size_t *n)
{
    return mt_reader_locations(ctx, code, locs, n) == MT_OK ? 0 : -1;
}

int cli_rewrite_defined(cli_rewrite *rw, const mt_event *ev)
{
    if (mt_newcodes_undefined(&rw->nc, rw->r, ev, &rw->undefined))
        return 0;
    rw->defined = 1;
    return 1;
}

int cli_rewrite_alloc(cli_rewrite *rw, const mt_event *ev, int64_t time,
                      int64_t nsamples, int64_t *id)
{
    /* (checked first: the writer would write the event, the code without
     * locations, and OUT would not be IN's events before the damage) */
    if (!rw->defined && !cli_rewrite_defined(rw, ev))
        return MT_ERR_LOCATION;     /* (subsample may have checked it) */
    size_t n = ev->backtrace_len;
    if (grow_array(&rw->cs, &rw->cs_cap, n, sizeof *rw->cs))
        return MT_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)              /* caller first -> callee first */
        rw->cs[i] = ev->backtrace[n - 1 - i];
    return mt_writer_alloc(rw->w, time, ev->length, nsamples, ev->source,
                           rw->cs, n, locate, rw->r, id);
}

int cli_rewrite_same_id(cli_rewrite *rw, const mt_event *ev, int64_t id)
{
    if (id == ev->id)
        return MT_OK;
    cli_error(rw->cmd, "%s: allocation ids are not sequential (event id %lld, "
              "written as %lld): multi-domain traces are not supported yet",
              rw->in, (long long)ev->id, (long long)id);
    return -1;
}

/* The event loop; returns EXIT_OK or EXIT_DATA (reported). *damaged is set
 * when the input's damage stopped it: the output, finished, then holds
 * every event before the damage, and is kept. */
static int run_events(cli_rewrite *rw, const cli_rewrite_spec *spec, int *damaged)
{
    mt_event ev;
    int st;
    progress_start(&rw->prog, rw->cmd, rw->in);
    while ((st = mt_reader_next(rw->r, &ev)) == MT_OK) {
        progress_tick(&rw->prog, rw->r);
        rw->defined = 0;
        int ws = spec->on_event(rw, &ev, spec->ctx);
        if (ws == MT_OK)
            continue;
        progress_done(&rw->prog);
        unsigned long long off = mt_reader_offset(rw->r);
        if (ws == -1) {
            ;                   /* reported by on_event */
        } else if (ws == MT_ERR_LOCATION && !rw->defined) {
            /* IN's damage, found before the event was written */
            cli_error(rw->cmd, "%s: " MT_BAD_CODE_FMT " (%s holds every event before it)",
                      rw->in, off, (unsigned long long)rw->undefined, cli_out_name(rw->out));
            *damaged = 1;
        } else if (ws == MT_ERR_IO)       /* the output's fault, not the input's */
            cli_error(rw->cmd, "%s: %s", cli_out_name(rw->out), mt_writer_error(rw->w));
        else
            cli_error(rw->cmd, "%s: offset %llu: %s", rw->in, off,
                      ws == MT_ERR_NOMEM ? "out of memory" : mt_writer_error(rw->w));
        return EXIT_DATA;
    }
    progress_done(&rw->prog);
    if (st != MT_EOF) {
        cli_error(rw->cmd, "%s: %s (%s holds every event before it)", rw->in,
                  mt_reader_error(rw->r), cli_out_name(rw->out));
        *damaged = 1;
        return EXIT_DATA;
    }
    return EXIT_OK;
}

int cli_rewrite_run(const cli_rewrite_spec *spec)
{
    cli_rewrite rw = {0};
    rw.cmd = spec->cmd;
    rw.in = spec->in;
    rw.out = spec->out;
    if (cli_same_file(spec->in, spec->out))
        return cli_usage_error(spec->cmd, "OUT must not be the input file (%s)",
                               spec->out);
    if (is_std(spec->out) && isatty(STDOUT_FILENO))
        return cli_usage_error(spec->cmd, "OUT is - and standard output is a terminal: "
                               "redirect it to a file or a pipe");

    mt_reader_options ropt = {0};
    ropt.skip_backtraces = spec->skip_backtraces;
    cli_diag_ctx dctx = {spec->cmd, spec->in};
    ropt.diag = cli_print_diag_named;
    ropt.diag_ctx = &dctx;
    rw.r = mt_reader_create(&ropt);
    if (!rw.r) {
        cli_error(spec->cmd, "out of memory");
        return EXIT_DATA;
    }
    if ((is_std(spec->in) ? mt_reader_open_fd(rw.r, STDIN_FILENO)
                          : mt_reader_open_file(rw.r, spec->in)) != MT_OK) {
        cli_error(spec->cmd, "%s: %s", spec->in, mt_reader_error(rw.r));
        mt_reader_close(rw.r);
        return EXIT_DATA;
    }
    mt_trace_info info = *mt_reader_info(rw.r);
    if (spec->edit_info)
        spec->edit_info(&info, spec->ctx);
    cli_out_file of;
    if (cli_out_open(spec->cmd, &of, spec->out) || cli_out_start(spec->cmd, &of)) {
        if (of.fd >= 0)
            cli_out_abort(&of);
        mt_reader_close(rw.r);
        return EXIT_DATA;
    }
    mt_writer_options wopt = {0};
    wopt.format_version = spec->format_version;
    /* v003: the input's domain (a trace of domain 1 stays one; v002 has 0) */
    wopt.domain = info.initial_domain;
    char err[256];
    int rc, keep = 0;           /* keep: OUT is a whole trace */
    if (mt_writer_open_fd(&rw.w, of.fd, &info, &wopt, err, sizeof err)) {
        cli_error(spec->cmd, "%s: %s", cli_out_name(spec->out), err);
        rc = EXIT_DATA;
    } else {
        int damaged = 0;
        rc = run_events(&rw, spec, &damaged);
        keep = rc == EXIT_OK || damaged;
        if (mt_writer_finish(rw.w) != MT_OK && keep) {
            cli_error(spec->cmd, "%s: %s", cli_out_name(spec->out), mt_writer_error(rw.w));
            rc = EXIT_DATA;
            keep = 0;
        }
        mt_writer_close(rw.w);
    }
    if (keep) {
        if (cli_out_commit(spec->cmd, &of))
            rc = EXIT_DATA;
    } else if (cli_out_abort(&of)) {
        cli_error(spec->cmd, "%s is incomplete: not a whole trace", spec->out);
    }
    free(rw.cs);
    mt_reader_close(rw.r);
    return rc;
}

int cli_rewrite_version_opt(const char *cmd, int argc, char **argv, int *i, int *version)
{
    const char *v;
    int k = cli_opt_value(cmd, argc, argv, i, "--format-version", &v);
    if (k <= 0)
        return k;
    if (strcmp(v, "2") != 0 && strcmp(v, "3") != 0) {
        cli_usage_error(cmd, "--format-version takes 2 or 3, got '%s'", v);
        return -1;
    }
    *version = v[0] - '0';
    return 1;
}
