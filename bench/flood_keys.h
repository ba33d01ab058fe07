/*
 * flood_keys.h - keys crafted against the unkeyed hashes this project's
 * tables used until 2026-12-06: names sharing the low 16 bits of their
 * FNV-1a hash, and 64-bit keys that one round of fmix64 sends to one slot.
 * Shared by bench/gen_flood.c (traces made of them) and
 * tests/unit/test_hash.c (the tables given them). Header-only.
 */
#ifndef MT_FLOOD_KEYS_H
#define MT_FLOOD_KEYS_H

#include <stdint.h>
#include <string.h>

#define FLOOD_BLOCK 4
#define FLOOD_MAX_STAGES 24
#define FLOOD_FNV_OFFSET 1469598103934665603ull

static inline uint64_t flood_fnv1a(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

/* Joux's multicollision of FNV-1a's low 16 bits: `stages` stages, each a
 * pair of 4-byte blocks of letters that leave the same low 16 bits from
 * any state with the same low 16 bits (a multiplication carries only
 * upwards). The 2^stages names made by picking one block of each pair
 * (flood_name) all share them. */
static inline void flood_pairs(int stages, char pairs[][2][FLOOD_BLOCK])
{
    static int seen[65536];
    static char cand[65537][FLOOD_BLOCK];
    uint64_t h = FLOOD_FNV_OFFSET, x = 88172645463325252ull;
    for (int s = 0; s < stages; s++) {
        memset(seen, 0, sizeof seen);
        for (int c = 1;; c++) {
            for (int b = 0; b < FLOOD_BLOCK; b++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                cand[c][b] = (char)('a' + x % 26);
            }
            unsigned low = (unsigned)(flood_fnv1a(h, cand[c], FLOOD_BLOCK) & 0xffff);
            if (seen[low] && memcmp(cand[seen[low]], cand[c], FLOOD_BLOCK) != 0) {
                memcpy(pairs[s][0], cand[seen[low]], FLOOD_BLOCK);
                memcpy(pairs[s][1], cand[c], FLOOD_BLOCK);
                h = flood_fnv1a(h, cand[c], FLOOD_BLOCK);
                break;
            }
            seen[low] = c;
        }
    }
}

/* Name k (stages x 4 bytes, no NUL) of flood_pairs' family. */
static inline void flood_name(int stages, char pairs[][2][FLOOD_BLOCK], uint64_t k,
                              char *name)
{
    for (int s = 0; s < stages; s++)
        memcpy(name + s * FLOOD_BLOCK, pairs[s][k >> s & 1], FLOOD_BLOCK);
}

/* The inverse of the old code and id hash, x ^= x >> 33; x *= C; x ^= x >>
 * 33: flood_unmix(i << 24) for i = 0, 1, ... all had slot 0. */
static inline uint64_t flood_unmix(uint64_t y)
{
    uint64_t c = 0xff51afd7ed558ccdull, inv = c;
    for (int i = 0; i < 6; i++)                 /* Newton: inverse mod 2^64 */
        inv *= 2 - c * inv;
    y ^= y >> 33;
    y *= inv;
    return y ^ y >> 33;
}

#endif /* MT_FLOOD_KEYS_H */
