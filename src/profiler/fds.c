/*
 * fds.c - the profiler's own file descriptors, kept out of the program's
 * way. Programs close descriptors they did not open (a daemon's or a
 * child's closefrom) and dup2 onto chosen numbers (a shell's `exec 3>f`);
 * a descriptor of the profiler's at such a number would then be the
 * program's file, and the profiler would write into it or close it.
 * libunwind is the worst case: when the read end of its memory-validation
 * pipe stops working it closes both numbers and opens a new pipe, and it
 * makes that pipe at its first use, in the profiler's start-up, so it gets
 * fds 3 and 4, the first numbers a program takes.
 *
 * So the descriptors the profiler keeps open are moved near the top of
 * the soft RLIMIT_NOFILE (at most 1023: higher numbers would grow the
 * kernel's descriptor table; under a limit below 256, such as `ulimit -n
 * 64` sets, into its top quarter; under 32 not at all), where programs
 * rarely go: the trace's
 * (session.c, which also checks before every write that it is still the
 * trace file), the ELF files libdw keeps open (symbolize.c's find_elf),
 * and libunwind's pipe, through pipe2, which preload.c interposes: a pipe
 * made while the thread is inside the profiler is moved up, any other is
 * the program's and untouched.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "profiler/profiler_int.h"

int mt_fd_high(int fd)
{
    /* The lowest number to move to: 64 numbers for the profiler's few below
     * the top, or a quarter of a lower limit (-1: a limit too low to bother).
     * Worked out once; two threads doing so at once get the same value. */
    static int low;
    if (!low) {
        struct rlimit rl;
        rlim_t top = 1024;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
            top = rl.rlim_cur;
        low = top >= 256 ? (int)top - 64 : top >= 32 ? (int)(top - top / 4) : -1;
    }
    if (fd < 0 || low < 0 || fd >= low)
        return fd;
    int cloexec = fcntl(fd, F_GETFD);
    int nfd = fcntl(fd, cloexec >= 0 && (cloexec & FD_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD,
                    low);
    if (nfd < 0)
        return fd;              /* all taken: stay where it is */
    close(fd);
    return nfd;
}
