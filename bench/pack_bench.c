/* bench/pack_bench: bytes and instructions per record of compressed record blocks
 * (bench/pack_bench.sh; docs/BENCHMARKS.md "Compressed blocks").
 *
 *   pack_bench FILE.SFL...   the records of the files (decoded as export reads them), laid out
 *                            in plain 64 KiB record blocks as the logger fills them, then
 *                            per block: LZ4 (liblz4), zstd -1 and -3 (libzstd) on the plain
 *                            payload, and streamfat's pack stage (src/log/block_pack.c), alone
 *                            and with zstd -1 behind it (the candidate "transform, then a byte
 *                            codec")
 *   pack_bench --raw FILE    raw mode: the file's bytes in 64 KiB pieces, LZ4 and zstd only
 *
 * Prints one table row per codec: bytes per record (what the blocks would occupy: plain SFL
 * and streamfat's pack write whole blocks; for the general codecs the sum of the compressed
 * payloads plus a 48-byte block header each, as if they were packed without waste) and the
 * ratio to plain SFL. Instructions: each codec runs in its own function (run_*), which
 * pack_bench.sh counts under callgrind. */
#include "streamfat/block_pack.h"
#include "streamfat/decode.h"
#include "streamfat/rec.h"

#include <lz4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define B 65536u
#define PAY (B - SF_BLOCK_HDR)

struct blk { uint8_t *p; uint32_t used; };

static struct blk *blks;
static size_t nblk, cblk;
static uint64_t records;
static uint8_t *cbuf;
static size_t ccap;

static void new_block(void)
{
    if (nblk == cblk) {
        cblk = cblk ? 2 * cblk : 64;
        blks = realloc(blks, cblk * sizeof *blks);
    }
    blks[nblk].p = calloc(1, PAY);
    blks[nblk].used = 0;
    if (!blks || !blks[nblk].p) {
        perror("pack_bench");
        exit(1);
    }
    nblk++;
}

/* Append one record as the logger would (a new block when it does not fit). */
static void add_rec(const struct sf_rec *r)
{
    uint32_t size = sf_rec_size(r->length);
    if (!nblk || blks[nblk - 1].used + size > PAY)
        new_block();
    uint8_t *o = blks[nblk - 1].p + blks[nblk - 1].used;
    o[0] = r->type;
    o[1] = r->channel;
    o[2] = (uint8_t)r->length;
    o[3] = (uint8_t)(r->length >> 8);
    for (int i = 0; i < 4; i++)
        o[4 + i] = (uint8_t)(r->flags >> 8 * i);
    for (int i = 0; i < 8; i++)
        o[8 + i] = (uint8_t)(r->ts >> 8 * i);
    memcpy(o + 16, r->body, r->length);
    blks[nblk - 1].used += size;
    records++;
}

static void load_sfl(const char *path)
{
    static uint8_t dbuf[SF_BLOCK_MAX];
    static uint8_t scratch[SF_UNPACK_MEM];
    FILE *f = fopen(path, "rb");
    struct sf_dec d;
    struct sf_dec_event ev;
    int k;

    if (!f) {
        perror(path);
        exit(1);
    }
    sf_dec_init(&d, dbuf, sizeof dbuf);
    sf_dec_set_unpack(&d, scratch, sizeof scratch);
    for (;;) {
        k = sf_dec_next(&d, &ev);
        if (k == SF_DEC_NEED_DATA) {
            uint8_t *w;
            size_t n = sf_dec_space(&d, &w);
            size_t r = fread(w, 1, n, f);
            if (r)
                sf_dec_commit(&d, r);
            else
                sf_dec_finish(&d);
        } else if (k == SF_DEC_RECORD) {
            add_rec(&ev.rec);
        } else if (k == SF_DEC_END) {
            break;
        }
    }
    fclose(f);
}

static void load_raw(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    for (;;) {
        new_block();
        size_t r = fread(blks[nblk - 1].p, 1, PAY, f);
        blks[nblk - 1].used = (uint32_t)r;
        if (r < PAY)
            break;
    }
    fclose(f);
}

static uint64_t total_in(void)
{
    uint64_t t = 0;
    for (size_t i = 0; i < nblk; i++)
        t += blks[i].used;
    return t;
}

__attribute__((noinline)) static uint64_t run_lz4(void)
{
    uint64_t t = 0;
    for (size_t i = 0; i < nblk; i++)
        t += SF_BLOCK_HDR + (uint64_t)LZ4_compress_default((const char *)blks[i].p, (char *)cbuf,
                                                            (int)blks[i].used, (int)ccap);
    return t;
}

/* Inlined into each run_* (a tail call would leave callgrind nothing to count in it). */
static inline __attribute__((always_inline)) uint64_t run_zstd(int level)
{
    static ZSTD_CCtx *cx;
    uint64_t t = 0;
    if (!cx)
        cx = ZSTD_createCCtx();
    for (size_t i = 0; i < nblk; i++)
        t += SF_BLOCK_HDR + ZSTD_compressCCtx(cx, cbuf, ccap, blks[i].p, blks[i].used, level);
    return t;
}

__attribute__((noinline)) static uint64_t run_zstd1(void) { return run_zstd(1); }
__attribute__((noinline)) static uint64_t run_zstd3(void) { return run_zstd(3); }

static struct sf_pack pk;
static uint8_t pout[PAY];
static uint64_t pack_stored, pack_zstd;

/* The writer's grouping: records into one packed block while they fit, a plain block split
 * between two packed ones where the first fills. Returns the blocks written; pack_stored the
 * stored payload bytes (+ headers). With zstd: each packed payload compressed again with
 * zstd -1 (the candidate with a byte codec behind). unpack: every packed block unpacked
 * again (the decoding cost). */
static inline __attribute__((always_inline)) uint64_t pack_all(int with_zstd, int unpack)
{
    static ZSTD_CCtx *cx;
    static uint8_t scratch[SF_UNPACK_MEM] __attribute__((aligned(8)));
    uint64_t out = 0;
    size_t i = 0;
    uint32_t off = 0, taken;
    if (with_zstd && !cx)
        cx = ZSTD_createCCtx();
    pack_stored = pack_zstd = 0;
    while (i < nblk) {
        sf_pack_begin(&pk, pout, PAY, sf_pack_raw_max(B));
        while (i < nblk) {
            int r = sf_pack_add(&pk, blks[i].p + off, blks[i].used - off, &taken);
            off += taken;
            if (r)
                break;
            i++;
            off = 0;
        }
        uint32_t n = sf_pack_finish(&pk), raw;
        pack_stored += SF_BLOCK_HDR + n;
        if (with_zstd)
            pack_zstd += SF_BLOCK_HDR + ZSTD_compressCCtx(cx, cbuf, ccap, pout, n, 1);
        if (unpack && sf_unpack(pout, n, pk.first_ts, scratch + SF_UNPACK_DICT_MEM + 48,
                                SF_PACK_RAW_MAX, scratch, &raw)) {
            fprintf(stderr, "pack_bench: a packed block does not unpack\n");
            exit(1);
        }
        out++;
    }
    return out;
}

__attribute__((noinline)) static uint64_t run_pack(void) { return pack_all(0, 0); }
__attribute__((noinline)) static uint64_t run_pack_zstd(void) { return pack_all(1, 0); }
__attribute__((noinline)) static uint64_t run_pack_unpack(void) { return pack_all(0, 1); }

static void row(const char *name, uint64_t bytes, double plain)
{
    double per = (double)bytes / (double)records;
    printf("| %s | %.2f | %.2f× |\n", name, per, plain / per);
}

int main(int argc, char **argv)
{
    int raw = argc > 1 && strcmp(argv[1], "--raw") == 0;
    if (argc < 2 + raw) {
        fprintf(stderr, "usage: pack_bench FILE.SFL... | pack_bench --raw FILE\n");
        return 2;
    }
    if (raw)
        load_raw(argv[2]);
    else
        for (int i = 1; i < argc; i++)
            load_sfl(argv[i]);
    ccap = ZSTD_compressBound(PAY) + LZ4_compressBound(PAY);
    cbuf = malloc(ccap);
    if (raw) {
        /* per MiB of input instead of per record */
        double mib = (double)total_in() / 1048576.0;
        printf("| raw input: %.1f MiB | bytes per MiB | ratio |\n|---|---:|---:|\n", mib);
        printf("| plain (raw file) | %.0f | 1.00× |\n", (double)total_in() / mib);
        uint64_t l = run_lz4(), z1 = run_zstd1(), z3 = run_zstd3();
        printf("| LZ4 | %.0f | %.2f× |\n", l / mib, (double)total_in() / (double)l);
        printf("| zstd -1 | %.0f | %.2f× |\n", z1 / mib, (double)total_in() / (double)z1);
        printf("| zstd -3 | %.0f | %.2f× |\n", z3 / mib, (double)total_in() / (double)z3);
        return 0;
    }
    double plain = (double)nblk * B / (double)records;
    printf("| %llu records, %.1f bytes of records each | bytes per record | fewer bytes than "
           "plain |\n|---|---:|---:|\n", (unsigned long long)records,
           (double)total_in() / (double)records);
    printf("| plain SFL (64 KiB blocks) | %.2f | 1.00× |\n", plain);
    row("LZ4 on the plain blocks", run_lz4(), plain);
    row("zstd -1 on the plain blocks", run_zstd1(), plain);
    row("zstd -3 on the plain blocks", run_zstd3(), plain);
    uint64_t wrote = run_pack();
    row("streamfat pack: blocks written", wrote * B, plain);
    row("streamfat pack: stored bytes", pack_stored, plain);
    run_pack_zstd();
    row("pack, then zstd -1 (candidate)", pack_zstd, plain);
    run_pack_unpack();
    return 0;
}
