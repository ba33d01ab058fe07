/*
 * writer.c - the trace writer (spec 8): the trace_info packet, events
 * packets with their flush policy, location packets for codes the backtrace
 * codec defines, and the v003 single-domain variant. Its output is byte for
 * byte what the reference writer produces for the same calls.
 *
 * Location bodies are MTF-encoded when a code misses the cache rather than
 * at flush time: the MTF state sees the same strings in the same order
 * either way, and encoding at once means the caller's location records need
 * not outlive the call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "codec/backtrace.h"
#include "codec/location.h"
#include "codec/wire.h"
#include "memtrace/memtrace.h"
#include "trace/packet.h"

#define PENDING_MAX 128          /* flush when more locations are pending    */
#define V3_ID_CHUNK 10000        /* ids a v003 domain writer takes at a time */

struct mt_writer {
    /* output */
    mt_sink_fn sink;
    void *sink_ctx;
    int fd;                      /* -1 for a sink                            */
    off_t fd_good;               /* fd: end of the last complete packet      */
    int fd_seekable;
    int status;                  /* sticky failure (0 = healthy)             */
    int finished;                /* mt_writer_finish done                    */
    int final_status;            /* what mt_writer_finish returned           */
    char err[256];
    pid_t pid_at_open;
    int fork_check;

    /* header fields */
    unsigned version, header_size;
    uint16_t domain;
    uint64_t pid;

    /* codec state */
    mt_locw loc;
    mt_btw bt;
    uint64_t *prev;              /* previous callstack, callee first, ends at
                                    prev + prev_cap                          */
    size_t prev_len, prev_cap;
    int64_t start_id, next_id;
    int64_t chunk_end;           /* v3: flush when next_id reaches it; v2:
                                    INT64_MAX (never)                        */
    int64_t t_start, t_end;

    /* pending location event bodies, encoded */
    uint8_t *pend;
    size_t pend_len, pend_cap;
    uint32_t *pend_size;
    size_t npending, pend_size_cap;

    uint64_t misses[MT_BT_MAX_MISSES];
    uint8_t locpkt[MT_MAX_PACKET];
    size_t pos;                  /* bytes used in buf                        */
    size_t pos_limit;            /* an event begun at pos > pos_limit flushes
                                    first: room for the largest event, or 0
                                    when too many locations are pending      */
    uint8_t buf[MT_MAX_PACKET];  /* the events packet being filled           */
};

static int fail(mt_writer *w, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    w->status = status;
    return status;
}

/* A call with bad arguments: the message, MT_ERR_ARG, and nothing written
 * (the writer stays usable). Out of line: the callers are the hot paths. */
static __attribute__((cold, noinline, format(printf, 2, 3)))
int reject(mt_writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    return MT_ERR_ARG;
}

/* An event earlier than the last one (or than the trace's start): the
 * reader would reject the trace ("Monotone timestamps"). */
static __attribute__((cold, noinline)) int reject_time(mt_writer *w, int64_t time)
{
    return reject(w, "event time %lld us is before the previous event's (or the trace "
                  "start's), %lld us: times must not decrease", (long long)time,
                  (long long)w->t_end);
}

/* ---- output ----------------------------------------------------------- */

static int fd_sink(void *ctx, const void *data, size_t len)
{
    int fd = *(int *)ctx;
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Hand one whole packet to the sink. On a file descriptor a failed write
 * is cut back to the last complete packet, so the file stays readable. */
static int emit(mt_writer *w, const uint8_t *data, size_t len)
{
    int e = w->sink(w->sink_ctx, data, len);
    if (e == 0) {
        w->fd_good += (off_t)len;
        return 0;
    }
    if (w->fd >= 0 && w->fd_seekable)
        (void)!ftruncate(w->fd, w->fd_good);
    return fail(w, MT_ERR_IO, "write failed at offset %lld: %s",
                (long long)w->fd_good, strerror(e));
}

/* ---- packets ---------------------------------------------------------- */

static size_t start_header(mt_writer *w, uint8_t *p, int real_verifier)
{
    mt_header h = {0};
    h.version = (uint16_t)w->version;
    h.pid = w->pid;
    h.domain = w->domain;
    h.verify_ix = MT_VERIFY_NONE;
    if (real_verifier)
        mt_btw_verifier(&w->bt, &h.verify_ix, &h.verify_pred, &h.verify_val);
    return mt_header_write(p, &h);
}

static void start_events_packet(mt_writer *w, int real_verifier)
{
    w->pos = start_header(w, w->buf, real_verifier);
}

static uint32_t event_word(unsigned code, int64_t time)
{
    return (uint32_t)code << 25 | ((uint32_t)time & MT_TIME_MASK);
}

static int write_location_packets(mt_writer *w)
{
    size_t i = 0, off = 0;
    while (i < w->npending) {
        size_t pos = start_header(w, w->locpkt, 0);
        /* The reference's test: more than 4096 bytes free (the 4-byte event
         * header is not counted). Its writer overflows when 4097..4099 bytes
         * are left and the body is maximal; we open a new packet instead. */
        while (i < w->npending && MT_MAX_PACKET - pos > MT_LOC_MAX_LENGTH &&
               MT_MAX_PACKET - pos >= 4 + w->pend_size[i]) {
            mt_st32(w->locpkt + pos, event_word(MT_EV_LOCATION, w->t_start));
            memcpy(w->locpkt + pos + 4, w->pend + off, w->pend_size[i]);
            pos += 4 + w->pend_size[i];
            off += w->pend_size[i];
            i++;
        }
        mt_header_patch(w->locpkt, (uint32_t)pos, (uint64_t)w->t_start,
                        (uint64_t)w->t_start, (uint64_t)w->start_id,
                        (uint64_t)w->start_id, w->header_size);
        if (emit(w, w->locpkt, pos))
            return w->status;
    }
    return 0;
}

/* Spec 8.6: location packets, then the events packet, then reset. */
static int flush_at(mt_writer *w, int64_t now)
{
    if (w->status)
        return w->status;
    if (w->fork_check && getpid() != w->pid_at_open)
        return fail(w, MT_ERR_PID_CHANGED,
                    "process id changed (fork): writer stopped, nothing written");
    if (write_location_packets(w))
        return w->status;
    mt_header_patch(w->buf, (uint32_t)w->pos, (uint64_t)w->t_start,
                    (uint64_t)w->t_end, (uint64_t)w->start_id,
                    (uint64_t)w->next_id, w->header_size);
    if (emit(w, w->buf, w->pos))
        return w->status;
    w->t_start = w->t_end = now;
    w->npending = 0;
    w->pend_len = 0;
    w->pos_limit = MT_MAX_PACKET - MT_MAX_EVENT;
    if (w->next_id >= w->chunk_end)
        w->chunk_end += V3_ID_CHUNK;
    w->start_id = w->next_id;
    start_events_packet(w, 1);
    return 0;
}

/* Spec 8.4: flush if needed, then write the event header word. (Three
 * tests: pos_limit also says when too many locations are pending, and
 * chunk_end is never reached in v2.) Always inline: -O2 kept it out of line,
 * and inlined it takes 2% fewer instructions in bench_write (1.4% at -O3). */
static inline __attribute__((always_inline)) int begin_event(mt_writer *w, int64_t now,
                                                        unsigned code)
{
    /* (unsigned: now >= t_start, and the difference of extreme times
     * would overflow int64_t) */
    if (w->pos > w->pos_limit || (uint64_t)now - (uint64_t)w->t_start > MT_PACKET_MAX_TIME ||
        w->next_id >= w->chunk_end) {
        if (flush_at(w, now))
            return w->status;
    }
    w->t_end = now;
    mt_st32(w->buf + w->pos, event_word(code, now));
    w->pos += 4;
    return 0;
}

/* ---- locations -------------------------------------------------------- */

/* Define code (a cache miss of the event just encoded) with the records
 * locate gives. Returns 0; 1 when locate failed or gave no records for a
 * nonzero count, and the code was defined with none (the event is written
 * already: the trace stays whole, and the caller says so); or the status
 * of a failure (no memory). */
static int add_pending(mt_writer *w, uint64_t code, mt_locate_fn locate,
                       void *ctx)
{
    const mt_location *locs = NULL;
    size_t n = 0;
    int lost = 0;
    if ((locate && locate(ctx, code, &locs, &n) != 0) || (n && !locs)) {
        locs = NULL;
        n = 0;
        lost = 1;
    }
    if (w->pend_cap - w->pend_len < MT_LOC_MAX_LENGTH) {
        size_t cap = w->pend_cap ? w->pend_cap * 2 : 65536;
        uint8_t *p = realloc(w->pend, cap);
        if (!p)
            return fail(w, MT_ERR_NOMEM, "out of memory");
        w->pend = p;
        w->pend_cap = cap;
    }
    if (w->npending == w->pend_size_cap) {
        size_t cap = w->pend_size_cap ? w->pend_size_cap * 2 : 1024;
        uint32_t *p = realloc(w->pend_size, cap * sizeof *p);
        if (!p)
            return fail(w, MT_ERR_NOMEM, "out of memory");
        w->pend_size = p;
        w->pend_size_cap = cap;
    }
    size_t len = mt_locw_encode(&w->loc, w->pend + w->pend_len, code, locs, n);
    if (len == 0)
        return fail(w, MT_ERR_NOMEM, "out of memory");
    w->pend_len += len;
    w->pend_size[w->npending++] = (uint32_t)len;
    if (w->npending > PENDING_MAX)
        w->pos_limit = 0;        /* the next event flushes them */
    return lost;
}

/* ---- events ----------------------------------------------------------- */

/* How many of the 8 frames ending at x and y (x[7], x[6], ...) are equal,
 * counting down from x[7] to the first difference: 8 when all are. */
static inline unsigned same_top8(const uint64_t *x, const uint64_t *y)
{
#if defined(__SSE2__)
    uint64_t eq = 0;
    for (int i = 0; i < 4; i++) {          /* 16 mask bits per 2 frames */
        __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(x + 2 * i)),
                                   _mm_loadu_si128((const __m128i *)(y + 2 * i)));
        eq |= (uint64_t)(unsigned)_mm_movemask_epi8(c) << (16 * i);
    }
    uint64_t ne = ~eq;                     /* bit j: byte j differs */
    if (!ne)
        return 8;
    unsigned top = 63 - (unsigned)__builtin_clzll(ne);
    return 7 - top / 8;
#else
    unsigned k = 0;
    while (k < 8 && x[7 - k] == y[7 - k])
        k++;
    return k;
#endif
}

/* Do a and b both fit the format's 63-bit integers (spec 1.3, 1.4)? A
 * value that does not would be read back as another one. (v + 2^62 is
 * below 2^63 exactly for -2^62 <= v < 2^62: one test for both.) */
static inline int both_fit63(int64_t a, int64_t b)
{
    const uint64_t h = (uint64_t)1 << 62;
    return (((uint64_t)a + h) | ((uint64_t)b + h)) >> 63 == 0;
}

int mt_writer_alloc(mt_writer *w, int64_t time, int64_t length,
                    int64_t nsamples, mt_source source,
                    const uint64_t *cs, size_t n,
                    mt_locate_fn locate, void *locate_ctx, int64_t *id_out)
{
    if (!w)
        return MT_ERR_ARG;
    if (w->status)
        return w->status;
    if ((unsigned)source > MT_SOURCE_EXTERNAL)
        return reject(w, "invalid source %u", (unsigned)source);
    if (n && !cs)
        return reject(w, "NULL callstack of %zu frames", n);
    if (n > MT_MAX_BACKTRACE)
        return reject(w, "callstack of %zu frames: readers take %u at most", n,
                      MT_MAX_BACKTRACE);
    if (time < w->t_end)
        return reject_time(w, time);
    if (!both_fit63(length, nsamples))
        return reject(w, "length %lld or sample count %lld out of the format's 63-bit range",
                      (long long)length, (long long)nsamples);

    /* Common suffix with the previous callstack (spec 8.5). The previous
     * callstack is kept callee first and right-aligned in w->prev, so both
     * are walked in the same direction, eight frames per step, and only the
     * frames that changed are stored. */
    if (n > w->prev_cap || !w->prev) {   /* (never NULL: b below is prev + cap) */
        size_t cap = w->prev_cap ? w->prev_cap : 256;
        while (cap < n)
            cap *= 2;
        uint64_t *p = malloc(cap * sizeof *p);
        if (!p)
            return fail(w, MT_ERR_NOMEM, "out of memory");
        if (w->prev_len)
            memcpy(p + cap - w->prev_len, w->prev + w->prev_cap - w->prev_len,
                   w->prev_len * sizeof *p);
        free(w->prev);
        w->prev = p;
        w->prev_cap = cap;
    }
    const uint64_t *a = n ? cs + n : NULL;  /* (cs may be NULL when n is 0) */
    uint64_t *b = w->prev + w->prev_cap;
    size_t common = 0, lim = n < w->prev_len ? n : w->prev_len;
    /* Consecutive stacks usually differ only near the allocation site:
     * try everything but the innermost 8 frames with one memcmp first. */
    if (lim > 8 && memcmp(a - (lim - 8), b - (lim - 8), (lim - 8) * sizeof *a) == 0)
        common = lim - 8;
    while (lim - common >= 8) {
        unsigned k = same_top8(a - common - 8, b - common - 8);
        common += k;
        if (k < 8)
            goto walked;
    }
    while (common < lim && a[-1 - (long)common] == b[-1 - (long)common])
        common++;
walked:;
    size_t new_len = n - common;
    /* The new frames are stored and checked in one pass (the shared ones
     * were checked when they were new; a code is canonical when its bits 63
     * and 62 are equal). A bad one is refused before the codec's cache or
     * the packet changes; the previous callstack is forgotten then (the
     * next event's stack shares no frames with it: another encoding, as
     * valid, of a stream the reference never sees). */
    uint64_t bad = 0, *to = b - n;
    for (size_t i = 0; i < new_len; i++) {
        uint64_t x = cs[i];
        bad |= (uint64_t)(x == 0) | (x ^ x << 1) >> 63;
        to[i] = x;
    }
    if (bad) {
        w->prev_len = 0;
        return reject(w, "location code 0 or not in 63-bit form in the callstack");
    }
    w->prev_len = n;

    int is_short = length >= 1 && length <= 16 && source == MT_SOURCE_MINOR &&
                   nsamples == 1 && new_len <= 255;
    if (begin_event(w, time, is_short ? MT_EV_SHORT_BASE + (unsigned)length
                                      : MT_EV_ALLOC))
        return w->status;
    int64_t id = w->next_id++;
    uint8_t *p = w->buf + w->pos;
    uint8_t *count;
    if (is_short) {
        p = mt_put_vint(p, (int64_t)common);
        count = p++;
    } else {
        p = mt_put_vint(p, length);
        p = mt_put_vint(p, nsamples);
        *p++ = (uint8_t)source;
        p = mt_put_vint(p, (int64_t)common);
        count = p;
        p += 2;
    }
    /* (an unchanged callstack, common in a profiler's loops, has nothing
     * to encode) */
    size_t bt_len = 0, nmisses = 0;
    int ncw = new_len ? mt_btw_encode(&w->bt, cs, (long)new_len - 1, id, p, &bt_len,
                                      w->misses, &nmisses)
                      : 0;
    if (is_short)
        *count = (uint8_t)ncw;
    else
        mt_st16(count, (uint16_t)ncw);
    w->pos = (size_t)(p + bt_len - w->buf);
    uint64_t lost = 0;
    for (size_t i = 0; i < nmisses; i++) {
        int st = add_pending(w, w->misses[i], locate, locate_ctx);
        if (st < 0)
            return st;
        if (st)
            lost = lost ? lost : w->misses[i];
    }
    if (id_out)
        *id_out = id;
    if (lost) {
        snprintf(w->err, sizeof w->err, "location callback failed for code %08llx: "
                 "written with no location", (unsigned long long)lost);
        return MT_ERR_LOCATION;
    }
    return 0;
}

static int put_delta(mt_writer *w, int64_t time, int64_t id, unsigned code,
                     const char *what)
{
    if (!w)
        return MT_ERR_ARG;
    if (w->status)
        return w->status;
    if (time < w->t_end)
        return reject_time(w, time);
    /* delta = next_id - 1 - id, in unsigned arithmetic (no overflow): one
     * test for id >= next_id (the delta wraps around) and for ids more than
     * 2^62 below next_id (a delta out of the 63-bit range) */
    uint64_t delta = (uint64_t)w->next_id - 1 - (uint64_t)id;
    if (delta >= (uint64_t)1 << 62)
        return reject(w, "Invalid ID in %s: %lld (next id %lld)", what, (long long)id,
                      (long long)w->next_id);
    if (begin_event(w, time, code))
        return w->status;
    uint8_t *p = mt_put_vint(w->buf + w->pos, (int64_t)delta);
    w->pos = (size_t)(p - w->buf);
    return 0;
}

int mt_writer_promote(mt_writer *w, int64_t time, int64_t id)
{
    return put_delta(w, time, id, MT_EV_PROMOTE, "promotion");
}

int mt_writer_collect(mt_writer *w, int64_t time, int64_t id)
{
    return put_delta(w, time, id, MT_EV_COLLECT, "collection");
}

int mt_writer_flush(mt_writer *w)
{
    if (!w)
        return MT_ERR_ARG;
    return flush_at(w, w->t_end);
}

int64_t mt_writer_next_id(const mt_writer *w)
{
    return w ? w->next_id : 0;
}

const char *mt_writer_error(const mt_writer *w)
{
    return w ? w->err : "";
}

/* ---- creation --------------------------------------------------------- */

static size_t put_string(uint8_t *p, const char *s)
{
    size_t len = strlen(s ? s : "") + 1;
    memcpy(p, s ? s : "", len);
    return len;
}

static int write_info_packet(mt_writer *w, const mt_trace_info *info)
{
    size_t need = 4 + 8 + 1 + 8 + 4 +
                  strlen(info->executable_name ? info->executable_name : "") +
                  strlen(info->host_name ? info->host_name : "") +
                  strlen(info->runtime_params ? info->runtime_params : "") +
                  strlen(info->context ? info->context : "");
    if (w->header_size + need > MT_MAX_PACKET)
        return fail(w, MT_ERR_ARG, "trace info strings too long (%zu bytes)", need);
    uint8_t *p = w->locpkt;
    size_t pos = start_header(w, p, 0);
    mt_st32(p + pos, event_word(MT_EV_INFO, w->t_start));
    pos += 4;
    uint64_t rate;
    memcpy(&rate, &info->sample_rate, 8);
    mt_st64(p + pos, rate);
    pos += 8;
    p[pos++] = (uint8_t)info->word_size;
    pos += put_string(p + pos, info->executable_name);
    pos += put_string(p + pos, info->host_name);
    pos += put_string(p + pos, info->runtime_params);
    mt_st64(p + pos, (uint64_t)info->pid);
    pos += 8;
    pos += put_string(p + pos, info->context);
    mt_header_patch(p, (uint32_t)pos, (uint64_t)w->t_start, (uint64_t)w->t_start,
                    0, 0, w->header_size);
    return emit(w, p, pos);
}

static void set_err(char *errbuf, size_t size, const char *msg)
{
    if (errbuf && size)
        snprintf(errbuf, size, "%s", msg);
}

static int open_common(mt_writer **out, mt_sink_fn sink, void *sink_ctx,
                       int fd, const mt_trace_info *info,
                       const mt_writer_options *opt, char *errbuf,
                       size_t errsize)
{
    *out = NULL;
    for (size_t i = 0; opt && i < sizeof opt->reserved / sizeof *opt->reserved; i++)
        if (opt->reserved[i]) {
            set_err(errbuf, errsize, "options: reserved fields must be zero");
            return MT_ERR_ARG;
        }
    int version = opt && opt->format_version ? opt->format_version : 2;
    if (!info || (version != 2 && version != 3)) {
        set_err(errbuf, errsize, !info ? "no trace info given"
                                       : "format version must be 2 or 3");
        return MT_ERR_ARG;
    }
    if (version >= 3 && opt && (opt->domain < 0 || opt->domain > 0xFFFF)) {
        set_err(errbuf, errsize, "domain must be 0 to 65535 (a header's 16 bits)");
        return MT_ERR_ARG;
    }
    if (!(info->sample_rate > 0 && info->sample_rate <= 1) ||
        (info->word_size != 64 && info->word_size != 32)) {
        set_err(errbuf, errsize,
                "trace info: sample rate must be in (0, 1], word size 32 or 64");
        return MT_ERR_ARG;
    }
    mt_writer *w = calloc(1, sizeof *w);
    if (!w) {
        set_err(errbuf, errsize, "out of memory");
        return MT_ERR_NOMEM;
    }
    w->fd = fd;
    if (fd >= 0) {
        struct stat st;
        w->fd_seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
        /* Where the first packet goes: the file's end when every write
         * appends (the offset of a fresh O_APPEND descriptor is 0, and a
         * failed write would cut the file back to there, the caller's
         * bytes before the trace with it). */
        int flags = fcntl(fd, F_GETFL);
        off_t at = !w->fd_seekable ? 0
                   : flags >= 0 && (flags & O_APPEND) ? st.st_size
                                                     : lseek(fd, 0, SEEK_CUR);
        w->fd_good = at > 0 ? at : 0;
        w->sink = fd_sink;
        w->sink_ctx = &w->fd;
    } else {
        w->sink = sink;
        w->sink_ctx = sink_ctx;
    }
    w->pid_at_open = getpid();
    w->fork_check = !(opt && opt->no_fork_check);
    w->version = (unsigned)version;
    w->header_size = mt_header_size(w->version);
    w->domain = (uint16_t)(version >= 3 && opt ? opt->domain : 0);
    w->pid = (uint64_t)info->pid;
    w->t_start = w->t_end = info->start_time;
    w->chunk_end = version >= 3 ? V3_ID_CHUNK : INT64_MAX;
    w->pos_limit = MT_MAX_PACKET - MT_MAX_EVENT;
    mt_locw_init(&w->loc);
    mt_btw_init_zeroed(&w->bt);     /* w is calloc'd */
    if (write_info_packet(w, info)) {
        set_err(errbuf, errsize, w->err);
        int st = w->status;
        mt_locw_free(&w->loc);
        free(w);
        return st;
    }
    start_events_packet(w, 0);
    *out = w;
    return 0;
}

int mt_writer_open_fd(mt_writer **out, int fd, const mt_trace_info *info,
                      const mt_writer_options *opt, char *errbuf,
                      size_t errbuf_size)
{
    if (!out || fd < 0) {
        set_err(errbuf, errbuf_size, out ? "invalid file descriptor" : "no handle pointer");
        if (out)
            *out = NULL;
        return MT_ERR_ARG;
    }
    return open_common(out, NULL, NULL, fd, info, opt, errbuf, errbuf_size);
}

int mt_writer_open_sink(mt_writer **out, mt_sink_fn sink, void *sink_ctx,
                        const mt_trace_info *info,
                        const mt_writer_options *opt, char *errbuf,
                        size_t errbuf_size)
{
    if (!out || !sink) {
        set_err(errbuf, errbuf_size, out ? "no sink given" : "no handle pointer");
        if (out)
            *out = NULL;
        return MT_ERR_ARG;
    }
    return open_common(out, sink, sink_ctx, -1, info, opt, errbuf, errbuf_size);
}

int mt_writer_finish(mt_writer *w)
{
    if (!w)
        return MT_ERR_ARG;
    if (w->finished)
        return w->final_status;
    w->final_status = flush_at(w, w->t_end);
    w->finished = 1;
    if (!w->status) {
        w->status = MT_ERR_ARG;     /* no events after finishing */
        snprintf(w->err, sizeof w->err, "writer finished");
    }
    return w->final_status;
}

int mt_writer_close(mt_writer *w)
{
    if (!w)
        return 0;
    int st = mt_writer_finish(w);
    mt_locw_free(&w->loc);
    free(w->prev);
    free(w->pend);
    free(w->pend_size);
    free(w);
    return st;
}
