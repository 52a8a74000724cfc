/* libFuzzer target: the streaming log decoder (src/log/decode.c) and the record layer it
 * uses (src/log/rec.c: block check, record walk, CAN bodies) on arbitrary file bytes.
 *
 * Input: one control byte, then the file. The control byte picks
 *   bit 0      fix the CRCs first: every block header the fuzzer managed to build (at a
 *              multiple of its block size) gets the CRC-32C docs/FORMAT.md asks for, so that
 *              mutations reach the record walk instead of dying at the CRC check
 *   bits 1-2   how the bytes are handed over: in pieces of 3 (the first SMALL_SPAN bytes,
 *              then 509), 61 or 4096 bytes, or through the zero-copy pair sf_dec_space /
 *              sf_dec_commit. 3-byte pieces all through a 64 KiB input took 20,000 feed
 *              and next calls, most of an input's time, for no path that the first few
 *              blocks do not already take
 *   bits 3-4   the decoder's buffer: 512, 4 KiB, 64 KiB or 1 MiB (small ones take the
 *              "block larger than the buffer" path)
 *   bit 5      the decrypting reader (issue 29, docs/FORMAT.md "Sealed files"): the decoder
 *              has the secret key of fuzz/seal_test.key (test_sec below) through the
 *              libsodium port, so sealed files' CIPHER records and blocks are opened; the
 *              seed fuzz/seeds.sh makes is sealed to fuzz/seal_test.pub
 * Seeds are real logs from `streamfat log --source gen:can` (fuzz/seeds.sh), with 0x01 in
 * front.
 *
 * Invariants checked beyond the sanitizers: the decoder makes progress (events are bounded
 * by the input size), reports SF_DEC_END after finish, and every record it delivers lies
 * inside its buffer. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/rec.h"
#include "streamfat/cipher_sodium.h"

#define MAX_INPUT (2u << 20)
#define SMALL_SPAN 2048u

static uint8_t dec_buf[SF_BLOCK_MAX];
static uint8_t unpack_buf[SF_UNPACK_MEM] __attribute__((aligned(8)));
/* fuzz/seal_test.key: bytes 0x41 .. 0x60; its public key is computed once */
static uint8_t test_sec[32], test_pub[32];
static const struct sf_cipher_port *test_port;
static uint8_t file_buf[MAX_INPUT];

static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Block CRC (docs/FORMAT.md): CRC-32C of header bytes 0..43, then of the used payload;
 * stored as u32 at 44. */
static void fix_crcs(uint8_t *p, size_t n)
{
    for (size_t off = 0; off + SF_BLOCK_HDR <= n; off += 512) {
        uint32_t b, used, crc;
        if (sf_block_peek_size(p + off, &b) || off % b || b > n - off)
            continue;
        used = ld32(p + off + 32);
        if (used > b - SF_BLOCK_HDR)
            continue;
        crc = sf_crc32c(0, p + off, 44);
        crc = sf_crc32c(crc, p + off + SF_BLOCK_HDR, used);
        p[off + 44] = (uint8_t)crc;
        p[off + 45] = (uint8_t)(crc >> 8);
        p[off + 46] = (uint8_t)(crc >> 16);
        p[off + 47] = (uint8_t)(crc >> 24);
    }
}

static void handle(struct sf_dec *d, const struct sf_dec_event *ev, size_t cap)
{
    struct sf_can can;

    if (ev->kind != SF_DEC_RECORD)
        return;
    /* the body must lie inside the decoder's buffer, or (compressed blocks) its unpack
     * scratch */
    if (ev->rec.length &&
        (ev->rec.body < d->buf || ev->rec.body + ev->rec.length > d->buf + cap) &&
        (ev->rec.body < unpack_buf || ev->rec.body + ev->rec.length > unpack_buf + sizeof unpack_buf))
        abort();
    if (ev->rec.type == SF_REC_CAN && sf_rec_get_can(&ev->rec, &can) == 0 &&
        can.len > 64)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const size_t pieces[] = { 3, 61, 4096, 0 };
    static const size_t caps[] = { 512, 4096, 65536, SF_BLOCK_MAX };
    struct sf_dec d;
    struct sf_dec_event ev;
    size_t n, off = 0, piece, cap;
    uint64_t events = 0, limit;
    uint8_t ctl;

    if (size < 1 || size - 1 > MAX_INPUT)
        return 0;
    ctl = data[0];
    n = size - 1;
    memcpy(file_buf, data + 1, n);
    if (ctl & 1)
        fix_crcs(file_buf, n);
    piece = pieces[(ctl >> 1) & 3];
    cap = caps[(ctl >> 3) & 3];
    limit = 2 * (uint64_t)n + 16;

    if (sf_dec_init(&d, dec_buf, cap) || sf_dec_set_unpack(&d, unpack_buf, sizeof unpack_buf))
        abort();
    if (ctl & 0x20) {
        if (!test_port) {
            for (int i = 0; i < 32; i++)
                test_sec[i] = (uint8_t)(0x41 + i);
            test_port = sf_sodium_port();
            if (!test_port || sf_sodium_public_of(test_sec, test_pub))
                abort();            /* the fuzz build has libsodium (scripts/deps.sh) */
        }
        sf_dec_set_key(&d, test_port, test_pub, test_sec);
    }
    while (off < n) {
        size_t took;
        if (piece) {
            size_t want = piece == 3 && off >= SMALL_SPAN ? 509 : piece;
            size_t k = n - off < want ? n - off : want;
            took = sf_dec_feed(&d, file_buf + off, k);
        } else {
            uint8_t *where;
            size_t room = sf_dec_space(&d, &where);
            took = room < n - off ? room : n - off;
            if (took) {
                memcpy(where, file_buf + off, took);
                sf_dec_commit(&d, took);
            }
        }
        if (!took)
            abort();            /* no events pending (drained below), yet it takes nothing */
        off += took;
        while (sf_dec_next(&d, &ev) != SF_DEC_NEED_DATA) {
            handle(&d, &ev, cap);
            if (++events > limit)
                abort();        /* no progress */
        }
    }
    sf_dec_finish(&d);
    for (;;) {
        int k = sf_dec_next(&d, &ev);
        if (k == SF_DEC_END)
            break;
        if (k == SF_DEC_NEED_DATA)
            abort();            /* after finish it must not ask for more */
        handle(&d, &ev, cap);
        if (++events > limit)
            abort();
    }
    if (sf_dec_stats(&d)->bytes != n)
        abort();
    return 0;
}
