/*
 * json.c - JSON string literals and numbers; see json.h.
 */
#include "util/json.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    if (n == 3) {
        unsigned cp = ((c & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6);
        if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
    } else if (n == 4) {
        unsigned cp = ((c & 0x07u) << 18) | ((p[1] & 0x3fu) << 12);
        if (cp < 0x10000 || cp > 0x10ffff)
            return 0;
    }
    return n;
}

/* The literal's text for the character or UTF-8 sequence at p (at most 6
 * bytes) at *q, advanced; returns the next character. */
static const unsigned char *escape_one(const unsigned char *p, char **q)
{
    unsigned c = *p;
    char *o = *q;
    if (c == '"' || c == '\\') {
        *o++ = '\\';
        *o++ = (char)c;
        p++;
    } else if (c < 0x20 || c == 0x7f) {
        const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
        if (esc) {
            memcpy(o, esc, 2);
            o += 2;
        } else {
            static const char hex[] = "0123456789abcdef";
            memcpy(o, "\\u00", 4);
            o[4] = hex[c >> 4];
            o[5] = hex[c & 15];
            o += 6;
        }
        p++;
    } else if (c < 0x80) {
        *o++ = (char)c;
        p++;
    } else {
        size_t n = utf8_len(p);
        if (n) {
            memcpy(o, p, n);
            o += n;
            p += n;
        } else {
            memcpy(o, "\\ufffd", 6);
            o += 6;
            p++;
        }
    }
    *q = o;
    return p;
}

size_t json_escape(const char **s, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)*s;
    char *q = buf;
    while (*p && (size_t)(q - buf) + 6 <= cap)
        p = escape_one(p, &q);
    *s = (const char *)p;
    return (size_t)(q - buf);
}

char *json_quote(const char *s)
{
    if (!s)
        return strdup("null");
    size_t cap = 6 * strlen(s);                         /* worst: \uXXXX each */
    char *out = malloc(cap + 3);
    if (!out)
        return NULL;
    out[0] = '"';
    size_t n = 1 + json_escape(&s, out + 1, cap);
    out[n++] = '"';
    out[n] = 0;
    return out;
}

/* Through a buffer on the stack: allocating the literal made the output
 * "null" when memory ran out (a --json output that still parsed, wrong). */
void json_str(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    char buf[512];
    fputc('"', out);
    while (*s)
        fwrite(buf, 1, json_escape(&s, buf, sizeof buf), out);
    fputc('"', out);
}

json_num_text json_num(double v)
{
    json_num_text t;
    if (!isfinite(v)) {
        strcpy(t.s, "null");
        return t;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(t.s, sizeof t.s, "%.*g", prec, v);
        if (strtod(t.s, NULL) == v)
            break;
    }
    return t;
}
