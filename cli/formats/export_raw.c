/* raw: the bytes of the log's SAMPLE records, one after another with nothing between, as
 * the producer gave them (for example the datagrams of a udp: source, or ADC samples a
 * program logged through sf_log_append). Use --channel to take one stream. CAN frames and
 * the other records are not part of it. */
#include "export.h"

static int raw_begin(struct export_ctx *x)
{
    (void)x;
    return 0;
}

static int raw_can(struct export_ctx *x, const struct sf_rec *r, const struct sf_can *c)
{
    (void)x;
    (void)r;
    (void)c;
    return 0;   /* not in this format; the caller counts it */
}

static int raw_other(struct export_ctx *x, const struct sf_rec *r)
{
    if (r->type != SF_REC_SAMPLE)
        return 0;
    x->written++;
    return export_write(x, r->body, r->length) ? -1 : 1;
}

static int raw_end(struct export_ctx *x)
{
    (void)x;
    return 0;
}

const struct export_writer export_raw = {
    "raw", "bin", 0, 0, raw_begin, raw_can, raw_other, raw_end,
};
