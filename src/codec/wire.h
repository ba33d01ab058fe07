/*
 * wire.h - byte-level primitives of the memtrace format: little-endian
 * loads/stores, vints (spec 1.3), NUL-terminated strings (1.2) and the 63-bit
 * canonical form of codes (1.4).
 *
 * Everything is static inline and unchecked: callers check bounds once per
 * event (the reader keeps slack bytes after every packet so a fixed-size
 * over-read stays inside its buffer), then use these freely.
 */
#ifndef MT_WIRE_H
#define MT_WIRE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t mt_ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t mt_ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t mt_ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline void mt_st16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void mt_st32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void mt_st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libmemtrace currently assumes a little-endian host"
#endif

/* 63-bit canonical form: bit 63 is replaced by bit 62 (spec 1.4). */
static inline uint64_t mt_canon(uint64_t u)
{
    return (uint64_t)((int64_t)(u << 1) >> 1);
}

/* Size of the canonical encoding of v. */
static inline unsigned mt_vint_size(int64_t v)
{
    if (v >= 0 && v <= 252) return 1;
    if (v >= 0 && v <= 0xFFFF) return 3;
    if (v >= INT32_MIN && v <= INT32_MAX) return 5;
    return 9;
}

/* Write the canonical encoding of v; returns the advanced pointer. */
static inline uint8_t *mt_put_vint(uint8_t *p, int64_t v)
{
    if (v >= 0 && v <= 252) {
        *p = (uint8_t)v;
        return p + 1;
    }
    if (v >= 0 && v <= 0xFFFF) {
        p[0] = 253;
        mt_st16(p + 1, (uint16_t)v);
        return p + 3;
    }
    if (v >= INT32_MIN && v <= INT32_MAX) {
        p[0] = 254;
        mt_st32(p + 1, (uint32_t)(int32_t)v);
        return p + 5;
    }
    p[0] = 255;
    mt_st64(p + 1, (uint64_t)v);
    return p + 9;
}

/* Read a vint (any form) at p; up to 9 bytes may be read. */
static inline const uint8_t *mt_get_vint(const uint8_t *p, int64_t *v)
{
    uint8_t t = p[0];
    if (t <= 252) {
        *v = t;
        return p + 1;
    }
    if (t == 253) {
        *v = mt_ld16(p + 1);
        return p + 3;
    }
    if (t == 254) {
        *v = (int32_t)mt_ld32(p + 1);
        return p + 5;
    }
    *v = (int64_t)mt_canon(mt_ld64(p + 1));
    return p + 9;
}

/* Bytes a vint starting with tag byte t occupies. */
static inline unsigned mt_vint_len(uint8_t t)
{
    return t <= 252 ? 1 : t == 253 ? 3 : t == 254 ? 5 : 9;
}

#endif /* MT_WIRE_H */
