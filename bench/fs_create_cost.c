/* fs_create_cost FS NAMES N [CACHE_KIB]
 *
 * Issue 18's create workload: on a fresh 4 GiB volume in RAM (FS fat32: 32 KiB clusters,
 * two FATs; exfat: 32 KiB clusters), create N files in the root, each written with 4 KiB
 * and closed. NAMES: "83" (F0000001.BIN ...) or "lfn" (log-file-number-000001.bin ...).
 * Meant to run under callgrind (bench/fs_create_cost.sh): instrumentation is switched on
 * (valgrind client requests, when <valgrind/callgrind.h> exists) for the last 100 files
 * only, and --toggle-collect on sf_open/sf_write/sf_close keeps the count to those calls.
 * The device is bench/sparse_ram.h's, whose callbacks ram_rd / ram_wr do all of its work,
 * so that their cost can be taken off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "streamfat/sf.h"
#include "sparse_ram.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#define DEV_BYTES (4ull << 30)

static struct sparse_ram dev;
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
    sparse_ram_init(&dev, DEV_BYTES);

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
    int err = sf_mkfs(&dev.bd, &o, &why);
    if (err) {
        fprintf(stderr, "mkfs: %s\n", why);
        die("mkfs", err);
    }
    struct sf_vol_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &dev.bd;
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
