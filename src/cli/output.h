/*
 * output.h - a fast buffered writer for bulk text output (dump and the
 * reports). Writes go out in pieces no larger than half the pipe's capacity
 * when the output is a pipe (which it enlarges if allowed), so the reader on
 * the other side and this process overlap instead of waiting on each other.
 */
#ifndef MT_OUTPUT_H
#define MT_OUTPUT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct mt_out {
    int fd;
    int err;            /* errno of the first failed write, 0 if none     */
    char *buf;
    size_t len, cap;
    size_t chunk;       /* flush threshold and largest single write       */
} mt_out;

int out_init(mt_out *o, int fd);          /* 0, or -1 when out of memory */
int out_flush(mt_out *o);                 /* 0, or the errno             */
void out_free(mt_out *o);
int out_grow(mt_out *o, size_t n);        /* make room for n more bytes  */

/* Room for n more bytes at o->buf + o->len (0 ok, -1 out of memory). */
static inline int out_room(mt_out *o, size_t n)
{
    return o->cap - o->len >= n ? 0 : out_grow(o, n);
}

static inline void out_mem(mt_out *o, const void *p, size_t n)
{
    if (out_room(o, n) == 0) {
        memcpy(o->buf + o->len, p, n);
        o->len += n;
    }
}

static inline void out_str(mt_out *o, const char *s)
{
    out_mem(o, s, strlen(s));
}

/* Call after each record: writes out a full chunk. */
static inline void out_maybe_flush(mt_out *o)
{
    if (o->len >= o->chunk)
        out_flush(o);
}

/* The JSON string literal of s ("null" for NULL), allocating nothing but
 * the buffer's room (o->err says when that failed, as for any write). */
void out_json(mt_out *o, const char *s);

/* fmt formatted into small (n bytes) when it fits, else into a malloc'd
 * buffer, which the caller frees (when the result is not small); *len gets
 * its length. NULL on a format error or when out of memory. */
char *out_vformat(char *small, size_t n, size_t *len, const char *fmt, va_list ap);

/* printf into the buffer (any length). */
void out_printf(mt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s for a terminal: as it is when it has no control character (C0 or
 * DEL), else a copy in *tmp (malloc'd; the caller frees it) with each one
 * written \xHH, so a trace's names cannot send the terminal escape
 * sequences; "?" when that copy cannot be made. The reports that must be
 * the reference's byte for byte (dump, flamegraph, hotspots) do not use it. */
const char *out_clean(const char *s, char **tmp);

/* Decimal of v into p, left-padded with '0' to width (printf "%0*lld"
 * semantics: the '-' counts toward the width). Returns chars written. */
size_t fmt_int_pad(char *p, int64_t v, int width, char pad);

#endif /* MT_OUTPUT_H */
