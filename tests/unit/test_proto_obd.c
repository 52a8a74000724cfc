/* OBD-II decoding (src/proto/obd.c): every formula at its edge values against J1979's
 * formula written out here, the supported-PID bitmaps, several PIDs in one answer, mode 02,
 * DTC letters for all four top-bit combinations, and the VIN of a multi-frame answer
 * reassembled by src/proto/. */
#include <math.h>
#include <string.h>
#include "check.h"
#include "proto_rig.h"
#include "streamfat/diag.h"

static struct rig r;

static double value(const struct sf_obd_pid *o)
{
    return (double)o->raw * o->num / o->den + o->offset;
}

/* J1979 appendix B, as the standard writes them (A, B the data bytes) */
static double j1979(uint8_t pid, double A, double B)
{
    switch (pid) {
    case 0x04: case 0x11: case 0x2C: case 0x2E: case 0x2F: case 0x45: case 0x47: case 0x48:
    case 0x49: case 0x4A: case 0x4B: case 0x4C: case 0x52: case 0x5A: case 0x5B:
        return A * 100 / 255;
    case 0x05: case 0x0F: case 0x46: case 0x5C: return A - 40;
    case 0x06: case 0x07: case 0x08: case 0x09: case 0x2D: return A * 100 / 128 - 100;
    case 0x0A: return 3 * A;
    case 0x0B: case 0x0D: case 0x30: case 0x33: return A;
    case 0x0C: return (256 * A + B) / 4;
    case 0x0E: return A / 2 - 64;
    case 0x10: return (256 * A + B) / 100;
    case 0x1F: case 0x21: case 0x31: case 0x4D: case 0x4E: return 256 * A + B;
    case 0x22: return 0.079 * (256 * A + B);
    case 0x23: case 0x59: return 10 * (256 * A + B);
    case 0x3C: case 0x3D: case 0x3E: case 0x3F: return (256 * A + B) / 10 - 40;
    case 0x42: return (256 * A + B) / 1000;
    case 0x43: return (256 * A + B) * 100 / 255;
    case 0x44: return 2.0 / 65536 * (256 * A + B);
    case 0x5D: return (256 * A + B) / 128 - 210;
    case 0x5E: return (256 * A + B) / 20;
    }
    return NAN;
}

static void formulas(void)
{
    /* the list first, then every PID with a formula */
    static const uint8_t pids[] = {0x04, 0x05, 0x0C, 0x0D, 0x0F, 0x10, 0x11, 0x1F, 0x2F,
                                   0x33, 0x42, 0x46, 0x5C, 0x06, 0x07, 0x08, 0x09, 0x0A,
                                   0x0B, 0x0E, 0x21, 0x22, 0x23, 0x2C, 0x2D, 0x2E, 0x30,
                                   0x31, 0x3C, 0x3D, 0x3E, 0x3F, 0x43, 0x44, 0x45, 0x47,
                                   0x48, 0x49, 0x4A, 0x4B, 0x4C, 0x4D, 0x4E, 0x52, 0x59,
                                   0x5A, 0x5B, 0x5D, 0x5E};
    static const uint8_t edges[][2] = {{0, 0}, {0xFF, 0xFF}, {0x80, 0x00}, {0x7F, 0xFF},
                                       {0x01, 0x01}, {0x00, 0xFF}};
    for (unsigned i = 0; i < sizeof pids; i++)
        for (unsigned e = 0; e < sizeof edges / sizeof edges[0]; e++) {
            uint8_t two = pids[i] == 0x0C || pids[i] == 0x10 || pids[i] == 0x1F ||
                          pids[i] == 0x42 || pids[i] == 0x21 || pids[i] == 0x22 ||
                          pids[i] == 0x23 || pids[i] == 0x31 || pids[i] == 0x43 ||
                          pids[i] == 0x44 || pids[i] == 0x4D || pids[i] == 0x4E ||
                          pids[i] == 0x59 || pids[i] == 0x5D || pids[i] == 0x5E ||
                          (pids[i] >= 0x3C && pids[i] <= 0x3F);
            uint8_t msg[4] = {0x41, pids[i], edges[e][0], edges[e][1]};
            struct sf_obd_pid o;
            REQUIRE(sf_obd_pid_at(msg, 3u + two, 0, &o) == 1);
            CHECK_EQ(o.kind, SF_OBD_LINEAR);
            CHECK_EQ(o.len, 1u + two);
            double want = j1979(pids[i], edges[e][0], two ? edges[e][1] : 0);
            if (fabs(value(&o) - want) > 1e-9) {
                fprintf(stderr, "PID %02X %02X %02X: %.9g, want %.9g\n", pids[i],
                        edges[e][0], edges[e][1], value(&o), want);
                CHECK(0);
            }
            CHECK(o.name && o.unit);
        }
    struct sf_obd_pid o;
    static const uint8_t rpm[] = {0x41, 0x0C, 0x1A, 0xF8};
    REQUIRE(sf_obd_pid_at(rpm, 4, 0, &o));
    CHECK(value(&o) == 1726.0 && strcmp(o.unit, "rpm") == 0);
}

static void bitmaps_and_lists(void)
{
    struct sf_obd_pid o;
    /* three PIDs in one answer: supported 01-20, coolant, rpm */
    static const uint8_t m[] = {0x41, 0x00, 0xBE, 0x1F, 0xA8, 0x13, 0x05, 0x7B,
                                0x0C, 0x0F, 0xA0};
    REQUIRE(sf_obd_pid_at(m, sizeof m, 0, &o));
    CHECK(o.kind == SF_OBD_BITMAP && o.raw == 0xBE1FA813u && o.pid == 0);
    REQUIRE(sf_obd_pid_at(m, sizeof m, 1, &o));
    CHECK(o.pid == 5 && value(&o) == 83.0);
    REQUIRE(sf_obd_pid_at(m, sizeof m, 2, &o));
    CHECK(o.pid == 0x0C && value(&o) == 1000.0);
    CHECK(sf_obd_pid_at(m, sizeof m, 3, &o) == 0);
    for (unsigned p = 0x20; p <= 0xE0; p += 0x20) {
        uint8_t b[] = {0x41, (uint8_t)p, 1, 2, 3, 4};
        REQUIRE(sf_obd_pid_at(b, 6, 0, &o));
        CHECK(o.kind == SF_OBD_BITMAP && o.raw == 0x01020304u);
    }
    /* a PID we have no length for: the rest, raw, and nothing after it */
    static const uint8_t unk[] = {0x41, 0x0D, 0x20, 0xA6, 1, 2, 3};
    REQUIRE(sf_obd_pid_at(unk, sizeof unk, 1, &o));
    CHECK(o.kind == SF_OBD_RAW && o.pid == 0xA6 && o.len == 3 && o.name == NULL);
    CHECK(sf_obd_pid_at(unk, sizeof unk, 2, &o) == 0);
    /* cut short: raw */
    static const uint8_t cut[] = {0x41, 0x0C, 0x1A};
    REQUIRE(sf_obd_pid_at(cut, 3, 0, &o));
    CHECK(o.kind == SF_OBD_RAW && o.len == 1);
    /* mode 02: PID, frame, data */
    static const uint8_t ff[] = {0x42, 0x02, 0x00, 0x01, 0x33, 0x0D, 0x00, 0x50};
    REQUIRE(sf_obd_pid_at(ff, sizeof ff, 0, &o));
    CHECK(o.mode == 2 && o.pid == 2 && o.len == 2 && o.raw == 0x0133);
    REQUIRE(sf_obd_pid_at(ff, sizeof ff, 1, &o));
    CHECK(o.mode == 2 && o.pid == 0x0D && o.frame == 0 && value(&o) == 80.0);
    static const uint8_t notobd[] = {0x62, 0xF1, 0x90};
    CHECK(sf_obd_pid_at(notobd, 3, 0, &o) == 0);
}

static void dtcs(void)
{
    char t[6];
    static const struct { uint16_t d; const char *s; } want[] = {
        {0x0301, "P0301"}, {0x4123, "C0123"}, {0x8ABC, "B0ABC"}, {0xC001, "U0001"},
        {0x3FFF, "P3FFF"}, {0x7000, "C3000"}, {0xBFFF, "B3FFF"}, {0xF0F0, "U30F0"},
    };
    for (unsigned i = 0; i < sizeof want / sizeof want[0]; i++) {
        sf_obd_dtc_text(want[i].d, t);
        CHECK(strcmp(t, want[i].s) == 0);
    }
    uint16_t d;
    static const uint8_t m3[] = {0x43, 0x03, 0x03, 0x01, 0x41, 0x23, 0xC0, 0x01, 0x00, 0x00};
    REQUIRE(sf_obd_dtc_at(m3, sizeof m3, 0, &d) && d == 0x0301);
    REQUIRE(sf_obd_dtc_at(m3, sizeof m3, 1, &d) && d == 0x4123);
    REQUIRE(sf_obd_dtc_at(m3, sizeof m3, 2, &d) && d == 0xC001);
    CHECK(sf_obd_dtc_at(m3, sizeof m3, 3, &d) == 0);
    static const uint8_t m7[] = {0x47, 0x00}, ma[] = {0x4A, 0x01, 0x81, 0x00};
    CHECK(sf_obd_dtc_at(m7, 2, 0, &d) == 0);
    REQUIRE(sf_obd_dtc_at(ma, 4, 0, &d) && d == 0x8100);
    CHECK(sf_obd_mode(ma, 4) == 10);
}

static void vin(void)
{
    /* 0x7E8 answers 0x09 0x02 in three frames: FF (20 bytes), CF 1, CF 2 */
    static const char v[] = "1FTFW1ET5DFC10312";
    uint8_t msg[20] = {0x49, 0x02, 0x01};
    memcpy(msg + 3, v, 17);
    rig_init(&r, NULL);
    rig_f(&r, 0, 0x7DF, 0, 8, 0x02, 0x09, 0x02, 0, 0, 0, 0, 0);
    uint8_t ff[8] = {0x10, 20};
    memcpy(ff + 2, msg, 6);
    rig_frame(&r, 10, 0x7E8, 0, ff, 8);
    rig_f(&r, 11, 0x7E0, 0, 8, 0x30, 0, 0, 0, 0, 0, 0, 0);
    uint8_t cf[8] = {0x21};
    memcpy(cf + 1, msg + 6, 7);
    rig_frame(&r, 12, 0x7E8, 0, cf, 8);
    uint8_t cf2[8] = {0x22, 0, 0, 0, 0, 0, 0, 0xAA};
    memcpy(cf2 + 1, msg + 13, 7);
    rig_frame(&r, 13, 0x7E8, 0, cf2, 8);
    REQUIRE(r.n == 2);
    CHECK_EQ(r.m[1].status, SF_MSG_OK);
    CHECK_EQ(r.m[1].frames, 3u);
    const uint8_t *got;
    REQUIRE(sf_obd_vin(r.m[1].payload, r.m[1].length, &got) == 1);
    CHECK(memcmp(got, v, 17) == 0);
    CHECK(sf_obd_vin(r.m[1].payload, 19, &got) == 0);
    CHECK(sf_obd_vin(r.m[0].payload, r.m[0].length, &got) == 0);   /* the request */
}

int main(void)
{
    formulas();
    bitmaps_and_lists();
    dtcs();
    vin();
    TEST_END();
}
