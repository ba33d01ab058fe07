/*
 * sampler.c - the geometric sampler of spec 10.2: how many words pass
 * between two samples when each word is sampled with probability lambda.
 * The random source is a per-thread xorshift64* generator (the reference's
 * OCaml generator cannot be reproduced; only the distribution matters).
 */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profiler/profiler_int.h"

double mt_sampler_coef(double rate)
{
    return rate < 1.0 ? 1.0 / log1p(-rate) : 0.0;
}

double mt_sampler_log_approx(double y)
{
    uint64_t bits;
    memcpy(&bits, &y, sizeof bits);
    int e = (int)((bits >> 52) & 0x7ff);
    bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
    double x;
    memcpy(&x, &bits, sizeof x);
    double ep = (double)(e + (127 - 1023 + 1));
    return x * (2.104659476859 + x * (-0.720478916626 + x * 0.107132064797)) +
           (-111.701724334061 + 0.6931471805 * ep);
}

uint64_t mt_sampler_seed(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec ^
            ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)(uintptr_t)&ts;
    }
    return s ? s : 0x2545F4914F6CDD1Dull;
}

/* The generator's next 64 bits. */
static uint64_t next_bits(uint64_t *rng)
{
    uint64_t s = *rng;
    if (s == 0)
        s = mt_sampler_seed();
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    *rng = s;
    return s * 0x2545F4914F6CDD1Dull;
}

int64_t mt_sampler_draw(uint64_t *rng, double coef)
{
    uint32_t n = (uint32_t)(next_bits(rng) >> 34); /* 30 bits */
    double l = mt_sampler_log_approx(2.0 * n + 1.0);
    double d = l * coef;
    if (d > 1e17)              /* tiny rates: countdown * 8 stays finite  */
        d = 1e17;
    return 1 + (int64_t)d;
}

int64_t mt_sampler_binomial(uint64_t *rng, double n, double p)
{
    /* Box-Muller: a standard normal from two uniforms in (0, 1] */
    double u1 = ((double)(next_bits(rng) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(next_bits(rng) >> 11) / 9007199254740992.0;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    double k = nearbyint(n * p + sqrt(n * p * (1.0 - p)) * z);
    return k < 0 ? 0 : k > n ? (int64_t)n : (int64_t)k;
}
