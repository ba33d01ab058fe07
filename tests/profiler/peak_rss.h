/*
 * peak_rss.h - for the profiler's test programs whose memory the test
 * compares with a plain run's (churn.c, footprint.c): print the process's
 * peak RSS as /proc/self/status says it ("VmHWM: N kB") on stderr.
 */
#ifndef MT_TEST_PEAK_RSS_H
#define MT_TEST_PEAK_RSS_H

#include <stdio.h>
#include <string.h>

static inline void print_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fprintf(stderr, "%s", line);
    if (f)
        fclose(f);
}

#endif
