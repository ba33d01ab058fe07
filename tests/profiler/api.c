/*
 * api.c - the in-process API of include/memtrace/profiler.h, with the
 * preload library linked: start, refusals (second session, bad rate,
 * unwritable file), external allocations from a pool (4000 x 2500 bytes,
 * half released), stop; then a second session into TRACE2 while 200 blocks
 * sampled by the first are still live: their frees must not be written as
 * collects of the second trace's objects, which reuse their ids (100 blocks
 * allocated, 50 of them freed). With TRACE3, a third session at rate 1
 * (every word a sample): of one-byte allocations, external and malloc's,
 * exactly every eighth is sampled, the one that completes a word (the
 * countdown's boundary: one byte off either way samples the 7th or the 9th).
 *   api TRACE TRACE2 [TRACE3]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "memtrace/profiler.h"

static uint64_t tokens[4000];
static char *old_blocks[200], *new_blocks[100], *bytes[64];
static uint64_t byte_tokens[64];

__attribute__((noinline)) static uint64_t pool_alloc(size_t n)
{
    uint64_t t = mt_profiler_ext_alloc(n); /* SITE_POOL */
    __asm__ volatile("" ::: "memory");
    return t;
}

int main(int argc, char **argv)
{
    char err[512];
    int bad = 0;
    if (argc != 3 && argc != 4)
        return 2;
    if (mt_profiler_active()) {
        puts("active before start");
        bad++;
    }
    if (mt_profiler_start("/nonexistent-dir/x.ctf", 1e-2, NULL, err, sizeof err) == 0 ||
        !strstr(err, "cannot open memtrace file /nonexistent-dir/x.ctf")) {
        printf("unwritable file: '%s'\n", err);
        bad++;
    }
    if (mt_profiler_start(argv[1], 2.0, NULL, err, sizeof err) == 0 ||
        !strstr(err, "between 0 and 1")) {
        printf("rate 2: '%s'\n", err);
        bad++;
    }
    if (mt_profiler_start(argv[1], 1e-2, "api test", err, sizeof err) != 0) {
        printf("start: %s\n", err);
        return 1;
    }
    if (mt_profiler_start(argv[1], 1e-2, NULL, err, sizeof err) == 0 ||
        !strstr(err, "only one")) {
        printf("second start: '%s'\n", err);
        bad++;
    }
    if (!mt_profiler_active()) {
        puts("not active after start");
        bad++;
    }
    for (int i = 0; i < 200; i++)        /* 512 words at 1e-2: sampled */
        old_blocks[i] = malloc(4096);
    for (int i = 0; i < 4000; i++)
        tokens[i] = pool_alloc(2500);
    for (int i = 0; i < 4000; i += 2)
        mt_profiler_ext_free(tokens[i]);
    mt_profiler_ext_free(0);
    struct stat st1, st2;
    if (mt_profiler_flush() != 0 || stat(argv[1], &st1) != 0) {
        puts("flush failed");
        bad++;
    } else if (mt_profiler_flush() != 0 || stat(argv[1], &st2) != 0 ||
               st2.st_size != st1.st_size) {
        /* nothing new since the first: no (empty) packet written */
        printf("second flush: %lld bytes after %lld\n", (long long)st2.st_size,
               (long long)st1.st_size);
        bad++;
    }
    if (mt_profiler_stop() != 0 || mt_profiler_stop() != -1 || mt_profiler_active()) {
        puts("stop");
        bad++;
    }
    if (mt_profiler_start(argv[2], 1e-2, NULL, err, sizeof err) != 0) {
        printf("second session: %s\n", err);
        return 1;
    }
    for (int i = 0; i < 100; i++)
        new_blocks[i] = malloc(4096);
    for (int i = 0; i < 200; i++)
        free(old_blocks[i]);
    for (int i = 0; i < 50; i++)
        free(new_blocks[i]);
    if (mt_profiler_stop() != 0) {
        puts("second stop");
        bad++;
    }
    if (argc > 3) {
        if (mt_profiler_start(argv[3], 1.0, NULL, err, sizeof err) != 0) {
            printf("third session: %s\n", err);
            return 1;
        }
        /* nothing else may allocate in between: no stdio until the stop */
        for (int i = 0; i < 64; i++)
            byte_tokens[i] = mt_profiler_ext_alloc(1);
        for (int i = 0; i < 64; i++)
            bytes[i] = malloc(1);
        if (mt_profiler_stop() != 0) {
            puts("third stop");
            bad++;
        }
        for (int i = 0; i < 64; i++) {
            if ((byte_tokens[i] != 0) != (i % 8 == 7)) {
                printf("rate 1: external allocation %d of 1 byte %s\n", i + 1,
                       byte_tokens[i] ? "sampled" : "not sampled");
                bad++;
            }
            free(bytes[i]);
        }
    }
    printf("api: %s\n", bad ? "FAILED" : "ok");
    return bad != 0;
}
