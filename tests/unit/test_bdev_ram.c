/* RAM device and the sf_bdev_* wrappers: argument checks, trim, read-only flag, the
 * window device and the synchronous submit/poll fallback. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/bdev.h"

#define SS 512
#define N 64

static uint8_t mem[SS * N];

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7);
}

static void test_init(void)
{
    struct sf_rambd r;
    static uint8_t big[4096 * 2];
    CHECK_EQ(sf_rambd_init(&r, NULL, SS, N), SF_EINVAL);
    CHECK_EQ(sf_rambd_init(&r, mem, 1024, N), SF_EINVAL);
    CHECK_EQ(sf_rambd_init(&r, mem, 0, N), SF_EINVAL);
    CHECK_EQ(sf_rambd_init(&r, mem, SS, 0), SF_EINVAL);
    CHECK_EQ(sf_rambd_init(&r, mem, SS, UINT64_MAX), SF_EINVAL);
    CHECK_EQ(sf_rambd_init(&r, big, 4096, 2), 0);
    CHECK_EQ(r.bd.sector_size, 4096);
    CHECK_EQ(r.bd.sector_count, 2);
    CHECK_EQ(r.bd.align_sectors, 1);
    CHECK_EQ(r.bd.mem_align, 1);
    CHECK(r.bd.submit == NULL && r.bd.poll == NULL);
}

static void test_rw_and_checks(void)
{
    struct sf_rambd r;
    uint8_t a[SS * 4], b[SS * 4];

    REQUIRE(sf_rambd_init(&r, mem, SS, N) == 0);
    struct sf_bdev *bd = &r.bd;

    fill(a, sizeof(a), 1);
    CHECK_EQ(sf_bdev_write(bd, 10, a, 4), 0);
    CHECK(memcmp(mem + 10 * SS, a, sizeof(a)) == 0);
    memset(b, 0, sizeof(b));
    CHECK_EQ(sf_bdev_read(bd, 10, b, 4), 0);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    CHECK_EQ(sf_bdev_read(bd, N - 4, b, 4), 0);     /* last sectors */
    CHECK_EQ(sf_bdev_flush(bd), 0);

    /* count 0, NULL buffer, range and overflow */
    CHECK_EQ(sf_bdev_read(bd, 0, b, 0), SF_EINVAL);
    CHECK_EQ(sf_bdev_write(bd, 0, a, 0), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(bd, 0, NULL, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_write(bd, 0, NULL, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(bd, N - 1, b, 2), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(bd, N, b, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_write(bd, N, a, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(bd, UINT64_MAX, b, 2), SF_EINVAL);
    CHECK_EQ(sf_bdev_write(bd, UINT64_MAX - 1, a, 4), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(NULL, 0, b, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_flush(NULL), SF_EINVAL);

    /* trim: zeroes here; count 0 is a no-op; out of range refused */
    CHECK_EQ(sf_bdev_trim(bd, 11, 2), 0);
    CHECK_EQ(sf_bdev_read(bd, 10, b, 4), 0);
    CHECK(memcmp(b, a, SS) == 0);
    for (size_t i = SS; i < 3 * SS; i++)
        if (b[i]) { CHECK(!"trimmed sector not zero"); break; }
    CHECK(memcmp(b + 3 * SS, a + 3 * SS, SS) == 0);
    CHECK_EQ(sf_bdev_trim(bd, 5, 0), 0);
    CHECK_EQ(sf_bdev_trim(bd, N - 1, 2), SF_EINVAL);
    CHECK_EQ(sf_bdev_trim(bd, 1, UINT64_MAX), SF_EINVAL);

    /* a device without trim: 0 (not supported is not an error) */
    int (*t)(struct sf_bdev *, uint64_t, uint64_t) = bd->trim;
    bd->trim = NULL;
    CHECK_EQ(sf_bdev_trim(bd, 0, 1), 0);
    bd->trim = t;

    /* read-only flag */
    bd->flags |= SF_BDEV_READONLY;
    CHECK_EQ(sf_bdev_write(bd, 0, a, 1), SF_EROFS);
    CHECK_EQ(sf_bdev_trim(bd, 0, 1), SF_EROFS);
    CHECK_EQ(sf_bdev_read(bd, 0, b, 1), 0);
    bd->flags &= ~SF_BDEV_READONLY;

    /* buffer alignment when the device demands it */
    bd->mem_align = 64;
    _Alignas(64) uint8_t al[SS + 1];
    CHECK_EQ(sf_bdev_read(bd, 0, al + 1, 1), SF_EINVAL);
    CHECK_EQ(sf_bdev_read(bd, 0, al, 1), 0);
    bd->mem_align = 1;
}

static void test_window(void)
{
    struct sf_rambd r;
    struct sf_bdev_window w;
    uint8_t a[SS * 2], b[SS * 2];

    REQUIRE(sf_rambd_init(&r, mem, SS, N) == 0);
    r.bd.align_sectors = 8;
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, 60, 5), SF_EINVAL);
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, 0, 0), SF_EINVAL);
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, UINT64_MAX, 2), SF_EINVAL);
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, 16, 48), 0);
    CHECK_EQ(w.bd.sector_count, 48);
    CHECK_EQ(w.bd.align_sectors, 8);
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, 6, 10), 0);
    CHECK_EQ(w.bd.align_sectors, 2);       /* gcd(8, 6) */
    CHECK_EQ(sf_bdev_window_init(&w, &r.bd, 63, 1), 0);
    CHECK_EQ(w.bd.align_sectors, 1);

    REQUIRE(sf_bdev_window_init(&w, &r.bd, 20, 10) == 0);
    fill(a, sizeof(a), 9);
    CHECK_EQ(sf_bdev_write(&w.bd, 8, a, 2), 0);
    CHECK(memcmp(mem + 28 * SS, a, sizeof(a)) == 0);
    CHECK_EQ(sf_bdev_read(&w.bd, 8, b, 2), 0);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    CHECK_EQ(sf_bdev_write(&w.bd, 9, a, 2), SF_EINVAL);    /* past the window's end */
    CHECK_EQ(sf_bdev_flush(&w.bd), 0);
    CHECK_EQ(sf_bdev_trim(&w.bd, 9, 1), 0);
    CHECK_EQ(mem[29 * SS], 0);
    CHECK_EQ(mem[28 * SS], a[0]);
}

static void test_async_fallback(void)
{
    struct sf_rambd r;
    struct sf_bio bio[5], *out[8];
    uint8_t a[SS * 3], b[SS * 3];

    REQUIRE(sf_rambd_init(&r, mem, SS, N) == 0);
    struct sf_bdev *bd = &r.bd;
    fill(a, sizeof(a), 3);
    memset(b, 0, sizeof(b));
    memset(bio, 0, sizeof(bio));

    CHECK_EQ(sf_bdev_poll(bd, out, 8, 1), 0);   /* nothing in flight: no wait */
    bio[0] = (struct sf_bio){ .lba = 2, .count = 3, .op = SF_BIO_WRITE, .buf = a, .user = &bio[0] };
    bio[1] = (struct sf_bio){ .op = SF_BIO_FLUSH, .result = 99 };
    bio[2] = (struct sf_bio){ .lba = 2, .count = 3, .op = SF_BIO_READ, .buf = b, .result = 99 };
    bio[3] = (struct sf_bio){ .lba = N, .count = 1, .op = SF_BIO_READ, .buf = b };
    bio[4] = (struct sf_bio){ .lba = 0, .count = 1, .op = 7, .buf = b };
    CHECK_EQ(sf_bdev_submit(bd, &bio[0]), 0);
    CHECK_EQ(sf_bdev_submit(bd, &bio[1]), 0);
    CHECK_EQ(sf_bdev_submit(bd, &bio[2]), 0);
    CHECK_EQ(sf_bdev_submit(bd, &bio[3]), SF_EINVAL);   /* refused, not queued */
    CHECK_EQ(sf_bdev_submit(bd, &bio[4]), SF_EINVAL);
    CHECK_EQ(sf_bdev_submit(bd, NULL), SF_EINVAL);
    CHECK_EQ(sf_bdev_poll(bd, NULL, 1, 0), SF_EINVAL);

    CHECK_EQ(sf_bdev_poll(bd, out, 2, 0), 2);           /* in submission order */
    CHECK(out[0] == &bio[0] && out[1] == &bio[1]);
    CHECK_EQ(bio[0].result, 0);
    CHECK_EQ(bio[1].result, 0);
    CHECK(bio[0].user == &bio[0]);
    CHECK_EQ(sf_bdev_poll(bd, out, 8, 1), 1);
    CHECK(out[0] == &bio[2]);
    CHECK_EQ(bio[2].result, 0);
    CHECK(memcmp(a, b, sizeof(a)) == 0);
    CHECK_EQ(sf_bdev_poll(bd, out, 8, 0), 0);
    CHECK(bd->done_head == NULL && bd->done_tail == NULL);

    /* reuse after drain, and a device error reported as a completion */
    bd->flags |= SF_BDEV_READONLY;
    bio[0].result = 1;
    CHECK_EQ(sf_bdev_submit(bd, &bio[0]), SF_EROFS);
    bd->flags &= ~SF_BDEV_READONLY;
    CHECK_EQ(sf_bdev_submit(bd, &bio[2]), 0);
    CHECK_EQ(sf_bdev_poll(bd, out, 0, 0), 0);           /* max 0 takes nothing */
    CHECK_EQ(sf_bdev_poll(bd, out, 8, 0), 1);
    CHECK(out[0] == &bio[2]);
}

int main(void)
{
    test_init();
    test_rw_and_checks();
    test_window();
    test_async_fallback();
    TEST_END();
}
