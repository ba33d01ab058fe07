/*
 * test_json.c - the tools' JSON numbers (src/util/json): the shortest of
 * %.15g, %.16g, %.17g that reads back as the same double, so the --json
 * outputs carry no float noise ("2e-05", not "2.0000000000000002e-05"),
 * and null for what JSON has no number for.
 */
#include <math.h>
#include <stdlib.h>

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

int main(void)
{
    test_round_trip();
    test_texts();
    return CHECK_DONE();
}
