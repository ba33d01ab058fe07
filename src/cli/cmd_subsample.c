/*
 * cmd_subsample.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_subsample(FILE *out)
{
    fprintf(out, "memtrace subsample: not available in this build yet\n");
}

int cmd_subsample(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_subsample(stderr);
    return EXIT_USAGE;
}
