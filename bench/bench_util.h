/*
 * bench_util.h - small helpers shared by the benchmark programs: a
 * deterministic PRNG (xoshiro256** seeded with splitmix64), a monotonic
 * clock and median/best helpers. Header-only, no library internals.
 */
#ifndef MT_BENCH_UTIL_H
#define MT_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* ---- deterministic PRNG ---------------------------------------------- */

typedef struct bench_rng {
    uint64_t s[4];
} bench_rng;

static inline uint64_t bench_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = bench_splitmix64(&x);
}

static inline uint64_t bench_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = bench_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = bench_rotl(s[3], 45);
    return result;
}

/* Uniform integer in [0, n), n > 0 (multiply-shift; bias is negligible and,
 * more importantly, deterministic). */
static inline uint64_t bench_rng_below(bench_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)bench_rng_next(r) * n) >> 64);
}

/* Uniform integer in [lo, hi]. */
static inline int64_t bench_rng_range(bench_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)bench_rng_below(r, (uint64_t)(hi - lo + 1));
}

/* Uniform double in [0, 1). */
static inline double bench_rng_unit(bench_rng *r)
{
    return (double)(bench_rng_next(r) >> 11) * 0x1.0p-53;
}

/* ---- timing ------------------------------------------------------------ */

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process (user + system), to spot a busy machine: a wall
 * time well above the CPU time means the benchmark was waiting for a core. */
static inline double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n values (sorts a copy; n <= 64). */
static inline double bench_median(const double *v, int n)
{
    double tmp[64];
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        tmp[i] = v[i];
    qsort(tmp, (size_t)n, sizeof tmp[0], bench_cmp_double);
    return (n % 2) ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

static inline double bench_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

#endif /* MT_BENCH_UTIL_H */
