/*
 * test_nomem.c - the reader when memory runs out. Linked with
 * -Wl,--wrap=malloc,--wrap=calloc, so that every allocation of at least
 * fail_from bytes fails: opening a trace in memory (its 32 KiB side buffer)
 * or on a descriptor (its 320 KiB read buffer) then returns MT_ERR_NOMEM
 * with a message, the status stays, and the reader closes cleanly. So does
 * a trace in memory whose buffer can be had when the first 64 KiB chunk for
 * the trace info's strings cannot (that was called a trace info cut short).
 * With memory again, the same trace opens and reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "memtrace/memtrace.h"
#include "tbuild.h"

static size_t fail_from = SIZE_MAX;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);

void *__wrap_malloc(size_t n)
{
    return n >= fail_from ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes) || bytes >= fail_from)
        return NULL;
    return __real_calloc(n, m);
}

/* Open the trace b (in memory, or through a pipe) with allocations of
 * fail bytes or more failing; the open's status. */
static int open_with(const tbuf *b, int by_fd, size_t fail, int *events)
{
    mt_reader *r = mt_reader_create(NULL);
    CHECK(r != NULL);
    if (!r)
        return MT_ERR_NOMEM;
    int fds[2] = {-1, -1}, st;
    fail_from = fail;
    if (by_fd) {
        CHECK_EQ(pipe(fds), 0);
        CHECK_EQ(write(fds[1], b->p, b->len), (long long)b->len);
        close(fds[1]);
        st = mt_reader_open_fd(r, fds[0]);
    } else {
        st = mt_reader_open_memory(r, b->p, b->len);
    }
    fail_from = SIZE_MAX;
    mt_event ev;
    *events = 0;
    if (st == MT_OK) {
        int s;
        while ((s = mt_reader_next(r, &ev)) == MT_OK)
            ++*events;
        CHECK_EQ(s, MT_EOF);
    } else {
        CHECK(strstr(mt_reader_error(r), "out of memory") != NULL);
        CHECK_EQ(mt_reader_next(r, &ev), st);           /* sticky */
        CHECK(mt_reader_info(r) == NULL);
    }
    mt_reader_close(r);
    if (fds[0] >= 0)
        close(fds[0]);
    return st;
}

int main(void)
{
    tbuf b = {0};
    tb_info(&b, 1600000000000000ULL, 4242);
    int n;
    for (int by_fd = 0; by_fd <= 1; by_fd++) {
        CHECK_EQ(open_with(&b, by_fd, 32 * 1024, &n), MT_ERR_NOMEM);
        CHECK_EQ(open_with(&b, by_fd, 64 * 1024, &n), MT_ERR_NOMEM);
        CHECK_EQ(open_with(&b, by_fd, SIZE_MAX, &n), MT_OK);
        CHECK_EQ(n, 0);                 /* (the trace has no events) */
    }
    free(b.p);
    return CHECK_DONE();
}
