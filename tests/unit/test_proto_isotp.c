/* ISO-TP reassembly (src/proto/isotp.c): every frame type and addressing mode, CAN FD, the
 * FF_DL escape, padding, and each broken case with its outcome and counter. */
#include "check.h"
#include "proto_rig.h"

static struct rig r;
static struct fr fr[1024];
static uint8_t pl[8192];

static void normal_11bit(void)
{
    rig_init(&r, NULL);
    /* SF request, padded with 0xAA */
    rig_f(&r, 0, 0x7E0, 0, 8, 0x02, 0x10, 0x03, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].proto, SF_PROTO_ISOTP);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].length, 2);
    CHECK_EQ(r.m[0].payload[0], 0x10);
    CHECK_EQ(r.m[0].payload[1], 0x03);
    CHECK_EQ(r.m[0].id, 0x7E0);
    CHECK_EQ(r.m[0].fc_id, 0x7E8);
    CHECK_EQ(r.m[0].flags, 0);
    /* FF on 0x7E8, FC on 0x7E0, two CFs */
    fill_pattern(pl, 20, 1);
    int k = isotp_frames(fr, 10, 5, 0x7E8, 0, -1, 0x55, 8, pl, 20);
    CHECK_EQ(k, 3);
    rig_frames(&r, fr, 1);
    rig_f(&r, 11, 0x7E0, 0, 3, 0x30, 0x00, 0x00);
    rig_frames(&r, fr + 1, k - 1);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[1].status, SF_MSG_OK);
    CHECK_EQ(r.m[1].length, 20);
    CHECK_EQ(r.m[1].declared, 20);
    CHECK_EQ(r.m[1].frames, 3);
    CHECK(memcmp(r.m[1].payload, pl, 20) == 0);
    CHECK_EQ(r.m[1].first_ts, 10000000);
    CHECK_EQ(r.m[1].last_ts, 20000000);
    CHECK_EQ(r.m[1].id, 0x7E8);
    CHECK_EQ(r.m[1].fc_id, 0x7E0);
    const struct sf_proto_stats *st = rig_stats(&r);
    CHECK_EQ(st->isotp_sf, 1);
    CHECK_EQ(st->isotp_ff, 1);
    CHECK_EQ(st->isotp_cf, 2);
    CHECK_EQ(st->isotp_fc, 1);
    CHECK_EQ(st->messages_ok, 2);
    CHECK_EQ(st->messages_broken, 0);
    /* functional 0x7DF, and an id that is not ISO-TP */
    rig_f(&r, 30, 0x7DF, 0, 8, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0);
    rig_f(&r, 31, 0x123, 0, 8, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0);
    REQUIRE(r.n == 3);
    CHECK_EQ(r.m[2].id, 0x7DF);
    CHECK_EQ(r.m[2].fc_id, 0);
    /* the same without the ids found by themselves */
    struct sf_proto_config c = {.off = SF_PROTO_NO_ISOTP_AUTO};
    rig_init(&r, &c);
    rig_f(&r, 0, 0x7E0, 0, 8, 0x02, 0x10, 0x03, 0, 0, 0, 0, 0);
    CHECK_EQ(r.n, 0);
}

static void normal_fixed_29bit(void)
{
    rig_init(&r, NULL);
    rig_f(&r, 0, 0x18DB33F1, SF_CAN_EFF, 3, 0x02, 0x01, 0x0D);
    fill_pattern(pl, 100, 2);
    int k = isotp_frames(fr, 1, 1, 0x18DAF110, SF_CAN_EFF, -1, -1, 8, pl, 100);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[0].id, 0x18DB33F1);
    CHECK_EQ(r.m[0].flags, SF_CAN_EFF);
    CHECK_EQ(r.m[1].length, 100);
    CHECK(memcmp(r.m[1].payload, pl, 100) == 0);
    CHECK_EQ(r.m[1].sa, 0x10);
    CHECK_EQ(r.m[1].da, 0xF1);
    CHECK_EQ(r.m[1].fc_id, 0x18DA10F1);
    /* any priority; 11-bit 0x0DA... is not it */
    rig_f(&r, 200, 0x14DA10F1, SF_CAN_EFF, 3, 0x02, 0x3E, 0x00);
    rig_f(&r, 201, 0x18DA10F1, 0, 3, 0x02, 0x3E, 0x00);
    CHECK_EQ(r.n, 3);
}

static void extended_and_mixed(void)
{
    struct sf_isotp_pair pairs[] = {
        {0x6F1, 0x612, 0, SF_ISOTP_EXTENDED, SF_PROTO_ANY_CHANNEL},
        {0x18CEF110, 0x18CE10F1, 1, SF_ISOTP_MIXED, 0},
    };
    struct sf_proto_config c = {.isotp_pairs = pairs, .n_isotp_pairs = 2};
    rig_init(&r, &c);
    fill_pattern(pl, 40, 3);
    int k = isotp_frames(fr, 0, 1, 0x612, 0, 0xF1, 0x00, 8, pl, 40);
    CHECK_EQ(k, 7);   /* 5 in the FF, 6 per CF */
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].mode, SF_ISOTP_EXTENDED);
    CHECK_EQ(r.m[0].addr, 0xF1);
    CHECK_EQ(r.m[0].length, 40);
    CHECK(memcmp(r.m[0].payload, pl, 40) == 0);
    CHECK_EQ(r.m[0].fc_id, 0x6F1);
    /* SF with an address: 6 bytes at most */
    rig_f(&r, 20, 0x6F1, 0, 8, 0x12, 0x06, 1, 2, 3, 4, 5, 6);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[1].addr, 0x12);
    CHECK_EQ(r.m[1].length, 6);
    k = isotp_frames(fr, 30, 1, 0x18CE10F1, SF_CAN_EFF, 0x42, -1, 8, pl, 13);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 3);
    CHECK_EQ(r.m[2].mode, SF_ISOTP_MIXED);
    CHECK_EQ(r.m[2].addr, 0x42);
    CHECK_EQ(r.m[2].length, 13);
    CHECK(memcmp(r.m[2].payload, pl, 13) == 0);
    /* the mixed pair is named for channel 0 only */
    struct sf_proto_frame f = {40000000ull, 0x18CE10F1, SF_CAN_EFF, 1, 4,
                               (const uint8_t[]){0x42, 0x02, 0xAB, 0xCD}};
    sf_proto_feed(&r.p, &f);
    rig_take(&r);
    CHECK_EQ(r.n, 3);
    /* two sessions on one id, told apart by the address byte, interleaved */
    struct fr a[8], b[8];
    uint8_t pa[20], pb[20];
    fill_pattern(pa, 20, 4);
    fill_pattern(pb, 20, 5);
    int ka = isotp_frames(a, 100, 2, 0x612, 0, 0xF1, -1, 8, pa, 20);
    int kb = isotp_frames(b, 101, 2, 0x612, 0, 0xF2, -1, 8, pb, 20);
    for (int i = 0; i < ka || i < kb; i++) {
        if (i < ka)
            rig_frames(&r, a + i, 1);
        if (i < kb)
            rig_frames(&r, b + i, 1);
    }
    REQUIRE(r.n == 5);
    CHECK(r.m[3].addr == 0xF1 && memcmp(r.m[3].payload, pa, 20) == 0);
    CHECK(r.m[4].addr == 0xF2 && memcmp(r.m[4].payload, pb, 20) == 0);
}

static void escape_and_fd(void)
{
    rig_init(&r, NULL);
    fill_pattern(pl, 5000, 6);
    int k = isotp_frames(fr, 0, 1, 0x7E8, 0, -1, 0xCC, 8, pl, 5000);
    CHECK_EQ(fr[0].d[1], 0);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_OK);
    CHECK_EQ(r.m[0].length, 5000);
    CHECK(memcmp(r.m[0].payload, pl, 5000) == 0);
    CHECK_EQ(r.m[0].frames, (uint32_t)k);
    /* CAN FD: SF with the length escape, FF + CFs of 63 bytes, 12-bit and 32-bit FF_DL */
    rig_init(&r, NULL);
    k = isotp_frames(fr, 0, 1, 0x7E0, SF_CAN_FD, -1, -1, 64, pl, 62);
    CHECK_EQ(k, 1);
    CHECK_EQ(fr[0].d[0], 0);
    CHECK_EQ(fr[0].d[1], 62);
    rig_frames(&r, fr, k);
    k = isotp_frames(fr, 10, 1, 0x7E8, SF_CAN_FD, -1, -1, 64, pl, 1000);
    rig_frames(&r, fr, k);
    k = isotp_frames(fr, 100, 1, 0x7E9, SF_CAN_FD | SF_CAN_BRS, -1, 0xCC, 64, pl, 5000);
    rig_frames(&r, fr, k);
    k = isotp_frames(fr, 300, 1, 0x7EA, SF_CAN_FD, -1, 0, 16, pl, 100);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 4);
    CHECK(r.m[0].length == 62 && r.m[0].fd && memcmp(r.m[0].payload, pl, 62) == 0);
    CHECK(r.m[1].length == 1000 && r.m[1].fd && memcmp(r.m[1].payload, pl, 1000) == 0);
    CHECK_EQ(r.m[1].frames, 1 + (1000 - 62 + 62) / 63);
    CHECK(r.m[2].length == 5000 && memcmp(r.m[2].payload, pl, 5000) == 0);
    CHECK(r.m[3].length == 100 && memcmp(r.m[3].payload, pl, 100) == 0);
    CHECK_EQ(rig_stats(&r)->messages_broken, 0);
}

static void broken(void)
{
    const struct sf_proto_stats *st;
    fill_pattern(pl, 50, 7);
    int k = isotp_frames(fr, 0, 10, 0x7E8, 0, -1, 0, 8, pl, 50);   /* FF + 7 CFs */
    CHECK_EQ(k, 8);

    /* frames before the log's start: CFs without their FF */
    rig_init(&r, NULL);
    rig_frames(&r, fr + 3, k - 3);
    rig_finish(&r);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->isotp_orphan_cf, 5);

    /* a missing CF: wrong SN, the rest are orphans */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 2);
    rig_frames(&r, fr + 3, k - 3);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_BAD_SEQ);
    CHECK_EQ(r.m[0].length, 6 + 7);
    CHECK_EQ(r.m[0].declared, 50);
    CHECK(memcmp(r.m[0].payload, pl, 13) == 0);
    CHECK_EQ(st->isotp_wrong_sn, 1);
    CHECK_EQ(st->isotp_dup_cf, 0);
    CHECK_EQ(st->isotp_orphan_cf, 4);
    CHECK_EQ(st->messages_broken, 1);

    /* a CF with SN 0 right after the FF is a wrong SN, not a repeat (the FF is no CF) */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 1);
    rig_f(&r, 5, 0x7E8, 0, 8, 0x20, 0, 0, 0, 0, 0, 0, 0);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_BAD_SEQ && r.m[0].length == 6);
    CHECK_EQ(st->isotp_wrong_sn, 1);
    CHECK_EQ(st->isotp_dup_cf, 0);

    /* a duplicated CF */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 3);
    rig_frames(&r, fr + 2, 1);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_BAD_SEQ);
    CHECK_EQ(r.m[0].length, 20);
    CHECK_EQ(st->isotp_dup_cf, 1);
    CHECK_EQ(st->isotp_wrong_sn, 0);

    /* N_Cr: a CF 1000 ms after the last one is in time, 1001 ms is not */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 2);
    rig_f(&r, 10 + 1000, 0x7E8, 0, 8, 0x22, pl[13], pl[14], pl[15], pl[16], pl[17], pl[18], pl[19]);
    CHECK_EQ(r.n, 0);
    rig_f(&r, 1010 + 1001, 0x7E8, 0, 8, 0x23, 0, 0, 0, 0, 0, 0, 0);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].status, SF_MSG_TIMEOUT);
    CHECK_EQ(r.m[0].length, 20);
    CHECK_EQ(r.m[0].last_ts, 1010000000ull);
    CHECK_EQ(st->timeouts, 1);
    CHECK_EQ(st->isotp_orphan_cf, 1);
    /* ... any frame ends it, of any id, and so does sf_proto_expire */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 2);
    rig_f(&r, 2000, 0x100, 0, 1, 0);
    CHECK(r.n == 1 && r.m[0].status == SF_MSG_TIMEOUT);
    rig_frames(&r, fr, 2);
    CHECK_EQ(sf_proto_expire(&r.p, 10ull * 1000000 + 1000000000ull), 0);
    CHECK_EQ(sf_proto_expire(&r.p, 10ull * 1000000 + 1000000001ull), 1);
    rig_take(&r);
    CHECK(r.n == 2 && r.m[1].status == SF_MSG_TIMEOUT);
    /* a configured N_Cr */
    struct sf_proto_config c = {.n_cr_ms = 50};
    rig_init(&r, &c);
    rig_frames(&r, fr, 2);
    rig_f(&r, 61, 0x7E8, 0, 8, 0x22, 0, 0, 0, 0, 0, 0, 0);
    CHECK(r.n == 1 && r.m[0].status == SF_MSG_TIMEOUT);

    /* a new FF before the last one finished; an SF in the middle */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 3);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 2);
    CHECK(r.m[0].status == SF_MSG_REPLACED && r.m[0].length == 20);
    CHECK(r.m[1].status == SF_MSG_OK && r.m[1].length == 50);
    CHECK_EQ(rig_stats(&r)->replaced, 1);
    rig_frames(&r, fr, 2);
    rig_f(&r, 100, 0x7E8, 0, 3, 0x02, 0x7E, 0x00);
    REQUIRE(r.n == 4);
    CHECK(r.m[2].status == SF_MSG_REPLACED && r.m[2].length == 13);
    CHECK(r.m[3].status == SF_MSG_OK && r.m[3].length == 2);

    /* flow control: WAIT keeps the session alive, OVFLW ends it */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 2);
    rig_f(&r, 900, 0x7E0, 0, 3, 0x31, 0, 0);
    rig_f(&r, 1800, 0x7E8, 0, 8, 0x22, pl[13], pl[14], pl[15], pl[16], pl[17], pl[18], pl[19]);
    CHECK_EQ(r.n, 0);
    rig_f(&r, 1801, 0x7E0, 0, 3, 0x32, 0, 0);
    st = rig_stats(&r);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_ABORTED && r.m[0].length == 20);
    CHECK_EQ(st->isotp_overflow, 1);
    rig_f(&r, 1802, 0x7E0, 0, 3, 0x35, 0, 0);
    CHECK_EQ(st->isotp_bad_pci, 1);

    /* a CF shorter than the session's frames is ignored; the same SN whole is taken */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 2);
    rig_f(&r, 25, 0x7E8, 0, 4, 0x22, 1, 2, 3);
    st = rig_stats(&r);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(st->isotp_short_cf, 1);
    rig_frames(&r, fr + 2, k - 2);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_OK && memcmp(r.m[0].payload, pl, 50) == 0);
    /* a last CF too short for what remains: ignored too, then the log ends */
    rig_frames(&r, fr, k - 1);
    struct fr last = fr[k - 1];
    last.len = 2;
    rig_frames(&r, &last, 1);
    rig_finish(&r);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].status == SF_MSG_END && r.m[1].length == 6 + 7 * 6);
    CHECK_EQ(st->isotp_short_cf, 2);

    /* impossible PCIs: none makes a message */
    rig_init(&r, NULL);
    rig_f(&r, 0, 0x7E8, 0, 2, 0x05, 1);        /* SF_DL beyond the frame */
    rig_f(&r, 1, 0x7E8, 0, 2, 0x00, 0);        /* SF_DL 0 */
    rig_f(&r, 2, 0x7E8, 0, 8, 0x10, 0x05, 1, 2, 3, 4, 5, 6);   /* FF_DL fits an SF */
    rig_f(&r, 3, 0x7E8, 0, 4, 0x10, 0x00, 0, 0);               /* escape cut short */
    rig_f(&r, 4, 0x7E8, 0, 2, 0x40, 0);        /* PCI 4 */
    rig_f(&r, 5, 0x7E8, 0, 0);                 /* no byte */
    rig_f(&r, 6, 0x7E8, 0, 7, 0x10, 0x20, 1, 2, 3, 4, 5);     /* FF of 7 bytes */
    memset(pl + 100, 0, 64);
    pl[100] = 0x03;                            /* SF without the escape in 12 bytes */
    rig_frame(&r, 7, 0x7E8, SF_CAN_FD, pl + 100, 12);
    pl[100] = 0x10;                            /* FF of 10 bytes: no DLC gives that */
    pl[101] = 0x40;
    rig_frame(&r, 8, 0x7E8, SF_CAN_FD, pl + 100, 10);
    rig_finish(&r);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->isotp_bad_pci, 9);

    /* the log ends inside a message */
    rig_init(&r, NULL);
    rig_frames(&r, fr, 4);
    rig_finish(&r);
    REQUIRE(r.n == 1);
    CHECK(r.m[0].status == SF_MSG_END && r.m[0].length == 27);
    CHECK_EQ(rig_stats(&r)->ended, 1);
}

/* sessions are per channel: the same id on two buses interleaved */
static void channels(void)
{
    rig_init(&r, NULL);
    uint8_t a[30], b[30];
    fill_pattern(a, 30, 11);
    fill_pattern(b, 30, 12);
    struct fr fa[8], fb[8];
    int k = isotp_frames(fa, 0, 2, 0x7E8, 0, -1, 0, 8, a, 30);
    isotp_frames(fb, 1, 2, 0x7E8, 0, -1, 0, 8, b, 30);
    for (int i = 0; i < k; i++) {
        struct sf_proto_frame f0 = {fa[i].ms * 1000000ull, 0x7E8, 0, 0, 8, fa[i].d};
        struct sf_proto_frame f1 = {fb[i].ms * 1000000ull, 0x7E8, 0, 1, 8, fb[i].d};
        sf_proto_feed(&r.p, &f0);
        rig_take(&r);
        sf_proto_feed(&r.p, &f1);
        rig_take(&r);
    }
    REQUIRE(r.n == 2);
    CHECK(r.m[0].channel == 0 && memcmp(r.m[0].payload, a, 30) == 0);
    CHECK(r.m[1].channel == 1 && memcmp(r.m[1].payload, b, 30) == 0);
    CHECK_EQ(rig_stats(&r)->messages_broken, 0);
}

static void resources(void)
{
    /* an arena too small: the session is refused and counted, its CFs are orphans */
    struct sf_proto_session s2[2];
    uint8_t small[100];
    struct sf_proto_config c = {.sessions = s2, .nsessions = 2, .arena = small,
                                .arena_size = sizeof small};
    rig_init(&r, &c);
    fill_pattern(pl, 200, 8);
    int k = isotp_frames(fr, 0, 1, 0x7E8, 0, -1, 0, 8, pl, 200);
    rig_frames(&r, fr, k);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(rig_stats(&r)->no_memory, 1);
    CHECK_EQ(rig_stats(&r)->isotp_orphan_cf, k - 1);
    /* two fit side by side, a third has no slot */
    int ka = isotp_frames(fr, 10, 1, 0x7E8, 0, -1, 0, 8, pl, 50);
    int kb = isotp_frames(fr + ka, 10, 1, 0x7E9, 0, -1, 0, 8, pl, 50);
    int kc = isotp_frames(fr + ka + kb, 10, 1, 0x7EA, 0, -1, 0, 8, pl, 10);
    rig_frames(&r, fr, 1);
    rig_frames(&r, fr + ka, 1);
    rig_frames(&r, fr + ka + kb, kc);
    CHECK_EQ(rig_stats(&r)->no_session, 1);
    rig_frames(&r, fr + 1, ka - 1);
    rig_frames(&r, fr + ka + 1, kb - 1);
    REQUIRE(r.n == 2);
    CHECK(memcmp(r.m[0].payload, pl, 50) == 0 && memcmp(r.m[1].payload, pl, 50) == 0);
    /* the arena is whole again: a 100-byte message fits */
    k = isotp_frames(fr, 100, 1, 0x7E8, 0, -1, 0, 8, pl, 100);
    rig_frames(&r, fr, k);
    REQUIRE(r.n == 3);
    CHECK_EQ(r.m[2].length, 100);

    /* messages not taken before the next feed are dropped and counted */
    rig_init(&r, NULL);
    struct sf_proto_frame f = {0, 0x7E8, 0, 0, 3, (const uint8_t[]){0x02, 1, 2}};
    CHECK_EQ(sf_proto_feed(&r.p, &f), 1);
    CHECK_EQ(sf_proto_feed(&r.p, &f), 1);
    CHECK_EQ(rig_stats(&r)->not_taken, 1);
    /* an oversized frame is refused */
    struct sf_proto_frame big = {0, 0x7E8, 0, 0, 65, pl};
    CHECK_EQ(sf_proto_feed(&r.p, &big), SF_EINVAL);
    struct sf_proto_config bad = {0};
    CHECK_EQ(sf_proto_init(&r.p, &bad), SF_EINVAL);
}

static void ff_event(void)
{
    struct sf_proto_config c = {.report_ff = 1};
    rig_init(&r, &c);
    fill_pattern(pl, 30, 9);
    int k = isotp_frames(fr, 0, 1, 0x18DAF110, SF_CAN_EFF, -1, 0, 8, pl, 30);
    rig_frames(&r, fr, 1);
    REQUIRE(r.n == 1);
    CHECK_EQ(r.m[0].event, SF_PROTO_EV_FF);
    CHECK_EQ(r.m[0].fc_id, 0x18DA10F1);
    CHECK_EQ(r.m[0].declared, 30);
    CHECK_EQ(r.m[0].length, 6);
    rig_frames(&r, fr + 1, k - 1);
    REQUIRE(r.n == 2);
    CHECK(r.m[1].event == SF_PROTO_EV_MESSAGE && r.m[1].length == 30);
}

int main(void)
{
    normal_11bit();
    normal_fixed_29bit();
    extended_and_mixed();
    escape_and_fd();
    broken();
    channels();
    resources();
    ff_event();
    TEST_END();
}
