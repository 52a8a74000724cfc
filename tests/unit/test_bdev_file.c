/* File device on regular files: create, read/write, flush, trim, reopen with 512- and
 * 4096-byte sectors, sizes that are not a multiple, O_DIRECT alignment, read-only. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/filebd.h"

static char dir[256];

static const char *tpath(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 31 + i * 13 + (i >> 9));
}

static void test_create_rw_reopen(void)
{
    struct sf_filebd f;
    uint8_t a[4096 * 2], b[4096 * 2];
    const char *img = tpath("a.img");
    struct stat st;

    CHECK_EQ(sf_filebd_open(&f, img, 0, 0, 0), SF_ENOENT);
    CHECK_EQ(f.fd, -1);
    CHECK_EQ(sf_filebd_open(&f, img, SF_FILEBD_CREATE, 0, 1000), SF_EINVAL); /* not sectors */
    CHECK_EQ(access(img, F_OK), -1);                    /* nothing left behind */
    CHECK_EQ(sf_filebd_open(&f, img, SF_FILEBD_CREATE, 0, 0), SF_EINVAL);
    CHECK_EQ(sf_filebd_open(&f, img, SF_FILEBD_CREATE | SF_FILEBD_RDONLY, 0, 1 << 20), SF_EINVAL);
    CHECK_EQ(sf_filebd_open(&f, img, 0, 1024, 0), SF_EINVAL);
    CHECK_EQ(sf_filebd_open(&f, NULL, 0, 0, 0), SF_EINVAL);

    REQUIRE(sf_filebd_open(&f, img, SF_FILEBD_CREATE, 0, 1 << 20) == 0);
    CHECK_EQ(f.bd.sector_size, 512);
    CHECK_EQ(f.bd.sector_count, 2048);
    CHECK_EQ(f.bd.align_sectors, 1);
    CHECK_EQ(f.bd.mem_align, 1);
    CHECK_EQ(f.bd.flags, 0);
    CHECK_EQ(f.is_blockdev, 0);
    CHECK_EQ(f.bytes, 1 << 20);
    REQUIRE(stat(img, &st) == 0);
    CHECK_EQ(st.st_size, 1 << 20);
    CHECK(st.st_blocks * 512 < (1 << 20));             /* sparse */

    memset(b, 0xFF, sizeof(b));
    CHECK_EQ(sf_bdev_read(&f.bd, 0, b, 16), 0);
    for (size_t i = 0; i < sizeof(b); i++)
        if (b[i]) { CHECK(!"new image not zero"); break; }
    pattern(a, sizeof(a), 1);
    CHECK_EQ(sf_bdev_write(&f.bd, 8, a, 16), 0);        /* bytes 4096..12287 */
    CHECK_EQ(sf_bdev_write(&f.bd, 2047, a, 1), 0);      /* the last sector */
    CHECK_EQ(sf_bdev_write(&f.bd, 2047, a, 2), SF_EINVAL);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 8, b, 16), 0);
    CHECK(memcmp(a, b, sizeof(a)) == 0);

    /* trim: old data or zeros, and the file keeps its size */
    CHECK_EQ(sf_bdev_trim(&f.bd, 16, 8), 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 16, b, 8), 0);
    CHECK(memcmp(b, a + 4096, 4096) == 0 || (b[0] == 0 && memcmp(b, b + 1, 4095) == 0));
    REQUIRE(stat(img, &st) == 0);
    CHECK_EQ(st.st_size, 1 << 20);
    CHECK_EQ(sf_filebd_close(&f), 0);
    CHECK_EQ(f.fd, -1);

    /* reopen: CREATE on an existing file keeps it */
    REQUIRE(sf_filebd_open(&f, img, SF_FILEBD_CREATE, 0, 4096) == 0);
    CHECK_EQ(f.bd.sector_count, 2048);
    CHECK_EQ(sf_bdev_read(&f.bd, 8, b, 8), 0);
    CHECK(memcmp(a, b, 4096) == 0);
    /* the same file as 4096-byte sectors */
    CHECK_EQ(sf_filebd_set_sector_size(&f, 4096), 0);
    CHECK_EQ(f.bd.sector_size, 4096);
    CHECK_EQ(f.bd.sector_count, 256);
    CHECK_EQ(sf_bdev_read(&f.bd, 1, b, 1), 0);
    CHECK(memcmp(a, b, 4096) == 0);
    CHECK_EQ(sf_filebd_set_sector_size(&f, 2048), SF_EINVAL);
    CHECK_EQ(f.bd.sector_size, 4096);
    CHECK_EQ(sf_filebd_close(&f), 0);

    REQUIRE(sf_filebd_open(&f, img, 0, 4096, 0) == 0);
    CHECK_EQ(f.bd.sector_size, 4096);
    CHECK_EQ(f.bd.sector_count, 256);
    pattern(a, 4096, 2);
    CHECK_EQ(sf_bdev_write(&f.bd, 255, a, 1), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 256, a, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    CHECK_EQ(sf_filebd_close(&f), SF_EINVAL);
    REQUIRE(sf_filebd_open(&f, img, 0, 512, 0) == 0);
    CHECK_EQ(sf_bdev_read(&f.bd, 2040, b, 8), 0);
    CHECK(memcmp(a, b, 4096) == 0);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* a 4096-sector image created directly */
    REQUIRE(sf_filebd_open(&f, tpath("b.img"), SF_FILEBD_CREATE, 4096, 64 * 4096) == 0);
    CHECK_EQ(f.bd.sector_size, 4096);
    CHECK_EQ(f.bd.sector_count, 64);
    CHECK_EQ(sf_filebd_close(&f), 0);
    CHECK_EQ(sf_filebd_open(&f, tpath("c.img"), SF_FILEBD_CREATE, 4096, 64 * 512 + 512),
             SF_EINVAL);
}

static void write_bytes(const char *path, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, (off_t)n) == 0);
    close(fd);
}

static void test_sizes(void)
{
    struct sf_filebd f;

    write_bytes(tpath("odd.img"), 4096 + 100);
    CHECK_EQ(sf_filebd_open(&f, tpath("odd.img"), 0, 0, 0), SF_EINVAL);
    CHECK_EQ(f.fd, -1);
    CHECK_EQ(sf_filebd_open(&f, tpath("odd.img"), 0, 4096, 0), SF_EINVAL);

    write_bytes(tpath("1536.img"), 1536);
    CHECK_EQ(sf_filebd_open(&f, tpath("1536.img"), 0, 4096, 0), SF_EINVAL);
    REQUIRE(sf_filebd_open(&f, tpath("1536.img"), 0, 0, 0) == 0);
    CHECK_EQ(f.bd.sector_count, 3);
    CHECK_EQ(sf_filebd_set_sector_size(&f, 4096), SF_EINVAL);
    CHECK_EQ(f.bd.sector_size, 512);
    CHECK_EQ(f.bd.sector_count, 3);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* empty file: refused, unless CREATE gives it a size */
    write_bytes(tpath("empty.img"), 0);
    CHECK_EQ(sf_filebd_open(&f, tpath("empty.img"), 0, 0, 0), SF_EINVAL);
    REQUIRE(sf_filebd_open(&f, tpath("empty.img"), SF_FILEBD_CREATE, 0, 8192) == 0);
    CHECK_EQ(f.bd.sector_count, 16);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* not a regular file or block device */
    CHECK_EQ(sf_filebd_open(&f, dir, 0, 0, 0), SF_EINVAL);
    CHECK_EQ(sf_filebd_open(&f, "/dev/null", 0, 0, 0), SF_EINVAL);
    CHECK_EQ(sf_filebd_open(&f, tpath("nodir/x.img"), SF_FILEBD_CREATE, 0, 4096), SF_ENOENT);
}

static void test_readonly(void)
{
    struct sf_filebd f;
    uint8_t a[512];

    REQUIRE(sf_filebd_open(&f, tpath("a.img"), SF_FILEBD_RDONLY, 0, 0) == 0);
    CHECK(f.bd.flags & SF_BDEV_READONLY);
    CHECK_EQ(sf_bdev_read(&f.bd, 0, a, 1), 0);
    CHECK_EQ(sf_bdev_write(&f.bd, 0, a, 1), SF_EROFS);
    CHECK_EQ(f.bd.write(&f.bd, 0, a, 1), SF_EROFS);     /* the callback refuses too */
    CHECK_EQ(sf_bdev_trim(&f.bd, 0, 1), SF_EROFS);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* a file without write permission: read-only works, read-write does not (as non-root) */
    write_bytes(tpath("ro.img"), 4096);
    REQUIRE(chmod(tpath("ro.img"), 0444) == 0);
    REQUIRE(sf_filebd_open(&f, tpath("ro.img"), SF_FILEBD_RDONLY, 0, 0) == 0);
    CHECK_EQ(sf_filebd_close(&f), 0);
    if (geteuid() != 0)
        CHECK_EQ(sf_filebd_open(&f, tpath("ro.img"), 0, 0, 0), SF_EPERM);
}

static void test_direct(void)
{
    struct sf_filebd f;
    uint8_t *a, *b;
    int err;

    err = sf_filebd_open(&f, tpath("d.img"), SF_FILEBD_CREATE | SF_FILEBD_DIRECT, 4096, 1 << 20);
    if (err == SF_ENOTSUP) {
        printf("O_DIRECT not supported in %s: skipping the O_DIRECT checks\n", dir);
        return;
    }
    REQUIRE(err == 0);
    CHECK_EQ(f.direct, 1);
    CHECK_EQ(f.bd.mem_align, 4096);
    REQUIRE(posix_memalign((void **)&a, 4096, 3 * 4096) == 0);
    REQUIRE(posix_memalign((void **)&b, 4096, 3 * 4096) == 0);
    pattern(a, 3 * 4096, 5);
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a, 2), 0);
    CHECK_EQ(sf_bdev_flush(&f.bd), 0);
    memset(b, 0, 3 * 4096);
    CHECK_EQ(sf_bdev_read(&f.bd, 3, b, 2), 0);
    CHECK(memcmp(a, b, 2 * 4096) == 0);
    /* misaligned buffers: refused cleanly, by the wrapper and by the device itself */
    CHECK_EQ(sf_bdev_read(&f.bd, 3, b + 512, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_write(&f.bd, 3, a + 1, 1), SF_EINVAL);
    CHECK_EQ(f.bd.read(&f.bd, 3, b + 512, 1), SF_EINVAL);
    CHECK_EQ(f.bd.write(&f.bd, 3, a + 8, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_trim(&f.bd, 0, 2), 0);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* the data went to the file: read it back without O_DIRECT at 512 */
    REQUIRE(sf_filebd_open(&f, tpath("d.img"), SF_FILEBD_RDONLY, 512, 0) == 0);
    CHECK_EQ(f.bd.mem_align, 1);
    CHECK_EQ(sf_bdev_read(&f.bd, 24, b + 1, 16), 0);
    CHECK(memcmp(a, b + 1, 2 * 4096) == 0);
    CHECK_EQ(sf_filebd_close(&f), 0);

    /* 512-byte sectors with O_DIRECT on the same file, if the host allows 512 offsets */
    err = sf_filebd_open(&f, tpath("d.img"), SF_FILEBD_DIRECT, 512, 0);
    CHECK(err == 0 || err == SF_EINVAL);
    if (err == 0) {
        CHECK_EQ(f.bd.mem_align, 4096);
        CHECK_EQ(sf_bdev_read(&f.bd, 25, b, 3), 0);
        CHECK(memcmp(a + 512, b, 3 * 512) == 0);
        CHECK_EQ(sf_filebd_close(&f), 0);
    }
    free(a);
    free(b);
}

static void cleanup(void)
{
    static const char *names[] = { "a.img", "b.img", "c.img", "odd.img", "1536.img",
                                   "empty.img", "ro.img", "d.img" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unlink(tpath(names[i]));
    rmdir(dir);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/sf_filebd_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    REQUIRE(mkdtemp(dir) != NULL);
    test_create_rw_reopen();
    test_sizes();
    test_readonly();
    test_direct();
    cleanup();
    TEST_END();
}
