/*
 * pprof.h - a per-stack profile (profile.h) as pprof's profile.proto,
 * gzipped: what `memtrace pprof` writes.
 */
#ifndef MT_REPORT_PPROF_H
#define MT_REPORT_PPROF_H

#include "report/profile.h"

/* Write p as a gzipped profile.proto to fd (which stays open; name is
 * for messages). Frames of functions hidden by f's --hide are left out.
 * Returns 0, or -1 with a message in err. */
int rp_write_pprof(rp_profile *p, const mt_filter *f, int fd, const char *name,
                   char *err, size_t errlen);

#endif /* MT_REPORT_PPROF_H */
