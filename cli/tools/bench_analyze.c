/* streamfat bench: from per-request samples to the figures it reports.
 *
 * Windows: the run is cut by data written into BENCH_WINDOWS windows of whole requests (at
 * least queue depth requests each, so that bursts of completions average out); a
 * window's throughput is its bytes over the time between the completion that ends the
 * previous window and the one that ends it. Cutting by data rather than by time makes the
 * chart's x axis (data written) and the cache boundary (a byte position) direct.
 *
 * Boundary: the two-level split of the window series with the least sum of absolute
 * deviations from each level's median (an L1 change point: one slow outlier window cannot
 * move it, unlike a split by means or a first-window-below-threshold rule). It counts as a
 * cache boundary only when the later level is below BENCH_MIN_DROP of the earlier and
 * each side has at least two windows. Then the position comes from the completion times
 * themselves: straight lines t = a + x/v fitted (least squares) to the ends of up to
 * BENCH_FIT windows on each side, leaving out the two windows around the split (one of
 * them holds the drop), cross at the boundary B = (a_slow - a_fast) / (1/v_fast -
 * 1/v_slow). A window's own speed is noisy (completions come in bursts on a loaded host),
 * but its end time carries no cumulative error while the device is kept busy, so the
 * (robust, Theil-Sen) fit is good to a fraction of a window. */
#include "bench_analyze.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_sample(const void *a, const void *b)
{
    const struct bench_sample *x = a, *y = b;
    return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/* Median of x[0..n) using tmp[n]. */
static double median(const double *x, unsigned n, double *tmp)
{
    memcpy(tmp, x, n * sizeof *x);
    qsort(tmp, n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static double abs_dev(const double *x, unsigned n, double m)
{
    double s = 0;
    unsigned i;

    for (i = 0; i < n; i++)
        s += x[i] > m ? x[i] - m : m - x[i];
    return s;
}

/* Level change point of x[0..n): the k (1 <= k < n) that splits x into [0,k) and [k,n)
 * with the least sum of absolute deviations from each part's median; 0 when n < 4 (or
 * out of memory). Medians of both parts go to *m1 and *m2. */
static unsigned change_point(const double *x, unsigned n, double *m1, double *m2)
{
    double *tmp, best = -1;
    unsigned k, best_k = 0;

    *m1 = *m2 = 0;
    if (n < 4 || !(tmp = malloc(n * sizeof *tmp)))
        return 0;
    for (k = 1; k < n; k++) {
        double a = median(x, k, tmp), b = median(x + k, n - k, tmp);
        double c = abs_dev(x, k, a) + abs_dev(x + k, n - k, b);
        if (best < 0 || c < best) {
            best = c;
            best_k = k;
            *m1 = a;
            *m2 = b;
        }
    }
    free(tmp);
    return best_k;
}

/* Percentile q (0..1) of sorted v[0..n): the smallest value with at least q of them at or
 * below it. */
static int64_t pct(const int64_t *v, size_t n, double q)
{
    size_t i = (size_t)(q * (double)n + 0.999999);
    return v[i ? (i > n ? n : i) - 1 : 0];
}

/* Fit t = a + x * s through the ends of windows [from, to] (Theil-Sen: the median of the
 * pairwise slopes, then the median intercept, so a few late observations - a stalled host
 * polls late - do not tilt the line); with one point the slope is 1/level. */
static void fit_line(const struct bench_result *r, unsigned from, unsigned to, double level,
                     double *a, double *s)
{
    double v[BENCH_FIT * BENCH_FIT], tmp[BENCH_FIT * BENCH_FIT];
    unsigned i, j, n = 0, np = to - from + 1;

#define X(j) ((double)((j) + 1) * (double)r->window_bytes)
    for (i = from; i <= to; i++)
        for (j = i + 1; j <= to; j++)
            v[n++] = (r->win_t[j] - r->win_t[i]) / (X(j) - X(i));
    *s = n ? median(v, n, tmp) : 1 / level;
    for (i = 0; i < np; i++)
        v[i] = r->win_t[from + i] - *s * X(from + i);
    *a = median(v, np, tmp);
#undef X
}

/* The boundary for a split at window k (k >= 2, windows k-1 and k hold the drop). */
static double boundary(const struct bench_result *r, unsigned k)
{
    double af, sf, as, ss, b;
    double lo = (double)(k - 1) * (double)r->window_bytes, hi = lo + 2.0 * (double)r->window_bytes;

    fit_line(r, k >= BENCH_FIT + 2 ? k - 1 - BENCH_FIT : 0, k - 2, r->fast_bps, &af, &sf);
    fit_line(r, k, k + BENCH_FIT - 1 < r->nwin - 1 ? k + BENCH_FIT - 1 : r->nwin - 1,
             r->steady_bps, &as, &ss);
    b = ss > sf ? (as - af) / (sf - ss) : lo;
    return b < lo ? lo : b > hi ? hi : b;
}

static void latencies(const struct bench_sample *s, size_t n, struct bench_result *r)
{
    int64_t *v = malloc(n * sizeof *v);
    size_t i;

    if (!v)
        return;
    for (i = 0; i < n; i++)
        v[i] = s[i].lat_ns;
    qsort(v, n, sizeof *v, cmp_i64);
    r->lat_p50 = pct(v, n, 0.50);
    r->lat_p99 = pct(v, n, 0.99);
    r->lat_p999 = pct(v, n, 0.999);
    r->lat_max = v[n - 1];
    free(v);
}

int bench_analyze(const struct bench_sample *in, size_t n, uint64_t bs, unsigned qd,
                  struct bench_result *r)
{
    struct bench_sample *s;
    double *tmp;
    uint64_t per;
    size_t i;
    unsigned w, k;
    int64_t prev_t = 0;

    memset(r, 0, sizeof *r);
    if (n == 0)
        return 0;
    /* Cumulative bytes follow completion order; sort by them so windows are positions. */
    s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, in, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_sample);
    r->bytes = s[n - 1].bytes;
    for (i = 0; i < n; i++)
        if (s[i].t_ns > prev_t)
            prev_t = s[i].t_ns;
    r->seconds = (double)prev_t / 1e9;
    r->avg_bps = r->seconds > 0 ? (double)r->bytes / r->seconds : 0;
    latencies(s, n, r);

    /* Requests per window: at least a queue's worth, since one poll may hand back that
     * many completions at the same instant. */
    per = n / BENCH_WINDOWS > qd ? n / BENCH_WINDOWS : qd;
    if (per > n)
        per = n;
    r->window_bytes = per * bs;
    r->nwin = (unsigned)(n / per);
    r->win_bps = malloc(r->nwin * sizeof *r->win_bps);
    r->win_t = malloc(r->nwin * sizeof *r->win_t);
    tmp = malloc(r->nwin * sizeof *tmp);
    if (!r->win_bps || !r->win_t || !tmp) {
        free(s);
        free(tmp);
        bench_result_free(r);
        return -1;
    }
    /* The completion that ends a window is the latest of its requests. */
    prev_t = 0;
    for (w = 0; w < r->nwin; w++) {
        int64_t end = 0;
        for (i = (size_t)w * per; i < (size_t)(w + 1) * per; i++)
            if (s[i].t_ns > end)
                end = s[i].t_ns;
        if (end < prev_t)
            end = prev_t;
        /* (a window that took no time at all can only follow a stall that held its
         * completions back: it counts at the previous window's speed) */
        r->win_bps[w] = end > prev_t ? (double)r->window_bytes * 1e9 / (double)(end - prev_t)
                                     : w ? r->win_bps[w - 1] : 0;
        r->win_t[w] = (double)end / 1e9;
        prev_t = end;
    }
    r->min_window_bps = r->nwin ? r->win_bps[0] : 0;
    for (w = 1; w < r->nwin; w++)
        if (r->win_bps[w] < r->min_window_bps)
            r->min_window_bps = r->win_bps[w];

    k = change_point(r->win_bps, r->nwin, &r->fast_bps, &r->steady_bps);
    if (k >= 2 && r->nwin - k >= 2 && r->steady_bps < BENCH_MIN_DROP * r->fast_bps &&
        r->steady_bps > 0) {
        r->have_boundary = 1;
        r->boundary_bytes = (uint64_t)boundary(r, k);
    } else {
        r->fast_bps = 0;
        r->steady_bps = r->nwin ? median(r->win_bps, r->nwin, tmp) : r->avg_bps;
    }
    free(tmp);
    free(s);
    return 0;
}

void bench_result_free(struct bench_result *r)
{
    free(r->win_bps);
    free(r->win_t);
    r->win_bps = NULL;
    r->win_t = NULL;
}
