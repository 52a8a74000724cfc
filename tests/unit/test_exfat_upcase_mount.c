/* exFAT mount and the volume's up-case table (spec 7.2).
 *
 * Mount reads the table, checks its TableChecksum and decides whether it equals the built-in
 * table (then names compare through sf_upcase_builtin) or expands it into cfg.upcase_buf.
 * Comparing all 65,536 code points with sf_upcase_builtin was most of what a mount cost
 * (about 30 ms per input of the fuzz_mount target, and a long pause on a small CPU); a
 * table of our mkfs's length and TableChecksum is now taken for the built-in one without
 * expanding it.
 *
 *   - a fresh volume of ours: mounted with the built-in table and cfg.upcase_buf untouched
 *     (it was filled with all 65,536 entries before); lookups are case-insensitive;
 *   - our table with one unit changed near its start and one with its last mapping changed
 *     (TableChecksum fixed up, so it differs from ours): not the built-in table; the
 *     buffer holds the expansion and lookups follow the volume's table;
 *   - a damaged TableChecksum is still refused, ours or not. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "fs/exfat_ondisk.h"
#include "streamfat/sf.h"
#include "util/le.h"
#include "util/upcase.h"

#define SS 512u
#define DISK_BYTES (8u << 20)

static uint8_t pristine[DISK_BYTES], disk[DISK_BYTES];
static uint64_t table_off, entry_off;   /* byte offsets: the table, its directory entry */
static uint16_t upbuf[SF_UPCASE_BUF_SIZE / 2];

static void make_volume(void)
{
    static uint8_t mbuf[256 * 1024];
    static uint8_t cache[16 * 1024] __attribute__((aligned(64)));
    struct sf_rambd ram;
    struct sf_vol v;
    struct sf_file f;
    const char *why = "";

    REQUIRE(sf_rambd_init(&ram, pristine, SS, DISK_BYTES / SS) == 0);
    struct sf_mkfs_opts o = { .fs_type = SF_FS_EXFAT, .cluster_size = 4096, .serial = 9,
                              .buf = mbuf, .buf_size = sizeof mbuf };
    REQUIRE(sf_mkfs(&ram.bd, &o, &why) == 0);
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache };
    REQUIRE(sf_mount(&v, &c) == 0);
    REQUIRE(sf_open(&v, &f, "Bx.txt", SF_O_WRONLY | SF_O_CREAT) == 0);
    REQUIRE(sf_close(&f) == 0);
    REQUIRE(sf_unmount(&v) == 0);

    const uint8_t *b = pristine;
    uint32_t heap = ld_le32(b + EXBS_HEAP_OFFSET), root = ld_le32(b + EXBS_ROOT_CLUSTER);
    uint32_t cs = SS << b[EXBS_SPC_SHIFT];
    uint64_t root_off = (uint64_t)heap * SS + (uint64_t)(root - 2) * cs;
    for (uint32_t i = 0; i < cs; i += EXDE_SIZE)
        if (pristine[root_off + i] == EXDE_UPCASE) {
            entry_off = root_off + i;
            break;
        }
    REQUIRE(entry_off != 0);
    REQUIRE(ld_le64(pristine + entry_off + EXDE_DATA_LENGTH) == sf_upcase_table_units * 2u);
    table_off = (uint64_t)heap * SS +
                (uint64_t)(ld_le32(pristine + entry_off + EXDE_FIRST_CLUSTER) - 2) * cs;
    for (uint32_t k = 0; k < sf_upcase_table_units; k++)
        REQUIRE(ld_le16(pristine + table_off + 2 * k) == sf_upcase_table[k]);
}

/* Mount a copy of the volume with table unit K set to U (K < 0: unchanged), the checksum
 * fixed up unless BREAK_SUM. The buffer is filled with 0xAAAA first. */
static int mount_with(struct sf_vol *v, int k, uint16_t u, int break_sum)
{
    static uint8_t cache[16 * 1024] __attribute__((aligned(64)));
    static struct sf_rambd ram;
    uint32_t sum = 0;

    memcpy(disk, pristine, DISK_BYTES);
    if (k >= 0)
        st_le16(disk + table_off + 2 * (uint32_t)k, u);
    sum = sf_exfat_sum32(0, disk + table_off, sf_upcase_table_units * 2u);
    st_le32(disk + entry_off + EXDE_UPCASE_CHECKSUM, sum + (break_sum ? 1 : 0));
    memset(upbuf, 0xAA, sizeof upbuf);
    REQUIRE(sf_rambd_init(&ram, disk, SS, DISK_BYTES / SS) == 0);
    struct sf_vol_cfg c = { .bd = &ram.bd, .buf = cache, .buf_size = sizeof cache,
                            .upcase_buf = upbuf };
    return sf_mount(v, &c);
}

static int found(struct sf_vol *v, const char *name)
{
    struct sf_stat st;
    return sf_stat(v, name, &st) == 0;
}

int main(void)
{
    struct sf_vol v;
    uint32_t untouched = 0;

    make_volume();

    /* ours: the built-in table, nothing expanded */
    REQUIRE(mount_with(&v, -1, 0, 0) == 0);
    CHECK_EQ(v.upcase_builtin, 1);
    for (uint32_t c = 0; c < 65536; c++)
        untouched += upbuf[c] == 0xAAAA;
    CHECK_EQ(untouched, 65536);
    CHECK(found(&v, "/BX.TXT"));
    CHECK(found(&v, "/bx.txt"));
    CHECK_EQ(sf_unmount(&v), 0);

    /* unit 3 maps 'b' (it is 0x0042 after the identity run 0xFFFF, 0x61): now to itself */
    REQUIRE(sf_upcase_table[0] == 0xFFFF && sf_upcase_table[1] == 0x61 &&
            sf_upcase_table[3] == 0x42);
    REQUIRE(mount_with(&v, 3, 0x62, 0) == 0);
    CHECK_EQ(v.upcase_builtin, 0);
    CHECK_EQ(upbuf[0x20], 0x20);               /* the identity run */
    CHECK_EQ(upbuf[0x61], 0x41);               /* 'a' */
    CHECK_EQ(upbuf[0x62], 0x62);               /* the changed unit */
    CHECK_EQ(upbuf[0x63], 0x43);
    CHECK_EQ(upbuf[0xE9], 0xC9);
    CHECK_EQ(upbuf[0xFF41], 0xFF21);
    CHECK_EQ(upbuf[0xFFFF], 0xFFFF);
    CHECK(found(&v, "/Bx.txt"));
    CHECK(found(&v, "/BX.TXT"));               /* 'x' still up-cases */
    CHECK(!found(&v, "/bx.txt"));              /* 'b' no longer matches 'B' */
    CHECK_EQ(sf_unmount(&v), 0);

    /* the last mapping unit changed (the table ends in a run): one code point differs */
    {
        uint32_t last = sf_upcase_table_units - 1;
        while (sf_upcase_table[last] == 0xFFFF || sf_upcase_table[last - 1] == 0xFFFF)
            last--;
        REQUIRE(last > sf_upcase_table_units - 8);
        uint16_t u = sf_upcase_table[last];
        REQUIRE(mount_with(&v, (int)last, (uint16_t)(u ^ 1), 0) == 0);
        CHECK_EQ(v.upcase_builtin, 0);
        uint32_t differ = 0;
        for (uint32_t c = 0; c < 65536; c++)
            differ += upbuf[c] != sf_upcase_builtin((uint16_t)c);
        CHECK_EQ(differ, 1);
        CHECK(found(&v, "/bx.txt"));
        CHECK_EQ(sf_unmount(&v), 0);
    }

    /* a wrong TableChecksum: refused, ours or not */
    CHECK_EQ(mount_with(&v, -1, 0, 1), SF_ECORRUPT);
    CHECK_EQ(mount_with(&v, 3, 0x62, 1), SF_ECORRUPT);
    TEST_END();
}
