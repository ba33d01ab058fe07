/*
 * check.h - a tiny assertion layer for the unit tests: CHECK(cond),
 * CHECK_EQ(a, b) for integers (printed as signed and hex), CHECK_STR for C
 * strings and CHECK_MEM for byte ranges. Every failure prints file:line and
 * the values involved and is counted; CHECK_DONE() prints "N passed, M
 * failed" and yields the exit status (non-zero when anything failed).
 */
#ifndef MT_TEST_CHECK_H
#define MT_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned long check_passed, check_failed;

#define CHECK_FAIL_(...)                                                      \
    do {                                                                      \
        check_failed++;                                                       \
        fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                 \
        fprintf(stderr, __VA_ARGS__);                                         \
        fputc('\n', stderr);                                                  \
    } while (0)

#define CHECK(cond)                                                           \
    do {                                                                      \
        if (cond)                                                             \
            check_passed++;                                                   \
        else                                                                  \
            CHECK_FAIL_("%s", #cond);                                         \
    } while (0)

#define CHECK_EQ(a, b)                                                        \
    do {                                                                      \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);      \
        if (check_a_ == check_b_)                                             \
            check_passed++;                                                   \
        else                                                                  \
            CHECK_FAIL_("%s == %s: got %lld (0x%llx), expected %lld (0x%llx)",\
                        #a, #b, check_a_, (unsigned long long)check_a_,       \
                        check_b_, (unsigned long long)check_b_);              \
    } while (0)

#define CHECK_STR(a, b)                                                       \
    do {                                                                      \
        const char *check_a_ = (a), *check_b_ = (b);                          \
        if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0)          \
            check_passed++;                                                   \
        else                                                                  \
            CHECK_FAIL_("%s == %s: got \"%s\", expected \"%s\"", #a, #b,      \
                        check_a_ ? check_a_ : "(null)",                       \
                        check_b_ ? check_b_ : "(null)");                      \
    } while (0)

static inline void check_hex_(const char *what, const uint8_t *p, size_t n)
{
    fprintf(stderr, "    %s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 64; i++)
        fprintf(stderr, " %02x", p[i]);
    fprintf(stderr, n > 64 ? " ...\n" : "\n");
}

/* got/glen vs expected/elen, byte for byte */
#define CHECK_MEM(got, glen, exp, elen)                                       \
    do {                                                                      \
        const uint8_t *check_g_ = (const uint8_t *)(got);                     \
        const uint8_t *check_e_ = (const uint8_t *)(exp);                     \
        size_t check_gl_ = (glen), check_el_ = (elen);                        \
        if (check_gl_ == check_el_ && memcmp(check_g_, check_e_, check_el_) == 0) \
            check_passed++;                                                   \
        else {                                                                \
            size_t check_i_ = 0;                                              \
            while (check_i_ < check_gl_ && check_i_ < check_el_ &&            \
                   check_g_[check_i_] == check_e_[check_i_])                  \
                check_i_++;                                                   \
            CHECK_FAIL_("bytes %s differ from %s (first difference at %zu)",  \
                        #got, #exp, check_i_);                                \
            check_hex_("got     ", check_g_, check_gl_);                      \
            check_hex_("expected", check_e_, check_el_);                      \
        }                                                                     \
    } while (0)

#define CHECK_DONE()                                                          \
    (printf("%lu passed, %lu failed\n", check_passed, check_failed),          \
     check_failed ? 1 : 0)

#endif /* MT_TEST_CHECK_H */
