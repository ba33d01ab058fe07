/*
 * cmd_live.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_live(FILE *out)
{
    fprintf(out, "memtrace live: not available in this build yet\n");
}

int cmd_live(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_live(stderr);
    return EXIT_USAGE;
}
