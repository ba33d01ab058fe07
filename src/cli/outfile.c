/*
 * outfile.c - the files the commands write (copy, subsample, strip-names,
 * pprof, speedscope, report): written under a temporary name next to the
 * file and renamed over it once complete, so that a failure (a full disk)
 * or an interruption (Ctrl-C) leaves the file as it was, or no file,
 * never a partial one that looks whole. See cli.h.
 *
 * Written in place instead: standard output ("-"), names that are not
 * regular files (a device such as /dev/null, a FIFO), names under /dev and
 * /proc (/dev/stdout, /proc/self/fd/N: the file behind a descriptor, which
 * may be open for appending), and a file in a directory where no other
 * file can be created. Another symbolic link is followed, and its target
 * replaced. Nothing in place is ever removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* The temporary file being written, for the signal handler (one at a
 * time: no command writes two files at once). */
static char *volatile pending;
static struct sigaction saved[3];
static const int cleanup_signals[3] = {SIGINT, SIGTERM, SIGHUP};

/* Remove the temporary file, then die of the signal as if not caught. */
static void on_signal(int sig)
{
    char *p = pending;
    if (p)
        unlink(p);                      /* (async-signal-safe) */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Catch the signals that end a command, unless they were ignored (a
 * background job's SIGINT); on = 0 puts back what was there. */
static void catch_signals(int on)
{
    for (int i = 0; i < 3; i++) {
        if (on) {
            sigaction(cleanup_signals[i], NULL, &saved[i]);
            if (saved[i].sa_handler != SIG_DFL)
                continue;
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sigemptyset(&sa.sa_mask);
            sigaction(cleanup_signals[i], &sa, NULL);
        } else if (saved[i].sa_handler == SIG_DFL) {
            sigaction(cleanup_signals[i], &saved[i], NULL);
        }
    }
}

/* "DIR/.BASE.XXXXXX" for target "DIR/BASE" (malloc'd), or NULL. */
static char *temp_name(const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    size_t n = strlen(target) + 16;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "%.*s.%s.XXXXXX", (int)dir, target, target + dir);
    return t;
}

/* Create the temporary file for target with mode: its fd, or -1. */
static int create_temp(cli_out_file *o, const char *target, mode_t mode)
{
    o->tmp = temp_name(target);
    if (!o->tmp)
        return -1;
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0 || fchmod(fd, mode) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        o->tmp = NULL;
        errno = e;
        return -1;
    }
    return fd;
}

const char *cli_out_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard output" : path;
}

/* "memtrace CMD: PATH: <err>", and o holds nothing: 1 (cli_out_open's
 * failure). */
static int refuse(const char *cmd, cli_out_file *o, int err)
{
    cli_error(cmd, "%s: %s", o->path, strerror(err));
    free(o->target);
    o->target = NULL;
    return 1;
}

int cli_out_open(const char *cmd, cli_out_file *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    if (strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        return 0;
    }
    if (!path[0]) {
        cli_error(cmd, "empty output file name");
        return 1;
    }
    /* what to replace: path, or the regular file a symbolic link names */
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return refuse(cmd, o, EISDIR);
    if ((exists && !S_ISREG(st.st_mode)) || strncmp(path, "/dev/", 5) == 0 ||
        strncmp(path, "/proc/", 6) == 0)
        goto in_place;
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        if (!exists)
            goto in_place;              /* a dangling link: create its target */
        o->target = realpath(path, NULL);
        if (!o->target)
            goto in_place;
    }
    mode_t mode;
    if (exists) {
        /* a file the user may not write is not replaced either */
        if (access(path, W_OK) != 0)
            return refuse(cmd, o, errno);
        mode = st.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0644 & ~mask;
    }
    /* (the signals held off until the handler knows the file: one that
     * came between would leave it behind) */
    sigset_t hold, old;
    sigemptyset(&hold);
    for (int i = 0; i < 3; i++)
        sigaddset(&hold, cleanup_signals[i]);
    pthread_sigmask(SIG_BLOCK, &hold, &old);
    o->fd = create_temp(o, o->target ? o->target : path, mode);
    if (o->fd >= 0) {
        pending = o->tmp;
        catch_signals(1);
    }
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    if (o->fd >= 0)
        return 0;
    if (errno != EACCES && errno != EPERM && errno != EROFS && errno != ENAMETOOLONG)
        return refuse(cmd, o, errno);
    /* the directory is not writable (the file may be), or the temporary
     * name is too long for it */
in_place:
    o->fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (o->fd < 0)
        return refuse(cmd, o, errno);
    o->trunc = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
    return 0;
}

int cli_out_start(const char *cmd, cli_out_file *o)
{
    if (o->trunc && ftruncate(o->fd, 0) != 0) {
        cli_error(cmd, "%s: %s", o->path, strerror(errno));
        return 1;
    }
    o->trunc = 0;
    return 0;
}

/* Forget the temporary file (the signal handler first). */
static void release(cli_out_file *o)
{
    if (o->tmp) {
        pending = NULL;
        catch_signals(0);
    }
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->fd = -1;
}

int cli_out_commit(const char *cmd, cli_out_file *o)
{
    int rc = 0;
    if (o->fd != STDOUT_FILENO && close(o->fd) != 0) {
        cli_error(cmd, "%s: writing: %s", o->path, strerror(errno));
        rc = 1;
        if (o->tmp)
            unlink(o->tmp);
    } else if (o->tmp && rename(o->tmp, o->target ? o->target : o->path) != 0) {
        cli_error(cmd, "%s: cannot replace it: %s", o->path, strerror(errno));
        rc = 1;
        unlink(o->tmp);
    }
    release(o);
    return rc;
}

int cli_out_abort(cli_out_file *o)
{
    struct stat st;
    int partial = !o->tmp && !o->trunc && o->fd != STDOUT_FILENO && fstat(o->fd, &st) == 0 &&
                  S_ISREG(st.st_mode);
    if (o->fd != STDOUT_FILENO)
        close(o->fd);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
    return partial;
}
