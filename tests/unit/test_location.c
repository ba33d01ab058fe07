/*
 * test_location.c - the location codec of spec 5 (codec/location.h):
 * mt_loc_pack field positions against the packed words of Appendix A.2;
 * the writer's A.2 location bodies byte for byte; clamping of negative and
 * too-large fields to 0xFFFFF/0xFF/0x3FF; writer move-to-front behaviour
 * (hit at i moves to front, new = 31, a full table evicts index 30 and its
 * defname table, a re-inserted or slot-reusing filename starts with an empty
 * defname table); the unknown-location replacement (count > 255, size > 4096
 * with the exact 4096/4097 boundary, size computed over full strings); the
 * reader tables including the v001 quirk of spec 5.6 and empty-slot errors;
 * and random writer->reader round trips through a hand-written body parser.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "codec/location.h"
#include "codec/wire.h"

static uint8_t out[MT_LOC_MAX_LENGTH + 64];

/* ---- a small body parser (spec 5.2) over the reader tables ------------- */

typedef struct {
    uint64_t code;
    unsigned n;
    unsigned fcode[256], dcode[256];
    int line[256], start[256], end[256];
    const char *file[256], *def[256];
    int err;
} body;

/* Strings handed to the reader tables must outlive the body buffer (the
 * real reader interns them); keep copies here. */
static char *kept[200000];
static size_t nkept;
static const char *keep(const char *s)
{
    char *c = strdup(s);
    if (nkept < sizeof kept / sizeof kept[0])
        kept[nkept++] = c;
    return c;
}
static void free_kept(void)
{
    while (nkept)
        free(kept[--nkept]);
}

/* Parse one body of len bytes with reader state r. */
static void parse_body(mt_locr *r, const uint8_t *p, size_t len, body *b)
{
    const uint8_t *end = p + len;
    memset(b, 0, sizeof *b);
    b->code = mt_ld64(p);
    b->n = p[8];
    p += 9;
    for (unsigned i = 0; i < b->n; i++) {
        uint64_t packed = mt_ld32(p) | (uint64_t)mt_ld16(p + 4) << 32;
        p += 6;
        b->line[i] = (int)(packed & 0xFFFFF);
        b->start[i] = (int)((packed >> 20) & 0xFF);
        b->end[i] = (int)((packed >> 28) & 0x3FF);
        b->fcode[i] = (unsigned)(packed >> 38) & 31;
        b->dcode[i] = (unsigned)(packed >> 43) & 31;
        const char *fnew = NULL, *dnew = NULL;
        if (b->fcode[i] == 31) {
            fnew = keep((const char *)p);
            p += strlen(fnew) + 1;
        }
        if (b->dcode[i] == 31) {
            dnew = keep((const char *)p);
            p += strlen(dnew) + 1;
        }
        if (r) {
            unsigned slot;
            if (mt_locr_file(r, b->fcode[i], fnew, &slot) ||
                mt_locr_def(r, slot, b->dcode[i], dnew, &b->def[i])) {
                b->err = 1;
                return;
            }
            b->file[i] = r->file[slot];
        }
    }
    if (p != end)
        b->err = 2;
}

static size_t enc1(mt_locw *w, uint64_t code, const char *file, const char *def,
                   int line, int start, int end)
{
    mt_location l = {file, def, line, start, end};
    return mt_locw_encode(w, out, code, &l, 1);
}

/* packed word of the i-th location when all strings are inline-known */
static uint64_t packed_at(const uint8_t *p) { return mt_ld32(p) | (uint64_t)mt_ld16(p + 4) << 32; }
static unsigned fcode_of(uint64_t pk) { return (unsigned)(pk >> 38) & 31; }
static unsigned dcode_of(uint64_t pk) { return (unsigned)(pk >> 43) & 31; }

static void test_pack(void)
{
    CHECK_EQ(mt_loc_pack(46, 17, 75, 31, 31), 0xFFC4B110002EULL);
    CHECK_EQ(mt_loc_pack(1326, 4, 21, 31, 31), 0xFFC15040052EULL);
    CHECK_EQ(mt_loc_pack(640, 2, 585, 0, 31), 0xF82490200280ULL);
    CHECK_EQ(mt_loc_pack(0xFFFFF, 0, 0, 0, 0), 0xFFFFFULL);
    CHECK_EQ(mt_loc_pack(0, 0xFF, 0, 0, 0), 0xFFULL << 20);
    CHECK_EQ(mt_loc_pack(0, 0, 0x3FF, 0, 0), 0x3FFULL << 28);
    CHECK_EQ(mt_loc_pack(0, 0, 0, 1, 0), 1ULL << 38);
    CHECK_EQ(mt_loc_pack(0, 0, 0, 0, 1), 1ULL << 43);
    CHECK_EQ(mt_loc_pack(0, 0, 0, 31, 31), 0xFFFFULL << 32 & 0xFFC000000000ULL);
    CHECK_EQ(mt_loc_pack(0xFFFFF, 0xFF, 0x3FF, 31, 31), 0xFFFFFFFFFFFFULL);
    CHECK_EQ(mt_loc_pack(1, 1, 1, 0, 0), 0x10100001ULL);
}

/* Appendix A.2, the first four location events of test/ocamlopt.ctf. */
static void test_a2(void)
{
    mt_locw w;
    mt_locw_init(&w);
    size_t n = mt_locw_encode(&w, out, 0x2ADBF7B8BCA4ULL, NULL, 0);
    static const uint8_t e1[] = {0xa4, 0xbc, 0xb8, 0xf7, 0xdb, 0x2a, 0x00, 0x00, 0x00};
    CHECK_MEM(out, n, e1, sizeof e1);

    mt_location l2 = {"trace_ocamlopt/main.ml", "Main.Options", 46, 17, 75};
    n = mt_locw_encode(&w, out, 0x2ADBF7B8C81CULL, &l2, 1);
    static const uint8_t e2[] = "\x1c\xc8\xb8\xf7\xdb\x2a\x00\x00\x01\x2e\x00\x10\xb1\xc4\xff"
                                "trace_ocamlopt/main.ml\0Main.Options";
    CHECK_MEM(out, n, e2, sizeof e2);

    mt_location l3 = {"driver/main_args.ml", "Main_args.Make_optcomp_options.list", 1326, 4, 21};
    n = mt_locw_encode(&w, out, 0x2ADBF7D04150ULL, &l3, 1);
    static const uint8_t e3[] = "\x50\x41\xd0\xf7\xdb\x2a\x00\x00\x01\x2e\x05\x40\x50\xc1\xff"
                                "driver/main_args.ml\0Main_args.Make_optcomp_options.list";
    CHECK_MEM(out, n, e3, sizeof e3);

    mt_location l4 = {"driver/main_args.ml", "Main_args.mk_color", 640, 2, 585};
    n = mt_locw_encode(&w, out, 0x2ADBF7D06048ULL, &l4, 1);
    static const uint8_t e4[] = "\x48\x60\xd0\xf7\xdb\x2a\x00\x00\x01\x80\x02\x20\x90\x24\xf8"
                                "Main_args.mk_color";
    CHECK_MEM(out, n, e4, sizeof e4);
    mt_locw_free(&w);
}

static void test_clamp(void)
{
    mt_locw w;
    mt_locw_init(&w);
    struct { int line, start, end; int el, es, ee; } c[] = {
        {-1, -1, -1, 0xFFFFF, 0xFF, 0x3FF},
        {-1000000, -2147483647 - 1, -5, 0xFFFFF, 0xFF, 0x3FF},
        {0x100000, 0x100, 0x400, 0xFFFFF, 0xFF, 0x3FF},
        {0x7FFFFFFF, 4095, 4095, 0xFFFFF, 0xFF, 0x3FF},
        {0xFFFFF, 0xFF, 0x3FF, 0xFFFFF, 0xFF, 0x3FF},
        {0xFFFFE, 0xFE, 0x3FE, 0xFFFFE, 0xFE, 0x3FE},
        {0, 0, 0, 0, 0, 0},
        {0x80000, 0x80, 0x200, 0x80000, 0x80, 0x200},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = enc1(&w, 77, "f.ml", "g", c[i].line, c[i].start, c[i].end);
        CHECK(n >= 15);
        uint64_t pk = packed_at(out + 9);
        CHECK_EQ(pk & 0xFFFFF, c[i].el);
        CHECK_EQ((pk >> 20) & 0xFF, c[i].es);
        CHECK_EQ((pk >> 28) & 0x3FF, c[i].ee);
        /* clamping never spills into the MTF codes: same file/def each time */
        CHECK_EQ(fcode_of(pk), i == 0 ? 31 : 0);
        CHECK_EQ(dcode_of(pk), i == 0 ? 31 : 0);
    }
    mt_locw_free(&w);
}

static void test_mtf_writer(void)
{
    mt_locw w;
    mt_locw_init(&w);
    char f[40][16], d[40][16];
    for (int i = 0; i < 40; i++) {
        snprintf(f[i], sizeof f[i], "file%d.ml", i);
        snprintf(d[i], sizeof d[i], "def%d", i);
    }
    /* new entries */
    for (int i = 0; i < 5; i++) {
        size_t n = enc1(&w, 1, f[i], d[i], 1, 1, 1);
        uint64_t pk = packed_at(out + 9);
        CHECK_EQ(fcode_of(pk), 31);
        CHECK_EQ(dcode_of(pk), 31);
        CHECK_EQ(n, 9 + 6 + strlen(f[i]) + 1 + strlen(d[i]) + 1);
    }
    /* table [f4 f3 f2 f1 f0]: f2 at 2 -> [f2 f4 f3 f1 f0] */
    size_t n = enc1(&w, 1, f[2], d[2], 1, 1, 1);
    CHECK_EQ(fcode_of(packed_at(out + 9)), 2);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 0);
    CHECK_EQ(n, 15);                              /* no strings */
    n = enc1(&w, 1, f[0], d[0], 1, 1, 1);         /* f0 at 4 -> [f0 f2 f4 f3 f1] */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 4);
    n = enc1(&w, 1, f[2], d[2], 1, 1, 1);         /* f2 at 1 -> [f2 f0 f4 f3 f1] */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 1);
    n = enc1(&w, 1, f[1], d[1], 1, 1, 1);         /* f1 at 4 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 4);
    n = enc1(&w, 1, f[1], d[1], 1, 1, 1);         /* f1 at 0 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 0);
    n = enc1(&w, 1, f[3], d[3], 1, 1, 1);         /* [f1 f2 f0 f4 f3]: f3 at 4 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 4);

    /* defname table inside file f3: [d3]; add d10 d11 d12 -> [d12 d11 d10 d3] */
    for (int i = 10; i < 13; i++) {
        enc1(&w, 1, f[3], d[i], 1, 1, 1);
        CHECK_EQ(fcode_of(packed_at(out + 9)), 0);
        CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    }
    enc1(&w, 1, f[3], d[3], 1, 1, 1);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 3);
    enc1(&w, 1, f[3], d[11], 1, 1, 1);            /* [d3 d12 d11 d10] */
    CHECK_EQ(dcode_of(packed_at(out + 9)), 2);
    /* a defname known in another file's table is new in this one */
    enc1(&w, 1, f[1], d[3], 1, 1, 1);
    CHECK_EQ(fcode_of(packed_at(out + 9)), 1);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    mt_locw_free(&w);

    /* Full table: 31 files, each with one defname. */
    mt_locw_init(&w);
    for (int i = 0; i <= 30; i++) {
        enc1(&w, 1, f[i], d[i], 1, 1, 1);
        CHECK_EQ(fcode_of(packed_at(out + 9)), 31);
    }
    enc1(&w, 1, f[0], d[0], 1, 1, 1);              /* f0 at index 30 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 30);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 0);
    /* now [f0 f30 ... f1]: f1 at 30 falls off when f31 arrives; f31 gets
     * f1's slot but an empty defname table, so d1 is new there */
    n = enc1(&w, 1, f[31], d[1], 1, 1, 1);
    CHECK_EQ(fcode_of(packed_at(out + 9)), 31);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    CHECK_EQ(n, 9 + 6 + strlen(f[31]) + 1 + strlen(d[1]) + 1);
    enc1(&w, 1, f[2], d[2], 1, 1, 1);              /* f2 now at index 30 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 30);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 0);
    /* [f2 f31 f0 f30 ... f3]: f1 re-inserted -> new, with an empty table */
    enc1(&w, 1, f[1], d[1], 1, 1, 1);
    CHECK_EQ(fcode_of(packed_at(out + 9)), 31);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    enc1(&w, 1, f[31], d[1], 1, 1, 1);             /* f31 at 2, d1 at 0 */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 2);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 0);
    enc1(&w, 1, f[3], d[3], 1, 1, 1);              /* f3 fell off with f1's insert */
    CHECK_EQ(fcode_of(packed_at(out + 9)), 31);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    mt_locw_free(&w);

    /* Full defname table: the 32nd defname evicts the oldest. */
    mt_locw_init(&w);
    for (int i = 0; i <= 30; i++) {
        enc1(&w, 1, "x.ml", d[i], 1, 1, 1);
        CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    }
    enc1(&w, 1, "x.ml", d[0], 1, 1, 1);           /* d0 at 30 */
    CHECK_EQ(dcode_of(packed_at(out + 9)), 30);
    enc1(&w, 1, "x.ml", d[31], 1, 1, 1);          /* evicts d1 */
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    enc1(&w, 1, "x.ml", d[1], 1, 1, 1);
    CHECK_EQ(dcode_of(packed_at(out + 9)), 31);
    enc1(&w, 1, "x.ml", d[0], 1, 1, 1);           /* [d1 d31 d0 ...] */
    CHECK_EQ(dcode_of(packed_at(out + 9)), 2);
    mt_locw_free(&w);
}

static char *str_of(size_t len, char ch)
{
    char *s = malloc(len + 1);
    memset(s, ch, len);
    s[len] = 0;
    return s;
}

static void check_unknown(const uint8_t *p, size_t n, uint64_t code, int fresh)
{
    CHECK_EQ(mt_ld64(p), code);
    CHECK_EQ(p[8], 1);
    uint64_t pk = packed_at(p + 9);
    CHECK_EQ(pk & 0xFFFFF, 1);
    CHECK_EQ((pk >> 20) & 0xFF, 1);
    CHECK_EQ((pk >> 28) & 0x3FF, 1);
    if (fresh) {
        CHECK_EQ(fcode_of(pk), 31);
        CHECK_EQ(dcode_of(pk), 31);
        static const char s[] = "<unknown>\0??";
        CHECK_EQ(n, 15 + sizeof s);
        CHECK_MEM(p + 15, n - 15, s, sizeof s);
    } else {
        CHECK_EQ(fcode_of(pk), 0);
        CHECK_EQ(dcode_of(pk), 0);
        CHECK_EQ(n, 15);
    }
}

static void test_unknown(void)
{
    mt_locw w;
    mt_location *many = calloc(256, sizeof *many);
    for (int i = 0; i < 256; i++)
        many[i] = (mt_location){"a", "b", i + 1, 2, 3};

    /* 255 locations are kept (9 + 255*10 bytes by the size formula) */
    mt_locw_init(&w);
    CHECK_EQ(mt_locw_max_size(many, 255), 9 + 255 * 10);
    size_t n = mt_locw_encode(&w, out, 5, many, 255);
    CHECK_EQ(out[8], 255);
    CHECK_EQ(n, 9 + 6 + 4 + 254 * 6);
    CHECK_EQ(packed_at(out + 9 + 10) & 0xFFFFF, 2);
    mt_locw_free(&w);

    /* 256 -> replaced by the unknown location */
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 6, many, 256);
    check_unknown(out, n, 6, 1);
    /* the replacement is MTF-encoded: a second one hits */
    n = mt_locw_encode(&w, out, 7, many, 256);
    check_unknown(out, n, 7, 0);
    /* and a real "<unknown>"/"??" location then hits too */
    mt_location u = {"<unknown>", "??", 9, 9, 9};
    n = mt_locw_encode(&w, out, 8, &u, 1);
    CHECK_EQ(n, 15);
    CHECK_EQ(fcode_of(packed_at(out + 9)), 0);
    mt_locw_free(&w);

    /* Size boundary: |filename| + |defname| = 4079 -> 9+6+4079+2 = 4096 kept */
    char *fa = str_of(4000, 'f'), *da = str_of(79, 'd'), *db = str_of(80, 'd');
    mt_location big = {fa, da, 46, 17, 75};
    CHECK_EQ(mt_locw_max_size(&big, 1), 4096);
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 9, &big, 1);
    CHECK_EQ(n, 4096);
    CHECK_EQ(out[8], 1);
    CHECK_EQ(packed_at(out + 9), 0xFFC4B110002EULL);
    CHECK_EQ(memcmp(out + 15, fa, 4001), 0);
    CHECK_EQ(memcmp(out + 15 + 4001, da, 80), 0);
    mt_locw_free(&w);
    /* 4080 -> 4097 > 4096: replaced */
    big.function = db;
    CHECK_EQ(mt_locw_max_size(&big, 1), 4097);
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 10, &big, 1);
    check_unknown(out, n, 10, 1);
    mt_locw_free(&w);

    /* The size formula counts full strings even when MTF would make the body
     * small: two equal locations, 9 + 2*(8 + s) with s = |f|+|d|. */
    char *f2 = str_of(2000, 'g'), *d2a = str_of(35, 'h'), *d2b = str_of(36, 'h');
    mt_location two[2] = {{f2, d2a, 1, 1, 1}, {f2, d2a, 2, 2, 2}};
    CHECK_EQ(mt_locw_max_size(two, 2), 4095);
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 11, two, 2);
    CHECK_EQ(out[8], 2);
    CHECK_EQ(n, 9 + 6 + 2001 + 36 + 6);
    mt_locw_free(&w);
    two[0].function = two[1].function = d2b;
    CHECK_EQ(mt_locw_max_size(two, 2), 4097);
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 12, two, 2);
    check_unknown(out, n, 12, 1);
    mt_locw_free(&w);

    /* The empty list stays empty. */
    mt_locw_init(&w);
    n = mt_locw_encode(&w, out, 13, NULL, 0);
    CHECK_EQ(n, 9);
    CHECK_EQ(out[8], 0);
    mt_locw_free(&w);

    free(fa); free(da); free(db); free(f2); free(d2a); free(d2b);
    free(many);
}

static void test_reader_tables(void)
{
    mt_locr r;
    unsigned slot;
    const char *def;

    /* empty slots are errors */
    mt_locr_init(&r);
    CHECK_EQ(mt_locr_file(&r, 0, NULL, &slot), -1);
    CHECK_EQ(mt_locr_file(&r, 30, NULL, &slot), -1);
    CHECK_EQ(mt_locr_file(&r, 31, "a.ml", &slot), 0);
    CHECK_STR(r.file[slot], "a.ml");
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), -1);
    CHECK_EQ(mt_locr_def(&r, slot, 31, "fa", &def), 0);
    CHECK_STR(def, "fa");
    CHECK_EQ(mt_locr_def(&r, slot, 1, NULL, &def), -1);
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), 0);
    CHECK_STR(def, "fa");
    CHECK_EQ(mt_locr_file(&r, 1, NULL, &slot), -1);
    CHECK_EQ(mt_locr_file(&r, 31, "b.ml", &slot), 0);
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), -1);   /* b's table is empty */
    CHECK_EQ(mt_locr_def(&r, slot, 31, "fb1", &def), 0);
    CHECK_EQ(mt_locr_def(&r, slot, 31, "fb2", &def), 0);
    CHECK_EQ(mt_locr_def(&r, slot, 1, NULL, &def), 0);     /* [fb2 fb1] -> fb1 */
    CHECK_STR(def, "fb1");
    CHECK_EQ(mt_locr_def(&r, slot, 1, NULL, &def), 0);     /* [fb1 fb2] -> fb2 */
    CHECK_STR(def, "fb2");
    CHECK_EQ(mt_locr_file(&r, 1, NULL, &slot), 0);         /* [b a] -> a */
    CHECK_STR(r.file[slot], "a.ml");
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), 0);
    CHECK_STR(def, "fa");

    /* Quirk, table not full: a new file gets an empty defname table. */
    static char names[40][16], defs[40][16];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "n%d.ml", i);
        snprintf(defs[i], sizeof defs[i], "d%d", i);
    }
    mt_locr_init(&r);
    for (int i = 0; i < 30; i++) {
        CHECK_EQ(mt_locr_file(&r, 31, names[i], &slot), 0);
        CHECK_EQ(mt_locr_def(&r, slot, 31, defs[i], &def), 0);
    }
    CHECK_EQ(mt_locr_file(&r, 31, "new.ml", &slot), 0);    /* 31st: not full before */
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), -1);

    /* Quirk, table full: the new entry inherits the table at index 30. */
    mt_locr_init(&r);
    for (int i = 0; i <= 30; i++) {
        CHECK_EQ(mt_locr_file(&r, 31, names[i], &slot), 0);
        CHECK_EQ(mt_locr_def(&r, slot, 31, defs[i], &def), 0);
    }
    CHECK_EQ(r.count, 31);
    CHECK_EQ(mt_locr_file(&r, 30, NULL, &slot), 0);        /* n0 to the front */
    CHECK_STR(r.file[slot], "n0.ml");
    CHECK_EQ(mt_locr_def(&r, slot, 31, "d0b", &def), 0);   /* n0: [d0b d0] */
    /* [n0 n30 ... n1]: n1 (table [d1]) is at 30 */
    CHECK_EQ(mt_locr_file(&r, 31, "inherit.ml", &slot), 0);
    CHECK_STR(r.file[slot], "inherit.ml");
    CHECK_EQ(mt_locr_def(&r, slot, 0, NULL, &def), 0);
    CHECK_STR(def, "d1");
    CHECK_EQ(mt_locr_def(&r, slot, 1, NULL, &def), -1);    /* only one entry */
    /* n1 is gone; n2 is at 30 now */
    CHECK_EQ(mt_locr_file(&r, 30, NULL, &slot), 0);
    CHECK_STR(r.file[slot], "n2.ml");
    CHECK_EQ(mt_locr_file(&r, 2, NULL, &slot), 0);         /* [n2 inherit n0 ...] */
    CHECK_STR(r.file[slot], "n0.ml");
    CHECK_EQ(mt_locr_def(&r, slot, 1, NULL, &def), 0);
    CHECK_STR(def, "d0");
}

/* ---- random round trip -------------------------------------------------- */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static int clampi(int v, int lim) { return v < 0 || v > lim ? lim : v; }

static void test_random(void)
{
    static char fn[60][24], dn[60][24];
    for (int i = 0; i < 60; i++) {
        snprintf(fn[i], sizeof fn[i], "dir%d/file_%d.ml", i % 7, i);
        snprintf(dn[i], sizeof dn[i], "Mod%d.fun_%d", i % 5, i);
    }
    unsigned bad = 0, total = 0;
    for (int trial = 0; trial < 20; trial++) {
        mt_locw w;
        mt_locr r;
        mt_locw_init(&w);
        mt_locr_init(&r);
        int nf = 5 + (int)(rnd() % 56), nd = 3 + (int)(rnd() % 58);
        for (int ev = 0; ev < 400; ev++) {
            mt_location locs[6];
            size_t n = rnd() % 7;
            for (size_t i = 0; i < n; i++) {
                int sf = (rnd() % 4 == 0) ? (int)(rnd() % nf) : (int)(rnd() % (nf < 8 ? nf : 8));
                locs[i].filename = fn[sf];
                locs[i].function = dn[rnd() % nd];
                locs[i].line = (int)(rnd() % 0x180000) - 0x40000;
                locs[i].start_char = (int)(rnd() % 400) - 50;
                locs[i].end_char = (int)(rnd() % 1400) - 100;
            }
            uint64_t code = ((uint64_t)rnd() << 20) | rnd();
            size_t len = mt_locw_encode(&w, out, code, locs, n);
            body b;
            parse_body(&r, out, len, &b);
            total++;
            int ok = !b.err && b.code == code && b.n == n;
            for (size_t i = 0; ok && i < n; i++) {
                ok = strcmp(b.file[i], locs[i].filename) == 0 &&
                     strcmp(b.def[i], locs[i].function) == 0 &&
                     b.line[i] == clampi(locs[i].line, 0xFFFFF) &&
                     b.start[i] == clampi(locs[i].start_char, 0xFF) &&
                     b.end[i] == clampi(locs[i].end_char, 0x3FF);
            }
            if (!ok && bad++ < 5)
                CHECK_FAIL_("random round trip: trial %d event %d (err %d)", trial, ev, b.err);
        }
        mt_locw_free(&w);
        free_kept();
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(total, 20 * 400);
}

int main(void)
{
    test_pack();
    test_a2();
    test_clamp();
    test_mtf_writer();
    test_unknown();
    test_reader_tables();
    test_random();
    return CHECK_DONE();
}
