/*
 * odd_locations.h - the locations of the well-formed odd traces that
 * tests/cli/gen_odd.c and fuzz/fuzz_commands.c write: 64 patterns of codes
 * with no location or one to three inlined frames, empty file names every
 * 7th pattern, empty functions every 5th, a function name that output
 * formats must escape, a 3000-byte file and function name, lines and
 * columns all over their ranges. Static: one copy per program.
 */
#ifndef MT_ODD_LOCATIONS_H
#define MT_ODD_LOCATIONS_H

#include <stdio.h>
#include <string.h>

#include <memtrace/memtrace.h>

#define ODD_NCODES 64          /* locations cycle through 64 patterns */

static char odd_names[ODD_NCODES][3][2][24];   /* [pattern][frame][file, function] */
/* bytes that formats must escape: quotes, backslash, tab, a control
 * character, markup, a folded-stack separator, UTF-8 and a byte that is not
 * (no newline: dump prints names as they are, one event a line) */
static const char odd_nasty[] = "q\"b\\s\tc\001</script><b>&amp;;x y \xc3\xa9\xff";
static char odd_long_name[3001];
static mt_location odd_locs[ODD_NCODES][3];

static void odd_locations_init(void)
{
    memset(odd_long_name, 'n', sizeof odd_long_name - 1);
    for (int i = 0; i < ODD_NCODES; i++)
        for (int j = 0; j < 3; j++) {
            /* (odd_names is zeroed: empty where not written) */
            if (i % 7 != 0)
                snprintf(odd_names[i][j][0], 24, "file%d.ml", i % 6);
            if (i % 5 != 0)
                snprintf(odd_names[i][j][1], 24, "f%d_%d", i % 9, j);
            mt_location *l = &odd_locs[i][j];
            l->filename = odd_names[i][j][0];
            l->function = odd_names[i][j][1];
            if (i == 10)
                l->function = odd_nasty;
            if (i == 13 && j == 0)
                l->filename = l->function = odd_long_name;
            l->line = (i * 7919 + j * 104729) % 1048576;    /* 20 bits */
            l->start_char = (i * 31 + j) % 256;             /* 8 bits */
            l->end_char = (i * 97 + j * 3) % 1024;          /* 10 bits */
        }
}

/* The writer's location callback: code c's locations are pattern c % 64's,
 * none for every 4th pattern, else one to three. */
static int odd_locate(void *ctx, uint64_t code, const mt_location **out, size_t *n)
{
    (void)ctx;
    unsigned k = (unsigned)(code % ODD_NCODES);
    *out = odd_locs[k];
    *n = k % 4 == 3 ? 0 : 1 + k % 3;
    return 0;
}

#endif /* MT_ODD_LOCATIONS_H */
