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
 * The device is a 4 GiB volume in sparse memory: 64 KiB pages materialised when first
 * written with anything but zeros (mkfs's zeroing of the FATs costs nothing), unwritten pages
 * read as zeros. Its copying is in dev_copy / dev_zero (never inlined) called only from the
 * device callbacks ram_rd / ram_wr, so that callgrind can take the device's cost out by
 * function: fs_cost.sh subtracts the inclusive cost of ram_rd and ram_wr.
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

#define SS 512u
#define PAGE (64u << 10)
#define VOL_BYTES (4ull << 30)
#define NPAGES (VOL_BYTES / PAGE)
#define WORK_BYTES (64u << 10)

struct sparse {
    struct sf_bdev bd;
    uint8_t **page;
    uint64_t reads, writes, rsec, wsec;
};

static __attribute__((noinline)) void dev_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
    __asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void dev_zero(void *dst, size_t n)
{
    memset(dst, 0, n);
    __asm__ volatile("" ::: "memory");
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static __attribute__((noinline)) int ram_rd(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sparse *s = (struct sparse *)bd;
    uint64_t off = lba * SS, n = (uint64_t)count * SS;
    uint8_t *out = buf;
    s->reads++;
    s->rsec += count;
    while (n) {
        uint64_t p = off / PAGE, in = off % PAGE, k = PAGE - in < n ? PAGE - in : n;
        if (s->page[p])
            dev_copy(out, s->page[p] + in, (size_t)k);
        else
            dev_zero(out, (size_t)k);
        out += k;
        off += k;
        n -= k;
    }
    return 0;
}

static __attribute__((noinline)) int ram_wr(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sparse *s = (struct sparse *)bd;
    uint64_t off = lba * SS, n = (uint64_t)count * SS;
    const uint8_t *in8 = buf;
    s->writes++;
    s->wsec += count;
    while (n) {
        uint64_t p = off / PAGE, in = off % PAGE, k = PAGE - in < n ? PAGE - in : n;
        if (!s->page[p] && !all_zero(in8, (size_t)k)) {
            if (!(s->page[p] = calloc(1, PAGE))) {
                fprintf(stderr, "fs_cost: out of memory\n");
                exit(1);
            }
        }
        if (s->page[p])
            dev_copy(s->page[p] + in, in8, (size_t)k);
        in8 += k;
        off += k;
        n -= k;
    }
    return 0;
}

static int ram_fl(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static uint64_t num(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    switch (*end) {
    case 'K': case 'k': v <<= 10; break;
    case 'M': case 'm': v <<= 20; break;
    case 'G': case 'g': v <<= 30; break;
    default: break;
    }
    return v;
}

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
    static struct sparse dev;
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
    uint32_t cs = (uint32_t)num(argv[2]);
    int stream = !strcmp(argv[3], "stream");
    size_t ws = (size_t)num(argv[4]);
    uint64_t total = num(argv[5]);
    uint32_t cache = argc > 6 ? (uint32_t)num(argv[6]) : 32u << 10;

    dev.page = calloc(NPAGES, sizeof *dev.page);
    dev.bd.sector_size = SS;
    dev.bd.sector_count = VOL_BYTES / SS;
    dev.bd.align_sectors = 1;
    dev.bd.mem_align = 1;
    dev.bd.read = ram_rd;
    dev.bd.write = ram_wr;
    dev.bd.flush = ram_fl;

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
