/*
 * memtrace.h - public API of libmemtrace, a reader and writer for memtrace
 * traces: it reads format versions 1, 2 and 3 and writes 2 and 3 (the
 * format's specification; docs/ARCHITECTURE.md for how the library is
 * built).
 *
 * Conventions
 *  - Every function that can fail returns an int status: MT_OK (0) or a
 *    negative MT_ERR_* code. mt_status_name() names a code; the handle's
 *    *_error() function gives the full message, which names the byte offset
 *    in the trace and what was wrong. Two kinds of failure leave the
 *    handle as it was, message included: a reader's MT_ERR_ARG (a NULL
 *    argument, an open of a reader already opened, mt_reader_next before
 *    an open) and mt_reader_locations' MT_ERR_LOCATION (a code not defined).
 *  - Handles are opaque. The library keeps no global state: any number of
 *    readers and writers may be used concurrently from different threads, but
 *    one handle must not be used by two threads at the same time.
 *  - The library never prints, never exits and never aborts on bad data.
 *  - Location codes are 64-bit values in the canonical 63-bit form of the
 *    format (bit 63 equals bit 62). The library's messages print them in
 *    hex ("invalid location code 2ac1e85e6499", as the reference's do);
 *    memtrace dump prints them as signed decimals (int64_t), as its dump.
 *  - Messages (*_error(), mt_status_name()) stay valid until the next call
 *    on the same handle (mt_status_name's: for ever).
 *  - Times are microseconds since the Unix epoch (int64_t).
 */
#ifndef MEMTRACE_H
#define MEMTRACE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MT_BUILDING_LIB) && defined(__GNUC__)
#define MT_API __attribute__((visibility("default")))
#else
#define MT_API
#endif

#define MT_VERSION_MAJOR 0
#define MT_VERSION_MINOR 1
#define MT_VERSION_PATCH 0
#define MT_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */

enum {
    MT_OK = 0,
    MT_EOF = 1,             /* mt_reader_next: no more events                */
    MT_ERR_FORMAT = -1,     /* the trace violates the format                 */
    MT_ERR_TRUNCATED = -2,  /* the input ends inside a header or an event    */
    MT_ERR_IO = -3,         /* read/write/open failed (errno in the message) */
    MT_ERR_NOMEM = -4,      /* out of memory                                 */
    MT_ERR_ARG = -5,        /* invalid argument or call sequence             */
    MT_ERR_LOCATION = -6,   /* lookup of a location code never defined; the
                               writer: a code written with no location     */
    MT_ERR_PID_CHANGED = -7,/* writer: the process forked; nothing written   */
    MT_ERR_UNSUPPORTED = -8 /* valid but outside what this build handles     */
};

/* Short constant name of a status code ("MT_ERR_FORMAT", ...);
 * "MT_ERR_UNKNOWN" for a value that is none. */
MT_API const char *mt_status_name(int status);

/* Library version string, MT_VERSION_STRING of the built library. */
MT_API const char *mt_version(void);

/* ------------------------------------------------------------------------ */
/* Shared records                                                           */

typedef enum {
    MT_SOURCE_MINOR = 0,
    MT_SOURCE_MAJOR = 1,
    MT_SOURCE_EXTERNAL = 2
} mt_source;

/* Trace metadata (the trace_info event plus header fields). Strings are NUL
 * terminated; the reader owns them for the reader's lifetime. */
typedef struct mt_trace_info {
    double sample_rate;          /* samples per word, 0 < rate <= 1           */
    int word_size;               /* 64 or 32 (bits)                           */
    const char *executable_name;
    const char *host_name;
    const char *runtime_params;  /* OCaml GC params ("" when not OCaml)       */
    int64_t pid;                 /* packets of other pids are skipped         */
    int64_t start_time;          /* us since epoch: first packet's time_begin */
    const char *context;         /* NULL when absent ("" is written as absent)*/
    int format_version;          /* 1, 2 or 3 (version of the first packet)   */
    int initial_domain;          /* v3: domain of the first packet, else 0    */
} mt_trace_info;

/* One source location. A location code maps to a list of these, outermost
 * (caller) first when functions were inlined. Text form used by the tools:
 * "<function>@<file>:<line>:<start_char>-<end_char>". */
typedef struct mt_location {
    const char *filename;
    const char *function;        /* the format's "defname"                    */
    int line;                    /* 20 bits on the wire                       */
    int start_char;              /* 8 bits on the wire                        */
    int end_char;                /* 10 bits on the wire                       */
} mt_location;

typedef enum {
    MT_EVENT_ALLOC = 1,
    MT_EVENT_PROMOTE = 2,
    MT_EVENT_COLLECT = 3
} mt_event_kind;

/* One decoded event. Pointers are owned by the reader and stay valid until
 * the next call to mt_reader_next(), mt_reader_scan() or mt_reader_close()
 * (inside a scan's callback: until it returns). */
typedef struct mt_event {
    mt_event_kind kind;
    int64_t time;                /* us since epoch; minus info.start_time = dt */
    int64_t id;                  /* object id (all kinds)                     */
    int domain;                  /* v3: packet domain; v1/v2: 0               */
    /* MT_EVENT_ALLOC only: */
    mt_source source;
    int64_t length;              /* words, header excluded                    */
    int64_t nsamples;
    const uint64_t *backtrace;   /* caller first: [0] = outermost frame       */
    size_t backtrace_len;        /* 0 when backtrace decoding is off          */
    int64_t common_prefix;       /* frames shared with the previous alloc     */
    unsigned new_codes;          /* codes this backtrace put into the decoder's
                                  * cache (spec 6.3 miss codewords); 0 means
                                  * every frame came from the cache or from
                                  * the previous backtrace: a code seen before
                                  * or, from a cache bucket never filled, 0   */
} mt_event;

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */

typedef struct mt_reader mt_reader;

/* Kinds of recoverable problems reported while reading; the reader skips
 * the packet and goes on, as the reference reader does. */
typedef enum {
    MT_DIAG_OUT_OF_ORDER = 1,    /* "skipping bad packet at id %d %Ld-%Ld"    */
    MT_DIAG_WRONG_PID = 2,       /* "skipping bad packet (wrong pid: ...)"    */
    MT_DIAG_TRUNCATED = 3        /* "skipping truncated packet"               */
} mt_diag_kind;

/* message: the reference reader's words, without newline. offset: byte
 * offset of the skipped packet in the trace (as mt_reader_offset counts).
 * Called from inside the reader's calls: it must not call the reader. */
typedef void (*mt_diag_fn)(void *ctx, mt_diag_kind kind, uint64_t offset,
                           const char *message);

/* Options (here and mt_writer_options): zero every field you do not set,
 * e.g. `mt_reader_options o = {0};` or memset. `reserved` is room for
 * options to come, so that adding one changes neither the struct's size nor
 * the library's ABI; it must be zero: a library that does not know an
 * option refuses it (MT_ERR_ARG) rather than ignore it. */
typedef struct mt_reader_options {
    int skip_backtraces;         /* nonzero: do not decode backtraces (faster;
                                    events carry backtrace_len 0)             */
    mt_diag_fn diag;             /* optional: called for each skipped packet  */
    void *diag_ctx;
    uint64_t reserved[4];        /* zero                                      */
} mt_reader_options;

/* Create a reader. opt may be NULL (defaults: decode backtraces, no
 * diagnostics callback). Returns NULL only when out of memory. With
 * reserved fields of opt that are not zero, every open call returns
 * MT_ERR_ARG. */
MT_API mt_reader *mt_reader_create(const mt_reader_options *opt);

/* Attach input and read the trace_info packet. Exactly one open call per
 * reader. open_file opens and later closes the path; open_fd reads from fd
 * (any readable blocking descriptor, pipes included: EAGAIN is an error)
 * from its current position, and leaves it open; open_memory
 * reads from a buffer that must outlive the reader. When open_file cannot
 * open the path (MT_ERR_IO), the message is strerror's ("No such file or
 * directory"), without the path, which the caller knows and names. */
MT_API int mt_reader_open_file(mt_reader *r, const char *path);
MT_API int mt_reader_open_fd(mt_reader *r, int fd);
MT_API int mt_reader_open_memory(mt_reader *r, const void *data, size_t size);

/* The trace metadata; valid after a successful open (NULL before one, or
 * after a failed one), for the reader's lifetime. */
MT_API const mt_trace_info *mt_reader_info(const mt_reader *r);

/* Next event: MT_OK (ev filled), MT_EOF at the end of the trace, or an error.
 * Every event before a malformation is delivered before the error is
 * returned; after an error or MT_EOF, further calls return the same status. */
MT_API int mt_reader_next(mt_reader *r, mt_event *ev);

/* Callback of mt_reader_scan: return 0 to go on, nonzero to stop. ev and
 * what it points to are valid during the call only. */
typedef int (*mt_event_fn)(void *ctx, const mt_event *ev);

/* Call fn for each remaining event: the fastest way through a trace (the
 * decoder keeps its state in registers between events). Returns MT_EOF at
 * the end, an error status (after every event before the damage was
 * delivered), or MT_OK when fn asked to stop; reading can then go on with
 * mt_reader_next or another scan. fn may call mt_reader_locations and
 * mt_reader_offset (the offset just past ev) but no other function on this
 * reader. */
MT_API int mt_reader_scan(mt_reader *r, mt_event_fn fn, void *ctx);

/* The locations of a code. MT_OK with *n possibly 0 (a code with no known
 * source), or MT_ERR_LOCATION if no location event defined the code (so far:
 * location events precede their use). Records are interned and immutable,
 * valid for the reader's lifetime. */
MT_API int mt_reader_locations(mt_reader *r, uint64_t code,
                        const mt_location **locs, size_t *n);

/* Message of the error that stopped the reader ("" if none), naming the
 * offset (misuse and MT_ERR_LOCATION set none: see the conventions). */
MT_API const char *mt_reader_error(const mt_reader *r);

/* Offset of the first byte not yet consumed, counted from where reading
 * began: the file's start for open_file and open_memory, the descriptor's
 * position at open_fd. The offsets in messages count the same way. */
MT_API uint64_t mt_reader_offset(const mt_reader *r);

/* Free everything (closes the file of mt_reader_open_file). NULL is ok. */
MT_API void mt_reader_close(mt_reader *r);

/* ------------------------------------------------------------------------ */
/* Writer                                                                   */

typedef struct mt_writer mt_writer;

/* Output sink: write all len bytes, return 0, or return an errno value. The
 * writer hands over whole packets only. */
typedef int (*mt_sink_fn)(void *ctx, const void *buf, size_t len);

/* Location callback: called once for each code the codec has to define (the
 * first time a code is seen, and again if it was evicted from the codec's
 * cache). Set *locs and *n to the code's locations, outermost first; they must
 * stay valid until the callback is called again or the writer call returns.
 * A NULL filename or function is written as "". Return 0; nonzero (or NULL
 * *locs with *n > 0) defines the code with no location, and the writer
 * call returns MT_ERR_LOCATION after writing its event. A NULL callback
 * defines every code with no location (and is not an error). The format
 * bounds what a code holds (spec 5.5, as the reference writer does): more
 * than 255 records, or more than 4096 bytes of them with their names, give
 * the code the unknown location instead; line is kept in 20 bits,
 * start_char in 8 and end_char in 10, a value out of range (negative ones
 * included) becoming the field's maximum. */
typedef int (*mt_locate_fn)(void *ctx, uint64_t code,
                            const mt_location **locs, size_t *n);

typedef struct mt_writer_options {
    int format_version;          /* 2 (default when 0) or 3 (single domain)   */
    int domain;                  /* v3: the domain written in every header,
                                    0 to 65535 (else MT_ERR_ARG)             */
    int no_fork_check;           /* nonzero: do not compare getpid() at flush */
    uint64_t reserved[4];        /* zero (see mt_reader_options)              */
} mt_writer_options;

/* Create a writer and write the trace_info packet at once. info->format_version
 * and info->initial_domain are ignored (opt decides); info->start_time is the
 * trace's start; pid is written in every packet header. opt may be NULL.
 * On failure *out is NULL and, if errbuf is non-NULL, the message is
 * written there (truncated to errbuf_size). */
MT_API int mt_writer_open_fd(mt_writer **out, int fd, const mt_trace_info *info,
                      const mt_writer_options *opt,
                      char *errbuf, size_t errbuf_size);
MT_API int mt_writer_open_sink(mt_writer **out, mt_sink_fn sink, void *sink_ctx,
                        const mt_trace_info *info,
                        const mt_writer_options *opt,
                        char *errbuf, size_t errbuf_size);

/* Record an allocation at time `time` (us since epoch, non-decreasing).
 * callstack[0] is the allocation site, callstack[n-1] the outermost frame
 * (callee first, as unwinders produce it). Codes must be nonzero and in the
 * canonical 63-bit form; length and nsamples must fit the format's 63-bit
 * integers (-2^62 <= v < 2^62); time must not be below the previous event's
 * (or the trace's start_time): else MT_ERR_ARG, nothing is written and the
 * writer stays usable. locate is called for codes the codec must define.
 * A backtrace's encoding takes at most 4096 bytes (spec 6.4): ~409 frames
 * never seen before (a miss takes 10 bytes; frames the cache predicts, far
 * fewer). Past that the frames nearest the allocation site are dropped
 * without a word, as the reference writer drops them, and the readers see
 * the truncated backtrace (and, for the next allocation sharing its
 * outer frames, the previous one: spec 6.5). Callers that care cut deep
 * stacks first.
 * On success *id (if non-NULL) gets the allocation's object id; so it does
 * with MT_ERR_LOCATION (the event was written, see mt_locate_fn), which
 * leaves the writer usable too. */
MT_API int mt_writer_alloc(mt_writer *w, int64_t time, int64_t length,
                    int64_t nsamples, mt_source source,
                    const uint64_t *callstack, size_t n,
                    mt_locate_fn locate, void *locate_ctx, int64_t *id);

/* Promotion (minor to major heap) and collection of an earlier allocation.
 * id must be smaller than the next allocation's id, and no more than 2^62
 * below it (the event stores the difference in 63 bits); time as for
 * mt_writer_alloc. Else MT_ERR_ARG, nothing written, the writer usable.
 * A negative id, which no allocation has, is written as given: the format
 * and the reference's reader allow it, and copying such a trace keeps it. */
MT_API int mt_writer_promote(mt_writer *w, int64_t time, int64_t id);
MT_API int mt_writer_collect(mt_writer *w, int64_t time, int64_t id);

/* Write out everything buffered (location packets, then the events packet,
 * which is written even when it holds no event, as the reference's flush
 * does). MT_OK, or the status that stopped the writer (MT_ERR_IO,
 * MT_ERR_PID_CHANGED, MT_ERR_NOMEM; MT_ERR_ARG once finished). */
MT_API int mt_writer_flush(mt_writer *w);

/* Final flush: after it the writer takes no more events (MT_ERR_ARG) and
 * mt_writer_close() writes nothing more. Use it to get the final status with
 * its message from mt_writer_error() before closing. */
MT_API int mt_writer_finish(mt_writer *w);

/* Finish (unless already finished) and free. Returns the final status; the
 * writer is freed either way. The fd of mt_writer_open_fd is not closed.
 * NULL is ok. */
MT_API int mt_writer_close(mt_writer *w);

/* Message of the last error ("" if none; "writer finished" once finished
 * without error, as events are then refused). After an I/O error, a pid
 * change or running out of memory the writer refuses further events (it
 * never writes a partial packet; on a regular file a failed write is cut
 * back to the end of the last whole packet, counted from the file's end
 * at open when the descriptor appends, O_APPEND). The writer calls write(2) on its descriptor: writing to a pipe
 * or socket whose reader has gone raises SIGPIPE, which kills a process
 * that does not ignore it (ignored, the call fails with MT_ERR_IO). */
MT_API const char *mt_writer_error(const mt_writer *w);

/* Id the next allocation will get. */
MT_API int64_t mt_writer_next_id(const mt_writer *w);

#ifdef __cplusplus
}
#endif
#endif /* MEMTRACE_H */
