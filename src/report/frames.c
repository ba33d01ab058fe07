/*
 * frames.c - frame interning for speedscope and the report; see frames.h.
 */
#include "report/frames.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/hash.h"

static int64_t frame_id(rp_frames *fr, const mt_location *l)
{
    uint64_t h = hash_str(l->function, strlen(l->function));
    h = hash_str_more(h, l->filename, strlen(l->filename)) * 31 + (uint64_t)l->line;
    for (;; h++) {
        uint64_t *v = u64map_get(&fr->ids, h);
        if (!v)
            break;
        const mt_location *o = fr->v[*v];
        if (o->line == l->line && strcmp(o->function, l->function) == 0 &&
            strcmp(o->filename, l->filename) == 0)
            return (int64_t)*v;
    }
    if (fr->n >= UINT32_MAX ||
        grow_array(&fr->v, &fr->cap, fr->n + 1, sizeof *fr->v) ||
        u64map_put(&fr->ids, h, fr->n))
        return -1;
    fr->v[fr->n] = l;
    return (int64_t)fr->n++;
}

int rp_frames_of_code(rp_frames *fr, rp_profile *p, const mt_filter *f,
                      uint64_t code, const uint32_t **ids, size_t *n)
{
    uint64_t *v = u64map_get(&fr->codes, code);
    if (!v) {
        size_t k;
        if (rp_code_frames(p, f, code, &fr->buf, &fr->buf_cap, &k) ||
            fr->nlist + k > UINT32_MAX ||
            grow_array(&fr->list, &fr->list_cap, fr->nlist + k, sizeof *fr->list))
            return -1;
        size_t start = fr->nlist;
        for (size_t i = 0; i < k; i++) {
            int64_t id = frame_id(fr, fr->buf[i]);
            if (id < 0)
                return -1;
            fr->list[fr->nlist++] = (uint32_t)id;
        }
        if (u64map_put(&fr->codes, code, (uint64_t)start << 32 | k))
            return -1;
        v = u64map_get(&fr->codes, code);
    }
    *n = (size_t)(*v & 0xffffffffu);
    /* (no list yet while every code so far had no frames: NULL + 0 is
     * undefined) */
    *ids = *n ? fr->list + (*v >> 32) : NULL;
    return 0;
}

int rp_frames_of_stack(rp_frames *fr, rp_profile *p, const mt_filter *f,
                       uint32_t id, uint32_t **out, size_t *cap, size_t *len)
{
    size_t nc;
    const uint64_t *codes = stackset_get(&p->stacks, id, &nc);
    *len = 0;
    for (size_t i = 0; i < nc; i++) {
        const uint32_t *ids;
        size_t n;
        if (rp_frames_of_code(fr, p, f, codes[i], &ids, &n) ||
            grow_array(out, cap, *len + n, sizeof **out))
            return -1;
        if (n)
            memcpy(*out + *len, ids, n * sizeof *ids);
        *len += n;
    }
    return 0;
}

void rp_frames_free(rp_frames *fr)
{
    free(fr->v);
    u64map_free(&fr->ids);
    u64map_free(&fr->codes);
    free(fr->list);
    free(fr->buf);
    memset(fr, 0, sizeof *fr);
}
