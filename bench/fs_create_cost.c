/* fs_create_cost FS NAMES N [CACHE_KIB]
 *
 * Issue 18's create workload: on a fresh 4 GiB volume in RAM (FS fat32: 32 KiB clusters,
 * two FATs; exfat: 32 KiB clusters), create N files in the root, each written with 4 KiB
 * and closed. NAMES: "83" (F0000001.BIN ...) or "lfn" (log-file-number-000001.bin ...).
 * Meant to run under callgrind (bench/fs_create_cost.sh): instrumentation is switched on
 * (valgrind client requests, when <valgrind/callgrind.h> exists) for the last 100 files
 * only, and --toggle-collect on sf_open/sf_write/sf_close keeps the count to those calls.
 * The device is sparse (64 KiB chunks materialised on first write, zeros before) and its
 * callbacks, dev_read/dev_write, are not inlined so that their cost can be taken off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define SS 512u
#define DEV_BYTES (4ull << 30)
#define CHUNK (64u * 1024)
#define NCHUNK (DEV_BYTES / CHUNK)

static uint8_t *chunks[NCHUNK];
static const uint8_t zeros[CHUNK];

static __attribute__((noinline)) int dev_read(struct sf_bdev *bd, uint64_t lba, void *buf,
                                              uint32_t count)
{
    uint8_t *out = buf;
    (void)bd;
    for (uint64_t byte = lba * SS, end = byte + (uint64_t)count * SS; byte < end;) {
        uint64_t c = byte / CHUNK, o = byte % CHUNK, n = CHUNK - o;
        if (n > end - byte)
            n = end - byte;
        memcpy(out, chunks[c] ? chunks[c] + o : zeros + o, n);
        out += n;
        byte += n;
    }
    return 0;
}

static __attribute__((noinline)) int dev_write(struct sf_bdev *bd, uint64_t lba,
                                               const void *buf, uint32_t count)
{
    const uint8_t *in = buf;
    (void)bd;
    for (uint64_t byte = lba * SS, end = byte + (uint64_t)count * SS; byte < end;) {
        uint64_t c = byte / CHUNK, o = byte % CHUNK, n = CHUNK - o;
        if (n > end - byte)
            n = end - byte;
        if (!chunks[c] && !(chunks[c] = calloc(1, CHUNK))) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        memcpy(chunks[c] + o, in, n);
        in += n;
        byte += n;
    }
    return 0;
}

static int dev_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static struct sf_bdev dev;
static struct sf_vol vol;
static uint8_t data[4096];

static void die(const char *what, int err)
{
    fprintf(stderr, "fs_create_cost: %s: %s\n", what, sf_strerror(err));
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fs_create_cost fat32|exfat 83|lfn N [CACHE_KIB]\n");
        return 2;
    }
    int exfat = !strcmp(argv[1], "exfat"), lfn = !strcmp(argv[2], "lfn");
    long n = strtol(argv[3], NULL, 10);
    uint32_t cache = (uint32_t)(argc > 4 ? strtoul(argv[4], NULL, 10) : 32) * 1024;
    dev.sector_size = SS;
    dev.sector_count = DEV_BYTES / SS;
    dev.align_sectors = 1;
    dev.mem_align = 1;
    dev.read = dev_read;
    dev.write = dev_write;
    dev.flush = dev_flush;

    static uint8_t work[1 << 20];
    struct sf_mkfs_opts o;
    memset(&o, 0, sizeof o);
    o.fs_type = exfat ? SF_FS_EXFAT : SF_FS_FAT32;
    o.cluster_size = 32768;
    o.fats = 2;
    o.serial = 0x12345678;
    o.buf = work;
    o.buf_size = sizeof work;
    const char *why = "";
    int err = sf_mkfs(&dev, &o, &why);
    if (err) {
        fprintf(stderr, "mkfs: %s\n", why);
        die("mkfs", err);
    }
    struct sf_vol_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &dev;
    cfg.buf = aligned_alloc(4096, cache);
    cfg.buf_size = cache;
    if ((err = sf_mount(&vol, &cfg)))
        die("mount", err);
    memset(data, 'x', sizeof data);
    long from = n > 100 ? n - 100 : 0;
    for (long i = 0; i < n; i++) {
        char path[64];
        struct sf_file f;
        if (lfn)
            snprintf(path, sizeof path, "/log-file-number-%06ld.bin", i + 1);
        else
            snprintf(path, sizeof path, "/F%07ld.BIN", i + 1);
        if (i == from)
            CALLGRIND_START_INSTRUMENTATION;
        if ((err = sf_open(&vol, &f, path, SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL)))
            die(path, err);
        if (sf_write(&f, data, sizeof data) != (sf_ssize_t)sizeof data)
            die("write", SF_EIO);
        if ((err = sf_close(&f)))
            die("close", err);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    if ((err = sf_unmount(&vol)))
        die("unmount", err);
    printf("%ld files, measured %ld\n", n, n - from);
    return 0;
}
