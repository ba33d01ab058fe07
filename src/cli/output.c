/*
 * output.c - buffered bulk output; see output.h.
 */

#include "cli/output.h"
#include "util/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define PIPE_WANT (1 << 20)     /* pipe size asked for with F_SETPIPE_SZ */
#define FILE_CHUNK (256 * 1024)

int out_init(mt_out *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->chunk = FILE_CHUNK;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
#ifdef F_SETPIPE_SZ
        (void)fcntl(fd, F_SETPIPE_SZ, PIPE_WANT);
        int size = fcntl(fd, F_GETPIPE_SZ);
        if (size > 0)
            o->chunk = (size_t)size / 2;
#else
        o->chunk = 32768;
#endif
    }
    o->cap = o->chunk + 65536;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

int out_grow(mt_out *o, size_t n)
{
    if (o->len >= o->chunk)
        out_flush(o);
    if (o->cap - o->len >= n)
        return 0;
    size_t cap = o->cap;
    while (cap - o->len < n)
        cap *= 2;
    char *b = realloc(o->buf, cap);
    if (!b) {
        o->err = ENOMEM;
        return -1;
    }
    o->buf = b;
    o->cap = cap;
    return 0;
}

int out_flush(mt_out *o)
{
    size_t done = 0;
    while (done < o->len && !o->err) {
        size_t n = o->len - done;
        if (n > o->chunk)
            n = o->chunk;
        ssize_t w = write(o->fd, o->buf + done, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            o->err = errno;
            break;
        }
        done += (size_t)w;
    }
    o->len = 0;
    return o->err;
}

void out_free(mt_out *o)
{
    free(o->buf);
    o->buf = NULL;
}

size_t fmt_int_pad(char *p, int64_t v, int width, char pad)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    int len = n + (v < 0);
    size_t k = 0;
    if (pad == '0') {
        if (v < 0)
            p[k++] = '-';
        for (; len < width; len++)
            p[k++] = '0';
    } else {
        for (; len < width; len++)
            p[k++] = pad;
        if (v < 0)
            p[k++] = '-';
    }
    while (n)
        p[k++] = tmp[--n];
    return k;
}

char *out_vformat(char *small, size_t n, size_t *len, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int k = vsnprintf(small, n, fmt, aq);
    va_end(aq);
    if (k < 0)
        return NULL;
    *len = (size_t)k;
    if ((size_t)k < n)
        return small;
    char *big = malloc((size_t)k + 1);
    if (big)
        vsnprintf(big, (size_t)k + 1, fmt, ap);
    return big;
}

/* printf into the output buffer. */
void out_json(mt_out *o, const char *s)
{
    if (!s) {
        out_str(o, "null");
        return;
    }
    out_str(o, "\"");
    while (*s && out_room(o, 512) == 0)
        o->len += json_escape(&s, o->buf + o->len, 512);
    out_str(o, "\"");
}

void out_printf(mt_out *o, const char *fmt, ...)
{
    char small[512];
    size_t k;
    va_list ap;
    va_start(ap, fmt);
    char *s = out_vformat(small, sizeof small, &k, fmt, ap);
    va_end(ap);
    if (!s) {
        o->err = o->err ? o->err : ENOMEM;
        return;
    }
    out_mem(o, s, k);
    if (s != small)
        free(s);
}

const char *out_clean(const char *s, char **tmp)
{
    *tmp = NULL;
    size_t n = 0, bad = 0;
    for (; s[n]; n++)
        bad += (unsigned char)s[n] < 0x20 || s[n] == 0x7f;
    if (!bad)
        return s;
    char *c = malloc(n + 3 * bad + 1), *p = c;
    if (!c)
        return "?";
    for (const char *q = s; *q; q++) {
        unsigned char b = (unsigned char)*q;
        if (b < 0x20 || b == 0x7f)
            p += sprintf(p, "\\x%02x", b);
        else
            *p++ = (char)b;
    }
    *p = 0;
    *tmp = c;
    return c;
}
