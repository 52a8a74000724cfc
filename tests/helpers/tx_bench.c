/* tx_bench N ENTRIES: the transmit schedule's cost (docs/BENCHMARKS.md "Transmit stage"):
 * ENTRIES periodic entries (periods 10 ms to 10 ms + ENTRIES us, as a transmit list of one
 * interface), polled at each returned deadline until N frames went out through a tx hook
 * that only counts. Under callgrind, sf_tx_poll inclusive minus the hook, divided by N, is
 * the schedule's instructions per sent frame. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/tx_schedule.h"

static unsigned long long hooked;

__attribute__((noinline)) static int count_tx(void *ctx, uint8_t channel, const struct sf_can *f)
{
    (void)ctx;
    (void)channel;
    hooked += f->len;
    return 0;
}

int main(int argc, char **argv)
{
    static struct sf_tx_entry mem[256];
    struct sf_tx_schedule s;
    unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    unsigned entries = argc > 2 ? (unsigned)atoi(argv[2]) : 64, i;
    uint64_t now = 0;

    if (entries < 1 || entries > 256) {
        fprintf(stderr, "usage: tx_bench N ENTRIES(1-256)\n");
        return 2;
    }
    sf_tx_init(&s, mem, entries, count_tx, NULL);
    for (i = 0; i < entries; i++) {
        struct sf_tx_entry e;
        memset(&e, 0, sizeof e);
        e.frame.id = 0x100 + i;
        e.frame.len = 8;
        e.period_ns = 10000000u + i * 1000u;
        if (sf_tx_add(&s, &e))
            return 1;
    }
    sf_tx_start(&s, 0);
    while (s.sent < n)
        now = sf_tx_poll(&s, now);
    printf("%llu frames, %llu periods skipped, hook saw %llu bytes\n", (unsigned long long)s.sent,
           (unsigned long long)s.skipped, hooked);
    return 0;
}
