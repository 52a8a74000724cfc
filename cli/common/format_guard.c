/* Before formatting: is there anything on the target that formatting would destroy
 * (format_guard.h)? Sections: the first MiB; FAT and exFAT volumes; partition tables; other
 * file systems; the check. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "format_guard.h"
#include "target.h"
#include "cli.h"
#include "fs/part.h"        /* sf_boot_sector_kind */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOOK_BYTES (1u << 20)   /* what is read: every partition table and every superblock
                                   we name lies in the first MiB */

/* ---- the first MiB ------------------------------------------------------------------ */

/* The first min(size, 1 MiB) bytes into buf; their count, or -1. */
static ssize_t read_head(int fd, uint8_t *buf, uint64_t size)
{
    size_t want = size < LOOK_BYTES ? (size_t)size : LOOK_BYTES, got = 0;

    while (got < want) {
        ssize_t r = pread(fd, buf + got, want - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -1 : (ssize_t)got;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int64_t first_nonzero(const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return (int64_t)i;
    return -1;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ---- FAT and exFAT volumes ---------------------------------------------------------- */

static int is_log_name(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".SFL") == 0;
}

/* Log files (*.SFL) under path, directories included, to a depth of 8. */
static uint64_t count_logs(struct sf_vol *v, const char *path, int depth)
{
    struct sf_dir d;
    struct sf_stat st;
    uint64_t n = 0;
    char sub[1024];

    if (depth > 8 || sf_opendir(v, &d, path))
        return 0;
    while (sf_readdir(&d, &st) == 1) {
        if (!(st.attr & SF_ATTR_DIR)) {
            n += is_log_name(st.name);
        } else if (strcmp(st.name, ".") && strcmp(st.name, "..") &&
                   (size_t)snprintf(sub, sizeof sub, "%s/%s", strcmp(path, "/") ? path : "",
                                    st.name) < sizeof sub) {
            n += count_logs(v, sub, depth + 1);
        }
    }
    sf_closedir(&d);
    return n;
}

/* A FAT or exFAT volume on path (superfloppy or in a partition), described into what:
 * 2 found and mounted, 1 found but damaged, 0 none. */
static int describe_volume(const char *path, char *what, size_t n)
{
    static uint8_t probe[4096] __attribute__((aligned(4096)));
    struct sf_filebd fb;
    struct sf_vol vol;
    struct sf_vol_info vi;
    uint8_t type = SF_FS_NONE;
    uint32_t ss = 0;
    void *cache;
    int found = 0;

    if (sf_filebd_open(&fb, path, SF_FILEBD_RDONLY, 0, 0))
        return 0;
    if (sf_probe(&fb.bd, 0, probe, &type, &ss) || type == SF_FS_NONE) {
        sf_filebd_close(&fb);
        return 0;
    }
    cache = aligned_alloc(4096, 16 * 4096);
    if (ss != fb.bd.sector_size && (fb.is_blockdev || sf_filebd_set_sector_size(&fb, ss)))
        ss = 0;                        /* cannot be mounted here: still a volume */
    struct sf_vol_cfg cfg = { .bd = &fb.bd, .buf = cache, .buf_size = 16 * 4096,
                              .flags = SF_VOL_RDONLY };
    if (cache && ss && sf_mount(&vol, &cfg) == 0) {
        if (sf_vol_info(&vol, &vi) == 0) {
            uint64_t logs = count_logs(&vol, "/", 0);
            char label[sizeof vi.label + 8] = "no label";
            if (vi.label[0])
                snprintf(label, sizeof label, "label %s", vi.label);
            found = 2;
            snprintf(what, n, "%s %s volume (%s, %llu log%s)",
                     vi.fs_type == SF_FS_EXFAT ? "an" : "a", cli_fs_name(vi.fs_type), label,
                     (unsigned long long)logs, logs == 1 ? "" : "s");
        }
        sf_unmount(&vol);
    } else {
        snprintf(what, n, "a damaged %s volume (it does not mount)", cli_fs_name(type));
        found = 1;
    }
    free(cache);
    sf_filebd_close(&fb);
    return found;
}

/* ---- partition tables --------------------------------------------------------------- */

/* GPT: the header at LBA 1 (512- or 4096-byte sectors); its entries counted when they lie
 * in the first MiB, else -1 (unknown). 0 when there is no header. */
static int gpt_partitions(const uint8_t *b, size_t len, int *count)
{
    static const uint32_t ss[2] = { 512, 4096 };

    for (int i = 0; i < 2; i++) {
        const uint8_t *h = b + ss[i];
        if (len < ss[i] + 92 || memcmp(h, "EFI PART", 8))
            continue;
        uint64_t lba = le64(h + 72);
        uint32_t num = le32(h + 80), esz = le32(h + 84);
        *count = -1;
        if (esz >= 128 && esz <= 4096 && num <= 4096 && lba < len / ss[i] &&
            lba * ss[i] + (uint64_t)num * esz <= len) {
            *count = 0;
            for (uint32_t e = 0; e < num; e++)
                *count += first_nonzero(b + lba * ss[i] + (uint64_t)e * esz, 16) >= 0;
        }
        return 1;
    }
    return 0;
}

/* MBR: the boot signature and at least one primary entry with a type; their count. */
static int mbr_partitions(const uint8_t *b, size_t len)
{
    int count = 0;

    if (len < 512 || b[510] != 0x55 || b[511] != 0xAA)
        return 0;
    for (int i = 0; i < 4; i++)
        count += b[446 + 16 * i + 4] != 0;
    return count;
}

/* ---- other file systems ----------------------------------------------------------- */

static const char *other_fs(const uint8_t *b, size_t len)
{
    static const struct { uint32_t off; const char *magic; uint8_t n; const char *name; } t[] = {
        { 3, "NTFS    ", 8, "an NTFS file system" },
        { 1080, "\x53\xEF", 2, "an ext2/3/4 file system" },
        { 0, "XFSB", 4, "an XFS file system" },
        { 65600, "_BHRfS_M", 8, "a btrfs file system" },
        { 0, "LUKS\xBA\xBE", 6, "a LUKS encrypted volume" },
        { 4086, "SWAPSPACE2", 10, "Linux swap space" },
        { 32769, "CD001", 5, "an ISO 9660 image" },
        { 0, "hsqs", 4, "a squashfs image" },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (len >= t[i].off + t[i].n && memcmp(b + t[i].off, t[i].magic, t[i].n) == 0)
            return t[i].name;
    return NULL;
}

/* ---- a table that is gone ---------------------------------------------------------- */

/* The first MiB is all zero (a wiped partition table) but the target still holds what was
 * behind it: the backup GPT header in the last sector, or a FAT/exFAT boot sector where
 * partitioning tools and SD cards start the first partition (1, 2, 4 ... 64 MiB). Described
 * into what: 1, else 0. */
static int lost_table(int fd, off_t size, char *what, size_t n)
{
    static const uint32_t ss[2] = { 512, 4096 };
    uint8_t sec[512];

    for (int i = 0; i < 2; i++)
        if (size >= 2 * (off_t)ss[i] &&
            pread(fd, sec, sizeof sec, size - ss[i]) == (ssize_t)sizeof sec &&
            memcmp(sec, "EFI PART", 8) == 0) {
            snprintf(what, n, "a backup GPT header in its last sector (the partition table at "
                     "its start is gone)");
            return 1;
        }
    for (off_t off = LOOK_BYTES; off <= (off_t)64 << 20 && off + 512 <= size; off *= 2) {
        int kind;
        if (pread(fd, sec, sizeof sec, off) == (ssize_t)sizeof sec &&
            (kind = sf_boot_sector_kind(sec, sizeof sec)) != 0) {
            snprintf(what, n, "%s %s boot sector at offset %lld (a volume whose partition "
                     "table is gone)", kind == SF_FS_EXFAT ? "an" : "a", cli_fs_name((uint8_t)kind),
                     (long long)off);
            return 1;
        }
    }
    return 0;
}

/* ---- the check ---------------------------------------------------------------------- */

int format_guard_look(const char *target, char *what, size_t n)
{
    const char *path = target_dev_path(target);
    struct stat st;
    uint8_t *head;
    ssize_t len;
    off_t size;
    int fd, parts;
    const char *fs;

    /* What cannot be stat'ed or opened, or is not a file or device, is left to the
     * caller's own open to report; what opens but cannot be read is not formatted blind. */
    if (!path || stat(path, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)))
        return 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size = lseek(fd, 0, SEEK_END);
    head = calloc(1, LOOK_BYTES);
    len = size > 0 && head ? read_head(fd, head, (uint64_t)size) : size == 0 ? 0 : -1;
    if (len < 0)
        snprintf(what, n, "data that could not be read (%s)", head ? strerror(errno)
                                                                    : "out of memory");
    if (len > 0 && first_nonzero(head, (size_t)len) < 0 && lost_table(fd, size, what, n)) {
        close(fd);
        free(head);
        return 1;
    }
    close(fd);
    if (len <= 0 || first_nonzero(head, (size_t)len) < 0) {
        free(head);
        return len < 0 ? 1 : 0;
    }
    /* A FAT boot sector carries the MBR signature too: a volume whose boot sector is
     * sector 0 is a superfloppy, whatever its partition-entry bytes hold. */
    char vol[200], table[80];
    int has_vol = describe_volume(path, vol, sizeof vol);
    table[0] = '\0';
    if (gpt_partitions(head, (size_t)len, &parts)) {
        if (parts >= 0)
            snprintf(table, sizeof table, "a GPT partition table (%d partition%s)", parts,
                     parts == 1 ? "" : "s");
        else
            snprintf(table, sizeof table, "a GPT partition table");
    } else if (!(has_vol && sf_boot_sector_kind(head, 512)) && !other_fs(head, (size_t)len) &&
               (parts = mbr_partitions(head, (size_t)len)) > 0) {
        snprintf(table, sizeof table, "an MBR partition table (%d partition%s)", parts,
                 parts == 1 ? "" : "s");
    }
    if (table[0])
        snprintf(what, n, "%s%s%s", table, has_vol ? " with " : "", has_vol ? vol : "");
    else if (has_vol)
        snprintf(what, n, "%s", vol);
    else if ((fs = other_fs(head, (size_t)len)) != NULL)
        snprintf(what, n, "%s", fs);
    else
        snprintf(what, n, "data that is not a FAT or exFAT volume (the first non-zero byte is "
                 "at offset %lld)", (long long)first_nonzero(head, (size_t)len));
    free(head);
    return has_vol == 2 ? 2 : 1;
}

int format_guard(const char *target, const char *log_hint)
{
    char what[400];
    int k = format_guard_look(target, what, sizeof what);

    if (k <= 0)
        return 0;
    cli_err("%s: holds %s: not formatted; %s%s--force erases it", target, what,
            k == 2 ? log_hint : "", k == 2 ? ", " : "");
    return CLI_ERR;
}
