/* logcut IMG PATH FILE_ID BLOCKS CKPT [GAP] [close]: write a framed log file (docs/FORMAT.md)
 * through the streaming write path and stop as a power cut or a killed writer would, for
 * the recovery tests of `streamfat fsck --repair` (t_fsck_recover).
 *
 * The file gets a header block and BLOCKS record blocks of 4096 bytes (seq 1..BLOCKS), each
 * with 20 CAN frames r = 0..19: id 0x100 + r, 8 data bytes holding (big-endian, so that
 * candump shows it as a hex number) the low 16 bits of FILE_ID << 48 | seq * 100 + r. A checkpoint follows block
 * CKPT (0: none after the header block's own). GAP (0: none) skips that seq number: the
 * block written in its place carries seq GAP + 1, as if a block had been lost. Without
 * "close" the process ends right after the last write returned (the data is on the device,
 * the directory entry still has the checkpoint's size, the allocation ahead is leaked); with
 * "close" the file is closed and the volume unmounted normally.
 *
 * Prints "durable D written W" (record blocks covered by the checkpoint / written). */
#include "helper_vol.h"
#include "streamfat/stream.h"
#include "streamfat/rec.h"

#include <inttypes.h>
#include <unistd.h>

#define B 4096u

static void block(uint8_t *blk, uint64_t file_id, uint64_t seq)
{
    struct sf_block_info bi = { SF_BLOCK_RECORDS, file_id, seq, 0, 0, 0, B };
    uint8_t *pl = blk + SF_BLOCK_HDR;
    memset(blk, 0, B);
    for (uint32_t r = 0; r < 20; r++) {
        uint8_t data[8];
        uint64_t v = (file_id & 0xFFFF) << 48 | (seq * 100 + r);
        uint64_t ts = 1700000000000000000ull + seq * 1000000ull + r * 1000ull;
        for (int i = 0; i < 8; i++)
            data[i] = (uint8_t)(v >> (56 - 8 * i));     /* big-endian: hex reads as v */
        if (!r)
            bi.first_ts = ts;
        bi.used += sf_rec_put_can(pl + bi.used, 0, ts, 0x100 + r, 0, data, 8);
        bi.count++;
    }
    sf_block_seal(blk, &bi);
}

int main(int argc, char **argv)
{
    struct hvol h;
    struct sf_stream s;
    if (argc < 6) {
        fprintf(stderr, "usage: logcut IMG PATH FILE_ID BLOCKS CKPT [GAP] [close]\n");
        return 2;
    }
    uint64_t file_id = strtoull(argv[3], NULL, 16);
    uint64_t blocks = strtoull(argv[4], NULL, 10), ckpt = strtoull(argv[5], NULL, 10);
    uint64_t gap = argc > 6 ? strtoull(argv[6], NULL, 10) : 0;
    int do_close = argc > 7 && !strcmp(argv[7], "close");
    if (hvol_mount(&h, argv[1]))
        return 1;
    uint8_t *work = aligned_alloc(4096, 65536), *blk = aligned_alloc(4096, B);
    if (!work || !blk)
        return 1;
    struct sf_stream_cfg cfg = { 0 };
    cfg.prealloc_step = 1u << 20;     /* small steps: the test volumes are small */
    int err = sf_stream_open(&h.vol, &s, argv[2], &cfg, work, 65536);
    if (err) {
        fprintf(stderr, "logcut: open %s: %s\n", argv[2], sf_strerror(err));
        return 1;
    }
    /* Header block (seq 0). */
    struct sf_block_info hb = { SF_BLOCK_FILE_HEADER, file_id, 0, 1700000000000000000ull,
                                SF_FILE_HDR, 0, B };
    struct sf_file_header fh = { 1700000000000000000ull, SF_CLOCK_REALTIME, 1, file_id ^ 1, 0 };
    memset(blk, 0, B);
    sf_file_header_put(blk + SF_BLOCK_HDR, &fh);
    sf_block_seal(blk, &hb);
    if (sf_stream_write(&s, blk, B) != B || sf_stream_checkpoint(&s)) {
        fprintf(stderr, "logcut: header block failed\n");
        return 1;
    }
    uint64_t durable = 0;
    for (uint64_t i = 1; i <= blocks; i++) {
        uint64_t seq = gap && i >= gap ? i + 1 : i;
        block(blk, file_id, seq);
        if (sf_stream_write(&s, blk, B) != B) {
            fprintf(stderr, "logcut: write failed\n");
            return 1;
        }
        if (i == ckpt) {
            if ((err = sf_stream_checkpoint(&s))) {
                fprintf(stderr, "logcut: checkpoint: %s\n", sf_strerror(err));
                return 1;
            }
            durable = i;
        }
    }
    if (do_close) {
        if (sf_stream_close(&s) || hvol_unmount(&h)) {
            fprintf(stderr, "logcut: close failed\n");
            return 1;
        }
        durable = blocks;
    }
    printf("durable %" PRIu64 " written %" PRIu64 "\n", durable, blocks);
    fflush(stdout);
    /* Without close: end as a killed writer does, nothing released (the file device wrote
     * through pwrite, so everything written is in the image). */
    if (!do_close)
        _exit(0);
    free(work);
    free(blk);
    return 0;
}
