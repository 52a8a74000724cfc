/* J1939 extended transport (src/proto/j1939.c, SAE J1939-21 ETP: ETP.CM 0xC800 with RTS,
 * CTS, DPO, EndOfMsgAck and Connection Abort; ETP.DT 0xC700): messages above 1,785 bytes
 * as the Linux kernel's can-j1939 sends them (windows of 255 packets) and in small CTS
 * windows with a hold and a retransmission, a TP and an ETP connection of one pair at
 * once, and every broken case with its outcome and counter. */
#include "check.h"
#include "proto_rig.h"

static struct rig r;
static uint8_t pl[24000];

#define ECM(prio, da, sa) ((uint32_t)(prio) << 26 | 0xC80000u | (uint32_t)(da) << 8 | (sa))
#define EDT(prio, da, sa) ((uint32_t)(prio) << 26 | 0xC70000u | (uint32_t)(da) << 8 | (sa))
#define TCM(prio, da, sa) ((uint32_t)(prio) << 26 | 0xEC0000u | (uint32_t)(da) << 8 | (sa))
#define TDT(prio, da, sa) ((uint32_t)(prio) << 26 | 0xEB0000u | (uint32_t)(da) << 8 | (sa))

#define PGN 0xEF00u

static void ecm(uint64_t ms, uint8_t sa, uint8_t da, uint8_t ctl, uint8_t b1, uint32_t v)
{
    rig_f(&r, ms, ECM(6, da, sa), SF_CAN_EFF, 8, ctl, b1, v & 0xFF, (v >> 8) & 0xFF,
          (v >> 16) & 0xFF, PGN & 0xFF, (PGN >> 8) & 0xFF, PGN >> 16);
}

static void rts(uint64_t ms, uint8_t sa, uint8_t da, uint32_t size)
{
    rig_f(&r, ms, ECM(6, da, sa), SF_CAN_EFF, 8, 20, size & 0xFF, (size >> 8) & 0xFF,
          (size >> 16) & 0xFF, size >> 24, PGN & 0xFF, (PGN >> 8) & 0xFF, PGN >> 16);
}

/* CTS from the responder da (to sa): n packets from packet `next` */
static void cts(uint64_t ms, uint8_t sa, uint8_t da, uint8_t n, uint32_t next)
{
    ecm(ms, da, sa, 21, n, next);
}

static void dpo(uint64_t ms, uint8_t sa, uint8_t da, uint8_t n, uint32_t off)
{
    ecm(ms, sa, da, 22, n, off);
}

/* ETP.DT number seq carrying message packet `pkt` (1-based) of pl, padded with 0xFF */
static void edt(uint64_t ms, uint8_t sa, uint8_t da, uint8_t seq, uint32_t pkt, uint32_t size)
{
    uint8_t f[8] = {seq, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    uint32_t at = (pkt - 1u) * 7u, n = size - at < 7 ? size - at : 7;
    memcpy(f + 1, pl + at, n);
    rig_frame(&r, ms, EDT(6, da, sa), SF_CAN_EFF, f, 8);
}

/* A whole ETP transfer in windows of `win` packets, 1 ms a frame from *ms: CTS, DPO,
 * ETP.DTs, ... EndOfMsgAck. */
static void etp_send(uint64_t *ms, uint8_t sa, uint8_t da, uint32_t size, unsigned win)
{
    uint32_t packets = (size + 6) / 7, done = 0;
    rts((*ms)++, sa, da, size);
    while (done < packets) {
        uint32_t n = packets - done < win ? packets - done : win;
        cts((*ms)++, sa, da, (uint8_t)n, done + 1);
        dpo((*ms)++, sa, da, (uint8_t)n, done);
        for (uint32_t i = 1; i <= n; i++)
            edt((*ms)++, sa, da, (uint8_t)i, done + i, size);
        done += n;
    }
    ecm((*ms)++, da, sa, 23, size & 0xFF, size >> 8);   /* EndOfMsgAck */
}

static void whole(void)
{
    fill_pattern(pl, sizeof pl, 5);
    rig_init(&r, NULL);
    uint64_t ms = 0;
    /* as Linux 6.1 sends 1,786 bytes: windows of 255 packets, then one of 1 */
    etp_send(&ms, 0x25, 0x42, 1786, 255);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].proto, SF_PROTO_J1939);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].pgn, PGN);
    CHECK_EQ(r.m[0].sa, 0x25);
    CHECK_EQ(r.m[0].da, 0x42);
    CHECK_EQ(r.m[0].prio, 6);
    CHECK_EQ(r.m[0].id, ECM(6, 0x42, 0x25));
    CHECK_EQ(r.m[0].length, 1786);
    CHECK_EQ(r.m[0].declared, 1786);
    CHECK_EQ(r.m[0].frames, 256);
    CHECK_EQ(r.m[0].first_ts, 0);
    CHECK(memcmp(r.m[0].payload, pl, 1786) == 0);
    /* 20,000 bytes (2,858 packets, 12 windows of 255), and in windows of 16 */
    etp_send(&ms, 0x25, 0x42, 20000, 255);
    etp_send(&ms, 0x26, 0x43, 5000, 16);
    REQUIRE(r.n == 3);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 20000 && r.m[1].frames == 2858);
    CHECK(memcmp(r.m[1].payload, pl, 20000) == 0);
    CHECK(r.m[2].status == SF_MSG_OK && r.m[2].length == 5000 && r.m[2].sa == 0x26);
    CHECK(memcmp(r.m[2].payload, pl, 5000) == 0);
    const struct sf_proto_stats *st = rig_stats(&r);
    CHECK_EQ(st->messages_broken, 0);
    CHECK_EQ(st->j1939_orphan, 0);
    CHECK_EQ(st->j1939_bad_cm, 0);
    CHECK_EQ(st->j1939_dt, 256 + 2858 + 715);
}

static void hold_and_retransmit(void)
{
    fill_pattern(pl, sizeof pl, 6);
    rig_init(&r, NULL);
    /* 1,800 bytes (258 packets) in windows of 100: a hold, then packets 151.. again */
    rts(0, 0x10, 0x20, 1800);
    cts(1, 0x10, 0x20, 100, 1);
    dpo(2, 0x10, 0x20, 100, 0);
    for (uint32_t i = 1; i <= 100; i++)
        edt(2 + i, 0x10, 0x20, (uint8_t)i, i, 1800);
    cts(200, 0x10, 0x20, 0, 0xFFFFFF);          /* hold: T4 */
    cts(1240, 0x10, 0x20, 100, 101);
    dpo(1241, 0x10, 0x20, 100, 100);
    for (uint32_t i = 1; i <= 100; i++)
        edt(1241 + i, 0x10, 0x20, (uint8_t)i, 100 + i, 1800);
    cts(1400, 0x10, 0x20, 100, 151);            /* the receiver wants 151.. again */
    dpo(1401, 0x10, 0x20, 100, 150);
    for (uint32_t i = 1; i <= 100; i++)
        edt(1401 + i, 0x10, 0x20, (uint8_t)i, 150 + i, 1800);
    CHECK_EQ(r.n, 0);
    cts(1600, 0x10, 0x20, 100, 251);
    dpo(1601, 0x10, 0x20, 100, 250);            /* 8 packets are left: the window is 8 */
    for (uint32_t i = 1; i <= 8; i++)
        edt(1601 + i, 0x10, 0x20, (uint8_t)i, 250 + i, 1800);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].length, 1800);
    CHECK(memcmp(r.m[0].payload, pl, 1800) == 0);
    /* the DPO decides: a window whose CTS the log does not hold is still taken */
    rts(3000, 0x10, 0x20, 1790);
    dpo(3001, 0x10, 0x20, 255, 0);
    for (uint32_t i = 1; i <= 255; i++)
        edt(3001 + i, 0x10, 0x20, (uint8_t)i, i, 1790);
    dpo(3300, 0x10, 0x20, 1, 255);
    edt(3301, 0x10, 0x20, 1, 256, 1790);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 1790);
    CHECK(memcmp(r.m[1].payload, pl, 1790) == 0);
}

/* TP and ETP are two connections: one pair may carry both at once */
static void beside_tp(void)
{
    fill_pattern(pl, sizeof pl, 7);
    rig_init(&r, NULL);
    rts(0, 0x30, 0x40, 2000);
    rig_f(&r, 1, TCM(7, 0x40, 0x30), SF_CAN_EFF, 8, 16, 14, 0, 2, 0xFF, 0x00, 0xEF, 0x00);
    cts(2, 0x30, 0x40, 255, 1);
    dpo(3, 0x30, 0x40, 255, 0);
    for (uint32_t i = 1; i <= 255; i++) {
        edt(3 + i, 0x30, 0x40, (uint8_t)i, i, 2000);
        if (i <= 2) {
            uint8_t f[8] = {(uint8_t)i};
            memcpy(f + 1, pl + 7 * (i - 1), 7);
            rig_frame(&r, 3 + i, TDT(7, 0x40, 0x30), SF_CAN_EFF, f, 8);
        }
    }
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_OK && r.m[0].length == 14);
    CHECK_EQ(r.m[0].id, TCM(7, 0x40, 0x30));
    /* a TP abort of the PGN does not end the ETP connection */
    rig_f(&r, 300, TCM(7, 0x40, 0x30), SF_CAN_EFF, 8, 255, 1, 0xFF, 0xFF, 0xFF, 0x00, 0xEF,
          0x00);
    CHECK_EQ(r.n, 1);
    cts(301, 0x30, 0x40, 255, 256);
    dpo(302, 0x30, 0x40, 31, 255);
    for (uint32_t i = 1; i <= 31; i++)
        edt(302 + i, 0x30, 0x40, (uint8_t)i, 255 + i, 2000);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 2000);
    CHECK_EQ(r.m[1].id, ECM(6, 0x40, 0x30));
    CHECK(memcmp(r.m[1].payload, pl, 2000) == 0);
}

static void broken(void)
{
    const struct sf_proto_stats *st;
    fill_pattern(pl, sizeof pl, 8);
    /* ETP.DT, CTS and DPO without a session */
    rig_init(&r, NULL);
    edt(0, 0x10, 0x20, 1, 1, 2000);
    cts(1, 0x10, 0x20, 10, 1);
    dpo(2, 0x10, 0x20, 10, 0);
    rig_finish(&r);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->j1939_orphan, 3);
    /* impossible announcements: 1,785 bytes (TP's), more than 7 x (2^24 - 1); a DPO for
       0 packets; an unknown control byte; a short ETP.CM */
    rig_init(&r, NULL);
    rts(0, 0x10, 0x20, 1785);
    rts(1, 0x11, 0x20, 7u * 0xFFFFFFu + 1u);
    rts(2, 0x12, 0x20, 2000);
    dpo(3, 0x12, 0x20, 0, 0);
    ecm(4, 0x12, 0x20, 24, 0, 0);
    rig_f(&r, 5, ECM(6, 0x20, 0x12), SF_CAN_EFF, 4, 22, 1, 0, 0);
    st = rig_stats(&r);
    CHECK_EQ(st->j1939_bad_cm, 5);
    CHECK_EQ(r.n, 0);
    /* the largest size is announced, but no arena holds it */
    rts(6, 0x13, 0x20, 7u * 0xFFFFFFu);
    CHECK_EQ(rig_stats(&r)->no_memory, 1);
    /* ETP.DT before any DPO; after a window ended; a DPO beyond the packets taken */
    rig_init(&r, NULL);
    rts(0, 0x10, 0x20, 2000);
    cts(1, 0x10, 0x20, 10, 1);
    edt(2, 0x10, 0x20, 1, 1, 2000);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_BAD_SEQ && r.m[0].length == 0);
    rts(10, 0x10, 0x20, 2000);
    dpo(11, 0x10, 0x20, 2, 0);
    edt(12, 0x10, 0x20, 1, 1, 2000);
    edt(13, 0x10, 0x20, 2, 2, 2000);
    edt(14, 0x10, 0x20, 3, 3, 2000);            /* the window was 2 */
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_BAD_SEQ && r.m[1].length == 14);
    rts(20, 0x10, 0x20, 2000);
    dpo(21, 0x10, 0x20, 5, 1);                  /* packet 1 never came */
    REQUIRE(r.n == 3);
    CHECK(r.m[2].status == SF_MSG_BAD_SEQ && r.m[2].length == 0);
    st = rig_stats(&r);
    CHECK_EQ(st->j1939_wrong_seq, 3);
    /* a repeated ETP.DT, a missing one */
    rig_init(&r, NULL);
    rts(0, 0x10, 0x20, 2000);
    dpo(1, 0x10, 0x20, 255, 0);
    edt(2, 0x10, 0x20, 1, 1, 2000);
    edt(3, 0x10, 0x20, 1, 1, 2000);
    rts(10, 0x10, 0x20, 2000);
    dpo(11, 0x10, 0x20, 255, 0);
    edt(12, 0x10, 0x20, 1, 1, 2000);
    edt(13, 0x10, 0x20, 3, 3, 2000);
    /* windows of 2: packet 2 and the second DPO lost, the next window's packet 1 (packet
       3) carries the number packet 1 had: a lost packet, not a repeat (its bytes differ) */
    rts(20, 0x10, 0x20, 2000);
    dpo(21, 0x10, 0x20, 2, 0);
    edt(22, 0x10, 0x20, 1, 1, 2000);
    edt(24, 0x10, 0x20, 1, 3, 2000);
    st = rig_stats(&r);
    REQUIRE(r.n == 3);
    CHECK(r.m[0].status == SF_MSG_BAD_SEQ && r.m[0].length == 7);
    CHECK(r.m[1].status == SF_MSG_BAD_SEQ && r.m[1].length == 7);
    CHECK(r.m[2].status == SF_MSG_BAD_SEQ && r.m[2].length == 7);
    CHECK_EQ(st->j1939_dup_dt, 1);
    CHECK_EQ(st->j1939_wrong_seq, 2);
    /* a last ETP.DT too short; a new RTS replaces; aborts of the PGN from either side */
    rig_init(&r, NULL);
    rts(0, 0x10, 0x20, 1786);
    dpo(1, 0x10, 0x20, 255, 0);
    for (uint32_t i = 1; i <= 255; i++)
        edt(1 + i, 0x10, 0x20, (uint8_t)i, i, 1786);
    dpo(300, 0x10, 0x20, 1, 255);
    rig_f(&r, 301, EDT(6, 0x20, 0x10), SF_CAN_EFF, 1, 1);
    rts(400, 0x10, 0x20, 2000);
    rts(401, 0x10, 0x20, 2000);
    ecm(402, 0x20, 0x10, 255, 3, 0xFFFFFF);
    st = rig_stats(&r);
    REQUIRE(r.n == 3);
    CHECK(r.m[0].status == SF_MSG_BAD_LENGTH && r.m[0].length == 1785);
    CHECK(r.m[1].status == SF_MSG_REPLACED && r.m[1].length == 0);
    CHECK(r.m[2].status == SF_MSG_ABORTED);
    CHECK_EQ(st->j1939_short_dt, 1);
    CHECK_EQ(st->j1939_abort, 1);
    /* T1 between ETP.DTs (750 ms in time, 751 not); T2 from a CTS to the DPO; T3 from the
       window's last ETP.DT to the next CTS; the log ends inside */
    rig_init(&r, NULL);
    rts(0, 0x10, 0x20, 2000);
    dpo(1, 0x10, 0x20, 255, 0);
    edt(751, 0x10, 0x20, 1, 1, 2000);
    edt(1502, 0x10, 0x20, 2, 2, 2000);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_TIMEOUT && r.m[0].length == 7);
    rts(2000, 0x11, 0x20, 2000);
    cts(2001, 0x11, 0x20, 10, 1);
    rig_f(&r, 3252, 0x100, 0, 0);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[1].status, SF_MSG_TIMEOUT);
    rts(4000, 0x12, 0x20, 2000);
    dpo(4001, 0x12, 0x20, 1, 0);
    edt(4002, 0x12, 0x20, 1, 1, 2000);
    rig_f(&r, 5252, 0x100, 0, 0);
    CHECK_EQ(r.n, 2);
    rig_f(&r, 5253, 0x100, 0, 0);
    REQUIRE(r.n == 3);
    CHECK(r.m[2].status == SF_MSG_TIMEOUT && r.m[2].length == 7);
    rts(6000, 0x13, 0x20, 2000);
    rig_finish(&r);
    REQUIRE(r.n == 4);
    CHECK_EQ(r.m[3].status, SF_MSG_END);
    CHECK_EQ(rig_stats(&r)->timeouts, 3);
    /* switched off with J1939 */
    struct sf_proto_config off = {.off = SF_PROTO_NO_J1939};
    rig_init(&r, &off);
    uint64_t ms = 0;
    etp_send(&ms, 0x25, 0x42, 1786, 255);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->j1939_cm, 0);
}

int main(void)
{
    whole();
    hold_and_retransmit();
    beside_tp();
    broken();
    TEST_END();
}
