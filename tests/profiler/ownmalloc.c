/*
 * ownmalloc.c - a program that defines malloc, calloc, realloc and free
 * itself (here forwarding to glibc's, as a built-in allocator or a
 * sanitizer's runtime would replace them): its own definitions come before
 * any preloaded library's, so `memtrace run` must refuse it rather than
 * write a trace without a sample.
 */
#include <stddef.h>
#include <stdio.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);

void *malloc(size_t n) { return __libc_malloc(n); }
void *calloc(size_t n, size_t m) { return __libc_calloc(n, m); }
void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }

int main(void)
{
    puts("own malloc program ran");
    return 0;
}
