/*
 * profile.h - the per-stack aggregation under `memtrace pprof`, `speedscope`
 * and `report`: every object passing the shared filters (src/analysis) is
 * charged to its distinct backtrace (kept once each in util/stackset) with
 * its samples allocated, live at the peak, live at the end, live at the
 * chosen --live-at time, estimated object counts, and (for the report) its
 * samples per time bin. Two passes over the trace when the peak is needed:
 * the live-heap timeline first (as `memtrace top` and `live` do), then the
 * stacks.
 *
 * Estimates: bytes as mt_est_bytes (samples / rate * word size); objects:
 * an object of LENGTH words carries on average LENGTH * rate samples, so
 * NSAMPLES / (rate * LENGTH) objects (LENGTH 0 counts as 1 word) - also
 * unbiased, and objects * size = bytes for every object.
 */
#ifndef MT_REPORT_PROFILE_H
#define MT_REPORT_PROFILE_H

#include <stdint.h>

#include "analysis/analysis.h"
#include "util/stackset.h"
#include "util/u64map.h"

/* Sums of one distinct backtrace, in samples (and estimated objects). */
typedef struct rp_stack {
    int64_t alloc, peak, end, at;     /* allocated / live at peak / end / at */
    double alloc_obj, at_obj;         /* estimated objects                   */
    int64_t count;                    /* sampled objects                     */
} rp_stack;

/* Samples allocated by one stack in one time bin. */
typedef struct rp_bin {
    uint32_t stack, bin;
    int64_t n;
} rp_bin;

typedef struct rp_profile {
    /* inputs */
    int live_as_time;     /* 1: --live-at only chooses `at` (pprof); 0: it
                             filters objects like every other command       */
    int need_timeline;    /* keep the first pass's timeline (report)        */
    int nbins;            /* >0: samples allocated per stack per time bin   */
    int classes;          /* keep sums per stack and object class (below)   */
    /* outputs */
    stackset stacks;      /* backtraces, caller first, by id                */
    rp_stack *v;          /* by stack id                                     */
    size_t n, cap;
    rp_stack total;
    mt_timeline timeline; /* of the filtered objects (need_timeline)        */
    int has_timeline;
    int64_t peak_time, peak_samples;
    int64_t at_time;      /* us since start; INT64_MAX: the end             */
    int64_t end;          /* last event time, us since start                */
    int64_t bin_width;    /* us per bin (nbins > 0)                          */
    rp_bin *bins;         /* samples allocated per stack and bin, appended   */
    size_t nbins_used, bins_cap; /* (a stack and bin may come more than once:
                             sum them)                                       */
    struct rp_run {       /* by stack id, one cache line for both:           */
        int64_t acc;      /* the samples so far, not yet in bins, of         */
        int32_t cur;      /* the bin being summed (-1: none); objects of a   */
    } *run;               /* stack mostly come in time order, so bins gets   */
                          /* about one entry per stack and bin               */
    /* classes: site stack << 24 | source << 20 | size class << 10 |
     * lifetime class -> index into cls. The site stack is the scan's
     * mt_stack id (one per allocation site, few), its site's name in
     * class_site. Size class k: 2^k <= bytes < 2^(k+1) (k = 0 for 0 and 1
     * byte); lifetime class k: 10^(k-1) <= us < 10^k (k = 0 for 0 us);
     * lifetime as the filters reckon it (to the end if never collected). */
    u64map class_ids;
    const char **class_site;          /* by mt_stack id; NULL: unseen      */
    size_t class_site_cap;
    rp_stack *cls;        /* alloc, peak, end, count used                    */
    uint64_t *cls_dm_key; /* a direct-mapped cache in front of class_ids:    */
    uint32_t *cls_dm_idx; /* key -> index + 1 (0: empty)                     */
    size_t ncls, cls_cap;
    mt_scan scan;         /* the second pass, open: reader for locations     */
    const mt_trace_info *info;
    int err;              /* internal: out of memory                         */
} rp_profile;

/* Run both passes over path with filter f. Messages are printed as
 * "memtrace CMD: ..." on failure; returns MT_OK or an error status. */
int rp_profile_run(rp_profile *p, const char *cmd, const char *path,
                   const mt_filter *f);
void rp_profile_free(rp_profile *p);

#define RP_CLASS_KEY(stack, src, size, life) \
    ((uint64_t)(stack) << 24 | (uint64_t)(src) << 20 | (uint64_t)(size) << 10 | (uint64_t)(life))

/* Estimated bytes of n samples in this trace. */
double rp_bytes(const rp_profile *p, int64_t n);

/* The frames of a backtrace code, outermost first (the trace's order),
 * with those hidden by --hide left out: *n of them in *locs (a buffer owned
 * by the caller, grown as needed). 0, or -1 unknown code / out of memory. */
int rp_code_frames(rp_profile *p, const mt_filter *f, uint64_t code,
                   const mt_location ***locs, size_t *cap, size_t *n);

#endif /* MT_REPORT_PROFILE_H */
