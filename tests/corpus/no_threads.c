/*
 * no_threads.c - an LD_PRELOAD shim for tests: pthread_create always fails
 * with EAGAIN, as when a process is at its thread limit. The commands that
 * read on a second thread must then do all the work on one, with the same
 * output (tests/corpus/threads.sh).
 */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
    (void)th;
    (void)attr;
    (void)fn;
    (void)arg;
    return EAGAIN;
}
