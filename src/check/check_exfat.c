/* The exFAT checker: boot region (checksum, backup), up-case table, entry sets (structure,
 * checksum, name, name hash, sizes against allocation), chains, the allocation bitmap
 * against the clusters reached, the dirty flag.
 *
 * Repair order (each step is durable on its own after a cut):
 *   1. boot region: restore main from a valid backup, or the checksum sector, or the backup
 *   2. entry sets: truncated sizes and fixed checksums written first (they stop referring to
 *      clusters), broken sets marked unused
 *   3. log recovery: entries grow over clusters that are already allocated (recover.c)
 *   4. the bitmap rewritten to exactly the clusters reached: missing bits set, leaks cleared
 *   5. flush, then VolumeDirty cleared */
#include <string.h>
#include "check/check_int.h"
#include "fs/exfat_ondisk.h"
#include "util/inline.h"
#include "util/upcase.h"

/* ---- boot region ---- */

int chk_exfat_probe(const uint8_t *b, uint32_t ss, uint32_t *ccount)
{
    if (memcmp(b + EXBS_FSNAME, "EXFAT   ", 8) || ld_le16(b + EXBS_SIGNATURE) != 0xAA55)
        return SF_ECORRUPT;
    if ((1u << (b[EXBS_SECTOR_SHIFT] & 31)) != ss || b[EXBS_SECTOR_SHIFT] < 9 ||
        b[EXBS_SECTOR_SHIFT] > 12 || b[EXBS_SECTOR_SHIFT] + b[EXBS_SPC_SHIFT] > 25)
        return SF_ECORRUPT;
    uint32_t n = ld_le32(b + EXBS_CLUSTER_COUNT);
    if (!n || n > EXFAT_MAX_CLUSTERS)
        return SF_ECORRUPT;
    *ccount = n;
    return 0;
}

/* Boot checksum over sectors first .. first + 10 (VolumeFlags and PercentInUse excluded). */
static int boot_sum(struct chk *k, uint64_t first, uint32_t *sum, int *exts_ok)
{
    uint32_t s = 0;
    *exts_ok = 1;
    for (uint32_t i = 0; i < 11; i++) {
        if (chk_read(k, first + i, k->xsec))
            return SF_EIO;
        for (uint32_t j = 0; j < k->ss; j++) {
            if (i == 0 && (j == EXBS_VOLUME_FLAGS || j == EXBS_VOLUME_FLAGS + 1 ||
                           j == EXBS_PERCENT_IN_USE))
                continue;
            s = ((s & 1) ? 0x80000000u : 0) + (s >> 1) + k->xsec[j];
        }
        if (i >= EXFAT_BOOT_EXT_FIRST && i <= EXFAT_BOOT_EXT_LAST &&
            ld_le32(k->xsec + k->ss - 4) != EXFAT_EXT_SIGNATURE)
            *exts_ok = 0;
    }
    *sum = s;
    return 0;
}

/* Does the checksum sector at lba repeat sum? */
static int sum_sector_ok(struct chk *k, uint64_t lba, uint32_t sum, int *ok)
{
    if (chk_read(k, lba, k->xsec))
        return SF_EIO;
    *ok = 1;
    for (uint32_t j = 0; j < k->ss; j += 4)
        if (ld_le32(k->xsec + j) != sum)
            *ok = 0;
    return 0;
}

static int copy_sectors(struct chk *k, uint64_t from, uint64_t to, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (chk_read(k, from + i, k->xsec) || chk_write(k, to + i, k->xsec))
            return SF_EIO;
    return 0;
}

static int write_sum_sector(struct chk *k, uint64_t lba, uint32_t sum)
{
    for (uint32_t j = 0; j < k->ss; j += 4)
        st_le32(k->xsec + j, sum);
    return chk_write(k, lba, k->xsec);
}

/* Are the main and backup regions the same (VolumeFlags and PercentInUse aside)? */
static int regions_equal(struct chk *k, int *eq)
{
    *eq = 1;
    k->dsec_lba = UINT64_MAX;           /* dsec is borrowed */
    for (uint32_t i = 0; i < EXFAT_BOOT_REGION_SECTORS; i++) {
        if (chk_read(k, EXFAT_BOOT_MAIN + i, k->xsec) ||
            chk_read(k, EXFAT_BOOT_BACKUP + i, k->dsec))
            return SF_EIO;
        if (i == 0) {
            memcpy(k->dsec + EXBS_VOLUME_FLAGS, k->xsec + EXBS_VOLUME_FLAGS, 2);
            k->dsec[EXBS_PERCENT_IN_USE] = k->xsec[EXBS_PERCENT_IN_USE];
        }
        if (memcmp(k->xsec, k->dsec, k->ss))
            *eq = 0;
    }
    return 0;
}

static int check_boot(struct chk *k)
{
    uint32_t msum, bsum, cc;
    int mext, bext, msok, bsok, bvalid, err;
    if ((err = boot_sum(k, EXFAT_BOOT_MAIN, &msum, &mext)) ||
        (err = sum_sector_ok(k, EXFAT_BOOT_CHECKSUM, msum, &msok)) ||
        (err = boot_sum(k, EXFAT_BOOT_BACKUP, &bsum, &bext)) ||
        (err = sum_sector_ok(k, EXFAT_BOOT_BACKUP + EXFAT_BOOT_CHECKSUM, bsum, &bsok)))
        return err;
    if (chk_read(k, EXFAT_BOOT_BACKUP, k->xsec))
        return SF_EIO;
    bvalid = !chk_exfat_probe(k->xsec, k->ss, &cc) && bsok && bext;
    if (!msok || !mext) {
        if (bvalid) {
            if (chk_report(k, SF_CHK_BOOT, 0, 0, "main boot region: %s; the backup is valid",
                           msok ? "extended boot signature wrong" : "boot checksum wrong")) {
                if ((err = copy_sectors(k, EXFAT_BOOT_BACKUP, EXFAT_BOOT_MAIN,
                                        EXFAT_BOOT_REGION_SECTORS)))
                    return err;
                chk_repaired(k);
            }
            return 0;
        }
        if (!mext) {
            chk_report(k, SF_CHK_BOOT, 0, 1, "main boot region: extended boot signature wrong, "
                       "and no valid backup");
            return 0;
        }
        if (chk_report(k, SF_CHK_BOOT, 0, 0, "boot checksum wrong (and the backup is not valid)")) {
            if ((err = write_sum_sector(k, EXFAT_BOOT_CHECKSUM, msum)) ||
                (err = copy_sectors(k, EXFAT_BOOT_MAIN, EXFAT_BOOT_BACKUP,
                                    EXFAT_BOOT_REGION_SECTORS)))
                return err;
            chk_repaired(k);
        }
        return 0;
    }
    int eq;
    if ((err = regions_equal(k, &eq)))
        return err;
    if (!eq || !bvalid) {
        if (chk_report(k, SF_CHK_BOOT, 0, 0, "backup boot region %s",
                       bvalid ? "differs from the main one" : "is damaged")) {
            if ((err = copy_sectors(k, EXFAT_BOOT_MAIN, EXFAT_BOOT_BACKUP,
                                    EXFAT_BOOT_REGION_SECTORS)))
                return err;
            chk_repaired(k);
        }
    }
    return 0;
}

/* Geometry from the main boot sector (in k->xsec); 0, or 1 when it cannot be used. */
static int geometry(struct chk *k)
{
    const uint8_t *b = k->xsec;
    uint64_t vol_len = ld_le64(b + EXBS_VOLUME_LENGTH);
    uint32_t fat_off = ld_le32(b + EXBS_FAT_OFFSET), fat_len = ld_le32(b + EXBS_FAT_LENGTH);
    uint32_t heap = ld_le32(b + EXBS_HEAP_OFFSET);
    uint32_t cc;
    if (chk_exfat_probe(b, k->ss, &cc))
        return 1;
    k->spc_shift = b[EXBS_SPC_SHIFT];
    k->cs = k->ss << k->spc_shift;
    k->ccount = cc;
    k->nfats = b[EXBS_NUM_FATS] == 2 ? 2 : 1;
    k->fat_lba = fat_off;
    k->fat_len = fat_len;
    k->heap_lba = heap;
    k->root_clus = ld_le32(b + EXBS_ROOT_CLUSTER);
    k->boot_flags_dirty = (ld_le16(b + EXBS_VOLUME_FLAGS) & EXFAT_VOLFLAG_DIRTY) != 0;
    const char *bad = NULL;
    if (b[EXBS_NUM_FATS] != 1 && b[EXBS_NUM_FATS] != 2)
        bad = "NumberOfFats";
    else if (fat_off < 24 || (uint64_t)fat_len * k->ss / 4 < (uint64_t)cc + 2)
        bad = "FatOffset / FatLength";
    else if ((uint64_t)heap < (uint64_t)fat_off + (uint64_t)fat_len * k->nfats)
        bad = "ClusterHeapOffset";
    else if ((uint64_t)heap + ((uint64_t)cc << k->spc_shift) > vol_len ||
             vol_len > k->bd->sector_count)
        bad = "ClusterCount / VolumeLength (beyond the device)";
    else if (!chk_clus_ok(k, k->root_clus))
        bad = "FirstClusterOfRootDirectory";
    if (bad) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "boot sector field out of range: %s", bad);
        return 1;
    }
    return 0;
}

/* ---- entry sets ---- */

static uint16_t set_sum(const uint8_t *e, uint32_t n)
{
    uint16_t s = 0;
    for (uint32_t i = 0; i < n * EXDE_SIZE; i++) {
        if (i == EXDE_FILE_SET_CHECKSUM || i == EXDE_FILE_SET_CHECKSUM + 1)
            continue;
        s = (uint16_t)(((s & 1) ? 0x8000u : 0) + (s >> 1) + e[i]);
    }
    return s;
}

static uint16_t name_hash(const uint16_t *name, uint32_t len)
{
    uint16_t h = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint16_t c = sf_upcase_builtin(name[i]);
        h = (uint16_t)(((h & 1) ? 0x8000u : 0) + (h >> 1) + (c & 0xFF));
        h = (uint16_t)(((h & 1) ? 0x8000u : 0) + (h >> 1) + (c >> 8));
    }
    return h;
}

/* Up-casing ASCII is the same in every up-case table: such names' hashes can be checked
 * whatever table the volume has. */
static int ascii_only(const uint16_t *name, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        if (name[i] >= 0x80)
            return 0;
    return 1;
}

static int bad_name_char(uint16_t c)
{
    return c < 0x20 || c == '"' || c == '*' || c == '/' || c == ':' || c == '<' || c == '>' ||
           c == '?' || c == '\\' || c == '|';
}

/* An entry set gathered from a directory, with where each entry lives. */
struct xset {
    uint8_t e[(1 + EXFAT_MAX_SECONDARY) * EXDE_SIZE];
    uint64_t lba[1 + EXFAT_MAX_SECONDARY];
    uint32_t off[1 + EXFAT_MAX_SECONDARY];
    uint32_t n;
};

/* Write the set back, the secondaries' sectors first and the file entry's last (a cut in
 * between leaves a set that fails its checksum, never one that passes with half the data). */
static int xset_write(struct chk *k, struct xset *s)
{
    uint8_t *sec;
    for (uint32_t i = s->n; i-- > 0;) {
        if (chk_dsec(k, s->lba[i], &sec))
            return SF_EIO;
        memcpy(sec + s->off[i], s->e + i * EXDE_SIZE, EXDE_SIZE);
        if (i == 0 || s->lba[i - 1] != s->lba[i])
            if (chk_dsec_put(k))
                return SF_EIO;
    }
    return 0;
}

/* Mark an entry unused. An in-use type 0x80 would become 0x00, the end of the directory,
 * and hide every entry after it: it becomes 0x01 (unused) instead. */
static void unuse(uint8_t *e)
{
    e[0] &= (uint8_t)~EXDE_INUSE;
    if (e[0] == EXDE_END)
        e[0] = 0x01;
}

/* Mark entries unused: the file entry first, so no reader sees a set without it... only
 * secondaries, which every reader ignores. */
static int xset_delete(struct chk *k, struct xset *s, uint32_t n)
{
    uint8_t *sec;
    for (uint32_t i = 0; i < n; i++) {
        if (chk_dsec(k, s->lba[i], &sec))
            return SF_EIO;
        unuse(sec + s->off[i]);
        if (i + 1 == n || s->lba[i + 1] != s->lba[i])
            if (chk_dsec_put(k))
                return SF_EIO;
    }
    return 0;
}

/* Mark a broken set unused: its primary at idx and the in-use secondaries after it (they
 * would stand alone). *skip: entries done. */
static int delete_run(struct chk *k, struct chk_dir *d, uint32_t idx, uint32_t *skip)
{
    uint32_t total = chk_dir_entries(k, d), j = idx;
    uint8_t *ent;
    uint64_t lba;
    uint32_t off;
    do {
        if (chk_dir_entry(k, d, j, &ent, &lba, &off))
            return SF_EIO;
        if (j > idx && (!(ent[0] & EXDE_INUSE) || !(ent[0] & EXDE_TYPE_SECONDARY)))
            break;
        unuse(ent);
        if (chk_dsec_put(k))
            return SF_EIO;
    } while (++j < total);
    *skip = j - idx;
    return 0;
}

struct xctx {
    int hash_ok;            /* the volume's up-case table is the built-in one */
    int have_bitmap;
    int have_label;         /* a well-formed volume label entry was seen */
    uint32_t bm_idx, up_idx;    /* root entries of the bitmap / up-case table in use */
    struct xsub {           /* a subdirectory to enter */
        uint32_t idx, first, got;
        uint8_t contig, nl;     /* NoFatChain; the name's length */
    } sub, *subs;           /* the one check_stream found; the current directory's list */
    int sub_ready;
    uint32_t nsubs;
};

#define XSUBS 8             /* subdirectories entered after their parent's entries (more:
                             * entered where they are met) */

static int scan_dir(struct chk *k, struct xctx *x, struct chk_dir *d, uint32_t depth);
static int enter_dir(struct chk *k, struct xctx *x, const struct xsub *sd, uint32_t depth);
static int scan_entries(struct chk *k, struct xctx *x, struct chk_dir *d, uint32_t depth);
/* Not inlined into scan_dir: its name buffer stays off the stack while the entries are
 * checked (the recursion goes through both). */
static SF_NOINLINE int enter_subs(struct chk *k, struct xctx *x, struct chk_dir *d, struct xsub *subs,
                      uint32_t n, uint32_t depth);

/* Check one file's stream: sizes against allocation, the chain; repairs go into s->e. */
static int check_stream(struct chk *k, struct xctx *x, struct xset *s, int *changed)
{
    uint8_t *fe = s->e, *se = s->e + EXDE_SIZE;
    int isdir = (ld_le16(fe + EXDE_FILE_ATTR) & 0x10) != 0;
    int contig = (se[EXDE_STREAM_FLAGS] & EXDE_FLAG_NO_FAT_CHAIN) != 0;
    uint32_t first = ld_le32(se + EXDE_FIRST_CLUSTER);
    uint64_t dl = ld_le64(se + EXDE_DATA_LENGTH), vdl = ld_le64(se + EXDE_STREAM_VALID_LEN);
    if (vdl > dl) {
        if (chk_report(k, SF_CHK_SIZE, 1, 0, "ValidDataLength %U beyond DataLength %U", vdl, dl)) {
            st_le64(se + EXDE_STREAM_VALID_LEN, dl);
            vdl = dl;
            *changed = 1;
            chk_repaired(k);
        }
    }
    if (isdir && (dl == 0 || dl % k->cs)) {
        if (chk_report(k, SF_CHK_SIZE, 1, 0, "directory size %U is not a whole number of "
                       "clusters", dl)) {
            dl = dl / k->cs * k->cs;
            st_le64(se + EXDE_DATA_LENGTH, dl);
            st_le64(se + EXDE_STREAM_VALID_LEN, dl);
            *changed = 1;
            chk_repaired(k);
        }
    }
    if (!dl) {
        if (isdir)
            return 1;        /* nothing to walk: the caller deletes the set */
        /* An empty file has no cluster and no NoFatChain flag (as streamfat writes it). */
        if ((first || contig) &&
            chk_report(k, SF_CHK_SIZE, 1, 0, "size 0 but %s: cleared",
                       first ? "a first cluster" : "the NoFatChain flag")) {
            st_le32(se + EXDE_FIRST_CLUSTER, 0);
            se[EXDE_STREAM_FLAGS] &= (uint8_t)~EXDE_FLAG_NO_FAT_CHAIN;
            *changed = 1;
            chk_repaired(k);
        }
        return 0;
    }
    uint64_t want64 = chk_clusters_for(k, dl);
    uint32_t want = want64 > k->ccount ? k->ccount + 1 : (uint32_t)want64, got, last;
    int why = first ? chk_walk(k, first, contig, want, &got, &last) : WALK_RANGE;
    if (!first)
        got = 0;
    if (why == WALK_IO)
        return SF_EIO;
    if (why != WALK_OK) {
        static const int kinds[] = { 0, SF_CHK_SIZE, SF_CHK_RANGE, SF_CHK_CROSSLINK, SF_CHK_LOOP,
                                     SF_CHK_SIZE };
        uint64_t keep = (uint64_t)got * k->cs;
        if (chk_report(k, kinds[why], 1, 0, "%s after %u of %u clusters: size cut to %U",
                       chk_walk_why(why), got, want, keep < dl ? keep : dl)) {
            if (isdir && !got) {
                chk_repaired(k);        /* by the removal the caller makes */
                return 1;
            }
            if (keep < dl)
                dl = keep;
            if (vdl > dl)
                vdl = dl;
            st_le64(se + EXDE_DATA_LENGTH, dl);
            st_le64(se + EXDE_STREAM_VALID_LEN, vdl);
            if (!got) {
                st_le32(se + EXDE_FIRST_CLUSTER, 0);
                se[EXDE_STREAM_FLAGS] &= (uint8_t)~EXDE_FLAG_NO_FAT_CHAIN;
            }
            *changed = 1;
            /* The entry goes out before the FAT end mark (reference removed first); the end
             * mark is written by the caller after the set. */
            k->cut_after = (!contig && got && why != WALK_SHORT) ? last : 0;
            chk_repaired(k);
        }
    }
    if (got && isdir) {
        /* Entered after the rest of this directory (scan_dir), so that its own files claim
         * their clusters first, as fsck.exfat (breadth first) has them do. */
        x->sub.first = first;
        x->sub.contig = (uint8_t)contig;
        x->sub.got = got;
        x->sub_ready = 1;
    }
    int cand = 0;
    if (!isdir && why == WALK_OK && k->ncand < CHK_CANDS && !(k->o->flags & SF_CHECK_NO_RECOVER)) {
        uint32_t nl = se[EXDE_STREAM_NAME_LEN];
        uint16_t nm[255];
        for (uint32_t i = 0; i < nl; i++)
            nm[i] = ld_le16(s->e + (2 + i / 15) * EXDE_SIZE + EXDE_NAME_CHARS + (i % 15) * 2);
        if (chk_is_log_name(nm, nl)) {
            struct chk_cand *c = &k->cand[k->ncand++];
            for (uint32_t i = 0; i < s->n; i++) {
                c->ent_lba[i] = s->lba[i];
                c->ent_off[i] = (uint16_t)s->off[i];
            }
            c->set_n = s->n;
            c->first = first;
            c->last = last;
            c->nclus = got;
            c->size = dl;
            c->contig = contig;
            chk_fmt(c->path, sizeof c->path, "%s", k->path);
            cand = 1;
        }
    }
    /* A FAT chain must end where the size does; a log file's tail waits for recovery
     * (chk_cut_tails). */
    if (!contig && why == WALK_OK && got && !cand) {
        uint32_t nx;
        if (chk_fat_get(k, last, &nx))
            return SF_EIO;
        if (nx != CHK_EOC && chk_report(k, SF_CHK_SIZE, 1, 0, "cluster chain longer than the "
                                        "size %U: cut", dl)) {
            if (chk_fat_set(k, last, CHK_EOC))
                return SF_EIO;
            chk_repaired(k);
        }
    }
    return 0;
}

/* SetChecksum over the n + 1 entries from idx, read one at a time (n may be larger than a
 * set can be: a damaged count is still summed as fsck.exfat does). *fits: 0 when they run
 * past the end of the directory; *lba_span: the entries lie in more than one sector. */
static int sum_entries(struct chk *k, struct chk_dir *d, uint32_t idx, uint32_t n,
                       uint16_t *sum, int *fits, int *span)
{
    uint16_t s = 0;
    uint8_t *ent;
    uint64_t lba, lba0 = 0;
    uint32_t off;
    *fits = idx + n < chk_dir_entries(k, d);
    *span = 0;
    if (!*fits)
        return 0;
    for (uint32_t i = 0; i <= n; i++) {
        if (chk_dir_entry(k, d, idx + i, &ent, &lba, &off))
            return SF_EIO;
        if (i == 0)
            lba0 = lba;
        else if (lba != lba0)
            *span = 1;
        for (uint32_t j = 0; j < EXDE_SIZE; j++) {
            if (i == 0 && (j == EXDE_FILE_SET_CHECKSUM || j == EXDE_FILE_SET_CHECKSUM + 1))
                continue;
            s = (uint16_t)(((s & 1) ? 0x8000u : 0) + (s >> 1) + ent[j]);
        }
    }
    *sum = s;
    return 0;
}

/* Clear the reached bits of the got clusters a walk from first just marked (a claim that
 * is given up). */
static void unwalk(struct chk *k, uint32_t first, int contig, uint32_t got)
{
    uint32_t c = first;
    for (uint32_t i = 0; i < got && chk_clus_ok(k, c); i++) {
        reach_clear(k, c);
        if (contig)
            c++;
        else if (chk_fat_get(k, c, &c))
            return;
    }
}

/* A benign entry that may own clusters (vendor allocation; flags: its General*Flags): walk
 * them. 0: fine (or nothing to walk), 1: the allocation is broken (nothing stays marked). */
static int walk_benign(struct chk *k, const uint8_t *e, uint8_t flags)
{
    uint32_t f = ld_le32(e + EXDE_FIRST_CLUSTER), got, last;
    uint64_t len = ld_le64(e + EXDE_DATA_LENGTH);
    int contig = (flags & EXDE_FLAG_NO_FAT_CHAIN) != 0;
    if (!(flags & EXDE_FLAG_ALLOC_POSSIBLE) || (!f && !len))
        return 0;
    uint64_t w = chk_clusters_for(k, len);
    if (!f || !len || w > k->ccount)
        return 1;
    int why = chk_walk(k, f, contig, (uint32_t)w, &got, &last);
    if (why == WALK_IO)
        return SF_EIO;
    if (why != WALK_OK) {
        unwalk(k, f, contig, got);
        return 1;
    }
    return 0;
}

/* The NameHash of a set whose checksum failed can be verified and is right (the set's
 * stream and names were written together). */
static int torn_hash_ok(const struct xctx *x, const uint8_t *e, uint32_t nl)
{
    uint16_t name[255];
    for (uint32_t i = 0; i < nl; i++)
        name[i] = ld_le16(e + (2 + i / 15) * EXDE_SIZE + EXDE_NAME_CHARS + (i % 15) * 2);
    return (x->hash_ok || ascii_only(name, nl)) &&
           name_hash(name, nl) == ld_le16(e + EXDE_SIZE + EXDE_STREAM_NAME_HASH);
}

/* Check the set starting at entry idx (a file entry). *skip: entries to move on by.
 *
 * What is a set (as fsck.exfat reads one): the SetChecksum over SecondaryCount + 1 entries
 * must hold; then a stream extension, one or more name entries, the name running to its
 * first NUL (NameLength follows it), and after the names only benign secondaries (vendor
 * entries, kept). A set whose count runs on past that (an unknown critical secondary, an
 * entry of the next set, name entries the name does not need) is cut there. A checksum
 * that fails is damage and the set is removed, except when the set spans two sectors and
 * is otherwise whole with a right name hash: that is what a power cut between the two
 * sector writes of an in-place update leaves (xset_write), and the checksum is rewritten. */
static int check_set(struct chk *k, struct xctx *x, struct chk_dir *d, uint32_t idx,
                     uint32_t depth, uint32_t *skip)
{
    struct xset s;
    uint8_t *ent;
    uint32_t n2, i;
    int err, changed = 0, fits = 0, span = 0, sum_bad = 0;
    uint16_t sum = 0;
    if ((err = chk_dir_entry(k, d, idx, &ent, &s.lba[0], &s.off[0])))
        return err;
    memcpy(s.e, ent, EXDE_SIZE);
    n2 = s.e[EXDE_FILE_SECONDARY_COUNT];
    s.n = 1;
    *skip = 1;
    const char *bad = NULL;
    if (n2 < 2) {
        bad = "secondary count out of range";
    } else {
        if ((err = sum_entries(k, d, idx, n2, &sum, &fits, &span)))
            return err;
        if (!fits)
            bad = "the set runs past the end of the directory";
        else if (sum != ld_le16(s.e + EXDE_FILE_SET_CHECKSUM))
            sum_bad = 1;
    }
    /* The entries of the set as far as they are secondaries (at most a full set). */
    uint32_t have = 0;
    for (i = 1; !bad && i <= n2 && i <= EXFAT_MAX_SECONDARY; i++) {
        if ((err = chk_dir_entry(k, d, idx + i, &ent, &s.lba[i], &s.off[i])))
            return err;
        if (!(ent[0] & EXDE_INUSE) || !(ent[0] & EXDE_TYPE_SECONDARY))
            break;
        memcpy(s.e + i * EXDE_SIZE, ent, EXDE_SIZE);
        have = i;
    }
    uint8_t *se = s.e + EXDE_SIZE;
    uint32_t nl = 0, need = 0, names = 0, keep = 0;
    if (!bad && (have < 1 || se[0] != EXDE_STREAM))
        bad = "no stream extension entry";
    if (!bad) {
        while (2 + names <= have && s.e[(2 + names) * EXDE_SIZE] == EXDE_NAME)
            names++;
        while (nl < names * EXFAT_NAME_PER_ENTRY &&
               ld_le16(s.e + (2 + nl / 15) * EXDE_SIZE + EXDE_NAME_CHARS + (nl % 15) * 2))
            nl++;
        need = (nl + EXFAT_NAME_PER_ENTRY - 1) / EXFAT_NAME_PER_ENTRY;
        if (!nl)
            bad = "no name";
    }
    if (!bad) {
        /* What stays in the set: stream, the names needed, then benign secondaries. */
        keep = 1 + need;
        if (need == names)
            while (keep < have && (s.e[(keep + 1) * EXDE_SIZE] & EXDE_TYPE_BENIGN))
                keep++;
        if (sum_bad && (!span || keep != n2 || have != n2 || nl != se[EXDE_STREAM_NAME_LEN] ||
                        !torn_hash_ok(x, s.e, nl)))
            bad = "entry set checksum wrong";
    }
    if (bad) {
        /* Without a name the set cannot be fixed; its clusters become leaks. */
        if (chk_report(k, SF_CHK_ENTRY, 1, 0, "entry set at index %u: %s: removed", idx, bad)) {
            if ((err = delete_run(k, d, idx, skip)))
                return err;
            chk_repaired(k);
        }
        return 0;
    }
    s.n = 1 + keep;
    *skip = 1 + keep;
    uint16_t name[255];
    for (i = 0; i < nl; i++)
        name[i] = ld_le16(s.e + (2 + i / 15) * EXDE_SIZE + EXDE_NAME_CHARS + (i % 15) * 2);
    uint32_t saved = chk_path_push(k, name, nl);
    if (keep != n2) {
        if (chk_report(k, SF_CHK_ENTRY, 1, 0, "entry set: secondary count %u, but %u entries "
                       "belong to it: cut there", n2, keep)) {
            s.e[EXDE_FILE_SECONDARY_COUNT] = (uint8_t)keep;
            changed = 1;
            chk_repaired(k);
        }
    }
    if (nl != se[EXDE_STREAM_NAME_LEN]) {
        if (chk_report(k, SF_CHK_NAME, 1, 0, "name length %u, but the name has %u characters",
                       se[EXDE_STREAM_NAME_LEN], nl)) {
            se[EXDE_STREAM_NAME_LEN] = (uint8_t)nl;
            changed = 1;
            chk_repaired(k);
        }
    }
    /* Vendor allocation entries: their clusters are reached too, or they would count as
     * leaks; one whose allocation is broken ends the set. */
    for (i = 2 + need; i < s.n; i++) {
        int r = walk_benign(k, s.e + i * EXDE_SIZE, s.e[i * EXDE_SIZE + EXDE_STREAM_FLAGS]);
        if (r < 0) {
            chk_path_pop(k, saved);
            return r;
        }
        if (r && chk_report(k, SF_CHK_RANGE, 1, 0, "secondary entry 0x%x: its allocation is "
                            "broken: removed from the set", s.e[i * EXDE_SIZE])) {
            s.n = i;
            s.e[EXDE_FILE_SECONDARY_COUNT] = (uint8_t)(i - 1);
            *skip = i;              /* what follows is met as stray entries and goes */
            changed = 1;
            chk_repaired(k);
        }
    }
    int isdir = (ld_le16(s.e + EXDE_FILE_ATTR) & 0x10) != 0;
    const char *leftover = chk_leftover(name, nl, isdir, ld_le64(se + EXDE_DATA_LENGTH));
    if (leftover) {                     /* leftover.c: removed before its chain is walked */
        if (chk_report(k, SF_CHK_ENTRY, 1, 0, "%s: removed", leftover) &&
            !(err = xset_delete(k, &s, s.n)))
            chk_repaired(k);
        chk_path_pop(k, saved);
        return err;
    }
    if (isdir)
        k->r->dirs++;
    else
        k->r->files++;
    if (sum_bad) {
        if (chk_report(k, SF_CHK_ENTRY, 1, 0, "entry set checksum wrong (a set over two "
                       "sectors, updated in place: the power cut case): recomputed")) {
            changed = 1;
            chk_repaired(k);
        }
    }
    int badc = 0;
    for (i = 0; i < nl; i++)
        badc |= bad_name_char(name[i]);
    if (badc || (nl <= 2 && name[0] == '.' && (nl == 1 || name[1] == '.'))) {
        if (chk_report(k, SF_CHK_NAME, 1, 0, "name holds a forbidden character or is a dot "
                       "name: replaced by '_'")) {
            for (i = 0; i < nl; i++) {
                if (!badc || bad_name_char(name[i]))
                    name[i] = '_';
                st_le16(s.e + (2 + i / 15) * EXDE_SIZE + EXDE_NAME_CHARS + (i % 15) * 2,
                        name[i]);
            }
            st_le16(se + EXDE_STREAM_NAME_HASH, name_hash(name, nl));
            changed = 1;
            chk_repaired(k);
        }
    } else if ((x->hash_ok || ascii_only(name, nl)) &&
               name_hash(name, nl) != ld_le16(se + EXDE_STREAM_NAME_HASH)) {
        if (chk_report(k, SF_CHK_NAME, 1, 0, "name hash wrong")) {
            st_le16(se + EXDE_STREAM_NAME_HASH, name_hash(name, nl));
            changed = 1;
            chk_repaired(k);
        }
    }
    k->cut_after = 0;
    x->sub_ready = 0;
    err = check_stream(k, x, &s, &changed);
    if (err < 0) {
        chk_path_pop(k, saved);
        return err;
    }
    if (err == 1) {
        if (chk_report(k, SF_CHK_SIZE, 1, 0, "directory without clusters: removed"))
            if (!(err = xset_delete(k, &s, s.n)))
                chk_repaired(k);
        chk_path_pop(k, saved);
        return err == 1 ? 0 : err;
    }
    if (changed && k->repair && !isdir &&
        (leftover = chk_leftover(name, nl, 0, ld_le64(se + EXDE_DATA_LENGTH)))) {
        /* a repair emptied a log file: removed in the same pass (leftover.c) */
        if (chk_report(k, SF_CHK_ENTRY, 1, 0, "%s: removed", leftover) &&
            !(err = xset_delete(k, &s, s.n)))
            chk_repaired(k);
        chk_path_pop(k, saved);
        return err;
    }
    if (changed && k->repair) {
        st_le16(s.e + EXDE_FILE_SET_CHECKSUM, set_sum(s.e, s.n));
        if ((err = xset_write(k, &s)) ||
            (k->cut_after && (err = chk_fat_set(k, k->cut_after, CHK_EOC)))) {
            chk_path_pop(k, saved);
            return err;
        }
    }
    if (x->sub_ready && x->subs && x->nsubs < XSUBS) {
        x->sub.idx = idx;
        x->sub.nl = (uint8_t)nl;
        x->subs[x->nsubs++] = x->sub;
    } else if (x->sub_ready) {
        err = enter_dir(k, x, &x->sub, depth);
    }
    chk_path_pop(k, saved);
    return err;
}

/* The allocation bitmap and up-case table entries of the root directory. */
static int check_system(struct chk *k, struct xctx *x, const uint8_t *e)
{
    uint32_t first = ld_le32(e + EXDE_FIRST_CLUSTER), got, last;
    uint64_t len = ld_le64(e + EXDE_DATA_LENGTH);
    uint64_t want = chk_clusters_for(k, len);
    if (e[0] == EXDE_BITMAP) {
        if (len < ((uint64_t)k->ccount + 7) / 8 || want > k->ccount) {
            chk_report(k, SF_CHK_BITMAP, 0, 1, want > k->ccount
                       ? "allocation bitmap longer than the cluster heap"
                       : "allocation bitmap too small for the volume");
            return 0;
        }
        int why = chk_walk(k, first, 0, (uint32_t)want, &got, &last);
        if (why == WALK_IO)
            return SF_EIO;
        if (why != WALK_OK || last != first + got - 1) {
            chk_report(k, SF_CHK_BITMAP, 0, 1, "allocation bitmap chain: %s",
                       why != WALK_OK ? chk_walk_why(why) : "not contiguous (not supported)");
            return 0;
        }
        /* Contiguity of the chain: each entry must point at the next cluster. */
        for (uint32_t c = first; c < last; c++) {
            uint32_t nx;
            if (chk_fat_get(k, c, &nx))
                return SF_EIO;
            if (nx != c + 1) {
                chk_report(k, SF_CHK_BITMAP, 0, 1, "allocation bitmap is fragmented (not "
                           "supported)");
                return 0;
            }
        }
        if (k->bm_clus != first) {
            chk_report(k, SF_CHK_BITMAP, 0, 1, "more than one allocation bitmap entry");
            return 0;
        }
        x->have_bitmap = 1;
        return 0;
    }
    /* Up-case table */
    int why = chk_walk(k, first, 0, (uint32_t)(want > k->ccount ? k->ccount : want), &got, &last);
    if (why == WALK_IO)
        return SF_EIO;
    if (why != WALK_OK || !len || len > 128 * 1024) {
        chk_report(k, SF_CHK_UPCASE, 0, 1, "up-case table: %s",
                   why != WALK_OK ? chk_walk_why(why) : "size out of range");
        return 0;
    }
    uint32_t sum = 0, c = first;
    uint64_t done = 0;
    while (done < len) {
        for (uint32_t j = 0; j < (1u << k->spc_shift) && done < len; j++) {
            if (chk_read(k, chk_clus_lba(k, c) + j, k->xsec))
                return SF_EIO;
            uint32_t n = len - done < k->ss ? (uint32_t)(len - done) : k->ss;
            sum = sf_exfat_sum32(sum, k->xsec, n);
            done += n;
        }
        if (done < len && (chk_fat_get(k, c, &c) || !chk_clus_ok(k, c)))
            break;
    }
    if (sum != ld_le32(e + EXDE_UPCASE_CHECKSUM))
        chk_report(k, SF_CHK_UPCASE, 0, 1, "up-case table checksum wrong");
    x->hash_ok = sum == sf_upcase_table_checksum;
    return 0;
}

/* A volume label entry: NULL when well-formed, else what is wrong. */
static const char *label_bad(const uint8_t *e)
{
    uint32_t n = e[EXDE_LABEL_LEN];
    if (n > EXFAT_LABEL_MAX)
        return "longer than 11 characters";
    for (uint32_t i = 0; i < n; i++)
        if (bad_name_char(ld_le16(e + EXDE_LABEL_CHARS + 2 * i)))
            return "a forbidden character";
    for (uint32_t i = EXDE_LABEL_CHARS + 2 * EXFAT_LABEL_MAX; i < EXDE_SIZE; i++)
        if (e[i])
            return "reserved bytes not zero";
    return NULL;
}

/* A benign primary at idx: *vendor = 1 + its entries when its set is well-formed (every
 * secondary in use and benign, SetChecksum right, allocations sound), else 0. */
static int check_benign(struct chk *k, struct chk_dir *d, uint32_t idx, int *vendor)
{
    uint8_t *ent, e[EXDE_SIZE];
    uint64_t lba;
    uint32_t off, n;
    uint16_t sum, want;
    int fits, span, err;
    *vendor = 0;
    if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
        return err;
    n = ent[EXDE_FILE_SECONDARY_COUNT];
    want = ld_le16(ent + EXDE_FILE_SET_CHECKSUM);
    if ((err = sum_entries(k, d, idx, n, &sum, &fits, &span)))
        return err;
    if (!fits || sum != want)
        return 0;
    for (uint32_t i = 1; i <= n; i++) {
        if ((err = chk_dir_entry(k, d, idx + i, &ent, &lba, &off)))
            return err;
        if ((ent[0] & 0xE0u) != 0xE0u)
            return 0;
    }
    /* Allocations last, so that nothing is marked for a set found broken above. */
    for (uint32_t i = 0; i <= n; i++) {
        if ((err = chk_dir_entry(k, d, idx + i, &ent, &lba, &off)))
            return err;
        memcpy(e, ent, EXDE_SIZE);
        int r = walk_benign(k, e, i ? e[EXDE_STREAM_FLAGS] : e[4]);   /* GeneralPrimaryFlags */
        if (r < 0)
            return r;
        if (r)
            return 0;       /* (clusters of earlier entries stay marked: rare, and leaks) */
    }
    *vendor = (int)n + 1;
    return 0;
}

static int scan_dir(struct chk *k, struct xctx *x, struct chk_dir *d, uint32_t depth)
{
    struct xsub subs[XSUBS];
    x->subs = subs;
    x->nsubs = 0;
    int err = scan_entries(k, x, d, depth);
    if (err)
        return err;
    return enter_subs(k, x, d, subs, x->nsubs, depth);
}

static int scan_entries(struct chk *k, struct xctx *x, struct chk_dir *d, uint32_t depth)
{
    uint32_t total = chk_dir_entries(k, d), skip;
    uint64_t lba;
    uint32_t off;
    uint8_t *ent;
    int err;
    for (uint32_t idx = 0; idx < total; idx += skip) {
        skip = 1;
        if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
            return err;
        uint8_t t = ent[0];
        if (t == EXDE_END)
            break;
        if (!(t & EXDE_INUSE))
            continue;
        if (t == EXDE_FILE) {
            if ((err = check_set(k, x, d, idx, depth, &skip)))
                return err;
        } else if (depth == 0 && k->nfats == 1 &&
                   ((t == EXDE_BITMAP && x->bm_idx != UINT32_MAX && idx != x->bm_idx) ||
                    (t == EXDE_UPCASE && x->up_idx != UINT32_MAX && idx != x->up_idx))) {
            /* The first usable one is the volume's (readers take the first they find). */
            if (chk_report(k, SF_CHK_ENTRY, 0, 0, "another %s entry at index %u: marked unused",
                           t == EXDE_BITMAP ? "allocation bitmap" : "up-case table", idx)) {
                unuse(ent);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
        } else if (depth == 0 && (t == EXDE_BITMAP || t == EXDE_UPCASE)) {
            uint8_t e[EXDE_SIZE];
            memcpy(e, ent, EXDE_SIZE);
            if ((err = check_system(k, x, e)))
                return err;
        } else if (t == EXDE_LABEL && depth == 0) {
            const char *why = x->have_label ? "a second volume label entry" : label_bad(ent);
            if (!why) {
                x->have_label = 1;
            } else if (chk_report(k, SF_CHK_ENTRY, 0, 0, "volume label entry at index %u: %s: "
                                  "marked unused", idx, why)) {
                /* Never a label from a damaged entry: the volume has none (or the one
                 * well-formed entry) afterwards. */
                unuse(ent);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
        } else if (t & EXDE_TYPE_SECONDARY) {
            if (chk_report(k, SF_CHK_ENTRY, 1, 0, "stray secondary entry (type 0x%x) at "
                           "index %u: marked unused", t, idx)) {
                unuse(ent);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
        } else if (t & EXDE_TYPE_BENIGN) {
            /* A benign primary (vendor entry) and its set, kept when well-formed; else it is
             * damage, and only the primary goes (what follows is checked on its own). */
            int vendor;
            if ((err = check_benign(k, d, idx, &vendor)))
                return err;
            if (vendor) {
                skip = (uint32_t)vendor;
            } else if (chk_report(k, SF_CHK_ENTRY, 1, 0, "benign entry type 0x%x at index %u "
                                  "whose set is broken: marked unused", t, idx)) {
                if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
                    return err;
                unuse(ent);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
        } else if (chk_report(k, SF_CHK_ENTRY, 1, 0, "unknown critical entry type 0x%x at "
                              "index %u: marked unused", t, idx)) {
            /* A reader that does not know a critical primary must not use the directory
             * (spec 6.3.1): marking it unused is what makes the directory usable again. */
            if ((err = delete_run(k, d, idx, &skip)))
                return err;
            chk_repaired(k);
        }
    }
    return 0;
}

/* Enter a subdirectory (the path holds its name). */
static int enter_dir(struct chk *k, struct xctx *x, const struct xsub *sd, uint32_t depth)
{
    if (depth + 1 >= CHK_DEPTH_MAX) {
        chk_report(k, SF_CHK_ENTRY, 1, 1, "directory nested too deep: not checked");
        return 0;
    }
    struct chk_dir sub = { sd->first, sd->contig, sd->got, 0, 0, 0, 0 };
    struct xsub *psubs = x->subs;
    uint32_t pn = x->nsubs;
    int err = scan_dir(k, x, &sub, depth + 1);
    x->subs = psubs;
    x->nsubs = pn;
    return err;
}

/* The subdirectories scan_dir put aside, entered with their paths. */
static SF_NOINLINE int enter_subs(struct chk *k, struct xctx *x, struct chk_dir *d, struct xsub *subs,
                      uint32_t n, uint32_t depth)
{
    for (uint32_t j = 0; j < n; j++) {
        uint8_t *ent;
        uint64_t lba;
        uint32_t off, nl;
        uint16_t name[255];
        int err;
        nl = subs[j].nl;
        for (uint32_t i = 0; i < nl; i++) {
            if (i % 15 == 0 &&
                (err = chk_dir_entry(k, d, subs[j].idx + 2 + i / 15, &ent, &lba, &off)))
                return err;
            name[i] = ld_le16(ent + EXDE_NAME_CHARS + (i % 15) * 2);
        }
        uint32_t saved = chk_path_push(k, name, nl);
        err = enter_dir(k, x, &subs[j], depth);
        chk_path_pop(k, saved);
        if (err)
            return err;
    }
    return 0;
}

/* ---- recovery hook: a log file's new size ---- */

static int set_size(struct chk *k, struct chk_cand *c, uint64_t size, uint32_t nclus,
                    uint32_t last)
{
    struct xset s;
    uint8_t *sec;
    (void)nclus;
    (void)last;
    s.n = c->set_n;
    for (uint32_t i = 0; i < s.n; i++) {
        if (chk_dsec(k, c->ent_lba[i], &sec))
            return SF_EIO;
        memcpy(s.e + i * EXDE_SIZE, sec + c->ent_off[i], EXDE_SIZE);
        s.lba[i] = c->ent_lba[i];
        s.off[i] = c->ent_off[i];
    }
    uint8_t *se = s.e + EXDE_SIZE;
    if (s.e[0] != EXDE_FILE || se[0] != EXDE_STREAM)
        return SF_ECORRUPT;
    st_le64(se + EXDE_DATA_LENGTH, size);
    st_le64(se + EXDE_STREAM_VALID_LEN, size);
    if (!c->contig)          /* recovery followed the FAT chain (recover.c): the entry too */
        se[EXDE_STREAM_FLAGS] &= (uint8_t)~EXDE_FLAG_NO_FAT_CHAIN;
    st_le16(s.e + EXDE_FILE_SET_CHECKSUM, set_sum(s.e, s.n));
    return xset_write(k, &s);
}

static int bitmap_test(struct chk *k, uint32_t c, int *used)
{
    uint64_t bit = c - 2, lba = chk_clus_lba(k, k->bm_clus) + bit / (k->ss * 8u);
    if (lba != k->bsec_lba) {
        k->bsec_lba = UINT64_MAX;
        if (chk_read(k, lba, k->bsec))
            return SF_EIO;
        k->bsec_lba = lba;
    }
    uint32_t in = (uint32_t)(bit % (k->ss * 8u));
    *used = (k->bsec[in / 8] >> (in % 8)) & 1;
    return 0;
}

/* ---- the bitmap against the clusters reached ---- */

/* Bits set in a byte (no libgcc helper on small targets). */
static uint32_t bits8(uint8_t b)
{
    uint32_t n = 0;
    for (; b; b &= (uint8_t)(b - 1))
        n++;
    return n;
}

static int check_bitmap(struct chk *k)
{
    uint64_t leaked = 0, missing = 0, used = 0;
    uint32_t bits_per = k->ss * 8;
    uint64_t first = chk_clus_lba(k, k->bm_clus);
    k->bsec_lba = UINT64_MAX;          /* bsec is used directly below */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t s0 = 0; s0 * (uint64_t)bits_per < k->ccount; s0++) {
            if (chk_read(k, first + s0, k->bsec))
                return SF_EIO;
            int dirty = 0;
            for (uint32_t j = 0; j < k->ss; j++) {
                uint64_t c0 = (uint64_t)s0 * bits_per + (uint64_t)j * 8;
                if (c0 >= k->ccount)
                    break;
                uint8_t want = k->reach[c0 / 8];
                if (k->ccount - c0 < 8)
                    want &= (uint8_t)((1u << (k->ccount - c0)) - 1);
                uint8_t have = k->bsec[j];
                if (k->ccount - c0 < 8)
                    have &= (uint8_t)((1u << (k->ccount - c0)) - 1);
                if (pass == 0) {
                    leaked += bits8((uint8_t)(have & ~want));
                    missing += bits8((uint8_t)(want & ~have));
                    used += bits8(want);
                } else if (have != want) {
                    k->bsec[j] = (uint8_t)((k->bsec[j] & ~have) | want);
                    dirty = 1;
                }
            }
            if (dirty && chk_write(k, first + s0, k->bsec))
                return SF_EIO;
        }
        if (pass == 0) {
            k->r->leaked_clusters = leaked;
            k->r->clusters_used = used;
            int fix = 0;
            if (missing)
                fix |= chk_report(k, SF_CHK_BITMAP, 0, 0, "%U clusters in use are marked free "
                                  "in the allocation bitmap", missing);
            if (missing && fix)
                chk_repaired(k);
            if (leaked)
                fix |= chk_report(k, SF_CHK_LEAK, 0, 0, "%U clusters allocated that no file "
                                  "uses", leaked);
            if (leaked && fix)
                chk_repaired(k);
            if (!fix)
                break;
        }
    }
    return 0;
}

int chk_exfat(struct chk *k, uint8_t *boot)
{
    struct xctx x;
    memset(&x, 0, sizeof x);
    x.bm_idx = x.up_idx = UINT32_MAX;
    uint32_t got, last;
    int err;
    (void)boot;
    if ((err = check_boot(k)))
        return err;
    if (chk_read(k, EXFAT_BOOT_MAIN, k->xsec))
        return SF_EIO;
    if (geometry(k))
        return 0;
    int why = chk_walk(k, k->root_clus, 0, UINT32_MAX, &got, &last);
    if (why == WALK_IO)
        return SF_EIO;
    if (why != WALK_OK) {
        if (!got) {
            chk_report(k, SF_CHK_RANGE, 0, 1, "root directory: %s", chk_walk_why(why));
            return 0;
        }
        if (chk_report(k, SF_CHK_RANGE, 0, 0, "root directory: %s after %u clusters: cut there",
                       chk_walk_why(why), got)) {
            if ((err = chk_fat_set(k, last, CHK_EOC)))
                return err;
            chk_repaired(k);
        }
    }
    struct chk_dir root = { k->root_clus, 0, got, 0, 0, 0, 0 };
    /* The bitmap entry first (it is checked in its turn by scan_dir): walks of contiguous
     * files consult the bitmap. */
    k->alloc_test = bitmap_test;
    for (uint32_t i = 0; i < chk_dir_entries(k, &root); i++) {
        uint8_t *e;
        uint64_t lba;
        uint32_t off;
        if ((err = chk_dir_entry(k, &root, i, &e, &lba, &off)))
            return err;
        if (e[0] == EXDE_END)
            break;
        uint32_t fc = ld_le32(e + EXDE_FIRST_CLUSTER);
        uint64_t fl = ld_le64(e + EXDE_DATA_LENGTH);
        if (e[0] == EXDE_BITMAP && x.bm_idx == UINT32_MAX && chk_clus_ok(k, fc) &&
            fl >= ((uint64_t)k->ccount + 7) / 8 && chk_clusters_for(k, fl) <= k->ccount - (fc - 2)) {
            k->bm_clus = fc;
            x.bm_idx = i;
        }
        if (e[0] == EXDE_UPCASE && x.up_idx == UINT32_MAX && chk_clus_ok(k, fc) && fl &&
            fl <= 128 * 1024)
            x.up_idx = i;
    }
    if ((err = scan_dir(k, &x, &root, 0)))
        return err;
    if (!x.have_bitmap) {
        chk_report(k, SF_CHK_BITMAP, 0, 1, "no usable allocation bitmap");
        return 0;
    }
    k->alloc_test = bitmap_test;
    if (!(k->o->flags & SF_CHECK_NO_RECOVER) && (err = chk_recover(k, set_size)))
        return err;
    if ((err = chk_cut_tails(k)))
        return err;
    if ((err = check_bitmap(k)))
        return err;
    if (k->boot_flags_dirty) {
        if (chk_report(k, SF_CHK_DIRTY, 0, 0, "volume is marked dirty (not cleanly unmounted)")) {
            if (k->r->unrepairable) {
                chk_unrepaired(k);       /* stays dirty: problems remain */
                return 0;
            }
            if (sf_bdev_flush(k->bd) || chk_read(k, EXFAT_BOOT_MAIN, k->xsec))
                return SF_EIO;
            st_le16(k->xsec + EXBS_VOLUME_FLAGS,
                    (uint16_t)(ld_le16(k->xsec + EXBS_VOLUME_FLAGS) & ~EXFAT_VOLFLAG_DIRTY));
            if ((err = chk_write(k, EXFAT_BOOT_MAIN, k->xsec)))
                return err;
            chk_repaired(k);
        }
    }
    return 0;
}
