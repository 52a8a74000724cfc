/* Seeded random streams for src/proto/: interleaved ISO-TP (11-bit, 29-bit, CAN FD), J1939
 * BAM, J1939 ETP (RTS, then per window a DPO and its ETP.DTs; windows of 2..16 or 255
 * packets, no CTS: the data decide) and fast-packet sessions on 32 keys, with frames dropped, repeated and cut off before
 * the log's start, reassembled in one pass and checked against a model that looks at each
 * message alone: which of its frames arrived, in which order. The model needs no session
 * table, arena, timer or interleaving, which is what the library adds on top of the rules.
 *
 * Then garbage: random frames on the same ids, checked for the invariants under the
 * sanitizers.
 *
 * Messages on one key are 2 s apart (more than any timer), so a broken one always ends
 * before the next starts; a last frame far later ends every session by its timer. */
#include "check.h"
#include "proto_rig.h"

#define KEYS 32
#define PER_KEY 12
#define MAXF 512        /* frames of one message (ETP: 1 + 329 + 165 DPOs at most) */
#define MAXB 2300       /* bytes of one message (ETP: 1,786 and more) */

enum { K_ISOTP, K_ISOTP_FD, K_J1939, K_FAST, K_ETP };

struct gen_frame {
    uint64_t ts;
    uint32_t id, flags;
    uint8_t len, d[64];
    int key, msg, idx;          /* whose frame, which of its frames */
    uint32_t serial;            /* tie-break: the order it was made in */
};

struct expect {
    int status;
    uint32_t length;
};

static struct gen_frame frames[KEYS * PER_KEY * MAXF * 2];
static int nframes;
static uint8_t payload[KEYS][PER_KEY][MAXB];
/* of the ETP message make() last built: bytes its frames 0 .. i - 1 carry; frame i a DPO */
static uint32_t etp_bytes[MAXF + 1];
static uint8_t etp_dpo[MAXF];
static uint32_t plen[KEYS][PER_KEY];
static struct expect want[KEYS][PER_KEY * 3];
static int nwant[KEYS];
static struct sf_proto_msg got[KEYS][PER_KEY * 3];
static int ngot[KEYS];
static uint64_t want_orphans[4], want_dup, want_wrong;
static uint32_t rng;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

static int kind_of(int key)
{
    return key < 8    ? K_ISOTP
           : key < 12 ? K_ISOTP_FD
           : key < 20 ? K_J1939
           : key < 24 ? K_ETP
                      : K_FAST;
}

static uint32_t id_of(int key)
{
    switch (kind_of(key)) {
    case K_ISOTP: return key < 4 ? 0x7E8u + (uint32_t)key : 0x18DAF100u | (uint32_t)key;
    case K_ISOTP_FD: return 0x18DAF100u | (uint32_t)key;
    case K_J1939: return 7u << 26 | 0xEC0000u | 0xFF00u | (uint32_t)key;
    case K_ETP: return 6u << 26 | 0xC80000u | 0x8000u | (uint32_t)key;
    default: return 3u << 26 | 129029u << 8 | (uint32_t)key;
    }
}

static int key_of(const struct sf_proto_msg *m)
{
    if (m->proto == SF_PROTO_ISOTP)
        return m->flags & SF_CAN_EFF ? (int)(m->id & 0xFF) : (int)(m->id - 0x7E8);
    return m->sa;
}

/* The frames of one message, as its protocol sends them. */
static int make(int key, int msg, uint64_t t0, struct gen_frame *out)
{
    static struct fr f[MAXF];
    int k = 0, kind = kind_of(key);
    const uint8_t *p = payload[key][msg];
    uint32_t n = plen[key][msg], id = id_of(key);
    if (kind == K_ISOTP || kind == K_ISOTP_FD) {
        uint32_t fl = (id > 0x7FF ? SF_CAN_EFF : 0) | (kind == K_ISOTP_FD ? SF_CAN_FD : 0);
        k = isotp_frames(f, 0, 0, id, fl, -1, (int)(rnd() % 2) - 1,
                         kind == K_ISOTP_FD ? 64 : 8, p, n);
    } else if (kind == K_J1939) {
        uint32_t pk = (n + 6) / 7;
        memset(&f[0], 0, sizeof f[0]);
        f[0].id = id;
        f[0].flags = SF_CAN_EFF;
        f[0].len = 8;
        uint8_t cm[8] = {32, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)pk, 0xFF, 0xCA, 0xFE, 0};
        memcpy(f[0].d, cm, 8);
        for (uint32_t i = 1; i <= pk; i++) {
            memset(&f[i], 0xFF, sizeof f[i]);
            f[i].id = 7u << 26 | 0xEB0000u | 0xFF00u | (uint32_t)key;
            f[i].flags = SF_CAN_EFF;
            f[i].len = 8;
            f[i].d[0] = (uint8_t)i;
            uint32_t c = n - (i - 1) * 7 < 7 ? n - (i - 1) * 7 : 7;
            memcpy(f[i].d + 1, p + (i - 1) * 7, c);
        }
        k = (int)pk + 1;
    } else if (kind == K_ETP) {
        uint32_t pk = (n + 6) / 7, done = 0, win = rnd() % 4 ? 2 + rnd() % 15 : 255;
        memset(&f[0], 0, sizeof f[0]);
        f[0].id = id;
        f[0].flags = SF_CAN_EFF;
        f[0].len = 8;
        uint8_t rts[8] = {20, (uint8_t)n, (uint8_t)(n >> 8), 0, 0, 0x00, 0xEF, 0};
        memcpy(f[0].d, rts, 8);
        k = 1;
        etp_bytes[0] = etp_bytes[1] = 0;
        etp_dpo[0] = 0;
        while (done < pk) {
            uint32_t w = pk - done < win ? pk - done : win;
            memset(&f[k], 0, sizeof f[k]);
            f[k].id = id;
            f[k].flags = SF_CAN_EFF;
            f[k].len = 8;
            uint8_t dpo[8] = {22, (uint8_t)w, (uint8_t)done, (uint8_t)(done >> 8), 0,
                              0x00, 0xEF, 0};
            memcpy(f[k].d, dpo, 8);
            etp_dpo[k] = 1;
            etp_bytes[k + 1] = etp_bytes[k];
            k++;
            for (uint32_t i = 1; i <= w; i++, done++) {
                memset(&f[k], 0xFF, sizeof f[k]);
                f[k].id = (id & ~0xFF0000u) | 0xC70000u;
                f[k].flags = SF_CAN_EFF;
                f[k].len = 8;
                f[k].d[0] = (uint8_t)i;
                uint32_t c = n - done * 7 < 7 ? n - done * 7 : 7;
                memcpy(f[k].d + 1, p + done * 7, c);
                etp_dpo[k] = 0;
                etp_bytes[k + 1] = etp_bytes[k] + c;
                k++;
            }
        }
    } else {
        uint32_t pos = 0;
        for (uint8_t fc = 0; pos < n || fc == 0; fc++) {
            memset(&f[k], 0xFF, sizeof f[k]);
            f[k].id = id;
            f[k].flags = SF_CAN_EFF;
            f[k].len = 8;
            f[k].d[0] = (uint8_t)((msg & 7) << 5 | fc);
            uint32_t c;
            if (!fc) {
                f[k].d[1] = (uint8_t)n;
                c = n < 6 ? n : 6;
                memcpy(f[k].d + 2, p, c);
            } else {
                c = n - pos < 7 ? n - pos : 7;
                memcpy(f[k].d + 1, p + pos, c);
            }
            pos += c;
            k++;
        }
    }
    uint64_t t = t0;
    for (int i = 0; i < k; i++) {
        out[i].ts = t;
        t += 1000000ull * (1 + rnd() % 20);
        out[i].id = f[i].id;
        out[i].flags = f[i].flags;
        out[i].len = f[i].len;
        memcpy(out[i].d, f[i].d, 64);
        out[i].key = key;
        out[i].msg = msg;
        out[i].idx = i;
    }
    return k;
}

/* Bytes frames 0 .. upto - 1 of a message carry, in the protocol's framing (a J1939 TP.CM
 * carries none). */
static uint32_t bytes_upto(int kind, uint32_t n, int upto)
{
    uint32_t first, unit;
    if (kind == K_ETP)
        return etp_bytes[upto];
    switch (kind) {
    case K_ISOTP: first = n > 4095 ? 2 : 6; unit = 7; break;
    case K_ISOTP_FD: first = 62; unit = 63; break;
    case K_J1939: first = 0; unit = 7; break;
    default: first = 6; unit = 7; break;
    }
    uint32_t b = upto <= 0 ? 0 : first + unit * (uint32_t)(upto - 1);
    return b < n ? b : n;
}

/* The model: one message's delivered frames (indices, in order) to its outcomes. */
static void model(int key, int msg, const int *idx, int n, int total)
{
    int kind = kind_of(key), open = 0, next = 0;
    int oi = kind == K_J1939 || kind == K_ETP ? 3 : kind == K_FAST ? 2 : 0;
    uint32_t len = plen[key][msg];
    int single = total == 1 && kind != K_J1939 && kind != K_ETP;
    for (int j = 0; j < n; j++) {
        int i = idx[j];
        if (i == 0) {
            if (open)
                want[key][nwant[key]++] =
                    (struct expect){SF_MSG_REPLACED, bytes_upto(kind, len, next)};
            if (single) {
                want[key][nwant[key]++] = (struct expect){SF_MSG_OK, len};
                open = 0;
            } else {
                open = 1;
                next = 1;
            }
            continue;
        }
        if (!open) {
            want_orphans[oi]++;
            continue;
        }
        /* a DPO again at once: its offset is the packets taken, nothing changes */
        if (kind == K_ETP && etp_dpo[i] && i == next - 1)
            continue;
        int match = kind == K_ISOTP || kind == K_ISOTP_FD ? (i & 15) == (next & 15) : i == next;
        if (match) {
            next++;
            if (next == total) {
                want[key][nwant[key]++] = (struct expect){SF_MSG_OK, len};
                open = 0;
            }
            continue;
        }
        int dup = kind == K_ISOTP || kind == K_ISOTP_FD
                      ? next >= 2 && (i & 15) == ((next - 1) & 15)
                      : next > 1 && i == next - 1;
        if (dup)
            want_dup++;
        else
            want_wrong++;
        want[key][nwant[key]++] = (struct expect){SF_MSG_BAD_SEQ, bytes_upto(kind, len, next)};
        open = 0;
    }
    if (open)
        want[key][nwant[key]++] = (struct expect){SF_MSG_TIMEOUT, bytes_upto(kind, len, next)};
}

static int cmp(const void *a, const void *b)
{
    const struct gen_frame *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static void one_seed(uint32_t seed)
{
    static struct gen_frame tmp[MAXF];
    static int delivered[MAXF * 2];
    static struct sf_proto_session sess[40];
    static uint8_t arena[128 * 1024];
    static struct sf_proto p;
    rng = seed * 2654435761u + 1;
    nframes = 0;
    memset(nwant, 0, sizeof nwant);
    memset(ngot, 0, sizeof ngot);
    memset(want_orphans, 0, sizeof want_orphans);
    want_dup = want_wrong = 0;
    uint64_t cut = 1000000ull * (rnd() % 3000);      /* the log starts here */
    unsigned drop = rnd() % 6, rep = rnd() % 6;      /* percent */
    uint32_t serial = 0;
    for (int key = 0; key < KEYS; key++) {
        int kind = kind_of(key);
        uint64_t t = 1000000ull * (rnd() % 1000);
        for (int msg = 0; msg < PER_KEY; msg++) {
            uint32_t max = kind == K_J1939 ? 400 : kind == K_FAST ? 223 : kind == K_ETP ? MAXB : 300;
            uint32_t min = kind == K_J1939 ? 9 : kind == K_ETP ? 1786 : 1;
            if (kind == K_ISOTP && rnd() % 16 == 0)
                max = 1200;
            plen[key][msg] = min + rnd() % (max - min + 1);
            fill_pattern(payload[key][msg], plen[key][msg],
                         seed * 1000 + (uint32_t)(key * 50 + msg));
            int k = make(key, msg, t, tmp);
            t = tmp[k - 1].ts + 2000000000ull + 1000000ull * (rnd() % 500);
            int nd = 0;
            for (int i = 0; i < k; i++) {
                if (tmp[i].ts < cut || rnd() % 100 < drop)
                    continue;
                int times = rnd() % 100 < rep ? 2 : 1;
                for (int c = 0; c < times; c++) {
                    frames[nframes] = tmp[i];
                    frames[nframes].serial = serial++;
                    nframes++;
                    delivered[nd++] = i;
                }
            }
            model(key, msg, delivered, nd, k);
        }
    }
    qsort(frames, (size_t)nframes, sizeof frames[0], cmp);

    struct sf_proto_config c = {0};
    const uint32_t pgns[] = {129029};
    c.sessions = sess;
    c.nsessions = 40;
    c.arena = arena;
    c.arena_size = sizeof arena;
    c.fast_pgns = pgns;
    c.n_fast_pgns = 1;
    REQUIRE(sf_proto_init(&p, &c) == 0);
    struct sf_proto_msg m;
    for (int i = 0; i <= nframes; i++) {
        struct sf_proto_frame f;
        if (i < nframes)
            f = (struct sf_proto_frame){frames[i].ts, frames[i].id, frames[i].flags, 0,
                                        frames[i].len, frames[i].d};
        else
            f = (struct sf_proto_frame){UINT64_MAX / 2, 0x100, 0, 0, 0, NULL};
        sf_proto_feed(&p, &f);
        while (sf_proto_next(&p, &m)) {
            int key = key_of(&m);
            REQUIRE(key >= 0 && key < KEYS && ngot[key] < PER_KEY * 3);
            /* the payload is what was sent, from the start */
            int msg = -1;
            for (int j = 0; j < PER_KEY && msg < 0; j++)
                if (plen[key][j] == m.declared && m.first_ts >= frames[0].ts)
                    if (!m.length || !memcmp(payload[key][j], m.payload, m.length))
                        msg = j;
            CHECK(msg >= 0);
            got[key][ngot[key]++] = m;
        }
    }
    sf_proto_finish(&p);
    CHECK(!sf_proto_next(&p, &m));
    int bad = 0;
    for (int key = 0; key < KEYS; key++) {
        int same = ngot[key] == nwant[key];
        for (int j = 0; same && j < nwant[key]; j++)
            same = got[key][j].status == want[key][j].status &&
                   got[key][j].length == want[key][j].length;
        if (!same && bad++ < 3) {
            fprintf(stderr, "seed %u key %d: got %d messages, want %d\n", seed, key,
                    ngot[key], nwant[key]);
            for (int j = 0; j < ngot[key] || j < nwant[key]; j++)
                fprintf(stderr, "  %d: got %s/%u want %s/%u\n", j,
                        j < ngot[key] ? sf_proto_status_name(got[key][j].status) : "-",
                        j < ngot[key] ? got[key][j].length : 0,
                        j < nwant[key] ? sf_proto_status_name(want[key][j].status) : "-",
                        j < nwant[key] ? want[key][j].length : 0);
        }
        CHECK(same);
    }
    const struct sf_proto_stats *st = sf_proto_stats(&p);
    CHECK_EQ(st->isotp_orphan_cf, want_orphans[0]);
    CHECK_EQ(st->fast_orphan, want_orphans[2]);
    CHECK_EQ(st->j1939_orphan, want_orphans[3]);
    CHECK_EQ(st->isotp_dup_cf + st->j1939_dup_dt + st->fast_dup, want_dup);
    CHECK_EQ(st->isotp_wrong_sn + st->j1939_wrong_seq + st->fast_wrong_seq, want_wrong);
    CHECK_EQ(st->no_session + st->no_memory + st->not_taken, 0);
}

/* Garbage: random frames on the protocols' ids (random lengths, PCI bytes, flags, small
 * tables and arena so that they run out) under ASan/UBSan; every message keeps the
 * invariants and every queued message is handed out once. */
static void garbage(uint32_t seed)
{
    static const uint32_t ids[] = {0x7E0, 0x7E8, 0x7DF, 0x18DAF110, 0x18DA10F1, 0x18DB33F1,
                                   0x1CECFF00, 0x1CEBFF00, 0x1CEC2100, 0x1CEB2100, 0x1CEC00F9,
                                   0x0DF80523, 0x612, 0x6F1, 0x100, 0x18C84225, 0x18C74225,
                                   0x18C82542};
    static const uint32_t pgns[] = {129029};
    static const struct sf_isotp_pair pairs[] = {{0x6F1, 0x612, 0, SF_ISOTP_EXTENDED, 0xFF}};
    struct sf_proto_session sess[5];
    uint8_t arena[2600];   /* one ETP message fits, two do not */
    struct sf_proto p;
    struct sf_proto_config c = {.sessions = sess, .nsessions = 5, .arena = arena,
                                .arena_size = sizeof arena, .fast_pgns = pgns, .n_fast_pgns = 1,
                                .isotp_pairs = pairs, .n_isotp_pairs = 1, .report_ff = 1,
                                .n_cr_ms = 20, .t1_ms = 20, .t2_ms = 30, .t3_ms = 30,
                                .t4_ms = 30, .fast_ms = 20};
    REQUIRE(sf_proto_init(&p, &c) == 0);
    rng = seed;
    uint64_t ts = 0, handed = 0;
    struct sf_proto_msg m;
    uint8_t d[64];
    for (int i = 0; i < 200000; i++) {
        ts += 1000000ull * (rnd() % 4);
        uint32_t id = ids[rnd() % (sizeof ids / sizeof ids[0])];
        uint8_t len = (uint8_t)(rnd() % 3 ? 8 : rnd() % 65);
        for (int k = 0; k < len; k++)
            d[k] = (uint8_t)rnd();
        if (len && rnd() % 2)
            d[0] = (uint8_t)(rnd() % 4 << 4 | rnd() % 3);   /* plausible PCIs more often */
        if (len > 1 && id >> 16 == 0x1CEC && rnd() % 2)
            d[0] = (uint8_t[]){16, 17, 19, 32, 255}[rnd() % 5];
        if (len > 4 && id >> 16 == 0x18C8 && rnd() % 2) {
            d[0] = (uint8_t[]){20, 21, 22, 23, 255}[rnd() % 5];
            if (d[0] == 20)   /* an RTS of 1,536..2,559 bytes: often one that fits */
                d[2] = (uint8_t)(6 + rnd() % 4);
            else              /* packet numbers and offsets near the start */
                d[2] = (uint8_t)(rnd() % 2);
            d[3] = d[4] = 0;
        }
        uint32_t flags = (id > 0x7FF ? SF_CAN_EFF : 0) | (len > 8 ? SF_CAN_FD : 0);
        struct sf_proto_frame f = {ts, id, flags, (uint8_t)(rnd() % 2), len, d};
        int q = sf_proto_feed(&p, &f);
        CHECK(q >= 0);
        int taken = 0;
        while (sf_proto_next(&p, &m)) {
            taken++;
            handed += m.event == SF_PROTO_EV_MESSAGE;
            CHECK(m.length <= m.declared);
            CHECK(m.first_ts <= m.last_ts);
            CHECK(!m.length || m.payload);
            CHECK(m.status <= SF_MSG_END);
            if (m.proto == SF_PROTO_J1939)
                CHECK(m.declared >= 9 &&
                      (m.declared <= SF_J1939_TP_MAX || (m.id >> 16 & 0x3FF) == 0xC8));
            if (m.proto == SF_PROTO_FAST)
                CHECK(m.declared >= 1 && m.declared <= SF_FAST_MAX);
            if (m.status == SF_MSG_OK && m.event == SF_PROTO_EV_MESSAGE)
                CHECK(m.length == m.declared);
        }
        CHECK_EQ(taken, q);
        if (check_failures)
            return;
    }
    sf_proto_finish(&p);
    while (sf_proto_next(&p, &m))
        handed++;
    const struct sf_proto_stats *st = sf_proto_stats(&p);
    CHECK_EQ(st->messages_ok + st->messages_broken, handed);
    CHECK_EQ(st->not_taken, 0);
    CHECK(st->no_session + st->no_memory > 0 && st->timeouts > 0);   /* the tables ran out */
}

int main(void)
{
    for (uint32_t seed = 1; seed <= 60 && !check_failures; seed++)
        one_seed(seed);
    for (uint32_t seed = 1; seed <= 5 && !check_failures; seed++)
        garbage(seed);
    TEST_END();
}
