/* libFuzzer target: the reassembly across frames (src/proto/: ISO-TP, J1939 TP and ETP, NMEA 2000
 * fast packets) on arbitrary frame sequences.
 *
 * Input: a control byte, then frames of (1 byte: id choice and flags, 1 byte: time step in
 * ms, 1 byte: length 0..64, that many data bytes). The control byte picks the table sizes
 * (1..8 sessions, an arena of 0..4 KiB) and short timers, so that running out of slots,
 * of arena and of time is reached as often as whole messages. Ids are drawn from the ones
 * each protocol takes (OBD-II/UDS, normal fixed, a named extended and mixed pair, TP.CM,
 * TP.DT, ETP.CM, ETP.DT, a fast-packet PGN) or taken raw from the next 4 bytes.
 *
 * Invariants checked beyond the sanitizers: every message keeps length <= declared within
 * its protocol's limit, a whole message has length == declared, times do not run backwards
 * inside a message, each feed's count is what sf_proto_next hands out, and at the end every
 * message counted was handed out. Every message's payload also goes through the decoders
 * (include/streamfat/diag.h: UDS, OBD-II, DM1), which must point only into it. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/proto.h"
#include "streamfat/diag.h"

static const uint32_t ids[] = {0x7DF, 0x7E0, 0x7E8, 0x18DB33F1, 0x18DA10F1, 0x18DAF110,
                               0x6F1, 0x612, 0x18CE10F1, 0x1CECFF00, 0x1CEBFF00, 0x1CEC21F9,
                               0x1CEB21F9, 0x1CECF921, 0x0DF80523, 0x100,
                               0x18C84225, 0x18C74225, 0x18C82542};   /* ETP.CM, .DT, back */
#define NIDS (sizeof ids / sizeof ids[0])
static const struct sf_isotp_pair pairs[] = {
    {0x6F1, 0x612, 0, SF_ISOTP_EXTENDED, SF_PROTO_ANY_CHANNEL},
    {0x18CE10F1, 0x18CEF110, 1, SF_ISOTP_MIXED, SF_PROTO_ANY_CHANNEL},
};
static const uint32_t pgns[] = {129029};

static void check(int ok)
{
    if (!ok)
        abort();
}

static int inside(const uint8_t *base, uint32_t n, const uint8_t *q, uint32_t len)
{
    return len == 0 || (q >= base && q + len <= base + n);
}

/* the decoders on a payload: what they hand out lies inside it, and lists end */
static void decode(const uint8_t *d, uint32_t n)
{
    struct sf_uds u;
    if (sf_uds_parse(d, n, &u) == 0) {
        check(inside(d, n, u.data, u.len));
        uint32_t dtc, i;
        uint8_t st;
        for (i = 0; sf_uds_dtc_at(&u, i, &dtc, &st); i++)
            check(dtc < (1u << 24) && i < n);
    }
    struct sf_obd_pid o;
    for (uint32_t i = 0; sf_obd_pid_at(d, n, i, &o); i++)
        check(inside(d, n, o.data, o.len) && i < n && (o.kind != SF_OBD_LINEAR || o.den > 0));
    uint16_t odtc;
    char t[6];
    for (uint32_t i = 0; sf_obd_dtc_at(d, n, i, &odtc); i++) {
        sf_obd_dtc_text(odtc, t);
        check(i < n && t[5] == '\0');
    }
    const uint8_t *vin;
    if (sf_obd_vin(d, n, &vin))
        check(inside(d, n, vin, 17));
    struct sf_dm1 dm;
    struct sf_dm1_dtc dt;
    if (sf_dm1_parse(d, n, &dm) == 0) {
        check(inside(d, n, dm.dtcs, 4 * dm.ndtc));
        for (uint32_t i = 0; sf_dm1_dtc_at(&dm, i, &dt); i++)
            check(dt.spn < (1u << 19) && dt.fmi < 32 && dt.oc < 128);
    }
}

static uint64_t take(struct sf_proto *p)
{
    struct sf_proto_msg m;
    uint64_t n = 0;
    while (sf_proto_next(p, &m)) {
        n += m.event == SF_PROTO_EV_MESSAGE;
        check(m.length <= m.declared && m.first_ts <= m.last_ts);
        check(!m.length || m.payload);
        if (m.event == SF_PROTO_EV_MESSAGE && m.status == SF_MSG_OK)
            check(m.length == m.declared);
        if (m.proto == SF_PROTO_J1939)
            check(m.declared >= 9 && m.declared <= 7u * 0xFFFFFFu &&
                  (m.declared <= SF_J1939_TP_MAX || (m.id >> 16 & 0x3FFu) == 0xC8));
        if (m.proto == SF_PROTO_FAST)
            check(m.declared >= 1 && m.declared <= SF_FAST_MAX);
        decode(m.payload, m.length);
        volatile uint8_t sink = 0;    /* the payload is readable: ASan checks every byte */
        for (uint32_t k = 0; k < m.length; k++)
            sink ^= m.payload[k];
        (void)sink;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sf_proto_session sess[8];
    static uint8_t arena[4096];
    struct sf_proto p;
    if (size < 1)
        return 0;
    uint8_t ctl = data[0];
    struct sf_proto_config c = {0};
    c.sessions = sess;
    c.nsessions = 1u + (ctl & 7u);
    c.arena = arena;
    c.arena_size = (uint32_t)((ctl >> 3) & 3u) * 1024u + ((ctl >> 3) & 3u ? 0 : 100u);
    c.isotp_pairs = pairs;
    c.n_isotp_pairs = 2;
    c.fast_pgns = pgns;
    c.n_fast_pgns = 1;
    c.report_ff = (ctl >> 5) & 1u;
    if (ctl & 0x40)
        c.n_cr_ms = c.t1_ms = c.t2_ms = c.t3_ms = c.t4_ms = c.fast_ms = 5;
    check(sf_proto_init(&p, &c) == 0);
    uint64_t ts = 0, handed = 0;
    size_t i = 1;
    while (i + 3 <= size) {
        uint8_t sel = data[i], step = data[i + 1], len = data[i + 2] % 65u;
        i += 3;
        uint32_t id;
        if ((sel & 0x1Fu) < NIDS) {
            id = ids[sel & 0x1F];
        } else {
            if (i + 4 > size)
                break;
            id = ((uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 |
                  (uint32_t)data[i + 3] << 24) & 0x1FFFFFFFu;
            i += 4;
        }
        if (i + len > size)
            len = (uint8_t)(size - i);
        uint32_t flags = (id > 0x7FF || (sel & 0x20) ? SF_CAN_EFF : 0) |
                         (len > 8 || (sel & 0x40) ? SF_CAN_FD : 0) | (sel & 0x80 ? SF_CAN_RTR : 0);
        ts += (uint64_t)step * 1000000u;
        struct sf_proto_frame f = {ts, id, flags, (uint8_t)(sel >> 7), len, data + i};
        i += len;
        int q = sf_proto_feed(&p, &f);
        check(q >= 0);
        handed += take(&p);
    }
    sf_proto_finish(&p);
    handed += take(&p);
    const struct sf_proto_stats *st = sf_proto_stats(&p);
    check(st->messages_ok + st->messages_broken == handed);
    return 0;
}
