/* The flight recorder (on when cfg.pre_bytes, pre_ns or post_ns is set).
 *
 * Between triggers no file is written. The writer still takes closed blocks from the
 * producers but keeps them, sealed later, as the pre-trigger window: blocks rel .. taken - 1.
 * It gives the oldest back to the producers when it falls out of the window — by bytes
 * (the newer blocks alone hold pre_bytes) or by time (the next block's first record is older
 * than now - pre_ns, so every record of the oldest is) — or when the producers are about to
 * run out of blocks. That is not a drop: those records were never meant to be written.
 * The window is kept in whole blocks, so a trigger file may start with up to one block of
 * records older than trigger - pre.
 *
 * sf_log_trigger(ts): if no trigger file is being written, trim the window to ts - pre,
 * start the prepared file and write the window's blocks to it, then everything that follows
 * until the clock reaches ts + post_ns; then the file is closed (the service step does that
 * with a cut, like a rotation). A trigger while a file is being written moves its end to
 * ts + post_ns if that is later. Each trigger puts an ANNOTATION record "trigger at <ts> ns:
 * <why>" in the file. */
#include "log_impl.h"
#include "util/div64.h"

static uint64_t first_ts(const struct sf_log *lg, uint32_t c)
{
    return ld_le64(blk_ptr(lg, c) + META_FIRST_TS);
}

/* Give back blocks outside the window ending at ref; with room, also to keep the producers
 * two blocks ahead. Returns blocks released. */
static int fr_trim(struct sf_log *lg, uint64_t ref, int room)
{
    int n = 0;
    const struct sf_log_cfg *c = &lg->cfg;
    for (;;) {
        uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
        uint32_t held = ctr_dist(lg, lg->taken, rel);
        if (!held)
            break;
        if ((!c->pre_bytes && !c->pre_ns) ||
            (c->pre_bytes && ((uint64_t)(held - 1) << lg->bshift) >= c->pre_bytes) ||
            (c->pre_ns && held >= 2 && ref >= c->pre_ns &&
             first_ts(lg, ctr_add(lg, rel, 1)) < ref - c->pre_ns) ||
            (room && lg->nblk - 1 - ctr_dist(lg, sfl_ring_current(lg), rel) < 2)) {
            sfl_ring_release(lg, 1);
            n++;
        } else {
            break;
        }
    }
    lg->sub = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    return n;
}

int sfl_fr_service(struct sf_log *lg, uint64_t now)
{
    if (lg->fr_writing)
        return 0;                               /* the end is a cut in framed_service */
    return fr_trim(lg, now, 1);
}

void sfl_fr_release_all(struct sf_log *lg)
{
    uint32_t rel = atomic_load_explicit(&lg->rel, memory_order_relaxed);
    sfl_ring_release(lg, ctr_dist(lg, lg->taken, rel));
    lg->sub = lg->taken;
}

static uint32_t put_dec(char *out, uint64_t v)
{
    char d[20];
    uint32_t n = 0, k = 0;
    do {
        uint32_t digit;
        v = sf_udivmod64(v, 10, &digit);
        d[n++] = (char)('0' + digit);
    } while (v);
    while (n)
        out[k++] = d[--n];
    return k;
}

int sf_log_trigger(struct sf_log *lg, uint64_t ts, const char *why)
{
    int err = 0;
    if (!lg->fr)
        return SF_EINVAL;
    if (lg->stats.last_error)
        return lg->stats.last_error;
    lg->stats.triggers++;
    if (!lg->fr_writing) {
        sfl_ring_take(lg);
        fr_trim(lg, ts, 0);
        if ((err = sfl_start_file(lg, log_now(lg))))
            return err;
        lg->fr_writing = 1;
        lg->fr_end = ts + lg->cfg.post_ns;
        lg->next_ckpt_ns = log_now(lg) + lg->cfg.checkpoint_ns;
    } else if (ts + lg->cfg.post_ns > lg->fr_end) {
        lg->fr_end = ts + lg->cfg.post_ns;
    }
    char text[200];
    static const char head[] = "trigger at ";
    uint32_t n = 0;
    for (const char *p = head; *p; p++)
        text[n++] = *p;
    n += put_dec(text + n, ts);
    text[n++] = ' ';
    text[n++] = 'n';
    text[n++] = 's';
    if (why && *why) {
        text[n++] = ':';
        text[n++] = ' ';
        for (; *why && n < sizeof text; why++)
            text[n++] = *why;
    }
    if (sfl_put_own(lg, SF_REC_ANNOTATION, ts, text, (uint16_t)n))
        sfl_ring_count_drop(lg, ts);
    return 0;
}
