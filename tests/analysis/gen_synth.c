/*
 * gen_synth.c - writes the analysis tests' synthetic trace (synth.h) to a
 * file, for the CLI tests of top, live and diff.   gen_synth PATH [SCALE]
 */
#include <stdlib.h>

#include "synth.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    int scale = argc > 2 ? atoi(argv[2]) : 1;
    if (synth_write(argv[1], scale)) {
        fprintf(stderr, "gen_synth: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
