/*
 * json.h - JSON string literals for the tools' --json outputs: UTF-8 kept,
 * control characters escaped, bytes that are not valid UTF-8 replaced by
 * U+FFFD, so the output always parses; and JSON numbers from doubles,
 * without the noise of %.17g.
 */
#ifndef MT_JSON_H
#define MT_JSON_H

#include <stdio.h>

/* The quoted literal of s ("null" for NULL), malloc'ed; NULL when out of
 * memory. */
char *json_quote(const char *s);

/* Write the quoted literal of s to out ("null" for NULL), allocating
 * nothing. */
void json_str(FILE *out, const char *s);

/* The escaped text (no quotes) of as many whole characters of *s as fit in
 * cap bytes (cap >= 6) into buf; *s advances past them. Returns the bytes
 * written: a loop until **s is 0 escapes a string in pieces, allocating
 * nothing. */
size_t json_escape(const char **s, char *buf, size_t cap);

/* The text of a JSON number. Returned by value so that several can be
 * arguments of one printf: a function's returned struct (and the array in
 * it) lives until the end of the full expression that called it (C11
 * 6.2.4p8), e.g. out_printf(o, "%s %s", json_num(a).s, json_num(b).s). */
typedef struct json_num_text {
    char s[32];
} json_num_text;

/* v as the shortest of %.15g, %.16g and %.17g that strtod reads back as v
 * (2e-05, not %.17g's 2.0000000000000002e-05; %.17g always reads back);
 * null for an infinity or a NaN, which JSON has no number for. */
json_num_text json_num(double v);

#endif /* MT_JSON_H */
