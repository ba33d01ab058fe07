/*
 * rewrite.h - what the commands that turn one trace into another share
 * (copy, subsample, strip-names): refuse OUT == IN, open IN, create OUT,
 * run the command's per-event function with a writer and a progress line,
 * and finish OUT as a valid trace even when IN is damaged, reporting the
 * damage with its offset.
 */
#ifndef MT_REWRITE_H
#define MT_REWRITE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/newcodes.h"
#include "cli/progress.h"
#include "memtrace/memtrace.h"

typedef struct cli_rewrite {
    const char *cmd, *in, *out;
    mt_reader *r;
    mt_writer *w;
    uint64_t *cs;                /* callee-first copy of a backtrace */
    size_t cs_cap;
    cli_progress prog;
    mt_newcodes nc;              /* codes looked up: see cli_rewrite_defined */
    int defined;                 /* this event found defined (reset per event) */
    uint64_t undefined;          /* the code cli_rewrite_defined found without
                                    locations                                */
} cli_rewrite;

/* Write what ev becomes. Return MT_OK, a writer status (its message is
 * reported), or -1 after reporting an error itself. */
typedef int (*cli_rewrite_fn)(cli_rewrite *rw, const mt_event *ev, void *ctx);

typedef struct cli_rewrite_spec {
    const char *cmd, *in, *out;
    int skip_backtraces;         /* the output gets no backtraces           */
    int format_version;          /* of OUT: 2 or 3                          */
    void (*edit_info)(mt_trace_info *info, void *ctx); /* NULL: IN's info  */
    cli_rewrite_fn on_event;
    void *ctx;
} cli_rewrite_spec;

/* --format-version V (2 or 3) at argv[*i], for copy and strip-names:
 * 1 and *version set (*i past its value), 0 when argv[*i] is another
 * option, -1 after a usage error (reported). */
int cli_rewrite_version_opt(const char *cmd, int argc, char **argv, int *i, int *version);

/* Run the whole command; returns its exit status. */
int cli_rewrite_run(const cli_rewrite_spec *spec);

/* Write ev as an allocation at `time` with `nsamples` and, unless the spec
 * skipped them, its backtrace (locations from IN). *id gets OUT's id.
 * MT_ERR_LOCATION, with nothing written, when IN's damage left a code of
 * the backtrace without locations (cli_rewrite_defined). */
int cli_rewrite_alloc(cli_rewrite *rw, const mt_event *ev, int64_t time,
                      int64_t nsamples, int64_t *id);

/* Whether every code that allocation ev's backtrace may show for the first
 * time has a location event in IN. Call it for every allocation in order
 * (cli_rewrite_alloc does), dropped ones too: it looks up only the frames
 * that may be new (analysis/newcodes.h). */
int cli_rewrite_defined(cli_rewrite *rw, const mt_event *ev);

/* For commands that keep ids: MT_OK if OUT's id equals IN's, else report
 * why not (multi-domain input) and return -1. */
int cli_rewrite_same_id(cli_rewrite *rw, const mt_event *ev, int64_t id);

#endif /* MT_REWRITE_H */
