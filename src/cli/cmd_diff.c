/*
 * cmd_diff.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_diff(FILE *out)
{
    fprintf(out, "memtrace diff: not available in this build yet\n");
}

int cmd_diff(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_diff(stderr);
    return EXIT_USAGE;
}
