/* TARGET handling for the CLI: open the device, find the file system's sector size,
 * mount with buffers from the heap, and report failures in one line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "target.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void *target_alloc(const struct sf_bdev *bd, size_t n)
{
    size_t align = bd->mem_align > 64 ? bd->mem_align : 64;
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

int target_open_dev(struct sf_filebd *f, const char *path, unsigned filebd_flags,
                    uint32_t sector_size, uint64_t create_size)
{
    int err = sf_filebd_open(f, path, filebd_flags, sector_size, create_size);
    struct stat st;

    if (!err)
        return 0;
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

int target_open(struct target *t, const char *path, unsigned flags, uint32_t partition)
{
    struct sf_vol_cfg cfg;
    uint8_t type = SF_FS_NONE;
    uint32_t ss = 0;
    const uint32_t cache_bytes = 2u << 20;   /* metadata cache: a 10,000-file directory fits */
    void *probe;
    int err;

    memset(t, 0, sizeof *t);
    t->path = path;
    if (target_open_dev(&t->fbd, path, (flags & TARGET_RDONLY) ? SF_FILEBD_RDONLY : 0, 0, 0))
        return CLI_ERR;
    t->opened = 1;

    probe = target_alloc(&t->fbd.bd, 4096);
    err = sf_probe(&t->fbd.bd, partition, probe, &type, &ss);
    free(probe);
    if (err) {
        cli_err("%s: cannot read: %s", path, sf_strerror(err));
        goto fail;
    }
    if (type == SF_FS_NONE) {
        if (partition)
            cli_err("%s: no FAT or exFAT file system in partition %u", path, partition);
        else
            cli_err("%s: no FAT or exFAT file system found", path);
        goto fail;
    }
    if (ss != t->fbd.bd.sector_size) {
        if (t->fbd.is_blockdev) {
            cli_err("%s: file system has %u-byte sectors but the device has %u-byte sectors",
                    path, ss, t->fbd.bd.sector_size);
            goto fail;
        }
        err = sf_filebd_set_sector_size(&t->fbd, ss);
        if (err) {
            cli_err("%s: cannot use %u-byte sectors: %s", path, ss, sf_strerror(err));
            goto fail;
        }
    }

    t->cache = target_alloc(&t->fbd.bd, cache_bytes);
    t->upcase = malloc(SF_UPCASE_BUF_SIZE);
    if (!t->upcase) {
        cli_err("out of memory");
        goto fail;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &t->fbd.bd;
    cfg.buf = t->cache;
    cfg.buf_size = cache_bytes;
    cfg.upcase_buf = t->upcase;
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
    if (t->opened) {
        err = sf_filebd_close(&t->fbd);
        if (err && !rc) {
            cli_err("%s: close failed: %s", t->path, sf_strerror(err));
            rc = CLI_ERR;
        }
        t->opened = 0;
    }
    free(t->cache);
    free(t->upcase);
    t->cache = NULL;
    t->upcase = NULL;
    return rc;
}
