/* mklog OUT [BLOCK_SIZE [BULK]]: write a synthetic streamfat log file (docs/FORMAT.md) to the
 * host with rec.h alone, for the export tests.
 *
 * Content, in order: a header block naming channel 0 "can0" and 1 "vcan1" (channel 2 has no
 * name); twelve hand-picked records covering CAN 2.0 (11/29-bit, zero length), RTR (with and
 * without a length), CAN FD (BRS, ESI, 64 bytes, empty), an error frame, and TEXT, DROP,
 * ANNOTATION, SAMPLE records in between; then BULK generated frames (default 2000): frame k
 * on channel k % 2, id 0x100 + k % 16, 8 data bytes = k little-endian, ts = T0 + 1 ms + k us
 * + 789 ns, with a TEXT record after every 100th. Every 7th record block is sealed early (a
 * checkpoint), and the file ends with one all-zero block (allocated, never written).
 *
 * Writes OUT.blocks: one line "BLOCK CAN_RECORDS" per record block, so a test can tell what
 * a damaged block takes away. */
#include "streamfat/rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1700000000123456789ull

static uint8_t *blk;
static uint32_t B, used, count, cans;
static uint64_t seq = 1, first_ts;
static FILE *out, *manifest;
static const uint64_t file_id = 0x5F4C0123456789ABull;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void seal(void)
{
    struct sf_block_info bi = { SF_BLOCK_RECORDS, file_id, seq, first_ts, used, count, B };

    if (!count)
        return;
    sf_block_seal(blk, &bi);
    if (fwrite(blk, 1, B, out) != B)
        die("write");
    fprintf(manifest, "%llu %u\n", (unsigned long long)seq, cans);
    seq++;
    used = count = cans = 0;
}

/* Make room for `size` bytes; return where the record goes. */
static uint8_t *room(uint32_t size, uint64_t ts)
{
    if (used + size > B - SF_BLOCK_HDR || (seq % 7 == 0 && count == 3))
        seal();
    if (!count)
        first_ts = ts;
    return blk + SF_BLOCK_HDR + used;
}

static void can(uint8_t ch, uint64_t ts, uint32_t id, uint32_t flags, const uint8_t *d,
                uint8_t len)
{
    uint8_t *p = room(sf_rec_size(SF_CAN_BODY + len), ts);
    uint32_t n = sf_rec_put_can(p, ch, ts, id, flags, d, len);

    if (!n) {
        fprintf(stderr, "mklog: invalid frame id %x flags %x len %u\n", id, flags, len);
        exit(1);
    }
    used += n;
    count++;
    cans++;
}

static void other(uint8_t type, uint8_t ch, uint64_t ts, const void *body, uint16_t len)
{
    uint8_t *p = room(sf_rec_size(len), ts);

    sf_rec_put(p, type, ch, 0, ts, body, len);
    used += sf_rec_size(len);
    count++;
}

int main(int argc, char **argv)
{
    uint8_t d[64];
    char name[4096];
    unsigned long bulk = 2000;

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: mklog OUT [BLOCK_SIZE [BULK]]\n");
        return 2;
    }
    B = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 512;
    if (argc > 3)
        bulk = strtoul(argv[3], NULL, 0);
    if (B < SF_BLOCK_MIN || B > SF_BLOCK_MAX || (B & (B - 1))) {
        fprintf(stderr, "mklog: bad block size\n");
        return 2;
    }
    blk = calloc(1, B);
    if (!blk)
        die("calloc");
    if (!(out = fopen(argv[1], "wb")))
        die(argv[1]);
    snprintf(name, sizeof name, "%s.blocks", argv[1]);
    if (!(manifest = fopen(name, "w")))
        die(name);

    /* header block */
    {
        struct sf_file_header h = { T0 - 5000000000ull, SF_CLOCK_REALTIME, 1,
                                    0x0102030405060708ull, 0 };
        uint8_t *p = blk + SF_BLOCK_HDR;
        uint32_t off = SF_FILE_HDR;
        sf_file_header_put(p, &h);
        sf_rec_put(p + off, SF_REC_CHANNEL, 0, 0, h.start_ts, "can0", 4);
        off += sf_rec_size(4);
        sf_rec_put(p + off, SF_REC_CHANNEL, 1, 0, h.start_ts, "vcan1", 5);
        off += sf_rec_size(5);
        sf_rec_put(p + off, SF_REC_META, 0, 0, h.start_ts, "source=mklog", 12);
        off += sf_rec_size(12);
        struct sf_block_info bi = { SF_BLOCK_FILE_HEADER, file_id, 0, h.start_ts, off, 3, B };
        sf_block_seal(blk, &bi);
        if (fwrite(blk, 1, B, out) != B)
            die("write");
    }

    /* hand-picked records */
    static const uint8_t d4[] = { 0x11, 0x22, 0x33, 0x44 };
    static const uint8_t d8[] = { 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01, 0x02, 0x03 };
    static const uint8_t derr[] = { 0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00 };
    can(0, T0, 0x123, 0, d4, 4);
    /* TX (the logger sent it, FORMAT.md bit 6) on one classic, one remote, one FD frame */
    can(0, T0 + 1000, 0x1ABCDEF0, SF_CAN_EFF | SF_CAN_TX, d8, 8);
    can(1, T0 + 2000, 0x7FF, SF_CAN_RTR, NULL, 0);
    can(1, T0 + 3000, 0xABC, SF_CAN_EFF | SF_CAN_RTR | SF_CAN_TX, NULL, 5);
    other(SF_REC_TEXT, 0, T0 + 3500, "hello from mklog", 16);
    for (int i = 0; i < 64; i++)
        d[i] = (uint8_t)(i * 3 + 1);
    can(0, T0 + 4000, 0x321, SF_CAN_FD | SF_CAN_BRS | SF_CAN_TX, d, 12);
    can(0, T0 + 5000, 0x1FFFFFFF, SF_CAN_FD | SF_CAN_EFF | SF_CAN_ESI, d, 64);
    can(2, T0 + 6000, 0x080, SF_CAN_ERR, derr, 8);
    can(0, T0 + 7000, 0x000, 0, NULL, 0);
    {
        uint8_t drop[24] = { 5 };   /* count 5, timestamps 0 */
        other(SF_REC_DROP, 0, T0 + 7500, drop, 24);
    }
    other(SF_REC_ANNOTATION, 0, T0 + 7600, "trigger: test", 13);
    can(1, T0 + 8000, 0x010, SF_CAN_FD | SF_CAN_BRS | SF_CAN_ESI, NULL, 0);
    other(SF_REC_SAMPLE, 4, T0 + 8500, d, 7);

    /* bulk */
    for (unsigned long k = 0; k < bulk; k++) {
        uint64_t ts = T0 + 1000000 + k * 1000 + 789, v = k;
        for (int i = 0; i < 8; i++, v >>= 8)
            d[i] = (uint8_t)v;
        can((uint8_t)(k % 2), ts, 0x100 + (uint32_t)(k % 16), 0, d, 8);
        if (k % 100 == 99)
            other(SF_REC_TEXT, 0, ts, "tick", 4);
    }
    seal();
    memset(blk, 0, B);                  /* allocated, never written */
    if (fwrite(blk, 1, B, out) != B)
        die("write");
    if (fclose(out) || fclose(manifest))
        die("close");
    free(blk);
    return 0;
}
