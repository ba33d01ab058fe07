/*
 * filter.c - mt_filter, the object filter shared by `memtrace top`, `live`
 * and `diff`: parsing of its command-line options, the check of their
 * final values (mt_filter_check), their help text, and the per-object
 * predicate.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "util/json.h"
#include "util/numtext.h"
#include "util/substrset.h"

void mt_filter_init(mt_filter *f)
{
    memset(f, 0, sizeof *f);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void mt_filter_free(mt_filter *f)
{
    free_list(f->in, f->nin);
    free_list(f->not_in, f->nnot_in);
    free_list(f->hide, f->nhide);
    if (f->hide_set) {
        substrset_free(f->hide_set);
        free(f->hide_set);
    }
    memset(f, 0, sizeof *f);
}

void mt_filter_help(FILE *out)
{
    fprintf(out,
            "Filters (the same in every command that reads stacks; all must hold):\n"
            "  --from S, --to S      only objects allocated at or after S / before S\n"
            "                        seconds since the start of the trace\n"
            "  --live-at T|peak|end  only objects live at time T (seconds since the\n"
            "                        start): allocated at or before T and not yet\n"
            "                        collected. 'peak': the time of the largest\n"
            "                        estimated live heap of the objects selected by\n"
            "                        the other filters (a first pass over the trace,\n"
            "                        so TRACE cannot be standard input); 'end': never\n"
            "                        collected (leak candidates)\n"
            "  --min-size B, --max-size B\n"
            "                        only objects of at least / at most B bytes\n"
            "                        (length in words * word size); suffixes: b or B\n"
            "                        for bytes; k, m, g, t in either case, alone or\n"
            "                        followed by iB or B, for 1024, 1024^2, 1024^3,\n"
            "                        1024^4 bytes (1k = 1K = 1KiB = 1kB = 1024)\n"
            "  --min-lifetime S, --max-lifetime S\n"
            "                        only objects that lived at least / at most S\n"
            "                        seconds (collection - allocation; an object never\n"
            "                        collected lives until the end of the trace)\n"
            "  --source minor|major|external\n"
            "                        only allocations of that kind (repeatable: any of\n"
            "                        those given)\n"
            "  --in FUNC             only allocations with a function whose name\n"
            "                        contains FUNC on the backtrace (repeatable: all)\n"
            "  --not-in FUNC         only allocations with no such function\n"
            "                        (repeatable: none of them)\n"
            "  --hide FUNC           drop frames whose function contains FUNC, so the\n"
            "                        allocation site is their caller (for allocation\n"
            "                        wrappers such as Stdlib.Array.make; repeatable)\n");
}

static int set_err(char *err, size_t n, const char *opt, const char *val,
                   const char *what)
{
    snprintf(err, n, "%s: invalid value '%s' (%s)", opt, val, what);
    return -1;
}

static int parse_secs(const char *s, int64_t *us)
{
    char *end;
    const char *e;
    if (!mt_plain_number(s, &e) || *e)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v) || v < 0 || v > 9e12)
        return -1;
    *us = (int64_t)llround(v * 1e6);
    return 0;
}

static int parse_size(const char *s, double *bytes)
{
    char *end;
    const char *e;
    if (!mt_plain_number(s, &e))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (end != e)               /* (strtod read on: "0x10") */
        return -1;
    if (end == s || errno || !isfinite(v) || v < 0)
        return -1;
    double unit = mt_size_unit(end);
    if (unit == 0)
        return -1;
    *bytes = v * unit;
    return 0;
}

static int push(char ***v, size_t *n, const char *s)
{
    char **q = realloc(*v, (*n + 1) * sizeof *q);
    if (!q)
        return -1;
    *v = q;
    if (!(q[*n] = strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

static const char *const opts[] = {
    "--from", "--to", "--live-at", "--min-size", "--max-size",
    "--min-lifetime", "--max-lifetime", "--source", "--in", "--not-in",
    "--hide", NULL};

int mt_filter_parse_arg(mt_filter *f, int argc, char **argv, int *i,
                        char *err, size_t errlen)
{
    const char *arg = argv[*i];
    const char *opt = NULL, *val = NULL;
    size_t k;
    for (k = 0; opts[k]; k++) {
        size_t l = strlen(opts[k]);
        if (strncmp(arg, opts[k], l) == 0 && (arg[l] == 0 || arg[l] == '=')) {
            opt = opts[k];
            if (arg[l] == '=')
                val = arg + l + 1;
            break;
        }
    }
    if (!opt)
        return 0;
    int used = 1;
    if (!val) {
        if (*i + 1 >= argc) {
            snprintf(err, errlen, "%s needs a value", opt);
            return -1;
        }
        val = argv[*i + 1];
        used = 2;
    }
    int64_t us;
    double b;
    switch (k) {
    case 0:
    case 1:
        if (parse_secs(val, &us))
            return set_err(err, errlen, opt, val, "seconds from 0 to 9e12 expected");
        if (k == 0)
            f->has_from = 1, f->from = us;
        else
            f->has_to = 1, f->to = us;
        break;
    case 2:
        if (strcmp(val, "peak") == 0)
            f->live_mode = MT_LIVE_PEAK;
        else if (strcmp(val, "end") == 0)
            f->live_mode = MT_LIVE_END;
        else if (parse_secs(val, &us) == 0)
            f->live_mode = MT_LIVE_TIME, f->live_at = us;
        else
            return set_err(err, errlen, opt, val, "seconds, 'peak' or 'end' expected");
        break;
    case 3:
    case 4:
        if (parse_size(val, &b))
            return set_err(err, errlen, opt, val, "bytes expected");
        if (k == 3)
            f->has_min_size = 1, f->min_size = b;
        else
            f->has_max_size = 1, f->max_size = b;
        break;
    case 5:
    case 6:
        if (parse_secs(val, &us))
            return set_err(err, errlen, opt, val, "seconds from 0 to 9e12 expected");
        if (k == 5)
            f->has_min_life = 1, f->min_life = us;
        else
            f->has_max_life = 1, f->max_life = us;
        break;
    case 7:
        if (strcmp(val, "minor") == 0)
            f->sources |= 1u << MT_SOURCE_MINOR;
        else if (strcmp(val, "major") == 0)
            f->sources |= 1u << MT_SOURCE_MAJOR;
        else if (strcmp(val, "external") == 0)
            f->sources |= 1u << MT_SOURCE_EXTERNAL;
        else
            return set_err(err, errlen, opt, val, "minor, major or external expected");
        break;
    default:
        if (!*val)
            return set_err(err, errlen, opt, val, "a function name expected");
        if (push(k == 8 ? &f->in : k == 9 ? &f->not_in : &f->hide,
                 k == 8 ? &f->nin : k == 9 ? &f->nnot_in : &f->nhide, val)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        break;
    }
    *i += used;
    return 1;
}

/* us as seconds, the shortest decimal that says it exactly ("0.5", "2"). */
static void fmt_secs(char *buf, size_t n, int64_t us)
{
    int k = snprintf(buf, n, "%lld.%06lld", (long long)(us / 1000000),
                     (long long)(us % 1000000));
    while (k > 0 && (size_t)k < n && buf[k - 1] == '0')
        buf[--k] = 0;
    if (k > 0 && (size_t)k < n && buf[k - 1] == '.')
        buf[--k] = 0;
}

int mt_filter_check(const mt_filter *f, char *err, size_t errlen)
{
    char a[32], b[32];
    if (f->has_from && f->has_to && f->from >= f->to) {
        fmt_secs(a, sizeof a, f->from);
        fmt_secs(b, sizeof b, f->to);
        snprintf(err, errlen, "--from %s must be before --to %s", a, b);
        return -1;
    }
    if (f->has_min_size && f->has_max_size && f->min_size > f->max_size) {
        snprintf(err, errlen, "--min-size %s is above --max-size %s",
                 json_num(f->min_size).s, json_num(f->max_size).s);
        return -1;
    }
    if (f->has_min_life && f->has_max_life && f->min_life > f->max_life) {
        fmt_secs(a, sizeof a, f->min_life);
        fmt_secs(b, sizeof b, f->max_life);
        snprintf(err, errlen, "--min-lifetime %s is above --max-lifetime %s", a, b);
        return -1;
    }
    return 0;
}

int mt_filter_active(const mt_filter *f)
{
    return f->has_from || f->has_to || f->live_mode != MT_LIVE_ANY ||
           f->has_min_size || f->has_max_size || f->has_min_life ||
           f->has_max_life || f->sources || f->nin || f->nnot_in || f->nhide;
}

int mt_filter_needs_names(const mt_filter *f)
{
    return f->nin || f->nnot_in || f->nhide;
}

int mt_filter_ready(mt_filter *f)
{
    if (!f->nhide || f->hide_set)
        return 0;
    substrset *s = malloc(sizeof *s);
    if (!s || substrset_build(s, f->hide, f->nhide)) {
        free(s);
        return -1;
    }
    f->hide_set = s;
    return 0;
}

int mt_filter_hides_n(const mt_filter *f, const char *name, size_t len)
{
    if (f->hide_set)
        return substrset_find(f->hide_set, name, len);
    for (size_t i = 0; i < f->nhide; i++)
        if (memmem(name, len, f->hide[i], strlen(f->hide[i])))
            return 1;
    return 0;
}

int mt_filter_hides(const mt_filter *f, const char *function)
{
    return mt_filter_hides_n(f, function, strlen(function));
}

int64_t mt_filter_live_at(const mt_filter *f, int64_t peak_time)
{
    switch (f->live_mode) {
    case MT_LIVE_TIME:
        return f->live_at;
    case MT_LIVE_PEAK:
        return peak_time;
    case MT_LIVE_END:
        return INT64_MAX;
    default:
        return -1;
    }
}

int mt_filter_accepts_alloc(const mt_filter *f, const mt_trace_info *info,
                            const mt_object *o)
{
    if (f->sources && !(f->sources & (1u << o->source)))
        return 0;
    if (f->has_from && o->alloc_time < f->from)
        return 0;
    if (f->has_to && o->alloc_time >= f->to)
        return 0;
    if (f->has_min_size || f->has_max_size) {
        double size = (double)o->length * (double)(info->word_size / 8);
        if (f->has_min_size && size < f->min_size)
            return 0;
        if (f->has_max_size && size > f->max_size)
            return 0;
    }
    if (o->stack && !o->stack->match)
        return 0;
    return 1;
}

int mt_filter_accepts(const mt_filter *f, const mt_trace_info *info,
                      const mt_object *o, int64_t live_at, int64_t end)
{
    if (!mt_filter_accepts_alloc(f, info, o))
        return 0;
    if (f->has_min_life || f->has_max_life) {
        int64_t c = o->collect_time == MT_NEVER ? end : o->collect_time;
        int64_t life = c - o->alloc_time;
        if (f->has_min_life && life < f->min_life)
            return 0;
        if (f->has_max_life && life > f->max_life)
            return 0;
    }
    if (live_at == INT64_MAX)
        return o->collect_time == MT_NEVER;
    if (live_at >= 0)
        return o->alloc_time <= live_at &&
               (o->collect_time == MT_NEVER || o->collect_time > live_at);
    return 1;
}
