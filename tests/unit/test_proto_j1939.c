/* J1939 transport (src/proto/j1939.c) and NMEA 2000 fast packets (src/proto/fast.c):
 * the id rules, BAM, RTS/CTS with a hold and a retransmission, aborts, every broken case
 * with its outcome and counter. */
#include "check.h"
#include "proto_rig.h"

static struct rig r;
static uint8_t pl[2048];

#define CM(prio, da, sa) ((uint32_t)(prio) << 26 | 0xEC0000u | (uint32_t)(da) << 8 | (sa))
#define DT(prio, da, sa) ((uint32_t)(prio) << 26 | 0xEB0000u | (uint32_t)(da) << 8 | (sa))

static void cm(uint64_t ms, uint8_t sa, uint8_t da, uint8_t ctl, uint32_t size, uint8_t pk,
               uint8_t b4, uint32_t pgn)
{
    rig_f(&r, ms, CM(7, da, sa), SF_CAN_EFF, 8, ctl, size & 0xFF, size >> 8, pk, b4,
          pgn & 0xFF, (pgn >> 8) & 0xFF, pgn >> 16);
}

static void dt(uint64_t ms, uint8_t sa, uint8_t da, uint8_t seq, const uint8_t *d)
{
    uint8_t f[8] = {seq, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    memcpy(f + 1, d, 7);
    rig_frame(&r, ms, DT(7, da, sa), SF_CAN_EFF, f, 8);
}

/* BAM of n bytes from sa, packets from..to (1-based), 50 ms apart from ms */
static void bam_data(uint64_t ms, uint8_t sa, uint8_t da, uint32_t n, int from, int to)
{
    (void)n;
    for (int i = from; i <= to; i++)
        dt(ms + 50u * (unsigned)(i - from), sa, da, (uint8_t)i, pl + 7 * (i - 1));
}

static void ids(void)
{
    struct sf_j1939_id j;
    sf_j1939_split(0x18FECA00, &j);   /* DM1 from 0x00: PDU2 */
    CHECK(j.pgn == 0xFECA && j.prio == 6 && j.sa == 0 && j.da == 0xFF);
    sf_j1939_split(0x0CEA21F9, &j);   /* request to 0x21: PDU1 */
    CHECK(j.pgn == 0xEA00 && j.prio == 3 && j.sa == 0xF9 && j.da == 0x21);
    sf_j1939_split(0x19F80102, &j);   /* data page 1, PDU2 */
    CHECK(j.pgn == 0x1F801 && j.prio == 6 && j.sa == 0x02 && j.da == 0xFF);
    sf_j1939_split(0x1DEF2003, &j);   /* DP 1, PDU1 */
    CHECK(j.pgn == 0x1EF00 && j.prio == 7 && j.da == 0x20 && j.sa == 0x03);
}

static void bam(void)
{
    rig_init(&r, NULL);
    fill_pattern(pl, 1785, 1);
    /* DM1 with 20 bytes: 3 packets */
    cm(0, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    bam_data(50, 0x00, 0xFF, 20, 1, 3);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].proto, SF_PROTO_J1939);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].pgn, 0xFECA);
    CHECK_EQ(r.m[0].sa, 0x00);
    CHECK_EQ(r.m[0].da, 0xFF);
    CHECK_EQ(r.m[0].prio, 7);
    CHECK_EQ(r.m[0].id, CM(7, 0xFF, 0x00));
    CHECK_EQ(r.m[0].length, 20);
    CHECK_EQ(r.m[0].frames, 3);
    CHECK_EQ(r.m[0].first_ts, 0);
    CHECK_EQ(r.m[0].last_ts, 150000000ull);
    CHECK(memcmp(r.m[0].payload, pl, 20) == 0);
    /* the largest: 1785 bytes in 255 packets; two sources interleaved */
    cm(1000, 0x10, 0xFF, 32, 1785, 255, 0xFF, 0xFEE3);
    cm(1001, 0x11, 0xFF, 32, 9, 2, 0xFF, 0xFEE4);
    for (int i = 1; i <= 255; i++) {
        dt(1002 + (unsigned)i, 0x10, 0xFF, (uint8_t)i, pl + 7 * (i - 1));
        if (i <= 2)
            dt(1002 + (unsigned)i, 0x11, 0xFF, (uint8_t)i, pl + 7 * (i - 1));
    }
    REQUIRE(r.n == 3);
    CHECK(r.m[1].sa == 0x11 && r.m[1].length == 9 && memcmp(r.m[1].payload, pl, 9) == 0);
    CHECK(r.m[2].sa == 0x10 && r.m[2].length == 1785 && r.m[2].pgn == 0xFEE3);
    CHECK(memcmp(r.m[2].payload, pl, 1785) == 0);
    const struct sf_proto_stats *st = rig_stats(&r);
    CHECK_EQ(st->j1939_cm, 3);
    CHECK_EQ(st->j1939_dt, 3 + 255 + 2);
    CHECK_EQ(st->messages_broken, 0);
    /* plain J1939 frames are not the transport's */
    rig_f(&r, 3000, 0x18FECA00, SF_CAN_EFF, 8, 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK_EQ(r.n, 3);
}

static void rts_cts(void)
{
    fill_pattern(pl, 100, 2);
    /* 0xF9 sends 30 bytes (5 packets) to 0x21; CTS 2 at a time, a hold, a retransmission */
    rig_init(&r, NULL);
    cm(0, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 10, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 2, 1, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    dt(20, 0xF9, 0x21, 1, pl);
    dt(30, 0xF9, 0x21, 2, pl + 7);
    /* hold: CTS with 0 packets; T4 (1050 ms) then applies */
    rig_f(&r, 40, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 0, 0xFF, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    rig_f(&r, 1080, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 2, 3, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    dt(1090, 0xF9, 0x21, 3, pl + 14);
    dt(1100, 0xF9, 0x21, 4, pl + 21);
    /* the receiver asks for packet 4 again */
    rig_f(&r, 1110, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 2, 4, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    dt(1120, 0xF9, 0x21, 4, pl + 21);
    dt(1130, 0xF9, 0x21, 5, pl + 28);
    rig_f(&r, 1140, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 19, 30, 0, 5, 0xFF, 0x00, 0xD9, 0x00);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].length, 30);
    CHECK(memcmp(r.m[0].payload, pl, 30) == 0);
    CHECK_EQ(r.m[0].sa, 0xF9);
    CHECK_EQ(r.m[0].da, 0x21);
    CHECK_EQ(r.m[0].pgn, 0xD900);
    CHECK_EQ(rig_stats(&r)->j1939_orphan, 0);
    /* a TP.DT whose CTS the log does not hold is still taken (a filtered logger) */
    cm(2000, 0xF9, 0x21, 16, 14, 2, 0xFF, 0xD900);
    dt(2010, 0xF9, 0x21, 1, pl);
    dt(2020, 0xF9, 0x21, 2, pl + 7);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 14);
}

static void j1939_broken(void)
{
    const struct sf_proto_stats *st;
    fill_pattern(pl, 100, 3);
    /* TP.DT before the log's start */
    rig_init(&r, NULL);
    bam_data(0, 0x00, 0xFF, 20, 2, 3);
    rig_finish(&r);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->j1939_orphan, 2);
    /* a missing packet, a repeated one */
    rig_init(&r, NULL);
    cm(0, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(50, 0x00, 0xFF, 1, pl);
    dt(100, 0x00, 0xFF, 3, pl + 14);
    cm(200, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(250, 0x00, 0xFF, 1, pl);
    dt(300, 0x00, 0xFF, 1, pl);
    st = rig_stats(&r);
    REQUIRE(r.n == 2);
    CHECK(r.m[0].status == SF_MSG_BAD_SEQ && r.m[0].length == 7 && r.m[0].declared == 20);
    CHECK(r.m[1].status == SF_MSG_BAD_SEQ && r.m[1].length == 7);
    CHECK_EQ(st->j1939_wrong_seq, 1);
    CHECK_EQ(st->j1939_dup_dt, 1);
    /* T1: 750 ms between BAM packets is in time, 751 is not */
    rig_init(&r, NULL);
    cm(0, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(750, 0x00, 0xFF, 1, pl);
    dt(1501, 0x00, 0xFF, 2, pl + 7);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_TIMEOUT && r.m[0].length == 7);
    CHECK_EQ(st->timeouts, 1);
    CHECK_EQ(st->j1939_orphan, 1);
    /* T3: no CTS within 1250 ms of the RTS; T2: no data within 1250 ms of a CTS;
       T4: no CTS within 1050 ms of a hold */
    rig_init(&r, NULL);
    cm(0, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 1250, 0x100, 0, 0);
    CHECK_EQ(r.n, 0);
    rig_f(&r, 1251, 0x100, 0, 0);
    CHECK(r.n == 1 && r.m[0].status == SF_MSG_TIMEOUT);
    cm(2000, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 2010, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 2, 1, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    rig_f(&r, 3261, 0x100, 0, 0);
    CHECK(r.n == 2 && r.m[1].status == SF_MSG_TIMEOUT);
    cm(4000, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 4010, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 0, 0xFF, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    rig_f(&r, 5060, 0x100, 0, 0);
    CHECK_EQ(r.n, 2);
    rig_f(&r, 5061, 0x100, 0, 0);
    CHECK(r.n == 3 && r.m[2].status == SF_MSG_TIMEOUT);
    /* configured timers */
    struct sf_proto_config c = {.t1_ms = 100};
    rig_init(&r, &c);
    cm(0, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(101, 0x00, 0xFF, 1, pl);
    CHECK(r.n == 1 && r.m[0].status == SF_MSG_TIMEOUT);
    /* aborts, from either side, of the PGN being sent */
    rig_init(&r, NULL);
    cm(0, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 10, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 255, 3, 0xFF, 0xFF, 0xFF, 0x00, 0xDA, 0x00);
    CHECK_EQ(r.n, 0);   /* another PGN */
    rig_f(&r, 11, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 255, 3, 0xFF, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_ABORTED);
    cm(20, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 21, CM(7, 0x21, 0xF9), SF_CAN_EFF, 8, 255, 1, 0xFF, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[1].status, SF_MSG_ABORTED);
    CHECK_EQ(rig_stats(&r)->j1939_abort, 2);
    /* a new BAM before the last finished; impossible announcements; a short TP.DT; a CTS
       asking beyond the next packet; the log ends */
    rig_init(&r, NULL);
    cm(0, 0x00, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(50, 0x00, 0xFF, 1, pl);
    cm(100, 0x00, 0xFF, 32, 9, 2, 0xFF, 0xFECA);
    dt(150, 0x00, 0xFF, 1, pl);
    dt(200, 0x00, 0xFF, 2, pl + 7);
    cm(300, 0x01, 0xFF, 32, 20, 4, 0xFF, 0xFECA);     /* 4 packets for 20 bytes */
    cm(301, 0x01, 0xFF, 32, 8, 2, 0xFF, 0xFECA);      /* fits a frame */
    cm(302, 0x01, 0xFF, 32, 1786, 255, 0xFF, 0xFECA); /* too long */
    cm(303, 0x01, 0xFF, 99, 20, 3, 0xFF, 0xFECA);     /* unknown control byte */
    rig_f(&r, 304, CM(7, 0xFF, 0x01), SF_CAN_EFF, 3, 32, 20, 0);   /* short TP.CM */
    cm(400, 0x02, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    rig_f(&r, 450, DT(7, 0xFF, 0x02), SF_CAN_EFF, 4, 1, 1, 2, 3);
    cm(500, 0xF9, 0x21, 16, 30, 5, 2, 0xD900);
    rig_f(&r, 510, CM(7, 0xF9, 0x21), SF_CAN_EFF, 8, 17, 2, 3, 0xFF, 0xFF, 0x00, 0xD9, 0x00);
    cm(600, 0x03, 0xFF, 32, 20, 3, 0xFF, 0xFECA);
    dt(650, 0x03, 0xFF, 1, pl);
    rig_finish(&r);
    st = rig_stats(&r);
    REQUIRE(r.n == 5);
    CHECK(r.m[0].status == SF_MSG_REPLACED && r.m[0].length == 7);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 9);
    CHECK(r.m[2].status == SF_MSG_BAD_LENGTH && r.m[2].length == 0);
    CHECK(r.m[3].status == SF_MSG_BAD_SEQ && r.m[3].sa == 0xF9);
    CHECK(r.m[4].status == SF_MSG_END && r.m[4].length == 7);
    CHECK_EQ(st->j1939_bad_cm, 5);
    CHECK_EQ(st->j1939_short_dt, 1);
    CHECK_EQ(st->j1939_wrong_seq, 1);
    CHECK_EQ(st->replaced, 1);
    CHECK_EQ(st->ended, 1);
    /* switched off */
    struct sf_proto_config off = {.off = SF_PROTO_NO_J1939};
    rig_init(&r, &off);
    cm(0, 0x00, 0xFF, 32, 9, 2, 0xFF, 0xFECA);
    bam_data(50, 0x00, 0xFF, 9, 1, 2);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->j1939_cm, 0);
}

/* NMEA 2000 fast packet frames of PGN 129029 (GNSS position, 43 bytes) from sa */
static int fast_frames(struct fr *out, uint64_t ms, uint8_t sa, uint8_t seq, uint32_t pgn,
                       const uint8_t *d, uint32_t n)
{
    int k = 0;
    uint32_t pos = 0;
    for (uint8_t fc = 0; pos < n || fc == 0; fc++) {
        struct fr *f = &out[k++];
        memset(f, 0xFF, sizeof *f);
        f->ms = ms + fc;
        f->id = 3u << 26 | pgn << 8 | sa;
        f->flags = SF_CAN_EFF;
        f->len = 8;
        f->d[0] = (uint8_t)(seq << 5 | fc);
        uint32_t c;
        if (fc == 0) {
            f->d[1] = (uint8_t)n;
            c = n < 6 ? n : 6;
            memcpy(f->d + 2, d, c);
        } else {
            c = n - pos < 7 ? n - pos : 7;
            memcpy(f->d + 1, d + pos, c);
        }
        pos += c;
    }
    return k;
}

static void fast(void)
{
    static struct fr f[64];
    const uint32_t pgns[] = {129029, 126996};
    struct sf_proto_config c = {.fast_pgns = pgns, .n_fast_pgns = 2};
    rig_init(&r, &c);
    fill_pattern(pl, 223, 4);
    int k = fast_frames(f, 0, 0x23, 2, 129029, pl, 43);
    CHECK_EQ(k, 7);
    rig_frames(&r, f, k);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].proto, SF_PROTO_FAST);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].pgn, 129029);
    CHECK_EQ(r.m[0].sa, 0x23);
    CHECK_EQ(r.m[0].prio, 3);
    CHECK_EQ(r.m[0].length, 43);
    CHECK(memcmp(r.m[0].payload, pl, 43) == 0);
    /* the largest, 223 bytes in 32 frames; a short one in frame 0 alone */
    k = fast_frames(f, 100, 0x24, 7, 126996, pl, 223);
    CHECK_EQ(k, 32);
    rig_frames(&r, f, k);
    k = fast_frames(f, 200, 0x24, 0, 126996, pl, 5);
    rig_frames(&r, f, k);
    REQUIRE(r.n == 3);
    CHECK(r.m[1].length == 223 && memcmp(r.m[1].payload, pl, 223) == 0);
    CHECK(r.m[2].length == 5 && r.m[2].frames == 1);
    /* a PGN not named is not taken */
    k = fast_frames(f, 300, 0x24, 0, 129025, pl, 20);
    rig_frames(&r, f, k);
    CHECK_EQ(r.n, 3);
    CHECK_EQ(rig_stats(&r)->fast_frames, 7 + 32 + 1);

    /* broken: orphans, another sequence, a missing frame, a repeated one, a new frame 0,
       too long, timeout, the end */
    const struct sf_proto_stats *st;
    rig_init(&r, &c);
    k = fast_frames(f, 0, 0x23, 2, 129029, pl, 43);
    rig_frames(&r, f + 2, 2);                  /* before the log's start */
    rig_frames(&r, f, 2);
    struct fr other = f[2];
    other.d[0] = (uint8_t)(3 << 5 | 2);        /* another sequence counter */
    rig_frames(&r, &other, 1);
    rig_frames(&r, f + 3, 1);                  /* frame 2 missing */
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_BAD_SEQ && r.m[0].length == 13);
    CHECK_EQ(st->fast_orphan, 3);
    CHECK_EQ(st->fast_wrong_seq, 1);
    rig_frames(&r, f, 3);
    rig_frames(&r, f + 2, 1);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_BAD_SEQ && r.m[1].length == 20);
    CHECK_EQ(st->fast_dup, 1);
    rig_frames(&r, f, 2);
    rig_frames(&r, f, k);
    REQUIRE(r.n == 4);
    CHECK(r.m[2].status == SF_MSG_REPLACED && r.m[3].status == SF_MSG_OK);
    struct fr big = f[0];
    big.d[1] = 224;
    rig_frames(&r, &big, 1);
    CHECK_EQ(st->fast_bad_len, 1);
    rig_frames(&r, f, 2);
    rig_f(&r, 752, 0x100, 0, 0);
    REQUIRE(r.n == 5);
    CHECK_EQ(r.m[4].status, SF_MSG_TIMEOUT);
    rig_frames(&r, f, 2);
    rig_finish(&r);
    REQUIRE(r.n == 6);
    CHECK_EQ(r.m[5].status, SF_MSG_END);
}

int main(void)
{
    ids();
    bam();
    rts_cts();
    j1939_broken();
    fast();
    TEST_END();
}
