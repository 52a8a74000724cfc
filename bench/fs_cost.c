/* fs_cost: the plain file API's cost on a RAM device (issue 18), for bench/fs_cost.sh.
 *
 *   fs_cost FS CLUSTER API WSIZE TOTAL [CACHE]
 *     FS       exfat | fat32 (FAT32 with two FATs)
 *     CLUSTER  cluster size (4K, 32K, 1M ...)
 *     API      file   sf_open / sf_write (WSIZE at a time) / sf_close
 *              stream sf_stream_open / sf_stream_write / sf_stream_close
 *     WSIZE    bytes per write call; TOTAL bytes in all (into one new file)
 *     CACHE    metadata cache (cfg.buf) bytes, default 32K
 *
 * The device is a 4 GiB volume in sparse memory (bench/sparse_ram.h), whose callbacks
 * ram_rd / ram_wr do all of its work: fs_cost.sh subtracts their inclusive cost.
 *
 * Prints the device requests made between the open and the close (inclusive):
 *   reads=R writes=W read_sectors=.. written_sectors=.. calls=N bytes=TOTAL */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"
#include "streamfat/bdev.h"
#include "streamfat/vol.h"
#include "streamfat/stream.h"
#include "sparse_ram.h"

#define VOL_BYTES (4ull << 30)
#define WORK_BYTES (64u << 10)

static void die(const char *what, int err)
{
    fprintf(stderr, "fs_cost: %s: %s\n", what, sf_strerror(err));
    exit(1);
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
    if (!p)
        die("alloc", SF_ENOMEM);
    memset(p, 0x5a, n);
    return p;
}

int main(int argc, char **argv)
{
    static struct sparse_ram dev;
    static struct sf_vol v;
    static struct sf_file f;
    static struct sf_stream s;
    struct sf_mkfs_opts o;
    struct sf_vol_cfg cfg;
    const char *why = "";
    int err;

    if (argc < 6) {
        fprintf(stderr, "usage: fs_cost exfat|fat32 CLUSTER file|stream WSIZE TOTAL [CACHE]\n");
        return 2;
    }
    int fat = !strcmp(argv[1], "fat32");
    uint32_t cs = (uint32_t)parse_size(argv[2]);
    int stream = !strcmp(argv[3], "stream");
    size_t ws = (size_t)parse_size(argv[4]);
    uint64_t total = parse_size(argv[5]);
    uint32_t cache = argc > 6 ? (uint32_t)parse_size(argv[6]) : 32u << 10;

    sparse_ram_init(&dev, VOL_BYTES);

    memset(&o, 0, sizeof o);
    o.fs_type = fat ? SF_FS_FAT32 : SF_FS_EXFAT;
    o.cluster_size = cs;
    o.fats = 2;
    o.serial = 0x12345678;
    o.buf_size = 1u << 20;
    o.buf = xalloc(o.buf_size);
    if ((err = sf_mkfs(&dev.bd, &o, &why)))
        fprintf(stderr, "mkfs: %s\n", why), die("mkfs", err);

    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &dev.bd;
    cfg.buf = xalloc(cache);
    cfg.buf_size = cache;
    if ((err = sf_mount(&v, &cfg)))
        die("mount", err);

    uint8_t *b = xalloc(ws);
    for (size_t i = 0; i < ws; i++)
        b[i] = (uint8_t)(i * 7 + 1);
    uint64_t r0 = dev.reads, w0 = dev.writes, rs0 = dev.rsec, ws0 = dev.wsec, calls = 0;
    if (stream) {
        if ((err = sf_stream_open(&v, &s, "COST.BIN", NULL, xalloc(WORK_BYTES), WORK_BYTES)))
            die("stream open", err);
        for (uint64_t off = 0; off < total; off += ws, calls++) {
            sf_ssize_t w = sf_stream_write(&s, b, ws);
            if (w != (sf_ssize_t)ws)
                die("stream write", w < 0 ? (int)w : SF_EIO);
        }
        if ((err = sf_stream_close(&s)))
            die("stream close", err);
    } else {
        if ((err = sf_open(&v, &f, "COST.BIN", SF_O_WRONLY | SF_O_CREAT)))
            die("open", err);
        for (uint64_t off = 0; off < total; off += ws, calls++) {
            sf_ssize_t w = sf_write(&f, b, ws);
            if (w != (sf_ssize_t)ws)
                die("write", w < 0 ? (int)w : SF_EIO);
        }
        if ((err = sf_close(&f)))
            die("close", err);
    }
    printf("reads=%" PRIu64 " writes=%" PRIu64 " read_sectors=%" PRIu64
           " written_sectors=%" PRIu64 " calls=%" PRIu64 " bytes=%" PRIu64 "\n",
           dev.reads - r0, dev.writes - w0, dev.rsec - rs0, dev.wsec - ws0, calls, total);

    /* the file reads back (outside the measured calls) */
    struct sf_stat st;
    if ((err = sf_stat(&v, "COST.BIN", &st)))
        die("stat", err);
    if (st.size != total) {
        fprintf(stderr, "fs_cost: size %" PRIu64 " != %" PRIu64 "\n", st.size, total);
        return 1;
    }
    if ((err = sf_unmount(&v)))
        die("unmount", err);
    return 0;
}
