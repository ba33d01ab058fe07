/*
 * cmd_strip_names.c - placeholder until the command lands (being written now).
 */
#include "cli/cli.h"

void usage_strip_names(FILE *out)
{
    fprintf(out, "memtrace strip_names: not available in this build yet\n");
}

int cmd_strip_names(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage_strip_names(stderr);
    return EXIT_USAGE;
}
