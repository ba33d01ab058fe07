/*
 * memtrace.c - the memtrace program's entry point; everything else is
 * cli_main's (cli.c).
 */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
