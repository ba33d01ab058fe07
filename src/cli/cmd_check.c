/*
 * cmd_check.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_check(FILE *out)
{
    fprintf(out, "memtrace check: not available in this build yet\n");
}

int cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_check(stderr);
    return EXIT_USAGE;
}
