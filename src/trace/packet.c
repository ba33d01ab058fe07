/*
 * packet.c - packet header parsing, validation and writing (spec 2.2-2.4).
 */
#include "trace/packet.h"

#include <stdio.h>

#include "codec/wire.h"

void mt_header_parse(mt_header *h, const uint8_t *p, unsigned layout)
{
    h->magic = mt_ld32(p);
    h->size_bits = mt_ld32(p + 4);
    h->time_begin = mt_ld64(p + 8);
    h->time_end = mt_ld64(p + 16);
    h->version = mt_ld16(p + 28);
    h->pid = mt_ld64(p + 30);
    unsigned o = 38;
    h->domain = 0;
    if (layout >= 3 && h->version >= 3) {
        h->domain = mt_ld16(p + 38);
        o = 40;
    }
    h->header_size = o + 28;
    h->verify_ix = mt_ld16(p + o);
    h->verify_pred = mt_ld16(p + o + 2);
    h->verify_val = mt_ld64(p + o + 4);
    h->alloc_id_begin = mt_ld64(p + o + 12);
    h->alloc_id_end = mt_ld64(p + o + 20);
}

const char *mt_header_check(const mt_header *h, unsigned max_version,
                            char *buf, size_t bufsize)
{
    if (h->magic != MT_MAGIC)
        return "Not a CTF packet (no magic number 0xc1fc1fc1 at the packet's start)";
    int ok = max_version >= 3 ? h->version <= 3
                              : (h->version == 1 || h->version == 2);
    if (!ok) {
        snprintf(buf, bufsize, "trace format v%03u, but expected v%03u",
                 (unsigned)h->version, max_version >= 3 ? 3u : 2u);
        return buf;
    }
    if ((int32_t)h->size_bits < 0)
        return "Bad packet size (2^31 bits or more)";
    if ((int64_t)h->time_begin > (int64_t)h->time_end)
        return "Monotone packet timestamps (the packet ends before it begins)";
    if ((int64_t)h->alloc_id_begin > (int64_t)h->alloc_id_end)
        return "Monotone alloc IDs (the packet's last allocation id is below its first)";
    return NULL;
}

size_t mt_header_write(uint8_t *p, const mt_header *h)
{
    mt_st32(p, MT_MAGIC);
    mt_st32(p + 4, h->size_bits);
    mt_st64(p + 8, h->time_begin);
    mt_st64(p + 16, h->time_end);
    mt_st32(p + 24, 0);                 /* flush_duration */
    mt_st16(p + 28, h->version);
    mt_st64(p + 30, h->pid);
    unsigned o = 38;
    if (h->version >= 3) {
        mt_st16(p + 38, h->domain);
        o = 40;
    }
    mt_st16(p + o, h->verify_ix);
    mt_st16(p + o + 2, h->verify_pred);
    mt_st64(p + o + 4, h->verify_val);
    mt_st64(p + o + 12, h->alloc_id_begin);
    mt_st64(p + o + 20, h->alloc_id_end);
    return o + 28;
}

void mt_header_patch(uint8_t *p, uint32_t size_bytes, uint64_t time_begin,
                     uint64_t time_end, uint64_t id_begin, uint64_t id_end,
                     unsigned header_size)
{
    mt_st32(p + 4, size_bytes * 8);
    mt_st64(p + 8, time_begin);
    mt_st64(p + 16, time_end);
    mt_st64(p + header_size - 16, id_begin);
    mt_st64(p + header_size - 8, id_end);
}
