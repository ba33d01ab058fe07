/*
 * test_strings.c - NUL-terminated strings on the reader side (spec 1.2,
 * 5.2): hand-built v2 traces fed to mt_reader_open_memory. A location event's
 * strings are read up to their first NUL (file name then function name, with
 * empty strings and MTF hits mixed in), and the decoded records come back
 * through mt_reader_locations. A string that has no NUL before the end of its
 * packet is an error (not a crash, not a read into the next packet), for the
 * file name, the function name and the trace_info strings, also when the
 * input buffer ends right there (buffers are malloc'ed at their exact size
 * so AddressSanitizer sees any over-read).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memtrace/memtrace.h"
#include "tbuild.h"

#define T0 1600000000000000ULL
#define PID 4242

static uint64_t packed(unsigned line, unsigned s, unsigned e, unsigned fc, unsigned dc)
{
    return line | (uint64_t)s << 20 | (uint64_t)e << 28 | (uint64_t)fc << 38 |
           (uint64_t)dc << 43;
}

static void put_packed(tbuf *b, uint64_t pk)
{
    tb_le(b, pk & 0xFFFFFFFFu, 4);
    tb_le(b, pk >> 32, 2);
}

/* Open a copy of b at its exact size and read all events; returns the
 * final status (MT_EOF on success). */
static int read_all(const tbuf *b, int *nallocs, mt_reader **keep)
{
    uint8_t *copy = malloc(b->len);
    memcpy(copy, b->p, b->len);
    mt_reader *r = mt_reader_create(NULL);
    int st = mt_reader_open_memory(r, copy, b->len);
    int n = 0;
    if (st == MT_OK) {
        mt_event ev;
        while ((st = mt_reader_next(r, &ev)) == MT_OK)
            n++;
    }
    if (nallocs)
        *nallocs = n;
    if (st != MT_EOF && st != MT_OK)
        CHECK(mt_reader_error(r)[0] != '\0');  /* a message comes with it */
    if (keep)
        *keep = r;
    else
        mt_reader_close(r);
    free(copy);
    return st;
}

static void test_good_strings(void)
{
    tbuf b = {0};
    tb_info(&b, T0, PID);
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_word(&b, 1, T0);
    tb_le(&b, 0x1234, 8);
    tb_le(&b, 3, 1);
    put_packed(&b, packed(10, 2, 7, 31, 31));
    tb_str(&b, "dir/a.ml");                 /* ends at its NUL ... */
    tb_str(&b, "Mod.f");                    /* ... the next string follows */
    put_packed(&b, packed(11, 3, 8, 0, 31));
    tb_str(&b, "Mod.g");
    put_packed(&b, packed(12, 4, 9, 0, 1));  /* Mod.f again: [Mod.g Mod.f] */
    tb_word(&b, 1, T0);
    tb_le(&b, 0x5678, 8);
    tb_le(&b, 2, 1);
    put_packed(&b, packed(1, 0, 0, 31, 31));
    tb_str(&b, "");                         /* empty strings are fine */
    tb_str(&b, "");
    put_packed(&b, packed(2, 0, 0, 1, 31));  /* dir/a.ml is at 1 now */
    tb_bytes(&b, "x\0", 2);                 /* def "x" */
    tb_end(&b);
    tb_begin(&b, T0, T0 + 10, PID, 0, 2);
    tb_word(&b, 101, T0 + 5);               /* short alloc len 1 */
    tb_le(&b, 0, 1);
    tb_le(&b, 1, 1);
    tb_le(&b, 7 << 2 | 3, 2);
    tb_le(&b, 0x1234, 8);
    tb_word(&b, 101, T0 + 6);
    tb_le(&b, 0, 1);
    tb_le(&b, 1, 1);
    tb_le(&b, 9 << 2 | 3, 2);
    tb_le(&b, 0x5678, 8);
    tb_end(&b);

    mt_reader *r;
    int n;
    int st = read_all(&b, &n, &r);
    CHECK_EQ(st, MT_EOF);
    CHECK_EQ(n, 2);
    const mt_location *l;
    size_t nl;
    CHECK_EQ(mt_reader_locations(r, 0x1234, &l, &nl), MT_OK);
    CHECK_EQ(nl, 3);
    if (nl == 3) {
        CHECK_STR(l[0].filename, "dir/a.ml");
        CHECK_STR(l[0].function, "Mod.f");
        CHECK_EQ(l[0].line, 10);
        CHECK_EQ(l[0].start_char, 2);
        CHECK_EQ(l[0].end_char, 7);
        CHECK_STR(l[1].filename, "dir/a.ml");
        CHECK_STR(l[1].function, "Mod.g");
        CHECK_EQ(l[1].line, 11);
        CHECK_STR(l[2].filename, "dir/a.ml");
        CHECK_STR(l[2].function, "Mod.f");
        CHECK_EQ(l[2].end_char, 9);
    }
    CHECK_EQ(mt_reader_locations(r, 0x5678, &l, &nl), MT_OK);
    CHECK_EQ(nl, 2);
    if (nl == 2) {
        CHECK_STR(l[0].filename, "");
        CHECK_STR(l[0].function, "");
        CHECK_STR(l[1].filename, "dir/a.ml");
        CHECK_STR(l[1].function, "x");
        CHECK_EQ(l[1].line, 2);
    }
    CHECK_EQ(mt_reader_locations(r, 0x9999, &l, &nl), MT_ERR_LOCATION);
    mt_reader_close(r);
    free(b.p);
}

/* A location packet whose last string has no NUL; `more` appends an events
 * packet after it (whose header holds zero bytes a sloppy reader would take
 * as the terminator). which: 0 = file name cut, 1 = function name cut. */
static void build_cut(tbuf *b, int which, int more)
{
    b->len = 0;
    tb_info(b, T0, PID);
    tb_begin(b, T0, T0, PID, 0, 0);
    tb_word(b, 1, T0);
    tb_le(b, 0x1234, 8);
    tb_le(b, 1, 1);
    put_packed(b, packed(10, 2, 7, 31, 31));
    if (which == 0) {
        tb_bytes(b, "dir/a.ml", 8);          /* no NUL, packet ends */
    } else {
        tb_str(b, "dir/a.ml");
        tb_bytes(b, "Mod.f", 5);
    }
    tb_end(b);
    if (more) {
        tb_begin(b, T0, T0, PID, 0, 0);
        tb_end(b);
    }
}

static void test_cut_strings(void)
{
    tbuf b = {0};
    for (int which = 0; which < 2; which++) {
        for (int more = 0; more < 2; more++) {
            build_cut(&b, which, more);
            int st = read_all(&b, NULL, NULL);
            if (!(st == MT_ERR_TRUNCATED || st == MT_ERR_FORMAT))
                CHECK_FAIL_("cut string (which %d, more %d): status %d (%s)",
                            which, more, st, mt_status_name(st));
            else
                check_passed++;
        }
    }

    /* A whole location event cut after its packed word (string absent). */
    b.len = 0;
    tb_info(&b, T0, PID);
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_word(&b, 1, T0);
    tb_le(&b, 0x1234, 8);
    tb_le(&b, 1, 1);
    put_packed(&b, packed(10, 2, 7, 31, 31));
    tb_end(&b);
    int st = read_all(&b, NULL, NULL);
    CHECK(st == MT_ERR_TRUNCATED || st == MT_ERR_FORMAT);

    /* trace_info strings: the host name has no NUL at the packet end. */
    b.len = 0;
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_word(&b, 0, T0);
    tb_le(&b, 0x3F1A36E2EB1C432DULL, 8);
    tb_le(&b, 64, 1);
    tb_str(&b, "exe");
    tb_bytes(&b, "host", 4);
    tb_end(&b);
    {
        uint8_t *copy = malloc(b.len);
        memcpy(copy, b.p, b.len);
        mt_reader *r = mt_reader_create(NULL);
        st = mt_reader_open_memory(r, copy, b.len);
        CHECK(st < 0);
        CHECK(mt_reader_error(r)[0] != '\0');
        mt_reader_close(r);
        free(copy);
    }
    /* ... and the context string, followed by another packet */
    b.len = 0;
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_word(&b, 0, T0);
    tb_le(&b, 0x3F1A36E2EB1C432DULL, 8);
    tb_le(&b, 64, 1);
    tb_str(&b, "exe");
    tb_str(&b, "host");
    tb_str(&b, "");
    tb_le(&b, PID, 8);
    tb_bytes(&b, "ctx", 3);
    tb_end(&b);
    tb_begin(&b, T0, T0, PID, 0, 0);
    tb_end(&b);
    {
        mt_reader *r = mt_reader_create(NULL);
        st = mt_reader_open_memory(r, b.p, b.len);
        CHECK(st < 0);
        mt_reader_close(r);
    }
    free(b.p);
}

int main(void)
{
    test_good_strings();
    test_cut_strings();
    return CHECK_DONE();
}
