/* The transmit schedule (include/streamfat/tx_schedule.h): a flat table scanned on each
 * poll. A linear scan is the whole cost: the table holds tens of entries per interface,
 * and a poll runs at most once per due frame, so a heap would buy nothing but code. */
#include "streamfat/tx_schedule.h"

#include <stddef.h>

#include "util/div64.h"

void sf_tx_init(struct sf_tx_schedule *s, struct sf_tx_entry *mem, uint32_t cap, sf_tx_fn tx,
                void *ctx)
{
    s->e = mem;
    s->n = 0;
    s->cap = cap;
    s->tx = tx;
    s->ctx = ctx;
    s->sent = s->failed = s->skipped = s->triggers = s->coalesced = 0;
}

int sf_tx_add(struct sf_tx_schedule *s, const struct sf_tx_entry *e)
{
    if (s->n >= s->cap)
        return -1;
    s->e[s->n] = *e;
    s->e[s->n].next = 0;
    s->e[s->n].done = 0;
    s->n++;
    return 0;
}

void sf_tx_start(struct sf_tx_schedule *s, uint64_t now)
{
    for (uint32_t i = 0; i < s->n; i++) {
        s->e[i].next = now + s->e[i].delay_ns;
        s->e[i].done = s->e[i].trigger != 0;    /* waits for its trigger */
    }
}

uint32_t sf_tx_trigger(struct sf_tx_schedule *s, uint8_t trigger, uint64_t now)
{
    uint32_t armed = 0;

    for (uint32_t i = 0; i < s->n; i++) {
        struct sf_tx_entry *e = &s->e[i];
        if (!trigger || e->trigger != trigger)
            continue;
        if (!e->done) {
            s->coalesced++;
            continue;
        }
        e->next = now + e->delay_ns;
        e->done = 0;
        s->triggers++;
        armed++;
    }
    return armed;
}

/* How many whole periods fit in `late`. A 32-bit period (up to 4.29 s) divides with
 * sf_udiv64 (no 64-bit divide on a Cortex-M); a longer one fits few times in any
 * plausible stall, so counting is as quick. */
static uint64_t periods_past(uint64_t late, uint64_t period)
{
    uint64_t k = 0;

    if (period <= UINT32_MAX)
        return sf_udiv64(late, (uint32_t)period);
    while (late >= period) {
        late -= period;
        k++;
    }
    return k;
}

uint64_t sf_tx_poll(struct sf_tx_schedule *s, uint64_t now)
{
    uint64_t earliest = SF_TX_NONE;

    for (uint32_t i = 0; i < s->n; i++) {
        struct sf_tx_entry *e = &s->e[i];

        if (e->done)
            continue;
        if (e->next <= now) {
            if (s->tx(s->ctx, e->channel, &e->frame) == 0)
                s->sent++;
            else
                s->failed++;
            if (!e->period_ns || e->trigger) {
                e->done = 1;
                continue;
            }
            e->next += e->period_ns;        /* from the deadline: no drift */
            if (e->next <= now &&
                periods_past(now - e->next, e->period_ns) >= SF_TX_CATCHUP) {
                /* a long stall: one frame now, not a burst of all the missed ones; the
                 * grid of deadlines stays the same */
                uint64_t k = periods_past(now - e->next, e->period_ns) + 1;
                s->skipped += k;
                e->next += k * e->period_ns;
            }
            /* else a short delay: the next deadline is due already and the caller polls
             * again at once, so a scheduling hiccup loses no frame */
        }
        if (e->next < earliest)
            earliest = e->next;
    }
    return earliest;
}
