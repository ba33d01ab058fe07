/*
 * regress_main.c - plain driver for libFuzzer targets: runs
 * LLVMFuzzerTestOneInput once on every input file, without libFuzzer, so
 * saved crash inputs and the reference corpus are replayed by ctest.
 *
 * Usage: fuzz_regress [--corpus DIR] [PATH ...]
 *   PATH           a file, or a directory whose regular files are all run
 *                  (names starting with '.' and README* are skipped)
 *   --corpus DIR   also run the .ctf files of DIR/traces and DIR/malformed; the
 *                  MEMTRACE_CORPUS environment variable overrides DIR; a
 *                  missing corpus is an error
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Run one file from an exactly-sized heap copy (overreads are caught). */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t cap = 0, n = 0, got;
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 1;
    }
    do {
        if (n == cap && !(data = realloc(data, cap = cap ? 2 * cap : 65536))) {
            fclose(f);
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(data);
        return 1;
    }
    memcpy(exact, data, n);
    free(data);
    fprintf(stderr, "running %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int skip_name(const char *name, const char *suffix)
{
    return name[0] == '.' || strncmp(name, "README", 6) == 0 ||
           (suffix && !ends_with(name, suffix));
}

/* Collect the directory's matching names, sorted for a stable order. */
static char **list_dir(const char *dir, const char *suffix, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d)) != NULL) {
        if (skip_name(e->d_name, suffix))
            continue;
        char **tmp = realloc(names, (n + 1) * sizeof *names);
        if (!tmp)
            break;
        names = tmp;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    *count = n;
    return names ? names : calloc(1, sizeof *names);
}

static int run_dir(const char *dir, const char *suffix, int *files)
{
    size_t n = 0;
    int bad = 0;
    char **names = list_dir(dir, suffix, &n);
    if (!names) {
        fprintf(stderr, "cannot read directory %s\n", dir);
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            bad |= run_file(path);
            ++*files;
        }
        free(names[i]);
    }
    free(names);
    return bad;
}

static int run_path(const char *path, const char *suffix, int *files)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "no such file or directory: %s\n", path);
        return 1;
    }
    if (S_ISDIR(sb.st_mode))
        return run_dir(path, suffix, files);
    ++*files;
    return run_file(path);
}

static int run_corpus(const char *dir, int *files)
{
    char sub[4096];
    const char *env = getenv("MEMTRACE_CORPUS");
    int bad = 0, before = *files;
    if (env && *env)
        dir = env;
    snprintf(sub, sizeof sub, "%s/traces", dir);
    bad |= run_path(sub, ".ctf", files);
    snprintf(sub, sizeof sub, "%s/malformed", dir);
    bad |= run_path(sub, ".ctf", files);
    if (*files == before) {
        fprintf(stderr, "corpus %s holds no .ctf files\n", dir);
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--corpus") == 0 && i + 1 < argc)
            bad |= run_corpus(argv[++i], &files);
        else
            bad |= run_path(argv[i], NULL, &files);
    }
    printf("fuzz_regress: %d input(s) run%s\n", files, bad ? ", with errors" : "");
    return bad;
}
