/* The transmit schedule: periodic and single-shot CAN frames a logger sends
 * (docs/LOG.md "Transmit"). Freestanding like the rest of the core: the caller gives the
 * entry table (no allocation) and the port gives the clock's readings and a tx(frame)
 * hook, so firmware and the CLI (which writes to a SocketCAN socket) share one schedule.
 *
 * Times are nanoseconds of the caller's clock. Deadlines never drift: an entry's next
 * deadline is its previous deadline plus its period, never "now + period", so a late
 * poll does not shift the ones after it. */
#ifndef STREAMFAT_TX_SCHEDULE_H
#define STREAMFAT_TX_SCHEDULE_H

#include <stdint.h>
#include "streamfat/rec.h"

/* One frame to send, on a channel, every period_ns (0: once), first at start + delay_ns;
 * or, with a trigger number, once delay_ns after each sf_tx_trigger of that number. */
struct sf_tx_entry {
    struct sf_can frame;        /* id, SF_CAN_EFF / RTR / FD / BRS flags, len, data */
    uint64_t period_ns;         /* 0: single-shot (a trigger entry: always 0) */
    uint64_t delay_ns;          /* after sf_tx_start's time, or after the trigger */
    uint64_t next;              /* the next deadline (set by sf_tx_start / sf_tx_trigger) */
    uint8_t channel;
    uint8_t done;               /* a single-shot entry that went (or failed); a trigger
                                   entry not armed */
    uint8_t trigger;            /* 0: on start; else sent on sf_tx_trigger(s, trigger) */
};

/* The port's hook: send `f` on `channel` now. 0 when the frame was handed over; < 0 when it
 * failed or would block (a full queue). It must not block: the schedule counts a failure
 * and moves on to the next period, so a stuck bus never stalls the logger. */
typedef int (*sf_tx_fn)(void *ctx, uint8_t channel, const struct sf_can *f);

struct sf_tx_schedule {
    struct sf_tx_entry *e;      /* caller memory */
    uint32_t n, cap;
    sf_tx_fn tx;
    void *ctx;
    uint64_t sent;              /* frames the hook took */
    uint64_t failed;            /* frames the hook refused (error or would block) */
    uint64_t skipped;           /* periods passed over because a poll came SF_TX_CATCHUP
                                   or more periods late: sent late once, not in a burst */
    uint64_t triggers;          /* trigger entries armed by sf_tx_trigger */
    uint64_t coalesced;         /* triggers that found their entry still armed: it goes
                                   once, at the first trigger's time */
};

/* A poll up to this many periods late still sends every missed frame (late, back to
 * back): the scheduling hiccups of a loaded host (hundreds of milliseconds under an
 * emulator) lose nothing. Later than that, the
 * missed periods are skipped and counted rather than sent as a burst. */
#define SF_TX_CATCHUP 32u

#define SF_TX_NONE UINT64_MAX   /* sf_tx_poll: nothing left to send */

void sf_tx_init(struct sf_tx_schedule *s, struct sf_tx_entry *mem, uint32_t cap, sf_tx_fn tx,
                void *ctx);

/* Adds an entry (copied). 0, or -1 when the table is full. */
int sf_tx_add(struct sf_tx_schedule *s, const struct sf_tx_entry *e);

/* Arms every entry but the trigger entries: its first deadline is now + its delay. */
void sf_tx_start(struct sf_tx_schedule *s, uint64_t now);

/* A trigger `trigger` (nonzero) fired at `now`: every entry of that number is armed to go
 * once, its delay after now (one already armed keeps its deadline: counted coalesced).
 * Returns how many were armed; the caller polls again by the earliest new deadline. */
uint32_t sf_tx_trigger(struct sf_tx_schedule *s, uint8_t trigger, uint64_t now);

/* Sends what is due at `now` (each due entry once) and returns the earliest deadline left,
 * or SF_TX_NONE. The caller sleeps until then (or polls again sooner: that is harmless);
 * a deadline at or before `now` means more is due: poll again at once. */
uint64_t sf_tx_poll(struct sf_tx_schedule *s, uint64_t now);

#endif
