/*
 * cmd_top.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_top(FILE *out)
{
    fprintf(out, "memtrace top: not available in this build yet\n");
}

int cmd_top(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_top(stderr);
    return EXIT_USAGE;
}
