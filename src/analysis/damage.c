/*
 * damage.c - the first damage of a trace, found with everything checked:
 * backtraces decoded, cache verifiers compared and every code a backtrace
 * shows looked up. Commands that read without backtraces (info, live,
 * the first pass of speedscope, report and pprof: faster) stop at the
 * first damage they can see, which may come after one they cannot (a code
 * without locations, a bad verifier); when they fail, they ask this for
 * the earliest, so that every command names the same first damage of a
 * file. (strip-names does not: OUT holds every event before the damage
 * it stopped at, which its message names.)
 */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/newcodes.h"

typedef struct damage_walk {
    mt_reader *r;
    mt_newcodes nc;
    char *err;
    size_t errsize;
    int found;
} damage_walk;

static int check_codes(void *ctx, const mt_event *ev)
{
    damage_walk *d = ctx;
    uint64_t code;
    if (ev->kind != MT_EVENT_ALLOC || !mt_newcodes_undefined(&d->nc, d->r, ev, &code))
        return 0;
    snprintf(d->err, d->errsize, MT_BAD_CODE_FMT, (unsigned long long)mt_reader_offset(d->r),
             (unsigned long long)code);
    d->found = 1;
    return 1;
}

int mt_first_damage(const char *path, char *err, size_t errsize)
{
    if (strcmp(path, "-") == 0)
        return 0;                       /* (read once, already) */
    mt_reader *r = mt_reader_create(NULL);
    if (!r)
        return 0;
    damage_walk d = {r, {0}, err, errsize, 0};
    if (mt_reader_open_file(r, path) == MT_OK) {
        int st = mt_reader_scan(r, check_codes, &d);
        if (!d.found && st != MT_EOF && st != MT_OK && st != MT_ERR_NOMEM &&
            st != MT_ERR_IO) {
            snprintf(err, errsize, "%s", mt_reader_error(r));
            d.found = 1;
        }
    }
    mt_reader_close(r);
    return d.found;
}
