/*
 * cmd_info.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_info(FILE *out)
{
    fprintf(out, "memtrace info: not available in this build yet\n");
}

int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_info(stderr);
    return EXIT_USAGE;
}
