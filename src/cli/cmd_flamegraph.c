/*
 * cmd_flamegraph.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_flamegraph(FILE *out)
{
    fprintf(out, "memtrace flamegraph: not available in this build yet\n");
}

int cmd_flamegraph(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_flamegraph(stderr);
    return EXIT_USAGE;
}
