/* File block device (Linux): an image file or a block device node through pread/pwrite,
 * optionally O_DIRECT. Contract in include/streamfat/filebd.h. Not part of the core.
 *
 * Sections: errno mapping; I/O callbacks; geometry; open/close. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>

#include "streamfat/sf.h"
#include "streamfat/filebd.h"

#define FILEBD_CHUNK (1u << 30)     /* largest single pread/pwrite */
#define FILEBD_DIRECT_ALIGN 4096u   /* buffer alignment promised to O_DIRECT users */

/* ---- errno mapping ---- */

/* Errors of reads, writes, flushes: the device failed, except for a few that say why. */
static int err_io(int e)
{
    switch (e) {
    case ENOSPC: return SF_ENOSPC;      /* sparse image on a full host file system */
    case EROFS:  return SF_EROFS;
    case EINVAL: return SF_EINVAL;      /* O_DIRECT alignment the checks did not foresee */
    default:     return SF_EIO;
    }
}

static int err_open(int e)
{
    switch (e) {
    case ENOENT:       return SF_ENOENT;
    case EACCES:
    case EPERM:        return SF_EPERM;
    case EROFS:        return SF_EROFS;
    case EBUSY:        return SF_EBUSY;
    case EISDIR:       return SF_EISDIR;
    case ENOTDIR:      return SF_ENOTDIR;
    case ENAMETOOLONG: return SF_ENAMETOOLONG;
    case EEXIST:       return SF_EEXIST;
    case ENOMEM:       return SF_ENOMEM;
    case ENOSPC:       return SF_ENOSPC;
    case EFBIG:        return SF_EFBIG;
    case EINVAL:       return SF_EINVAL;
    default:           return SF_EIO;
    }
}

/* ---- I/O callbacks ---- */

static struct sf_filebd *filebd(struct sf_bdev *bd)
{
    return (struct sf_filebd *)bd;
}

static int misaligned(const struct sf_filebd *f, const void *buf)
{
    return f->direct && ((uintptr_t)buf % f->bd.mem_align) != 0;
}

static int file_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sf_filebd *f = filebd(bd);
    uint8_t *p = buf;
    uint64_t off = lba * bd->sector_size, left = (uint64_t)count * bd->sector_size;

    if (misaligned(f, buf))
        return SF_EINVAL;
    while (left) {
        ssize_t n = pread(f->fd, p, left > FILEBD_CHUNK ? FILEBD_CHUNK : (size_t)left, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_io(errno);
        }
        if (n == 0)
            return SF_EIO;              /* the file shrank under us */
        p += n;
        off += (uint64_t)n;
        left -= (uint64_t)n;
    }
    return 0;
}

static int file_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sf_filebd *f = filebd(bd);
    const uint8_t *p = buf;
    uint64_t off = lba * bd->sector_size, left = (uint64_t)count * bd->sector_size;

    if (bd->flags & SF_BDEV_READONLY)
        return SF_EROFS;
    if (misaligned(f, buf))
        return SF_EINVAL;
    while (left) {
        ssize_t n = pwrite(f->fd, p, left > FILEBD_CHUNK ? FILEBD_CHUNK : (size_t)left, (off_t)off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_io(errno);
        }
        if (n == 0)
            return SF_EIO;
        p += n;
        off += (uint64_t)n;
        left -= (uint64_t)n;
    }
    return 0;
}

/* fdatasync is enough for an image (its size does not change); a block device node gets
 * fsync, which is what flushes the device's write cache there. */
static int file_flush(struct sf_bdev *bd)
{
    struct sf_filebd *f = filebd(bd);
    int r;

    if (bd->flags & SF_BDEV_READONLY)
        return 0;
    do
        r = f->is_blockdev ? fsync(f->fd) : fdatasync(f->fd);
    while (r < 0 && errno == EINTR);
    return r < 0 ? err_io(errno) : 0;
}

/* Best effort: a host that cannot punch holes or discard simply keeps the data. */
static int file_trim(struct sf_bdev *bd, uint64_t lba, uint64_t count)
{
    struct sf_filebd *f = filebd(bd);
    uint64_t off = lba * bd->sector_size, len = count * bd->sector_size;
    int r;

    if (bd->flags & SF_BDEV_READONLY)
        return SF_EROFS;
    do {
        if (f->is_blockdev) {
            uint64_t range[2] = { off, len };
            r = ioctl(f->fd, BLKDISCARD, range);
        } else {
            r = fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
                          (off_t)len);
        }
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        if (errno == EOPNOTSUPP || errno == ENOTTY || errno == ENOSYS || errno == EINVAL)
            return 0;
        return err_io(errno);
    }
    return 0;
}

/* ---- geometry ---- */

/* The file system's O_DIRECT offset alignment for this file, 0 when unknown. */
static uint32_t dio_offset_align(int fd)
{
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN))
        return sx.stx_dio_offset_align;
#else
    (void)fd;
#endif
    return 0;
}

static uint32_t direct_mem_align(uint32_t sector_size)
{
    return sector_size > FILEBD_DIRECT_ALIGN ? sector_size : FILEBD_DIRECT_ALIGN;
}

/* Sector size of an image file: it must divide the file, and with O_DIRECT it must be a
 * multiple of what the host file system accepts as an O_DIRECT offset. */
static int image_geometry(struct sf_filebd *f, uint32_t sector_size)
{
    if (sector_size != 512 && sector_size != 4096)
        return SF_EINVAL;
    if (f->bytes == 0 || f->bytes % sector_size)
        return SF_EINVAL;
    if (f->direct) {
        uint32_t a = dio_offset_align(f->fd);
        if (a && sector_size % a)
            return SF_EINVAL;
    }
    f->bd.sector_size = sector_size;
    f->bd.sector_count = f->bytes / sector_size;
    f->bd.align_sectors = 1;
    f->bd.mem_align = f->direct ? direct_mem_align(sector_size) : 1;
    return 0;
}

static int blockdev_geometry(struct sf_filebd *f, uint32_t sector_size)
{
    uint64_t bytes = 0;
    int lss = 0;
    unsigned int iomin = 0, ioopt = 0;
    uint32_t ss;

    if (ioctl(f->fd, BLKGETSIZE64, &bytes) < 0 || ioctl(f->fd, BLKSSZGET, &lss) < 0)
        return err_io(errno);
    if (lss < 512 || (lss & (lss - 1)))
        return SF_EIO;
    ss = sector_size ? sector_size : (uint32_t)lss;
    /* A larger sector than the device's is fine (4096 on a 512-byte device); a smaller
     * one cannot be written on its own. */
    if ((ss != 512 && ss != 4096) || ss % (uint32_t)lss)
        return SF_EINVAL;
    if (bytes < ss)
        return SF_EINVAL;
    (void)ioctl(f->fd, BLKIOMIN, &iomin);
    (void)ioctl(f->fd, BLKIOOPT, &ioopt);
    f->bytes = bytes;
    f->bd.sector_size = ss;
    f->bd.sector_count = bytes / ss;       /* a tail shorter than a sector is not used */
    if (ioopt >= ss && ioopt % ss == 0)
        f->bd.align_sectors = ioopt / ss;
    else if (iomin >= ss && iomin % ss == 0)
        f->bd.align_sectors = iomin / ss;
    else
        f->bd.align_sectors = 1;
    f->bd.mem_align = f->direct ? direct_mem_align(ss) : 1;
    return 0;
}

/* ---- open / close ---- */

int sf_filebd_open(struct sf_filebd *f, const char *path, unsigned flags,
                   uint32_t sector_size, uint64_t create_size)
{
    struct stat st;
    int oflags, fd = -1, created = 0, err;
    uint32_t css = sector_size ? sector_size : 512;

    if (!f)
        return SF_EINVAL;
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    if (!path || (flags & ~(SF_FILEBD_RDONLY | SF_FILEBD_DIRECT | SF_FILEBD_CREATE)) ||
        (sector_size && sector_size != 512 && sector_size != 4096) ||
        ((flags & SF_FILEBD_RDONLY) && (flags & SF_FILEBD_CREATE)))
        return SF_EINVAL;

    oflags = O_CLOEXEC | ((flags & SF_FILEBD_RDONLY) ? O_RDONLY : O_RDWR) |
             ((flags & SF_FILEBD_DIRECT) ? O_DIRECT : 0);

    if (stat(path, &st) < 0) {
        if (errno != ENOENT || !(flags & SF_FILEBD_CREATE))
            return err_open(errno);
        if (create_size == 0 || create_size % css || create_size > (uint64_t)INT64_MAX)
            return SF_EINVAL;
        fd = open(path, oflags | O_CREAT | O_EXCL, 0644);
        if (fd < 0 && errno != EEXIST)
            return errno == EINVAL && (flags & SF_FILEBD_DIRECT) ? SF_ENOTSUP : err_open(errno);
        created = fd >= 0;
    }
    if (fd < 0) {
        if (stat(path, &st) < 0)
            return err_open(errno);
        if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
            return SF_EINVAL;
        /* O_EXCL on a block device node: refused with EBUSY while mounted or held by
         * another exclusive opener. */
        fd = open(path, oflags | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
        if (fd < 0)
            return errno == EINVAL && (flags & SF_FILEBD_DIRECT) ? SF_ENOTSUP : err_open(errno);
    }
    if (fstat(fd, &st) < 0) {
        err = err_open(errno);
        goto fail;
    }
    f->fd = fd;
    f->direct = (flags & SF_FILEBD_DIRECT) != 0;
    f->is_blockdev = S_ISBLK(st.st_mode);
    if (!f->is_blockdev && !S_ISREG(st.st_mode)) {
        err = SF_EINVAL;                /* replaced by something else since the stat */
        goto fail;
    }

    if (f->is_blockdev) {
        err = blockdev_geometry(f, sector_size);
    } else {
        /* A new file, or an existing empty one that CREATE may size. */
        if ((created || st.st_size == 0) && (flags & SF_FILEBD_CREATE)) {
            if (create_size == 0 || create_size % css || create_size > (uint64_t)INT64_MAX) {
                err = SF_EINVAL;
                goto fail;
            }
            if (ftruncate(fd, (off_t)create_size) < 0) {
                err = err_open(errno);
                goto fail;
            }
            st.st_size = (off_t)create_size;
        }
        f->bytes = (uint64_t)st.st_size;
        err = image_geometry(f, css);
    }
    if (err)
        goto fail;
    f->bd.flags = (flags & SF_FILEBD_RDONLY) ? SF_BDEV_READONLY : 0;
    f->bd.read = file_read;
    f->bd.write = file_write;
    f->bd.flush = file_flush;
    f->bd.trim = file_trim;
    return 0;

fail:
    close(fd);
    if (created)
        (void)unlink(path);
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    return err;
}

int sf_filebd_set_sector_size(struct sf_filebd *f, uint32_t sector_size)
{
    if (!f || f->fd < 0 || f->is_blockdev)
        return SF_EINVAL;
    return image_geometry(f, sector_size);
}

int sf_filebd_close(struct sf_filebd *f)
{
    int r;

    if (!f || f->fd < 0)
        return SF_EINVAL;
    r = close(f->fd);   /* not retried on EINTR: on Linux the descriptor is gone anyway */
    f->fd = -1;
    f->bd.read = NULL;
    f->bd.write = NULL;
    f->bd.flush = NULL;
    f->bd.trim = NULL;
    return r < 0 && errno == EIO ? SF_EIO : 0;
}
