/*
 * cmd_hotspots.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_hotspots(FILE *out)
{
    fprintf(out, "memtrace hotspots: not available in this build yet\n");
}

int cmd_hotspots(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_hotspots(stderr);
    return EXIT_USAGE;
}
