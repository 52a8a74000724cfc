/* libFuzzer target: the pack stage's unpacker (src/log/block_pack.c) on arbitrary stored
 * payloads, and the packer on arbitrary plain payloads with a round-trip oracle.
 *
 * Input: one control byte, then the data.
 *   control bit 0 clear: the data is a stored payload; sf_unpack must refuse it or unpack it
 *     within the cap (bits 1-3 choose the cap: 64 bytes .. the largest), never read or write
 *     out of bounds (ASan), and what it unpacks must pack and unpack again to itself.
 *   control bit 0 set: the data is read as 8-aligned records (each header's length made to
 *     fit); they are packed into stored payloads of (bits 1-3) sizes and every payload must
 *     unpack, alone, to exactly the records it took. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/block_pack.h"
#include "streamfat/rec.h"

static uint8_t dict[SF_UNPACK_DICT_MEM] __attribute__((aligned(8)));
static uint8_t raw[SF_PACK_RAW_MAX], raw2[SF_PACK_RAW_MAX];
static uint8_t stored[1u << 20];
static uint8_t recs[1u << 17];
static struct sf_pack pk;

/* Pack n bytes of records at p into payloads of cap bytes; each unpacks to its records. */
static void round_trip(const uint8_t *p, uint32_t n, uint32_t cap)
{
    uint32_t off = 0, took, got;
    while (off < n) {
        sf_pack_begin(&pk, stored, cap, SF_PACK_RAW_MAX);
        int r = sf_pack_add(&pk, p + off, n - off, &took);
        if (r < 0)
            abort();                     /* the records are well-formed */
        if (!took) {
            /* a record too large for an empty payload of this cap (the writer puts it in a
             * plain block): nothing was added; step over it */
            if (r != 1 || pk.count || sf_pack_finish(&pk))
                abort();
            off += sf_rec_size((uint32_t)p[off + 2] | (uint32_t)p[off + 3] << 8);
            continue;
        }
        uint32_t sn = sf_pack_finish(&pk);
        if (sf_unpack(stored, sn, pk.first_ts, raw2, SF_PACK_RAW_MAX, dict, &got) ||
            got != took || memcmp(raw2, p + off, took))
            abort();
        off += took;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t caps[] = { 64, 512, 4096, 65536, 300000, 1u << 20, 2u << 20, 2u << 20 };
    uint32_t got;

    if (size < 1 || size > sizeof recs)
        return 0;
    uint8_t ctl = data[0];
    data++;
    size--;
    if (!(ctl & 1)) {
        uint32_t cap = caps[(ctl >> 1) & 7];
        if (sf_unpack(data, (uint32_t)size, 0x1234, raw, cap, dict, &got) == 0) {
            if (got > cap)
                abort();
            /* what unpacked is records (the unpacker makes only whole ones) */
            round_trip(raw, got, 65536 - 48);
        }
        return 0;
    }
    /* make the bytes well-formed records: lengths cut to what is left, padding zeroed */
    uint32_t n = 0;
    size_t at = 0;
    while (at + 16 <= size && n + 16 <= sizeof recs) {
        uint32_t len = (uint32_t)data[at + 2] | (uint32_t)(data[at + 3] & 0x03) << 8;
        uint32_t room = (uint32_t)(size - at - 16);
        if (len > room)
            len = room;
        uint32_t rsz = sf_rec_size(len);
        if (n + rsz > sizeof recs)
            break;
        memcpy(recs + n, data + at, 16 + len);
        recs[n + 2] = (uint8_t)len;
        recs[n + 3] = (uint8_t)(len >> 8);
        memset(recs + n + 16 + len, 0, rsz - 16 - len);
        n += rsz;
        at += 16 + len;
    }
    if (n)
        round_trip(recs, n, ((ctl >> 1) & 7) < 4 ? 512 - 48 : 65536 - 48);
    return 0;
}
