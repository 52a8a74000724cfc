/* The benches' sparse RAM device (sparse_ram.h). */
#include "sparse_ram.h"

#include <string.h>

#define SS 512u
#define PAGE (64u << 10)

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

/* not static, so that callgrind names them in every build */
__attribute__((noinline)) int ram_rd(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count);
__attribute__((noinline)) int ram_wr(struct sf_bdev *bd, uint64_t lba, const void *buf,
                                     uint32_t count);

__attribute__((noinline)) int ram_rd(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sparse_ram *s = (struct sparse_ram *)bd;
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

__attribute__((noinline)) int ram_wr(struct sf_bdev *bd, uint64_t lba, const void *buf,
                                     uint32_t count)
{
    struct sparse_ram *s = (struct sparse_ram *)bd;
    uint64_t off = lba * SS, n = (uint64_t)count * SS;
    const uint8_t *in8 = buf;

    s->writes++;
    s->wsec += count;
    while (n) {
        uint64_t p = off / PAGE, in = off % PAGE, k = PAGE - in < n ? PAGE - in : n;
        if (!s->page[p] && !all_zero(in8, (size_t)k)) {
            if (!(s->page[p] = calloc(1, PAGE))) {
                fprintf(stderr, "sparse_ram: out of memory\n");
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

static int sparse_ram_fl(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

void sparse_ram_init(struct sparse_ram *s, uint64_t bytes)
{
    memset(s, 0, sizeof *s);
    if (!(s->page = calloc(bytes / PAGE, sizeof *s->page))) {
        fprintf(stderr, "sparse_ram: out of memory\n");
        exit(1);
    }
    s->bd.sector_size = SS;
    s->bd.sector_count = bytes / SS;
    s->bd.align_sectors = 1;
    s->bd.mem_align = 1;
    s->bd.read = ram_rd;
    s->bd.write = ram_wr;
    s->bd.flush = sparse_ram_fl;
}
