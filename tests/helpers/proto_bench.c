/* proto_bench: reassembly speed (src/proto/) on a mixed log made in memory, in frames per
 * CPU second (docs/BENCHMARKS.md, "Reassembly").
 *
 *   proto_bench [FRAMES] [--decode]      (default 10,000,000)
 *   proto_bench FRAMES --candump FILE    write the log as candump -L lines instead (the
 *                                        same frames for bench/proto_python_bench.py)
 *
 * The log: J1939 traffic from 8 sources, a tenth of it TP frames (BAM of 20..200 bytes:
 * TP.CM then TP.DT); an OBD-II / UDS polling session (0x7DF / 0x7E0 requests, 0x7E8
 * answers as SF or FF + CFs with flow control); plain 11-bit frames. One frame per 100 us.
 * With --decode, what the decoded views do on top (include/streamfat/diag.h): every 29-bit
 * frame split into its J1939 fields, DM1 (PGN 0xFECA) frames and messages decoded with
 * their DTCs, every ISO-TP message decoded as UDS (service, DID, DTCs) or OBD-II (PIDs).
 * Prints "proto_bench frames=N messages=M cpu_s=S frames_per_cpu_s=R". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamfat/proto.h"
#include "streamfat/diag.h"

struct frame {
    uint64_t ts;
    uint32_t id, flags;
    uint8_t len, d[8];
};

static uint32_t rng = 12345;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static size_t n, cap;
static struct frame *fr;
static uint64_t now;

static void put(uint32_t id, uint32_t flags, const uint8_t *d, uint8_t len)
{
    if (n == cap)
        return;
    struct frame *f = &fr[n++];
    f->ts = now;
    now += 100000;
    f->id = id;
    f->flags = flags;
    f->len = len;
    memcpy(f->d, d, len);
}

static void bam(uint8_t sa)
{
    uint32_t size = 20 + rnd() % 181, pk = (size + 6) / 7;
    uint8_t cm[8] = {32, (uint8_t)size, (uint8_t)(size >> 8), (uint8_t)pk, 0xFF, 0xCA, 0xFE, 0};
    put(0x1CECFF00u | sa, SF_CAN_EFF, cm, 8);
    for (uint32_t i = 1; i <= pk; i++) {
        uint8_t d[8] = {(uint8_t)i, 1, 2, 3, 4, 5, 6, 7};
        put(0x1CEBFF00u | sa, SF_CAN_EFF, d, 8);
    }
}

static void uds(void)
{
    uint8_t req[8] = {0x03, 0x22, 0xF1, 0x90, 0xAA, 0xAA, 0xAA, 0xAA};
    put(0x7E0, 0, req, 8);
    uint32_t len = rnd() % 4 ? 3 + rnd() % 4 : 20 + rnd() % 100;
    if (len <= 7) {
        uint8_t d[8] = {(uint8_t)len, 0x62, 0xF1, 0x90, 1, 2, 3, 0xAA};
        put(0x7E8, 0, d, 8);
        return;
    }
    uint8_t ff[8] = {(uint8_t)(0x10 | len >> 8), (uint8_t)len, 0x62, 0xF1, 0x90, 1, 2, 3};
    put(0x7E8, 0, ff, 8);
    uint8_t fc[8] = {0x30, 0, 0, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA};
    put(0x7E0, 0, fc, 8);
    uint8_t sn = 1;
    for (uint32_t got = 6; got < len; got += 7) {
        uint8_t cf[8] = {(uint8_t)(0x20 | sn), 1, 2, 3, 4, 5, 6, 7};
        sn = (sn + 1) & 15;
        put(0x7E8, 0, cf, 8);
    }
}

static uint64_t decoded;

static void dm1(const uint8_t *d, uint32_t len)
{
    struct sf_dm1 m;
    struct sf_dm1_dtc t;
    if (sf_dm1_parse(d, len, &m))
        return;
    for (uint32_t i = 0; sf_dm1_dtc_at(&m, i, &t); i++)
        decoded += t.spn + t.fmi;
}

static void decode_msg(const struct sf_proto_msg *m)
{
    if (m->status != SF_MSG_OK)
        return;
    if (m->proto == SF_PROTO_J1939) {
        if (m->pgn == SF_J1939_PGN_DM1)
            dm1(m->payload, m->length);
        return;
    }
    if (m->proto != SF_PROTO_ISOTP)
        return;
    if (sf_uds_is_uds(m->payload, m->length)) {
        struct sf_uds u;
        uint32_t dtc;
        uint8_t st;
        if (sf_uds_parse(m->payload, m->length, &u))
            return;
        decoded += u.did + u.len;
        for (uint32_t i = 0; sf_uds_dtc_at(&u, i, &dtc, &st); i++)
            decoded += dtc;
    } else {
        struct sf_obd_pid o;
        for (uint32_t i = 0; sf_obd_pid_at(m->payload, m->length, i, &o); i++)
            decoded += o.raw;
    }
}

static void decode_frame(const struct frame *f)
{
    if (!(f->flags & SF_CAN_EFF))
        return;
    struct sf_j1939_id j;
    sf_j1939_split(f->id, &j);
    decoded += j.sa;
    if (j.pgn == SF_J1939_PGN_DM1)
        dm1(f->d, f->len);
}

/* The frames as candump -L lines on can0 (times from 1700000000 s). */
static int write_candump(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = 1700000000000000000ull + fr[i].ts;
        fprintf(f, "(%" PRIu64 ".%06" PRIu64 ") can0 ", t / 1000000000u,
                t % 1000000000u / 1000u);
        if (fr[i].flags & SF_CAN_EFF)
            fprintf(f, "%08" PRIX32 "#", fr[i].id);
        else
            fprintf(f, "%03" PRIX32 "#", fr[i].id);
        for (unsigned k = 0; k < fr[i].len; k++)
            fprintf(f, "%02X", fr[i].d[k]);
        fputc('\n', f);
    }
    return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
    int decode = argc > 2 && strcmp(argv[2], "--decode") == 0;
    const char *candump = argc > 3 && strcmp(argv[2], "--candump") == 0 ? argv[3] : NULL;
    cap = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
    fr = calloc(cap, sizeof *fr);
    if (!fr)
        return 1;
    while (n < cap) {
        uint32_t r = rnd() % 100;
        uint8_t d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        if (r < 55) {              /* J1939 single frames */
            put(0x18FEF100u | (rnd() % 8), SF_CAN_EFF, d, 8);
        } else if (r < 56) {       /* a BAM now and then: about a tenth of the J1939 frames */
            if (rnd() % 3 == 0)
                bam((uint8_t)(rnd() % 8));
        } else if (r < 58) {       /* the polling session */
            uds();
        } else {                   /* plain frames */
            put(0x100 + rnd() % 0x400, 0, d, 8);
        }
    }
    if (candump) {
        int rc = write_candump(candump);
        free(fr);
        return rc;
    }
    static struct sf_proto_session sess[64];
    static uint8_t arena[1 << 16];
    struct sf_proto_config cfg = {.sessions = sess, .nsessions = 64, .arena = arena,
                                  .arena_size = sizeof arena};
    struct sf_proto p;
    struct sf_proto_msg m;
    uint64_t msgs = 0, bytes = 0;
    if (sf_proto_init(&p, &cfg))
        return 1;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (size_t i = 0; i < n; i++) {
        struct sf_proto_frame f = {fr[i].ts, fr[i].id, fr[i].flags, 0, fr[i].len, fr[i].d};
        if (decode)
            decode_frame(&fr[i]);
        if (sf_proto_feed(&p, &f) > 0)
            while (sf_proto_next(&p, &m)) {
                msgs++;
                bytes += m.length;
                if (decode)
                    decode_msg(&m);
            }
    }
    sf_proto_finish(&p);
    while (sf_proto_next(&p, &m)) {
        msgs++;
        if (decode)
            decode_msg(&m);
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    const struct sf_proto_stats *st = sf_proto_stats(&p);
    uint64_t j1939 = 0;
    for (size_t i = 0; i < n; i++)
        j1939 += (fr[i].flags & SF_CAN_EFF) != 0;
    printf("proto_bench frames=%zu j1939=%" PRIu64 " tp=%" PRIu64 " isotp=%" PRIu64
           " messages=%" PRIu64 " broken=%" PRIu64 " bytes=%" PRIu64
           " decoded=%s cpu_s=%.3f frames_per_cpu_s=%.0f\n", n, j1939, st->j1939_cm + st->j1939_dt,
           st->isotp_sf + st->isotp_ff + st->isotp_cf + st->isotp_fc, msgs,
           st->messages_broken, bytes, decode ? (decoded ? "yes" : "none") : "no", s,
           (double)n / s);
    free(fr);
    return st->messages_broken ? 1 : 0;
}
