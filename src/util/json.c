/*
 * json.c - JSON string literals and numbers; see json.h.
 */
#include "util/json.h"

#include <math.h>
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

char *json_quote(const char *s)
{
    if (!s)
        return strdup("null");
    char *out = malloc(6 * strlen(s) + 3), *q = out;   /* worst: \uXXXX each */
    if (!out)
        return NULL;
    *q++ = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            *q++ = '\\';
            *q++ = (char)c;
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            const char *esc = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (esc) {
                memcpy(q, esc, 2);
                q += 2;
            } else {
                static const char hex[] = "0123456789abcdef";
                memcpy(q, "\\u00", 4);
                q[4] = hex[c >> 4];
                q[5] = hex[c & 15];
                q += 6;
            }
            p++;
        } else if (c < 0x80) {
            *q++ = (char)c;
            p++;
        } else {
            size_t n = utf8_len(p);
            if (n) {
                memcpy(q, p, n);
                q += n;
                p += n;
            } else {
                memcpy(q, "\\ufffd", 6);
                q += 6;
                p++;
            }
        }
    }
    *q++ = '"';
    *q = 0;
    return out;
}

void json_str(FILE *out, const char *s)
{
    char *q = json_quote(s);
    fputs(q ? q : "null", out);
    free(q);
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
