/*
 * ocaml_int.h - OCaml's 63-bit integer arithmetic, for the commands that
 * reproduce the reference tools' numbers exactly, overflows included.
 */
#ifndef MT_OCAML_INT_H
#define MT_OCAML_INT_H

#include <stdint.h>

/* The 63-bit value of u: bit 62 sign-extended into bit 63. */
static inline int64_t ocaml_int(uint64_t u)
{
    return (int64_t)(u << 1) >> 1;
}

static inline int64_t ocaml_add(int64_t a, int64_t b)
{
    return ocaml_int((uint64_t)a + (uint64_t)b);
}

static inline int64_t ocaml_mul(int64_t a, int64_t b)
{
    return ocaml_int((uint64_t)a * (uint64_t)b);
}

#endif /* MT_OCAML_INT_H */
