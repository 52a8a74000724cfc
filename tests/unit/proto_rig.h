/* A test rig for src/proto/ (include/streamfat/proto.h): a context with its sessions and
 * arena, frames fed from byte lists, every message handed out copied so a test can look
 * at all of them afterwards. */
#ifndef SF_TEST_PROTO_RIG_H
#define SF_TEST_PROTO_RIG_H

#include <stdarg.h>
#include <string.h>
#include "streamfat/proto.h"

#define RIG_MSGS 512
#define RIG_BYTES (1u << 20)

struct rig {
    struct sf_proto p;
    struct sf_proto_config cfg;
    struct sf_proto_session sess[16];
    uint8_t arena[64 * 1024];
    struct sf_proto_msg m[RIG_MSGS];
    uint32_t pay_off[RIG_MSGS];
    uint8_t pay[RIG_BYTES];
    uint32_t pay_used;
    int n;
};

static inline void rig_take(struct rig *r)
{
    struct sf_proto_msg m;
    while (sf_proto_next(&r->p, &m)) {
        if (r->n >= RIG_MSGS || r->pay_used + m.length > RIG_BYTES) {
            fprintf(stderr, "rig full\n");
            exit(1);
        }
        r->m[r->n] = m;
        r->pay_off[r->n] = r->pay_used;
        if (m.length)
            memcpy(r->pay + r->pay_used, m.payload, m.length);
        r->m[r->n].payload = r->pay + r->pay_used;
        r->pay_used += m.length;
        r->n++;
    }
}

/* Set up with cfg's protocol fields (sessions and arena are the rig's unless given). */
static inline void rig_init(struct rig *r, const struct sf_proto_config *cfg)
{
    memset(r, 0, sizeof *r);
    if (cfg)
        r->cfg = *cfg;
    if (!r->cfg.sessions) {
        r->cfg.sessions = r->sess;
        r->cfg.nsessions = 16;
    }
    if (!r->cfg.arena) {
        r->cfg.arena = r->arena;
        r->cfg.arena_size = sizeof r->arena;
    }
    if (sf_proto_init(&r->p, &r->cfg)) {
        fprintf(stderr, "sf_proto_init failed\n");
        exit(1);
    }
}

/* Feed one frame: time in ms, flags SF_CAN_*, its bytes. */
static inline void rig_frame(struct rig *r, uint64_t ms, uint32_t id, uint32_t flags,
                      const uint8_t *d, uint8_t len)
{
    struct sf_proto_frame f = {ms * 1000000ull, id, flags, 0, len, d};
    int rc = sf_proto_feed(&r->p, &f);
    if (rc < 0) {
        fprintf(stderr, "sf_proto_feed: %d\n", rc);
        exit(1);
    }
    rig_take(r);
}

/* The same with the bytes as arguments: rig_f(r, ms, id, flags, n, b0, b1, ...). */
static inline void rig_f(struct rig *r, uint64_t ms, uint32_t id, uint32_t flags, int n,
                         ...)
{
    uint8_t d[64];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        d[i] = (uint8_t)va_arg(ap, int);
    va_end(ap);
    rig_frame(r, ms, id, flags, d, (uint8_t)n);
}

static inline void rig_finish(struct rig *r)
{
    sf_proto_finish(&r->p);
    rig_take(r);
}

static inline const struct sf_proto_stats *rig_stats(const struct rig *r)
{
    return sf_proto_stats(&r->p);
}

#endif

/* Frames built by the tests' own small senders, so a test can damage them before feeding. */
struct fr {
    uint64_t ms;
    uint32_t id, flags;
    uint8_t len;
    uint8_t d[64];
};

/* ISO-TP sender: payload into frames of `dl` bytes (8, or up to 64 with SF_CAN_FD),
 * `ext` >= 0: a leading address byte; pad >= 0: fill to dl with it; one frame per `gap`
 * ms from `ms`. The 32-bit FF_DL escape above 4095 bytes. Returns the frame count. */
static inline int isotp_frames(struct fr *out, uint64_t ms, uint64_t gap, uint32_t id,
                               uint32_t flags, int ext, int pad, unsigned dl,
                               const uint8_t *pl, uint32_t n)
{
    int k = 0;
    unsigned off = ext >= 0 ? 1 : 0;
    struct fr *f;
    uint32_t pos = 0;
    unsigned sfmax = (dl > 8 ? dl - 2 : 7) - off;
    f = &out[k++];
    memset(f, 0, sizeof *f);
    f->ms = ms;
    f->id = id;
    f->flags = flags;
    if (ext >= 0)
        f->d[0] = (uint8_t)ext;
    if (n <= (dl > 8 ? sfmax : 7 - off)) {
        unsigned at;
        if (n <= 7 - off) {
            f->d[off] = (uint8_t)n;
            at = off + 1;
        } else {
            f->d[off] = 0;
            f->d[off + 1] = (uint8_t)n;
            at = off + 2;
        }
        memcpy(f->d + at, pl, n);
        f->len = (uint8_t)(at + n);
    } else {
        unsigned at;
        if (n <= 4095) {
            f->d[off] = (uint8_t)(0x10 | n >> 8);
            f->d[off + 1] = (uint8_t)n;
            at = off + 2;
        } else {
            f->d[off] = 0x10;
            f->d[off + 1] = 0;
            f->d[off + 2] = (uint8_t)(n >> 24);
            f->d[off + 3] = (uint8_t)(n >> 16);
            f->d[off + 4] = (uint8_t)(n >> 8);
            f->d[off + 5] = (uint8_t)n;
            at = off + 6;
        }
        pos = dl - at;
        memcpy(f->d + at, pl, pos);
        f->len = (uint8_t)dl;
        uint8_t sn = 1;
        while (pos < n) {
            f = &out[k++];
            memset(f, 0, sizeof *f);
            f->ms = ms + gap * (uint64_t)(k - 1);
            f->id = id;
            f->flags = flags;
            if (ext >= 0)
                f->d[0] = (uint8_t)ext;
            f->d[off] = (uint8_t)(0x20 | sn);
            sn = (sn + 1) & 15;
            uint32_t c = n - pos < dl - off - 1 ? n - pos : dl - off - 1;
            memcpy(f->d + off + 1, pl + pos, c);
            pos += c;
            f->len = (uint8_t)(off + 1 + c);
        }
    }
    if (pad >= 0)
        for (int i = 0; i < k; i++) {
            /* to the frame size; an SF without the escape to 8 (the standard: only
               escaped SFs are longer) */
            unsigned to = k == 1 && (out[i].d[off] & 0xF) ? 8 : dl;
            memset(out[i].d + out[i].len, pad, to - out[i].len);
            out[i].len = (uint8_t)to;
        }
    return k;
}

static inline void rig_frames(struct rig *r, const struct fr *f, int n)
{
    for (int i = 0; i < n; i++)
        rig_frame(r, f[i].ms, f[i].id, f[i].flags, f[i].d, f[i].len);
}

static inline void fill_pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7u + seed * 13u + (i >> 8));
}
