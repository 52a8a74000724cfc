/* The decoded views of export (-f uds, -f obd, -f j1939; docs/EXPORT.md): what they share.
 * Each view reassembles with the library (include/streamfat/proto.h), decodes with its
 * decoders (include/streamfat/diag.h) and writes one JSON object a line through a line
 * buffer that flushes itself, so a long payload or name goes out in pieces. */
#ifndef SF_CLI_EXPORT_DIAG_H
#define SF_CLI_EXPORT_DIAG_H

#include "export.h"
#include "streamfat/diag.h"

struct diag_state;

struct diag_view {
    /* a reassembled message (every status; the view picks) */
    int (*msg)(struct export_ctx *x, struct diag_state *s, const struct sf_proto_msg *m);
    /* a CAN frame before it goes to the reassembly, or NULL */
    int (*frame)(struct export_ctx *x, struct diag_state *s, const struct sf_rec *r,
                 const struct sf_can *c);
};

/* UDS request / response pairing: the last requests, by channel and id */
#define DIAG_REQS 16
struct diag_req {
    uint8_t used, channel, sid;
    uint32_t id, flags;
    uint64_t ts;
};

struct diag_state {
    struct sf_proto p;
    const struct diag_view *v;
    char *w;                       /* the line's write position */
    uint64_t skipped;              /* messages the view has no form for, or broken */
    struct diag_req req[DIAG_REQS];
    uint32_t req_next;
    char line[1024];
    struct sf_proto_session sess[256];
    uint8_t arena[16u << 20];
};

int diag_begin(struct export_ctx *x, const struct diag_view *v);
int diag_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c);
int diag_other(struct export_ctx *x, const struct sf_rec *r);
int diag_end(struct export_ctx *x);

/* The line: text, hex bytes, a decimal, a hex number, a string escaped for JSON. Each
 * returns 0 or -1 (the output failed). */
int dj_s(struct export_ctx *x, struct diag_state *s, const char *t);
int dj_hex(struct export_ctx *x, struct diag_state *s, const uint8_t *d, uint32_t n);
int dj_dec(struct export_ctx *x, struct diag_state *s, uint64_t v);
int dj_sdec(struct export_ctx *x, struct diag_state *s, int64_t v);
int dj_num(struct export_ctx *x, struct diag_state *s, uint32_t v, int digits);
int dj_str(struct export_ctx *x, struct diag_state *s, const char *t, uint32_t n);
int dj_double(struct export_ctx *x, struct diag_state *s, double v);
/* a time in ns, from the log's start with --relative (negative when older) */
int dj_ts(struct export_ctx *x, struct diag_state *s, uint64_t ts);
/* {"ts_first":..,"ts_last":..,"channel":..,"iface":"..","id":"..","eff":.. */
int dj_head(struct export_ctx *x, struct diag_state *s, uint64_t first, uint64_t last,
            uint8_t channel, uint32_t id, uint32_t flags);
/* "}\n" and the line out */
int dj_end(struct export_ctx *x, struct diag_state *s);

#endif
