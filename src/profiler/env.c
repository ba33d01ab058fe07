/*
 * env.c - the environment of the programs a traced program runs, and the
 * exec family, interposed.
 *
 * When a session starts from the environment (spec 10.4), the profiler
 * empties MEMTRACE and takes itself out of LD_PRELOAD, in place
 * (mt_env_untrace), so that the programs the traced one starts run
 * untraced, as with the reference. An exec in the traced process's own
 * place is not such a program, though: `env VAR=1 prog`, `nice prog`, a
 * wrapper script's `exec prog`, pyenv's and rbenv's shims all end by
 * exec'ing the program the user asked to trace, keeping the process id.
 * With the variables gone, `memtrace run -- python3 x.py` traced /usr/bin/env
 * (the shim's interpreter line) and nothing of python. So the exec functions
 * are interposed: an exec by the process whose session started from the
 * environment (same process id: not a forked or vforked child) puts the
 * variables back in the new program's environment (mt_env_save kept them),
 * and the new program writes the same trace file, replacing the wrapper's
 * trace. Children's execs and glibc's own (system, popen, posix_spawn call
 * its internal execve) are untouched: they run untraced unless
 * follow-exec kept the variables for them.
 *
 * Every exec by a process with a session first flushes its trace
 * (mt_session_before_exec): an exec runs no destructor, and the events
 * since the last flush were lost.
 *
 * The new environment is built in a block from mmap, not malloc: exec may
 * be called from a signal handler or in a child of a multi-threaded fork.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profiler/profiler_int.h"

#define EXPORT __attribute__((visibility("default")))

static const char preload_name[] = "libmemtrace_preload.so";

/* Saved at start-up: every MEMTRACE and MEMTRACE_* entry, as NAME=VALUE,
 * and this library's LD_PRELOAD entry. */
#define SAVED_MAX 32
static char store[16384];
static const char *saved[SAVED_MAX];
static size_t nsaved;
static char preload_entry[PATH_MAX];
static char memtrace_set[PATH_MAX + 16];  /* MEMTRACE=value the profiler set */
static pid_t root_pid;                    /* 0: an exec changes nothing */

/* Is the LD_PRELOAD entry p[0..k) this library: libmemtrace_preload.so,
 * or a versioned name of it (libmemtrace_preload.so.0, the soname, which
 * `memtrace run` preloads), in any directory? */
static int is_preload_entry(const char *p, size_t k)
{
    const char *slash = memrchr(p, '/', k);
    const char *base = slash ? slash + 1 : p;
    size_t bk = (size_t)(p + k - base), n = sizeof preload_name - 1;
    return bk >= n && memcmp(base, preload_name, n) == 0 && (bk == n || base[n] == '.');
}

/* This library's entry in the LD_PRELOAD list v (entries separated by ':'
 * or ' '): where it starts, *k its length; NULL if it has none. */
static const char *find_preload_entry(const char *v, size_t *k)
{
    for (const char *p = v; p && *p;) {
        size_t n = strcspn(p, ": ");
        if (n > 0 && is_preload_entry(p, n)) {
            *k = n;
            return p;
        }
        p += n;
        if (*p)
            p++;
    }
    return NULL;
}

/* Is s NAME=... for one of the profiler's variables? */
static int is_ours(const char *s)
{
    return strncmp(s, "MEMTRACE", 8) == 0 && (s[8] == '=' || s[8] == '_');
}

/* Length of the name of the entry NAME=VALUE. */
static size_t name_len(const char *s)
{
    const char *eq = strchr(s, '=');
    return eq ? (size_t)(eq - s) : strlen(s);
}

void mt_env_save(void)
{
    size_t o = 0;
    nsaved = 0;
    for (char **e = environ; e && *e; e++) {
        if (!is_ours(*e) || !strchr(*e, '='))
            continue;
        size_t k = strlen(*e) + 1;
        if (nsaved == SAVED_MAX || o + k > sizeof store) {
            nsaved = 0;             /* too much to keep it all: keep none */
            return;
        }
        memcpy(store + o, *e, k);
        saved[nsaved++] = store + o;
        o += k;
    }
    preload_entry[0] = 0;
    size_t k;
    const char *p = find_preload_entry(getenv("LD_PRELOAD"), &k);
    if (p && k < sizeof preload_entry) {
        memcpy(preload_entry, p, k);
        preload_entry[k] = 0;
    }
}

/* Give every NAME=... entry of the environment the value `value`, no longer
 * than the old one, in place. Not setenv: bash and make pass their children
 * the copy of the environment they made from the block main() received,
 * which sees a change only if the strings themselves change (setenv puts a
 * new string in a new array). */
static void env_shorten(const char *name, const char *value)
{
    size_t k = strlen(name), n = strlen(value);
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, name, k) == 0 && (*e)[k] == '=' && strlen(*e + k + 1) >= n)
            memmove(*e + k + 1, value, n + 1);
}

void mt_env_untrace(void)
{
    env_shorten("MEMTRACE", "");
    const char *v = getenv("LD_PRELOAD");
    if (!v)
        return;
    char out[4096];
    size_t o = 0;
    for (const char *p = v; *p;) {
        size_t k = strcspn(p, ": ");
        if (k > 0 && !is_preload_entry(p, k) && o + k + 2 < sizeof out) {
            if (o)
                out[o++] = ':';
            memcpy(out + o, p, k);
            o += k;
        }
        p += k;
        if (*p)
            p++;
    }
    out[o] = 0;
    env_shorten("LD_PRELOAD", out);     /* (never longer) */
}

void mt_env_follow_own_exec(const char *set)
{
    memtrace_set[0] = 0;
    if (set)
        snprintf(memtrace_set, sizeof memtrace_set, "MEMTRACE=%s", set);
    if (nsaved)
        root_pid = getpid();
}

/* LD_PRELOAD=entry[:rest] at buf (no stdio: exec may run in a signal
 * handler). */
static void join(char *buf, const char *entry, const char *rest)
{
    size_t k = strlen(entry), r = strlen(rest);
    memcpy(buf, "LD_PRELOAD=", 11);
    memcpy(buf + 11, entry, k);
    buf += 11 + k;
    if (r) {
        *buf++ = ':';
        memcpy(buf, rest, r);
        buf += r;
    }
    *buf = 0;
}

/* The environment for an exec in the root's own place: envp with the saved
 * variables back (MEMTRACE where it is missing, empty or what the profiler
 * set it to; the others where missing) and this library in LD_PRELOAD.
 * Returns a block from mmap (*size bytes), or NULL: envp as it is. */
static char **own_exec_env(char *const envp[], size_t *size)
{
    if (!root_pid || getpid() != root_pid)
        return NULL;
    size_t n = 0, plen = 0;
    for (; envp && envp[n]; n++)
        if (strncmp(envp[n], "LD_PRELOAD=", 11) == 0 && strlen(envp[n]) > plen)
            plen = strlen(envp[n]);
    size_t slots = n + nsaved + 2;
    size_t text = sizeof "LD_PRELOAD=" + strlen(preload_entry) + 1 + plen;
    *size = slots * sizeof(char *) + text;
    void *m = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char **out = m;
    char *buf = (char *)(out + slots);
    int have[SAVED_MAX] = {0};
    int have_preload = 0;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = envp[i];
        if (strncmp(e, "LD_PRELOAD=", 11) == 0) {
            have_preload = 1;
            size_t k;
            if (!find_preload_entry(e + 11, &k) && preload_entry[0]) {
                join(buf, preload_entry, e + 11);
                e = buf;
            }
        } else if (is_ours(e)) {
            size_t k = name_len(e);
            for (size_t j = 0; j < nsaved; j++) {
                if (name_len(saved[j]) != k || memcmp(saved[j], e, k) != 0)
                    continue;
                have[j] = 1;
                if (k == 8 && (e[9] == 0 || strcmp(e, memtrace_set) == 0))
                    e = saved[j];       /* MEMTRACE, emptied or ours */
            }
        }
        out[o++] = (char *)e;
    }
    for (size_t j = 0; j < nsaved; j++)
        if (!have[j])
            out[o++] = (char *)saved[j];
    if (!have_preload && preload_entry[0]) {
        join(buf, preload_entry, "");
        out[o++] = buf;
    }
    out[o] = NULL;
    return out;
}

/* ---- the exec family ----------------------------------------------------- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

/* glibc's (or the next interposer's) functions. Looked up at start-up, as
 * dlsym may allocate; again at the call if that was too early. */
static execve_fn real_execve, real_execvpe;
static fexecve_fn real_fexecve;
static execveat_fn real_execveat;

static void *next_fn(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

void mt_env_init(void)
{
    real_execve = (execve_fn)(uintptr_t)next_fn("execve");
    real_execvpe = (execve_fn)(uintptr_t)next_fn("execvpe");
    real_fexecve = (fexecve_fn)(uintptr_t)next_fn("fexecve");
    real_execveat = (execveat_fn)(uintptr_t)next_fn("execveat");
}

/* Run exec (one of the calls below) with envp, or with the root's own
 * environment when it is the root's exec; the block is unmapped if the
 * exec fails. */
#define EXEC_WITH_ENV(envp, call)                                           \
    do {                                                                    \
        mt_session_before_exec();                                           \
        size_t size_;                                                       \
        char **own_ = own_exec_env(envp, &size_);                           \
        char *const *env_ = own_ ? own_ : (envp);                           \
        int r_ = (call);                                                    \
        if (own_) {                                                         \
            int err_ = errno;                                               \
            munmap(own_, size_);                                            \
            errno = err_;                                                   \
        }                                                                   \
        return r_;                                                          \
    } while (0)

/* var: the next definition of name, looked up now if start-up was too
 * early; the caller returns -1 with ENOSYS if there is none. */
#define NEED_REAL(var, type, name)                                          \
    do {                                                                    \
        if (!var)                                                           \
            var = (type)(uintptr_t)next_fn(name);                           \
        if (!var) {                                                         \
            errno = ENOSYS;                                                 \
            return -1;                                                      \
        }                                                                   \
    } while (0)

static int do_execve(const char *path, char *const argv[], char *const envp[])
{
    NEED_REAL(real_execve, execve_fn, "execve");
    EXEC_WITH_ENV(envp, real_execve(path, argv, env_));
}

static int do_execvpe(const char *file, char *const argv[], char *const envp[])
{
    NEED_REAL(real_execvpe, execve_fn, "execvpe");
    EXEC_WITH_ENV(envp, real_execvpe(file, argv, env_));
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return do_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
    return do_execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return do_execvpe(file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    return do_execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    NEED_REAL(real_fexecve, fexecve_fn, "fexecve");
    EXEC_WITH_ENV(envp, real_fexecve(fd, argv, env_));
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                    int flags)
{
    NEED_REAL(real_execveat, execveat_fn, "execveat");
    EXEC_WITH_ENV(envp, real_execveat(dirfd, path, argv, env_, flags));
}

/* execl, execle, execlp: the arguments from arg to the NULL, in an array on
 * the stack (as glibc does). */
#define COLLECT_ARGS(arg, argv, ap)                                         \
    size_t argc_ = 1;                                                       \
    va_start(ap, arg);                                                      \
    while (va_arg(ap, char *))                                              \
        argc_++;                                                            \
    va_end(ap);                                                             \
    char *argv[argc_ + 1];                                                  \
    argv[0] = (char *)(arg);                                                \
    va_start(ap, arg);                                                      \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                  \
        argv[i_] = va_arg(ap, char *)

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    va_end(ap);
    return do_execve(path, argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    char *const *envp = va_arg(ap, char *const *);     /* after the NULL */
    va_end(ap);
    return do_execve(path, argv, envp);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, argv, ap);
    va_end(ap);
    return do_execvpe(file, argv, environ);
}
