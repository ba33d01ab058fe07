/*
 * hash.h - the hashes of every table keyed by what a trace holds (names,
 * location codes, object ids). A trace is input: an unkeyed hash lets a
 * crafted one pile its keys into one probe run and make a command
 * quadratic (128 000 names colliding under FNV-1a took `info` 38 s). So
 * every such hash is keyed with random bits of this process: strings by
 * SipHash-2-4 (Aumasson and Bernstein's keyed hash, made for exactly this;
 * the public-domain reference algorithm, checked against its published
 * vectors in tests/unit), integers by murmur3's fmix64 of key ^ seed
 * (hash_u64; hash_slot for a table's slot: u64map.c, idtrie.c, cmd_dump.c;
 * stackset.c keeps the hash's low bits as tags). No output may depend on a
 * table's order (docs/ARCHITECTURE.md, *Hashes*).
 */
#ifndef MT_HASH_H
#define MT_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static inline uint64_t hash_rotl(uint64_t x, int b)
{
    return x << b | x >> (64 - b);
}

#define HASH_SIPROUND(v0, v1, v2, v3)                                        \
    do {                                                                     \
        v0 += v1; v1 = hash_rotl(v1, 13); v1 ^= v0; v0 = hash_rotl(v0, 32); \
        v2 += v3; v3 = hash_rotl(v3, 16); v3 ^= v2;                          \
        v0 += v3; v3 = hash_rotl(v3, 21); v3 ^= v0;                          \
        v2 += v1; v1 = hash_rotl(v1, 17); v1 ^= v2; v2 = hash_rotl(v2, 32); \
    } while (0)

/* SipHash-2-4 of the n bytes at p under the 128-bit key k (bytes read as
 * little-endian words, as the algorithm defines; this project's hosts are
 * little-endian, and a big-endian one would only hash differently). */
static inline uint64_t siphash24(const uint64_t k[2], const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t v0 = k[0] ^ 0x736f6d6570736575ull, v1 = k[1] ^ 0x646f72616e646f6dull;
    uint64_t v2 = k[0] ^ 0x6c7967656e657261ull, v3 = k[1] ^ 0x7465646279746573ull;
    size_t whole = n & ~(size_t)7;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m;
        memcpy(&m, s + i, 8);
        v3 ^= m;
        HASH_SIPROUND(v0, v1, v2, v3);
        HASH_SIPROUND(v0, v1, v2, v3);
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    for (size_t i = whole; i < n; i++)
        b |= (uint64_t)s[i] << (8 * (i - whole));
    v3 ^= b;
    HASH_SIPROUND(v0, v1, v2, v3);
    HASH_SIPROUND(v0, v1, v2, v3);
    v0 ^= b;
    v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        HASH_SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

/* fmix64 of k ^ seed: every bit of both reaches the low bits, which pick
 * the slot, and which keys share a slot changes with the seed. */
static inline uint64_t hash_u64(uint64_t k, uint64_t seed)
{
    k ^= seed;
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ k >> 33;
}

/* The slot of k in a table of cap slots (a power of 2, at least 2): the
 * top bits of hash_u64(k, seed). Multiply-shift (the top bits of k * seed,
 * one multiply; session 33) puts any two keys in one slot with probability
 * at most 2 / cap, but linear probing needs more than pairs: on keys in
 * arithmetic progression (dense object ids; codes that differ in their high
 * bits only) about one seed in 700 made runs of thousands of slots (16 384
 * keys in 65 536 slots: 1 366 for ids 0, 1, 2...; all 16 384 for a step of
 * 2^24). tests/unit/test_hash.c checks such keys over 1 000 seeds. */
static inline size_t hash_slot(uint64_t k, uint64_t seed, size_t cap)
{
    return (size_t)(hash_u64(k, seed) >> (64 - __builtin_ctzll(cap)));
}

/* 64 random bits for a seed: getrandom(2), or when it fails (a kernel
 * without it, an early-boot pool) the clock and the address salt, mixed. */
static inline uint64_t hash_random(const void *salt)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return hash_u64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                    (uint64_t)(uintptr_t)salt);
}

/* The key of the tools' tables: chosen once per process (util/hash.c). */
const uint64_t *hash_key(void);

/* A name's hash under the process's key. */
static inline uint64_t hash_str(const void *p, size_t n)
{
    return siphash24(hash_key(), p, n);
}

/* The hash of a name and n more bytes at p, from the name's hash h: the
 * bytes hashed under the key changed by h (so that swapping or repeating
 * the parts gives no collision). */
static inline uint64_t hash_str_more(uint64_t h, const void *p, size_t n)
{
    const uint64_t *k = hash_key();
    uint64_t k2[2] = {k[0] ^ h, k[1]};
    return siphash24(k2, p, n);
}

#endif /* MT_HASH_H */
