/*
 * progress.h - a progress line on stderr for long runs: shown only when
 * stderr is a terminal and the run has lasted more than a second, updated at
 * most five times a second, erased when the work is done.
 */
#ifndef MT_PROGRESS_H
#define MT_PROGRESS_H

#include <stdint.h>

#include "memtrace/memtrace.h"

typedef struct cli_progress {
    int enabled, shown;
    uint64_t total;          /* bytes of input, 0 if unknown */
    uint64_t ticks;
    double start, last;
    const char *label;
} cli_progress;

/* label: the command's name (the line reads "memtrace LABEL: ..."); path:
 * its input (for the total size). */
void progress_start(cli_progress *p, const char *label, const char *path);
void progress_update(cli_progress *p, uint64_t done_bytes);
void progress_done(cli_progress *p);

/* Cheap to call per event: looks at the clock every 65536 calls. */
static inline void progress_tick(cli_progress *p, const mt_reader *r)
{
    if (p->enabled && (++p->ticks & 0xFFFF) == 0)
        progress_update(p, mt_reader_offset(r));
}

/* progress_tick as a callback taking the cli_progress as its context. */
void progress_tick_fn(void *ctx, const mt_reader *r);

/* mt_reader_scan with a progress line when stderr is a terminal (and no
 * added cost when it is not). label: the command; path: its input. */
int cli_scan(mt_reader *r, const char *label, const char *path,
             mt_event_fn fn, void *ctx);

struct mt_scan;
struct mt_filter;

/* mt_scan_run of sc (its callbacks set by the caller) over path with
 * filter f, with progress lines; --live-at peak first finds the peak with a
 * pass of its own (diagnostics are printed by one pass only). Errors are
 * printed as "memtrace CMD: PATH: message". Returns MT_OK or the status;
 * sc is left for the caller to mt_scan_free. */
int cli_scan_filtered(const char *cmd, struct mt_scan *sc,
                      const struct mt_filter *f, const char *path);

#endif /* MT_PROGRESS_H */
