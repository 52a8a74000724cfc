/* streamfat bench: what a run's samples say (cli/tools/bench_analyze.c) and how to draw them
 * (cli/tools/bench_svg.c). The method is described in docs/BENCH.md. */
#ifndef SF_CLI_BENCH_ANALYZE_H
#define SF_CLI_BENCH_ANALYZE_H

#include <stdint.h>
#include <stdio.h>

/* One completed request: when it completed (ns since the first submit), the bytes
 * completed so far including it, and its latency (submit to completion seen). */
struct bench_sample {
    int64_t t_ns;
    uint64_t bytes;
    int64_t lat_ns;
};

#define BENCH_WINDOWS 200      /* windows a run is cut into at most (whole requests each) */
#define BENCH_FIT 8            /* windows on each side of a drop that place it */
#define BENCH_MIN_DROP 0.85    /* a boundary: the later level below 85 % of the earlier one */

struct bench_result {
    uint64_t bytes;             /* written and completed */
    double seconds;             /* first submit to last completion */
    double avg_bps;             /* bytes / seconds */
    double steady_bps;          /* median window after the boundary (or of all windows) */
    double min_window_bps;      /* the slowest full window */
    double fast_bps;            /* median window before the boundary (0 without one) */
    int have_boundary;
    uint64_t boundary_bytes;    /* where the speed drops (with have_boundary) */
    uint64_t window_bytes;
    unsigned nwin;              /* full windows */
    double *win_bps;            /* [nwin], malloc'd */
    double *win_t;              /* [nwin] end time of each window, s */
    int64_t lat_p50, lat_p99, lat_p999, lat_max;   /* ns */
};

/* Analyse n samples of requests of bs bytes made with qd in flight (completions in any
 * order). Returns 0, or -1 when out of memory. */
int bench_analyze(const struct bench_sample *s, size_t n, uint64_t bs, unsigned qd,
                  struct bench_result *r);
void bench_result_free(struct bench_result *r);

/* The throughput-against-data-written chart as a standalone SVG document. */
void bench_svg(FILE *out, const struct bench_result *r, const char *title);

#endif
