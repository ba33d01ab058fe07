/*
 * profile_me.c - a small program for `make example` to profile with
 * `memtrace run`: it builds a word-frequency table from generated text,
 * keeps a cache of the longest lines it saw (on purpose, never freed), and
 * frees everything else. Its trace shows three allocation sites with
 * different lifetimes: short-lived line buffers, table entries live until
 * the end, and the cache, still live at exit.
 *
 *   profile_me [LINES (default 200000)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *next;
    char *word;
    long count;
} entry;

#define BUCKETS 4096

static unsigned hash(const char *s)
{
    unsigned h = 2166136261u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* A line of 4-16 words drawn from a vocabulary of 5000, in a new buffer. */
static char *make_line(unsigned *seed)
{
    int words = 4 + (int)((*seed = *seed * 1103515245u + 12345u) >> 16) % 13;
    char *line = malloc((size_t)words * 12 + 1);
    if (!line)
        exit(1);
    size_t len = 0;
    for (int i = 0; i < words; i++) {
        unsigned w = ((*seed = *seed * 1103515245u + 12345u) >> 16) % 5000;
        len += (size_t)sprintf(line + len, "%sw%u", i ? " " : "", w);
    }
    return line;
}

/* A copy of s: its own allocation site, where strdup's would be strdup. */
static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (!c)
        exit(1);
    return memcpy(c, s, n);
}

static void count_word(entry **table, const char *w)
{
    entry **b = &table[hash(w) % BUCKETS];
    for (entry *e = *b; e; e = e->next)
        if (strcmp(e->word, w) == 0) {
            e->count++;
            return;
        }
    entry *e = malloc(sizeof *e);
    if (!e)
        exit(1);
    e->word = copy(w);
    e->count = 1;
    e->next = *b;
    *b = e;
}

int main(int argc, char **argv)
{
    long lines = argc > 1 ? atol(argv[1]) : 200000;
    entry **table = calloc(BUCKETS, sizeof *table);
    char **cache = calloc(64, sizeof *cache);   /* the longest lines: kept */
    size_t cached = 0, longest = 0;
    unsigned seed = 42;
    if (!table || !cache)
        return 1;
    for (long i = 0; i < lines; i++) {
        char *line = make_line(&seed);
        size_t len = strlen(line);
        if (len >= longest && cached < 64) {
            longest = len;
            cache[cached++] = copy(line);
        }
        for (char *w = strtok(line, " "); w; w = strtok(NULL, " "))
            count_word(table, w);
        free(line);
    }
    long distinct = 0, total = 0;
    for (int b = 0; b < BUCKETS; b++)
        for (entry *e = table[b], *next; e; e = next) {
            next = e->next;
            distinct++;
            total += e->count;
            free(e->word);
            free(e);
        }
    free(table);
    printf("profile_me: %ld lines, %ld words, %ld distinct, %zu lines cached\n", lines, total,
           distinct, cached);
    return 0;
}
