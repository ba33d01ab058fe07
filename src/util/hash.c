/*
 * hash.c - the process's key for the tools' hash tables (see hash.h):
 * drawn once, on first use, by whichever thread gets there first.
 */
#include "util/hash.h"

#include <pthread.h>

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void key_init(void)
{
    key[0] = hash_random(&key[0]);
    key[1] = hash_random(&key[1]) ^ hash_rotl(key[0], 17);
}

const uint64_t *hash_key(void)
{
    pthread_once(&key_once, key_init);
    return key;
}
