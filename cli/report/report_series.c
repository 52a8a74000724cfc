/* Time series of constant size for streamfat report: a shared time base of RS_BUCKETS
 * buckets of 2^shift ns from t0, and the arrays that follow it. When a record's time lies
 * past the last bucket, every array folds in pairs (bucket i takes buckets 2i and 2i+1:
 * sums add, minima and maxima keep theirs) and the bucket width doubles, as often as
 * needed. So a log of any length ends with between RS_BUCKETS / 2 and RS_BUCKETS buckets
 * in use and memory never grows with it, and a fold never loses an extreme: a maximum stays
 * the maximum of the wider bucket.
 *
 * The written levels (rs_write_levels) are what the page draws: per pixel column the
 * minimum and the maximum of the buckets under it, for a few zoom levels, so that drawing
 * at any level shows every spike the buckets hold. */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

/* The first bucket width: 2^20 ns (about 1 ms); it doubles as the log goes on. */
#define RS_SHIFT0 20u

void rs_start(struct rs_base *b, uint64_t t0)
{
    b->started = 1;
    b->t0 = t0;
    b->shift = RS_SHIFT0;
}

static int64_t init_of(enum rs_fold fold)
{
    return fold == RS_MIN ? INT64_MAX : fold == RS_MAX ? INT64_MIN : 0;
}

int64_t *rs_array(struct rs_base *b, enum rs_fold fold)
{
    int64_t *a, v = init_of(fold);

    if (b->narr == RS_MAX_ARRAYS || !(a = malloc(RS_BUCKETS * sizeof *a)))
        return NULL;
    for (unsigned i = 0; i < RS_BUCKETS; i++)
        a[i] = v;
    b->arr[b->narr] = a;
    b->fold[b->narr] = (uint8_t)fold;
    b->init[b->narr] = v;
    b->narr++;
    return a;
}

static void fold_one(int64_t *a, enum rs_fold fold, int64_t init)
{
    unsigned i;

    for (i = 0; i < RS_BUCKETS / 2; i++) {
        int64_t x = a[2 * i], y = a[2 * i + 1];
        a[i] = fold == RS_SUM ? x + y : fold == RS_MIN ? (x < y ? x : y) : (x > y ? x : y);
    }
    for (; i < RS_BUCKETS; i++)
        a[i] = init;
}

void rs_fold_to(struct rs_base *b, uint64_t ts)
{
    while (((ts - b->t0) >> b->shift) >= RS_BUCKETS && b->shift < 63) {
        for (unsigned k = 0; k < b->narr; k++)
            fold_one(b->arr[k], (enum rs_fold)b->fold[k], b->init[k]);
        b->shift++;
    }
}

void rs_free(struct rs_base *b)
{
    for (unsigned k = 0; k < b->narr; k++)
        free(b->arr[k]);
    b->narr = 0;
}

static void put_val(FILE *out, int have, int64_t v, int *first)
{
    fputs(*first ? "" : ",", out);
    *first = 0;
    if (have)
        fprintf(out, "%" PRId64, v);
    else
        fputs("null", out);
}

void rs_write_levels(FILE *out, const int64_t *a, enum rs_fold fold, unsigned first,
                     unsigned nlevels, unsigned used, int64_t div)
{
    int64_t empty = init_of(fold);
    unsigned ncol = first < used ? first : used;

    fputc('[', out);
    for (unsigned lv = 0; lv < nlevels; lv++, ncol /= 4) {
        int f = 1;
        if (ncol == 0)
            ncol = 1;
        fputs(lv ? ",[" : "[", out);
        for (unsigned j = 0; j < ncol; j++) {
            unsigned lo = (unsigned)((uint64_t)j * used / ncol);
            unsigned hi = (unsigned)((uint64_t)(j + 1) * used / ncol);
            int64_t mn = INT64_MAX, mx = INT64_MIN;
            int have = 0;
            for (unsigned i = lo; i < hi; i++) {
                if (fold != RS_SUM && a[i] == empty)
                    continue;
                have = 1;
                if (a[i] < mn)
                    mn = a[i];
                if (a[i] > mx)
                    mx = a[i];
            }
            put_val(out, have, mn / div, &f);
            put_val(out, have, mx / div, &f);
            if (fold == RS_SUM) {
                /* the column's total: its mean is what a rate reads as */
                int64_t sum = 0;
                for (unsigned i = lo; i < hi; i++)
                    sum += a[i];
                put_val(out, 1, sum / div, &f);
            }
        }
        fputc(']', out);
    }
    fputc(']', out);
}

static void put_dbl(FILE *out, double v, int *first)
{
    fputs(*first ? "" : ",", out);
    *first = 0;
    if (isnan(v))
        fputs("null", out);
    else
        fprintf(out, "%.9g", v);
}

void rs_write_levels_f(FILE *out, const double *a, int is_min, unsigned first,
                       unsigned nlevels, unsigned used)
{
    unsigned ncol = first < used ? first : used;

    fputc('[', out);
    for (unsigned lv = 0; lv < nlevels; lv++, ncol /= 4) {
        int f = 1;
        if (ncol == 0)
            ncol = 1;
        fputs(lv ? ",[" : "[", out);
        for (unsigned j = 0; j < ncol; j++) {
            unsigned lo = (unsigned)((uint64_t)j * used / ncol);
            unsigned hi = (unsigned)((uint64_t)(j + 1) * used / ncol);
            double v = NAN;
            for (unsigned i = lo; i < hi; i++) {
                if (isnan(a[i]))
                    continue;
                if (isnan(v) || (is_min ? a[i] < v : a[i] > v))
                    v = a[i];
            }
            /* one value per column: the band is this array's with its partner's */
            put_dbl(out, v, &f);
            put_dbl(out, v, &f);
        }
        fputc(']', out);
    }
    fputc(']', out);
}
