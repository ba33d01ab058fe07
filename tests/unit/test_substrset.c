/*
 * test_substrset.c - strings looked for at once (src/util/substrset, what
 * --hide uses): for random sets over small alphabets (so that the strings
 * overlap, share prefixes and are suffixes of one another, which is what
 * the failure links are for) and random texts, substrset_find says what a
 * memmem per string says; texts are given by length, not NUL-terminated;
 * bytes above 0x7f are bytes; an empty string is in every text.
 */
#include <stdlib.h>
#include <string.h>

#include "../rnd.h"
#include "check.h"
#include "util/substrset.h"

static int naive(char *const *v, size_t n, const char *t, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (memmem(t, len, v[i], strlen(v[i])))
            return 1;
    return 0;
}

static void test_random(void)
{
    rnd_seed("1");
    static const char *const alphabets[] = {"ab", "abc", "a\xc3\xa9z", "abcdefghij"};
    size_t found = 0, missed = 0;
    for (int round = 0; round < 400; round++) {
        const char *al = alphabets[round % 4];
        size_t na = strlen(al), n = 1 + rnd() % (round < 200 ? 4 : 60);
        char *v[64];
        for (size_t i = 0; i < n; i++) {
            size_t len = 1 + rnd() % (round % 3 == 0 ? 3 : 8);
            v[i] = malloc(len + 1);
            for (size_t k = 0; k < len; k++)
                v[i][k] = al[rnd() % na];
            v[i][len] = 0;
        }
        substrset s;
        CHECK_EQ(substrset_build(&s, v, n), 0);
        for (int t = 0; t < 200; t++) {
            char text[64];
            size_t len = rnd() % sizeof text;
            for (size_t k = 0; k < len; k++)
                text[k] = al[rnd() % na];
            int want = naive(v, n, text, len), got = substrset_find(&s, text, len);
            CHECK_EQ(got, want);
            found += want;
            missed += !want;
        }
        substrset_free(&s);
        for (size_t i = 0; i < n; i++)
            free(v[i]);
    }
    /* both answers were given often */
    CHECK(found > 10000 && missed > 10000);
}

static void test_edges(void)
{
    substrset s;
    char *none[1] = {NULL};
    CHECK_EQ(substrset_build(&s, none, 0), 0);            /* no strings */
    CHECK_EQ(substrset_find(&s, "anything", 8), 0);
    substrset_free(&s);
    char *empty[2] = {"zz", ""};
    CHECK_EQ(substrset_build(&s, empty, 2), 0);           /* "" is everywhere */
    CHECK_EQ(substrset_find(&s, "", 0), 1);
    substrset_free(&s);
    char *v[3] = {"caml", "Stdlib__List", "he"};
    CHECK_EQ(substrset_build(&s, v, 3), 0);
    CHECK_EQ(substrset_find(&s, "camlStdlib__List.map", 20), 1);
    CHECK_EQ(substrset_find(&s, "cam", 3), 0);
    CHECK_EQ(substrset_find(&s, "cacaml", 6), 1);         /* after a false start */
    CHECK_EQ(substrset_find(&s, "camlX", 3), 0);          /* only len bytes count */
    CHECK_EQ(substrset_find(&s, "ushers", 6), 1);
    CHECK_EQ(substrset_find(&s, "Stdlib__Lis", 11), 0);
    substrset_free(&s);
    /* a zero-initialised set that was never built finds nothing */
    memset(&s, 0, sizeof s);
    CHECK_EQ(substrset_find(&s, "x", 1), 0);
}

int main(void)
{
    test_edges();
    test_random();
    return CHECK_DONE();
}
