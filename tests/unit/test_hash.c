/*
 * test_hash.c - the keyed hashes of the tables a trace fills (util/hash.h):
 * SipHash-2-4 against the reference's published vectors; a key that
 * differs from one process to the next; and, for each table, keys made to
 * share one slot under the unkeyed hash the table used before (FNV-1a
 * names, fmix64 codes and ids): every one is found again, and the longest
 * run of used slots stays short (under the old hashes it was every key).
 * The keys come from bench/flood_keys.h, as bench_flood.sh's traces do.
 * And hash_slot (every integer-keyed table's) on keys in arithmetic
 * progression (dense ids, codes differing in their high bits) over 1 000
 * seeds: multiply-shift, used before, made runs of thousands of slots for
 * about one seed in 700, and once failed test_stackset below in CI.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "../../bench/flood_keys.h"
#include "trace/loctable.h"
#include "util/hash.h"
#include "util/stackset.h"
#include "util/u64map.h"

enum { NKEYS = 16384, MAX_RUN = 200 };

/* SipHash-2-4, key 00 01 .. 0f, of the messages 00 01 .. (n - 1). */
static const uint64_t sip_vectors[64] = {
    0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d,
    0xcf2794e0277187b7, 0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137,
    0x93f5f5799a932462, 0x9e0082df0ba9e4b0, 0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7,
    0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee, 0xa129ca6149be45e5,
    0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
    0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8,
    0xb8ad50c6f649af94, 0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad,
    0xde4daaaca71dc9a5, 0xa6a2506687956571, 0xad87a3535c49ef28, 0x32d892fad841c342,
    0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238, 0x15e034d40fa197ae,
    0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
    0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95,
    0xf935451de4f21df2, 0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb,
    0xe612a3cb9ecba951, 0xc766e62cfcadaf96, 0xee64435a9752fe72, 0xa192d576b245165a,
    0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea, 0x245731c13ca42499,
    0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
    0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
};

static void test_siphash(void)
{
    const uint64_t key[2] = {0x0706050403020100, 0x0f0e0d0c0b0a0908};
    unsigned char msg[64];
    for (int i = 0; i < 64; i++)
        msg[i] = (unsigned char)i;
    for (size_t n = 0; n < 64; n++)
        CHECK_EQ(siphash24(key, msg, n), sip_vectors[n]);
    /* the parts of a two-part name cannot trade places */
    CHECK(hash_str_more(hash_str("ab", 2), "cd", 2) !=
          hash_str_more(hash_str("cd", 2), "ab", 2));
    CHECK(hash_str_more(hash_str("x", 1), "x", 1) != hash_str_more(hash_str("y", 1), "y", 1));
}

/* Another run of this program prints its key: it must differ. */
static void test_key_per_process(const char *self)
{
    const uint64_t *k = hash_key();
    CHECK(k[0] || k[1]);
    CHECK(hash_key() == k);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' --print-key", self);
    FILE *p = popen(cmd, "r");
    uint64_t other[2] = {0, 0};
    CHECK(p != NULL);
    if (!p)
        return;
    CHECK_EQ(fscanf(p, "%" SCNx64 " %" SCNx64, &other[0], &other[1]), 2);
    CHECK_EQ(pclose(p), 0);
    CHECK(other[0] != k[0] || other[1] != k[1]);
}

/* The longest run of used slots in a table of cap slots. */
static size_t longest_run(size_t cap, int (*used)(const void *, size_t), const void *t)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < 2 * cap; i++) {      /* (twice: runs wrap around) */
        run = used(t, i % cap) ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best > cap ? cap : best;
}

/* ---- keys in arithmetic progression, many seeds: hash_slot ------------ */

/* The longest run of nonzero bytes in v[0..n), wrapping around. */
static size_t longest_byte_run(const unsigned char *v, size_t n)
{
    size_t best = 0, run = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        run = v[i < n ? i : i - n] ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best > n ? n : best;
}

/* NKEYS keys 1 + i * step put by linear probing in 4 * NKEYS slots (the
 * tables' load at their fullest is 1/2: this is 1/4, as after a growth),
 * for 1 000 seeds from a fixed generator: no run reaches MAX_RUN. */
static void test_progressions(void)
{
    enum { CAP = 4 * NKEYS, SEEDS = 1000 };
    static const unsigned steps[] = {0, 1, 8, 24, 32, 46, 50};   /* step 2^k */
    static unsigned char used[CAP];
    uint64_t r = 0x2545f4914f6cdd1dull;
    for (size_t k = 0; k < sizeof steps / sizeof *steps; k++) {
        size_t worst = 0;
        for (int n = 0; n < SEEDS; n++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            uint64_t seed = r;
            memset(used, 0, sizeof used);
            for (uint64_t i = 0; i < NKEYS; i++) {
                size_t j = hash_slot((i << steps[k]) | 1, seed, CAP);
                while (used[j])
                    j = (j + 1) & (CAP - 1);
                used[j] = 1;
            }
            size_t run = longest_byte_run(used, CAP);
            if (run > worst)
                worst = run;
        }
        CHECK(worst < MAX_RUN);
        if (worst >= MAX_RUN)
            fprintf(stderr, "hash_slot: keys i << %u | 1: a run of %zu used slots\n",
                    steps[k], worst);
    }
}

/* ---- ids and codes: u64map -------------------------------------------- */

static int map_used(const void *t, size_t i)
{
    return ((const u64map *)t)->used[i];
}

static void test_u64map(void)
{
    u64map m;
    memset(&m, 0, sizeof m);
    /* all in slot 0 under the old hash, whatever the table's size */
    for (uint64_t i = 0; i < NKEYS; i++)
        CHECK_EQ(u64map_put(&m, flood_unmix(i << 24), i), 0);
    CHECK_EQ(m.n, NKEYS);
    int found = 1;
    for (uint64_t i = 0; i < NKEYS; i++) {
        const uint64_t *v = u64map_get(&m, flood_unmix(i << 24));
        found &= v && *v == i;
    }
    CHECK(found);
    size_t run = longest_run(m.cap, map_used, &m);
    CHECK(run < MAX_RUN);
    if (run >= MAX_RUN)
        fprintf(stderr, "u64map: a run of %zu used slots\n", run);
    uint64_t v;
    for (uint64_t i = 0; i < NKEYS; i += 2)
        CHECK_EQ(u64map_del(&m, flood_unmix(i << 24), &v) && v == i, 1);
    found = 1;
    for (uint64_t i = 0; i < NKEYS; i++) {
        const uint64_t *g = u64map_get(&m, flood_unmix(i << 24));
        found &= i % 2 ? g && *g == i : g == NULL;
    }
    CHECK(found);
    u64map_free(&m);
}

/* ---- codes under one parent: stackset --------------------------------- */

static int set_used(const void *t, size_t i)
{
    return ((const stackset *)t)->slots[i] != 0;
}

static void test_stackset(void)
{
    stackset s;
    memset(&s, 0, sizeof s);
    /* under the old hash, (code * C) ^ (code * C) >> 29 with parent 0,
     * codes that differ only in bits 46 to 63 all share one slot */
    int ok = 1;
    for (uint64_t i = 0; i < NKEYS; i++) {
        uint64_t code = i << 46 | 1;
        uint32_t id;
        ok &= stackset_add(&s, &code, 1, &id) == 0 && id == i;
    }
    for (uint64_t i = 0; i < NKEYS; i++) {
        uint64_t code = i << 46 | 1;
        uint32_t id;
        ok &= stackset_add(&s, &code, 1, &id) == 0 && id == i;
    }
    CHECK(ok);
    CHECK_EQ(s.nstacks, NKEYS);
    size_t run = longest_run(s.slots_cap, set_used, &s);
    CHECK(run < MAX_RUN);
    if (run >= MAX_RUN)
        fprintf(stderr, "stackset: a run of %zu used slots\n", run);
    stackset_free(&s);
}

/* ---- names and codes of a trace: the reader's loctable ---------------- */

enum { STAGES = 14 };

static int strs_used(const void *t, size_t i)
{
    return ((const mt_loctable *)t)->strs[i] != NULL;
}

static int slots_used(const void *t, size_t i)
{
    return ((const mt_loctable *)t)->slots[i].used != 0;
}

static void test_loctable(void)
{
    static char pairs[STAGES][2][FLOOD_BLOCK];
    flood_pairs(STAGES, pairs);
    mt_loctable t;
    mt_loctable_init(&t);
    char name[STAGES * FLOOD_BLOCK];
    static const char *got[1 << STAGES];
    int ok = 1, same_low = 1;
    uint64_t low0 = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned k = 0; k < 1u << STAGES; k++) {
            flood_name(STAGES, pairs, k, name);
            uint64_t low = flood_fnv1a(FLOOD_FNV_OFFSET, name, sizeof name) & 0xffff;
            if (k == 0)
                low0 = low;
            same_low &= low == low0;
            const char *p = mt_loctable_intern(&t, name, sizeof name);
            ok &= p && memcmp(p, name, sizeof name) == 0 && p[sizeof name] == 0;
            if (pass == 0)
                got[k] = p;
            else
                ok &= p == got[k];      /* interned: the same string again */
        }
    }
    CHECK(same_low);                    /* (the test's own names collide) */
    CHECK(ok);
    CHECK_EQ(t.strs_used, 1u << STAGES);
    size_t run = longest_run(t.nstrs, strs_used, &t);
    CHECK(run < MAX_RUN);
    if (run >= MAX_RUN)
        fprintf(stderr, "loctable strings: a run of %zu used slots\n", run);

    /* codes: the old hash was the map's (one fmix64 round, unkeyed) */
    const char *file = mt_loctable_intern(&t, "f.ml", 4);
    mt_location loc = {file, file, 1, 0, 1};
    ok = 1;
    for (uint64_t i = 1; i <= NKEYS; i++)
        ok &= mt_loctable_define(&t, flood_unmix(i << 24), &loc, 1) == 0;
    for (uint64_t i = 1; i <= NKEYS; i++) {
        const mt_location *l;
        size_t n;
        ok &= mt_loctable_find(&t, flood_unmix(i << 24), &l, &n) == 0 && n == 1 &&
              l[0].line == 1;
    }
    CHECK(ok);
    run = longest_run(t.nslots, slots_used, &t);
    CHECK(run < MAX_RUN);
    if (run >= MAX_RUN)
        fprintf(stderr, "loctable codes: a run of %zu used slots\n", run);
    mt_loctable_free(&t);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--print-key") == 0) {
        printf("%" PRIx64 " %" PRIx64 "\n", hash_key()[0], hash_key()[1]);
        return 0;
    }
    test_siphash();
    test_key_per_process(argv[0]);
    test_progressions();
    test_u64map();
    test_stackset();
    test_loctable();
    return CHECK_DONE();
}
