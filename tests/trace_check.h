/*
 * trace_check.h - helpers shared by the checker programs of the tool tests
 * (strip_names_check.c, subsample_check.c, gen_old_ids.c): a FAIL line on
 * stdout, opening a trace with the failure reported, and the trace info of
 * a test trace.
 */
#ifndef MT_TESTS_TRACE_CHECK_H
#define MT_TESTS_TRACE_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#include "memtrace/memtrace.h"

/* Prints "FAIL: " and the message on a line of stdout; returns 1. */
static inline int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int fail(const char *fmt, ...)
{
    va_list ap;
    printf("FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return 1;
}

/* A reader of PATH (backtraces skipped if SKIP_BT), or NULL after a FAIL line. */
static inline mt_reader *open_trace(const char *path, int skip_bt)
{
    mt_reader_options o = {0};
    o.skip_backtraces = skip_bt;
    mt_reader *r = mt_reader_create(&o);
    if (!r || mt_reader_open_file(r, path) != MT_OK) {
        printf("FAIL: cannot read %s: %s\n", path, r ? mt_reader_error(r) : "nomem");
        mt_reader_close(r);
        return NULL;
    }
    return r;
}

/* The trace info of a test trace: 64-bit words, host "host", no runtime
 * parameters. */
static inline mt_trace_info test_info(const char *exe, double rate, int64_t pid,
                                      int64_t start)
{
    mt_trace_info info = {0};
    info.sample_rate = rate;
    info.word_size = 64;
    info.executable_name = exe;
    info.host_name = "host";
    info.runtime_params = "";
    info.pid = pid;
    info.start_time = start;
    return info;
}

#endif
