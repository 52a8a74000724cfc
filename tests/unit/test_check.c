/* The checker through its C API (include/streamfat/check.h) on RAM-backed volumes cut by the
 * fault device at every write of a small log workload.
 *
 * Workload: a framed log (header block + 40 record blocks of 4 KiB, docs/FORMAT.md) through
 * the streaming path with a checkpoint every 8 blocks and 64 KiB allocation steps, then
 * close and unmount. For every write N of it and each unsynced-write policy (keep, drop,
 * tear) the power is cut after write N, and then:
 *   - sf_check with repair returns 0 or 1, never 2 or an error;
 *   - a second sf_check (no repair) returns 0: the repair left nothing behind;
 *   - the file mounts and reads; it is a whole number of blocks, each valid at its place
 *     (the file's id, seq = its number) but those the repair re-attached between valid
 *     blocks and counted as damaged (torn writes: exactly recovered_damaged of them, the
 *     readers skip them), the last one valid; and it holds at least every block its last
 *     completed checkpoint made durable.
 * On exFAT, FAT16 and FAT32. Also: a clean volume is 0 with nothing reported; the work size is
 * enforced (SF_ENOMEM). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/stream.h"
#include "streamfat/rec.h"
#include "streamfat/check.h"

#define SS 512u
#define B 4096u
#define BLOCKS 40u
#define CKPT_EVERY 8u
#define FILE_ID 0x1234ABCDull

static uint8_t *pristine, *disk;    /* the formatted volume; the one the test works on */
static uint64_t sectors;
static struct sf_rambd ram;
static struct sf_faultbd fb;
static uint8_t *ovl;
#define OVL_SIZE (8u << 20)
static uint8_t cache[64 * 1024] __attribute__((aligned(64)));
static uint8_t work[64 * 1024] __attribute__((aligned(64)));
static uint8_t blk[B] __attribute__((aligned(64)));
static uint8_t *chkwork;
static size_t chkwork_size;

/* write counts at which a checkpoint had completed, and its blocks (header included) */
static uint64_t ckpt_writes[BLOCKS + 2];
static uint32_t ckpt_blocks[BLOCKS + 2];
static uint32_t nckpt;

static void make_block(uint64_t seq)
{
    memset(blk, 0, B);
    if (!seq) {
        struct sf_block_info bi = { SF_BLOCK_FILE_HEADER, FILE_ID, 0, 1, SF_FILE_HDR, 0, B };
        struct sf_file_header fh = { 1, SF_CLOCK_REALTIME, 1, 7, 0 };
        sf_file_header_put(blk + SF_BLOCK_HDR, &fh);
        sf_block_seal(blk, &bi);
        return;
    }
    struct sf_block_info bi = { SF_BLOCK_RECORDS, FILE_ID, seq, seq, 0, 0, B };
    for (uint32_t r = 0; r < 10; r++) {
        uint8_t d[8] = { (uint8_t)seq, (uint8_t)r };
        bi.used += sf_rec_put_can(blk + SF_BLOCK_HDR + bi.used, 0, seq * 100 + r, 0x100 + r, 0,
                                  d, 8);
        bi.count++;
    }
    sf_block_seal(blk, &bi);
}

static void mount(struct sf_vol *v)
{
    struct sf_vol_cfg cfg = { .bd = &fb.bd, .buf = cache, .buf_size = sizeof cache };
    int err = sf_mount(v, &cfg);
    if (err)
        fprintf(stderr, "mount: %d %s\n", err, sf_mount_error(v));
    REQUIRE(err == 0);
}

/* The workload; returns 0, or an error once the power is cut. Records checkpoints when
 * `record` is set. */
static int workload(int record)
{
    struct sf_vol v;
    struct sf_stream s;
    struct sf_vol_cfg cfg = { .bd = &fb.bd, .buf = cache, .buf_size = sizeof cache };
    struct sf_stream_cfg sc = { .prealloc_step = 64 * 1024 };
    int err;
    if ((err = sf_mount(&v, &cfg)))
        return err;
    if ((err = sf_stream_open(&v, &s, "/LOG00001.SFL", &sc, work, sizeof work)))
        return err;
    for (uint64_t seq = 0; seq <= BLOCKS; seq++) {
        make_block(seq);
        if (sf_stream_write(&s, blk, B) != B)
            return SF_EIO;
        if (seq % CKPT_EVERY == 0) {
            if ((err = sf_stream_checkpoint(&s)))
                return err;
            if (record) {
                ckpt_writes[nckpt] = fb.c.writes;
                ckpt_blocks[nckpt++] = (uint32_t)seq + 1;
            }
        }
    }
    if ((err = sf_stream_close(&s)))
        return err;
    if (record) {
        ckpt_writes[nckpt] = fb.c.writes;
        ckpt_blocks[nckpt++] = BLOCKS + 1;
    }
    return sf_unmount(&v);
}

/* Blocks made durable by the checkpoints completed before a cut right after write n. */
static uint32_t durable(uint64_t n)
{
    uint32_t b = 0;
    for (uint32_t i = 0; i < nckpt; i++)
        if (ckpt_writes[i] < n)   /* its final flush came before the cut */
            b = ckpt_blocks[i];
    return b;
}

static int check(uint32_t flags, struct sf_check_result *r)
{
    struct sf_check_opts o = { flags, chkwork, chkwork_size, NULL, NULL };
    return sf_check(&fb.bd, &o, r);
}

/* The file after the repair: whole blocks, at least `need` of them; every block valid at its
 * place (seq = its number) but the `damaged` ones the repair re-attached between valid
 * blocks and counted (issue 26 item 3: the readers skip exactly those), the last one valid. */
static void verify_file(uint32_t need, uint64_t cut, int policy, uint64_t damaged)
{
    struct sf_vol v;
    struct sf_file f;
    mount(&v);
    int err = sf_open(&v, &f, "/LOG00001.SFL", SF_O_RDONLY);
    if (err == SF_ENOENT && need == 0) {
        sf_unmount(&v);
        return;
    }
    REQUIRE(err == 0);
    uint64_t size = sf_fsize(&f);
    CHECK_EQ(size % B, 0);
    uint32_t n = (uint32_t)(size / B);
    if (n < need)
        fprintf(stderr, "cut %llu policy %d: %u blocks, %u durable\n",
                (unsigned long long)cut, policy, n, need);
    CHECK(n >= need);
    uint64_t bad = 0;
    int last_ok = 1;
    for (uint32_t i = 0; i < n; i++) {
        static uint8_t rb[B];
        struct sf_block_info bi;
        REQUIRE(sf_read(&f, rb, B) == B);
        last_ok = sf_block_check(rb, B, &bi) == 0 && bi.file_id == FILE_ID && bi.seq == i;
        bad += !last_ok;
    }
    if (bad != damaged || !last_ok)
        fprintf(stderr, "cut %llu policy %d: %llu of %u blocks bad, repair counted %llu%s\n",
                (unsigned long long)cut, policy, (unsigned long long)bad, n,
                (unsigned long long)damaged, last_ok ? "" : ", the last one bad");
    CHECK_EQ(bad, damaged);
    CHECK(last_ok);
    sf_close(&f);
    sf_unmount(&v);
}

static void run(uint8_t type, uint64_t bytes, uint32_t cluster)
{
    static uint8_t mbuf[1 << 20];
    sectors = bytes / SS;
    free(pristine);
    free(disk);
    pristine = calloc(sectors, SS);
    disk = malloc(sectors * SS);
    REQUIRE(pristine && disk);
    REQUIRE(sf_rambd_init(&ram, pristine, SS, sectors) == 0);
    struct sf_mkfs_opts o = { .fs_type = type, .cluster_size = cluster, .serial = 1,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    memcpy(disk, pristine, sectors * SS);
    REQUIRE(sf_rambd_init(&ram, disk, SS, sectors) == 0);
    REQUIRE(sf_faultbd_init(&fb, &ram.bd, ovl, OVL_SIZE) == 0);

    sf_ssize_t need = sf_check_work_size(&fb.bd);
    REQUIRE(need > 0);
    {   /* the caller-memory form: same answer from any alignment, SF_ENOMEM below a sector */
        static uint8_t sbuf[SS + 1];
        CHECK_EQ(sf_check_work_size_buf(&fb.bd, sbuf + 1, SS), need);
        CHECK_EQ(sf_check_work_size_buf(&fb.bd, sbuf, SS - 1), SF_ENOMEM);
        CHECK_EQ(sf_check_work_size_buf(&fb.bd, NULL, SS), SF_EINVAL);
    }
    free(chkwork);
    chkwork_size = (size_t)need;
    chkwork = malloc(chkwork_size);
    REQUIRE(chkwork);
    struct sf_check_result r;
    chkwork_size = (size_t)need - 1;
    CHECK_EQ(check(0, &r), SF_ENOMEM);
    chkwork_size = (size_t)need;
    CHECK_EQ(check(0, &r), 0);            /* freshly formatted: clean */
    CHECK_EQ(r.problems, 0);

    /* A clean run: count the writes, note the checkpoints, and it must check clean. */
    memset(&fb.c, 0, sizeof fb.c);
    nckpt = 0;
    REQUIRE(workload(1) == 0);
    uint64_t total = fb.c.writes;
    CHECK_EQ(check(0, &r), 0);
    CHECK_EQ(r.files, 1);
    verify_file(BLOCKS + 1, 0, -1, 0);

    uint64_t cuts = 0, recovered = 0, repaired_states = 0, damaged_total = 0;
    for (int policy = SF_FAULT_KEEP; policy <= SF_FAULT_TEAR; policy++) {
        for (uint64_t n = 1; n <= total; n++) {
            memcpy(disk, pristine, sectors * SS);
            REQUIRE(sf_faultbd_init(&fb, &ram.bd, ovl, OVL_SIZE) == 0);
            fb.policy = (uint8_t)policy;
            fb.seed = (uint32_t)(n * 7919 + (uint64_t)policy);
            fb.cut_after_writes = n;
            workload(0);
            if (!fb.dead)
                sf_faultbd_cut(&fb);
            sf_faultbd_revive(&fb);
            cuts++;
            int rc = check(SF_CHECK_REPAIR, &r);
            if (rc != 0 && rc != 1)
                fprintf(stderr, "cut %llu policy %d: sf_check --repair returned %d\n",
                        (unsigned long long)n, policy, rc);
            CHECK(rc == 0 || rc == 1);
            repaired_states += rc == 1;
            recovered += r.recovered_blocks;
            damaged_total += r.recovered_damaged;
            uint64_t damaged = r.recovered_damaged;
            rc = check(0, &r);
            if (rc != 0)
                fprintf(stderr, "cut %llu policy %d: not clean after repair (%d, %u problems)\n",
                        (unsigned long long)n, policy, rc, r.problems);
            CHECK_EQ(rc, 0);
            verify_file(durable(n), n, policy, damaged);
        }
    }
    printf("fs %u: %llu writes, %llu cuts, %llu states repaired, %llu blocks re-attached, "
           "%llu damaged among them\n", type, (unsigned long long)total,
           (unsigned long long)cuts, (unsigned long long)repaired_states,
           (unsigned long long)recovered, (unsigned long long)damaged_total);
    CHECK(recovered > 0);
}

int main(void)
{
    ovl = malloc(OVL_SIZE);
    REQUIRE(ovl);
    run(SF_FS_EXFAT, 16u << 20, 4096);
    run(SF_FS_FAT16, 16u << 20, 2048);
    run(SF_FS_FAT32, 36u << 20, 512);
    free(ovl);
    free(pristine);
    free(disk);
    free(chkwork);
    TEST_END();
}
