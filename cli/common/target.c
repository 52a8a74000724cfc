/* TARGET handling for the CLI: open the device, find the file system's sector size,
 * mount with buffers from the heap, and report failures in one line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "target.h"
#include "fault_env.h"
#include "cli.h"
#include "tools/sim_target.h"
#include "fs/part.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>

/* I/O buffers start on a page even where O_DIRECT would take less (statx dio_mem_align):
 * a 1 MiB write from a buffer that is not page-aligned spans 257 pages and the kernel splits
 * it; on this project's VM disk such writes took 4x longer each (device p50 67 ms against
 * 17 ms) and `log --raw` ran at 72 MB/s against 122-229 MB/s page-aligned. */
void *target_alloc(const struct sf_bdev *bd, size_t n)
{
    size_t page = 4096;
    size_t align = bd->mem_align > page ? bd->mem_align : page;
    void *p;

    n = (n + align - 1) / align * align;
    p = aligned_alloc(align, n);
    if (!p) {
        fprintf(stderr, "streamfat: out of memory\n");
        exit(CLI_ERR);
    }
    memset(p, 0, n);
    return p;
}

const char *target_dev_path(const char *path)
{
    struct sf_simbd_model m;
    struct sf_simbd_state *st;
    uint32_t ss;

    return sim_target_is(path) ? sim_target_backing(path, &ss, &m, &st) : path;
}

/* A sim: spec: its storage, buffered (O_DIRECT buys nothing there), with the spec's sector
 * size unless the caller names one. The model goes to s (attached by sim_attach). */
static int open_sim_storage(struct sf_filebd *f, const char *spec, unsigned filebd_flags,
                            uint32_t sector_size, struct sf_simbd *s)
{
    struct sf_simbd_model m;
    struct sf_simbd_state *st;
    uint32_t ss;
    const char *p = sim_target_backing(spec, &ss, &m, &st);
    int err;

    if (!p)
        return CLI_ERR;
    err = sf_filebd_open(f, p, filebd_flags & SF_FILEBD_RDONLY, sector_size ? sector_size : ss, 0);
    if (err) {
        cli_err("%s: cannot open its storage: %s", spec, sf_strerror(err));
        return CLI_ERR;
    }
    if (s) {
        s->m = m;
        s->st = st;
    }
    return 0;
}

/* Put the timing model over the (settled) storage device. */
/* Slots at the asynchronous device: the stream's queue depth of data plus one for a
 * checkpoint's FLUSH, so that the data keeps its full depth while a flush is at the device. */
static unsigned aio_depth(unsigned queue_depth)
{
    return (queue_depth ? queue_depth : 4) + 1;
}

static int sim_attach(struct target *t)
{
    struct sf_simbd_model m = t->sim.m;
    struct sf_simbd_state *st = t->sim.st;

    if (sf_simbd_init(&t->sim, &t->fbd.bd, &m, st)) {
        cli_err("%s: bad sim: model", t->path);
        return CLI_ERR;
    }
    t->is_sim = 1;
    return 0;
}

/* Two writers on one image would each trust their own view of the FAT or bitmap and corrupt
 * the volume. A block device is held with O_EXCL (host/bdev/file.c); an image file opened for
 * writing gets an exclusive advisory lock (flock), held until it is closed. Readers take no
 * lock: ls or info while a logger runs is allowed (they may see a state a moment old). A
 * file system without flock (EINVAL, ENOLCK) goes unlocked. */
static int lock_image(struct sf_filebd *f, const char *path, unsigned filebd_flags)
{
    if (f->is_blockdev || (filebd_flags & SF_FILEBD_RDONLY) ||
        flock(f->fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
        return 0;
    cli_err("%s: in use: another process is writing to it (it holds the image's lock)", path);
    sf_filebd_close(f);
    return CLI_ERR;
}

int target_open_dev(struct sf_filebd *f, const char *path, unsigned filebd_flags,
                    uint32_t sector_size, uint64_t create_size)
{
    int err;
    struct stat st;

    if (sim_target_is(path))
        return open_sim_storage(f, path, filebd_flags, sector_size, NULL);
    err = sf_filebd_open(f, path, filebd_flags, sector_size, create_size);
    if (!err)
        return lock_image(f, path, filebd_flags);
    if (err == SF_EINVAL && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size % 512 != 0)
        cli_err("%s: not a disk image (its size, %lld bytes, is not a multiple of 512)",
                path, (long long)st.st_size);
    else if (err == SF_EINVAL && stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
             !S_ISBLK(st.st_mode))
        cli_err("%s: not a regular file or block device", path);
    else if (err == SF_EBUSY)
        cli_err("%s: device is busy (mounted or in use)", path);
    else
        cli_err("%s: cannot open: %s", path, sf_strerror(err));
    return CLI_ERR;
}

/* Open the device with O_DIRECT if asked, falling back to buffered I/O when the host file
 * system refuses O_DIRECT. */
static int open_dev(struct target *t, const char *path, unsigned flags)
{
    unsigned ff = (flags & TARGET_RDONLY) ? SF_FILEBD_RDONLY : 0;
    int err;

    if (sim_target_is(path))
        return open_sim_storage(&t->fbd, path, ff, 0, &t->sim);
    if (flags & TARGET_DIRECT) {
        err = sf_filebd_open(&t->fbd, path, ff | SF_FILEBD_DIRECT, 0, 0);
        if (!err)
            return lock_image(&t->fbd, path, ff);
        if (err != SF_ENOTSUP && err != SF_EINVAL)
            return target_open_dev(&t->fbd, path, ff | SF_FILEBD_DIRECT, 0, 0);
        /* SF_EINVAL may also mean "no image at all": the buffered open below tells. */
        if (sf_filebd_open(&t->fbd, path, ff, 0, 0) == 0) {
            if (lock_image(&t->fbd, path, ff))
                return CLI_ERR;
            cli_err("note: %s: O_DIRECT not supported here; using buffered I/O", path);
            return 0;
        }
    }
    return target_open_dev(&t->fbd, path, ff, 0, 0);
}

/* A fresh t with its device open; nothing stacked on it yet. */
static int target_start(struct target *t, const char *path, unsigned flags)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    if (open_dev(t, path, flags))
        return CLI_ERR;
    t->opened = 1;
    return 0;
}

/* Over the settled storage device: a sim: target's timing model, or with TARGET_ASYNC the
 * asynchronous device (it copies the geometry, so the sector size must be settled first). */
static int stack_device(struct target *t, const char *path, unsigned flags,
                        unsigned queue_depth)
{
    int err;

    if (sim_target_is(path))
        return sim_attach(t);    /* asynchronous by itself: TARGET_ASYNC is not needed */
    if (!(flags & TARGET_ASYNC))
        return 0;
    err = sf_aiobd_init(&t->aio, &t->fbd, aio_depth(queue_depth),
                        (flags & TARGET_NO_URING) ? SF_AIOBD_NO_URING : 0);
    if (err) {
        cli_err("%s: cannot set up asynchronous I/O: %s", path, sf_strerror(err));
        return CLI_ERR;
    }
    t->async = 1;
    return 0;
}

/* The file system's sector size differs from the one the image was opened with. With
 * O_DIRECT the host may refuse it (its O_DIRECT offset alignment is larger); then reopen
 * buffered. */
static int set_sector_size(struct target *t, const char *path, unsigned flags, uint32_t ss)
{
    int err = sf_filebd_set_sector_size(&t->fbd, ss);

    if (err == SF_EINVAL && t->fbd.direct) {
        sf_filebd_close(&t->fbd);
        t->opened = 0;
        cli_err("note: %s: O_DIRECT refused for %u-byte sectors; using buffered I/O", path, ss);
        if (target_open_dev(&t->fbd, path, (flags & TARGET_RDONLY) ? SF_FILEBD_RDONLY : 0,
                            0, 0))
            return CLI_ERR;
        t->opened = 1;
        err = sf_filebd_set_sector_size(&t->fbd, ss);
    }
    if (err) {
        cli_err("%s: cannot use %u-byte sectors: %s", path, ss, sf_strerror(err));
        return CLI_ERR;
    }
    return 0;
}

/* The file device promises O_DIRECT users 4096-byte buffer alignment, but the volume's
 * metadata cache keeps one sector per slot, so on a 512-byte-sector volume half its slots
 * are only 512-aligned and the device would refuse them. Where the kernel reports the
 * real O_DIRECT memory alignment (statx STATX_DIOALIGN; usually 512) and a sector
 * satisfies it, use that instead. */
static void relax_dio_align(struct sf_filebd *f)
{
#ifdef STATX_DIOALIGN
    struct statx sx;

    if (!f->direct || statx(f->fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) != 0 ||
        !(sx.stx_mask & STATX_DIOALIGN) || sx.stx_dio_mem_align == 0)
        return;
    if ((sx.stx_dio_mem_align & (sx.stx_dio_mem_align - 1)) == 0 &&
        sx.stx_dio_mem_align <= f->bd.sector_size && sx.stx_dio_mem_align < f->bd.mem_align)
        f->bd.mem_align = sx.stx_dio_mem_align < 64 ? 64 : sx.stx_dio_mem_align;
#else
    (void)f;
#endif
}

int target_open(struct target *t, const char *path, unsigned flags, uint32_t partition)
{
    return target_open_async(t, path, flags & ~TARGET_ASYNC, partition, 0);
}

int target_locate(struct target *t, const char *path, unsigned flags, uint32_t partition,
                  uint8_t *type)
{
    uint32_t ss = 0;
    void *probe;
    int err;

    if (target_start(t, path, flags))
        return CLI_ERR;
    probe = target_alloc(&t->fbd.bd, 4096);
    err = sf_probe(&t->fbd.bd, partition, probe, type, &ss);
    free(probe);
    if (err) {
        cli_err("%s: cannot read: %s", path, sf_strerror(err));
        goto fail;
    }
    if (*type == SF_FS_NONE)
        return 0;                /* the caller decides: mount refuses, fsck looks anyway */
    if (ss != t->fbd.bd.sector_size) {
        if (t->fbd.is_blockdev) {
            cli_err("%s: file system has %u-byte sectors but the device has %u-byte sectors",
                    path, ss, t->fbd.bd.sector_size);
            goto fail;
        }
        if (set_sector_size(t, path, flags, ss))
            goto fail;
    }
    relax_dio_align(&t->fbd);
    if (t->fbd.direct && t->fbd.bd.mem_align > t->fbd.bd.sector_size) {
        /* tmpfs and older kernels do not say what O_DIRECT needs: the metadata cache's
         * sector slots cannot promise more than sector alignment, so go buffered. */
        uint32_t fs_ss = t->fbd.bd.sector_size;
        sf_filebd_close(&t->fbd);
        t->opened = 0;
        cli_err("note: %s: O_DIRECT buffer alignment unknown here; using buffered I/O", path);
        if (target_open_dev(&t->fbd, path, (flags & TARGET_RDONLY) ? SF_FILEBD_RDONLY : 0,
                            0, 0))
            return CLI_ERR;
        t->opened = 1;
        if (t->fbd.bd.sector_size != fs_ss && set_sector_size(t, path, flags, fs_ss))
            goto fail;
    }
    return 0;

fail:
    target_close(t);
    return CLI_ERR;
}

struct sf_bdev *target_volume_bd(struct target *t, uint32_t partition)
{
    void *buf = target_alloc(&t->fbd.bd, 4096);
    struct sf_part part;
    int err = sf_part_find(&t->fbd.bd, partition, buf, &part);

    free(buf);
    if (err == SF_ENOENT) {
        cli_err("%s: no FAT or exFAT file system found", t->path);
        return NULL;
    }
    if (err) {
        cli_err("%s: %s", t->path, sf_strerror(err));
        return NULL;
    }
    if (part.scheme == SF_PART_NONE)
        return &t->fbd.bd;
    if ((err = sf_bdev_window_init(&t->win, &t->fbd.bd, part.first, part.count))) {
        cli_err("%s: partition: %s", t->path, sf_strerror(err));
        return NULL;
    }
    return &t->win.bd;
}

/* The mount step, over what target_locate found. sf_mount finds the partition itself
 * (cfg.partition) on the whole device, so that the offsets it reports are the device's. */
int target_open_async(struct target *t, const char *path, unsigned flags, uint32_t partition,
                      unsigned queue_depth)
{
    struct sf_vol_cfg cfg;
    uint8_t type = SF_FS_NONE;
    const uint32_t cache_bytes = 2u << 20;   /* metadata cache: a 10,000-file directory fits */
    int err;

    if (target_locate(t, path, flags, partition, &type))
        return CLI_ERR;
    if (type == SF_FS_NONE) {
        if (partition)
            cli_err("%s: no FAT or exFAT file system in partition %u", path, partition);
        else
            cli_err("%s: no FAT or exFAT file system found", path);
        goto fail;
    }
    if (stack_device(t, path, flags, queue_depth))
        goto fail;

    t->cache = target_alloc(target_bd(t), cache_bytes);
    t->upcase = malloc(SF_UPCASE_BUF_SIZE);
    t->fat_cache = calloc(1, 64u << 10);
    if (!t->upcase || !t->fat_cache) {
        cli_err("out of memory");
        goto fail;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = fault_env_wrap(target_bd(t));   /* STREAMFAT_FAULT: tests only */
    cfg.buf = t->cache;
    cfg.buf_size = cache_bytes;
    cfg.upcase_buf = t->upcase;
    cfg.fat_cache = t->fat_cache;
    cfg.fat_cache_size = 64u << 10;
    cfg.clock = cli_clock;
    cfg.utc_offset_min = cli_utc_offset();
    cfg.flags = (flags & TARGET_RDONLY) ? SF_VOL_RDONLY : 0;
    cfg.partition = partition;
    err = sf_mount(&t->vol, &cfg);
    if (err) {
        const char *why = sf_mount_error(&t->vol);
        if (why && *why)
            cli_err("%s: cannot mount: %s (%s)", path, sf_strerror(err), why);
        else
            cli_err("%s: cannot mount: %s", path, sf_strerror(err));
        goto fail;
    }
    t->mounted = 1;
    return 0;

fail:
    target_close(t);
    return CLI_ERR;
}

int target_open_raw(struct target *t, const char *path, unsigned flags, unsigned queue_depth)
{
    if (target_start(t, path, flags))
        return CLI_ERR;
    if (stack_device(t, path, flags, queue_depth)) {
        target_close(t);
        return CLI_ERR;
    }
    return 0;
}

int target_each_path(char **args, int n, uint32_t partition, int keep_going,
                     int (*fn)(struct target *t, const char *path, int flag), int flag)
{
    struct target t;
    int rc = 0, i;

    if (target_open(&t, args[0], 0, partition))
        return CLI_ERR;
    for (i = 1; i < n && (rc == 0 || keep_going); i++)
        if (fn(&t, args[i], flag))
            rc = CLI_ERR;
    if (target_close(&t))
        rc = CLI_ERR;
    return rc;
}

/* A close step's error; only the first of them is reported. */
static void close_failed(const struct target *t, int err, int *rc)
{
    if (err && !*rc) {
        cli_err("%s: close failed: %s", t->path, sf_strerror(err));
        *rc = CLI_ERR;
    }
}

int target_close(struct target *t)
{
    int rc = 0, err;

    if (t->mounted) {
        err = sf_unmount(&t->vol);
        if (err) {
            cli_err("%s: unmount failed: %s", t->path, sf_strerror(err));
            rc = CLI_ERR;
        }
        t->mounted = 0;
    }
    if (t->async) {
        close_failed(t, sf_aiobd_close(&t->aio), &rc);
        t->async = 0;
    }
    if (t->is_sim) {
        sf_simbd_drain(&t->sim);     /* requests in flight complete before the storage goes */
        t->is_sim = 0;
    }
    if (t->opened) {
        close_failed(t, sf_filebd_close(&t->fbd), &rc);
        t->opened = 0;
    }
    free(t->cache);
    free(t->upcase);
    free(t->fat_cache);
    t->cache = NULL;
    t->upcase = NULL;
    t->fat_cache = NULL;
    return rc;
}
