/* The logger on a failing device (sf_faultbd over a RAM exFAT / FAT32 volume):
 *  - EIO on a data write and on a metadata write (the directory sector a checkpoint
 *    rewrites): the writer reports the error (sf_log_service < 0, stats.last_error), the
 *    producers are never blocked and their records are counted as drops from then on, and
 *    the volume is consistent: sf_check repairs it (verdict 0 or 1) and then calls it clean;
 *  - read errors at mount: sf_mount fails with SF_EIO, nothing is written;
 *  - ENOSPC mid-file (non-cyclic, volume filled): the writer reports SF_ENOSPC, records
 *    still counted, the file holds every record up to its last checkpoint, checker clean
 *    after repair.
 * Which writes are data and which metadata is learned from an unfaulted reference run: data
 * blocks go out as multi-sector writes, directory entries as single sectors. */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/check.h"

#define SS 512u
#define BLOCK 4096u
#define DEV_BYTES (40u << 20)

static uint8_t *disk, *pristine;
static struct sf_rambd ram;
static struct sf_faultbd fbd;
static uint8_t cache[128 * 1024] __attribute__((aligned(64)));
static uint8_t ring[16 * BLOCK] __attribute__((aligned(4096)));
static uint8_t work[64 * 1024] __attribute__((aligned(4096)));
static struct sf_log lg;
static uint64_t now_ns;
static uint64_t arm_lba = UINT64_MAX;   /* eio_write_lba once the log is open */
static uint64_t clk(void *c) { (void)c; return now_ns; }

/* A recording device under the fault device: every write's first LBA and length. */
struct rec_bd { struct sf_bdev bd; struct sf_bdev *lower; };
static struct rec_bd rbd;
static uint64_t wr_lba[100000];
static uint32_t wr_cnt[100000];
static size_t nwr;
static int rec_read(struct sf_bdev *b, uint64_t l, void *p, uint32_t c)
{ return sf_bdev_read(((struct rec_bd *)b)->lower, l, p, c); }
static int rec_write(struct sf_bdev *b, uint64_t l, const void *p, uint32_t c)
{
    if (nwr < 100000) { wr_lba[nwr] = l; wr_cnt[nwr] = c; nwr++; }
    return sf_bdev_write(((struct rec_bd *)b)->lower, l, p, c);
}
static int rec_flush(struct sf_bdev *b) { return sf_bdev_flush(((struct rec_bd *)b)->lower); }

static void format(uint8_t type)
{
    static uint8_t mbuf[1 << 20];
    if (!disk) {
        disk = calloc(1, DEV_BYTES);
        pristine = malloc(DEV_BYTES);
        REQUIRE(disk && pristine);
    }
    memset(disk, 0, DEV_BYTES);
    REQUIRE(sf_rambd_init(&ram, disk, SS, DEV_BYTES / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = type == SF_FS_FAT32 ? 512 : 4096,
                              .align = 64 * 1024, .serial = 3, .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    memcpy(pristine, disk, DEV_BYTES);
    rbd.bd = ram.bd;
    rbd.bd.read = rec_read;
    rbd.bd.write = rec_write;
    rbd.bd.flush = rec_flush;
    rbd.bd.trim = NULL;
    rbd.lower = &ram.bd;
}

static void reset(void)
{
    memcpy(disk, pristine, DEV_BYTES);
    nwr = 0;
    REQUIRE(sf_faultbd_init(&fbd, &rbd.bd, NULL, 0) == 0);
}

static int mount(struct sf_vol *v)
{
    struct sf_vol_cfg cfg = { .bd = &fbd.bd, .buf = cache, .buf_size = sizeof cache };
    return sf_mount(v, &cfg);
}

static int check(uint32_t flags)
{
    static uint8_t *wk;
    static size_t wks;
    sf_ssize_t need = sf_check_work_size(&ram.bd);
    REQUIRE(need > 0);
    if ((size_t)need > wks) {
        free(wk);
        wk = malloc((size_t)need);
        wks = (size_t)need;
        REQUIRE(wk);
    }
    struct sf_check_opts o = { .flags = flags, .work = wk, .work_size = wks };
    struct sf_check_result r;
    return sf_check(&ram.bd, &o, &r);
}

/* Log `frames` frames in steps of 50 with a checkpoint every 8 KiB. Returns the first
 * service error (0 if none); *drops the drops counted, *durable the frames a completed
 * checkpoint covered (all appended, handed over, durable). */
static int run_log(struct sf_vol *v, uint32_t frames, uint64_t *drops, uint64_t *durable)
{
    struct sf_log_cfg c = {
        .vol = v, .ring = ring, .ring_size = sizeof ring, .block_size = BLOCK,
        .checkpoint_bytes = 8192, .clock = clk, .session_id = 9,
        .work = work, .work_size = sizeof work,
    };
    int first_err = 0;
    struct sf_log_stats st;
    *durable = 0;
    int oe = sf_log_open(&lg, &c);
    if (oe)
        fprintf(stderr, "sf_log_open: %s\n", sf_strerror(oe));
    REQUIRE(oe == 0);
    fbd.eio_write_lba = arm_lba;               /* the fault comes after open */
    for (uint32_t k = 0; k < frames; k++) {
        uint8_t d[8];
        for (int i = 0; i < 8; i++)
            d[i] = (uint8_t)((uint64_t)k >> (8 * i));
        int e = sf_log_append_can(&lg, 0, now_ns, 0x100 + k % 16, 0, d, 8);
        CHECK(e == 0 || e == SF_EDROPPED);      /* never blocks, never anything else */
        if (k % 50 == 49) {
            now_ns += 1000000;
            int r;
            while ((r = sf_log_service(&lg)) > 0)
                ;
            if (r < 0 && !first_err)
                first_err = r;
            sf_log_get_stats(&lg, &st);
            if (!first_err && st.bytes_durable == st.bytes_written &&
                st.records_written == k + 1)
                *durable = k + 1;
        }
    }
    (void)sf_log_close(&lg);
    sf_log_get_stats(&lg, &st);
    *drops = st.records_dropped;
    if (!first_err)
        first_err = st.last_error;
    return first_err;
}

/* The frames of LOG00001.SFL, in order from 0: how many. */
static uint64_t frames_in_file(void)
{
    struct sf_vol v;
    struct sf_vol_cfg cfg = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&v, &cfg) == 0);
    struct sf_file f;
    uint64_t n = 0;
    if (sf_open(&v, &f, "LOG00001.SFL", SF_O_RDONLY) == 0) {
        static uint8_t b[BLOCK];
        struct sf_block_info bi;
        uint64_t size = sf_fsize(&f);
        for (uint64_t off = 0; off + BLOCK <= size; off += BLOCK) {
            REQUIRE(sf_read(&f, b, BLOCK) == BLOCK);
            if (sf_block_check(b, BLOCK, &bi) || bi.kind != SF_BLOCK_RECORDS)
                continue;
            uint32_t o = 0;
            struct sf_rec r;
            while (sf_rec_next(b, &bi, &o, &r) == 1) {
                struct sf_can cf;
                if (r.type != SF_REC_CAN || sf_rec_get_can(&r, &cf))
                    continue;
                uint64_t k = 0;
                for (int i = 7; i >= 0; i--)
                    k = k << 8 | cf.data[i];
                CHECK_EQ(k, n);
                n++;
            }
        }
        sf_close(&f);
    }
    sf_unmount(&v);
    return n;
}

static void consistent_after(const char *what)
{
    int v = check(0);
    if (!(v == 0 || v == 1))
        fprintf(stderr, "%s: checker verdict %d before repair\n", what, v);
    CHECK(v == 0 || v == 1);
    v = check(SF_CHECK_REPAIR);
    CHECK(v == 0 || v == 1);
    CHECK_EQ(check(0), 0);
}

static void eio_case(int metadata)
{
    struct sf_vol v;
    uint64_t drops, durable;
    const char *what = metadata ? "EIO on a metadata write" : "EIO on a data write";

    /* Reference: where the writes go. */
    reset();
    REQUIRE(mount(&v) == 0);
    CHECK_EQ(run_log(&v, 20000, &drops, &durable), 0);
    CHECK_EQ(drops, 0);
    REQUIRE(sf_unmount(&v) == 0);
    uint64_t target = UINT64_MAX;
    size_t data_seen = 0;
    for (size_t i = 0; i < nwr && target == UINT64_MAX; i++) {
        if (wr_cnt[i] >= BLOCK / SS && ++data_seen == 10 && !metadata)
            target = wr_lba[i];
        else if (metadata && data_seen >= 10 && wr_cnt[i] == 1)
            target = wr_lba[i];                /* a checkpoint's entry rewrite */
    }
    REQUIRE(target != UINT64_MAX);

    reset();
    REQUIRE(mount(&v) == 0);
    arm_lba = target;
    int err = run_log(&v, 20000, &drops, &durable);
    arm_lba = UINT64_MAX;
    CHECK_EQ(err, SF_EIO);                      /* reported */
    CHECK(drops > 0);                           /* and counted while the writer is failed */
    fbd.eio_write_lba = UINT64_MAX;
    (void)sf_unmount(&v);
    consistent_after(what);
    uint64_t got = frames_in_file();
    if (got < durable)
        fprintf(stderr, "%s: %llu frames, %llu were durable\n", what,
                (unsigned long long)got, (unsigned long long)durable);
    CHECK(got >= durable);
}

static void mount_read_error(void)
{
    struct sf_vol v;
    reset();
    for (uint64_t lba = 0; lba < 64; lba++) {
        memcpy(disk, pristine, 64 * SS);
        REQUIRE(sf_faultbd_init(&fbd, &rbd.bd, NULL, 0) == 0);
        fbd.eio_read_lba = lba;
        nwr = 0;
        int e = mount(&v);
        if (e == 0) {
            sf_unmount(&v);
            continue;                           /* that sector is not read at mount */
        }
        CHECK(e == SF_EIO);
        CHECK_EQ(nwr, 0);                       /* nothing written */
    }
    CHECK_EQ(check(0), 0);
}

static void enospc_case(void)
{
    struct sf_vol v;
    struct sf_file f;
    uint64_t drops, durable;
    reset();
    REQUIRE(mount(&v) == 0);
    /* Fill all but ~600 KiB. */
    struct sf_vol_info vi;
    sf_vol_info(&v, &vi);
    uint64_t freeb = (uint64_t)sf_vol_free_clusters(&v) * vi.cluster_size;
    REQUIRE(sf_open(&v, &f, "FILL.BIN", SF_O_WRONLY | SF_O_CREAT) == 0);
    static uint8_t z[1 << 20];
    for (uint64_t left = freeb - 600 * 1024; left;) {
        uint64_t n = left < sizeof z ? left : sizeof z;
        REQUIRE(sf_write(&f, z, n) == (sf_ssize_t)n);
        left -= n;
    }
    REQUIRE(sf_close(&f) == 0);
    int err = run_log(&v, 60000, &drops, &durable);
    CHECK_EQ(err, SF_ENOSPC);
    CHECK(drops > 0);
    CHECK(durable > 0);
    REQUIRE(sf_unmount(&v) == 0);
    consistent_after("ENOSPC");
    CHECK(frames_in_file() >= durable);
}

int main(void)
{
    static const uint8_t types[] = { SF_FS_EXFAT, SF_FS_FAT32 };
    for (int t = 0; t < 2; t++) {
        format(types[t]);
        eio_case(0);
        eio_case(1);
        mount_read_error();
        enospc_case();
    }
    free(disk);
    free(pristine);
    TEST_END();
}
