/*
 * strip_names_check.c - checks the output of `memtrace strip-names IN OUT`
 * against its input (driven by strip_names_test.sh):
 *
 *   strip_names_check IN OUT [--partial]
 *
 * OUT must be a format v003 trace whose info has executable and host name
 * "<anonymous>", pid 0, start time 0, no context and IN's sample rate, word
 * size and runtime parameters; it must hold, in order, one event for each
 * event of IN with the same kind, id, length, sample count and source, at
 * time (IN time - IN start time), in domain 0, with an empty backtrace.
 * With --partial, IN is damaged: reading IN may stop with an error, and OUT
 * must hold exactly the events delivered before it.
 * Prints a summary; exit 0 if everything holds, 1 if not, 2 on bad usage.
 */
#include <stdio.h>
#include <string.h>

#include "memtrace/memtrace.h"
#include "trace_check.h"

static int check_info(const mt_trace_info *x, const mt_trace_info *y)
{
    int bad = 0;
    if (y->format_version != 3)
        bad = fail("format version %d, expected 3", y->format_version);
    if (strcmp(y->executable_name, "<anonymous>") != 0)
        bad = fail("executable name '%s'", y->executable_name);
    if (strcmp(y->host_name, "<anonymous>") != 0)
        bad = fail("host name '%s'", y->host_name);
    if (y->pid != 0)
        bad = fail("pid %lld, expected 0", (long long)y->pid);
    if (y->start_time != 0)
        bad = fail("start time %lld, expected 0", (long long)y->start_time);
    if (y->context)
        bad = fail("context present: '%.40s'", y->context);
    if (y->initial_domain != 0)
        bad = fail("initial domain %d, expected 0", y->initial_domain);
    if (y->sample_rate != x->sample_rate)
        bad = fail("sample rate %.17g, expected %.17g", y->sample_rate,
                   x->sample_rate);
    if (y->word_size != x->word_size)
        bad = fail("word size %d, expected %d", y->word_size, x->word_size);
    if (strcmp(y->runtime_params, x->runtime_params) != 0)
        bad = fail("runtime params '%.40s', expected '%.40s'", y->runtime_params,
                   x->runtime_params);
    return bad;
}

int main(int argc, char **argv)
{
    int partial = argc == 4 && strcmp(argv[3], "--partial") == 0;
    if (argc != 3 && !partial) {
        fprintf(stderr, "usage: strip_names_check IN OUT [--partial]\n");
        return 2;
    }
    const char *in = argv[1], *out = argv[2];
    mt_reader *a = open_trace(in, 1), *b = open_trace(out, 0);
    if (!a || !b) {
        mt_reader_close(a);
        mt_reader_close(b);
        return 1;
    }
    int bad = check_info(mt_reader_info(a), mt_reader_info(b));
    const int64_t t0 = mt_reader_info(a)->start_time;
    long long n[4] = {0};
    mt_event ea, eb;
    int sa, sb;
    for (;;) {
        sa = mt_reader_next(a, &ea);
        sb = mt_reader_next(b, &eb);
        if (sa != MT_OK || sb != MT_OK)
            break;
        const char *k = ea.kind == MT_EVENT_ALLOC     ? "alloc"
                        : ea.kind == MT_EVENT_PROMOTE ? "promote"
                                                      : "collect";
        if (ea.kind != eb.kind || ea.id != eb.id || eb.time != ea.time - t0 ||
            eb.domain != 0 ||
            (ea.kind == MT_EVENT_ALLOC &&
             (ea.length != eb.length || ea.nsamples != eb.nsamples ||
              ea.source != eb.source || eb.backtrace_len != 0))) {
            bad = fail("event %lld (%s id %lld at dt %lld) differs: output has "
                       "kind %d id %lld time %lld dom %d len %lld n %lld src %d "
                       "bt %zu", n[0], k, (long long)ea.id,
                       (long long)(ea.time - t0), (int)eb.kind, (long long)eb.id,
                       (long long)eb.time, eb.domain, (long long)eb.length,
                       (long long)eb.nsamples, (int)eb.source, eb.backtrace_len);
            break;
        }
        n[0]++;
        n[ea.kind]++;
    }
    if (!bad) {
        if (sb == MT_OK)
            bad = fail("output has more events than the input (%lld)", n[0]);
        else if (sb != MT_EOF)
            bad = fail("%s: %s", out, mt_reader_error(b));
        else if (sa == MT_OK)
            bad = fail("output ends after %lld events; the input goes on", n[0]);
        else if (sa != MT_EOF && !partial)
            bad = fail("%s: %s", in, mt_reader_error(a));
        else if (sa == MT_EOF && partial)
            bad = fail("%s: expected a damaged input", in);
    }
    if (!bad)
        printf("%lld events (%lld allocs, %lld promotes, %lld collects): ok\n",
               n[0], n[MT_EVENT_ALLOC], n[MT_EVENT_PROMOTE], n[MT_EVENT_COLLECT]);
    mt_reader_close(a);
    mt_reader_close(b);
    return bad;
}
