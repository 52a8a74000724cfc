/* The record format and its decoder: CRC-32C vectors and speed, block seal/check, every
 * record type, single-byte corruption of sealed blocks, records running past `used`, the
 * streaming decoder over synthetic files (damaged, gap, foreign, unwritten, truncated, block 0
 * lost) fed in pieces from 1 byte to 1 MiB and through the read callback, and a seeded
 * bit-flip fuzz loop whose oracle is exact: blocks whose checked bytes were hit deliver
 * nothing, all others deliver every record. */
#include "check.h"
#include "crc32c_ref.h"
#include "streamfat/rec.h"
#include "streamfat/decode.h"
#include "util/crc32c.h"

#include <string.h>
#include <time.h>

/* ---- helpers ----------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* ---- CRC --------------------------------------------------------------------------- */

static void test_crc(void)
{
    uint8_t b[64];

    CHECK_EQ(sf_crc32c(0, "123456789", 9), 0xE3069283u);
    CHECK_EQ(sf_crc32c(0, "", 0), 0);
    /* RFC 3720 (iSCSI) B.4 vectors */
    memset(b, 0, 32);
    CHECK_EQ(sf_crc32c(0, b, 32), 0x8A9136AAu);
    memset(b, 0xFF, 32);
    CHECK_EQ(sf_crc32c(0, b, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)i;
    CHECK_EQ(sf_crc32c(0, b, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        b[i] = (uint8_t)(31 - i);
    CHECK_EQ(sf_crc32c(0, b, 32), 0x113FDB5Cu);

    /* Every length, alignment and split against the bitwise definition. */
    static uint8_t buf[1024 + 16];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rng();
    int bad = 0;
    for (size_t al = 0; al < 8; al++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t want = crc_bitwise(0, buf + al, n);
            if (sf_crc32c(0, buf + al, n) != want)
                bad++;
            size_t cut = n / 3;
            if (sf_crc32c(sf_crc32c(0, buf + al, cut), buf + al + cut, n - cut) != want)
                bad++;
        }
    CHECK_EQ(bad, 0);
    CHECK_EQ(sf_crc32c(0, buf, 1024), crc_bitwise(0, buf, 1024));
#if CRC32C_DISPATCH
    /* sf_crc32c took the crc32 instruction if this CPU has it: check the tables as well */
    bad = 0;
    for (size_t al = 0; al < 8; al++)
        for (size_t n = 0; n <= 300; n++) {
            uint32_t want = crc_bitwise(0, buf + al, n);
            size_t cut = n / 3;
            if (sfu_crc32c_tables(0, buf + al, n) != want ||
                sfu_crc32c_tables(sfu_crc32c_tables(0, buf + al, cut), buf + al + cut,
                                  n - cut) != want)
                bad++;
        }
    CHECK_EQ(bad, 0);
#endif
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bench_crc(void)
{
    static uint8_t buf[1 << 16];
    uint32_t c = 0;
    uint64_t bytes = 0;
    double t0 = now_s(), dt;

    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 131u + 7u);
    do {
        for (int k = 0; k < 64; k++)
            c = sf_crc32c(c, buf, sizeof buf);
        bytes += 64u * sizeof buf;
        dt = now_s() - t0;
    } while (dt < 0.3);
    printf("sf_crc32c: %.2f GB/s over 64 KiB blocks (crc %08X)\n", (double)bytes / dt / 1e9,
           (unsigned)c);
}

/* ---- records and blocks ------------------------------------------------------------ */

static void test_records(void)
{
    static uint8_t blk[4096];
    struct sf_block_info bi = { 0 }, got;
    struct sf_rec r;
    struct sf_can can;
    uint8_t data[64];
    uint32_t off = 0, o;

    for (int i = 0; i < 64; i++)
        data[i] = (uint8_t)(0xA0 + i);
    memset(blk, 0xEE, sizeof blk);   /* seal must zero what is not used */
    uint8_t *p = blk + SF_BLOCK_HDR;

    /* CAN: the combinations the format allows, and those it does not */
    CHECK_EQ(sf_rec_put_can(p + off, 0, 1000, 0x123, 0, data, 8), 32);
    off += 32;
    CHECK_EQ(sf_rec_put_can(p + off, 1, 1001, 0x1ABCDEF0, SF_CAN_EFF, data, 3), 32);
    off += 32;
    CHECK_EQ(sf_rec_put_can(p + off, 2, 1002, 0x7FF, SF_CAN_RTR, NULL, 0), 24);
    off += 24;
    CHECK_EQ(sf_rec_put_can(p + off, 3, 1003, 0x80, SF_CAN_ERR, data, 8), 32);
    off += 32;
    CHECK_EQ(sf_rec_put_can(p + off, 4, 1004, 0x321, SF_CAN_FD | SF_CAN_BRS | SF_CAN_ESI,
                            data, 64), 88);
    off += 88;
    CHECK_EQ(sf_rec_put_can(p + off, 5, 1005, 0x12345, SF_CAN_FD | SF_CAN_EFF, data, 12), 40);
    off += 40;
    {   /* a remote frame with a length and no data: zeros stored */
        uint8_t rr[40];
        memset(rr, 0xEE, sizeof rr);
        CHECK_EQ(sf_rec_put_can(rr, 0, 0, 0x55, SF_CAN_RTR, NULL, 5), 32);
        int z = 1;
        for (int i = 24; i < 32; i++)
            z &= rr[i] == 0;
        CHECK(z && rr[20] == 5);
    }
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 0x800, 0, data, 1), 0);            /* 11-bit id */
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 0x20000000, SF_CAN_EFF, data, 1), 0);
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, 0, data, 9), 0);                /* classic > 8 */
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, SF_CAN_FD, data, 65), 0);
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, SF_CAN_BRS, data, 1), 0);       /* BRS without FD */
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, SF_CAN_FD | SF_CAN_RTR, data, 1), 0);
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, 0x80, data, 1), 0);             /* unknown flag */
    CHECK(sf_rec_put_can(blk, 0, 0, 1, SF_CAN_TX, data, 1) > 0);          /* TX: written */
    CHECK_EQ(sf_rec_put_can(blk, 0, 0, 1, SF_CAN_TX | SF_CAN_BRS, data, 1), 0);

    /* The other types, each with odd lengths to exercise padding */
    const char *text = "hello, log";
    uint8_t lat[16], drop[24];
    for (int i = 0; i < 16; i++)
        lat[i] = (uint8_t)i;
    for (int i = 0; i < 24; i++)
        drop[i] = (uint8_t)(100 + i);
    sf_rec_put(p + off, SF_REC_SAMPLE, 7, 0xDEADBEEF, 2000, data, 5);
    off += sf_rec_size(5);
    sf_rec_put(p + off, SF_REC_TEXT, 0, 0, 2001, text, (uint16_t)strlen(text));
    off += sf_rec_size((uint32_t)strlen(text));
    sf_rec_put(p + off, SF_REC_LATENCY, 9, 0, 2002, lat, 16);
    off += sf_rec_size(16);
    sf_rec_put(p + off, SF_REC_DROP, 0, 0, 2003, drop, 24);
    off += sf_rec_size(24);
    sf_rec_put(p + off, SF_REC_ANNOTATION, 0, 0, 2004, "trigger", 7);
    off += sf_rec_size(7);
    sf_rec_put(p + off, SF_REC_CHANNEL, 3, 0, 2005, "can3", 4);
    off += sf_rec_size(4);
    sf_rec_put(p + off, SF_REC_META, 0, 0, 2006, "k=v", 3);
    off += sf_rec_size(3);
    sf_rec_put(p + off, 0x7E, 0, 0, 2007, NULL, 0);     /* unknown type, empty body */
    off += sf_rec_size(0);

    bi.kind = SF_BLOCK_RECORDS;
    bi.file_id = 0x0123456789ABCDEFull;
    bi.seq = 5;
    bi.first_ts = 1000;
    bi.used = off;
    bi.count = 14;
    bi.block_size = sizeof blk;
    sf_block_seal(blk, &bi);
    CHECK(sf_block_check(blk, sizeof blk, &got) == 0);
    CHECK_EQ(got.kind, SF_BLOCK_RECORDS);
    CHECK(got.file_id == bi.file_id);
    CHECK_EQ(got.seq, 5);
    CHECK_EQ(got.first_ts, 1000);
    CHECK_EQ(got.used, off);
    CHECK_EQ(got.count, 14);
    CHECK_EQ(got.block_size, 4096);
    int padding_zero = 1;
    for (size_t i = SF_BLOCK_HDR + off; i < sizeof blk; i++)
        padding_zero &= blk[i] == 0;
    CHECK(padding_zero);
    uint32_t sz;
    CHECK(sf_block_peek_size(blk, &sz) == 0 && sz == 4096);
    CHECK_EQ(sf_block_check(blk, 2048, &got), SF_ECORRUPT);   /* not its size */

    static const struct { uint32_t id, flags; uint8_t len, ch; } cans[6] = {
        { 0x123, 0, 8, 0 }, { 0x1ABCDEF0, SF_CAN_EFF, 3, 1 }, { 0x7FF, SF_CAN_RTR, 0, 2 },
        { 0x80, SF_CAN_ERR, 8, 3 }, { 0x321, SF_CAN_FD | SF_CAN_BRS | SF_CAN_ESI, 64, 4 },
        { 0x12345, SF_CAN_FD | SF_CAN_EFF, 12, 5 },
    };
    o = 0;
    for (int i = 0; i < 6; i++) {
        REQUIRE(sf_rec_next(blk, &got, &o, &r) == 1);
        CHECK_EQ(r.type, SF_REC_CAN);
        CHECK_EQ(r.channel, cans[i].ch);
        CHECK_EQ(r.ts, 1000 + i);
        CHECK(sf_rec_get_can(&r, &can) == 0);
        CHECK_EQ(can.id, cans[i].id);
        CHECK_EQ(can.flags, cans[i].flags);
        CHECK_EQ(can.len, cans[i].len);
        CHECK(memcmp(can.data, data, can.len) == 0);
    }
    static const struct { uint8_t type, ch; uint32_t flags; uint16_t len; const void *body; }
        others[8] = {
        { SF_REC_SAMPLE, 7, 0xDEADBEEF, 5, NULL }, { SF_REC_TEXT, 0, 0, 10, "hello, log" },
        { SF_REC_LATENCY, 9, 0, 16, NULL }, { SF_REC_DROP, 0, 0, 24, NULL },
        { SF_REC_ANNOTATION, 0, 0, 7, "trigger" }, { SF_REC_CHANNEL, 3, 0, 4, "can3" },
        { SF_REC_META, 0, 0, 3, "k=v" }, { 0x7E, 0, 0, 0, NULL },
    };
    for (int i = 0; i < 8; i++) {
        REQUIRE(sf_rec_next(blk, &got, &o, &r) == 1);
        CHECK_EQ(r.type, others[i].type);
        CHECK_EQ(r.channel, others[i].ch);
        CHECK(r.flags == others[i].flags);
        CHECK_EQ(r.length, others[i].len);
        CHECK_EQ(r.ts, 2000 + i);
        if (others[i].body)
            CHECK(memcmp(r.body, others[i].body, r.length) == 0);
        CHECK_EQ(sf_rec_get_can(&r, &can), SF_ECORRUPT);   /* not CAN */
    }
    CHECK_EQ(sf_rec_next(blk, &got, &o, &r), 0);
    CHECK_EQ(o, off);

    /* A malformed CAN body: a data length beyond the body, or beyond 8 without FD */
    {
        uint8_t rb[64];
        sf_rec_put_can(rb, 0, 0, 0x10, 0, data, 8);
        struct sf_block_info tb = { .used = 32, .block_size = 512 };
        uint8_t fake[512] = { 0 };
        memcpy(fake + SF_BLOCK_HDR, rb, 32);
        uint32_t fo = 0;
        REQUIRE(sf_rec_next(fake, &tb, &fo, &r) == 1);
        fake[SF_BLOCK_HDR + 16 + 4] = 9;           /* len 9: classic frame */
        CHECK_EQ(sf_rec_get_can(&r, &can), SF_ECORRUPT);
        fake[SF_BLOCK_HDR + 16 + 4] = 8;
        fake[SF_BLOCK_HDR + 2] = 7;                /* body shorter than the CAN header */
        fo = 0;
        REQUIRE(sf_rec_next(fake, &tb, &fo, &r) == 1);
        CHECK_EQ(sf_rec_get_can(&r, &can), SF_ECORRUPT);
    }

    /* A record running past `used`, and `used` cutting a record header */
    {
        struct sf_block_info tb = got;
        uint32_t to = 0;
        tb.used = 31;       /* the first record needs 32 */
        CHECK_EQ(sf_rec_next(blk, &tb, &to, &r), SF_ECORRUPT);
        tb.used = 40;       /* second record: header cut */
        to = 32;
        CHECK_EQ(sf_rec_next(blk, &tb, &to, &r), SF_ECORRUPT);
        to = 36;            /* misaligned */
        tb.used = off;
        CHECK_EQ(sf_rec_next(blk, &tb, &to, &r), SF_ECORRUPT);
        to = off + 8;       /* past used */
        CHECK_EQ(sf_rec_next(blk, &tb, &to, &r), SF_ECORRUPT);
        /* a length field claiming more than is there */
        uint8_t save = blk[SF_BLOCK_HDR + 3];
        blk[SF_BLOCK_HDR + 3] = 0x10;   /* length 0x1008 */
        to = 0;
        CHECK_EQ(sf_rec_next(blk, &got, &to, &r), SF_ECORRUPT);
        blk[SF_BLOCK_HDR + 3] = save;
    }

    /* The file header */
    {
        uint8_t fh[SF_FILE_HDR];
        struct sf_file_header h = { 1700000000123456789ull, SF_CLOCK_MONOTONIC, 42,
                                    0xFEEDFACECAFEBEEFull, 0 }, h2;
        memset(fh, 0x55, sizeof fh);
        sf_file_header_put(fh, &h);
        sf_file_header_get(fh, &h2);
        CHECK(h2.start_ts == h.start_ts && h2.clock == h.clock &&
              h2.file_index == h.file_index && h2.session_id == h.session_id);
        int z = 1;
        for (int i = 24; i < 32; i++)
            z &= fh[i] == 0;
        CHECK(z);
    }
}

/* Every byte the CRC covers, changed in every sealed block of each size, fails the check;
 * padding past `used` is not covered (docs/FORMAT.md) and changing it does not. */
static void test_corrupt_each_byte(void)
{
    static uint8_t blk[4096];
    static const uint32_t sizes[] = { 512, 1024, 4096 };
    struct sf_block_info bi = { 0 }, got;

    for (size_t s = 0; s < 3; s++) {
        uint32_t b = sizes[s];
        for (int full = 0; full < 2; full++) {
            uint32_t used = full ? b - SF_BLOCK_HDR : 200;
            for (uint32_t i = 0; i < used; i++)
                blk[SF_BLOCK_HDR + i] = (uint8_t)rng();
            bi.kind = full ? SF_BLOCK_RECORDS : SF_BLOCK_FILE_HEADER;
            bi.file_id = rng();
            bi.seq = rng();
            bi.first_ts = rng();
            bi.used = used;
            bi.count = 3;
            bi.block_size = b;
            sf_block_seal(blk, &bi);
            REQUIRE(sf_block_check(blk, b, &got) == 0);
            int missed = 0, covered_fail = 0;
            for (uint32_t i = 0; i < b; i++) {
                uint8_t save = blk[i];
                for (int v = 0; v < 2; v++) {
                    blk[i] = v ? (uint8_t)(save ^ (1u << (rng() & 7))) : (uint8_t)~save;
                    int err = sf_block_check(blk, b, &got);
                    if (i < SF_BLOCK_HDR + used) {
                        if (err != SF_ECORRUPT)
                            missed++;
                        else
                            covered_fail++;
                    } else if (err != 0) {
                        missed++;
                    }
                }
                blk[i] = save;
            }
            CHECK_EQ(missed, 0);
            CHECK_EQ(covered_fail, 2 * (SF_BLOCK_HDR + used));
            CHECK(sf_block_check(blk, b, &got) == 0);
        }
    }
}

/* ---- synthetic files ---------------------------------------------------------------- */

#define MAXB 64
struct file {
    uint8_t *data;
    size_t size;
    uint32_t b;
    uint32_t nblocks;
    uint32_t nrec[MAXB];    /* records per block (header block: its CHANNEL/META records) */
    uint32_t used[MAXB];
    uint64_t file_id;
};

static uint8_t filemem[MAXB * 8192 + 8192];
static uint8_t filemem2[MAXB * 8192 + 8192];

/* Fill one record block with a deterministic mix; records carry (block, index) in ts. */
static void fill_block(struct file *f, uint32_t n, uint32_t limit)
{
    uint8_t *blk = f->data + (size_t)n * f->b, *p = blk + SF_BLOCK_HDR;
    uint32_t off = 0, cnt = 0, cap = f->b - SF_BLOCK_HDR;
    uint8_t data[64];

    if (limit < cap)
        cap = limit;
    for (;;) {
        uint64_t ts = (uint64_t)n << 32 | cnt;
        uint32_t kind = (n * 7 + cnt) % 6, need;
        for (int i = 0; i < 64; i++)
            data[i] = (uint8_t)(ts * 31 + (uint64_t)i);
        need = kind == 0 ? 32 : kind == 1 ? 88 : kind == 2 ? 24 : kind == 3 ? sf_rec_size(13)
             : kind == 4 ? sf_rec_size(24) : 32;
        if (off + need > cap)
            break;
        switch (kind) {
        case 0: off += sf_rec_put_can(p + off, 0, ts, 0x100 + cnt % 16, 0, data, 8); break;
        case 1: off += sf_rec_put_can(p + off, 1, ts, 0x1234567, SF_CAN_FD | SF_CAN_EFF |
                                      SF_CAN_BRS, data, 64); break;
        case 2: off += sf_rec_put_can(p + off, 0, ts, 0x7AB, SF_CAN_RTR, NULL, 0); break;
        case 3: sf_rec_put(p + off, SF_REC_TEXT, 2, 0, ts, "text record X", 13);
                off += sf_rec_size(13); break;
        case 4: sf_rec_put(p + off, SF_REC_DROP, 0, 0, ts, data, 24);
                off += sf_rec_size(24); break;
        default: off += sf_rec_put_can(p + off, 3, ts, 0x80, SF_CAN_ERR, data, 8); break;
        }
        cnt++;
    }
    struct sf_block_info bi = { SF_BLOCK_RECORDS, f->file_id, n, (uint64_t)n << 32, off, cnt,
                                f->b };
    sf_block_seal(blk, &bi);
    f->nrec[n] = cnt;
    f->used[n] = off;
}

static void make_file(struct file *f, uint8_t *mem, uint32_t b, uint32_t nblocks,
                      uint64_t file_id)
{
    memset(f, 0, sizeof *f);
    f->data = mem;
    f->b = b;
    f->nblocks = nblocks;
    f->size = (size_t)b * nblocks;
    f->file_id = file_id;
    memset(mem, 0, f->size);

    uint8_t *p = mem + SF_BLOCK_HDR;
    struct sf_file_header h = { 1700000000000000000ull, SF_CLOCK_REALTIME, 1, 77, 0 };
    uint32_t off = SF_FILE_HDR;
    sf_file_header_put(p, &h);
    sf_rec_put(p + off, SF_REC_CHANNEL, 0, 0, 0, "can0", 4);
    off += sf_rec_size(4);
    sf_rec_put(p + off, SF_REC_CHANNEL, 1, 0, 0, "vcan1", 5);
    off += sf_rec_size(5);
    sf_rec_put(p + off, SF_REC_META, 0, 0, 0, "host=test", 9);
    off += sf_rec_size(9);
    struct sf_block_info bi = { SF_BLOCK_FILE_HEADER, file_id, 0, h.start_ts, off, 3, b };
    sf_block_seal(mem, &bi);
    f->nrec[0] = 3;
    f->used[0] = off;
    for (uint32_t n = 1; n < nblocks; n++)
        fill_block(f, n, n % 5 == 4 ? 300 : ~0u);    /* some checkpointed, partly filled */
}

/* What a decode produced, in a comparable form. */
#define MAXEV 4096
struct ev_log {
    int n;
    struct { int kind, reason; uint64_t block, count, a, b; } e[MAXEV];
    uint32_t recs[MAXB];     /* records delivered per block */
    int bad_records;         /* records whose content does not match the generator */
    int headers;
    uint64_t stat_records;   /* the decoder's count of records */
};

static void log_event(struct ev_log *L, const struct sf_dec_event *ev, const struct file *f)
{
    if (ev->kind == SF_DEC_RECORD) {
        if (ev->block < MAXB) {
            /* compare the record with the same one in the pristine file */
            const uint8_t *blk = f->data + ev->block * f->b;
            struct sf_block_info bi;
            struct sf_rec r;
            uint32_t o = ev->block == 0 ? SF_FILE_HDR : 0;
            int ok = sf_block_check(blk, f->b, &bi) == 0;
            for (uint32_t k = 0; ok && k <= L->recs[ev->block]; k++)
                ok = sf_rec_next(blk, &bi, &o, &r) == 1;
            if (!ok || r.type != ev->rec.type || r.length != ev->rec.length ||
                r.ts != ev->rec.ts || r.flags != ev->rec.flags ||
                r.channel != ev->rec.channel || memcmp(r.body, ev->rec.body, r.length))
                L->bad_records++;
            if (ev->rec.type == SF_REC_CAN) {
                struct sf_can c;
                if (sf_rec_get_can(&ev->rec, &c))
                    L->bad_records++;
            }
            L->recs[ev->block]++;
        }
        return;
    }
    if (ev->kind == SF_DEC_HEADER) {
        L->headers++;
        if (ev->hdr.session_id != 77 || ev->hdr.file_index != 1 || ev->file_id != f->file_id)
            L->bad_records++;
    }
    if (L->n < MAXEV) {
        L->e[L->n].kind = ev->kind;
        L->e[L->n].reason = ev->reason;
        L->e[L->n].block = ev->block;
        L->e[L->n].count = ev->count;
        L->e[L->n].a = ev->kind == SF_DEC_GAP ? ev->seq_expected : ev->offset;
        L->e[L->n].b = ev->kind == SF_DEC_GAP ? ev->seq : ev->kind == SF_DEC_FOREIGN ?
                       ev->file_id : ev->length;
        L->n++;
    }
}

static uint8_t decbuf[1 << 20];

/* How decode_chunked takes records out: 0 sf_dec_next alone; 1 whole blocks
 * (sf_dec_next_block, their CAN frames through sf_rec_can_cols in column runs of random
 * size, every other record through sf_rec_next) whenever the decoder offers one; 2 a random
 * mix of the two. Every mode must log the same. */
static int dec_mode;

/* The records of a whole block, into L as RECORD events; each frame of a column run is
 * compared with what sf_rec_next and sf_rec_get_can make of the same record. */
static void log_block(struct ev_log *L, const struct sf_dec_block *b, uint32_t bs,
                      const struct file *f)
{
    static uint64_t ts[64];
    static uint8_t ch[64], ln[64], fl[64], data[64 * 64 + 64];
    static uint32_t id[64], de[64];
    struct sf_dec_event ev;
    uint32_t off = b->off;

    memset(&ev, 0, sizeof ev);
    ev.kind = SF_DEC_RECORD;
    ev.block = b->block;
    ev.block_size = bs;
    ev.bi = &b->bi;
    while (off < b->bi.used) {
        struct sf_can_cols c = { ts, ch, id, ln, fl, de, data, 0, 1 + rng() % 64, 0,
                                 64 + rng() % (sizeof data - 63) };
        uint32_t o = off, start = 0;
        size_t k = sf_rec_can_cols(b->p, &b->bi, &off, &c);
        CHECK_EQ(k, c.n);
        for (size_t i = 0; i < k; i++) {
            struct sf_can cc;
            uint32_t dl;
            int bad;
            REQUIRE(sf_rec_next(b->p, &b->bi, &o, &ev.rec) == 1);
            bad = sf_rec_get_can(&ev.rec, &cc) != 0;
            dl = (cc.flags & SF_CAN_RTR) ? 0 : cc.len;
            bad |= ts[i] != ev.rec.ts || ch[i] != ev.rec.channel || id[i] != cc.id ||
                   ln[i] != cc.len || fl[i] != cc.flags || de[i] != start + dl ||
                   memcmp(data + start, cc.data, dl) != 0;
            start = de[i];
            if (bad)
                L->bad_records++;
            log_event(L, &ev, f);
        }
        CHECK_EQ(o, off);
        CHECK_EQ(c.data_n, start);
        if (off >= b->bi.used || c.n == c.cap || c.data_cap - c.data_n < 64)
            continue;                 /* the end, or full: a fresh set of columns */
        /* it stopped at a record it must refuse: take it the slow way */
        REQUIRE(sf_rec_next(b->p, &b->bi, &off, &ev.rec) == 1);
        {
            struct sf_can cc;
            if (ev.rec.type == SF_REC_CAN && sf_rec_get_can(&ev.rec, &cc) == 0)
                L->bad_records++;
        }
        log_event(L, &ev, f);
    }
}

/* sf_dec_next, with whole blocks taken first as dec_mode says. */
static int next_ev(struct sf_dec *d, struct sf_dec_event *ev, const struct file *f,
                   struct ev_log *L)
{
    struct sf_dec_block b;

    while (dec_mode && (dec_mode == 1 || rng() % 2) && sf_dec_next_block(d, &b) == 1)
        log_block(L, &b, d->block_size, f);
    return sf_dec_next(d, ev);
}

/* Decode `data` fed in pieces of `chunk` bytes (0: random sizes 1..9000). */
static void decode_chunked(const uint8_t *data, size_t size, size_t chunk, size_t cap,
                           const struct file *pristine, struct ev_log *L)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    size_t pos = 0;

    memset(L, 0, sizeof *L);
    REQUIRE(sf_dec_init(&d, decbuf, cap) == 0);
    while (pos < size) {
        size_t n = chunk ? chunk : 1 + rng() % 9000;
        if (n > size - pos)
            n = size - pos;
        size_t off = 0;
        while (off < n) {
            off += sf_dec_feed(&d, data + pos + off, n - off);
            int k;
            while ((k = next_ev(&d, &ev, pristine, L)) != SF_DEC_NEED_DATA) {
                REQUIRE(k != SF_DEC_END);
                log_event(L, &ev, pristine);
            }
        }
        pos += n;
    }
    sf_dec_finish(&d);
    while (next_ev(&d, &ev, pristine, L) != SF_DEC_END)
        log_event(L, &ev, pristine);
    CHECK(sf_dec_next(&d, &ev) == SF_DEC_END);
    CHECK_EQ(sf_dec_stats(&d)->bytes, size);
    L->stat_records = sf_dec_stats(&d)->records;
}

struct memsrc { const uint8_t *p; size_t size, pos; size_t max; };
static sf_ssize_t mem_read(void *ctx, void *buf, size_t n)
{
    struct memsrc *m = ctx;
    if (n > m->max)
        n = m->max;
    if (n > m->size - m->pos)
        n = m->size - m->pos;
    memcpy(buf, m->p + m->pos, n);
    m->pos += n;
    return (sf_ssize_t)n;
}

static void decode_read(const uint8_t *data, size_t size, size_t max, const struct file *f,
                        struct ev_log *L)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    struct memsrc m = { data, size, 0, max };
    int k;

    memset(L, 0, sizeof *L);
    REQUIRE(sf_dec_init(&d, decbuf, sizeof decbuf) == 0);
    while ((k = sf_dec_read(&d, mem_read, &m, &ev)) != SF_DEC_END) {
        REQUIRE(k > 0);
        log_event(L, &ev, f);
    }
    L->stat_records = sf_dec_stats(&d)->records;
}

static int same_log(const struct ev_log *a, const struct ev_log *b)
{
    if (a->n != b->n || memcmp(a->recs, b->recs, sizeof a->recs) ||
        a->bad_records != b->bad_records || a->stat_records != b->stat_records)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->e[i].kind != b->e[i].kind || a->e[i].reason != b->e[i].reason ||
            a->e[i].block != b->e[i].block || a->e[i].count != b->e[i].count ||
            a->e[i].a != b->e[i].a || a->e[i].b != b->e[i].b)
            return 0;
    return 1;
}

static void print_log(const char *what, const struct ev_log *L)
{
    fprintf(stderr, "%s: %d events\n", what, L->n);
    for (int i = 0; i < L->n; i++)
        fprintf(stderr, "  kind %d reason %d block %llu count %llu a %llu b %llu\n",
                L->e[i].kind, L->e[i].reason, (unsigned long long)L->e[i].block,
                (unsigned long long)L->e[i].count, (unsigned long long)L->e[i].a,
                (unsigned long long)L->e[i].b);
}

static struct ev_log L1, L2;

static void test_decode_clean(void)
{
    struct file f;
    static const size_t chunks[] = { 1, 3, 48, 511, 512, 4096, 65536, 1 << 20, 0 };

    make_file(&f, filemem, 4096, 20, 0xABCDEF0011223344ull);
    decode_chunked(f.data, f.size, 1 << 20, sizeof decbuf, &f, &L1);
    CHECK_EQ(L1.headers, 1);
    CHECK_EQ(L1.n, 1);          /* just the header event */
    CHECK_EQ(L1.bad_records, 0);
    for (uint32_t n = 0; n < f.nblocks; n++)
        CHECK_EQ(L1.recs[n], f.nrec[n]);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        decode_chunked(f.data, f.size, chunks[i], sizeof decbuf, &f, &L2);
        CHECK(same_log(&L1, &L2));
        for (dec_mode = 1; dec_mode <= 2; dec_mode++) {      /* whole blocks */
            decode_chunked(f.data, f.size, chunks[i], sizeof decbuf, &f, &L2);
            CHECK(same_log(&L1, &L2));
        }
        dec_mode = 0;
    }
    decode_read(f.data, f.size, 1 << 20, &f, &L2);
    CHECK(same_log(&L1, &L2));
    decode_read(f.data, f.size, 100, &f, &L2);
    CHECK(same_log(&L1, &L2));
    /* a buffer of exactly one block suffices */
    decode_chunked(f.data, f.size, 777, 4096, &f, &L2);
    CHECK(same_log(&L1, &L2));
    /* one too small: everything is damage, nothing crashes */
    decode_chunked(f.data, f.size, 777, 2048, &f, &L2);
    CHECK_EQ(L2.n, 1);
    CHECK_EQ(L2.e[0].kind, SF_DEC_DAMAGED);
    CHECK_EQ(L2.e[0].reason, SF_DEC_NO_BLOCK);
    /* an empty file, or one of zeros: never written, nothing at all (docs/FORMAT.md) */
    decode_chunked(f.data, 0, 1, sizeof decbuf, &f, &L2);
    CHECK_EQ(L2.n, 0);
    {
        static uint8_t zeros[3 * 4096 + 100];
        decode_chunked(zeros, sizeof zeros, 1000, sizeof decbuf, &f, &L2);
        CHECK_EQ(L2.n, 0);
    }

    /* Block sizes from 512 to 64 KiB */
    static const uint32_t bs[] = { 512, 1024, 8192 };
    for (int i = 0; i < 3; i++) {
        make_file(&f, filemem, bs[i], 24, 99 + (uint64_t)i);
        decode_chunked(f.data, f.size, 0, sizeof decbuf, &f, &L1);
        CHECK_EQ(L1.n, 1);
        CHECK_EQ(L1.bad_records, 0);
        for (uint32_t n = 0; n < f.nblocks; n++)
            CHECK_EQ(L1.recs[n], f.nrec[n]);
    }
}

static void test_decode_damage(void)
{
    struct file f, g;
    static const size_t chunks[] = { 1, 7, 512, 4096, 65536, 1 << 20, 0 };
    const uint32_t B = 4096;

    make_file(&f, filemem, B, 24, 0x1111);
    make_file(&g, filemem2, B, 24, 0x2222);    /* another file, for foreign blocks */
    static uint8_t work[MAXB * 8192];
    memcpy(work, f.data, f.size);
    size_t size = f.size;

    work[3 * B + 100] ^= 0x01;                                /* block 3: CRC */
    memset(work + 5 * B, 0xA5, B);                            /* block 5: no header */
    memset(work + 6 * B, 0xA5, B);                            /* block 6: same run */
    memcpy(work + 8 * B, g.data + 8 * B, 2 * B);              /* 8, 9: foreign */
    memcpy(work + 11 * B, f.data + 13 * B, B);                /* 11: seq 13, a gap */
    memcpy(work + 12 * B, f.data + 14 * B, B);                /* 12: seq 14, continues */
    memset(work + 14 * B, 0, B);                              /* 14: zeros, then more */
    /* a record running past used in block 16: length field made huge, CRC re-sealed */
    {
        uint8_t *blk = work + 16 * B;
        struct sf_block_info bi;
        REQUIRE(sf_block_check(blk, B, &bi) == 0);
        uint32_t o = 0, k = 0;
        struct sf_rec r;
        while (k < 2 && sf_rec_next(blk, &bi, &o, &r) == 1)
            k++;
        blk[SF_BLOCK_HDR + o + 2] = 0xF0;   /* third record: length 0xF0xx */
        blk[SF_BLOCK_HDR + o + 3] = 0x0F;
        sf_block_seal(blk, &bi);
    }
    memset(work + 22 * B, 0, 2 * B);                          /* 22, 23: zeros at the end */
    size += 1000;                                             /* and a partial block */
    memset(work + 24 * B, 0x33, 1000);

    decode_chunked(work, size, 1 << 20, sizeof decbuf, &f, &L1);
    /* The reader rules of docs/FORMAT.md: a block is accepted only at its place (seq = its
     * number), so 11 and 12 (copies of 13 and 14) are skipped and 13 is accepted; no gap
     * is ever reported; a malformed block loses all of its records; a partial last block is
     * judged zero-padded, then reported. */
    struct { int kind, reason; uint64_t block, count, a, b; } want[] = {
        { SF_DEC_HEADER, 0, 0, 0, 0, 0 },
        { SF_DEC_DAMAGED, SF_DEC_BAD_CRC, 3, 1, 3 * B, B },
        { SF_DEC_DAMAGED, SF_DEC_BAD_HEADER, 5, 2, 5 * B, 2 * B },
        { SF_DEC_FOREIGN, 0, 8, 2, 8 * B, 0x2222 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 11, 2, 11 * B, 2 * B },  /* seqs 13, 14 */
        { SF_DEC_DAMAGED, SF_DEC_UNWRITTEN, 14, 1, 14 * B, B },
        { SF_DEC_DAMAGED, SF_DEC_BAD_RECORD, 16, 1, 16 * B, B },
        { SF_DEC_DAMAGED, SF_DEC_UNWRITTEN, 22, 2, 22 * B, 2 * B },   /* more follows */
        { SF_DEC_DAMAGED, SF_DEC_BAD_HEADER, 24, 1, 24 * B, B },
        { SF_DEC_DAMAGED, SF_DEC_TRUNCATED, 24, 1, 24 * B, 1000 },
    };
    int nw = (int)(sizeof want / sizeof want[0]), ok = L1.n == nw;
    for (int i = 0; ok && i < nw; i++)
        ok = L1.e[i].kind == want[i].kind && L1.e[i].reason == want[i].reason &&
             L1.e[i].block == want[i].block && L1.e[i].count == want[i].count &&
             L1.e[i].a == want[i].a && L1.e[i].b == want[i].b;
    CHECK(ok);
    if (!ok)
        print_log("damaged file", &L1);
    /* Records: skipped blocks none; 13 (at its place) all of its own. */
    for (uint32_t n = 0; n < 24; n++) {
        uint32_t w = f.nrec[n];
        if (n == 3 || n == 5 || n == 6 || n == 8 || n == 9 || n == 11 || n == 12 || n == 14 ||
            n == 16 || n >= 22)
            w = 0;
        CHECK_EQ(L1.recs[n], w);
    }
    CHECK_EQ(L1.bad_records, 0);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        decode_chunked(work, size, chunks[i], sizeof decbuf, &f, &L2);
        CHECK(same_log(&L1, &L2));
        for (dec_mode = 1; dec_mode <= 2; dec_mode++) {      /* whole blocks */
            decode_chunked(work, size, chunks[i], sizeof decbuf, &f, &L2);
            CHECK(same_log(&L1, &L2));
        }
        dec_mode = 0;
    }
    decode_read(work, size, 333, &f, &L2);
    CHECK(same_log(&L1, &L2));

    /* Without the partial tail, the trailing zero blocks are simply the end. */
    decode_chunked(work, 24 * B, 4096, sizeof decbuf, &f, &L2);
    CHECK_EQ(L2.n, nw - 3);
    CHECK(L2.e[L2.n - 1].kind == SF_DEC_DAMAGED && L2.e[L2.n - 1].reason == SF_DEC_BAD_RECORD);
}

/* Block 0 lost: the block size comes from the first valid block; the damage before it is
 * reported as one run. */
static void test_decode_block0(void)
{
    struct file f;
    const uint32_t B = 8192;
    static uint8_t work[MAXB * 8192];

    make_file(&f, filemem, B, 12, 0x5555);
    memcpy(work, f.data, f.size);
    work[SF_BLOCK_HDR + 5] ^= 0x80;                    /* block 0: CRC */
    memset(work + B + 40, 0x77, 8);                    /* block 1: size field garbage */
    decode_chunked(work, f.size, 0, sizeof decbuf, &f, &L1);
    CHECK_EQ(L1.headers, 0);
    /* block 2 is the first accepted (at its place); 0 and 1 are counted once, as invalid */
    CHECK(L1.n == 1 && L1.e[0].kind == SF_DEC_DAMAGED && L1.e[0].reason == SF_DEC_BAD_CRC &&
          L1.e[0].block == 0 && L1.e[0].count == 2 && L1.e[0].b == 2 * B);
    if (L1.n != 1)
        print_log("block 0 lost", &L1);
    for (uint32_t n = 2; n < f.nblocks; n++)
        CHECK_EQ(L1.recs[n], f.nrec[n]);
    CHECK_EQ(L1.bad_records, 0);
    decode_chunked(work, f.size, 1, sizeof decbuf, &f, &L2);
    CHECK(same_log(&L1, &L2));
    dec_mode = 1;
    decode_chunked(work, f.size, 5000, sizeof decbuf, &f, &L2);
    dec_mode = 0;
    CHECK(same_log(&L1, &L2));

    /* Garbage before anything valid, then everything zero: nothing found. */
    memset(work, 0, f.size);
    work[10] = 1;
    decode_chunked(work, f.size, 4096, sizeof decbuf, &f, &L1);
    CHECK(L1.n == 1 && L1.e[0].reason == SF_DEC_NO_BLOCK && L1.e[0].b == f.size);
}

/* The position rule (docs/FORMAT.md, issue 26 item 3): a CRC-valid block with a wild seq, a
 * pair of far-apart blocks swapped, a block copied over another and block 0 with a wild seq
 * each lose only themselves; every other block's records come back. Before the rule, the
 * wild seq hid every later block and the swap everything between the pair. */
static void reseq(uint8_t *blk, uint32_t b, uint64_t seq)
{
    struct sf_block_info bi;
    REQUIRE(sf_block_check(blk, b, &bi) == 0);
    bi.seq = seq;
    sf_block_seal(blk, &bi);
}

static void test_decode_position(void)
{
    struct file f;
    const uint32_t B = 1024;
    static uint8_t work[MAXB * 8192];

    make_file(&f, filemem, B, 30, 0x7777);
    memcpy(work, f.data, f.size);
    reseq(work + 3 * B, B, 1ull << 62);                       /* 3: wild seq */
    memcpy(work + 5 * B, f.data + 18 * B, B);                 /* 5 <-> 18 swapped */
    memcpy(work + 18 * B, f.data + 5 * B, B);
    memcpy(work + 20 * B, f.data + 7 * B, B);                 /* 7 copied over 20 */
    memcpy(work + 25 * B, f.data + 26 * B, B);                /* 26 copied over 25 */
    decode_chunked(work, f.size, 333, sizeof decbuf, &f, &L1);
    struct { int kind, reason; uint64_t block, count; } want[] = {
        { SF_DEC_HEADER, 0, 0, 0 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 3, 1 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 5, 1 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 18, 1 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 20, 1 },
        { SF_DEC_DAMAGED, SF_DEC_OUT_OF_SEQ, 25, 1 },
    };
    int nw = (int)(sizeof want / sizeof want[0]), ok = L1.n == nw;
    for (int i = 0; ok && i < nw; i++)
        ok = L1.e[i].kind == want[i].kind && L1.e[i].reason == want[i].reason &&
             L1.e[i].block == want[i].block && L1.e[i].count == want[i].count;
    CHECK(ok);
    if (!ok)
        print_log("position rule", &L1);
    for (uint32_t n = 0; n < f.nblocks; n++)
        CHECK_EQ(L1.recs[n], n == 3 || n == 5 || n == 18 || n == 20 || n == 25 ? 0 : f.nrec[n]);
    CHECK_EQ(L1.bad_records, 0);
    dec_mode = 1;
    decode_chunked(work, f.size, 4096, sizeof decbuf, &f, &L2);
    dec_mode = 0;
    CHECK(same_log(&L1, &L2));

    /* Block 0 with a wild seq: misplaced; the file's id comes from block 1 (at its place),
     * and blocks 1 .. 29 all come back. */
    memcpy(work, f.data, f.size);
    reseq(work, B, 1ull << 62);
    decode_chunked(work, f.size, 0, sizeof decbuf, &f, &L1);
    CHECK(L1.n == 1 && L1.e[0].kind == SF_DEC_DAMAGED && L1.e[0].reason == SF_DEC_MISPLACED &&
          L1.e[0].block == 0 && L1.e[0].count == 1);
    for (uint32_t n = 1; n < f.nblocks; n++)
        CHECK_EQ(L1.recs[n], f.nrec[n]);
}

/* Random bit flips, random chunking: never a crash or an out-of-bounds access (ASan), and
 * exactly the blocks whose CRC-covered bytes were hit lose their records. */
static void test_fuzz(void)
{
    struct file f;
    static uint8_t work[MAXB * 8192];
    const uint32_t B = 1024;
    int wrong = 0, iters = 600;

    make_file(&f, filemem, B, 40, 0x0F0F0F0F);
    for (int it = 0; it < iters; it++) {
        int hit[MAXB] = { 0 };
        memcpy(work, f.data, f.size);
        int flips = 1 + (int)(rng() % 3), spread = it % 3;
        for (int k = 0; k < flips; k++) {
            size_t byte = spread ? rng() % f.size
                                 : (size_t)(rng() % 3) * B + rng() % 64;   /* headers */
            work[byte] ^= (uint8_t)(1u << (rng() % 8));
            size_t n = byte / B, in = byte % B;
            if (in < SF_BLOCK_HDR + f.used[n])
                hit[n] = 1;
        }
        decode_chunked(work, f.size, it % 2 ? 0 : 1 + rng() % 3000, sizeof decbuf, &f, &L1);
        if (L1.bad_records)
            wrong++;
        dec_mode = 1 + it % 2;        /* whole blocks: the same records and events */
        decode_chunked(work, f.size, 1 + rng() % 3000, sizeof decbuf, &f, &L2);
        dec_mode = 0;
        if (!same_log(&L1, &L2))
            wrong++;
        for (uint32_t n = 0; n < f.nblocks; n++) {
            /* A hit on block 0 also hides the header; others deliver all or nothing. */
            uint32_t w = hit[n] ? 0 : f.nrec[n];
            if (L1.recs[n] != w)
                wrong++;
        }
        if (wrong) {
            fprintf(stderr, "fuzz iteration %d: wrong\n", it);
            print_log("fuzz", &L1);
            break;
        }
    }
    CHECK_EQ(wrong, 0);

    /* Heavier damage (a few hundred flips, byte smears): only robustness is checked. */
    for (int it = 0; it < 200; it++) {
        memcpy(work, f.data, f.size);
        int flips = 1 + (int)(rng() % 400);
        for (int k = 0; k < flips; k++)
            work[rng() % f.size] = (uint8_t)rng();
        if (it % 4 == 0) {
            /* a plausible header with a size larger than the file at a random boundary */
            size_t at = (rng() % (f.size / 512)) * 512;
            memcpy(work + at, f.data, SF_BLOCK_HDR);
            work[at + 40] = 0;      /* block size 1 MiB */
            work[at + 41] = 0;
            work[at + 42] = 0x10;
            work[at + 43] = 0;
        }
        size_t size = f.size - (size_t)(rng() % 2000);
        decode_chunked(work, size, 1 + rng() % 5000, it % 2 ? sizeof decbuf : 4096, &f, &L1);
        dec_mode = 1 + it % 2;
        decode_chunked(work, size, 1 + rng() % 5000, it % 2 ? sizeof decbuf : 4096, &f, &L2);
        dec_mode = 0;
        CHECK(same_log(&L1, &L2));
    }
}

/* Issue 15 item 7: one id rule for every CAN frame, error frames included (docs/FORMAT.md):
 * without EFF the id is at most 0x7FF, with it at most 0x1FFFFFFF. The writer refuses
 * what the reader would refuse, and the reader refuses an error class of 0x800 without EFF
 * exactly as it refuses a data frame with id 0x800 without EFF. */
static void test_err_frame_ids(void)
{
    static const uint8_t data[8];
    uint8_t buf[64];
    struct sf_rec r;
    struct sf_can c;
    static const struct { uint32_t id, flags; int ok; } cases[] = {
        { 0x7FF, 0, 1 }, { 0x800, 0, 0 }, { 0x800, SF_CAN_EFF, 1 },
        { 0x7FF, SF_CAN_ERR, 1 }, { 0x800, SF_CAN_ERR, 0 }, { 0x1FFFFFFF, SF_CAN_ERR, 0 },
        { 0x800, SF_CAN_ERR | SF_CAN_EFF, 1 }, { 0x1FFFFFFF, SF_CAN_ERR | SF_CAN_EFF, 1 },
        { 0x20000000, SF_CAN_ERR | SF_CAN_EFF, 0 }, { 0x80, SF_CAN_ERR | SF_CAN_EFF, 0 },
        { 0x7FF, SF_CAN_ERR | SF_CAN_EFF, 0 }, { 0x80, SF_CAN_EFF, 1 },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t body[16] = { 0 };
        CHECK_EQ(sf_rec_can_valid(cases[i].id, cases[i].flags, 8), cases[i].ok);
        CHECK_EQ(sf_rec_put_can(buf, 0, 1, cases[i].id, cases[i].flags, data, 8) != 0,
                 cases[i].ok);
        /* The reader, on a record written by hand (what another writer might store). */
        body[0] = (uint8_t)cases[i].id;
        body[1] = (uint8_t)(cases[i].id >> 8);
        body[2] = (uint8_t)(cases[i].id >> 16);
        body[3] = (uint8_t)(cases[i].id >> 24);
        body[4] = 8;
        r.type = SF_REC_CAN;
        r.channel = 0;
        r.length = 16;
        r.flags = cases[i].flags;
        r.ts = 1;
        r.body = body;
        CHECK_EQ(sf_rec_get_can(&r, &c) == 0, cases[i].ok);
    }
}

/* sf_rec_can_cols against sf_rec_next + sf_rec_get_can on blocks of hand-made CAN records:
 * every flag bit (the six and a few unknown), ids around the 11- and 29-bit limits, lengths
 * 0 to 70 with bodies shorter, exact and longer than they need, and other record types in
 * between. The column decoder must take exactly the frames sf_rec_get_can accepts, with the
 * same fields, and stop at every other record. */
static void test_can_cols(void)
{
    static uint8_t blk[8192];
    static const uint32_t ids[] = { 0, 1, 0x7FF, 0x800, 0x1FFFFFFF, 0x20000000, 0xFFFFFFFF };
    int wrong = 0, frames = 0, refused = 0;

    for (int it = 0; it < 300; it++) {
        uint8_t *p = blk + SF_BLOCK_HDR;
        uint32_t off = 0, cnt = 0, cap = sizeof blk - SF_BLOCK_HDR;
        memset(blk, 0, sizeof blk);
        for (;;) {
            uint8_t body[96];
            uint32_t flags = (uint32_t)(rng() % 4 ? rng() & 0x3F : rng() % 2 ? rng() & 0xFFFF :
                                                                    rng() & 0x3001FF);
            uint32_t id = rng() % 2 ? ids[rng() % 7] : (uint32_t)(rng() % 0x900);
            uint32_t len = (uint32_t)(rng() % 3 ? rng() % 9 : rng() % 71);
            uint32_t length = SF_CAN_BODY + len;
            int type = rng() % 16 ? SF_REC_CAN : SF_REC_TEXT;
            if (rng() % 8 == 0)
                length = (uint32_t)(rng() % 80);            /* too short or too long */
            if (length > sizeof body)
                length = sizeof body;
            for (uint32_t i = 0; i < sizeof body; i++)
                body[i] = (uint8_t)rng();
            memset(body, 0, SF_CAN_BODY);
            body[0] = (uint8_t)id;
            body[1] = (uint8_t)(id >> 8);
            body[2] = (uint8_t)(id >> 16);
            body[3] = (uint8_t)(id >> 24);
            body[4] = (uint8_t)len;
            if (off + sf_rec_size(length) > cap)
                break;
            sf_rec_put(p + off, (uint8_t)type, (uint8_t)rng(), flags, rng(), body,
                       (uint16_t)length);
            off += sf_rec_size(length);
            cnt++;
        }
        struct sf_block_info bi = { SF_BLOCK_RECORDS, 1, 1, 0, off, cnt, sizeof blk };
        sf_block_seal(blk, &bi);
        REQUIRE(sf_block_check(blk, sizeof blk, &bi) == 0);
        /* the oracle: sf_rec_next and sf_rec_get_can, record by record */
        uint32_t o1 = 0, o2 = 0;
        struct sf_rec r;
        while (sf_rec_next(blk, &bi, &o1, &r) == 1) {
            static uint64_t ts[1];
            static uint8_t ch[1], ln[1], fl[1], data[128];
            static uint32_t idc[1], de[1];
            struct sf_can_cols c = { ts, ch, idc, ln, fl, de, data, 0, 1, 0, sizeof data };
            struct sf_can cc;
            uint32_t before = o2;
            int ok = r.type == SF_REC_CAN && sf_rec_get_can(&r, &cc) == 0 && !(r.ts >> 63);
            size_t k = sf_rec_can_cols(blk, &bi, &o2, &c);
            if (k != (size_t)ok) {
                wrong++;
            } else if (ok) {
                uint32_t dl = (cc.flags & SF_CAN_RTR) ? 0 : cc.len;
                frames++;
                if (ts[0] != r.ts || ch[0] != r.channel || idc[0] != cc.id || ln[0] != cc.len ||
                    fl[0] != (uint8_t)cc.flags || de[0] != dl || c.data_n != dl ||
                    memcmp(data, cc.data, dl) || o2 != o1)
                    wrong++;
            } else {
                refused++;
                if (o2 != before)
                    wrong++;
                o2 = o1;                  /* past it, as a reader does */
            }
        }
        if (o2 != off)
            wrong++;
    }
    CHECK_EQ(wrong, 0);
    CHECK(frames > 1000 && refused > 1000);      /* both sides exercised */
}

/* docs/FORMAT.md, Versioning (issue 26 item 9): a reader ignores CAN flag bits 6-15 and
 * keeps the frame, skips it as bad-can for any of bits 16-31; writers store bits 0-5 only.
 * The header's features: bits 32-63 required (refused when unknown), 0-31 compatible. */
static void test_flag_rules(void)
{
    static const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    uint8_t body[16] = { 0x23, 0x01, 0, 0, 2, 0, 0, 0, 0xAA, 0xBB };
    uint8_t buf[64], pl[SF_FILE_HDR];
    struct sf_rec r = { SF_REC_CAN, 0, 16, 0, 1, body };
    struct sf_can c;
    struct sf_file_header h = { 1, SF_CLOCK_REALTIME, 1, 2, 0 }, h2;

    for (unsigned bit = 0; bit < 32; bit++) {
        r.flags = 1u << bit;
        if (bit >= 1 && bit <= 5)
            continue;                  /* RTR, ERR, FD, BRS, ESI: the frame rules */
        int ok = sf_rec_get_can(&r, &c) == 0;
        CHECK_EQ(ok, bit < 16);
        if (ok)
            CHECK(c.id == 0x123 && c.len == 2 && c.data[1] == 0xBB && c.flags == r.flags);
        if (bit >= 7)                  /* writers never store an unknown bit (6 is TX) */
            CHECK(sf_rec_put_can(buf, 0, 1, 0x123, 1u << bit, data, 2) == 0);
    }
    body[5] = body[6] = body[7] = 0xFF;  /* the reserved bytes are not read */
    r.flags = 0;
    CHECK(sf_rec_get_can(&r, &c) == 0 && c.len == 2);
    r.flags = SF_CAN_FD | 0x40u;       /* informational bit with FD: still FD's rules */
    CHECK(sf_rec_get_can(&r, &c) == 0);
    r.flags = SF_CAN_BRS | 0x40u;      /* BRS without FD stays invalid */
    CHECK(sf_rec_get_can(&r, &c) != 0);

    CHECK_EQ(sf_file_features_refused(0), -1);
    CHECK_EQ(sf_file_features_refused(0xFFFFFFFFull), -1);      /* compatible: read */
    CHECK_EQ(sf_file_features_refused(1ull << 32), -1);         /* compressed blocks: known */
    CHECK_EQ(sf_file_features_refused(1ull << 41), 41);
    CHECK_EQ(sf_file_features_refused(1ull << 63 | 1ull << 40 | 5), 40);
    h.features = 0x8000000000000001ull;
    sf_file_header_put(pl, &h);
    CHECK(pl[24] == 1 && pl[31] == 0x80);
    sf_file_header_get(pl, &h2);
    CHECK(h2.features == h.features);
}

/* docs/FORMAT.md, Channel names (issue 26 item 8): what names a channel. */
static void test_name_ok(void)
{
    static const struct { const char *s; int ok; } cases[] = {
        { "can0", 1 }, { "a", 1 }, { "bus(1)#x,y", 1 }, { "\xC3\xA9t\xC3\xA9", 1 },
        { "\xF0\x9F\x98\x80", 1 }, { "", 0 }, { "a b", 0 }, { "a\tb", 0 }, { "a\x7F", 0 },
        { "\xC3", 0 }, { "\xC0\x80", 0 }, { "\xED\xA0\x80", 0 }, { "\xF4\x90\x80\x80", 0 },
        { "\xFF", 0 }, { "ab\xE2\x82", 0 },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ(sf_rec_name_ok((const uint8_t *)cases[i].s, (uint32_t)strlen(cases[i].s)),
                 cases[i].ok);
    CHECK(sf_rec_name_ok((const uint8_t *)"a\0b", 3) == 0);
}

int main(void)
{
    test_flag_rules();
    test_name_ok();
    test_crc();
    bench_crc();
    test_records();
    test_err_frame_ids();
    test_can_cols();
    test_corrupt_each_byte();
    test_decode_clean();
    test_decode_damage();
    test_decode_block0();
    test_decode_position();
    test_fuzz();
    TEST_END();
}
