/* mkfs_img IMAGE SIZE [CLUSTER] [LABEL] [none|mbr|gpt] [SECTOR_SIZE] [ALIGN]
 *
 * Test helper: create (or reuse) IMAGE as a sparse file of SIZE bytes (K/M/G/T suffixes,
 * powers of 1024; 0 keeps the existing size, as for a block device) and format it with
 * sf_mkfs through a minimal pread/pwrite device of its own, so mkfs can be checked by
 * fsck.exfat without the CLI. CLUSTER and ALIGN: bytes with suffixes, 0 = default.
 * Prints the layout it made and the time sf_mkfs took. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <time.h>
#include <unistd.h>
#include "streamfat/sf.h"
#include "../../bench/sparse_ram.h"   /* parse_size */

struct pbd {
    struct sf_bdev bd;
    int fd;
};

static int p_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct pbd *p = (struct pbd *)bd;
    size_t n = (size_t)count * bd->sector_size;
    return pread(p->fd, buf, n, (off_t)(lba * bd->sector_size)) == (ssize_t)n ? 0 : SF_EIO;
}

static int p_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct pbd *p = (struct pbd *)bd;
    size_t n = (size_t)count * bd->sector_size;
    return pwrite(p->fd, buf, n, (off_t)(lba * bd->sector_size)) == (ssize_t)n ? 0 : SF_EIO;
}

static int p_flush(struct sf_bdev *bd)
{
    return fsync(((struct pbd *)bd)->fd) ? SF_EIO : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: mkfs_img IMAGE SIZE [CLUSTER] [LABEL] [none|mbr|gpt] "
                        "[SECTOR_SIZE] [ALIGN]\n");
        return 2;
    }
    uint64_t size = parse_size(argv[2]);
    struct sf_mkfs_opts o;
    memset(&o, 0, sizeof o);
    o.fs_type = SF_FS_EXFAT;
    if (argc > 3)
        o.cluster_size = (uint32_t)parse_size(argv[3]);
    if (argc > 4)
        o.label = argv[4];
    if (argc > 5) {
        if (!strcmp(argv[5], "mbr"))
            o.partition = SF_PART_MBR;
        else if (!strcmp(argv[5], "gpt"))
            o.partition = SF_PART_GPT;
        else if (strcmp(argv[5], "none")) {
            fprintf(stderr, "bad partition scheme: %s\n", argv[5]);
            return 2;
        }
    }
    uint32_t ss = argc > 6 ? (uint32_t)parse_size(argv[6]) : 0;
    if (argc > 7)
        o.align = parse_size(argv[7]);

    struct pbd p;
    memset(&p, 0, sizeof p);
    p.fd = open(argv[1], O_RDWR | O_CREAT, 0644);
    if (p.fd < 0) {
        perror(argv[1]);
        return 1;
    }
    struct stat st;
    fstat(p.fd, &st);
    uint64_t bytes = size;
    if (S_ISBLK(st.st_mode)) {
        int lss = 512;
        ioctl(p.fd, BLKGETSIZE64, &bytes);
        ioctl(p.fd, BLKSSZGET, &lss);
        if (!ss)
            ss = (uint32_t)lss;
    } else if (size) {
        if (ftruncate(p.fd, (off_t)size)) {
            perror("ftruncate");
            return 1;
        }
    } else {
        bytes = (uint64_t)st.st_size;
    }
    if (!ss)
        ss = 512;
    p.bd.sector_size = ss;
    p.bd.sector_count = bytes / ss;
    p.bd.align_sectors = 1;
    p.bd.mem_align = 1;
    p.bd.read = p_read;
    p.bd.write = p_write;
    p.bd.flush = p_flush;

    o.buf_size = 1u << 20;
    o.buf = aligned_alloc(4096, o.buf_size);
    o.serial = 0x5EED1234u;
    for (int i = 0; i < 16; i++) {
        o.disk_guid[i] = (uint8_t)(0x11 * i + 1);
        o.part_guid[i] = (uint8_t)(0x13 * i + 7);
    }
    o.disk_guid[7] = 0x40;
    o.part_guid[7] = 0x40;
    o.disk_guid[8] = 0x80;
    o.part_guid[8] = 0x80;

    const char *why = "";
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int err = sf_mkfs(&p.bd, &o, &why);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (err) {
        fprintf(stderr, "mkfs_img: %s%s%s\n", sf_strerror(err), *why ? ": " : "", why);
        return 1;
    }
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("formatted %s: %llu sectors of %u bytes in %.1f ms\n", argv[1],
           (unsigned long long)p.bd.sector_count, ss, ms);
    free(o.buf);
    close(p.fd);
    return 0;
}
