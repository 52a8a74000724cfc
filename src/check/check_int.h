/* Internals of the checker (include/streamfat/check.h), shared by
 *   check.c         driver, findings, work memory, sector caches, FAT entries, chains
 *   check_exfat.c   exFAT: boot region, up-case table, entry sets, bitmap
 *   check_fat.c     FAT12/16/32: BPB, FAT copies, dirty bits, 8.3 + LFN entries
 *   recover.c       log blocks past a .SFL file's recorded end
 *   leftover.c      temporary files of a replace, empty log files: removed by repair
 *
 * The checker reads the device directly (it does not mount: a volume mount refuses is still
 * checked) and keeps one bit per cluster in the caller's memory: set when the cluster is
 * reached from the directory tree. Allocation (bitmap / FAT) is compared with that map at the
 * end, after log recovery has claimed the clusters it re-attaches. */
#ifndef SF_CHECK_INT_H
#define SF_CHECK_INT_H

#include "streamfat/check.h"
#include "util/div64.h"
#include "util/le.h"

#define CHK_PATH_MAX 512        /* bytes of a reported path; longer ones are cut with "..." */
#define CHK_DEPTH_MAX 48        /* directory nesting walked (deeper: reported, not entered) */
#define CHK_CANDS 64            /* .SFL files examined for recovery */

/* Normalised FAT entry values (both file systems). */
#define CHK_FREE 0u
#define CHK_EOC 0xFFFFFFFFu
#define CHK_BAD 0xFFFFFFF7u

/* Why a chain walk stopped before the clusters it wanted. */
enum { WALK_OK = 0, WALK_SHORT, WALK_RANGE, WALK_CROSS, WALK_LOOP, WALK_FREE, WALK_IO };

/* A .SFL file whose blocks past its recorded end may be re-attached. */
struct chk_cand {
    uint64_t ent_lba[19];       /* where each entry of its set is (FAT: [0], the 8.3 entry) */
    uint16_t ent_off[19];
    uint32_t set_n;             /* entries in ent_* */
    uint32_t first;             /* first cluster */
    uint32_t last;              /* last cluster the size covers */
    uint32_t nclus;             /* clusters the size covers */
    uint64_t size;
    int contig;                 /* exFAT NoFatChain */
    char path[96];
};

struct chk {
    struct sf_bdev *bd;
    const struct sf_check_opts *o;
    struct sf_check_result *r;
    int repair;
    int wrote;                  /* something was written (flush before the dirty flag) */
    uint32_t ss;                /* sector size */
    int fs;                     /* 12, 16, 32, 64 (exFAT) */

    /* geometry, in sectors of the volume */
    uint64_t fat_lba;
    uint32_t fat_len;
    uint32_t nfats;
    uint64_t heap_lba;
    uint32_t spc_shift;
    uint32_t cs;                /* cluster bytes */
    uint32_t ccount;            /* clusters 2 .. ccount + 1 */
    uint32_t root_clus;         /* 0 for a FAT12/16 fixed root */
    uint64_t root_lba;          /* FAT12/16 fixed root */
    uint32_t root_ents;
    uint32_t bm_clus;           /* exFAT allocation bitmap, contiguous */
    uint8_t boot_flags_dirty;   /* the volume was marked dirty */

    /* memory carved from o->work */
    uint8_t *reach;             /* bit (c - 2): reached from the tree */
    uint8_t *fsec;              /* FAT sectors (two: FAT12 entries straddle) */
    uint64_t fsec_lba;          /* UINT64_MAX: none */
    uint8_t *bsec;              /* exFAT bitmap sector */
    uint64_t bsec_lba;
    uint8_t *dsec;              /* directory sector */
    uint64_t dsec_lba;
    uint8_t *xsec;              /* scratch: boot sectors, log blocks */
    struct chk_cand *cand;
    uint32_t ncand;

    char path[CHK_PATH_MAX];
    uint32_t plen;
    char msg[200];
    int lfn_is_log;             /* FAT: the entry being checked is named *.SFL */
    uint32_t dot_parent;        /* FAT: the directory holding the one being entered */
    uint8_t dupbits[1024];      /* FAT: hashes of the 8.3 names of one directory */
    uint32_t dup_next;          /* FAT: number for the next FSCKnnnn.REN */
    uint8_t label[11];          /* FAT: the root directory's volume label entry */
    int have_label;
    uint64_t label_lba;         /* FAT: where that entry is */
    uint32_t label_off;
    uint64_t free_after;        /* FAT: free clusters once the repairs are made */
    uint32_t cut_after;         /* a chain end mark to write after an entry update */
    /* Is cluster c allocated (exFAT bitmap bit / FAT entry not free)? */
    int (*alloc_test)(struct chk *k, uint32_t c, int *used);
    int pending;                /* the last finding waits for chk_repaired */
    int pending_kind, pending_path;
};

/* ---- check.c ---- */
/* Report a finding about the current path (with_path) or the volume. Returns 1 when the
 * caller should repair it (repair mode and not fatal). */
int chk_report(struct chk *k, int kind, int with_path, int fatal, const char *fmt, ...);
/* The previous report was repaired. */
void chk_repaired(struct chk *k);
/* The previous report will not be repaired after all (it stays; the result becomes 2). */
void chk_unrepaired(struct chk *k);
/* A minimal formatter: %s %u (uint32_t) %U (uint64_t) %x (uint32_t). */
void chk_fmt(char *out, uint32_t cap, const char *fmt, ...);
int chk_read(struct chk *k, uint64_t lba, void *buf);
int chk_write(struct chk *k, uint64_t lba, const void *buf);
/* One directory sector through the directory cache; writes update it. */
int chk_dsec(struct chk *k, uint64_t lba, uint8_t **sec);
int chk_dsec_put(struct chk *k);
static inline uint64_t chk_clus_lba(const struct chk *k, uint32_t c)
{
    return k->heap_lba + ((uint64_t)(c - 2) << k->spc_shift);
}
/* Clusters holding `bytes`, rounded up without adding to `bytes` first: an exFAT
 * DataLength is a hostile 64-bit field, and bytes + cs - 1 wraps near 2^64. */
static inline uint64_t chk_clusters_for(const struct chk *k, uint64_t bytes)
{
    uint32_t rem;
    uint64_t n = sf_udivmod64(bytes, k->cs, &rem);
    return n + (rem != 0);
}

static inline int chk_clus_ok(const struct chk *k, uint32_t c)
{
    return c >= 2 && c - 2 < k->ccount;
}
static inline int reach_test(const struct chk *k, uint32_t c)
{
    return (k->reach[(c - 2) >> 3] >> ((c - 2) & 7)) & 1;
}
static inline void reach_set(struct chk *k, uint32_t c)
{
    k->reach[(c - 2) >> 3] |= (uint8_t)(1u << ((c - 2) & 7));
}
static inline void reach_clear(struct chk *k, uint32_t c)
{
    k->reach[(c - 2) >> 3] &= (uint8_t)~(1u << ((c - 2) & 7));
}
/* FAT entries in normalised form; set writes every FAT copy. */
int chk_fat_get(struct chk *k, uint32_t c, uint32_t *v);
int chk_fat_set(struct chk *k, uint32_t c, uint32_t v);
/* Walk up to `want` clusters (UINT32_MAX: to the end of the chain) from `first`, marking each
 * reached. *got: clusters taken; *last: the last of them. Returns WALK_*. */
int chk_walk(struct chk *k, uint32_t first, int contig, uint32_t want, uint32_t *got,
             uint32_t *last);
/* The path stack: push a UTF-16 name, pop back to a saved length. */
uint32_t chk_path_push(struct chk *k, const uint16_t *name, uint32_t len);
void chk_path_pop(struct chk *k, uint32_t saved);
const char *chk_walk_why(int why);
/* A directory: a chain of nclus clusters (contiguous or through the FAT), or a FAT12/16
 * fixed root region (fixed_n entries at fixed_lba). */
struct chk_dir {
    uint32_t first;
    int contig;
    uint32_t nclus;
    uint64_t fixed_lba;
    uint32_t fixed_n;
    uint32_t cur_ci, cur_clus;  /* walk position */
};
static inline uint32_t chk_dir_entries(const struct chk *k, const struct chk_dir *d)
{
    return d->fixed_n ? d->fixed_n : d->nclus * (k->cs / 32);
}
/* Entry idx: *ent points into the directory sector cache (valid until the next chk_dsec),
 * *lba and *off say where it is. */
int chk_dir_entry(struct chk *k, struct chk_dir *d, uint32_t idx, uint8_t **ent,
                  uint64_t *lba, uint32_t *off);

/* ---- check_exfat.c / check_fat.c: 0, or a negative error (I/O) ---- */
int chk_exfat(struct chk *k, uint8_t *boot);
int chk_fat(struct chk *k, uint8_t *boot);
/* Is this boot sector exFAT / FAT, and what geometry (for the work size)? */
int chk_exfat_probe(const uint8_t *boot, uint32_t ss, uint32_t *ccount);
int chk_fat_probe(const uint8_t *boot, uint32_t ss, uint32_t *ccount);

/* ---- recover.c ---- */
/* Examine (and with repair re-attach) blocks past each candidate's size. Marks the clusters
 * it attaches as reached. set_size writes a candidate's new size (file-system specific). */
int chk_recover(struct chk *k, int (*set_size)(struct chk *k, struct chk_cand *c,
                                               uint64_t size, uint32_t nclus, uint32_t last));
/* Candidates with a FAT chain going on past their (recovered) size: cut there. */
int chk_cut_tails(struct chk *k);
/* Is the file name (UTF-16) a log file (ends in ".SFL", any case)? */
int chk_is_log_name(const uint16_t *name, uint32_t len);

/* ---- leftover.c ---- */
/* A file only an interruption leaves behind, which repair removes: why (static text), or
 * NULL for any other entry. */
const char *chk_leftover(const uint16_t *name, uint32_t len, int isdir, uint64_t size);

#endif
