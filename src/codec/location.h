/*
 * location.h - the location codec (spec 5): the packed 48-bit word and the
 * two-level move-to-front tables of file and function names, writer and
 * reader side.
 *
 * Tables hold at most 31 entries. Positions (0 = most recent) map to slots
 * through a small index array, so a move-to-front shifts bytes, not records.
 */
#ifndef MT_LOCATION_H
#define MT_LOCATION_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/memtrace.h"

#define MT_MTF_SIZE 31          /* entries per table; code 31 = new string   */
#define MT_MTF_NEW 31
#define MT_LOC_MAX_LENGTH 4096  /* max bytes of one location event body      */
#define MT_LOC_MAX_COUNT 255    /* max locations per code (u8 count)         */

/* Packed word fields (spec 5.3). */
#define MT_LINE_MAX 0xFFFFF
#define MT_START_MAX 0xFF
#define MT_END_MAX 0x3FF

uint64_t mt_loc_pack(int line, int start_char, int end_char,
                     unsigned fcode, unsigned dcode);

/* ---- writer ----------------------------------------------------------- */

typedef struct mt_mtfw_names {
    char *name[MT_MTF_SIZE];    /* by slot; owned copies                      */
    uint8_t order[MT_MTF_SIZE]; /* position -> slot                           */
    uint8_t count;
} mt_mtfw_names;

typedef struct mt_locw {
    mt_mtfw_names files;
    mt_mtfw_names defs[MT_MTF_SIZE]; /* by file slot                          */
} mt_locw;

void mt_locw_init(mt_locw *w);
void mt_locw_free(mt_locw *w);

/* Bytes mt_locw_encode will write at most for this list (always <= 4096). */
size_t mt_locw_max_size(const mt_location *locs, size_t n);

/* Encode the body of a location event (code, count, locations) at out, which
 * must have room for MT_LOC_MAX_LENGTH bytes. Applies the unknown-location
 * replacement and the clamps of spec 5.5. Returns bytes written, or 0 when
 * out of memory (the MTF state is then unusable). */
size_t mt_locw_encode(mt_locw *w, uint8_t *out, uint64_t code,
                      const mt_location *locs, size_t n);

/* ---- reader ----------------------------------------------------------- */

typedef struct mt_mtfr_defs {
    const char *name[MT_MTF_SIZE]; /* by position; interned strings          */
    uint8_t count;
} mt_mtfr_defs;

typedef struct mt_locr {
    const char *file[MT_MTF_SIZE];   /* by slot; interned                     */
    mt_mtfr_defs defs[MT_MTF_SIZE];  /* by slot                               */
    uint8_t order[MT_MTF_SIZE];      /* position -> slot                      */
    uint8_t count;
} mt_locr;

void mt_locr_init(mt_locr *r);

/* Decode one filename/defname code pair. For code 31 the new string must
 * already be interned by the caller and passed in *_new. Returns 0, or -1
 * when a code names an empty slot. */
int mt_locr_file(mt_locr *r, unsigned fcode, const char *fnew, unsigned *slot);
int mt_locr_def(mt_locr *r, unsigned slot, unsigned dcode, const char *dnew,
                const char **def);

#endif /* MT_LOCATION_H */
