/* The producer path with and without the control stage, for callgrind (bench/log_cpu.sh's
 * method; docs/BENCHMARKS.md "Control stage"):
 *
 *   ctl_bench N [control|control-miss]
 *
 * appends N frames of the gen:can pattern (frame k: id 0x100 + (k mod 16), k as 8
 * little-endian bytes) with sf_log_append_can to a logger on a RAM-backed exFAT volume,
 * calling sf_log_service every 256 frames. With `control`: 192 filter rules on the channel
 * (128 standard, 64 extended, exact and masked interleaved; every gen:can id accepted, by
 * the last rules), 32 prescalers (the first matching every gen:can id and keeping all of
 * them, so every frame still takes the whole path), 8 signals on gen:can ids used by a
 * start, a stop and 6 trigger conditions (flight recorder on) that never fire after the
 * start. Compare the inclusive instructions of sf_log_append_can per frame between the two. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streamfat/sf.h"
#include "streamfat/log.h"

static uint64_t now_ns;
static uint64_t clk(void *ctx) { (void)ctx; return now_ns; }

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: ctl_bench N [control|control-miss]\n");
        return 2;
    }
    uint64_t n = strtoull(argv[1], NULL, 0);
    /* control: every frame meets a prescaler (keeping it) and every other frame a signal
     * some condition uses (the worst case); control-miss: the same configuration with the
     * prescalers' and signals' ids outside the traffic (what the lookups alone cost) */
    int control = argc > 2 && !strncmp(argv[2], "control", 7);
    int miss = argc > 2 && !strcmp(argv[2], "control-miss");
    uint32_t base = miss ? 0x180u : 0x100u;
    static uint8_t mbuf[1 << 20], cache[64 << 10];
    static uint8_t ring[4 << 20] __attribute__((aligned(4096)));
    static uint8_t work[1 << 16] __attribute__((aligned(4096)));
    static uint64_t ctl_mem[(64 << 10) / 8];
    uint64_t bytes = 512ull << 20;
    uint8_t *disk = calloc(bytes / 512, 512);
    struct sf_rambd ram;
    struct sf_vol vol;
    struct sf_log lg;
    const char *why = "";
    if (!disk || sf_rambd_init(&ram, disk, 512, bytes / 512))
        return 1;
    struct sf_mkfs_opts mo = { .fs_type = SF_FS_EXFAT, .cluster_size = 32768, .serial = 1,
                               .buf = mbuf, .buf_size = sizeof mbuf };
    struct sf_vol_cfg vc = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    if (sf_mkfs(&ram.bd, &mo, &why) || sf_mount(&vol, &vc))
        return 1;

    static struct sf_ctl_rule rules[192];
    for (int i = 0; i < 190; i++) {
        int ext = i % 3 == 2;
        struct sf_ctl_rule r = { .ext = (uint8_t)ext, .reject = (uint8_t)(i & 1) };
        r.id = ext ? 0x18000000u + (uint32_t)i * 7 : 0x200u + (uint32_t)i * 5;
        r.mask = ext ? (i % 4 ? 0x1FFFFFFFu : 0x1FFFFFF0u) : (i % 4 ? 0x7FFu : 0x7F0u);
        rules[i] = r;
    }
    rules[190] = (struct sf_ctl_rule){ .id = 0x100, .mask = 0x7F0 };       /* accept gen:can */
    rules[191] = (struct sf_ctl_rule){ .id = 0x18FFFFFF, .mask = 0x1FFFFFFF, .ext = 1 };
    struct sf_ctl_filter filt = { .channel = 0, .default_reject = 1, .count = 192,
                                  .rules = rules };
    static struct sf_ctl_prescale pre[32];
    pre[0] = (struct sf_ctl_prescale){ .id = base, .mask = 0x7F0, .kind = SF_CTL_EVERY,
                                       .n = 1 };
    for (int i = 1; i < 32; i++)
        pre[i] = (struct sf_ctl_prescale){ .id = 0x300u + (uint32_t)i, .mask = 0x7FF,
                                           .kind = i % 3 == 0 ? SF_CTL_PERIOD :
                                                   i % 3 == 1 ? SF_CTL_EVERY : SF_CTL_CHANGE,
                                           .n = 3, .period_ns = 1000000, .ext = 0,
                                           .bytes = { 0xFF } };
    static struct sf_ctl_signal sig[8];
    for (int i = 0; i < 8; i++)
        sig[i] = (struct sf_ctl_signal){ .name = "s", .id = base + (uint32_t)i * 2,
                                         .start = (uint16_t)(i % 2 ? 39 : 0), .length = 32,
                                         .motorola = (uint8_t)(i % 2), .scale = 0.5 };
    static struct sf_ctl_cond trig[6];
    for (int i = 0; i < 6; i++)
        trig[i] = (struct sf_ctl_cond){ .kind = SF_CTL_SIGNAL, .op = SF_CTL_GT,
                                        .signal = (uint8_t)(2 + i), .value = 2e9 };
    struct sf_ctl_cfg ctl = {
        .filters = &filt, .filter_count = 1, .prescalers = pre, .prescaler_count = 32,
        .signals = sig, .signal_count = 8,
        .start = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GE, .signal = 0, .value = 0 },
        .stop = { .kind = SF_CTL_SIGNAL, .op = SF_CTL_GT, .signal = 1, .value = 2e9 },
        .triggers = trig, .trigger_count = 6, .trigger_holdoff_ns = 1000000000ull,
    };
    if (miss)                            /* started by the first frame of 0x100 */
        ctl.start = (struct sf_ctl_cond){ .kind = SF_CTL_FRAME, .id = 0x100 };
    uint32_t idx;
    int bad = sf_log_control_check(&ctl, &idx);
    if (bad) {
        fprintf(stderr, "ctl_bench: %s (%u)\n", sf_log_control_why(bad), idx);
        return 1;
    }
    struct sf_log_cfg c = {
        .vol = &vol, .ring = ring, .ring_size = sizeof ring, .block_size = 65536,
        .clock = clk, .session_id = 1, .work = work, .work_size = sizeof work,
    };
    if (control) {
        c.pre_ns = 1000000;              /* triggers need the flight recorder */
        c.post_ns = 1000000;
    }
    int err = sf_log_open(&lg, &c);
    if (!err && control)
        err = sf_log_control(&lg, &ctl, ctl_mem, sizeof ctl_mem);
    if (err) {
        fprintf(stderr, "ctl_bench: sf_log_open / sf_log_control: %s\n", sf_strerror(err));
        return 1;
    }
    uint8_t d[8];
    uint64_t refused = 0;
    for (uint64_t k = 0; k < n; k++) {
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)(k >> (8 * i));
        now_ns = k * 1000;
        if (sf_log_append_can(&lg, 0, now_ns, 0x100u + (uint32_t)(k & 15), 0, d, 8))
            refused++;
        if ((k & 255) == 255)
            sf_log_service(&lg);
    }
    err = sf_log_close(&lg);
    struct sf_log_stats st;
    sf_log_get_stats(&lg, &st);
    printf("frames %llu refused %llu in %llu filtered %llu prescaled %llu paused %llu "
           "triggers %llu\n", (unsigned long long)n, (unsigned long long)refused,
           (unsigned long long)st.records_in, (unsigned long long)st.records_filtered,
           (unsigned long long)st.records_prescaled, (unsigned long long)st.records_paused,
           (unsigned long long)st.triggers);
    sf_unmount(&vol);
    free(disk);
    return err ? 1 : 0;
}
