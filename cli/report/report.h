/* streamfat report (docs/REPORT.md): what cmd_report.c (options, inputs, output),
 * report_scan.c (one pass over each log through the library's block decoder),
 * report_series.c (time buckets that fold to keep their number fixed, and the per-pixel
 * min/max levels written out), report_ids.c (the busiest-ids table), report_html.c (the
 * HTML writer) and report_assets.c (the page's script and style sheet, generated at build
 * time from report.js and report.css) share.
 *
 * Memory is bounded by the number of channels and ids, never by the log's length: every
 * series has RS_BUCKETS buckets whatever the duration (they fold in pairs when time runs
 * past the last), the id table and the event lists have fixed caps with counts of what
 * did not fit. */
#ifndef SF_CLI_REPORT_H
#define SF_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "streamfat/log.h"
#include "streamfat/rec.h"

/* ---- report_series.c: a shared time base and the arrays that fold with it ------------- */

#define RS_BUCKETS 8192u          /* buckets of the finest level (a power of two) */
#define RS_MAX_ARRAYS 1100        /* 256 channels x 4 series + the log's own */

enum rs_fold { RS_SUM, RS_MIN, RS_MAX };

struct rs_base {
    int started;
    uint64_t t0;                  /* ns: the time of bucket 0's start */
    unsigned shift;               /* a bucket is 2^shift ns */
    uint64_t before;              /* records older than t0, counted in bucket 0 */
    unsigned narr;
    int64_t *arr[RS_MAX_ARRAYS];
    uint8_t fold[RS_MAX_ARRAYS];
    int64_t init[RS_MAX_ARRAYS];
};

/* Start the time base at t0 (the first file's start). */
void rs_start(struct rs_base *b, uint64_t t0);
/* A new array of RS_BUCKETS values (min arrays start at INT64_MAX, max at INT64_MIN, sums
 * at 0); NULL when out of memory. Freed by rs_free. */
int64_t *rs_array(struct rs_base *b, enum rs_fold fold);
/* The bucket of time ts, folding every array as often as needed to reach it. */
static inline unsigned rs_bucket(struct rs_base *b, uint64_t ts);
void rs_fold_to(struct rs_base *b, uint64_t ts);
void rs_free(struct rs_base *b);

static inline unsigned rs_bucket(struct rs_base *b, uint64_t ts)
{
    uint64_t d;

    if (ts < b->t0) {
        b->before++;
        return 0;
    }
    d = (ts - b->t0) >> b->shift;
    if (d >= RS_BUCKETS) {
        rs_fold_to(b, ts);
        d = (ts - b->t0) >> b->shift;
    }
    return (unsigned)d;
}

/* Write `a` (n = RS_BUCKETS values of fold kind `fold`, the empty ones as init) as JSON
 * levels: [[level0], [level1], ...], level 0 with `first` buckets' values of `a` reduced
 * to `first` columns, each next level a quarter as many, every column holding [min, max]
 * of the values of its buckets (RS_SUM arrays: of the sums, so a rate's peak survives,
 * and a third value, the column's total, whose mean per bucket is the rate's average),
 * null where nothing was recorded; every value divided by div (bus time: ps to ns, fewer
 * digits). */
void rs_write_levels(FILE *out, const int64_t *a, enum rs_fold fold, unsigned first,
                     unsigned nlevels, unsigned used, int64_t div);

/* The same for a signal's per-bucket minima (is_min) or maxima as doubles, NaN where the
 * bucket holds no value. */
void rs_write_levels_f(FILE *out, const double *a, int is_min, unsigned first,
                       unsigned nlevels, unsigned used);

/* ---- report_ids.c: CAN ids, counted ----------------------------------------------------- */

#define RID_MAX (1u << 16)        /* ids tracked; more are counted in `untracked` */

struct rid {
    uint64_t key;                 /* channel << 32 | eff << 31 | id; 0 = free (key + 1 stored) */
    uint64_t count, first, last;
    uint64_t dt_min, dt_max;
    double dt_sq;                 /* sum of squared periods, in ns^2 */
    uint8_t len_max, fd;
};

struct rid_table {
    struct rid *slot;
    uint32_t cap, n;
    uint64_t untracked;           /* frames of ids that found no room */
};

int rid_init(struct rid_table *t);
/* Count one frame; -1 when out of memory (the table cannot grow). */
int rid_add(struct rid_table *t, uint8_t ch, uint32_t id, int eff, uint64_t ts, uint8_t len,
            int fd);
/* The n busiest entries (most frames first), into a malloc'd array of pointers. */
struct rid **rid_top(const struct rid_table *t, unsigned *n);
void rid_free(struct rid_table *t);

/* ---- report_scan.c: what the logs hold ------------------------------------------------- */

#define RPT_MAX_EVENTS 2000       /* timeline events of each kind kept; the rest counted */
#define RPT_TEXT 160              /* event text kept (annotations are cut there) */
#define RPT_WORST 20              /* worst latency events kept */
#define RPT_MAX_META 32

enum rpt_ev_kind { EV_FILE, EV_ANNOT, EV_TRIGGER, EV_DROP, EV_DAMAGE, EV_CHECKPOINT, EV_N };

struct rpt_event {
    uint64_t ts, ts_end;          /* ts_end: DROP's last lost record; damage's next record */
    uint64_t count;               /* DROP: records lost; damage: blocks */
    unsigned file;                /* index into rpt.files */
    int channel;                  /* -1: the whole log */
    char text[RPT_TEXT];
};

struct rpt_events {
    struct rpt_event *v;
    unsigned n;
    uint64_t total;               /* all of this kind, kept or not */
};

struct rpt_file {
    char *name;                   /* as shown */
    uint64_t bytes;
    int is_log, refused;          /* refused: a required feature this reader lacks */
    struct sf_file_header hdr;
    int have_hdr;
    uint64_t first_ts, last_ts;   /* of its records (0, 0: none) */
    uint64_t records, blocks_ok, blocks_damaged, blocks_foreign, bad_can;
    uint64_t damage_events;
    char damage[256];             /* "invalid 2, truncated 1" */
    char error[256];              /* a read error (the file is cut short there) */
};

struct rpt_bitrate {
    char name[64];
    uint64_t nominal, data;       /* bit/s */
};

struct rpt_worst {
    uint64_t ts;
    int64_t latency;
    uint64_t period;
    uint8_t channel;
};

struct rpt_chan {
    int used;
    char name[128];               /* its CHANNEL name, else "can<N>" */
    uint64_t nominal, data;       /* bit/s used for bus load */
    int assumed;                  /* no --bitrate named it */
    uint64_t ps_nominal, ps_data; /* ps per bit */
    uint64_t can, fd, err, rtr, tx, samples, texts, latency, other;
    uint64_t first_ts, last_ts;
    int64_t *s_frames, *s_busy_ps, *s_err;     /* per bucket: frames, ps on the bus, errors */
    int64_t *s_lat_min, *s_lat_max;            /* LATENCY records: ns */
    struct sf_hist hist;          /* LATENCY: log2 buckets of ns (late wake-ups; <= 0 in 0) */
    uint64_t lat_neg;             /* early or exact wake-ups (latency <= 0) */
    int64_t lat_max;
};

#define RPT_MAX_SIGNALS 64

/* A DBC signal, reduced by the Python package (report_signals.c). */
struct rpt_signal {
    char *name, *message, *unit;
    uint64_t count;               /* values decoded */
    double *lo, *hi;              /* RS_BUCKETS minima and maxima, NaN: none */
};

struct rpt {
    struct rpt_file *files;
    unsigned nfiles, cap_files;
    struct rpt_chan chan[256];
    struct rpt_bitrate *bitrates;
    unsigned nbitrates;
    struct rs_base rs;
    int64_t *s_drop;              /* per bucket: 1 where records were lost (DROP intervals) */
    int64_t *s_damage;            /* per bucket: 1 where damaged blocks lie */
    struct rid_table ids;
    struct rpt_events ev[EV_N];
    struct rpt_worst worst[RPT_WORST];
    unsigned nworst;
    char *meta[RPT_MAX_META];     /* distinct META key=value texts */
    unsigned nmeta;
    uint64_t first_ts, last_ts;   /* over every file's records */
    uint64_t records, frames, dropped, drop_records, damaged_blocks, damage_events;
    uint64_t bad_time;            /* records past 2^63 ns, skipped */
    unsigned logs_read;           /* files that were logs */
    unsigned chan_used;           /* channels with records */
    struct rpt_signal signals[RPT_MAX_SIGNALS];
    unsigned nsignals;
    int dbc_done;                 /* the Python package answered */
    /* --key FILE: the secret key of sealed logs (docs/FORMAT.md "Sealed files") */
    int have_key;
    const char *key_path;
    uint8_t key_pub[32], key_sec[32];
    uint64_t dbc_frames, dbc_undecoded;
    int oom;
};

/* Where a log's bytes come from: a host descriptor or a file on a volume. */
struct rpt_input {
    int fd;
    struct sf_file *f;
};

int rpt_init(struct rpt *r);
/* Scan one log into r (name: as shown). 0, or CLI_ERR after a message for an error that
 * stops the report (out of memory); damage and read errors are recorded in the file's
 * entry, not returned. */
int rpt_scan(struct rpt *r, const char *name, struct rpt_input *in, uint64_t bytes);
/* The bitrate assumed for a channel no --bitrate names. */
#define RPT_DEFAULT_NOMINAL 500000u
#define RPT_DEFAULT_DATA 2000000u
void rpt_free(struct rpt *r);

/* Bits of a CAN frame on the bus (ISO 11898-1 field lengths, no stuff bits): those at the
 * nominal rate and those at the data rate (CAN FD with BRS; else 0). */
void rpt_frame_bits(uint32_t flags, uint8_t len, unsigned *nominal, unsigned *data);

/* ---- report_signals.c: --dbc through the Python package ------------------------------ */

struct rpt_dbc {
    const char **dbc, **signal;
    unsigned ndbc, nsignal;
    const char *volume;           /* the image the logs are on, or NULL: host files */
    uint32_t partition;
    char **logs;                  /* as read (volume paths or host paths) */
    unsigned nlogs;
    const char *key_path;         /* --key, handed on to the Python package */
};
/* Run `$STREAMFAT_PYTHON -m streamfat signals` (default python3) over the logs with r's
 * final time base; its signals into r->signals. 0, CLI_ERR or CLI_USAGE (a --signal the
 * DBC lacks) after one line. */
int rpt_signals(struct rpt *r, const struct rpt_dbc *o);
void rpt_signals_free(struct rpt *r);

/* ---- report_html.c -------------------------------------------------------------------- */

struct rpt_html_opts {
    const char *title;            /* TARGET as the user gave it */
    const char *generated;        /* "streamfat report x.y" */
};
/* Write the page; 0, or -1 when a write failed. */
int rpt_html(FILE *out, const struct rpt *r, const struct rpt_html_opts *o);

/* report_assets.c (generated from cli/report/report.js and report.css at build time). */
extern const char rpt_asset_js[];
extern const char rpt_asset_css[];

#endif
