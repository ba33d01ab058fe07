/*
 * reader.c - the streaming trace reader (spec 9): packet iteration with the
 * reference's tolerance rules (out-of-order, foreign-pid and truncated
 * packets are skipped and reported), event decoding, location events, and
 * per-domain codec state for v003.
 *
 * Files and pipes are read in 256 KiB chunks into one buffer that keeps
 * SLACK readable bytes after the valid data; caller memory is decoded where
 * it lies ("direct" mode). A packet's content is decoded in place, so an
 * event's fixed fields can be read without bounds checks and the event is
 * checked once, after decoding, against the packet end; in direct mode a
 * packet too close to the end of the input for that is copied into a side
 * buffer with slack first. Memory stays bounded by the buffer, the codec
 * state and the location table whatever the file size.
 *
 * Files are read, not mapped: on this project's VMs mapping a 320 MB trace
 * cost 0.17 s of page faults against 0.04 s for read(), and the decode
 * went from 0.79 s to 0.57 s without the mapping (docs/ARCHITECTURE.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/backtrace.h"
#include "codec/location.h"
#include "codec/wire.h"
#include "memtrace/memtrace.h"
#include "trace/loctable.h"
#include "trace/packet.h"

#define CHUNK (256 * 1024)         /* bytes asked of read() at a time       */
/* (the reference's message names the check; this says what failed) */
#define BAD_CACHE " (the packet header's check of the backtrace cache failed: " \
                  "the trace was damaged or cut before this packet)"
#define SLACK 128                  /* readable bytes kept after valid data  */
#define BUF_DATA (CHUNK + 2 * MT_MAX_PACKET)
#define MAX_DOMAINS 128            /* v003 domains one trace may use        */

typedef struct domain_state {
    unsigned id;
    int64_t last_ts;
    mt_btr bt;
    mt_locr mtf;
    mt_frames last;                /* previous backtrace, caller first      */
} domain_state;

struct mt_reader {
    /* options */
    int skip_bt;
    mt_diag_fn diag;
    void *diag_ctx;

    /* input */
    int fd, own_fd;
    int opened, eof;
    int bad_opts;                  /* options' reserved fields not zero */
    int direct;                    /* buf is the caller's whole input       */
    uint8_t *own;                  /* BUF_DATA + SLACK bytes, zeroed (fds)  */
    uint8_t *tail;                 /* side buffer for a packet near the end
                                      (memory)                              */
    uint8_t *buf;                  /* own, or the caller's input            */
    size_t lo, hi;                 /* unconsumed valid data: buf[lo, hi)    */
    uint64_t buf_off;              /* file offset of buf[0]                 */

    /* status */
    int status;
    char err[512];

    /* trace */
    mt_trace_info info;
    unsigned max_version;          /* 2: v1/v2 trace, 3: v003 trace         */

    /* the packet being decoded */
    const uint8_t *p, *pend;
    const uint8_t *pkt_base;       /* where the packet content starts       */
    uint64_t pkt_base_off;         /* ... and its file offset               */
    int in_packet;
    uint64_t pkt_off;
    int64_t tb, te, id_end;
    int64_t alloc_id;
    domain_state *cur;

    domain_state *doms[MAX_DOMAINS];
    unsigned ndoms;
    mt_loctable locs;
    mt_location scratch[256];
};

static int fail(mt_reader *r, int status, uint64_t off, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, sizeof r->err, "offset %llu: %s",
             (unsigned long long)off, msg);
    r->status = status;
    r->p = r->pend = NULL;         /* mt_reader_next's fast path stops here */
    r->in_packet = 0;
    return status;
}

static uint64_t off_of(const mt_reader *r, const uint8_t *p)
{
    return r->pkt_base_off + (uint64_t)(p - r->pkt_base);
}

/* ---- input ------------------------------------------------------------ */

/* Make n bytes (n <= MT_MAX_PACKET + CHUNK) available contiguously at
 * buf + lo. Returns how many are available (fewer only at end of input),
 * or -1 on a read error. */
static long ensure(mt_reader *r, size_t n)
{
    if (r->hi - r->lo >= n)
        return (long)n;
    if (r->direct)
        return (long)(r->hi - r->lo);
    if (r->lo + n > BUF_DATA) {
        memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
        r->buf_off += r->lo;
        r->hi -= r->lo;
        r->lo = 0;
    }
    while (r->hi - r->lo < n && !r->eof) {
        size_t room = BUF_DATA - r->hi;
        size_t want = room < CHUNK ? room : CHUNK;
        if (want < n - (r->hi - r->lo))
            want = room;
        ssize_t got = read(r->fd, r->buf + r->hi, want);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            fail(r, MT_ERR_IO, r->buf_off + r->hi, "read error: %s",
                 strerror(errno));
            return -1;
        }
        if (got == 0)
            r->eof = 1;
        r->hi += (size_t)got;
    }
    /* Zero the slack after the data so over-reads see defined bytes. */
    memset(r->buf + r->hi, 0, SLACK);
    size_t have = r->hi - r->lo;
    return (long)(have < n ? have : n);
}

/* Consume up to n bytes; returns how many there were. */
static uint64_t discard(mt_reader *r, uint64_t n)
{
    uint64_t done = 0;
    while (done < n) {
        uint64_t want = n - done;
        long got = ensure(r, want < CHUNK ? (size_t)want : CHUNK);
        if (got <= 0)
            break;
        r->lo += (size_t)got;
        done += (uint64_t)got;
    }
    return done;
}

/* ---- domains ---------------------------------------------------------- */

static domain_state *domain(mt_reader *r, unsigned id)
{
    for (unsigned i = 0; i < r->ndoms; i++)
        if (r->doms[i]->id == id)
            return r->doms[i];
    if (r->ndoms == MAX_DOMAINS)
        return NULL;
    domain_state *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->id = id;
    d->last_ts = r->info.start_time;
    mt_locr_init(&d->mtf);
    d->last.limit = MT_MAX_BACKTRACE;
    /* room for what the fast path may write without checking: 255
     * codewords of 256 frames after a prefix of up to 252 (fast_one) */
    if (mt_frames_reserve(&d->last, 65536 + 4096)) {
        free(d);
        return NULL;
    }
    r->doms[r->ndoms++] = d;
    return d;
}

/* ---- trace info ------------------------------------------------------- */

/* The NUL-terminated string at *pp, before end, interned into *out (*pp
 * moves past it): 0, MT_ERR_TRUNCATED when it has no NUL before end, or
 * MT_ERR_NOMEM. */
static int get_string(mt_reader *r, const uint8_t **pp, const uint8_t *end,
                      const char **out)
{
    const uint8_t *p = *pp;
    const uint8_t *z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
    if (!z)
        return MT_ERR_TRUNCATED;
    *out = mt_loctable_intern(&r->locs, (const char *)p, (size_t)(z - p));
    if (!*out)
        return MT_ERR_NOMEM;
    *pp = z + 1;
    return 0;
}

/* get_string's failure st: out of memory, or else the string is cut short,
 * as the message cut says. */
static int string_fail(mt_reader *r, int st, uint64_t off, const char *cut)
{
    if (st == MT_ERR_NOMEM)
        return fail(r, st, off, "out of memory for a string");
    return fail(r, MT_ERR_TRUNCATED, off, "%s", cut);
}

/* Read and validate a packet header at buf + lo; on success *h is filled
 * and lo is advanced past it. verify: check the cache verifier (v2). */
static int read_header(mt_reader *r, mt_header *h, int *at_eof, int verify)
{
    uint64_t off = r->buf_off + r->lo;
    long got = ensure(r, 30);
    if (got < 0)
        return r->status;
    if (got == 0 && at_eof) {
        *at_eof = 1;
        return MT_EOF;
    }
    unsigned hsize = MT_HEADER_V2;
    if (got >= 30 && r->max_version >= 3)
        hsize = mt_header_size(mt_ld16(r->buf + r->lo + 28));
    if (got >= 30)
        got = ensure(r, hsize);
    if (got < 0)
        return r->status;
    if ((size_t)got < hsize)
        return fail(r, MT_ERR_TRUNCATED, off,
                    "file ends inside a packet header (%ld of %u bytes)",
                    got, hsize);
    mt_header_parse(h, r->buf + r->lo, r->max_version);
    if (verify && r->max_version < 3 && !r->skip_bt &&
        !mt_btr_verify(&r->doms[0]->bt, h->verify_ix, h->verify_pred,
                       h->verify_val))
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: cache verification" BAD_CACHE);
    char buf[80];
    const char *bad = mt_header_check(h, r->max_version, buf, sizeof buf);
    if (bad)
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: %s", bad);
    if (h->size_bits / 8 < hsize)
        return fail(r, MT_ERR_FORMAT, off,
                    "malformed trace: packet size %u bytes is smaller than "
                    "its %u-byte header", h->size_bits / 8, hsize);
    r->lo += hsize;
    return 0;
}

static int read_info(mt_reader *r)
{
    mt_header h;
    long got = ensure(r, 30);
    if (got < 0)
        return r->status;
    if (got == 0)
        return fail(r, MT_ERR_TRUNCATED, 0, "empty file: not a memtrace trace");
    if (got >= 4 && mt_ld32(r->buf + r->lo) != MT_MAGIC)
        return fail(r, MT_ERR_FORMAT, 0, "not a memtrace trace (no magic number "
                    "0xc1fc1fc1 at its start)");
    if (got >= 30 && mt_ld16(r->buf + r->lo + 28) == 3)
        r->max_version = 3;
    int st = read_header(r, &h, NULL, 0);
    if (st)
        return st;
    size_t content = h.size_bits / 8 - h.header_size;
    got = content <= MT_MAX_PACKET ? ensure(r, content) : 0;
    if (got < 0)
        return r->status;
    if ((size_t)got < content)
        return fail(r, MT_ERR_FORMAT, h.header_size,
                    "malformed trace: trace info packet size (%zu bytes, past the "
                    "end of the file)", (size_t)h.size_bits / 8);
    const uint8_t *p = r->buf + r->lo, *end = p + content;
    uint64_t off = h.header_size;
    if (content < 4 || mt_ld32(p) >> 25 != MT_EV_INFO)
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: trace info packet code");
    if (mt_event_time(h.time_begin, mt_ld32(p)) != h.time_begin)
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: trace info packet time");
    p += 4;
    mt_trace_info *info = &r->info;
    const char *trunc = "malformed trace: trace info event is cut short";
    if (end - p < 9)
        return fail(r, MT_ERR_TRUNCATED, off, "%s", trunc);
    uint64_t bits = mt_ld64(p);
    memcpy(&info->sample_rate, &bits, 8);
    info->word_size = p[8];
    p += 9;
    if ((st = get_string(r, &p, end, &info->executable_name)) ||
        (st = get_string(r, &p, end, &info->host_name)) ||
        (st = get_string(r, &p, end, &info->runtime_params)))
        return string_fail(r, st, off, trunc);
    if (end - p < 8)
        return fail(r, MT_ERR_TRUNCATED, off, "%s", trunc);
    info->pid = (int64_t)mt_ld64(p);
    p += 8;
    info->context = NULL;
    if (h.version >= 2) {
        const char *ctx;
        if ((st = get_string(r, &p, end, &ctx)))
            return string_fail(r, st, off, trunc);
        info->context = *ctx ? ctx : NULL;
    }
    if (p != end)
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: trace info packet done "
                    "(bytes after the trace info's last field)");
    info->start_time = (int64_t)h.time_begin;
    info->format_version = h.version;
    info->initial_domain = h.domain;
    r->lo += content;
    r->alloc_id = 0;
    if (!domain(r, 0))
        return fail(r, MT_ERR_NOMEM, 0, "out of memory");
    r->cur = r->doms[0];
    return 0;
}

/* ---- packets ---------------------------------------------------------- */

static void diag(mt_reader *r, mt_diag_kind kind, uint64_t off,
                 const char *fmt, ...)
{
    if (!r->diag)
        return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->diag(r->diag_ctx, kind, off, msg);
}

/* Advance to the next packet that is to be decoded (spec 9.2 / 9.6). */
static int next_packet(mt_reader *r)
{
    for (;;) {
        mt_header h;
        int at_eof = 0;
        uint64_t off = r->buf_off + r->lo;
        int st = read_header(r, &h, &at_eof, 1);
        if (st)
            return st;
        uint64_t content = h.size_bits / 8 - h.header_size;
        long got = content <= MT_MAX_PACKET ? ensure(r, (size_t)content) : 0;
        if (got < 0)
            return r->status;
        int complete = (uint64_t)got == content;
        int64_t aib = (int64_t)h.alloc_id_begin, aie = (int64_t)h.alloc_id_end;
        domain_state *d = r->max_version < 3 ? r->doms[0] : NULL;
        if (d && !(d->last_ts <= (int64_t)h.time_begin && r->alloc_id == aib)) {
            diag(r, MT_DIAG_OUT_OF_ORDER, off, "skipping bad packet at id %lld %lld-%lld",
                 (long long)r->alloc_id, (long long)aib, (long long)aie);
        } else if ((int64_t)h.pid != r->info.pid) {
            diag(r, MT_DIAG_WRONG_PID, off,
                 "skipping bad packet (wrong pid: %lld, but tracing %lld)",
                 (long long)h.pid, (long long)r->info.pid);
        } else if (!complete && (content <= MT_MAX_PACKET ||
                                 discard(r, content) < content)) {
            diag(r, MT_DIAG_TRUNCATED, off, "skipping truncated packet");
            r->lo = r->hi;
            continue;
        } else if (!complete) {
            return fail(r, MT_ERR_UNSUPPORTED, off,
                        "packet of %llu bytes exceeds the format's %u-byte maximum",
                        (unsigned long long)(content + h.header_size), MT_MAX_PACKET);
        } else {
            if (!d) {
                d = domain(r, h.domain);
                if (!d)
                    return fail(r, MT_ERR_UNSUPPORTED, off,
                                "more than %u domains (or out of memory)", MAX_DOMAINS);
                if (!r->skip_bt && !mt_btr_verify(&d->bt, h.verify_ix,
                                                  h.verify_pred, h.verify_val))
                    return fail(r, MT_ERR_FORMAT, off,
                                "malformed trace: cache verification" BAD_CACHE);
                r->alloc_id = aib;
            }
            r->cur = d;
            const uint8_t *c = r->buf + r->lo;
            if (r->direct && r->hi - r->lo - content < SLACK) {
                memcpy(r->tail, c, (size_t)content);
                memset(r->tail + content, 0, SLACK);
                c = r->tail;
            }
            r->pkt_base = r->p = c;
            r->pkt_base_off = r->buf_off + r->lo;
            r->pend = c + content;
            r->lo += (size_t)content;
            r->pkt_off = off;
            r->tb = (int64_t)h.time_begin;
            r->te = (int64_t)h.time_end;
            r->id_end = aie;
            r->in_packet = 1;
            return 0;
        }
        /* skipped: consume what there is of its content */
        if (complete)
            r->lo += (size_t)content;
        else if (content <= MT_MAX_PACKET)
            r->lo += (size_t)got;
        else
            discard(r, content);
    }
}

/* ---- events ----------------------------------------------------------- */

/* The body of a location event at *pp; off: the event's offset, which its
 * errors name. */
static int read_location(mt_reader *r, const uint8_t **pp, uint64_t off)
{
    const uint8_t *p = *pp, *end = r->pend;
    if (end - p < 9)
        return fail(r, MT_ERR_TRUNCATED, off,
                    "malformed trace: location event runs past its packet");
    uint64_t code = mt_canon(mt_ld64(p));
    unsigned n = p[8];
    p += 9;
    mt_locr *mtf = &r->cur->mtf;
    for (unsigned i = 0; i < n; i++) {
        if (end - p < 6)
            return fail(r, MT_ERR_TRUNCATED, off,
                        "malformed trace: location event runs past its packet");
        uint64_t packed = mt_ld32(p) | (uint64_t)mt_ld16(p + 4) << 32;
        p += 6;
        unsigned fcode = (unsigned)(packed >> 38) & 31;
        unsigned dcode = (unsigned)(packed >> 43) & 31;
        const char *fnew = NULL, *dnew = NULL, *def;
        int st;
        if (fcode == MT_MTF_NEW && (st = get_string(r, &p, end, &fnew)))
            return string_fail(r, st, off,
                               "malformed trace: location file name runs past its packet");
        if (dcode == MT_MTF_NEW && (st = get_string(r, &p, end, &dnew)))
            return string_fail(r, st, off,
                               "malformed trace: location function name runs past its packet");
        unsigned slot;
        if (mt_locr_file(mtf, fcode, fnew, &slot) ||
            mt_locr_def(mtf, slot, dcode, dnew, &def))
            return fail(r, MT_ERR_FORMAT, off,
                        "malformed trace: location of code %08llx names an empty "
                        "move-to-front slot", (unsigned long long)code);
        mt_location *l = &r->scratch[i];
        l->filename = mtf->file[slot];
        l->function = def;
        l->line = (int)(packed & MT_LINE_MAX);
        l->start_char = (int)(packed >> 20) & MT_START_MAX;
        l->end_char = (int)(packed >> 28) & MT_END_MAX;
    }
    int st = mt_loctable_define(&r->locs, code, r->scratch, n);
    if (st == -1)
        return fail(r, MT_ERR_FORMAT, off, "malformed trace: consistent location info");
    if (st == -2)
        return fail(r, MT_ERR_NOMEM, off, "out of memory");
    *pp = p;
    return 0;
}

/* Decode the backtrace of an alloc at *pp into ev. */
static int read_backtrace(mt_reader *r, const uint8_t **pp, unsigned ncw,
                          int64_t prefix, mt_event *ev, uint64_t off)
{
    if (r->skip_bt) {
        if (mt_btr_skip(pp, r->pend, ncw))
            return fail(r, MT_ERR_TRUNCATED, off,
                        "malformed trace: backtrace runs past its packet");
        ev->backtrace = NULL;
        ev->backtrace_len = 0;
        ev->new_codes = 0;
        return 0;
    }
    mt_frames *f = &r->cur->last;
    if (prefix < 0)
        return fail(r, MT_ERR_FORMAT, off,
                    "malformed trace: negative common prefix %lld", (long long)prefix);
    int stale = (uint64_t)prefix > f->len;
    size_t at = stale ? f->len : (size_t)prefix;
    const uint8_t *end = (size_t)(r->pend - *pp) >= (size_t)ncw * MT_BT_MAX_CODEWORD
                             ? NULL : r->pend;
    uint64_t misses = r->cur->bt.misses;
    long len = mt_btr_decode(&r->cur->bt, pp, end, ncw, f, at);
    ev->new_codes = (unsigned)(r->cur->bt.misses - misses);
    if (len < 0)
        return len == -2
                   ? fail(r, MT_ERR_TRUNCATED, off,
                          "malformed trace: backtrace runs past its packet")
                   : fail(r, MT_ERR_UNSUPPORTED, off,
                          "backtrace longer than %u frames (or out of memory)",
                          MT_MAX_BACKTRACE);
    if (!stale)
        f->len = (size_t)len;
    ev->backtrace = f->v;
    ev->backtrace_len = f->len;
    return 0;
}

/* Everything mt_reader_next's fast path does not handle: packet
 * boundaries, location events, long allocations, multi-byte fields, events
 * near a packet's end, errors. It decodes the event at r->p from scratch. */
static int next_slow(mt_reader *r, mt_event *ev)
{
    if (!r || !ev)
        return MT_ERR_ARG;
    if (r->status)
        return r->status;
    if (!r->opened)             /* (not kept: opening next is fine) */
        return MT_ERR_ARG;
    for (;;) {
        const uint8_t *p = r->p;
        if (p >= r->pend) {
            if (r->in_packet) {
                r->in_packet = 0;
                if (r->id_end != r->alloc_id)
                    return fail(r, MT_ERR_FORMAT, r->pkt_off,
                                "malformed trace: alloc id sync (the packet's allocations "
                                "do not match the id range its header gives)");
            }
            int st = next_packet(r);
            if (st)
                return r->status = st;
            continue;
        }
        uint64_t off = off_of(r, p);
        uint32_t word = mt_ld32(p);
        uint64_t t = mt_event_time((uint64_t)r->tb, word);
        if ((int64_t)t < r->tb || (int64_t)t > r->te)
            return fail(r, MT_ERR_FORMAT, off, "malformed trace: time in packet bounds "
                        "(an event's time outside its packet's time range)");
        domain_state *d = r->cur;
        if ((int64_t)t < d->last_ts)
            return fail(r, MT_ERR_FORMAT, off, "malformed trace: monotone timestamps "
                        "(an event's time before the previous event's)");
        d->last_ts = (int64_t)t;
        unsigned code = word >> 25;
        const uint8_t *q = p + 4;
        int64_t prefix, delta;
        unsigned ncw;
        ev->time = (int64_t)t;
        ev->domain = (int)d->id;
        if (code > MT_EV_SHORT_BASE && code <= MT_EV_SHORT_BASE + 16) {
            q = mt_get_vint(q, &prefix);
            ncw = *q++;
            ev->length = code - MT_EV_SHORT_BASE;
            ev->nsamples = 1;
            ev->source = MT_SOURCE_MINOR;
        } else if (code == MT_EV_ALLOC) {
            q = mt_get_vint(q, &ev->length);
            q = mt_get_vint(q, &ev->nsamples);
            unsigned src = *q++;
            q = mt_get_vint(q, &prefix);
            ncw = mt_ld16(q);
            q += 2;
            if (q <= r->pend && src > MT_SOURCE_EXTERNAL)
                return fail(r, MT_ERR_FORMAT, off, "malformed trace: source (%u: an "
                            "allocation's is 0 minor, 1 major or 2 external)", src);
            ev->source = (mt_source)src;
        } else if (code == MT_EV_PROMOTE || code == MT_EV_COLLECT) {
            q = mt_get_vint(q, &delta);
            if (q > r->pend)
                return fail(r, MT_ERR_TRUNCATED, off,
                            "malformed trace: event runs past its packet");
            if (delta < 0 && (code == MT_EV_PROMOTE || r->max_version < 3))
                return fail(r, MT_ERR_FORMAT, off, code == MT_EV_PROMOTE
                            ? "malformed trace: promote id sync (a promote of an "
                              "object not yet allocated)"
                            : "malformed trace: collect id sync (a collect of an "
                              "object not yet allocated)");
            r->p = q;
            ev->kind = code == MT_EV_PROMOTE ? MT_EVENT_PROMOTE : MT_EVENT_COLLECT;
            ev->id = (int64_t)((uint64_t)r->alloc_id - 1 - (uint64_t)delta);
            ev->backtrace = NULL;
            ev->backtrace_len = 0;
            return 0;
        } else if (code == MT_EV_LOCATION) {
            if (read_location(r, &q, off))
                return r->status;
            r->p = q;
            continue;
        } else if (code == MT_EV_INFO) {
            return fail(r, MT_ERR_FORMAT, off,
                        "malformed trace: Multiple trace-info events present");
        } else {
            return fail(r, MT_ERR_FORMAT, off, "malformed trace: Unknown event code %u",
                        code);
        }
        /* an allocation */
        if (q > r->pend)
            return fail(r, MT_ERR_TRUNCATED, off,
                        "malformed trace: event runs past its packet");
        if (read_backtrace(r, &q, ncw, prefix, ev, off))
            return r->status;
        r->p = q;
        ev->kind = MT_EVENT_ALLOC;
        ev->id = r->alloc_id++;
        ev->common_prefix = prefix;
        return 0;
    }
}

_Static_assert(MT_EV_PROMOTE - 1 == MT_EVENT_PROMOTE && MT_EV_COLLECT - 1 == MT_EVENT_COLLECT,
               "fast_one maps the two kinds by subtracting 1");

#define FAST_MARGIN 24  /* bytes the fast path reads before deciding */
#if defined(__GNUC__)
#define likely(x) __builtin_expect(!!(x), 1)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define likely(x) (x)
#define ALWAYS_INLINE inline
#endif

/* The decoder state the fast path works on, copied out of the reader so the
 * compiler can keep it in registers across a run of events. */
typedef struct fast_state {
    const uint8_t *p, *pend;
    uintptr_t plim;                /* p >= plim: within FAST_MARGIN of pend */
    uint64_t tb, te;               /* the packet's time_begin and time_end  */
    uint32_t tlow;                 /* time_begin's low MT_TIME_BITS bits    */
    uint64_t lb;                   /* max(time_begin, last event time)      */
    int64_t alloc_id;
    domain_state *d;               /* its codec state and frames            */
    int dom;
} fast_state;

static ALWAYS_INLINE void fast_load(const mt_reader *r, fast_state *s)
{
    domain_state *d = r->cur;
    s->p = r->p;
    s->pend = r->pend;
    /* 0 (nothing is fast) outside a packet, where p and pend are NULL */
    s->plim = r->pend ? (uintptr_t)r->pend - (FAST_MARGIN - 1) : 0;
    s->tb = (uint64_t)r->tb;
    s->tlow = (uint32_t)s->tb & MT_TIME_MASK;
    s->te = (uint64_t)r->te;
    s->lb = d && d->last_ts > r->tb ? (uint64_t)d->last_ts : (uint64_t)r->tb;
    s->alloc_id = r->alloc_id;
    s->d = d;
    s->dom = d ? (int)d->id : 0;
}

/* Write back what fast_one changed; lb is the last event's time once an
 * event was decoded (called only then). */
static ALWAYS_INLINE void fast_store(mt_reader *r, const fast_state *s)
{
    r->p = s->p;
    r->alloc_id = s->alloc_id;
    r->cur->last_ts = (int64_t)s->lb;
}

/* Decode one event if it is of the kinds that make up nearly all of a real
 * trace: collects and promotes with a one- or three-byte delta, short or
 * long allocations whose common prefix takes the one- or three-byte vint
 * form (and a long one's length and nsamples any but the nine-byte form),
 * well inside the packet, and (for allocations) with every codeword
 * provably inside it. Everything is checked before any state changes, so
 * when it declines (returns 0), next_slow decodes the same event with full
 * checks: this adds speed, not behaviour. */
/* A vint in the 1-, 3- or 5-byte form, or NULL (9-byte form: slow path). */
static ALWAYS_INLINE const uint8_t *fast_vint(const uint8_t *p, int64_t *v)
{
    unsigned t = p[0];
    if (t <= 252) {
        *v = t;
        return p + 1;
    }
    if (t == 253) {
        *v = mt_ld16(p + 1);
        return p + 3;
    }
    if (t == 254) {
        *v = (int32_t)mt_ld32(p + 1);
        return p + 5;
    }
    return NULL;
}

static ALWAYS_INLINE int fast_one(fast_state *s, mt_event *ev, const int skip)
{
    const uint8_t *p = s->p;
    if ((uintptr_t)p >= s->plim)   /* fewer than FAST_MARGIN bytes left */
        return 0;
    uint32_t word = mt_ld32(p);
    uint64_t t = mt_event_time_low(s->tb, s->tlow, word);
    unsigned code = word >> 25, b1 = p[4];
    /* one test for time_begin <= t <= time_end and t >= previous event */
    if (!(t - s->lb <= s->te - s->lb))
        return 0;
    if (code == MT_EV_COLLECT || code == MT_EV_PROMOTE) {
        if (b1 > 253)              /* a 5- or 9-byte delta */
            return 0;
        unsigned delta = b1 <= 252 ? b1 : mt_ld16(p + 5);
        s->p = p + (b1 <= 252 ? 5 : 7);
        s->lb = t;
        /* (promote 3 -> 2, collect 4 -> 3: static-asserted above) */
        ev->kind = (mt_event_kind)(code - 1);
        ev->time = (int64_t)t;
        ev->id = s->alloc_id - 1 - (int64_t)delta;
        ev->backtrace = NULL;
        ev->backtrace_len = 0;
        return 1;
    }
    int64_t length = (int64_t)code - MT_EV_SHORT_BASE, nsamples = 1;
    unsigned src = 0, prefix = b1, ncw;
    const uint8_t *q;
    if ((uint64_t)length - 1 < 16 && b1 <= 252) {
        /* at most 255 codewords (65 280 frames) after a prefix of at most
         * 252: always room, as domain() reserves 65 536 + 4 096 frames */
        ncw = p[5];
        q = p + 6;
    } else if (code == MT_EV_ALLOC) {
        /* length and nsamples may take the 1-, 3- or 5-byte vint forms,
         * the prefix the 1- or 3-byte form */
        q = fast_vint(p + 4, &length);
        q = q ? fast_vint(q, &nsamples) : NULL;
        if (!q || q[0] > MT_SOURCE_EXTERNAL)
            return 0;
        src = q[0];
        if (q[1] <= 252) {
            prefix = q[1];
            ncw = mt_ld16(q + 2);
            q += 4;
        } else if (q[1] == 253) {
            prefix = mt_ld16(q + 2);
            ncw = mt_ld16(q + 4);
            q += 6;
        } else {
            return 0;
        }
        /* (prefix < 65 536 <= cap: no wrap) */
        if (!skip && s->d->last.cap - prefix < (size_t)ncw * 256 + 8)
            return 0;           /* (mt_btr_decode_fast's room: see there) */
    } else if ((uint64_t)length - 1 < 16 && b1 == 253) {
        /* a short allocation whose common prefix has 253 frames or more
         * (deep stacks: one allocation in eight of the corpus's ocamlopt
         * trace, which the slow path decoded at several times the cost) */
        prefix = mt_ld16(p + 5);
        ncw = p[7];
        q = p + 8;
        if (!skip && s->d->last.cap - prefix < (size_t)ncw * 256 + 8)
            return 0;
    } else {
        return 0;
    }
    /* every codeword inside the packet, and 8 bytes at q whatever ncw is
     * (mt_btr_decode_fast reads them) */
    if ((size_t)(s->pend - q) < (size_t)ncw * MT_BT_MAX_CODEWORD + 8)
        return 0;
    mt_frames *f = &s->d->last;
    if (!skip && prefix > f->len)
        return 0;
    /* Accepted. The fields are stored before the backtrace is decoded so
     * that they need not stay in registers (or the stack) across it. */
    ev->kind = MT_EVENT_ALLOC;
    ev->time = (int64_t)t;
    ev->id = s->alloc_id++;
    ev->source = (mt_source)src;
    ev->length = length;
    ev->nsamples = nsamples;
    ev->common_prefix = prefix;
    s->lb = t;
    if (skip) {
        q = mt_btr_skip_fast(q, ncw);
        ev->backtrace = NULL;
        ev->backtrace_len = 0;
        ev->new_codes = 0;
    } else {
        unsigned nm;
        f->len = prefix + mt_btr_decode_fast(&s->d->bt, &q, ncw, f->v + prefix, &nm);
        ev->new_codes = nm;
        ev->backtrace = f->v;
        ev->backtrace_len = f->len;
    }
    s->p = q;
    return 1;
}

int mt_reader_next(mt_reader *r, mt_event *ev)
{
    if (!r || !ev)
        return MT_ERR_ARG;
    fast_state s;
    fast_load(r, &s);
    if (likely(fast_one(&s, ev, r->skip_bt))) {
        fast_store(r, &s);
        ev->domain = s.dom;
        return MT_OK;
    }
    return next_slow(r, ev);
}

/* mt_reader_scan's loop, made twice: with and without backtraces (skip is
 * a constant in each, which frees a register in the fast path). */
static ALWAYS_INLINE int scan_loop(mt_reader *r, mt_event_fn fn, void *ctx, const int skip)
{
    mt_event ev;
    for (;;) {
        fast_state s;
        fast_load(r, &s);
        ev.domain = s.dom;
        if (fast_one(&s, &ev, skip)) {
            int stop;
            do {
                r->p = s.p;             /* for mt_reader_offset in fn */
                stop = fn(ctx, &ev);
            } while (!stop && fast_one(&s, &ev, skip));
            fast_store(r, &s);
            if (stop)
                return MT_OK;
            continue;
        }
        int st = next_slow(r, &ev);
        if (st)
            return st;
        if (fn(ctx, &ev))
            return MT_OK;
    }
}

int mt_reader_scan(mt_reader *r, mt_event_fn fn, void *ctx)
{
    if (!r || !fn)
        return MT_ERR_ARG;
    return r->skip_bt ? scan_loop(r, fn, ctx, 1) : scan_loop(r, fn, ctx, 0);
}

/* ---- public ----------------------------------------------------------- */

mt_reader *mt_reader_create(const mt_reader_options *opt)
{
    /* (the buffers come with the input: a reader of a small trace in
     * memory never needs the 320 KB one, and under AddressSanitizer each
     * allocation of that size is an mmap and a munmap) */
    mt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (opt) {
        r->skip_bt = opt->skip_backtraces;
        r->diag = opt->diag;
        r->diag_ctx = opt->diag_ctx;
        for (size_t i = 0; i < sizeof opt->reserved / sizeof *opt->reserved; i++)
            r->bad_opts |= opt->reserved[i] != 0;
    }
    r->fd = -1;
    r->max_version = 2;
    mt_loctable_init(&r->locs);
    return r;
}

static int open_common(mt_reader *r)
{
    r->opened = 1;
    if (r->direct)
        r->tail = malloc(MT_MAX_PACKET + SLACK);
    else
        r->buf = r->own = calloc(1, BUF_DATA + SLACK);
    if (!r->tail && !r->own) {     /* (the one of them just asked for) */
        snprintf(r->err, sizeof r->err, "out of memory for the reader's buffer");
        return r->status = MT_ERR_NOMEM;
    }
    int st = read_info(r);
    if (st)
        r->status = st;
    return st;
}

int mt_reader_open_file(mt_reader *r, const char *path)
{
    if (!r || !path || r->opened || r->bad_opts)
        return MT_ERR_ARG;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        r->opened = 1;
        /* no path: callers put the file's name before every message of
         * the reader (an open_fd reader has no name to give) */
        snprintf(r->err, sizeof r->err, "%s", strerror(errno));
        return r->status = MT_ERR_IO;
    }
    r->fd = fd;
    r->own_fd = 1;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);   /* more readahead */
    return open_common(r);
}

int mt_reader_open_fd(mt_reader *r, int fd)
{
    if (!r || fd < 0 || r->opened || r->bad_opts)
        return MT_ERR_ARG;
    r->fd = fd;
    return open_common(r);
}

int mt_reader_open_memory(mt_reader *r, const void *data, size_t size)
{
    if (!r || (!data && size) || r->opened || r->bad_opts)
        return MT_ERR_ARG;
    static const uint8_t empty[1];
    r->direct = 1;
    r->buf = (uint8_t *)(data ? data : empty);   /* never written: direct */
    r->hi = size;
    r->eof = 1;
    return open_common(r);
}

const mt_trace_info *mt_reader_info(const mt_reader *r)
{
    return r && r->opened && r->doms[0] ? &r->info : NULL;
}

int mt_reader_locations(mt_reader *r, uint64_t code, const mt_location **locs,
                        size_t *n)
{
    if (!r || !locs || !n)
        return MT_ERR_ARG;
    if (mt_loctable_find(&r->locs, mt_canon(code), locs, n) == 0)
        return MT_OK;
    *locs = NULL;
    *n = 0;
    return MT_ERR_LOCATION;
}

const char *mt_reader_error(const mt_reader *r)
{
    return r ? r->err : "";
}

uint64_t mt_reader_offset(const mt_reader *r)
{
    if (!r)
        return 0;
    if (r->in_packet)
        return off_of(r, r->p);
    return r->buf_off + r->lo;
}

void mt_reader_close(mt_reader *r)
{
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    for (unsigned i = 0; i < r->ndoms; i++) {
        free(r->doms[i]->last.v);
        free(r->doms[i]);
    }
    mt_loctable_free(&r->locs);
    free(r->own);
    free(r->tail);
    free(r);
}
