/* exFAT DataLength fields near 2^64, in mount and in the checker.
 *
 * Mount's check of the allocation bitmap entry (spec 7.1): the bitmap must cover every
 * cluster of the heap (DataLength >= ceil(ClusterCount / 8)) and its clusters must lie inside
 * the heap. A hostile DataLength near 2^64 once wrapped the bitmap's cluster count (rounded
 * up as length + cluster size - 1) to a small number, so a volume whose bitmap ran past the
 * heap was accepted and later bitmap writes would have gone past the volume's end. Each case
 * patches the bitmap entry of a fresh volume and expects mount to refuse it with the
 * bitmap's reason, or to accept it. The checker rounded the same way for the bitmap, the
 * up-case table and every file: it must report such a bitmap, and a file whose DataLength
 * is 2^64 - 1, as problems. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fs/exfat_ondisk.h"
#include "streamfat/check.h"
#include "streamfat/sf.h"
#include "util/le.h"

#define SS 512u
#define DISK_BYTES (64u << 20)

static uint8_t *disk;
static uint8_t pristine[DISK_BYTES];
static uint64_t entry_off;              /* byte offset of the bitmap entry in the image */
static uint32_t cluster_count, cluster_size;

static void make_volume(void)
{
    static uint8_t mbuf[256 * 1024];
    struct sf_rambd ram;
    REQUIRE(sf_rambd_init(&ram, pristine, SS, DISK_BYTES / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = 4096, .serial = 7,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    const char *why = "";
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);

    /* Find the bitmap entry in the root directory's first cluster, as mount does. */
    const uint8_t *b = pristine;
    uint32_t heap = ld_le32(b + EXBS_HEAP_OFFSET), root = ld_le32(b + EXBS_ROOT_CLUSTER);
    cluster_count = ld_le32(b + EXBS_CLUSTER_COUNT);
    cluster_size = SS << b[EXBS_SPC_SHIFT];
    uint64_t root_off = (uint64_t)heap * SS + (uint64_t)(root - 2) * cluster_size;
    for (uint32_t i = 0; i < cluster_size; i += EXDE_SIZE) {
        if (pristine[root_off + i] == EXDE_BITMAP) {
            entry_off = root_off + i;
            break;
        }
    }
    REQUIRE(entry_off != 0);
    REQUIRE(ld_le64(pristine + entry_off + EXDE_DATA_LENGTH) == (cluster_count + 7) / 8);
}

/* Mount a copy of the fresh volume whose bitmap entry says FIRST and LENGTH. */
static int mount_with(uint32_t first, uint64_t length, const char **why)
{
    static uint8_t cache[16 * 1024] __attribute__((aligned(64)));
    memcpy(disk, pristine, DISK_BYTES);
    st_le32(disk + entry_off + EXDE_FIRST_CLUSTER, first);
    st_le64(disk + entry_off + EXDE_DATA_LENGTH, length);
    struct sf_rambd ram;
    REQUIRE(sf_rambd_init(&ram, disk, SS, DISK_BYTES / SS) == 0);
    struct sf_vol v;
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    int err = sf_mount(&v, &c);
    *why = v.why;
    if (!err)
        CHECK_EQ(sf_unmount(&v), 0);
    return err;
}

static void expect_refused(uint32_t first, uint64_t length)
{
    const char *why = "";
    int err = mount_with(first, length, &why);
    CHECK_EQ(err, SF_ECORRUPT);
    if (err != SF_ECORRUPT || !strstr(why, "allocation bitmap"))
        fprintf(stderr, "  bitmap at cluster %u, DataLength %llu: %d (%s)\n", first,
                (unsigned long long)length, err, why);
    CHECK(strstr(why, "allocation bitmap") != NULL);
}

static char findings[4096];             /* the checker's messages, one per line */

static void on_finding(void *user, const struct sf_check_finding *f)
{
    (void)user;
    size_t n = strlen(findings);
    snprintf(findings + n, sizeof findings - n, "%s\n", f->msg);
}

/* sf_check's verdict on `disk` as it is (0 clean, 1 or 2 problems found); its messages in
 * `findings`. */
static int check_disk(uint32_t *problems)
{
    static uint8_t work[4 << 20] __attribute__((aligned(64)));
    struct sf_rambd ram;
    REQUIRE(sf_rambd_init(&ram, disk, SS, DISK_BYTES / SS) == 0);
    findings[0] = 0;
    struct sf_check_opts o = { .work = work, .work_size = sizeof work, .cb = on_finding };
    struct sf_check_result r;
    int rc = sf_check(&ram.bd, &o, &r);
    *problems = r.problems;
    return rc;
}

/* The entry set checksum of a file set of n entries (spec 6.3.3). */
static uint16_t set_checksum(const uint8_t *e, uint32_t n)
{
    uint16_t sum = 0;
    for (uint32_t i = 0; i < n * EXDE_SIZE; i++) {
        if (i == EXDE_FILE_SET_CHECKSUM || i == EXDE_FILE_SET_CHECKSUM + 1)
            continue;
        sum = (uint16_t)(((sum & 1u) ? 0x8000u : 0u) + (sum >> 1) + e[i]);
    }
    return sum;
}

/* A file of one cluster whose stream entry then says DataLength = ValidDataLength =
 * 2^64 - 1 (set checksum kept right, so only the length is wrong): reading it must stop
 * with an error or at the chain's end, and the checker must report it. */
static void huge_file_length(void)
{
    static uint8_t cache[16 * 1024] __attribute__((aligned(64)));
    static uint8_t rb[8192];
    memcpy(disk, pristine, DISK_BYTES);
    struct sf_rambd ram;
    REQUIRE(sf_rambd_init(&ram, disk, SS, DISK_BYTES / SS) == 0);
    struct sf_vol v;
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&v, &c) == 0);
    struct sf_file f;
    REQUIRE(sf_open(&v, &f, "HUGE.BIN", SF_O_RDWR | SF_O_CREAT) == 0);
    memset(rb, 0x5A, sizeof rb);
    REQUIRE(sf_write(&f, rb, 100) == 100);
    REQUIRE(sf_close(&f) == 0);
    REQUIRE(sf_unmount(&v) == 0);

    uint64_t set = 0;
    for (uint64_t i = entry_off; i < entry_off + cluster_size && !set; i += EXDE_SIZE)
        if (disk[i] == EXDE_FILE && disk[i + EXDE_SIZE] == EXDE_STREAM)
            set = i;
    REQUIRE(set != 0);
    uint8_t *se = disk + set + EXDE_SIZE;
    st_le64(se + EXDE_DATA_LENGTH, UINT64_MAX);
    st_le64(se + EXDE_STREAM_VALID_LEN, UINT64_MAX);
    st_le16(disk + set + EXDE_FILE_SET_CHECKSUM,
            set_checksum(disk + set, 1u + disk[set + EXDE_FILE_SECONDARY_COUNT]));

    REQUIRE(sf_mount(&v, &c) == 0);
    if (sf_open(&v, &f, "HUGE.BIN", SF_O_RDONLY) == 0) {
        sf_ssize_t k;
        uint64_t got = 0;
        while ((k = sf_read(&f, rb, sizeof rb)) > 0 && got < 2ull * cluster_size)
            got += (uint64_t)k;
        CHECK(k < 0 || got <= 2ull * cluster_size);   /* an error, not a read past the heap */
        sf_close(&f);
    }
    CHECK_EQ(sf_unmount(&v), 0);
    uint32_t problems = 0;
    CHECK(check_disk(&problems) >= 1);
    CHECK(problems >= 1);
}

int main(void)
{
    disk = malloc(DISK_BYTES);
    REQUIRE(disk);
    make_volume();
    uint32_t first = ld_le32(pristine + entry_off + EXDE_FIRST_CLUSTER);
    uint64_t need = (cluster_count + 7) / 8;
    const char *why = "";

    /* the volume as made, and a DataLength up to the end of the bitmap's last cluster */
    CHECK_EQ(mount_with(first, need, &why), 0);
    CHECK_EQ(mount_with(first, (need + cluster_size - 1) / cluster_size * cluster_size, &why),
             0);
    /* too short for the heap */
    expect_refused(first, need - 1);
    expect_refused(first, 0);
    /* lengths whose rounding up to clusters wraps past 2^64 */
    expect_refused(first, UINT64_MAX);
    expect_refused(first, UINT64_MAX - cluster_size + 2);
    expect_refused(first, UINT64_MAX - cluster_size + 1 + need);
    /* long enough, but running past the heap's last cluster (cluster_count + 1) */
    expect_refused(cluster_count + 1, (uint64_t)cluster_size + 1);
    expect_refused(cluster_count, 2 * (uint64_t)cluster_size + 1);
    expect_refused(first, (uint64_t)(cluster_count + 1) * cluster_size);

    /* the checker: the fresh volume is clean, a wrapping bitmap length is a problem */
    uint32_t problems = 0;
    memcpy(disk, pristine, DISK_BYTES);
    CHECK_EQ(check_disk(&problems), 0);
    CHECK_EQ(mount_with(first, UINT64_MAX, &why), SF_ECORRUPT);
    CHECK(check_disk(&problems) >= 1);
    CHECK(problems >= 1);
    CHECK(strstr(findings, "allocation bitmap longer than the cluster heap") != NULL);
    if (!strstr(findings, "longer than the cluster heap"))
        fprintf(stderr, "  checker said:\n%s", findings);
    huge_file_length();
    free(disk);
    TEST_END();
}
