/*
 * profiler.h - in-process control of the memtrace native heap profiler
 * (libmemtrace_preload.so): start and stop tracing, and report allocations
 * of custom pools and arenas ("external allocations", spec 10.3).
 *
 * The functions live in libmemtrace_preload.so. A program can link it
 * (-lmemtrace_preload: its malloc family then replaces glibc's for the
 * whole process) or, when it is preloaded, find them with
 * dlsym(RTLD_DEFAULT, "mt_profiler_start") and call them only if present.
 *
 * One session at a time per process. Started from the environment (MEMTRACE
 * set, see docs/PROFILER.md) or by mt_profiler_start; it ends at
 * mt_profiler_stop or at exit, when the trace is flushed and closed.
 */
#ifndef MEMTRACE_PROFILER_H
#define MEMTRACE_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest context a trace holds, in bytes (MEMTRACE_CONTEXT too). */
#define MT_PROFILER_CONTEXT_MAX 16384

/* Start tracing into the file at path (created with mode 0600, locked,
 * truncated), sampling `rate` per 8-byte word (0 < rate <= 1; 1e-5 is one
 * sample per ~781 KiB allocated). context may be NULL. Returns 0, or -1
 * with a one-line message in errbuf (if non-NULL): bad rate, a context
 * longer than MT_PROFILER_CONTEXT_MAX, a session is already active, the
 * file cannot be opened or locked. */
int mt_profiler_start(const char *path, double rate, const char *context,
                      char *errbuf, size_t errbuf_size);

/* Flush and close the trace. Returns 0, or -1 if no session was active or
 * the trace could not be written completely. */
int mt_profiler_stop(void);

/* Nonzero while a session is tracing. */
int mt_profiler_active(void);

/* Write everything buffered to the file now (a session also does this
 * about once a second by itself). Returns 0 or -1. */
int mt_profiler_flush(void);

/* An allocation of `bytes` from a custom allocator: counted like a malloc of
 * that size; if sampled, an alloc event with the caller's backtrace is
 * written. Returns a token for mt_profiler_ext_free, 0 when not sampled
 * (then nothing needs to be reported at the release). Tokens are valid
 * within the session that issued them. */
uint64_t mt_profiler_ext_alloc(size_t bytes);

/* Release of an external allocation: token from mt_profiler_ext_alloc (0 is
 * ignored). Tokens are not checked, as in the OCaml library's External
 * module: a token released twice, or a value that is no token of this
 * session, writes a collect of an object that is not live (a warning of
 * `memtrace check`), or of another object. */
void mt_profiler_ext_free(uint64_t token);

#ifdef __cplusplus
}
#endif
#endif /* MEMTRACE_PROFILER_H */
