/*
 * location.c - the location codec (spec 5): move-to-front tables and the
 * location event body, for the writer (encode) and the reader (decode).
 */
#include "codec/location.h"

#include <stdlib.h>
#include <string.h>

#include "codec/wire.h"

static const mt_location unknown_location = {
    "<unknown>", "??", 1, 1, 1
};

uint64_t mt_loc_pack(int line, int start_char, int end_char,
                     unsigned fcode, unsigned dcode)
{
    return (uint64_t)(line & MT_LINE_MAX)
         | (uint64_t)(start_char & MT_START_MAX) << 20
         | (uint64_t)(end_char & MT_END_MAX) << 28
         | (uint64_t)(fcode & 31) << 38
         | (uint64_t)(dcode & 31) << 43;
}

/* Writer clamp: negative or too large values become the maximum (5.3). */
static int clamp(int v, int lim)
{
    return (v < 0 || v > lim) ? lim : v;
}

/* Move the entry at position i to the front. */
static void mtf_front(uint8_t *order, unsigned i)
{
    uint8_t slot = order[i];
    memmove(order + 1, order, i);
    order[0] = slot;
}

/* ---- writer ----------------------------------------------------------- */

static void names_clear(mt_mtfw_names *t)
{
    for (unsigned i = 0; i < MT_MTF_SIZE; i++) {
        free(t->name[i]);
        t->name[i] = NULL;
        t->order[i] = (uint8_t)i;
    }
    t->count = 0;
}

void mt_locw_init(mt_locw *w)
{
    memset(w, 0, sizeof *w);
    for (unsigned i = 0; i < MT_MTF_SIZE; i++) {
        w->files.order[i] = (uint8_t)i;
        for (unsigned j = 0; j < MT_MTF_SIZE; j++)
            w->defs[i].order[j] = (uint8_t)j;
    }
}

void mt_locw_free(mt_locw *w)
{
    names_clear(&w->files);
    for (unsigned i = 0; i < MT_MTF_SIZE; i++)
        names_clear(&w->defs[i]);
}

/* Encode s in table t: returns the code (0..30 hit, 31 new) and the slot now
 * at position 0 in *slot; *fresh is set when a slot was (re)filled, so the
 * caller can reset what the slot owns. Returns -1 when out of memory. */
static int names_encode(mt_mtfw_names *t, const char *s, unsigned *slot,
                        int *fresh)
{
    for (unsigned i = 0; i < t->count; i++) {
        if (strcmp(t->name[t->order[i]], s) == 0) {
            *slot = t->order[i];
            *fresh = 0;
            mtf_front(t->order, i);
            return (int)i;
        }
    }
    char *copy = strdup(s);
    if (!copy)
        return -1;
    unsigned pos = t->count < MT_MTF_SIZE ? t->count++ : MT_MTF_SIZE - 1;
    unsigned sl = t->order[pos];          /* a free slot or the one falling off */
    free(t->name[sl]);
    t->name[sl] = copy;
    mtf_front(t->order, pos);
    *slot = sl;
    *fresh = 1;
    return MT_MTF_NEW;
}

/* A name as written: NULL (a caller's location callback may give it) is
 * the empty name. */
static const char *name_of(const char *s)
{
    return s ? s : "";
}

size_t mt_locw_max_size(const mt_location *locs, size_t n)
{
    size_t total = 9;
    for (size_t i = 0; i < n; i++)
        total += 6 + strlen(name_of(locs[i].filename)) + 1 +
                 strlen(name_of(locs[i].function)) + 1;
    return total;
}

size_t mt_locw_encode(mt_locw *w, uint8_t *out, uint64_t code,
                      const mt_location *locs, size_t n)
{
    if (n > MT_LOC_MAX_COUNT || mt_locw_max_size(locs, n) > MT_LOC_MAX_LENGTH) {
        locs = &unknown_location;
        n = 1;
    }
    uint8_t *p = out;
    mt_st64(p, code);
    p[8] = (uint8_t)n;
    p += 9;
    for (size_t i = 0; i < n; i++) {
        const mt_location *l = &locs[i];
        const char *file = name_of(l->filename), *fn = name_of(l->function);
        unsigned fslot, dslot;
        int fresh;
        int fcode = names_encode(&w->files, file, &fslot, &fresh);
        if (fcode < 0)
            return 0;
        if (fresh)
            names_clear(&w->defs[fslot]);   /* a new file starts empty (5.4) */
        int dcode = names_encode(&w->defs[fslot], fn, &dslot, &fresh);
        if (dcode < 0)
            return 0;
        uint64_t packed = mt_loc_pack(clamp(l->line, MT_LINE_MAX),
                                      clamp(l->start_char, MT_START_MAX),
                                      clamp(l->end_char, MT_END_MAX),
                                      (unsigned)fcode, (unsigned)dcode);
        mt_st32(p, (uint32_t)packed);
        mt_st16(p + 4, (uint16_t)(packed >> 32));
        p += 6;
        if (fcode == MT_MTF_NEW) {
            size_t len = strlen(file) + 1;
            memcpy(p, file, len);
            p += len;
        }
        if (dcode == MT_MTF_NEW) {
            size_t len = strlen(fn) + 1;
            memcpy(p, fn, len);
            p += len;
        }
    }
    return (size_t)(p - out);
}

/* ---- reader ----------------------------------------------------------- */

void mt_locr_init(mt_locr *r)
{
    memset(r, 0, sizeof *r);
    for (unsigned i = 0; i < MT_MTF_SIZE; i++)
        r->order[i] = (uint8_t)i;
}

int mt_locr_file(mt_locr *r, unsigned fcode, const char *fnew, unsigned *slot)
{
    if (fcode == MT_MTF_NEW) {
        unsigned pos;
        if (r->count < MT_MTF_SIZE) {
            pos = r->count++;
            r->defs[r->order[pos]].count = 0;     /* fresh table */
        } else {
            /* v001 quirk (spec 5.6): the new entry inherits the defname
             * table of the entry falling off. */
            pos = MT_MTF_SIZE - 1;
        }
        r->file[r->order[pos]] = fnew;
        mtf_front(r->order, pos);
    } else {
        if (fcode >= r->count)
            return -1;
        mtf_front(r->order, fcode);
    }
    *slot = r->order[0];
    return 0;
}

int mt_locr_def(mt_locr *r, unsigned slot, unsigned dcode, const char *dnew,
                const char **def)
{
    mt_mtfr_defs *t = &r->defs[slot];
    const char *s;
    unsigned pos;
    if (dcode == MT_MTF_NEW) {
        s = dnew;
        pos = t->count < MT_MTF_SIZE ? t->count++ : MT_MTF_SIZE - 1;
    } else {
        if (dcode >= t->count)
            return -1;
        s = t->name[dcode];
        pos = dcode;
    }
    memmove(t->name + 1, t->name, pos * sizeof t->name[0]);
    t->name[0] = s;
    *def = s;
    return 0;
}
