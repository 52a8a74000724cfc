/* The cipher stage (src/log/block_cipher.c) through the libsodium port (host/cipher/
 * sodium.c): a sealed block opens only unchanged, at its place, in its file, with its key;
 * the decoder opens sealed files with the key, counts what does not open as unauthentic and
 * reads the rest, and without a key checks the framing only; the writer seals every record
 * block (name blocks too), keys each file anew and erases the key when it moves on. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/decode.h"
#include "streamfat/cipher.h"
#include "streamfat/cipher_sodium.h"

#define B 4096u
#define SS 512u

static const struct sf_cipher_port *port;
static uint8_t pub[32], sec[32], pub2[32], sec2[32];

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A record block of `n` CAN records (data: k, k+1, ...) at seq, plaintext. */
static void plain_block(uint8_t *b, uint64_t file_id, uint64_t seq, uint32_t n, uint32_t k,
                        struct sf_block_info *bi)
{
    memset(b, 0, B);
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t body[16] = { 0 };
        uint32_t id = 0x100 + (k + i) % 0x100;
        memcpy(body, &id, 4);                       /* little-endian hosts run the tests */
        body[4] = 8;
        memcpy(body + 8, "SECRET!!", 8);
        body[15] = (uint8_t)(k + i);
        sf_rec_put(b + SF_BLOCK_HDR + off, SF_REC_CAN, 0, 0, 1000 + seq * 100 + i, body, 16);
        off += sf_rec_size(16);
    }
    struct sf_block_info x = {
        .kind = SF_BLOCK_RECORDS, .file_id = file_id, .seq = seq, .first_ts = 1000 + seq * 100,
        .used = off, .count = n, .block_size = B,
    };
    *bi = x;
}

static void test_block_roundtrip(uint32_t aead)
{
    struct sf_cipher w, r;
    struct sf_cipher_rec cr;
    uint8_t body[SF_CIPHER_REC_BODY], b[B], keep[B], plain[B];
    struct sf_block_info bi, got;

    memset(&w, 0, sizeof w);
    memset(&r, 0, sizeof r);
    REQUIRE(sf_cipher_file_start(&w, port, aead, pub, body) == 0);
    CHECK_EQ(body[0], aead);
    CHECK(memcmp(body + 8, pub, 8) == 0);
    plain_block(b, 77, 3, 50, 0, &bi);
    memcpy(plain, b, B);
    uint32_t used = bi.used;
    REQUIRE(sf_cipher_seal_block(&w, b, &bi) == 0);
    CHECK_EQ(bi.used, used + SF_CIPHER_OVERHEAD);
    sf_block_seal(b, &bi);
    /* framing without a key: the CRC is over what is stored */
    CHECK_EQ(sf_block_check(b, B, &got), 0);
    CHECK_EQ(got.used, used + SF_CIPHER_OVERHEAD);
    CHECK(memmem(b, B, "SECRET!", 7) == NULL);
    memcpy(keep, b, B);

    REQUIRE(sf_cipher_rec_get(body, sizeof body, &cr) == 0);
    CHECK_EQ(sf_cipher_open_key(&r, port, &cr, pub2, sec2), SF_ENOENT);   /* another key */
    REQUIRE(sf_cipher_open_key(&r, port, &cr, pub, sec) == 0);
    CHECK(memcmp(r.key, w.key, 32) == 0);
    CHECK_EQ(sf_cipher_open_block(&r, b, &got), 0);
    CHECK_EQ(got.used, used);
    CHECK(memcmp(b + SF_BLOCK_HDR, plain + SF_BLOCK_HDR, used) == 0);
    CHECK(all_zero(b + SF_BLOCK_HDR + used, B - SF_BLOCK_HDR - used));

    /* Each change the AD or the tag covers: the block does not open. */
    for (int t = 0; t < 7; t++) {
        memcpy(b, keep, B);
        got = bi;
        switch (t) {
        case 0: b[SF_BLOCK_HDR + 100] ^= 1; break;                /* ciphertext */
        case 1: b[SF_BLOCK_HDR + 3] ^= 0x80; break;               /* nonce */
        case 2: b[16] ^= 1; got.seq ^= 1; break;                  /* seq: moved */
        case 3: b[8] ^= 1; got.file_id ^= 1; break;               /* file id: foreign */
        case 4: got.used -= 8; b[32] -= 8; break;                 /* cut short */
        case 5: b[36] ^= 1; got.count ^= 1; break;                /* count */
        case 6: b[SF_BLOCK_HDR + got.used - 1] ^= 0x40; break;    /* tag */
        }
        CHECK_EQ(sf_cipher_open_block(&r, b, &got), SF_ECORRUPT);
    }
    /* a replaced sealed key does not open */
    cr.sealed[10] ^= 1;
    CHECK_EQ(sf_cipher_open_key(&r, port, &cr, pub, sec), SF_ECORRUPT);
    CHECK(!r.have_key && all_zero(r.key, 32));
    /* erased: the writer cannot seal (or read) with it any more */
    sf_cipher_erase(&w);
    CHECK(!w.have_key && all_zero(w.key, 32));
    plain_block(b, 77, 4, 5, 0, &bi);
    CHECK_EQ(sf_cipher_seal_block(&w, b, &bi), SF_EINVAL);
}

/* ---- the decoder ---- */

#define NBLK 6
static uint8_t file_img[NBLK * B];

/* A sealed file in file_img: header (CIPHER record, a CHANNEL record) + NBLK-1 blocks. */
static void make_file(uint64_t file_id, uint8_t *img)
{
    struct sf_cipher w;
    uint8_t body[SF_CIPHER_REC_BODY];
    struct sf_block_info bi;
    memset(&w, 0, sizeof w);
    memset(img, 0, NBLK * B);
    REQUIRE(sf_cipher_file_start(&w, port, SF_AEAD_XCHACHA20_POLY1305, pub, body) == 0);
    struct sf_file_header fh = { .start_ts = 999, .file_index = 1, .session_id = 5,
                                 .features = SF_FEATURE_ENCRYPTED };
    sf_file_header_put(img + SF_BLOCK_HDR, &fh);
    uint32_t off = SF_FILE_HDR;
    sf_rec_put(img + SF_BLOCK_HDR + off, SF_REC_CIPHER, 0, 0, 999, body, sizeof body);
    off += sf_rec_size(sizeof body);
    sf_rec_put(img + SF_BLOCK_HDR + off, SF_REC_CHANNEL, 0, 0, 999, "can0", 4);
    off += sf_rec_size(4);
    struct sf_block_info h = { .kind = SF_BLOCK_FILE_HEADER, .file_id = file_id, .seq = 0,
                               .first_ts = 999, .used = off, .count = 2, .block_size = B };
    sf_block_seal(img, &h);
    for (uint32_t s = 1; s < NBLK; s++) {
        uint8_t *b = img + s * B;
        plain_block(b, file_id, s, 10, s * 10, &bi);
        REQUIRE(sf_cipher_seal_block(&w, b, &bi) == 0);
        sf_block_seal(b, &bi);
    }
    sf_cipher_erase(&w);
}

struct verdict {
    uint64_t can, unauthentic, out_of_seq, foreign, truncated, other_damage;
    int key;
    uint64_t sealed;
    uint8_t last_data[NBLK * 10];
};

static void decode(const uint8_t *img, size_t n, const uint8_t *p, const uint8_t *s,
                   struct verdict *v)
{
    static uint8_t buf[B];
    struct sf_dec d;
    struct sf_dec_event ev;
    memset(v, 0, sizeof *v);
    REQUIRE(sf_dec_init(&d, buf, sizeof buf) == 0);
    if (p)
        sf_dec_set_key(&d, port, p, s);
    size_t at = 0;
    for (;;) {
        int k = sf_dec_next(&d, &ev);
        if (k == SF_DEC_NEED_DATA) {
            if (at < n)
                at += sf_dec_feed(&d, img + at, n - at);
            else
                sf_dec_finish(&d);
            continue;
        }
        if (k == SF_DEC_END)
            break;
        if (k == SF_DEC_HEADER)
            v->key = sf_dec_key(&d, NULL, NULL);
        if (k == SF_DEC_RECORD && ev.rec.type == SF_REC_CAN) {
            struct sf_can c;
            CHECK_EQ(sf_rec_get_can(&ev.rec, &c), 0);
            CHECK(memcmp(c.data, "SECRET!", 7) == 0);
            if (v->can < sizeof v->last_data)
                v->last_data[v->can] = ev.rec.body[15];
            v->can++;
        }
        if (k == SF_DEC_FOREIGN)
            v->foreign += ev.count;
        if (k == SF_DEC_DAMAGED) {
            if (ev.reason == SF_DEC_UNAUTHENTIC)
                v->unauthentic += ev.count;
            else if (ev.reason == SF_DEC_OUT_OF_SEQ)
                v->out_of_seq += ev.count;
            else if (ev.reason == SF_DEC_TRUNCATED)
                v->truncated++;
            else
                v->other_damage += ev.count;
        }
    }
    v->sealed = sf_dec_stats(&d)->blocks_sealed;
    sf_dec_wipe_keys(&d);
}

static void reseal_crc(uint8_t *b)
{
    struct sf_block_info bi;
    uint32_t used = (uint32_t)b[32] | (uint32_t)b[33] << 8;
    bi.kind = (uint16_t)(b[6] | b[7] << 8);
    memcpy(&bi.file_id, b + 8, 8);
    memcpy(&bi.seq, b + 16, 8);
    memcpy(&bi.first_ts, b + 24, 8);
    bi.used = used;
    memcpy(&bi.count, b + 36, 4);
    bi.block_size = B;
    /* sf_block_seal zeroes after used: only the CRC changes for a block already so */
    sf_block_seal(b, &bi);
}

static void test_decoder(void)
{
    static uint8_t other[NBLK * B], t[NBLK * B];
    struct verdict v;
    make_file(0xAAAA, file_img);
    make_file(0xBBBB, other);

    decode(file_img, sizeof file_img, pub, sec, &v);
    CHECK_EQ(v.key, SF_DEC_KEY_OK);
    CHECK_EQ(v.can, (NBLK - 1) * 10);
    CHECK_EQ(v.unauthentic + v.out_of_seq + v.other_damage + v.truncated, 0);
    CHECK_EQ(v.last_data[10], 20);

    /* No key: framing only, no record, no damage (what fsck and recovery see). */
    decode(file_img, sizeof file_img, NULL, NULL, &v);
    CHECK_EQ(v.key, SF_DEC_KEY_MISSING);
    CHECK_EQ(v.can, 0);
    CHECK_EQ(v.sealed, NBLK - 1);
    CHECK_EQ(v.unauthentic + v.other_damage, 0);
    /* Another key: nothing opened, said once (the key state), no garbage. */
    decode(file_img, sizeof file_img, pub2, sec2, &v);
    CHECK_EQ(v.key, SF_DEC_KEY_OTHER);
    CHECK_EQ(v.can, 0);

    /* A flipped ciphertext byte (CRC made right again): that block unauthentic, the rest. */
    memcpy(t, file_img, sizeof t);
    t[2 * B + SF_BLOCK_HDR + 60] ^= 4;
    reseal_crc(t + 2 * B);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.unauthentic, 1);
    CHECK_EQ(v.can, (NBLK - 2) * 10);

    /* Swapped blocks 2 and 3: each opens (its own AD) but is out of sequence. */
    memcpy(t, file_img, sizeof t);
    memcpy(t + 2 * B, file_img + 3 * B, B);
    memcpy(t + 3 * B, file_img + 2 * B, B);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.out_of_seq, 2);
    CHECK_EQ(v.can, (NBLK - 3) * 10);

    /* A block moved: block 3's bytes with seq 2 and CRC fixed: the AD binds seq. */
    memcpy(t, file_img, sizeof t);
    memcpy(t + 2 * B, file_img + 3 * B, B);
    t[2 * B + 16] = 2;
    reseal_crc(t + 2 * B);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.unauthentic, 1);
    CHECK_EQ(v.can, (NBLK - 2) * 10);

    /* A block of another file (same key pair) made to carry this file's id: unauthentic. */
    memcpy(t, file_img, sizeof t);
    memcpy(t + 4 * B, other + 4 * B, B);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.foreign, 1);                          /* as it is: another file id */
    memcpy(t + 4 * B + 8, file_img + 8, 8);
    reseal_crc(t + 4 * B);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.unauthentic, 1);
    CHECK_EQ(v.can, (NBLK - 2) * 10);

    /* Truncated inside the last block: counted, the blocks before it read. */
    decode(file_img, (NBLK - 1) * B + 200, pub, sec, &v);   /* inside its stored bytes */
    CHECK_EQ(v.other_damage, 1);                     /* its CRC fails first: invalid */
    CHECK_EQ(v.truncated, 1);
    CHECK_EQ(v.can, (NBLK - 2) * 10);
    /* Truncated at a block boundary: reads as a file that ended there, no damage. */
    decode(file_img, 4 * B, pub, sec, &v);
    CHECK_EQ(v.unauthentic + v.truncated + v.other_damage, 0);
    CHECK_EQ(v.can, 3 * 10);

    /* The header's sealed key replaced by another file's: every record block unauthentic,
     * the header (names) still read; replaced by garbage: the key does not open (BAD). */
    memcpy(t, file_img, sizeof t);
    memcpy(t + SF_BLOCK_HDR + SF_FILE_HDR + SF_REC_HDR, other + SF_BLOCK_HDR + SF_FILE_HDR +
           SF_REC_HDR, SF_CIPHER_REC_BODY);
    reseal_crc(t);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.key, SF_DEC_KEY_OK);
    CHECK_EQ(v.unauthentic, NBLK - 1);
    CHECK_EQ(v.can, 0);
    t[SF_BLOCK_HDR + SF_FILE_HDR + SF_REC_HDR + 40] ^= 1;
    reseal_crc(t);
    decode(t, sizeof t, pub, sec, &v);
    CHECK_EQ(v.key, SF_DEC_KEY_BAD);
    CHECK_EQ(v.unauthentic, NBLK - 1);
    CHECK_EQ(v.can, 0);
}

/* ---- the writer ---- */

static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
static uint8_t work[64 * 1024] __attribute__((aligned(4096)));
static uint8_t ringbuf[64 * B] __attribute__((aligned(4096)));
static uint64_t fake_ns = 1;
static uint64_t fake_clock(void *ctx) { (void)ctx; return fake_ns; }

static void test_writer(void)
{
    static uint8_t mbuf[1 << 20];
    static char names[40][400];
    static const char *chans[40];
    struct sf_rambd ram;
    struct sf_vol vol;
    struct sf_log lg;
    uint64_t size = 64ull << 20;
    uint8_t *disk = calloc(size / SS, SS);
    REQUIRE(disk);
    REQUIRE(sf_rambd_init(&ram, disk, SS, size / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .serial = 1, .buf = mbuf,
                              .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    struct sf_vol_cfg vc = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&vol, &vc) == 0);
    /* 40 long channel names: they do not fit the header block, so name blocks (kind 2,
     * sealed) follow it */
    for (int i = 0; i < 40; i++) {
        memset(names[i], 'a' + i % 26, sizeof names[i] - 1);
        names[i][sizeof names[i] - 1] = 0;
        chans[i] = names[i];
    }
    struct sf_log_cfg c = {
        .vol = &vol, .ring = ringbuf, .ring_size = sizeof ringbuf, .block_size = B,
        .clock = fake_clock, .session_id = 9, .channel_names = chans, .channel_count = 40,
        .work = work, .work_size = sizeof work, .cipher_port = port, .cipher_pub = pub,
        .cipher_stage = &sf_cipher_stage,
    };
    /* a name that fits a plain file but not a sealed one is refused */
    static char longname[B - 96 + 1];
    memset(longname, 'x', B - 96);
    const char *one[] = { longname };
    struct sf_log_cfg c2 = c;
    c2.channel_names = one;
    c2.channel_count = 1;
    CHECK_EQ(sf_log_open(&lg, &c2), SF_EINVAL);

    REQUIRE(sf_log_open(&lg, &c) == 0);
    CHECK(lg.cipher.have_key);
    uint8_t key1[32];
    memcpy(key1, lg.cipher.key, 32);
    uint8_t d[8] = "SECRET!!";
    for (int i = 0; i < 3000; i++) {
        fake_ns++;
        REQUIRE(sf_log_append_can(&lg, (uint8_t)(i % 40), fake_ns, 0x123, 0, d, 8) == 0);
        if (i % 100 == 0)
            REQUIRE(sf_log_service(&lg) >= 0);
        if (i == 1500) {
            REQUIRE(sf_log_rotate(&lg) == 0);
            while (lg.stats.files < 2)
                REQUIRE(sf_log_service(&lg) >= 0);
            CHECK(lg.cipher.have_key);
            CHECK(memcmp(lg.cipher.key, key1, 32) != 0);      /* a new key per file */
        }
    }
    REQUIRE(sf_log_close(&lg) == 0);
    CHECK(!lg.cipher.have_key && all_zero(lg.cipher.key, 32));   /* erased */

    uint64_t total = 0;
    for (int f = 1; f <= 2; f++) {
        char path[32];
        struct sf_file fh;
        snprintf(path, sizeof path, "LOG0000%d.SFL", f);
        REQUIRE(sf_open(&vol, &fh, path, SF_O_RDONLY) == 0);
        uint64_t n = sf_fsize(&fh);
        uint8_t *img = malloc(n);
        REQUIRE(img && sf_read(&fh, img, n) == (sf_ssize_t)n);
        sf_close(&fh);
        CHECK(memmem(img, n, "SECRET!!", 8) == NULL);
        CHECK(memmem(img, n, names[0], 100) != NULL);      /* the header block: names read */
        struct verdict v;
        decode(img, n, pub, sec, &v);
        CHECK_EQ(v.key, SF_DEC_KEY_OK);
        CHECK_EQ(v.unauthentic + v.other_damage + v.out_of_seq + v.truncated, 0);
        total += v.can;
        free(img);
    }
    CHECK_EQ(total, 3000);
    sf_unmount(&vol);
    free(disk);
}

int main(void)
{
    port = sf_sodium_port();
    if (!port) {
        printf("no libsodium in this build: skipped\n");
        return 77;
    }
    REQUIRE(sf_sodium_keypair(pub, sec) == 0);
    REQUIRE(sf_sodium_keypair(pub2, sec2) == 0);
    test_block_roundtrip(SF_AEAD_XCHACHA20_POLY1305);
    if (sf_sodium_aead_available(SF_AEAD_AES256_GCM))
        test_block_roundtrip(SF_AEAD_AES256_GCM);
    test_decoder();
    test_writer();
    TEST_END();
}
