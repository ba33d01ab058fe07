/*
 * html.h - the self-contained HTML report: web/report.html (embedded at
 * build time) with the trace's aggregated data inlined as JSON.
 */
#ifndef MT_REPORT_HTML_H
#define MT_REPORT_HTML_H

#include "report/profile.h"

/* Write the report of p (aggregated with nbins time bins and the timeline)
 * to fd. filters: the filter options as given, for the page's info block.
 * 0, -1 out of memory / unknown code, -2 write error (errno set). */
int rp_write_html(rp_profile *p, const mt_filter *f, const char *filters, int fd);

#endif /* MT_REPORT_HTML_H */
