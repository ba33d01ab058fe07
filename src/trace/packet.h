/*
 * packet.h - CTF packet headers (spec 2) and event header words (spec 3):
 * layout constants, parsing with the reference's validation order, writing
 * and back-patching.
 */
#ifndef MT_PACKET_H
#define MT_PACKET_H

#include <stddef.h>
#include <stdint.h>

#define MT_MAGIC 0xC1FC1FC1u
#define MT_HEADER_V2 66              /* header bytes, versions 0-2            */
#define MT_HEADER_V3 68              /* header bytes, version 3 (domain)      */
#define MT_MAX_PACKET 32768          /* largest packet, header included       */
#define MT_MAX_EVENT 4196            /* space the writer keeps for one event  */
#define MT_PACKET_MAX_TIME 30000000  /* us a packet may span                  */
#define MT_MAX_BACKTRACE (1u << 20)  /* longest backtrace read or written     */

/* Event codes (spec 3.3). */
enum {
    MT_EV_INFO = 0,
    MT_EV_LOCATION = 1,
    MT_EV_ALLOC = 2,
    MT_EV_PROMOTE = 3,
    MT_EV_COLLECT = 4,
    MT_EV_SHORT_BASE = 100           /* 101..116: short alloc of 1..16 words  */
};

#define MT_TIME_BITS 25
#define MT_TIME_MASK ((1u << MT_TIME_BITS) - 1)

/* An event's 64-bit time from its header word and the packet's time_begin
 * (spec 3.2): the low 25 bits, moved past a 2^25 boundary if they wrapped.
 * That is time_begin plus how far the low bits are past time_begin's, mod
 * 2^25: three instructions, no compare (the reader's fast path runs it for
 * every event, with begin_low = time_begin's low 25 bits kept). */
static inline uint64_t mt_event_time_low(uint64_t time_begin, uint32_t begin_low,
                                         uint32_t word)
{
    return time_begin + ((word - begin_low) & MT_TIME_MASK);
}

static inline uint64_t mt_event_time(uint64_t time_begin, uint32_t word)
{
    return mt_event_time_low(time_begin, (uint32_t)time_begin & MT_TIME_MASK, word);
}

typedef struct mt_header {
    uint32_t magic;
    uint32_t size_bits;
    uint64_t time_begin, time_end;
    uint16_t version;
    uint64_t pid;
    uint16_t domain;
    uint16_t verify_ix, verify_pred;
    uint64_t verify_val;
    uint64_t alloc_id_begin, alloc_id_end;
    unsigned header_size;            /* 66 or 68                              */
} mt_header;

/* Header size implied by a packet's version field. */
static inline unsigned mt_header_size(unsigned version)
{
    return version >= 3 ? MT_HEADER_V3 : MT_HEADER_V2;
}

/* Parse a header from p with the layout of format `layout` (2: 66 bytes
 * whatever the version field says, as a v002 reader sees every packet; 3:
 * the domain field is present iff the packet's version is >= 3). The
 * caller has made header_size bytes readable. No validation. */
void mt_header_parse(mt_header *h, const uint8_t *p, unsigned layout);

/* The checks of spec 2.4 after the verifier (magic, version, size, times,
 * ids) in the reference's order. max_version is 2 (v1/v2 trace) or 3.
 * Returns NULL or the reference's message text (written to buf when it has
 * numbers). */
const char *mt_header_check(const mt_header *h, unsigned max_version,
                            char *buf, size_t bufsize);

/* Write a header with the given fields at p; returns its size. */
size_t mt_header_write(uint8_t *p, const mt_header *h);

/* Patch the fields known only when a packet is complete. */
void mt_header_patch(uint8_t *p, uint32_t size_bytes, uint64_t time_begin,
                     uint64_t time_end, uint64_t id_begin, uint64_t id_end,
                     unsigned header_size);

#endif /* MT_PACKET_H */
