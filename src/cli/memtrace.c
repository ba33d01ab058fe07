/*
 * memtrace.c - the memtrace program's entry point; everything else is
 * cli_main's (cli.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    /* Descriptors 0, 1 and 2 open when they were closed: else the first
     * file the command opens gets one of those numbers, and a message
     * meant for stderr, or the standard output, is written into it (a
     * trace being written, or the input). They are opened on /dev/null
     * the wrong way round (stdin for writing, stdout and stderr for
     * reading), so that using them still fails with EBADF, as if closed.
     * Closed on exec: the program `memtrace run` starts finds them closed,
     * as they were given. */
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0) {
            int n = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
            if (n < 0 || n > 2) {
                if (n >= 0)
                    close(n);
                return EXIT_DATA;
            }
        }
    /* One buffer for what a help text or a report prints (a 4 KiB one
     * let a longer text go out in pieces, and a failed piece left no errno
     * for the final flush to report: "write error" for "No space left on
     * device"). A terminal keeps its line buffering. */
    static char outbuf[1 << 16];    /* (glibc ignores the size without one) */
    if (!isatty(STDOUT_FILENO))
        setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int rc = cli_main(argc, argv);
    /* Whatever a command left in stdio's buffer (--help, --version): a
     * failed write is an error, not a success. */
    if (rc == EXIT_OK && cli_flush_stdout(argc > 1 ? argv[1] : "", 1))
        rc = EXIT_DATA;
    return rc;
}
