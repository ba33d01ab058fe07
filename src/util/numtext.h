/*
 * numtext.h - the one syntax of the numbers on the command line and in
 * the environment: strtod and strtol also take leading blanks, '+',
 * hexadecimal ("0x10") and "inf", which a user never means; each parser
 * checks the text with mt_plain_number before converting it.
 */
#ifndef MT_NUMTEXT_H
#define MT_NUMTEXT_H

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

#endif /* MT_NUMTEXT_H */
