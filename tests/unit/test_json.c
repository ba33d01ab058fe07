/*
 * test_json.c - the tools' JSON numbers (src/util/json): the shortest of
 * %.15g, %.16g, %.17g that reads back as the same double, so the --json
 * outputs carry no float noise ("2e-05", not "2.0000000000000002e-05"),
 * and null for what JSON has no number for. And the string literals:
 * escapes, UTF-8 kept, invalid bytes as U+FFFD; json_str (which writes
 * through a buffer of its own, allocating nothing) gives json_quote's text
 * for strings of every length around that buffer's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "util/json.h"

/* json_num's text in storage that outlives the call (CHECK_STR keeps a
 * pointer past the end of the statement that returned the struct). */
static const char *num(double v)
{
    static json_num_text t;
    t = json_num(v);
    return t.s;
}

/* Every double comes back from its text, which is the first of %.15g,
 * %.16g, %.17g to do so. */
static void test_round_trip(void)
{
    double v[] = {0, 1, -1, 0.1, 1e-5, 2e-5, 0.1 + 0.2, 1.0 / 3, 47199999.999999993,
                  1136, 3.6893488147419103e+22, -3.6893488147419103e+22, 5e-324,
                  1.7976931348623157e308, 14.285714285714285, 123456789012345678.0};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        const char *t = num(v[i]);
        CHECK(strtod(t, NULL) == v[i]);
        char want[32];
        for (int p = 15; p <= 17; p++) {
            snprintf(want, sizeof want, "%.*g", p, v[i]);
            if (strtod(want, NULL) == v[i])
                break;
        }
        CHECK_STR(t, want);
    }
}

static void test_texts(void)
{
    CHECK_STR(num(2e-5), "2e-05");                    /* %.17g: 2.0000000000000002e-05 */
    CHECK_STR(num(1e-5), "1e-05");
    CHECK_STR(num(0.044133), "0.044133");             /* %.17g: 0.044132999999999999 */
    CHECK_STR(num(1136), "1136");
    CHECK_STR(num(0.1 + 0.2), "0.30000000000000004"); /* all 17 needed */
    CHECK_STR(num(47199999.999999993), "47199999.99999999"); /* %.17g: ...993 */
    CHECK_STR(num(-0.5), "-0.5");
    CHECK_STR(num(INFINITY), "null");
    CHECK_STR(num(-INFINITY), "null");
    CHECK_STR(num(NAN), "null");
    /* several in one call: each its own text */
    char buf[128];
    snprintf(buf, sizeof buf, "%s %s %s", json_num(1).s, json_num(2e-5).s, json_num(0.5).s);
    CHECK_STR(buf, "1 2e-05 0.5");
}

/* json_str's output for s, in a static buffer. */
static const char *str_out(const char *s)
{
    static char buf[40000];
    FILE *f = tmpfile();
    if (!f)
        return "(no tmpfile)";
    json_str(f, s);
    long n = ftell(f);
    rewind(f);
    size_t got = n > 0 && n < (long)sizeof buf ? fread(buf, 1, (size_t)n, f) : 0;
    buf[got] = 0;
    fclose(f);
    return buf;
}

static void test_strings(void)
{
    char *q = json_quote("a\"b\\c\n\t\r\x01\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    CHECK_STR(q, "\"a\\\"b\\\\c\\n\\t\\r\\u0001\\u007f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    free(q);
    /* invalid UTF-8: a lone continuation byte, an overlong form, a
     * surrogate, a cut sequence, a code point past U+10FFFF */
    q = json_quote("\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82|\xf4\x90\x80\x80");
    CHECK_STR(q, "\"\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd|"
                 "\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(q);
    q = json_quote(NULL);
    CHECK_STR(q, "null");
    free(q);
    CHECK_STR(str_out(NULL), "null");
    CHECK_STR(str_out(""), "\"\"");
    /* lengths around json_str's 512-byte buffer, of plain text, of
     * characters that take 6 bytes each and of 4-byte sequences, so that
     * a flush falls at every place in them */
    static const char *const units[] = {"x", "\x01", "\xf0\x9f\x98\x80", "\\", "\xff"};
    static char in[6000];
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
        for (size_t len = 480; len < 1100; len += 1 + len % 7) {
            size_t ul = strlen(units[u]), n = 0;
            while (n + ul <= len) {
                memcpy(in + n, units[u], ul);
                n += ul;
            }
            in[n] = 0;
            q = json_quote(in);
            CHECK(q != NULL);
            if (q)
                CHECK_STR(str_out(in), q);
            free(q);
        }
}

int main(void)
{
    test_round_trip();
    test_texts();
    test_strings();
    return CHECK_DONE();
}
