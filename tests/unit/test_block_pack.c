/* The pack stage (src/log/block_pack.c, docs/FORMAT.md "Compressed record blocks"): round
 * trips of every record kind the codec meets (classic, extended, FD up to 64 bytes, remote
 * and error frames, records it stores literally, a dictionary past 512 keys) with payloads
 * split between packed blocks; every packed block unpacks alone; a stream cut at every
 * length, with every byte flipped, or random is refused or unpacks within bounds (never a
 * crash, ASan checks the bounds); a file of compressed blocks through the decoder with one
 * block damaged loses exactly that block's records. */
#include "check.h"
#include "streamfat/block_pack.h"
#include "streamfat/decode.h"
#include "streamfat/rec.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

#define PAY 4048u                       /* a 4 KiB block's payload */
#define NPAY 64

static uint8_t plain[NPAY][PAY];
static uint32_t plain_used[NPAY];
static uint8_t unpack_mem[SF_UNPACK_MEM] __attribute__((aligned(8)));

static uint32_t ld_raw(const uint8_t *s)
{
    return (uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 | (uint32_t)s[3] << 24;
}

/* One record of a random kind at p (room bytes free); its size or 0 when it does not fit. */
static uint32_t random_rec(uint8_t *p, uint32_t room, uint64_t *ts, uint32_t keys)
{
    uint8_t data[64] = { 0 };
    uint32_t kind = (uint32_t)(rng() % 16), id = (uint32_t)(rng() % keys), flags = 0, len = 8;

    *ts += rng() % 3 ? (rng() % 2000) * 1000 : rng() % 5000000;
    if (rng() % 50 == 0)
        *ts -= 7000;                    /* channels interleave: time may go back */
    for (uint32_t i = 0; i < 64; i++)
        data[i] = (uint8_t)(i < 3 ? rng() : (id * 7 + i));
    if (kind < 9) {
        id &= 0x7FF;
    } else if (kind < 11) {
        flags = SF_CAN_EFF;
        id |= 0x10000000u;
    } else if (kind == 11) {
        static const uint8_t fd_len[] = { 0, 3, 8, 12, 16, 20, 24, 32, 48, 64 };
        flags = SF_CAN_FD | SF_CAN_BRS;
        len = fd_len[rng() % sizeof fd_len];
        id &= 0x7FF;
    } else if (kind == 12) {
        flags = SF_CAN_RTR;
        len = (uint32_t)(rng() % 9);
        id &= 0x7FF;
    } else if (kind == 13) {
        flags = SF_CAN_ERR;
        id = 0x4;
    } else {
        /* SAMPLE or TEXT: stored literally */
        uint32_t n = (uint32_t)(rng() % 40), size = sf_rec_size(n);
        if (size > room)
            return 0;
        sf_rec_put(p, kind == 14 ? SF_REC_SAMPLE : SF_REC_TEXT, (uint8_t)(rng() % 3), 0, *ts,
                   data, (uint16_t)n);
        return size;
    }
    uint32_t size = sf_rec_size(SF_CAN_BODY + len);
    if (size > room)
        return 0;
    if (sf_rec_put_can(p, (uint8_t)(rng() % 2), *ts, id, flags, data, (uint8_t)len) != size)
        return 0;
    if (kind == 8)
        p[SF_REC_HDR + 6] = 1;          /* a reserved byte set: stored literally */
    return size;
}

static void make_plain(uint32_t keys)
{
    uint64_t ts = 1700000000000000000ull;
    for (int b = 0; b < NPAY; b++) {
        uint32_t used = 0, k;
        memset(plain[b], 0, PAY);
        while ((k = random_rec(plain[b] + used, PAY - used, &ts, keys)) > 0)
            used += k;
        plain_used[b] = used;
    }
}

/* Pack every plain payload into stored payloads of cap bytes (each kept in *out), unpack
 * each alone and compare the concatenation with the input. Returns the packed blocks. */
static int round_trip(uint32_t cap)
{
    static struct sf_pack pk;
    static uint8_t stored[1024][PAY];
    static uint32_t stored_n[1024];
    static uint64_t first[1024];
    static uint8_t all_in[NPAY * PAY], all_out[NPAY * PAY];
    uint32_t in_n = 0, out_n = 0, off = 0, took, nb = 0, records = 0;
    int b = 0;

    for (int i = 0; i < NPAY; i++) {
        memcpy(all_in + in_n, plain[i], plain_used[i]);
        in_n += plain_used[i];
    }
    while (b < NPAY) {
        REQUIRE(nb < 1024);
        sf_pack_begin(&pk, stored[nb], cap, sf_pack_raw_max(4096));
        int r = 0;
        while (b < NPAY && (r = sf_pack_add(&pk, plain[b] + off, plain_used[b] - off, &took)) == 0) {
            b++;
            off = 0;
        }
        if (r)
            off += took;
        REQUIRE(r >= 0);
        REQUIRE(pk.count > 0);
        stored_n[nb] = sf_pack_finish(&pk);
        first[nb] = pk.first_ts;
        records += pk.count;
        CHECK(stored_n[nb] <= cap);
        nb++;
    }
    /* each alone, in reverse order: nothing carries over between blocks */
    for (int i = (int)nb - 1; i >= 0; i--) {
        uint32_t raw;
        uint8_t *out = unpack_mem + SF_UNPACK_DICT_MEM + 48;
        REQUIRE(sf_unpack(stored[i], stored_n[i], first[i], out, SF_PACK_RAW_MAX, unpack_mem,
                          &raw) == 0);
        uint32_t at = 0;
        for (int j = 0; j < i; j++)
            at += ld_raw(stored[j]);
        memcpy(all_out + at, out, raw);
        out_n += raw;
    }
    CHECK_EQ(out_n, in_n);
    CHECK(memcmp(all_in, all_out, in_n) == 0);
    (void)records;
    return (int)nb;
}

/* Every damaged form of a good stream: refused, or unpacked within bounds. */
static void test_damage(void)
{
    static struct sf_pack pk;
    static uint8_t stored[PAY], bad[PAY];
    uint32_t took, raw, refused = 0, n;
    uint8_t *out = unpack_mem + SF_UNPACK_DICT_MEM + 48;

    make_plain(40);
    sf_pack_begin(&pk, stored, PAY, sf_pack_raw_max(4096));
    sf_pack_add(&pk, plain[0], plain_used[0], &took);
    sf_pack_add(&pk, plain[1], plain_used[1], &took);
    n = sf_pack_finish(&pk);
    REQUIRE(n > 8);
    REQUIRE(sf_unpack(stored, n, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) == 0);
    /* cut at every length: never the whole payload, so always refused */
    for (uint32_t k = 0; k < n; k++)
        CHECK(sf_unpack(stored, k, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) != 0);
    /* every byte flipped in several ways: refused or unpacked, never past raw_len's bound */
    for (uint32_t k = 0; k < n; k++) {
        static const uint8_t x[] = { 0x01, 0x80, 0xFF, 0x7F };
        for (unsigned v = 0; v < sizeof x; v++) {
            memcpy(bad, stored, n);
            bad[k] ^= x[v];
            if (sf_unpack(bad, n, pk.first_ts, out, 4096 * 4, unpack_mem, &raw))
                refused++;
            else
                CHECK(raw <= 4096 * 4);
        }
    }
    CHECK(refused > 0);
    /* random streams with a plausible header */
    for (int t = 0; t < 20000; t++) {
        uint32_t len = 8 + (uint32_t)(rng() % 200);
        for (uint32_t i = 0; i < len; i++)
            bad[i] = (uint8_t)rng();
        bad[0] = (uint8_t)(rng() % 512);
        bad[1] = (uint8_t)(rng() % 2);
        bad[2] = bad[3] = 0;
        bad[4] = 1;
        bad[5] = bad[6] = bad[7] = 0;
        if (!sf_unpack(bad, len, 0, out, 1024, unpack_mem, &raw))
            CHECK(raw <= 1024);
    }
    /* wrong codec, reserved bytes, raw_len over the cap */
    memcpy(bad, stored, n);
    bad[4] = 2;
    CHECK(sf_unpack(bad, n, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) != 0);
    memcpy(bad, stored, n);
    bad[6] = 1;
    CHECK(sf_unpack(bad, n, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) != 0);
    CHECK(sf_unpack(stored, n, pk.first_ts, out, ld_raw(stored) - 1, unpack_mem, &raw) != 0);
}

/* The prediction (FORMAT.md: each data byte from the entry's last three frames): frames whose
 * bytes count, ramp (wrapping past 255), stay constant or jump, on classic and FD lengths with
 * a short last group (12, 20 bytes), round-trip exactly; once an entry has three frames, a
 * frame whose every byte repeated its step costs tag, time and one zero mask a group, and a
 * byte that breaks its step costs that byte only. */
static void test_predict(void)
{
    static const uint8_t lens[] = { 8, 12, 20, 64, 3 };
    static uint8_t in[64 * 1024], stored[64 * 1024];
    static struct sf_pack pk;
    uint32_t n = 0, took, raw;
    uint64_t ts = 1000000;

    for (uint32_t f = 0; f < 200; f++) {
        for (uint32_t k = 0; k < sizeof lens; k++) {
            uint8_t d[64];
            for (uint32_t i = 0; i < 64; i++)
                d[i] = (uint8_t)(i % 4 == 0 ? f * 3 + i             /* a counter */
                               : i % 4 == 1 ? 0xF0 + f * (i + 1)    /* a ramp that wraps */
                               : i % 4 == 2 ? 0x55                  /* constant */
                               : (f / 7) * 13);                     /* steps now and then */
            ts += 1000;
            n += sf_rec_put_can(in + n, 0, ts, 0x100 + k, lens[k] > 8 ? SF_CAN_FD : 0, d,
                                lens[k]);
        }
    }
    sf_pack_begin(&pk, stored, sizeof stored, SF_PACK_RAW_MAX);
    CHECK_EQ(sf_pack_add(&pk, in, n, &took), 0);
    uint32_t sn = sf_pack_finish(&pk);
    uint8_t *out = unpack_mem + SF_UNPACK_DICT_MEM + 48;
    REQUIRE(sf_unpack(stored, sn, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) == 0);
    CHECK_EQ(raw, n);
    CHECK(memcmp(out, in, n) == 0);
    /* the bound: per record tag + time (3 bytes) and a mask per group (15 groups over the 5
     * entries); every data byte of each entry's first three frames; and the 27 bytes
     * i % 4 == 3 on the 2 frames around each of the 28 steps of f / 7. Measured 5,945
     * bytes; coded against the previous frame alone (every counter and ramp byte sent each
     * frame) 16,583. */
    CHECK(sn < 200 * (5 * 3 + 15) + 3 * (8 + 12 + 20 + 64 + 3) + 28 * 2 * 27);
}

/* A record larger than an empty packed block takes is refused with nothing added. */
static void test_too_big(void)
{
    static struct sf_pack pk;
    static uint8_t rec[PAY], stored[PAY];
    uint32_t took;

    uint8_t body[4000] = { 1 };
    sf_rec_put(rec, SF_REC_SAMPLE, 0, 0, 5, body, (uint16_t)sizeof body);
    sf_pack_begin(&pk, stored, 1000, sf_pack_raw_max(4096));
    CHECK_EQ(sf_pack_add(&pk, rec, sf_rec_size(sizeof body), &took), 1);
    CHECK_EQ(took, 0);
    CHECK_EQ(pk.count, 0);
    CHECK_EQ(sf_pack_finish(&pk), 0);
}

/* A file of compressed blocks through the decoder: clean, then one block's stored bytes hit
 * (the CRC refuses it): that block's records are lost, every other comes back. */
static void test_decoder(void)
{
    enum { B = 4096, NB = 12 };
    static uint8_t file[NB * B], dbuf[SF_BLOCK_MAX];
    static struct sf_pack pk;
    uint32_t per[NB] = { 0 }, took, off = 0;
    int b = 0, nb = 1;
    struct sf_block_info bi = { .kind = SF_BLOCK_FILE_HEADER, .file_id = 77, .seq = 0,
                                .first_ts = 0, .used = SF_FILE_HDR, .count = 0, .block_size = B };
    struct sf_file_header fh = { .features = SF_FEATURE_PACKED };

    make_plain(20);
    memset(file, 0, sizeof file);
    sf_file_header_put(file + SF_BLOCK_HDR, &fh);
    sf_block_seal(file, &bi);
    while (b < NPAY && nb < NB) {
        uint8_t *blk = file + (size_t)nb * B;
        sf_pack_begin(&pk, blk + SF_BLOCK_HDR, B - SF_BLOCK_HDR, sf_pack_raw_max(B));
        int r = 0;
        while (b < NPAY && (r = sf_pack_add(&pk, plain[b] + off, plain_used[b] - off, &took)) == 0) {
            b++;
            off = 0;
        }
        if (r)
            off += took;
        struct sf_block_info rb = { .kind = SF_BLOCK_PACKED, .file_id = 77, .seq = (uint64_t)nb,
                                    .first_ts = pk.first_ts, .count = pk.count, .block_size = B };
        rb.used = sf_pack_finish(&pk);
        sf_block_seal(blk, &rb);
        per[nb] = pk.count;
        nb++;
    }
    for (int damaged = 0; damaged < 2; damaged++) {
        struct sf_dec d;
        struct sf_dec_event ev;
        uint64_t got[NB] = { 0 };
        if (damaged)
            file[3 * B + SF_BLOCK_HDR + 20] ^= 0x10;
        REQUIRE(sf_dec_init(&d, dbuf, sizeof dbuf) == 0);
        REQUIRE(sf_dec_set_unpack(&d, unpack_mem, sizeof unpack_mem) == 0);
        size_t at = 0;
        int k;
        for (;;) {
            k = sf_dec_next(&d, &ev);
            if (k == SF_DEC_END)
                break;
            if (k == SF_DEC_RECORD)
                got[ev.block]++;
            if (k == SF_DEC_NEED_DATA) {
                if (at == (size_t)nb * B)
                    sf_dec_finish(&d);
                else
                    at += sf_dec_feed(&d, file + at, (size_t)nb * B - at);
            }
        }
        for (int i = 1; i < nb; i++)
            CHECK_EQ(got[i], damaged && i == 3 ? 0 : per[i]);
        CHECK_EQ(sf_dec_stats(&d)->damage_events, (uint64_t)damaged);
    }
    /* without scratch a compressed block is malformed, never garbage */
    {
        struct sf_dec d;
        struct sf_dec_event ev;
        uint64_t recs = 0;
        REQUIRE(sf_dec_init(&d, dbuf, sizeof dbuf) == 0);
        size_t at = 0;
        int k;
        for (;;) {
            k = sf_dec_next(&d, &ev);
            if (k == SF_DEC_END)
                break;
            if (k == SF_DEC_RECORD)
                recs++;
            if (k == SF_DEC_NEED_DATA) {
                if (at == (size_t)nb * B)
                    sf_dec_finish(&d);
                else
                    at += sf_dec_feed(&d, file + at, (size_t)nb * B - at);
            }
        }
        CHECK_EQ(recs, 0);
        CHECK_EQ(sf_dec_stats(&d)->blocks_damaged, (uint64_t)(nb - 1));
    }
}

/* Times far apart: a difference of 2^62 ns or more either way (a time of 0 next to one
 * near 2^63, both allowed) round-trips; found by fuzz_unpack. */
static void test_time_extremes(void)
{
    static const uint64_t ts[] = { 0, 0x7FFFFFFFFFFFFFFFull, 0, 0x7FFFFFFFFFFFF000ull, 1,
                                   0x4000000000000001ull, 0x7FFFFFFFFFFFFFFFull, 0, 999 };
    static uint8_t in[1024], stored[2048];
    static struct sf_pack pk;
    uint8_t d[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint32_t n = 0, took, raw;

    for (unsigned i = 0; i < sizeof ts / sizeof ts[0]; i++)
        n += sf_rec_put_can(in + n, 0, ts[i], 0x123, 0, d, 8);
    sf_pack_begin(&pk, stored, sizeof stored, sf_pack_raw_max(4096));
    CHECK_EQ(sf_pack_add(&pk, in, n, &took), 0);
    CHECK_EQ(took, n);
    uint32_t sn = sf_pack_finish(&pk);
    uint8_t *out = unpack_mem + SF_UNPACK_DICT_MEM + 48;
    REQUIRE(sf_unpack(stored, sn, pk.first_ts, out, SF_PACK_RAW_MAX, unpack_mem, &raw) == 0);
    CHECK_EQ(raw, n);
    CHECK(memcmp(out, in, n) == 0);
}

int main(void)
{
    test_time_extremes();
    test_predict();
    make_plain(40);
    CHECK(round_trip(PAY) > 1);
    CHECK(round_trip(512 - 48) > 4);            /* small blocks: many splits */
    make_plain(2000);                           /* more keys than the dictionary holds */
    CHECK(round_trip(PAY) > 1);
    test_damage();
    test_too_big();
    test_decoder();
    TEST_END();
}
