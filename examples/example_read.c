/*
 * example_read.c - the smallest useful reader: prints the trace info, then
 * counts events and prints each allocation's site.
 *   example_read TRACE.ctf
 */
#include <stdio.h>

#include <memtrace/memtrace.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE.ctf\n", argv[0]);
        return 2;
    }
    mt_reader *r = mt_reader_create(NULL);
    if (!r || mt_reader_open_file(r, argv[1]) != MT_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], r ? mt_reader_error(r) : "out of memory");
        mt_reader_close(r);
        return 1;
    }
    const mt_trace_info *info = mt_reader_info(r);
    printf("%s on %s, pid %lld, v%03d, rate %g\n", info->executable_name,
           info->host_name, (long long)info->pid, info->format_version,
           info->sample_rate);
    mt_event ev;
    long long events = 0;
    int st;
    while ((st = mt_reader_next(r, &ev)) == MT_OK) {
        events++;
        if (ev.kind != MT_EVENT_ALLOC || ev.backtrace_len == 0)
            continue;
        const mt_location *locs;
        size_t n;
        uint64_t site = ev.backtrace[ev.backtrace_len - 1];  /* innermost */
        if (mt_reader_locations(r, site, &locs, &n) == MT_OK && n > 0)
            printf("alloc #%lld: %lld words at %s (%s:%d)\n", (long long)ev.id,
                   (long long)ev.length, locs[n - 1].function,
                   locs[n - 1].filename, locs[n - 1].line);
    }
    if (st != MT_EOF)
        fprintf(stderr, "%s: %s\n", argv[1], mt_reader_error(r));
    printf("%lld events\n", events);
    mt_reader_close(r);
    return st == MT_EOF ? 0 : 1;
}
