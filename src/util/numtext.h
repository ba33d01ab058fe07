/*
 * numtext.h - the one syntax of the numbers on the command line and in
 * the environment: strtod and strtol also take leading blanks, '+',
 * hexadecimal ("0x10") and "inf", which a user never means; each parser
 * checks the text with mt_plain_number before converting it. And the units
 * that may end a size (mt_size_unit).
 */
#ifndef MT_NUMTEXT_H
#define MT_NUMTEXT_H

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Does s start with a plain decimal number: an optional '-', digits with
 * at most one '.' (at least one digit), then an optional exponent (e or E,
 * an optional sign, digits)? *end gets where the number stops (a unit
 * suffix may follow); 0 if s does not start so. */
static inline int mt_plain_number(const char *s, const char **end)
{
    const char *p = s + (*s == '-');
    int digits = 0, dot = 0;
    for (;; p++) {
        if (*p >= '0' && *p <= '9')
            digits++;
        else if (*p == '.' && !dot)
            dot = 1;
        else
            break;
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1 + (p[1] == '-' || p[1] == '+');
        if (*q >= '0' && *q <= '9') {
            while (*q >= '0' && *q <= '9')
                q++;
            p = q;
        }
    }
    *end = p;
    return 1;
}

/* The whole of s is a plain integer: an optional '-' and digits. */
static inline int mt_plain_integer(const char *s)
{
    const char *p = s + (*s == '-');
    if (!*p)
        return 0;
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/* Is s, the text after a size's number, "", "B" or "b": bytes? */
static inline int mt_byte_unit(const char *s)
{
    return !*s || ((*s == 'B' || *s == 'b') && !s[1]);
}

/* The multiplier of the unit that ends a size (s: the text after its
 * number): 1 for bytes (mt_byte_unit); 1024, 1024^2, 1024^3, 1024^4 for k,
 * m, g, t in either case, alone or followed by "iB", "B" or "b" (1k = 1K =
 * 1KiB = 1kB = 1kb = 1024: the tools print sizes in powers of 1024, as
 * KiB or kB). 0 when s is no unit. */
static inline double mt_size_unit(const char *s)
{
    double mult = 1;
    for (const char *p = "kmgt"; *p; p++) {
        mult *= 1024;
        if (tolower((unsigned char)*s) == *p)
            return strcmp(s + 1, "iB") == 0 || mt_byte_unit(s + 1) ? mult : 0;
    }
    return mt_byte_unit(s) ? 1 : 0;
}

/* MEMTRACE_RATE's syntax, the reference's (spec 10.4: an OCaml float
 * literal): strtod's, leading blanks and hexadecimal included, with '_'
 * digit separators, nothing after the number; 0 < rate <= 1. 0 and *out
 * set, or -1. The preload library reads the variable so; memtrace run
 * checks it so before starting a program. */
static inline int mt_env_rate(const char *s, double *out)
{
    char buf[128];
    size_t o = 0;
    for (const char *p = s; *p; p++)
        if (*p != '_') {
            if (o + 1 >= sizeof buf)
                return -1;
            buf[o++] = *p;
        }
    buf[o] = 0;
    char *end;
    double r = strtod(buf, &end);
    if (end == buf || *end || !(r > 0 && r <= 1))
        return -1;
    *out = r;
    return 0;
}

#endif /* MT_NUMTEXT_H */
