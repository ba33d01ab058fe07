/*
 * progress.c - the progress line of long-running commands; see progress.h.
 */
#include "cli/progress.h"

#include "analysis/analysis.h"
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_start(cli_progress *p, const char *label, const char *path)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->enabled = isatty(STDERR_FILENO);
    struct stat st;
    if (path && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        p->total = (uint64_t)st.st_size;
    p->start = p->last = now_s();
}

void progress_update(cli_progress *p, uint64_t done)
{
    double t = now_s();
    if (t - p->start < 1.0 || t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = 1;
    if (p->total)
        fprintf(stderr, "\rmemtrace %s: %3.0f%% (%.0f of %.0f MB, %.0f MB/s)  ", p->label,
                100.0 * (double)done / (double)p->total, (double)done / 1e6,
                (double)p->total / 1e6, (double)done / 1e6 / (t - p->start));
    else
        fprintf(stderr, "\rmemtrace %s: %.0f MB read (%.0f MB/s)  ", p->label,
                (double)done / 1e6, (double)done / 1e6 / (t - p->start));
    fflush(stderr);
}

void progress_done(cli_progress *p)
{
    if (p->shown) {
        fprintf(stderr, "\r%*s\r", 72, "");
        fflush(stderr);
    }
    p->shown = 0;
}

typedef struct scan_wrap {
    mt_event_fn fn;
    void *ctx;
    mt_reader *r;
    cli_progress prog;
} scan_wrap;

static int tick_then(void *ctx, const mt_event *ev)
{
    scan_wrap *w = ctx;
    progress_tick(&w->prog, w->r);
    return w->fn(w->ctx, ev);
}

int cli_scan(mt_reader *r, const char *label, const char *path,
             mt_event_fn fn, void *ctx)
{
    scan_wrap w = {fn, ctx, r, {0}};
    progress_start(&w.prog, label, path);
    if (!w.prog.enabled)
        return mt_reader_scan(r, fn, ctx);
    int st = mt_reader_scan(r, tick_then, &w);
    progress_done(&w.prog);
    return st;
}

void progress_tick_fn(void *ctx, const mt_reader *r)
{
    progress_tick(ctx, r);
}

int cli_scan_filtered(const char *cmd, mt_scan *sc, const mt_filter *f,
                      const char *path)
{
    char label[64];
    cli_progress prog;
    int64_t peak = 0;
    cli_diag_ctx dctx = {cmd, path};
    if (f->live_mode == MT_LIVE_PEAK) {
        mt_timeline tl;
        mt_scan first = {0};
        if (mt_timeline_init(&tl)) {
            cli_error(cmd, "out of memory");
            return MT_ERR_NOMEM;
        }
        first.filter = f;
        first.live_at = -1;
        first.timeline = &tl;
        first.threads = cli_threads();
        first.diag = cli_print_diag_named;
        first.diag_ctx = &dctx;
        snprintf(label, sizeof label, "%s, finding the peak", cmd);
        progress_start(&prog, label, path);
        first.tick = progress_tick_fn;
        first.tick_ctx = &prog;
        int st = mt_scan_run(&first, path);
        progress_done(&prog);
        if (st != MT_OK)
            cli_error(cmd, "%s: %s", path, first.err);
        int64_t live;
        mt_timeline_peak(&tl, &peak, &live);
        mt_timeline_free(&tl);
        mt_scan_free(&first);
        if (st != MT_OK)
            return st;
    }
    sc->filter = f;
    sc->live_at = mt_filter_live_at(f, peak);
    sc->diag = f->live_mode == MT_LIVE_PEAK ? NULL : cli_print_diag_named;
    sc->diag_ctx = &dctx;
    progress_start(&prog, cmd, path);
    sc->tick = progress_tick_fn;
    sc->tick_ctx = &prog;
    int st = mt_scan_run(sc, path);
    progress_done(&prog);
    sc->tick = NULL;                    /* (prog ends here; the scan lives on) */
    sc->tick_ctx = NULL;
    sc->diag = NULL;                    /* (and dctx: a later read says nothing) */
    sc->diag_ctx = NULL;
    if (st != MT_OK && sc->err[0])     /* else a callback failed: its own */
        cli_error(cmd, "%s: %s", path, sc->err);
    return st;
}
