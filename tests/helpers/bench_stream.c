/* Benchmark helper for bench/run.sh: the streaming write path without a source file.
 *
 *   bench_stream write IMG SIZE BS QD [--no-direct] [--no-uring]
 *       Streams SIZE bytes of a pattern into /bench.bin on the volume in IMG the way
 *       `streamfat put` does (O_DIRECT file device, sf_aiobd, QD requests of BS bytes in
 *       flight from aligned buffers, one checkpoint at close), after deleting an earlier
 *       bench.bin (untimed). Prints "bytes=N secs=S mibps=R backend=B direct=0|1 data_requests=N".
 *   bench_stream trace IMG SIZE BS CKPT
 *       The same data through sf_stream_write (synchronous, buffered file device) under a
 *       counting device that sorts every request by region (boot, FAT, heap) and counts
 *       metadata reads and non-sequential jumps while streaming; a checkpoint every CKPT
 *       bytes. Prints key=value lines.
 *   bench_stream cpu FS SIZE WSIZE
 *       For callgrind: mkfs FS (exfat, fat32) on a RAM device, then SIZE bytes written
 *       through sf_stream_write in WSIZE pieces; the pattern buffer is filled once before.
 *
 * The pattern: every 4 KiB of the file starts with its own offset (so misplaced blocks show),
 * the rest is a fixed byte. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "streamfat/sf.h"
#include "streamfat/aiobd.h"
#include "streamfat/filebd.h"
#include "streamfat/stream.h"
#include "fs/fs.h"

#define CACHE_BYTES (2u << 20)
#define WORK_BYTES 65536u

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xalloc(size_t align, size_t n)
{
    void *p = aligned_alloc(align, (n + align - 1) / align * align);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memset(p, 0x5a, n);
    return p;
}

static void stamp(uint8_t *b, size_t n, uint64_t off)
{
    for (size_t i = 0; i + 8 <= n; i += 4096) {
        uint64_t o = off + i;
        memcpy(b + i, &o, 8);
    }
}

static uint64_t num(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    switch (*end) {
    case 'K': v <<= 10; break;
    case 'M': v <<= 20; break;
    case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static int die(const char *what, int err)
{
    fprintf(stderr, "bench_stream: %s: %s\n", what, sf_strerror(err));
    exit(1);
}

/* Mount bd (sf_probe already settled the sector size of the file below it). */
static void mount_on(struct sf_vol *v, struct sf_bdev *bd)
{
    struct sf_vol_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = bd;
    cfg.buf = xalloc(4096, CACHE_BYTES);
    cfg.buf_size = CACHE_BYTES;
    int err = sf_mount(v, &cfg);
    if (err)
        die("mount", err);
}

static void open_file(struct sf_filebd *f, const char *path, int direct)
{
    uint8_t type = 0;
    uint32_t ss = 0;
    void *probe = xalloc(4096, 4096);
    int err = sf_filebd_open(f, path, direct ? SF_FILEBD_DIRECT : 0, 0, 0);
    if (err)
        die(path, err);
    if ((err = sf_probe(&f->bd, 0, probe, &type, &ss)) || type == SF_FS_NONE)
        die("probe", err ? err : SF_EINVAL);
    free(probe);
    if (ss != f->bd.sector_size && (err = sf_filebd_set_sector_size(f, ss)))
        die("sector size", err);
#ifdef STATX_DIOALIGN
    /* As the CLI does (cli/common/target.c): the kernel's real O_DIRECT memory alignment. */
    struct statx sx;
    if (f->direct && statx(f->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_mem_align &&
        sx.stx_dio_mem_align <= f->bd.sector_size && sx.stx_dio_mem_align < f->bd.mem_align)
        f->bd.mem_align = sx.stx_dio_mem_align < 64 ? 64 : sx.stx_dio_mem_align;
#endif
}

static int cmd_write(int argc, char **argv)
{
    struct sf_filebd f;
    struct sf_aiobd a;
    struct sf_vol v;
    struct sf_stream_cfg cfg;
    static struct sf_stream s;
    int direct = 1, uring = 1, err;
    if (argc < 6)
        return 2;
    const char *img = argv[2];
    uint64_t size = num(argv[3]);
    uint32_t bs = (uint32_t)num(argv[4]), qd = (uint32_t)num(argv[5]);
    for (int i = 6; i < argc; i++) {
        if (!strcmp(argv[i], "--no-direct"))
            direct = 0;
        else if (!strcmp(argv[i], "--no-uring"))
            uring = 0;
    }
    if (!bs || size % bs || !qd || qd > SF_STREAM_MAX_QD) {
        fprintf(stderr, "bench_stream: SIZE must be a multiple of BS; QD 1..%u\n",
                SF_STREAM_MAX_QD);
        return 2;
    }
    open_file(&f, img, direct);
    /* qd data requests and a FLUSH, as cli/common/target.c sets it up */
    if ((err = sf_aiobd_init(&a, &f, qd + 1, uring ? 0 : SF_AIOBD_NO_URING)))
        die("aiobd", err);
    mount_on(&v, &a.bd);
    uint8_t **bufs = calloc(qd, sizeof *bufs);
    for (uint32_t i = 0; i < qd; i++)
        bufs[i] = xalloc(4096, bs);
    memset(&cfg, 0, sizeof cfg);
    cfg.queue_depth = qd;
    /* Deleting the previous round's file (on FAT32: freeing 4 GiB of chain, sector by sector)
     * is not the stream's work: do it before the clock starts. */
    if ((err = sf_unlink(&v, "bench.bin")) && err != SF_ENOENT)
        die("unlink", err);
    double t0 = mono();
    if ((err = sf_stream_open(&v, &s, "bench.bin", &cfg, xalloc(4096, WORK_BYTES), WORK_BYTES)))
        die("stream open", err);
    uint64_t off = 0;
    uint32_t next = 0;
    void *done[SF_STREAM_MAX_QD];
    uint8_t *freeb[SF_STREAM_MAX_QD];
    uint32_t nfree = qd;
    for (uint32_t i = 0; i < qd; i++)
        freeb[i] = bufs[i];
    (void)next;
    while (off < size || sf_stream_in_flight(&s)) {
        while (off < size && nfree) {
            uint8_t *b = freeb[--nfree];
            stamp(b, bs, off);
            if ((err = sf_stream_submit(&s, b, bs, b)))
                die("submit", err);
            off += bs;
        }
        int k = sf_stream_poll(&s, done, SF_STREAM_MAX_QD, 1);
        if (k < 0)
            die("poll", k);
        for (int i = 0; i < k; i++)
            freeb[nfree++] = done[i];
    }
    const struct sf_stream_stats st = *sf_stream_stats(&s);
    if ((err = sf_stream_close(&s)))
        die("close", err);
    double secs = mono() - t0;
    if ((err = sf_unmount(&v)))
        die("unmount", err);
    printf("bytes=%" PRIu64 " secs=%.3f mibps=%.1f backend=%s direct=%d data_requests=%" PRIu64
           "\n", size, secs, (double)size / (1 << 20) / secs, a.backend, f.direct,
           st.data_requests);
    sf_aiobd_close(&a);
    sf_filebd_close(&f);
    return 0;
}

/* ---- counting device ---- */

struct cbd {
    struct sf_bdev bd;
    struct sf_bdev *lower;
    uint64_t fat_lo, fat_hi, heap_lo;     /* LBAs on the device */
    uint64_t reads, fat_reads, writes, sectors, flushes, jumps, next;
    uint64_t fat_writes, fat_sectors, boot_writes, heap_writes, heap_sectors;
};

static int c_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t n)
{
    struct cbd *c = (struct cbd *)bd;
    c->reads++;
    if (lba < c->fat_hi && lba + n > c->fat_lo)
        c->fat_reads++;
    return sf_bdev_read(c->lower, lba, buf, n);
}

static int c_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t n)
{
    struct cbd *c = (struct cbd *)bd;
    c->writes++;
    c->sectors += n;
    if (lba != c->next)
        c->jumps++;
    c->next = lba + n;
    if (lba >= c->heap_lo) {
        c->heap_writes++;
        c->heap_sectors += n;
    } else if (lba >= c->fat_lo && lba < c->fat_hi) {
        c->fat_writes++;
        c->fat_sectors += n;
    } else {
        c->boot_writes++;
    }
    return sf_bdev_write(c->lower, lba, buf, n);
}

static int c_flush(struct sf_bdev *bd)
{
    struct cbd *c = (struct cbd *)bd;
    c->flushes++;
    return sf_bdev_flush(c->lower);
}

static void c_zero(struct cbd *c)
{
    c->reads = c->fat_reads = c->writes = c->sectors = c->flushes = c->jumps = 0;
    c->fat_writes = c->fat_sectors = c->boot_writes = c->heap_writes = c->heap_sectors = 0;
}

static int cmd_trace(int argc, char **argv)
{
    struct sf_filebd f;
    struct cbd c;
    struct sf_vol v;
    struct sf_stream_cfg cfg;
    static struct sf_stream s;
    int err;
    if (argc < 6)
        return 2;
    uint64_t size = num(argv[3]), ckpt = num(argv[5]);
    uint32_t bs = (uint32_t)num(argv[4]);
    open_file(&f, argv[2], 0);
    memset(&c, 0, sizeof c);
    c.bd = f.bd;
    c.bd.read = c_read;
    c.bd.write = c_write;
    c.bd.flush = c_flush;
    c.bd.trim = NULL;
    c.bd.submit = NULL;
    c.bd.poll = NULL;
    c.lower = &f.bd;
    c.next = UINT64_MAX;
    mount_on(&v, &c.bd);
    uint64_t base = v.info.volume_offset / v.info.sector_size;
    c.fat_lo = base + v.fat_offset;
    c.fat_hi = c.fat_lo + (uint64_t)v.fat_length * v.num_fats;
    c.heap_lo = base + v.heap_offset;
    memset(&cfg, 0, sizeof cfg);
    cfg.checkpoint_bytes = ckpt;
    cfg.flags = SF_STREAM_REPLACE;
    uint8_t *b = xalloc(4096, bs);
    if ((err = sf_stream_open(&v, &s, "trace.bin", &cfg, xalloc(4096, WORK_BYTES), WORK_BYTES)))
        die("stream open", err);
    c_zero(&c);                 /* count only what streaming does (open and close apart) */
    for (uint64_t off = 0; off < size; off += bs) {
        uint32_t n = size - off < bs ? (uint32_t)(size - off) : bs;
        stamp(b, n, off);
        sf_ssize_t w = sf_stream_write(&s, b, n);
        if (w < 0)
            die("write", (int)w);
    }
    struct cbd during = c;
    const struct sf_stream_stats st = *sf_stream_stats(&s);
    if ((err = sf_stream_close(&s)))
        die("close", err);
    double gib = (double)size / (1ull << 30);
    uint64_t meta_w = during.writes - st.data_requests;
    uint64_t data_sectors = size / v.info.sector_size;
    printf("fs=%s cluster=%u bytes=%" PRIu64 " bs=%u checkpoint_bytes=%" PRIu64 "\n",
           v.fs_type == SF_FS_EXFAT ? "exFAT" : v.fs_type == SF_FS_FAT32 ? "FAT32" : "FAT16",
           v.info.cluster_size, size, bs, ckpt);
    printf("data_requests=%" PRIu64 " checkpoints=%" PRIu64 " extents=%" PRIu64 "\n",
           st.data_requests, st.checkpoints, st.extents);
    printf("writes=%" PRIu64 " metadata_writes=%" PRIu64 " metadata_sectors=%" PRIu64
           " fat_writes=%" PRIu64 " fat_sectors=%" PRIu64 " boot_region_writes=%" PRIu64 "\n",
           during.writes, meta_w, during.sectors > data_sectors ? during.sectors - data_sectors : 0,
           during.fat_writes, during.fat_sectors, during.boot_writes);
    printf("reads=%" PRIu64 " fat_reads=%" PRIu64 " flushes=%" PRIu64 " jumps=%" PRIu64 "\n",
           during.reads, during.fat_reads, during.flushes, during.jumps);
    printf("per_gib: data_requests=%.1f metadata_writes=%.1f fat_writes=%.1f fat_reads=%.1f "
           "reads=%.1f jumps=%.1f\n", st.data_requests / gib, meta_w / gib,
           during.fat_writes / gib, during.fat_reads / gib, during.reads / gib, during.jumps / gib);
    /* Everything but the FAT: directory entry, and on exFAT the bitmap (one per extent). */
    printf("per_checkpoint: non_fat_metadata_writes=%.2f flushes=%.2f\n",
           st.checkpoints ? (double)(meta_w - during.fat_writes) / (double)st.checkpoints : 0.0,
           st.checkpoints ? (double)during.flushes / (double)st.checkpoints : 0.0);
    printf("per_extent: fat_writes=%.2f fat_sectors=%.1f\n",
           st.extents ? (double)during.fat_writes / (double)st.extents : 0.0,
           st.extents ? (double)during.fat_sectors / (double)st.extents : 0.0);
    if ((err = sf_unmount(&v)))
        die("unmount", err);
    sf_filebd_close(&f);
    return 0;
}

/* ---- CPU cost on a RAM device ---- */

static int cmd_cpu(int argc, char **argv)
{
    struct sf_rambd r;
    struct sf_vol v;
    struct sf_mkfs_opts o;
    static struct sf_stream s;
    const char *why = "";
    int err;
    if (argc < 5)
        return 2;
    uint64_t size = num(argv[3]);
    uint32_t ws = (uint32_t)num(argv[4]);
    uint64_t dev = size * 2 + (64ull << 20);
    if (dev < (320ull << 20))
        dev = 320ull << 20;       /* FAT32 with 4 KiB clusters needs 65,525 of them */
    uint8_t *mem = xalloc(4096, dev);
    if ((err = sf_rambd_init(&r, mem, 512, dev / 512)))
        die("ram", err);
    memset(&o, 0, sizeof o);
    o.fs_type = !strcmp(argv[2], "fat32") ? SF_FS_FAT32 : SF_FS_EXFAT;
    o.cluster_size = o.fs_type == SF_FS_FAT32 ? 4096 : 32768;
    o.serial = 0x12345678;
    o.buf = xalloc(4096, 1u << 20);
    o.buf_size = 1u << 20;
    if ((err = sf_mkfs(&r.bd, &o, &why)))
        fprintf(stderr, "mkfs: %s\n", why), die("mkfs", err);
    mount_on(&v, &r.bd);
    uint8_t *b = xalloc(4096, ws);
    stamp(b, ws, 0);
    if ((err = sf_stream_open(&v, &s, "cpu.bin", NULL, xalloc(4096, WORK_BYTES), WORK_BYTES)))
        die("stream open", err);
    for (uint64_t off = 0; off < size; off += ws) {
        sf_ssize_t w = sf_stream_write(&s, b, ws);
        if (w < 0)
            die("write", (int)w);
    }
    if ((err = sf_stream_close(&s)))
        die("close", err);
    if ((err = sf_unmount(&v)))
        die("unmount", err);
    printf("fs=%s bytes=%" PRIu64 " wsize=%u\n", argv[2], size, ws);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "write"))
        return cmd_write(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "trace"))
        return cmd_trace(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "cpu"))
        return cmd_cpu(argc, argv);
    fprintf(stderr, "usage: bench_stream write IMG SIZE BS QD [--no-direct] [--no-uring]\n"
                    "       bench_stream trace IMG SIZE BS CKPT\n"
                    "       bench_stream cpu exfat|fat32 SIZE WSIZE\n");
    return 2;
}
