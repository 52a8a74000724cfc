/* J1939 DM1 / DM2 decoding (src/proto/dm1.c): lamps and flash states, messages with 0, 1
 * and many DTCs, both SPN conversion methods, from single frames and from a BAM
 * reassembled by src/proto/. The layout is SAE J1939-73's, built by hand here. */
#include <string.h>
#include "check.h"
#include "proto_rig.h"
#include "streamfat/diag.h"

static struct rig r;

/* a version 4 DTC (CM = 0): SPN little-endian, its 3 high bits above the FMI */
static void dtc4(uint8_t *p, uint32_t spn, uint8_t fmi, uint8_t oc)
{
    p[0] = spn & 0xFF;
    p[1] = (spn >> 8) & 0xFF;
    p[2] = (uint8_t)(((spn >> 16) & 7) << 5 | (fmi & 0x1F));
    p[3] = oc & 0x7F;
}

/* version 1 (CM = 1): SPN's 16 high bits most significant first, its 3 low bits on top */
static void dtc1(uint8_t *p, uint32_t spn, uint8_t fmi, uint8_t oc)
{
    p[0] = (spn >> 11) & 0xFF;
    p[1] = (spn >> 3) & 0xFF;
    p[2] = (uint8_t)((spn & 7) << 5 | (fmi & 0x1F));
    p[3] = 0x80 | (oc & 0x7F);
}

static void single(void)
{
    struct sf_dm1 d;
    struct sf_dm1_dtc t;
    /* no DTC: lamps off, flash "off", one all-zero DTC, padding */
    static const uint8_t none[] = {0x00, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF};
    REQUIRE(sf_dm1_parse(none, 8, &d) == 0);
    CHECK(d.mil == 0 && d.red_stop == 0 && d.amber_warning == 0 && d.protect == 0);
    CHECK(d.mil_flash == 3 && d.protect_flash == 3);
    CHECK_EQ(d.ndtc, 0u);
    CHECK(sf_dm1_dtc_at(&d, 0, &t) == 0);
    /* one DTC: MIL on, amber error, protect n/a; SPN 190 (engine speed) FMI 2, OC 5 */
    uint8_t one[8] = {0x4B, 0x1C, 0, 0, 0, 0, 0xFF, 0xFF};
    dtc4(one + 2, 190, 2, 5);
    REQUIRE(sf_dm1_parse(one, 8, &d) == 0);
    CHECK(d.mil == 1 && d.red_stop == 0 && d.amber_warning == 2 && d.protect == 3);
    CHECK(d.mil_flash == 0 && d.red_stop_flash == 1 && d.amber_warning_flash == 3 &&
          d.protect_flash == 0);
    CHECK_EQ(d.ndtc, 1u);
    REQUIRE(sf_dm1_dtc_at(&d, 0, &t));
    CHECK(t.spn == 190 && t.fmi == 2 && t.oc == 5 && t.cm == 0);
    CHECK(strcmp(sf_dm1_lamp_name(d.amber_warning), "error") == 0);
    CHECK(strcmp(sf_dm1_flash_name(d.red_stop_flash), "fast") == 0);
    /* the largest SPN, FMI and OC */
    dtc4(one + 2, 0x7FFFF, 31, 126);
    REQUIRE(sf_dm1_parse(one, 8, &d) == 0 && sf_dm1_dtc_at(&d, 0, &t));
    CHECK(t.spn == 0x7FFFF && t.fmi == 31 && t.oc == 126);
    /* conversion method 1 */
    dtc1(one + 2, 0x5A5A5, 17, 3);
    REQUIRE(sf_dm1_parse(one, 8, &d) == 0 && sf_dm1_dtc_at(&d, 0, &t));
    CHECK(t.spn == 0x5A5A5 && t.fmi == 17 && t.oc == 3 && t.cm == 1);
    CHECK(sf_dm1_parse(one, 5, &d) == -1);
}

static void bam(void)
{
    /* 10 DTCs (42 bytes, 6 packets) from SA 0x00 by BAM, both methods alternating */
    uint8_t m[42] = {0x55, 0x00};
    for (unsigned i = 0; i < 10; i++)
        (i & 1 ? dtc1 : dtc4)(m + 2 + 4 * i, 100 + 1000 * i, (uint8_t)i, (uint8_t)(i + 1));
    rig_init(&r, NULL);
    rig_f(&r, 0, 0x1CECFF00, SF_CAN_EFF, 8, 32, 42, 0, 6, 0xFF, 0xCA, 0xFE, 0x00);
    for (unsigned k = 0; k < 6; k++) {
        uint8_t f[8] = {(uint8_t)(k + 1), 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        memcpy(f + 1, m + 7 * k, 42 - 7 * k < 7 ? 42 - 7 * k : 7);
        rig_frame(&r, 50 * (k + 1), 0x1CEBFF00, SF_CAN_EFF, f, 8);
    }
    REQUIRE(r.n == 1);
    CHECK(r.m[0].pgn == SF_J1939_PGN_DM1 && r.m[0].status == SF_MSG_OK);
    struct sf_dm1 d;
    struct sf_dm1_dtc t;
    REQUIRE(sf_dm1_parse(r.m[0].payload, r.m[0].length, &d) == 0);
    CHECK(d.mil == 1 && d.red_stop == 1 && d.amber_warning == 1 && d.protect == 1);
    CHECK_EQ(d.ndtc, 10u);
    for (unsigned i = 0; i < 10; i++) {
        REQUIRE(sf_dm1_dtc_at(&d, i, &t));
        CHECK(t.spn == 100 + 1000 * i && t.fmi == i && t.oc == i + 1 && t.cm == (i & 1));
    }
    CHECK(sf_dm1_dtc_at(&d, 10, &t) == 0);
    /* 0xFF filling a DTC slot ends the list */
    memset(m + 2 + 4 * 3, 0xFF, 4);
    REQUIRE(sf_dm1_parse(m, 42, &d) == 0);
    CHECK_EQ(d.ndtc, 3u);
}

int main(void)
{
    single();
    bam();
    TEST_END();
}
