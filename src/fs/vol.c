/* Volumes of any supported file system: mount (partition, detection, dispatch), the dirty
 * flag, unmount, information. The file-system-specific parts are exfat_vol.c and fat_vol.c. */
#include "fs/fs.h"
#include "fs/exfat.h"
#include "fs/fat.h"
#include "fs/part.h"
#include "util/upcase.h"

uint16_t vol_upcase(const struct sf_vol *v, uint16_t c)
{
    if (!SF_HAVE_EXFAT && !SF_HAVE_LFN)    /* 8.3 names only: ASCII folding, no table */
        return c >= 'a' && c <= 'z' ? (uint16_t)(c - 32u) : c;
    if (v->cfg.upcase_buf && !v->upcase_builtin)
        return v->cfg.upcase_buf[c];
    return sf_upcase_builtin(c);
}

sf_time_ms vol_now(const struct sf_vol *v)
{
    if (v->cfg.clock)
        return v->cfg.clock(v->cfg.clock_ctx);
    return 315532800000LL; /* 1980-01-01 00:00:00 UTC */
}

const char *sf_mount_error(const struct sf_vol *v)
{
    return v->why ? v->why : "";
}

static int set_dirty(struct sf_vol *v, int dirty)
{
    return vol_is_exfat(v) ? exfat_set_dirty(v, dirty) : fat_set_dirty(v, dirty);
}

int sf_mount(struct sf_vol *v, const struct sf_vol_cfg *cfg)
{
    struct sf_part part;
    uint8_t *buf;
    int err, kind;

    memset(v, 0, sizeof *v);
    if (!cfg || !cfg->bd || !cfg->buf)
        return SF_EINVAL;
    v->cfg = *cfg;
    v->bd = cfg->bd;
    v->rdonly = !SF_HAVE_WRITE || (cfg->flags & SF_VOL_RDONLY) ||
                (cfg->bd->flags & SF_BDEV_READONLY);
    if (cfg->bd->sector_size != 512 && cfg->bd->sector_size != 4096)
        return SF_EINVAL;
    if (cfg->buf_size < SF_VOL_BUF_MIN(cfg->bd->sector_size)) {
        v->why = SF_WHY("metadata buffer smaller than two sectors");
        return SF_ENOMEM;
    }
    buf = cfg->buf;
    err = sf_part_find(cfg->bd, cfg->partition, buf, &part);
    if (err == SF_ENOENT) {
        v->why = cfg->partition ? SF_WHY("no such partition")
                                : SF_WHY("no exFAT or FAT file system found");
        return SF_ENOENT;
    }
    if (err) {
        if (err == SF_ECORRUPT)
            v->why = SF_WHY("partition table is inconsistent");
        else if (err == SF_ENOTSUP)
            v->why = SF_WHY("GPT partition table: GPT support is not built in (SF_NO_GPT)");
        return err;
    }
    if (part.first != 0 || part.count != cfg->bd->sector_count) {
        if ((err = sf_bdev_window_init(&v->win, cfg->bd, part.first, part.count)))
            return err;
        v->bd = &v->win.bd;
    }
    v->info.volume_offset = part.first * cfg->bd->sector_size;
    if ((err = sf_bdev_read(v->bd, 0, buf, 1)))
        return err;
    kind = sf_boot_sector_kind(buf, cfg->bd->sector_size);
    v->next_free = SF_FIRST_CLUSTER;
    v->free_clusters = -1;
    if (kind == SF_FS_EXFAT) {
        err = exfat_mount(v, buf);
    } else if (kind) {
        err = fat_mount(v, buf);
    } else {
        v->why = SF_WHY("no exFAT or FAT file system found");
        err = SF_ENOENT;
    }
    if (err) {
        v->fs_type = SF_FS_NONE;
        return err;
    }
    v->info.fs_type = v->fs_type;
    v->why = "";
    return 0;
}

int vol_flush(struct sf_vol *v)
{
    if (!v->unflushed)
        return 0;
    v->unflushed = 0;
    int err = sf_bdev_flush(v->bd);
    if (err)
        v->unflushed = 1;
    return err;
}

int vol_begin_write(struct sf_vol *v)
{
    int err;
    if (!SF_HAVE_WRITE || v->rdonly)
        return SF_EROFS;
    if (v->dirty_set)
        return 0;
    v->dirty_set = 1;
    if (v->info.dirty)          /* already dirty on disk: leave it for a checker */
        return 0;
    if ((err = set_dirty(v, 1)) || (err = vol_flush(v))) {
        v->dirty_set = 0;
        return err;
    }
    return 0;
}

/* Everything is on the medium: flush, then clear the dirty flag we set, then flush. */
int vol_clean(struct sf_vol *v)
{
    int err;
    if (!v->dirty_set)
        return 0;
    if ((err = vol_flush(v)))
        return err;
    if (!v->info.dirty && ((err = set_dirty(v, 0)) || (err = vol_flush(v))))
        return err;
    v->dirty_set = 0;
    return 0;
}

int vol_end_write(struct sf_vol *v)
{
    return v->writers ? 0 : vol_clean(v);
}

int sf_unmount(struct sf_vol *v)
{
    int err = 0, e;
    while (v->open_files) {
        struct sf_file *f = v->open_files;
        e = sf_close(f);
        if (e && !err)
            err = e;
        if (v->open_files == f)   /* close failed to unlink: do not loop */
            v->open_files = f->next_open;
    }
    if (SF_HAVE_WRITE && !v->rdonly) {
        e = vol_clean(v);
        if (e && !err)
            err = e;
    }
    v->fs_type = SF_FS_NONE;
    return err;
}

int sf_vol_info(struct sf_vol *v, struct sf_vol_info *info)
{
    if (v->fs_type == SF_FS_NONE)
        return SF_EBADF;
    *info = v->info;
    return 0;
}

int64_t sf_vol_free_clusters(struct sf_vol *v)
{
    if (v->fs_type == SF_FS_NONE)
        return SF_EBADF;
    if (v->free_clusters < 0)
        v->free_clusters = vol_is_exfat(v) ? exfat_count_free(v) : fat_count_free(v);
    return v->free_clusters;
}
