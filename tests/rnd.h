/*
 * rnd.h - the random numbers of the test trace generators (gen_odd,
 * gen_pair, gen_survivors, gen_collide) and of unit.test_substrset:
 * xorshift64, seeded from a decimal string (a command-line argument), so
 * that a seed always gives the same trace. Header-only: each user is one
 * program.
 */
#ifndef MT_TEST_RND_H
#define MT_TEST_RND_H

#include <stdint.h>
#include <stdlib.h>

static uint64_t rnd_state;

static inline void rnd_seed(const char *arg)
{
    rnd_state = strtoull(arg, NULL, 10) * 2654435761u + 1;
}

static inline uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

#endif /* MT_TEST_RND_H */
