/*
 * json.h - JSON string literals for the tools' --json outputs: UTF-8 kept,
 * control characters escaped, bytes that are not valid UTF-8 replaced by
 * U+FFFD, so the output always parses.
 */
#ifndef MT_JSON_H
#define MT_JSON_H

#include <stdio.h>

/* The quoted literal of s ("null" for NULL), malloc'ed; NULL when out of
 * memory. */
char *json_quote(const char *s);

/* Write the quoted literal of s to out. */
void json_str(FILE *out, const char *s);

#endif /* MT_JSON_H */
