/* Volumes, files and directories on exFAT (and, later, FAT32/FAT16) - the fs layer.
 *
 * Memory: every handle (struct sf_vol, sf_file, sf_dir) is allocated by the caller and
 * stays valid while in use; the library keeps pointers to them. The fields below the line
 * "private" are the library's. The volume's metadata cache lives in cfg.buf.
 *
 * Names: paths are UTF-8, components separated by '/', relative to the root (a leading '/'
 * is optional). On disk exFAT keeps UTF-16; lookups are case-insensitive through the
 * volume's up-case table, and names keep the case they were created with.
 *
 * Durability: metadata is written through (allocation before the directory entry that
 * references it). File data and sizes are durable after sf_sync / sf_close returns 0 and the
 * device has been flushed by it. The volume-dirty flag is set while any file is open for
 * writing and cleared by the last close / unmount.
 *
 * Threading: one thread at a time per volume (see sf.h). */
#ifndef STREAMFAT_VOL_H
#define STREAMFAT_VOL_H

#include <stdint.h>
#include "sf.h"
#include "bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

enum sf_fs_type { SF_FS_NONE = 0, SF_FS_EXFAT = 1, SF_FS_FAT32 = 2, SF_FS_FAT16 = 3, SF_FS_FAT12 = 4 };

/* Longest name: 255 UTF-16 units, at most 3 UTF-8 bytes each, plus the terminator. */
#define SF_NAME_MAX 255
#define SF_NAME_UTF8_MAX (SF_NAME_MAX * 3 + 1)

/* Time: milliseconds since 1970-01-01 00:00 UTC. The clock callback may be NULL, in which
 * case files get 1980-01-01 00:00 UTC (the earliest time FAT and exFAT can store). */
typedef int64_t sf_time_ms;
typedef sf_time_ms (*sf_clock_fn)(void *ctx);

/* Metadata cache: cfg.buf is divided into slots of one sector plus SF_VOL_SLOT_HDR bytes of
 * bookkeeping; at least 2 slots. More slots keep more of the bitmap, FAT and directories in
 * memory (a directory of 10,000 files is about 1 MiB); direct-mapped by sector number. */
#define SF_VOL_SLOT_HDR 16u
#define SF_VOL_BUF_MIN(sector_size) (2u * ((sector_size) + SF_VOL_SLOT_HDR) + 8u)
/* Up-case table buffer: 65536 UTF-16 units. Optional: without it a volume whose table is not
 * the library's own (built in) still mounts, and names compare by the built-in table. */
#define SF_UPCASE_BUF_SIZE (65536u * 2u)

#define SF_VOL_RDONLY 0x1u   /* never write; the dirty flag is left alone */

struct sf_vol_cfg {
    struct sf_bdev *bd;
    void *buf;               /* metadata cache, sector-aligned to bd->mem_align */
    uint32_t buf_size;       /* >= SF_VOL_BUF_MIN(bd->sector_size) */
    uint16_t *upcase_buf;    /* optional, SF_UPCASE_BUF_SIZE bytes */
    sf_clock_fn clock;       /* optional */
    void *clock_ctx;
    int16_t utc_offset_min;  /* the local time zone, for exFAT's UtcOffset field and FAT's
                                local timestamps; a multiple of 15 in -720..840 */
    uint32_t flags;          /* SF_VOL_* */
    uint32_t partition;      /* 0: automatic (superfloppy, else the first FAT/exFAT
                                partition of an MBR or GPT); N: the Nth partition, from 1 */
    void *fat_cache;         /* optional, FAT12/16/32: memory for the free-space summary (one
                                bit per group of FAT sectors known to hold no free entry; see
                                docs/FAT.md for the size that covers a volume at one sector a
                                bit). NULL / 0: none, allocation is still correct */
    uint32_t fat_cache_size; /* bytes */
};

struct sf_vol_info {
    uint8_t fs_type;            /* enum sf_fs_type */
    uint32_t sector_size;
    uint32_t cluster_size;      /* bytes */
    uint32_t cluster_count;
    uint64_t volume_offset;     /* bytes from the start of the device (partition start) */
    uint64_t volume_size;       /* bytes */
    uint64_t heap_offset;       /* bytes from the volume start to cluster 2 */
    uint32_t serial;
    char label[48];             /* UTF-8, up to 11 UTF-16 units (exFAT) */
    int dirty;                  /* the volume-dirty flag as found at mount */
    uint16_t fs_revision;       /* exFAT: 0x0100 */
    const char *warning;        /* FAT: static text when the volume mounted but is odd (a
                                   cluster count outside its type's range), else NULL */
    int errors;                 /* FAT16/32: the hard-error bit of FAT[1] said errors were
                                   seen (as found at mount) */
};

/* File and directory attributes (the FAT/exFAT attribute byte). */
#define SF_ATTR_RDONLY 0x01u
#define SF_ATTR_HIDDEN 0x02u
#define SF_ATTR_SYSTEM 0x04u
#define SF_ATTR_DIR    0x10u
#define SF_ATTR_ARCH   0x20u

struct sf_stat {
    char name[SF_NAME_UTF8_MAX];  /* UTF-8, as stored */
    uint64_t size;                /* bytes (ValidDataLength-limited content is read as zeros) */
    uint64_t alloc_size;          /* bytes allocated */
    uint32_t attr;                /* SF_ATTR_* */
    uint32_t first_cluster;
    uint8_t contiguous;           /* exFAT NoFatChain */
    sf_time_ms ctime, mtime, atime;
};

/* Open flags. */
#define SF_O_RDONLY 0x0u
#define SF_O_WRONLY 0x1u
#define SF_O_RDWR   0x2u
#define SF_O_ACCMODE 0x3u
#define SF_O_CREAT  0x10u
#define SF_O_EXCL   0x20u
#define SF_O_TRUNC  0x40u
#define SF_O_APPEND 0x80u

#define SF_SEEK_SET 0
#define SF_SEEK_CUR 1
#define SF_SEEK_END 2

struct sf_vol;

/* Location of a directory entry set, so that a file's entry can be rewritten without
 * searching: the set's first entry is at byte `off` of sector lba[0]; a set that crosses
 * into following sectors continues at lba[1], lba[2] (a set of 19 entries spans 3 sectors
 * of 512 bytes at most). */
struct sf_entry_loc {
    uint64_t lba[3];
    uint16_t off;
    uint8_t count;   /* entries in the set, 1 + secondary count */
};

/* A chain of clusters: a file's data or a directory. */
struct sf_chain {
    uint32_t first;      /* 0 for an empty file */
    uint8_t contiguous;  /* exFAT NoFatChain: clusters first .. first + n - 1 */
    uint64_t size;       /* allocated bytes covered by the chain, when known */
};

/* Per-file sector buffer (issue 18). struct sf_file carries a buffer of SF_FILE_BUF_SIZE
 * bytes (default 512; 4096 for devices with 4 KiB sectors; 0 for none), so sf_open needs no
 * further memory: it lives wherever the caller keeps the struct sf_file (caller memory, the
 * core has no malloc). This grew struct sf_file by that much: an ABI change, and the library
 * and every program using it must be built with the same SF_FILE_BUF_SIZE. The buffer is used
 * when the volume's sector fits in it and its address meets bd->mem_align (else writes go to
 * the device at once, as before).
 *
 * sf_write calls that touch part of a sector gather in the buffer, which reaches the device
 * when a write moves to another sector, or at sf_read, sf_truncate, sf_sync and sf_close.
 * Durability contract (FatFs's): data written since the last sf_sync / sf_close returned 0 may
 * be lost at a power cut; everything before stays intact (docs/RELIABILITY.md). */
#ifndef SF_FILE_BUF_SIZE
#define SF_FILE_BUF_SIZE 512
#endif

struct sf_file {
    /* ---- private ---- */
    struct sf_vol *vol;
    struct sf_file *next_open;
    uint32_t flags;
    int failed;                  /* sticky error after a failed write */
    struct sf_entry_loc loc;
    struct sf_chain chain;
    uint32_t parent_first;       /* parent directory's first cluster (for rename/unlink) */
    uint64_t data_length;        /* exFAT DataLength: bytes allocated to the file's content */
    uint64_t valid_length;       /* exFAT ValidDataLength: bytes written; zeros past it */
    uint64_t size;               /* file size seen by the API */
    uint64_t pos;
    uint32_t cur_cluster;        /* cluster holding byte cur_index << cluster_shift */
    uint32_t cur_index;
    uint32_t last_cluster;       /* last allocated cluster (0 when unknown) */
    uint32_t attr;
    sf_time_ms ctime, mtime;
    uint8_t meta_dirty;          /* the entry set needs rewriting */
    uint8_t is_dir;
    /* Known run of the file (issue 18): clusters ext_idx .. ext_idx + ext_n - 1 of the file
     * are ext_clus .. ext_clus + ext_n - 1 on the volume (ext_n 0: none known). */
    uint32_t ext_idx, ext_clus, ext_n;
    uint64_t ext_pos, ext_end, ext_lba;   /* the run as bytes of the file [ext_pos, ext_end)
                                             (ext_end 0: none) and its first sector */
    /* Sector buffer for writes smaller than a sector (see SF_FILE_BUF_SIZE above). */
    uint8_t bstate;              /* 0 empty, 1 holds sector bsec (as on the medium), 2 changed */
    uint64_t bsec;               /* file sector (byte offset >> sector shift) in fbuf */
    uint64_t blba;               /* its device sector */
#if SF_FILE_BUF_SIZE > 0
    uint8_t fbuf[SF_FILE_BUF_SIZE];
#endif
};

struct sf_dir {
    /* ---- private ---- */
    struct sf_vol *vol;
    struct sf_chain chain;
    uint32_t cluster;            /* current cluster */
    uint32_t cluster_index;
    uint32_t nclus;              /* clusters in the directory */
    uint32_t entry;              /* next entry index within the directory */
    int done;
};

struct sf_cache_slot {
    uint64_t lba;                /* UINT64_MAX when empty */
    uint64_t spare;
};

struct sf_vol {
    /* ---- private ---- */
    struct sf_bdev *bd;          /* the volume's device: the partition window or cfg.bd */
    struct sf_bdev_window win;
    struct sf_vol_cfg cfg;
    struct sf_vol_info info;
    uint8_t fs_type;
    uint8_t rdonly;
    uint8_t sector_shift;        /* log2 sector size */
    uint8_t cluster_shift;       /* log2 bytes per cluster */
    uint8_t spc_shift;           /* log2 sectors per cluster */
    uint8_t dirty_set;           /* we set the volume-dirty flag on disk */
    uint8_t unflushed;           /* writes since the last device flush */
    uint8_t *bulk;               /* while the stream layer allocates: a buffer of bulk_size
                                    bytes (sectors, device-aligned) for multi-sector FAT writes */
    uint32_t bulk_size;
    uint8_t upcase_builtin;      /* the volume's up-case table equals the built-in one */
    uint16_t vol_flags;          /* exFAT VolumeFlags as on disk */
    uint32_t fat_offset;         /* sectors from volume start */
    uint32_t fat_length;         /* sectors per FAT copy */
    uint8_t num_fats;            /* FAT copies (exFAT: 1) */
    uint8_t fat_bits;            /* 12, 16 or 32 bits per FAT entry */
    uint32_t root_sector;        /* FAT12/16: the fixed root directory region */
    uint32_t root_entries;       /* FAT12/16: its size in entries (0 on FAT32 / exFAT) */
    uint32_t fsinfo_sector;      /* FAT32: FSInfo sector (0: none) */
    uint32_t heap_offset;        /* sectors from volume start */
    uint32_t cluster_count;
    uint32_t root_cluster;
    uint32_t bitmap_cluster;     /* exFAT allocation bitmap */
    uint64_t bitmap_bytes;
    uint32_t bitmap_first_bad;   /* not used by exFAT with one bitmap */
    uint32_t label_loc_valid;
    struct sf_entry_loc label_loc;
    uint32_t next_free;          /* allocation hint: no free cluster below it was seen */
    int64_t free_clusters;       /* -1 until counted */
    uint32_t writers;            /* files open for writing */
    struct sf_file *open_files;
    /* Metadata cache */
    const char *why;             /* what made the last mount fail (static text) */
    uint8_t *cache_mem;          /* cache_n sectors, then cache_n slot headers */
    struct sf_cache_slot *cache;
    uint32_t cache_n;
    uint32_t cache_victim;       /* next slot handed out as scratch */
    uint32_t cache_ra_win;       /* sectors the last read-ahead asked for (cache.c) */
    uint64_t cache_ra_next;      /* the sector after the last read-ahead */
    uint64_t cache_heap_lo;      /* bounds of the heap sectors (directories, exFAT bitmap and */
    uint64_t cache_heap_hi;      /*   up-case table) cached since mount: UINT64_MAX, 0 = none */
    uint64_t cache_gap_lo;       /* sectors [lo, hi) known to have no cached copy, checked */
    uint64_t cache_gap_hi;       /*   by the last data write that fell inside the bounds */
    uint64_t cache_gap_at;       /* that write's first sector */
    /* FAT free-space summary in cfg.fat_cache: bit g set = FAT sectors
     * [g << fs_shift, (g + 1) << fs_shift) are known to hold no free entry. */
    uint8_t *fs_bits;
    uint32_t fs_groups;          /* bits in fs_bits (0: no summary) */
    uint8_t fs_shift;            /* log2 FAT sectors per bit */
    uint8_t mirror_off;          /* FAT32 ExtFlags: mirroring off (mounted read-only) */
    /* FAT short-name memo (fat_dir.c): the alias the last lookup walk found free for a
     * long name's basis, valid while dir_gen is unchanged (bumped by every FAT entry
     * creation and removal) */
    uint32_t dir_gen;
    uint32_t alias_gen;
    uint32_t alias_dir;          /* first cluster of the directory walked */
    uint8_t alias_ok;
    uint8_t alias_fits;
    uint8_t alias_basis[11];
    uint8_t alias[11];
};

/* ---- volumes ---- */

/* Read a device's first sectors and tell what is there: the file system type and its
 * sector size, looking into an MBR/GPT partition table like sf_mount does. Needs a buffer
 * of one 4096-byte sector (any alignment the device needs). Returns 0 with *type
 * SF_FS_NONE when nothing is recognised, or an I/O error. */
int sf_probe(struct sf_bdev *bd, uint32_t partition, void *buf4096,
             uint8_t *type, uint32_t *sector_size);

/* Mount: validate the boot region and every field the library relies on; SF_ECORRUPT for a
 * bad volume (sf_mount_error tells which field). Never scans the whole bitmap or FAT. */
int sf_mount(struct sf_vol *v, const struct sf_vol_cfg *cfg);
/* A short text naming what made the last sf_mount fail, or "" (static storage). */
const char *sf_mount_error(const struct sf_vol *v);
/* Close nothing for the caller: files still open are synced, the dirty flag cleared, the
 * device flushed. The handle may be reused after. */
int sf_unmount(struct sf_vol *v);
int sf_vol_info(struct sf_vol *v, struct sf_vol_info *info);
/* Count free clusters (reads the whole bitmap once; cached afterwards). */
int64_t sf_vol_free_clusters(struct sf_vol *v);

/* ---- files ---- */
int sf_open(struct sf_vol *v, struct sf_file *f, const char *path, uint32_t flags);
sf_ssize_t sf_read(struct sf_file *f, void *buf, size_t n);
sf_ssize_t sf_write(struct sf_file *f, const void *buf, size_t n);
int64_t sf_seek(struct sf_file *f, int64_t off, int whence);  /* new position or error */
uint64_t sf_tell(const struct sf_file *f);
uint64_t sf_fsize(const struct sf_file *f);
/* Grow (zeros, via ValidDataLength: nothing written) or shrink (clusters freed). */
int sf_truncate(struct sf_file *f, uint64_t size);
/* Write the entry set (size, times) after flushing data; flush the device. */
int sf_sync(struct sf_file *f);
int sf_close(struct sf_file *f);

/* ---- names ---- */
int sf_stat(struct sf_vol *v, const char *path, struct sf_stat *st);
int sf_mkdir(struct sf_vol *v, const char *path);
/* Removes a file, or an empty directory (SF_ENOTEMPTY otherwise). Refuses open files
 * with SF_EBUSY. */
int sf_unlink(struct sf_vol *v, const char *path);
int sf_rmdir(struct sf_vol *v, const char *path);
/* Rename or move; refuses an existing target (SF_EEXIST), and moving a directory into itself. */
int sf_rename(struct sf_vol *v, const char *from, const char *to);
/* Replace the file `to` by the file `from` (both regular files, neither open): `to` keeps its
 * name, attributes and creation time and takes `from`'s clusters, size and modification
 * time; `from` is gone and `to`'s old clusters are freed. After a power cut at any write,
 * `to` holds its old or its new contents, whole; clusters of the other may be leaked. */
int sf_replace(struct sf_vol *v, const char *from, const char *to);

int sf_opendir(struct sf_vol *v, struct sf_dir *d, const char *path);
/* 1 with *st filled, 0 at the end, or an error. */
int sf_readdir(struct sf_dir *d, struct sf_stat *st);
int sf_closedir(struct sf_dir *d);

/* ---- mkfs ---- */
enum sf_part_scheme { SF_PART_NONE = 0, SF_PART_MBR = 1, SF_PART_GPT = 2 };

struct sf_mkfs_opts {
    uint8_t fs_type;         /* SF_FS_EXFAT, SF_FS_FAT32, SF_FS_FAT16; 0 = automatic by the size
                                used: FAT16 up to 2 GiB, FAT32 up to 32 GiB, exFAT above (as
                                SD, SDHC and SDXC cards come) */
    uint8_t partition;       /* enum sf_part_scheme */
    uint32_t cluster_size;   /* bytes, power of two, 4 KiB .. 32 MiB for exFAT; 0 = by size */
    uint64_t align;          /* bytes, allocation-unit alignment of the cluster heap and of
                                the partition; 0 = 4 MiB (small volumes: less, see DESIGN.md) */
    uint64_t size;           /* bytes of the device to use (partition or volume); 0 = all */
    const char *label;       /* UTF-8, up to 11 UTF-16 units; NULL or "" for none */
    uint32_t serial;         /* volume serial number (caller's randomness) */
    uint8_t disk_guid[16];   /* GPT: disk GUID (random, from the caller) */
    uint8_t part_guid[16];   /* GPT: partition GUID */
    sf_time_ms now;          /* for timestamps the format writes */
    void *buf;               /* work memory, >= one sector, aligned to bd->mem_align;
                                larger (e.g. 1 MiB) makes zeroing faster */
    uint32_t buf_size;
    uint8_t fats;            /* FAT32/FAT16: FAT copies, 1 or 2; 0 = 2 */
};
/* Format. On failure *why (if why is not NULL) points to a static text naming the option or
 * limit at fault ("cluster size too small for this volume size"), or "" for device errors. */
int sf_mkfs(struct sf_bdev *bd, const struct sf_mkfs_opts *o, const char **why);

#ifdef __cplusplus
}
#endif

#endif
