/* The checker and repairer: what `streamfat fsck [--repair]` runs (docs/FSCK.md).
 *
 * sf_check reads a volume straight from its block device, without mounting it (a volume
 * whose boot checksum is wrong is still checked), and reports every problem it finds through
 * a callback. With SF_CHECK_REPAIR it also repairs what it can, in a crash-safe order: the
 * allocation a file needs is made before the entry that refers to it, entries that stop
 * referring to clusters are written before those clusters are freed, and the dirty flag is
 * cleared last, after a flush.
 *
 * exFAT, FAT32 and FAT16 are checked and repaired; FAT12 is checked only (repair returns
 * SF_ENOTSUP for it). Log files (.SFL, docs/FORMAT.md) are recovered past their last
 * checkpoint: see sf_check_opts.flags.
 *
 * Memory: the caller's work buffer holds one bit per cluster (the clusters reachable from
 * the directory tree) plus a few sectors of I/O space; sf_check_work_size tells how much.
 * Freestanding; no globals; the device belongs to the checker for the duration of the call. */
#ifndef STREAMFAT_CHECK_H
#define STREAMFAT_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "sf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a finding is about. */
enum sf_check_kind {
    SF_CHK_BOOT = 1,       /* boot sector / BPB field, boot checksum, backup boot region */
    SF_CHK_DIRTY,          /* the volume-dirty flag (exFAT VolumeFlags, FAT[1] / BPB bit) */
    SF_CHK_FAT,            /* the FAT itself: media entry, FAT copies differ */
    SF_CHK_BITMAP,         /* exFAT allocation bitmap entry or cluster in use but marked free */
    SF_CHK_LEAK,           /* clusters allocated that no file reaches */
    SF_CHK_CROSSLINK,      /* a cluster reached from two files (or twice from one) */
    SF_CHK_LOOP,           /* a cluster chain that loops */
    SF_CHK_RANGE,          /* a cluster number out of range, a free or bad entry inside a chain */
    SF_CHK_ENTRY,          /* a directory entry set: structure, checksum, LFN checksum */
    SF_CHK_NAME,           /* a name: forbidden characters, name hash, duplicate */
    SF_CHK_SIZE,           /* size vs allocation, ValidDataLength, directory sizes */
    SF_CHK_UPCASE,         /* the exFAT up-case table */
    SF_CHK_FSINFO,         /* FAT32 FSInfo sector */
    SF_CHK_RECOVER,        /* log blocks past a file's recorded end (found / re-attached) */
};

/* One finding. Strings belong to the checker and live until the callback returns. */
struct sf_check_finding {
    int kind;               /* enum sf_check_kind */
    const char *path;       /* "/DIR/FILE.SFL", or NULL when the finding is not about a file */
    const char *msg;        /* one line, no trailing newline */
    int repaired;           /* 1 when --repair fixed it (only reported with SF_CHECK_REPAIR) */
    int fatal;              /* 1 when it cannot be repaired (the result will be 2) */
};

typedef void (*sf_check_cb)(void *user, const struct sf_check_finding *f);

/* Option flags */
#define SF_CHECK_REPAIR     0x1u  /* repair what can be repaired */
#define SF_CHECK_NO_RECOVER 0x2u  /* do not look for log blocks past files' recorded ends */

struct sf_check_opts {
    uint32_t flags;         /* SF_CHECK_* */
    void *work;             /* caller memory, see sf_check_work_size */
    size_t work_size;
    sf_check_cb cb;         /* may be NULL: only the counts in the result are kept */
    void *user;             /* passed to cb */
};

struct sf_check_result {
    int fs;                 /* what was found: 0 unknown, 12/16/32 FAT, 64 exFAT */
    uint32_t problems;      /* findings reported */
    uint32_t repaired;      /* findings repaired */
    uint32_t unrepairable;  /* findings that stay (fatal) */
    uint64_t files, dirs;   /* entries walked */
    uint64_t clusters_used; /* clusters reachable from the tree (after repair) */
    uint64_t leaked_clusters;     /* allocated but not reachable (before repair) */
    uint64_t recovered_blocks;    /* log blocks re-attached (found, without REPAIR) */
    uint64_t recovered_bytes;
    uint64_t recovered_damaged;   /* blocks inside the re-attached ranges that fail the
                                     readers' checks (docs/FORMAT.md): they skip and count
                                     exactly these */
};

/* Work memory needed for the volume on bd (reads its boot sector, using 8 KiB of stack):
 * bytes, or a negative error (SF_EIO, SF_ECORRUPT when it holds neither exFAT nor FAT). */
sf_ssize_t sf_check_work_size(struct sf_bdev *bd);

/* The same, reading the boot sector into caller memory instead of the stack (what a
 * microcontroller calls): buf of buf_size >= sector size + mem_align - 1 bytes, for
 * example the start of the work memory later passed to sf_check (SF_ENOMEM if smaller). */
sf_ssize_t sf_check_work_size_buf(struct sf_bdev *bd, void *buf, size_t buf_size);

/* Check (and with SF_CHECK_REPAIR repair) the volume on bd; r is filled in either way.
 * Returns 0 when the volume was clean, 1 when problems were found (with REPAIR: all of them
 * were repaired), 2 when problems stay that cannot be repaired (or repair was not asked
 * for a problem that would need a fatal fix), or a negative error: SF_EIO from the device,
 * SF_ENOMEM when work is smaller than sf_check_work_size, SF_ECORRUPT when no exFAT or
 * FAT boot sector is found at all, SF_EINVAL for bad arguments. */
int sf_check(struct sf_bdev *bd, const struct sf_check_opts *o, struct sf_check_result *r);

/* A short name of a kind ("leak", "cross-link", ...), for reports; never NULL. */
const char *sf_check_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif
