/* streamfat export: what cmd_export.c (options, inputs, outputs), export.c (filters, the
 * decode loop) and the format writers (export_candump.c, export_asc.c, export_blf.c,
 * export_csv.c, export_raw.c, export_mf4.c) share.
 *
 * export.c decodes a log file, drops what the filters exclude and hands each remaining
 * record to one writer, in file order. A writer streams: it keeps at most a few hundred KiB
 * of state (BLF: one log container) however long the log is.
 *
 * Timestamps reach the writers as they are in the log (ns since the Unix epoch for a
 * realtime clock); struct export_ctx says whether the user wants them absolute or relative
 * to the log's start, and each writer renders them in its format's way. */
#ifndef SF_CLI_EXPORT_H
#define SF_CLI_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "sources/log_sources.h"
#include "streamfat/proto.h"
#include "streamfat/rec.h"

struct sf_file;

/* Channel names up to this long go into a text line's buffer; longer ones (up to B - 96
 * bytes, docs/FORMAT.md) are written on their own. */
#define EXPORT_IFNAME_INLINE 64

struct export_ctx {
    FILE *out;
    const char *out_name;          /* for messages */
    int seekable;                  /* out is a regular file (BLF patches its header) */
    int relative;                  /* --relative: timestamps from log_start */
    uint64_t log_start;            /* ns: the file header's start time, else the first record's */
    int blf_level;                 /* 0 stored containers, 1..9 zlib level */
    int mf4_level;                 /* 0 DT blocks, 1..9 DZ blocks at that zlib level */
    /* META records (key=value) of the log's header, each NUL-terminated, back to back. */
    const char *meta;
    size_t meta_len;
    /* Channel names from CHANNEL records, whole ("" while unnamed: can<N>). */
    const char *const *ifname;
    /* csv-wide: the channels that get a column (from the first pass), in channel order. */
    const uint8_t *wide_cols;
    unsigned n_wide_cols;
    /* ASC, BLF: the oldest timestamp among the records to export, found by a first pass
     * when the input can be read twice (their start time must not be later). */
    int have_min;
    uint64_t min_ts;
    /* messages: the ISO-TP pairs and fast-packet PGNs the user named */
    const struct sf_isotp_pair *isotp_pairs;
    unsigned n_isotp_pairs;
    const uint32_t *fast_pgns;
    unsigned n_fast_pgns;
    uint64_t written;              /* records the writer took */
    uint64_t clamped;              /* records older than a format's start time, put at it */
    void *priv;                    /* the writer's state */
};

/* One output format. begin and end return 0, or -1 when the output cannot be written
 * (errno set) or the state cannot be allocated. `can` gets every CAN record that passed the
 * filters, `other` every other data record (SAMPLE, TEXT, LATENCY, DROP, ANNOTATION); both
 * return 1 when the format took it, 0 when it has no form for it (the caller counts it as
 * skipped), -1 when the output cannot be written. */
struct export_writer {
    const char *name;              /* --format value */
    const char *ext;               /* output file extension for --all */
    int needs_columns;             /* csv-wide: two passes, the first finds the columns */
    int has_start;                 /* the format stores its own start time (ASC, BLF) */
    int (*begin)(struct export_ctx *x);
    int (*can)(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c);
    int (*other)(struct export_ctx *x, const struct sf_rec *r);
    int (*end)(struct export_ctx *x);   /* also frees priv; called after a failed begin too */
};

extern const struct export_writer export_candump, export_asc, export_blf, export_csv,
    export_csv_wide, export_raw;
extern const struct export_writer export_mf4;
extern const struct export_writer export_messages, export_messages_csv, export_uds, export_obd,
    export_j1939;

/* Helpers for the text formats. */
extern const char export_hexu[16];
char *export_put_hex(char *p, uint32_t v, int digits);
char *export_put_dec(char *p, uint64_t v, int min_digits);
/* ns to the nearest microsecond (half up): the text formats' times (docs/EXPORT.md). */
static inline uint64_t export_round_us(uint64_t ns)
{
    return ns / 1000u + (ns % 1000u >= 500u);
}
/* "sec.usec" of a timestamp, to the nearest microsecond (relative to log_start with
 * --relative; a '-' when older). */
char *export_put_time(const struct export_ctx *x, char *p, uint64_t ts);
/* The interface name of a channel: its CHANNEL record's name, else "can<N>"; p has room
 * for EXPORT_IFNAME_INLINE bytes. Returns NULL (nothing written) for a longer name, which
 * the caller writes on its own. */
char *export_put_ifname(const struct export_ctx *x, char *p, uint8_t ch);
int export_write(struct export_ctx *x, const void *p, size_t n);
/* The channel number for ASC and BLF, which count from 1: N + 1 for a channel named can<N>
 * (so a BLF or ASC log replayed with `log --source file:`, whose channel N became can<N-1>,
 * exports with its own numbers), else the streamfat channel + 1. */
unsigned export_vector_channel(const struct export_ctx *x, uint8_t ch);

/* ---- export.c: one log through the filters into a writer ----------------------------- */

#define EXPORT_MAX_CHANNEL_FILTERS 32
#define EXPORT_MAX_PAIRS 32        /* --isotp-pair */
#define EXPORT_MAX_PGNS 32         /* --fast-pgn */
#define EXPORT_NO_MATCH 3          /* exit status: the filters selected nothing */

/* A time bound: +DURATION from the log's start, or absolute ns. */
struct export_tbound {
    int set, rel;
    uint64_t ns;
};

/* What to export and how (the options of streamfat export). */
struct export_opts {
    const struct export_writer *w;
    const char *chan[EXPORT_MAX_CHANNEL_FILTERS];
    unsigned nchan;
    struct src_filter ids[SRC_MAX_FILTERS];
    unsigned nids;
    int id_accept;                 /* some --id accepts (else everything not rejected) */
    struct export_tbound from, to;
    int relative, blf_level, mf4_level;
    struct sf_isotp_pair pairs[EXPORT_MAX_PAIRS];
    unsigned npairs;
    uint32_t pgns[EXPORT_MAX_PGNS];
    unsigned npgns;
    /* --key FILE: the secret key of sealed logs and its public key (have_key set) */
    int have_key;
    const char *key_path;
    uint8_t key_pub[32], key_sec[32];
};

/* Where the log's bytes come from: a host descriptor or a file on a volume. */
struct export_input {
    int fd;                        /* -1 for a volume file */
    struct sf_file *f;
    int complete;                  /* export_one wrote the output to its end (damage or not) */
};

/* Export one log from `in` to `out` (src and out_name name them in messages): 0 clean,
 * CLI_ERR on damage or an error (message printed), EXPORT_NO_MATCH when check_match is set
 * and the channel or id filters selected nothing from a log that has records. */
int export_one(const struct export_opts *o, const char *src, struct export_input *in,
               FILE *out, const char *out_name, int check_match);

#endif
