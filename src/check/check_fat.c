/* The FAT12/16/32 checker: BPB, backup boot sector (FAT32), dirty bits, directory entries
 * (8.3 names, long-name runs and their checksums, dot entries, sizes against chains),
 * chains (range, loops, cross-links, too long), lost clusters, FAT copies.
 *
 * Directories are read to their end (past 0x00 marks, as dosfstools and Linux read them);
 * every entry of a directory is checked (repairing: subdirectories' own chains too, in
 * their place among the files) before any subdirectory is entered: dosfstools' order, so
 * that damage deeper down never takes the clusters of an entry above it.
 *
 * Repair order: entries first (sizes cut, references removed), then chain end marks, then
 * log recovery (entries grow over chains that already exist), then lost clusters freed and
 * the other FAT copies made equal to the first, a flush, and the clean-shutdown bits last.
 * FAT12 is checked only. */
#include <string.h>
#include "check/check_int.h"
#include "fs/fat_ondisk.h"
#include "fs/fat_name.h"

/* Geometry from a BPB: 0 with *ccount, or SF_ECORRUPT. */
static int bpb(const uint8_t *b, uint32_t ss, uint32_t *ccount, uint32_t *fatsz,
               uint64_t *data_lba, uint32_t *root_secs)
{
    uint32_t spc = b[BPB_SEC_PER_CLUS], rsvd = ld_le16(b + BPB_RSVD_SEC_CNT);
    uint32_t nf = b[BPB_NUM_FATS], re = ld_le16(b + BPB_ROOT_ENT_CNT);
    uint32_t fs = ld_le16(b + BPB_FAT_SZ16) ? ld_le16(b + BPB_FAT_SZ16) : ld_le32(b + BPB32_FAT_SZ32);
    uint32_t tot = ld_le16(b + BPB_TOT_SEC16) ? ld_le16(b + BPB_TOT_SEC16) : ld_le32(b + BPB_TOT_SEC32);
    if ((b[0] != 0xEB && b[0] != 0xE9) || ld_le16(b + BS_SIGNATURE) != 0xAA55 ||
        ld_le16(b + BPB_BYTES_PER_SEC) != ss || !spc || (spc & (spc - 1)) || !rsvd || !nf ||
        !fs)
        return SF_ECORRUPT;
    uint32_t rs = (re * 32 + ss - 1) / ss;
    uint64_t meta = rsvd + (uint64_t)nf * fs + rs;
    if (meta >= tot)
        return SF_ECORRUPT;
    *ccount = (uint32_t)((tot - meta) / spc);
    *fatsz = fs;
    *data_lba = meta;
    *root_secs = rs;
    return *ccount ? 0 : SF_ECORRUPT;
}

int chk_fat_probe(const uint8_t *b, uint32_t ss, uint32_t *ccount)
{
    uint32_t fs, rs;
    uint64_t d;
    return bpb(b, ss, ccount, &fs, &d, &rs);
}

static uint32_t spc_shift(uint32_t spc)
{
    uint32_t s = 0;
    while ((1u << s) < spc)
        s++;
    return s;
}

/* ---- directories ---- */

static int bad_sfn_char(uint8_t c, int first)
{
    if (first && c == DIR_KANJI_E5)
        return 0;
    if (c < 0x20 || c == 0x7F)
        return 1;
    static const char bad[] = "\"*+,./:;<=>?[\\]|";
    for (const char *p = bad; *p; p++)
        if (c == (uint8_t)*p)
            return 1;
    return 0;
}

/* A label as dosfstools validates it: no control, non-ASCII (fsck.fat reads the byte as a
 * signed char) or forbidden characters, and no leading space (so not blank either). */
static int label_valid(const uint8_t *l)
{
    if (l[0] == ' ')
        return 0;
    for (uint32_t i = 0; i < 11; i++)
        if (l[i] >= 0x7F || (bad_sfn_char(l[i], 0) && l[i] != ' '))
            return 0;
    return 1;
}

struct fctx {
    /* Long-name run in progress: where its entries are, for removal. */
    uint64_t lfn_lba[LDIR_MAX_ENTRIES];
    uint16_t lfn_off[LDIR_MAX_ENTRIES];
    uint32_t lfn_n;         /* entries seen */
    uint32_t lfn_next;      /* ordinal expected next (0: the run is complete) */
    uint8_t lfn_sum;
    uint16_t name[LDIR_MAX_ENTRIES * LDIR_CHARS];
    uint32_t name_len;
};

static int lfn_drop(struct chk *k, struct fctx *f, const char *why)
{
    int err = 0;
    if (!f->lfn_n)
        return 0;
    if (chk_report(k, SF_CHK_ENTRY, 1, 0, "long-name entries without their 8.3 entry (%s): "
                   "removed", why)) {
        for (uint32_t i = 0; i < f->lfn_n && !err; i++) {
            uint8_t *sec;
            if (!(err = chk_dsec(k, f->lfn_lba[i], &sec))) {
                sec[f->lfn_off[i]] = DIR_FREE;
                err = chk_dsec_put(k);
            }
        }
        if (!err)
            chk_repaired(k);
    }
    f->lfn_n = 0;
    f->lfn_next = 0;
    return err;
}

static int scan_dir(struct chk *k, struct chk_dir *d, uint32_t self, uint32_t parent,
                    uint32_t depth);

/* Remove a leftover (leftover.c): the 8.3 entry first, then its long name. */
static int drop_leftover(struct chk *k, struct fctx *f, uint64_t lba, uint32_t off,
                         const char *why)
{
    int err = 0;
    if (chk_report(k, SF_CHK_ENTRY, 1, 0, "%s: removed", why)) {
        uint8_t *sec;
        for (uint32_t i = 0; i <= f->lfn_n && !err; i++) {
            if (!(err = chk_dsec(k, i ? f->lfn_lba[i - 1] : lba, &sec))) {
                sec[i ? f->lfn_off[i - 1] : off] = DIR_FREE;
                err = chk_dsec_put(k);
            }
        }
        if (!err)
            chk_repaired(k);
    }
    return err;
}

/* After check_entry: a log file whose size a repair cut to 0 is a leftover now; removed in
 * the same pass, so that a second check finds nothing. */
static const char *chk_leftover_after(struct chk *k, const uint16_t *name, uint32_t nl,
                                      uint64_t lba, uint32_t off)
{
    uint8_t *sec;
    if (chk_dsec(k, lba, &sec) || (sec[off + DIR_ATTR] & ATTR_DIRECTORY) || sec[off] == DIR_FREE)
        return NULL;
    return chk_leftover(name, nl, 0, ld_le32(sec + off + DIR_FILE_SIZE));
}

/* Patch the 8.3 entry at (lba, off): first cluster and size. */
static int patch_entry(struct chk *k, uint64_t lba, uint32_t off, uint32_t first, uint32_t size)
{
    uint8_t *sec;
    if (chk_dsec(k, lba, &sec))
        return SF_EIO;
    st_le16(sec + off + DIR_FST_CLUS_LO, (uint16_t)first);
    if (k->fs == 32)
        st_le16(sec + off + DIR_FST_CLUS_HI, (uint16_t)(first >> 16));
    st_le32(sec + off + DIR_FILE_SIZE, size);
    return chk_dsec_put(k);
}

/* An entry that could be a file's or directory's as written: a name without forbidden
 * characters, no reserved or label attribute bits, a cluster on the volume exactly when
 * there is a size, a size the volume can hold. */
static int plausible_entry(const struct chk *k, const uint8_t *e)
{
    uint32_t c = ld_le16(e + DIR_FST_CLUS_LO), size = ld_le32(e + DIR_FILE_SIZE);
    if (k->fs == 32)
        c |= (uint32_t)ld_le16(e + DIR_FST_CLUS_HI) << 16;
    if (e[0] == ' ' || (e[DIR_ATTR] & ~(uint32_t)(ATTR_LONG_NAME_MASK & ~ATTR_VOLUME_ID)))
        return 0;
    for (uint32_t i = 0; i < 11; i++)
        if (e[i] >= 0x7F || (bad_sfn_char(e[i], i == 0) && e[i] != ' '))
            return 0;
    if (c ? !chk_clus_ok(k, c) || (uint64_t)size > (uint64_t)k->ccount * k->cs
          : size && !(e[DIR_ATTR] & ATTR_DIRECTORY))
        return 0;
    return 1;
}

/* Does the chain at `first` hold a directory? '.' or '..' in their slots, or else more
 * plausible entries than used implausible ones in the first cluster (a directory whose
 * first sector is damaged still has its other entries). */
static int dir_likely(struct chk *k, uint32_t first, int *likely)
{
    uint32_t ok = 0, bad = 0, per = k->ss / 32;
    for (uint32_t s = 0; s < (1u << k->spc_shift); s++) {
        uint8_t *sec;
        if (chk_dsec(k, chk_clus_lba(k, first) + s, &sec))
            return SF_EIO;
        if (!s && (!memcmp(sec, ".          ", 11) || !memcmp(sec + 32, "..         ", 11))) {
            *likely = 1;
            return 0;
        }
        for (uint32_t i = 0; i < per; i++) {
            const uint8_t *e = sec + 32 * i;
            if (e[0] == DIR_END || e[0] == DIR_FREE || e[DIR_ATTR] == ATTR_LONG_NAME)
                continue;
            if (plausible_entry(k, e))
                ok++;
            else
                bad++;
        }
    }
    *likely = ok && ok > bad;
    return 0;
}

/* Remove the 8.3 entry at (lba, off) and its long name (f: NULL or the run before it). */
static int drop_entry(struct chk *k, const struct fctx *f, uint64_t lba, uint32_t off)
{
    uint8_t *sec;
    int err;
    for (uint32_t i = 0; f && i < f->lfn_n; i++) {
        if ((err = chk_dsec(k, f->lfn_lba[i], &sec)))
            return err;
        sec[f->lfn_off[i]] = DIR_FREE;
        if ((err = chk_dsec_put(k)))
            return err;
    }
    if ((err = chk_dsec(k, lba, &sec)))
        return err;
    sec[off] = DIR_FREE;
    return chk_dsec_put(k);
}

/* How check_entry treats a directory: check it and enter it; check it (its chain claimed)
 * but do not enter it yet; or only enter it, checked before (its chain is clean). */
enum { CE_FULL, CE_CLAIM, CE_ENTER };

/* Clusters of a chain already checked and cut where it went wrong (CE_ENTER). */
static int chain_count(struct chk *k, uint32_t first, uint32_t *n)
{
    uint32_t c = first, v;
    for (*n = 0; chk_clus_ok(k, c) && *n < k->ccount; c = v) {
        ++*n;
        if (chk_fat_get(k, c, &v))
            return SF_EIO;
        if (v == CHK_EOC)
            break;
    }
    return 0;
}

/* A file or directory's 8.3 entry e (a copy) found at (lba, off), after its long name f. */
static int check_entry(struct chk *k, const uint8_t *e, uint64_t lba, uint32_t off,
                       uint32_t depth, const struct fctx *f, int mode)
{
    uint32_t first = ld_le16(e + DIR_FST_CLUS_LO);
    if (k->fs == 32)
        first |= (uint32_t)ld_le16(e + DIR_FST_CLUS_HI) << 16;
    uint32_t size = ld_le32(e + DIR_FILE_SIZE), got, last;
    int isdir = (e[DIR_ATTR] & ATTR_DIRECTORY) != 0, err;
    if (mode == CE_ENTER) {
        if (!isdir || !chk_clus_ok(k, first))
            return 0;
        if ((err = chain_count(k, first, &got)))
            return err;
        goto enter;
    }
    if (isdir && size && chk_clus_ok(k, first)) {
        /* A directory has no size. With one, and nothing like a directory where the
         * chain starts, the entry is a file whose directory bit is damaged: reading its
         * data as entries and "repairing" them would destroy it. */
        uint8_t *sec;
        int likely;
        if ((err = dir_likely(k, first, &likely)))
            return err;
        if (!likely) {
            if (chk_report(k, SF_CHK_ENTRY, 1, 0, "directory with a size and no directory "
                           "entries in its first cluster: taken as a file (directory bit "
                           "cleared)")) {
                if ((err = chk_dsec(k, lba, &sec)))
                    return err;
                sec[off + DIR_ATTR] = (uint8_t)(sec[off + DIR_ATTR] & ~ATTR_DIRECTORY);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
            isdir = 0;
        }
    }
    if (isdir) {
        k->r->dirs++;
        if (size && chk_report(k, SF_CHK_SIZE, 1, 0, "directory has a non-zero size: set to 0")) {
            if ((err = patch_entry(k, lba, off, first, 0)))
                return err;
            chk_repaired(k);
        }
        if (!first || !chk_clus_ok(k, first)) {
            if (chk_report(k, SF_CHK_RANGE, 1, 0, "directory starts at cluster %u: removed",
                           first)) {
                if ((err = drop_entry(k, f, lba, off)))
                    return err;
                chk_repaired(k);
            }
            return 0;
        }
        int why = chk_walk(k, first, 0, UINT32_MAX, &got, &last);
        if (why == WALK_IO)
            return SF_EIO;
        if (why != WALK_OK) {
            static const int kinds[] = { 0, SF_CHK_SIZE, SF_CHK_RANGE, SF_CHK_CROSSLINK,
                                         SF_CHK_LOOP, SF_CHK_SIZE };
            if (chk_report(k, kinds[why], 1, 0, "%s after %u clusters: %s", chk_walk_why(why),
                           got, got ? "cut there" : "removed")) {
                if (got)
                    err = chk_fat_set(k, last, CHK_EOC);
                else
                    err = drop_entry(k, f, lba, off);
                if (err)
                    return err;
                chk_repaired(k);
            }
            if (!got)
                return 0;
        }
        if (mode == CE_CLAIM)
            return 0;
    enter:
        if (depth + 1 >= CHK_DEPTH_MAX) {
            chk_report(k, SF_CHK_ENTRY, 1, 1, "directory nested too deep: not checked");
            return 0;
        }
        struct chk_dir sub = { first, 0, got, 0, 0, 0, 0 };
        return scan_dir(k, &sub, first, 0, depth + 1);
    }
    k->r->files++;
    uint32_t want = (uint32_t)(((uint64_t)size + k->cs - 1) / k->cs);
    if (!first) {
        if (size && chk_report(k, SF_CHK_SIZE, 1, 0, "size %u without clusters: set to 0", size)) {
            if ((err = patch_entry(k, lba, off, 0, 0)))
                return err;
            chk_repaired(k);
        }
        return 0;
    }
    if (!want) {
        /* Size 0 with a chain: the chain is dropped (its clusters become lost ones). */
        if (chk_report(k, SF_CHK_SIZE, 1, 0, "size 0 but a first cluster: cleared")) {
            if ((err = patch_entry(k, lba, off, 0, 0)))
                return err;
            chk_repaired(k);
        } else {
            chk_walk(k, first, 0, UINT32_MAX, &got, &last);  /* keep it reached */
        }
        return 0;
    }
    int why = chk_walk(k, first, 0, want, &got, &last);
    if (why == WALK_IO)
        return SF_EIO;
    if (why != WALK_OK) {
        static const int kinds[] = { 0, SF_CHK_SIZE, SF_CHK_RANGE, SF_CHK_CROSSLINK, SF_CHK_LOOP,
                                     SF_CHK_SIZE };
        uint32_t keep = (uint32_t)((uint64_t)got * k->cs < size ? (uint64_t)got * k->cs : size);
        if (chk_report(k, kinds[why], 1, 0, "%s after %u of %u clusters: size cut to %u",
                       chk_walk_why(why), got, want, keep)) {
            if ((err = patch_entry(k, lba, off, got ? first : 0, keep)) ||
                (got && why != WALK_SHORT && (err = chk_fat_set(k, last, CHK_EOC))))
                return err;
            chk_repaired(k);
        }
        return 0;
    }
    uint32_t nx;
    if (chk_fat_get(k, last, &nx))
        return SF_EIO;
    if (nx == CHK_EOC)
        return 0;
    /* The chain goes on past the size: a log file may hold blocks there (recover.c);
     * anything else is cut at its size. */
    if (k->ncand < CHK_CANDS && !(k->o->flags & SF_CHECK_NO_RECOVER) && k->lfn_is_log) {
        struct chk_cand *c = &k->cand[k->ncand++];
        c->ent_lba[0] = lba;
        c->ent_off[0] = (uint16_t)off;
        c->set_n = 1;
        c->first = first;
        c->last = last;
        c->nclus = got;
        c->size = size;
        c->contig = 0;
        chk_fmt(c->path, sizeof c->path, "%s", k->path);
        return 0;
    }
    if (chk_report(k, SF_CHK_SIZE, 1, 0, "cluster chain longer than the size %u: cut", size)) {
        if ((err = chk_fat_set(k, last, CHK_EOC)))
            return err;
        chk_repaired(k);
    }
    return 0;
}

/* The "." and ".." entries of a subdirectory (entries 0 and 1). */
static int is_dot_name(const uint8_t *e)
{
    return !memcmp(e, ".          ", 11) || !memcmp(e, "..         ", 11);
}

/* Slot i (0 or 1) of a subdirectory does not hold its dot entry: what is there moves to the
 * first free slot (copy first: a cut in between leaves the entry twice, never lost), then
 * the dot entry is written in its slot. */
static int make_dot(struct chk *k, struct chk_dir *d, uint32_t i, uint32_t clus)
{
    uint8_t *e, moved[32];
    uint64_t lba;
    uint32_t off, total = chk_dir_entries(k, d), j;
    int err;
    if ((err = chk_dir_entry(k, d, i, &e, &lba, &off)))
        return err;
    memcpy(moved, e, 32);
    /* A long-name or label entry in a dot slot is damage, not worth a slot of its own. */
    int used = moved[0] != DIR_END && moved[0] != DIR_FREE && !is_dot_name(moved) &&
               !(moved[DIR_ATTR] & ATTR_VOLUME_ID);
    for (j = 2; used && j < total; j++) {
        if ((err = chk_dir_entry(k, d, j, &e, &lba, &off)))
            return err;
        if (e[0] == DIR_FREE || e[0] == DIR_END)
            break;
    }
    /* No free slot: the entry in the dot slot is dropped (no file belongs there; its
     * clusters become lost ones, freed at the end). */
    int full = used && j == total;
    if (!chk_report(k, SF_CHK_ENTRY, 1, 0, "'%s' entry missing: written%s", i ? ".." : ".",
                    full ? " over the entry in its slot (no free slot to move it to)"
                    : used ? " (the entry in its slot moved down)" : ""))
        return 0;
    if (full)
        used = 0;
    if (used) {
        if ((err = chk_dir_entry(k, d, j, &e, &lba, &off)))
            return err;
        /* Into a 0x00 slot too: what follows it is read on (scan_dir), never cleared. */
        memcpy(e, moved, 32);
        if ((err = chk_dsec_put(k)))
            return err;
    }
    if ((err = chk_dir_entry(k, d, i, &e, &lba, &off)))
        return err;
    memset(e, 0, 32);
    memcpy(e, i ? "..         " : ".          ", 11);
    e[DIR_ATTR] = ATTR_DIRECTORY;
    st_le16(e + DIR_FST_CLUS_LO, (uint16_t)clus);
    if (k->fs == 32)
        st_le16(e + DIR_FST_CLUS_HI, (uint16_t)(clus >> 16));
    if ((err = chk_dsec_put(k)))
        return err;
    chk_repaired(k);
    return 0;
}

static int check_dots(struct chk *k, struct chk_dir *d, uint32_t self, uint32_t parent)
{
    for (uint32_t i = 0; i < 2; i++) {
        uint8_t *e;
        uint64_t lba;
        uint32_t off;
        int err;
        if ((err = chk_dir_entry(k, d, i, &e, &lba, &off)))
            return err;
        static const uint8_t names[2][11] = { ".          ", "..         " };
        uint32_t want = i ? (parent == k->root_clus ? 0 : parent) : self;
        if (memcmp(e, names[i], 11) || !(e[DIR_ATTR] & ATTR_DIRECTORY)) {
            if ((err = make_dot(k, d, i, want)))
                return err;
            continue;
        }
        uint32_t c = ld_le16(e + DIR_FST_CLUS_LO);
        if (k->fs == 32)
            c |= (uint32_t)ld_le16(e + DIR_FST_CLUS_HI) << 16;
        if (c != want && chk_report(k, SF_CHK_ENTRY, 1, 0, "'%s' points at cluster %u, not %u",
                                    i ? ".." : ".", c, want)) {
            st_le16(e + DIR_FST_CLUS_LO, (uint16_t)want);
            if (k->fs == 32)
                st_le16(e + DIR_FST_CLUS_HI, (uint16_t)(want >> 16));
            if ((err = chk_dsec_put(k)))
                return err;
            chk_repaired(k);
        }
    }
    return 0;
}

/* ---- duplicate 8.3 names ---- */

static uint32_t sfn_hash(const uint8_t *n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < 11; i++)
        h = (h ^ n[i]) * 16777619u;
    return h % (sizeof ((struct chk *)0)->dupbits * 8);
}

static int is_file_entry(const uint8_t *e)
{
    return e[0] != DIR_END && e[0] != DIR_FREE && !(e[DIR_ATTR] & ATTR_VOLUME_ID) &&
           !(e[0] == '.' && (e[1] == ' ' || (e[1] == '.' && e[2] == ' ')));
}

/* Two entries with one 8.3 name: the second is renamed FSCKnnnnREN and its long name
 * removed, as dosfstools does. A bit map of name hashes keeps this one pass over the
 * directory, plus a look back only when a hash repeats. */
static int check_dups(struct chk *k, struct chk_dir *d, uint32_t depth)
{
    uint32_t total = chk_dir_entries(k, d), lfn_n = 0;
    uint64_t lfn_lba[LDIR_MAX_ENTRIES];
    uint16_t lfn_off[LDIR_MAX_ENTRIES];
    int err;
    memset(k->dupbits, 0, sizeof k->dupbits);
    for (uint32_t idx = depth ? 2 : 0; idx < total; idx++) {
        uint8_t *ent, e[32];
        uint64_t lba;
        uint32_t off;
        if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
            return err;
        memcpy(e, ent, 32);
        if (e[0] == DIR_END || e[0] == DIR_FREE) {
            lfn_n = 0;
            continue;
        }
        if (e[DIR_ATTR] == ATTR_LONG_NAME) {
            if (lfn_n < LDIR_MAX_ENTRIES) {
                lfn_lba[lfn_n] = lba;
                lfn_off[lfn_n++] = (uint16_t)off;
            }
            continue;
        }
        uint32_t nl = lfn_n;
        lfn_n = 0;
        if (!is_file_entry(e))
            continue;
        uint32_t h = sfn_hash(e);
        if (!(k->dupbits[h / 8] & (1u << (h % 8)))) {
            k->dupbits[h / 8] |= (uint8_t)(1u << (h % 8));
            continue;
        }
        int dup = 0;
        for (uint32_t j = depth ? 2 : 0; j < idx && !dup; j++) {
            uint8_t *o;
            uint64_t l2;
            uint32_t o2;
            if ((err = chk_dir_entry(k, d, j, &o, &l2, &o2)))
                return err;
            dup = is_file_entry(o) && !memcmp(o, e, 11);
        }
        if (!dup)
            continue;
        uint16_t nm[FAT_SFN_MAX_CHARS];
        uint32_t saved = chk_path_push(k, nm, fat_sfn_decode(e, e[DIR_NTRES], nm));
        char nb[12];
        chk_fmt(nb, sizeof nb, "FSCK%u", 1000 + k->dup_next % 9000);
        if (chk_report(k, SF_CHK_NAME, 1, 0, "a second entry with this 8.3 name: renamed "
                       "%s.REN", nb)) {
            uint8_t *sec;
            k->dup_next++;
            if ((err = chk_dsec(k, lba, &sec)))
                return err;
            memcpy(sec + off, nb, 8);
            memcpy(sec + off + 8, "REN", 3);
            sec[off + DIR_NTRES] = 0;
            if ((err = chk_dsec_put(k)))
                return err;
            for (uint32_t i = 0; i < nl; i++) {
                if ((err = chk_dsec(k, lfn_lba[i], &sec)))
                    return err;
                sec[lfn_off[i]] = DIR_FREE;
                if ((err = chk_dsec_put(k)))
                    return err;
            }
            chk_repaired(k);
        }
        chk_path_pop(k, saved);
    }
    return 0;
}

/* Entries [from, to) of d hold 0x00 end marks, and entry `to` is in use. Readers differ on
 * 0x00: DOS and mtools stop there, Linux and dosfstools read on. Marked deleted, every
 * reader sees what follows. */
static int unhide(struct chk *k, struct chk_dir *d, uint32_t from, uint32_t to)
{
    int err;
    if (!chk_report(k, SF_CHK_ENTRY, 1, 0, "entries in use after the end-of-directory mark "
                    "(index %u): the mark removed", from))
        return 0;
    for (uint32_t j = from; j < to; j++) {
        uint8_t *e;
        uint64_t lba;
        uint32_t off;
        if ((err = chk_dir_entry(k, d, j, &e, &lba, &off)))
            return err;
        if (e[0] == DIR_END) {
            e[0] = DIR_FREE;
            if ((err = chk_dsec_put(k)))
                return err;
        }
    }
    chk_repaired(k);
    return 0;
}

/* One pass over d's subdirectories (scan_dir's second half); f and name: scan_dir's, for
 * the long names. */
static int enter_subdirs(struct chk *k, struct chk_dir *d, uint32_t self, uint32_t depth,
                         int mode, struct fctx *f, uint16_t *name)
{
    uint32_t total = chk_dir_entries(k, d);
    int err;
    memset(f, 0, sizeof *f);
    for (uint32_t idx = depth ? 2 : 0; idx < total; idx++) {
        uint8_t *ent, e[32];
        uint64_t lba;
        uint32_t off;
        if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
            return err;
        memcpy(e, ent, 32);
        if (e[0] == DIR_END || e[0] == DIR_FREE) {
            f->lfn_n = 0;
            continue;
        }
        if (e[DIR_ATTR] == ATTR_LONG_NAME) {
            uint32_t ord = e[LDIR_ORD] & 0x1F;
            if (e[LDIR_ORD] & LDIR_LAST) {
                f->lfn_n = 0;
                if (!ord || ord > LDIR_MAX_ENTRIES)
                    continue;
                f->lfn_sum = e[LDIR_CHKSUM];
                f->lfn_next = ord;
                f->name_len = ord * LDIR_CHARS;
            } else if (!f->lfn_n || !ord || ord != f->lfn_next || e[LDIR_CHKSUM] != f->lfn_sum) {
                f->lfn_n = 0;
                continue;
            }
            f->lfn_lba[f->lfn_n] = lba;
            f->lfn_off[f->lfn_n++] = (uint16_t)off;
            static const uint8_t pos[LDIR_CHARS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };
            for (uint32_t i = 0; i < LDIR_CHARS; i++)
                f->name[(ord - 1) * LDIR_CHARS + i] = ld_le16(e + pos[i]);
            f->lfn_next = ord - 1;
            continue;
        }
        if ((e[DIR_ATTR] & (ATTR_VOLUME_ID | ATTR_DIRECTORY)) != ATTR_DIRECTORY ||
            is_dot_name(e)) {
            f->lfn_n = 0;
            continue;
        }
        uint32_t nl = 0;
        if (f->lfn_n && !f->lfn_next && fat_lfn_checksum(e) == f->lfn_sum) {
            for (nl = 0; nl < f->name_len && f->name[nl] && f->name[nl] != 0xFFFF; nl++)
                name[nl] = f->name[nl];
        } else {
            f->lfn_n = 0;
        }
        if (!nl)
            nl = fat_sfn_decode(e, e[DIR_NTRES], name);
        uint32_t saved = chk_path_push(k, name, nl);
        k->lfn_is_log = 0;
        k->dot_parent = self;
        err = check_entry(k, e, lba, off, depth, f, mode);
        f->lfn_n = 0;
        chk_path_pop(k, saved);
        if (err)
            return err;
    }
    return 0;
}

static int scan_dir(struct chk *k, struct chk_dir *d, uint32_t self, uint32_t parent,
                    uint32_t depth)
{
    struct fctx f;
    uint32_t total = chk_dir_entries(k, d);
    int err;
    (void)parent;
    memset(&f, 0, sizeof f);
    uint32_t idx = 0, zero_at = UINT32_MAX;   /* first 0x00 entry with nothing used after */
    uint16_t name[LDIR_MAX_ENTRIES * LDIR_CHARS];
    if (depth) {
        if ((err = check_dots(k, d, self, k->dot_parent)))
            return err;
        idx = 2;
    }
    for (; idx < total; idx++) {
        uint8_t *ent, e[32];
        uint64_t lba;
        uint32_t off;
        if ((err = chk_dir_entry(k, d, idx, &ent, &lba, &off)))
            return err;
        memcpy(e, ent, 32);
        if (e[0] == DIR_END || e[0] == DIR_FREE) {
            if (e[0] == DIR_END && zero_at == UINT32_MAX)
                zero_at = idx;
            if ((err = lfn_drop(k, &f, "run interrupted")))
                return err;
            continue;
        }
        if (zero_at != UINT32_MAX) {
            if ((err = unhide(k, d, zero_at, idx)))
                return err;
            zero_at = UINT32_MAX;
        }
        uint8_t at = e[DIR_ATTR];
        if (at == ATTR_LONG_NAME) {
            /* Type and cluster fields must be 0 (dosfstools clears them). */
            if ((e[LDIR_TYPE] || ld_le16(e + LDIR_FST_CLUS_LO)) &&
                chk_report(k, SF_CHK_ENTRY, 1, 0, "long-name entry with a non-zero type or "
                           "cluster field: cleared")) {
                uint8_t *sec;
                if ((err = chk_dsec(k, lba, &sec)))
                    return err;
                sec[off + LDIR_TYPE] = 0;
                st_le16(sec + off + LDIR_FST_CLUS_LO, 0);
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
            uint32_t ord = e[LDIR_ORD] & 0x1F;
            if (e[LDIR_ORD] & LDIR_LAST) {
                if (f.lfn_n && (err = lfn_drop(k, &f, "a new run starts")))
                    return err;
                if (!ord || ord > LDIR_MAX_ENTRIES) {
                    f.lfn_lba[0] = lba;
                    f.lfn_off[0] = (uint16_t)off;
                    f.lfn_n = 1;
                    if ((err = lfn_drop(k, &f, "bad ordinal")))
                        return err;
                    continue;
                }
                f.lfn_sum = e[LDIR_CHKSUM];
                f.lfn_next = ord;
                f.name_len = ord * LDIR_CHARS;
            } else if (!f.lfn_n || !ord || ord != f.lfn_next || e[LDIR_CHKSUM] != f.lfn_sum) {
                if (f.lfn_n && (err = lfn_drop(k, &f, "run broken")))
                    return err;
                f.lfn_lba[0] = lba;
                f.lfn_off[0] = (uint16_t)off;
                f.lfn_n = 1;
                if ((err = lfn_drop(k, &f, "out of order")))
                    return err;
                continue;
            }
            f.lfn_lba[f.lfn_n] = lba;
            f.lfn_off[f.lfn_n++] = (uint16_t)off;
            static const uint8_t pos[LDIR_CHARS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };
            for (uint32_t i = 0; i < LDIR_CHARS; i++)
                f.name[(ord - 1) * LDIR_CHARS + i] = ld_le16(e + pos[i]);
            f.lfn_next = ord - 1;
            continue;
        }
        if (at & ATTR_VOLUME_ID) {
            /* Only a clean label entry is the label: one, in the root, attribute 0x08 (with
             * the archive bit at most), no cluster, no size, a valid name. Anything else
             * with the bit is a damaged entry and never becomes the volume's label. */
            if ((err = lfn_drop(k, &f, "followed by a volume label")))
                return err;
            uint32_t c = ld_le16(e + DIR_FST_CLUS_LO);
            if (k->fs == 32)
                c |= (uint32_t)ld_le16(e + DIR_FST_CLUS_HI) << 16;
            const char *why = depth ? "in a subdirectory"
                : (at & ~ATTR_ARCHIVE) != ATTR_VOLUME_ID ? "with other attribute bits"
                : c || ld_le32(e + DIR_FILE_SIZE) ? "with a cluster or a size"
                : !label_valid(e) ? "with an invalid name"
                : k->have_label ? "after the first one" : NULL;
            if (!why) {
                memcpy(k->label, e, 11);
                k->label_lba = lba;
                k->label_off = off;
                k->have_label = 1;
            } else if (chk_report(k, SF_CHK_ENTRY, depth != 0, 0, "volume label entry %s "
                                  "(attributes 0x%x): removed", why, at)) {
                uint8_t *sec;
                if ((err = chk_dsec(k, lba, &sec)))
                    return err;
                sec[off] = DIR_FREE;
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
            continue;
        }
        if ((at & ~ATTR_LONG_NAME_MASK) &&
            chk_report(k, SF_CHK_ENTRY, 1, 0, "entry with reserved attribute bits (0x%x): "
                       "cleared", at)) {
            uint8_t *sec;
            if ((err = chk_dsec(k, lba, &sec)))
                return err;
            sec[off + DIR_ATTR] = (uint8_t)(at & ATTR_LONG_NAME_MASK);
            e[DIR_ATTR] = sec[off + DIR_ATTR];
            if ((err = chk_dsec_put(k)))
                return err;
            chk_repaired(k);
        }
        if (is_dot_name(e)) {
            /* "." and ".." belong in slots 0 and 1 of a subdirectory only. */
            if ((err = lfn_drop(k, &f, "followed by a dot entry")))
                return err;
            if (chk_report(k, SF_CHK_ENTRY, 1, 0, "'%s' entry out of place (index %u): removed",
                           e[1] == '.' ? ".." : ".", idx)) {
                uint8_t *sec;
                if ((err = chk_dsec(k, lba, &sec)))
                    return err;
                sec[off] = DIR_FREE;
                if ((err = chk_dsec_put(k)))
                    return err;
                chk_repaired(k);
            }
            continue;
        }
        uint32_t nl = 0;
        if (f.lfn_n) {
            if (f.lfn_next || fat_lfn_checksum(e) != f.lfn_sum) {
                if ((err = lfn_drop(k, &f, f.lfn_next ? "run incomplete" : "checksum wrong")))
                    return err;
            } else {
                nl = f.name_len;
                for (uint32_t i = 0; i < nl; i++)
                    if (f.name[i] == 0 || f.name[i] == 0xFFFF) {
                        nl = i;
                        break;
                    }
                memcpy(name, f.name, nl * 2);
            }
        }
        int have_lfn = nl != 0;
        if (!nl)
            nl = fat_sfn_decode(e, e[DIR_NTRES], name);
        uint32_t saved = chk_path_push(k, name, nl);
        int badc = 0;
        for (uint32_t i = 0; i < 11; i++)
            badc |= bad_sfn_char(e[i], i == 0) && !(e[i] == ' ' && i);
        if (e[0] == ' ')
            badc = 1;
        if (badc && chk_report(k, SF_CHK_NAME, 1, 0, "8.3 name holds forbidden characters: "
                               "replaced by '_'")) {
            uint8_t *sec;
            if ((err = chk_dsec(k, lba, &sec)))
                return err;
            for (uint32_t i = 0; i < 11; i++)
                if (bad_sfn_char(sec[off + i], i == 0) && !(sec[off + i] == ' ' && i))
                    sec[off + i] = '_';
            if (sec[off] == ' ')
                sec[off] = '_';
            memcpy(e, sec + off, 11);
            if ((err = chk_dsec_put(k)))
                return err;
            /* The long name stays attached: its entries carry the new checksum. */
            uint8_t sum = fat_lfn_checksum(e);
            for (uint32_t i = 0; i < f.lfn_n; i++) {
                if ((err = chk_dsec(k, f.lfn_lba[i], &sec)))
                    return err;
                sec[f.lfn_off[i] + LDIR_CHKSUM] = sum;
                if ((err = chk_dsec_put(k)))
                    return err;
            }
            chk_repaired(k);
        }
        /* NT byte bit 0x20 (Linux's and dosfstools' "no 8.3 name"): the short name is a
         * placeholder that only a long name makes usable. Without one the entry has no
         * usable name; clearing the bit makes the 8.3 name (checked above) the name. */
        if (!have_lfn && (e[DIR_NTRES] & 0x20) &&
            chk_report(k, SF_CHK_NAME, 1, 0, "8.3 name marked unusable (NT byte 0x20) and no "
                       "long name: mark cleared")) {
            uint8_t *sec;
            if ((err = chk_dsec(k, lba, &sec)))
                return err;
            sec[off + DIR_NTRES] = (uint8_t)(sec[off + DIR_NTRES] & ~0x20u);
            e[DIR_NTRES] = sec[off + DIR_NTRES];
            if ((err = chk_dsec_put(k)))
                return err;
            chk_repaired(k);
        }
        const char *leftover = chk_leftover(name, nl, (e[DIR_ATTR] & ATTR_DIRECTORY) != 0,
                                            ld_le32(e + DIR_FILE_SIZE));
        if (leftover) {                 /* leftover.c: removed before its chain is walked */
            err = drop_leftover(k, &f, lba, off, leftover);
            f.lfn_n = 0;
            chk_path_pop(k, saved);
            if (err)
                return err;
            continue;
        }
        k->lfn_is_log = chk_is_log_name(name, nl);
        err = 0;
        if (!(e[DIR_ATTR] & ATTR_DIRECTORY)) {
            err = check_entry(k, e, lba, off, depth, &f, CE_FULL);
            if (!err && k->repair && ld_le32(e + DIR_FILE_SIZE) &&
                (leftover = chk_leftover_after(k, name, nl, lba, off)))
                err = drop_leftover(k, &f, lba, off, leftover);  /* a repair emptied a log */
        } else if (k->repair) {
            err = check_entry(k, e, lba, off, depth, &f, CE_CLAIM);
        }
        f.lfn_n = 0;
        chk_path_pop(k, saved);
        if (err)
            return err;
    }
    if ((err = lfn_drop(k, &f, "at the end of the directory")))
        return err;
    if ((err = check_dups(k, d, depth)))
        return err;
    /* The subdirectories are entered after every entry here was checked, in the order
     * dosfstools takes: a damaged entry deeper down never claims the clusters of an
     * entry up here first. Repairing, the subdirectories' own chains were claimed
     * (checked, cut) above, in their place among the files; checking only, each is
     * checked as it is entered (an entry not repaired may still point into another
     * directory, which must not be entered twice). Long names are taken again (repaired
     * above; in check mode a broken one gives the 8.3 name). */
    return enter_subdirs(k, d, self, depth, k->repair ? CE_ENTER : CE_FULL, &f, name);
}

/* ---- recovery hook ---- */

static int set_size(struct chk *k, struct chk_cand *c, uint64_t size, uint32_t nclus,
                    uint32_t last)
{
    (void)nclus;
    (void)last;
    if (size > 0xFFFFFFFFull)
        return SF_EINVAL;
    uint8_t *sec;
    if (chk_dsec(k, c->ent_lba[0], &sec))
        return SF_EIO;
    st_le32(sec + c->ent_off[0] + DIR_FILE_SIZE, (uint32_t)size);
    return chk_dsec_put(k);
}

static int fat_alloc_test(struct chk *k, uint32_t c, int *used)
{
    uint32_t v;
    if (chk_fat_get(k, c, &v))
        return SF_EIO;
    *used = v != CHK_FREE && v != CHK_BAD;
    return 0;
}

/* ---- FAT-wide passes ---- */

/* Lost clusters: allocated in the FAT, reached by no file. */
static int check_lost(struct chk *k)
{
    uint64_t lost = 0, used = 0, free = 0;
    for (uint32_t c = 2; c < k->ccount + 2; c++) {
        uint32_t v;
        if (chk_fat_get(k, c, &v))
            return SF_EIO;
        if (reach_test(k, c))
            used++;
        else if (v == CHK_FREE)
            free++;
        else if (v != CHK_BAD)
            lost++;
    }
    k->r->leaked_clusters = lost;
    k->r->clusters_used = used;
    k->free_after = free;
    if (!lost || !chk_report(k, SF_CHK_LEAK, 0, 0, "%U clusters allocated that no file uses "
                             "(lost chains): freed", lost))
        return 0;
    k->free_after = free + lost;
    /* Sector by sector over the first FAT, each changed sector to every copy. */
    uint32_t per = k->ss * 8 / (uint32_t)k->fs;
    for (uint64_t s = 0; s < k->fat_len; s++) {
        uint32_t c0 = (uint32_t)(s * per), dirty = 0;
        if (c0 >= k->ccount + 2)
            break;
        if (chk_read(k, k->fat_lba + s, k->fsec))
            return SF_EIO;
        k->fsec_lba = UINT64_MAX;
        for (uint32_t i = 0; i < per; i++) {
            uint32_t c = c0 + i;
            if (c < 2 || c >= k->ccount + 2 || reach_test(k, c))
                continue;
            uint8_t *p = k->fsec + i * (uint32_t)k->fs / 8;
            uint32_t v = k->fs == 16 ? ld_le16(p) : ld_le32(p) & 0x0FFFFFFF;
            if (!v || v == (k->fs == 16 ? 0xFFF7u : 0x0FFFFFF7u))
                continue;
            if (k->fs == 16)
                st_le16(p, 0);
            else
                st_le32(p, ld_le32(p) & 0xF0000000u);
            dirty = 1;
        }
        for (uint32_t j = 0; dirty && j < k->nfats; j++)
            if (chk_write(k, k->fat_lba + (uint64_t)j * k->fat_len + s, k->fsec))
                return SF_EIO;
    }
    chk_repaired(k);
    return 0;
}

/* FAT32 FSInfo: signatures and the free-cluster count (a hint, but every checker compares
 * it; 0xFFFFFFFF means unknown and is always right). */
static int check_fsinfo(struct chk *k, const uint8_t *boot)
{
    uint32_t sec = ld_le16(boot + BPB32_FS_INFO);
    if (!sec || sec == 0xFFFF || sec >= ld_le16(boot + BPB_RSVD_SEC_CNT))
        return 0;
    if (chk_read(k, sec, k->xsec))
        return SF_EIO;
    uint8_t *b = k->xsec;
    if (ld_le32(b + FSI_LEAD_SIG) != FSI_LEAD_VALUE || ld_le32(b + FSI_STRUC_SIG) != FSI_STRUC_VALUE ||
        ld_le32(b + FSI_TRAIL_SIG) != FSI_TRAIL_VALUE) {
        chk_report(k, SF_CHK_FSINFO, 0, 0, "FSInfo sector signatures wrong (not used)");
        return 0;
    }
    uint32_t have = ld_le32(b + FSI_FREE_COUNT);
    if (have == 0xFFFFFFFFu || have == k->free_after)
        return 0;
    if (chk_report(k, SF_CHK_FSINFO, 0, 0, "FSInfo free cluster count %u, really %U: corrected",
                   have, k->free_after)) {
        if (chk_read(k, sec, k->xsec))
            return SF_EIO;
        st_le32(k->xsec + FSI_FREE_COUNT, (uint32_t)k->free_after);
        if (chk_write(k, sec, k->xsec))
            return SF_EIO;
        chk_repaired(k);
    }
    return 0;
}

/* The other FAT copies against the first. */
static int check_copies(struct chk *k)
{
    uint64_t differ = 0;
    k->dsec_lba = UINT64_MAX;          /* dsec is borrowed */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t j = 1; j < k->nfats; j++)
            for (uint64_t s = 0; s < k->fat_len; s++) {
                if (chk_read(k, k->fat_lba + s, k->xsec) ||
                    chk_read(k, k->fat_lba + (uint64_t)j * k->fat_len + s, k->dsec))
                    return SF_EIO;
                if (!memcmp(k->xsec, k->dsec, k->ss))
                    continue;
                if (pass == 0)
                    differ++;
                else if (chk_write(k, k->fat_lba + (uint64_t)j * k->fat_len + s, k->xsec))
                    return SF_EIO;
            }
        if (pass == 0 && (!differ || !chk_report(k, SF_CHK_FAT, 0, 0, "FAT copies differ in "
                                                 "%U sectors: the first is copied", differ)))
            return 0;
    }
    chk_repaired(k);
    return 0;
}

/* Clean-shutdown state: FAT[1]'s bit (FAT16/32) and the boot sector's dirty bit. */
static int check_dirty(struct chk *k)
{
    uint32_t boff = k->fs == 32 ? BS32_RESERVED1 : BS16_RESERVED1;
    int err;
    if (chk_read(k, 0, k->xsec))
        return SF_EIO;
    int bs_dirty = (k->xsec[boff] & 1) != 0, fat_dirty = 0;
    k->fsec_lba = UINT64_MAX;
    if (k->fs != 12) {
        if (chk_read(k, k->fat_lba, k->fsec))
            return SF_EIO;
        fat_dirty = k->fs == 16 ? !(ld_le16(k->fsec + 2) & FAT16_CLN_SHUT)
                                : !(ld_le32(k->fsec + 4) & FAT32_CLN_SHUT);
    }
    if (!bs_dirty && !fat_dirty)
        return 0;
    if (!chk_report(k, SF_CHK_DIRTY, 0, 0, "volume is marked dirty (not cleanly unmounted)"))
        return 0;
    if (k->r->unrepairable) {
        chk_unrepaired(k);               /* stays dirty: problems remain */
        return 0;
    }
    if (sf_bdev_flush(k->bd))
        return SF_EIO;
    if (fat_dirty) {
        if (k->fs == 16)
            st_le16(k->fsec + 2, (uint16_t)(ld_le16(k->fsec + 2) | FAT16_CLN_SHUT));
        else
            st_le32(k->fsec + 4, ld_le32(k->fsec + 4) | FAT32_CLN_SHUT);
        for (uint32_t j = 0; j < k->nfats; j++)
            if ((err = chk_write(k, k->fat_lba + (uint64_t)j * k->fat_len, k->fsec)))
                return err;
    }
    if (bs_dirty) {
        k->xsec[boff] &= (uint8_t)~1u;
        if ((err = chk_write(k, 0, k->xsec)))
            return err;
    }
    chk_repaired(k);
    return 0;
}

/* The boot sector's label against the root directory's volume label entry. dosfstools
 * makes the boot sector agree with the entry; but the entry sits in a directory sector,
 * rewritten far more often than the boot sector, so a damaged one must not name the volume:
 * a valid boot label wins (the entry is rewritten to it), the entry's label is copied only
 * into a boot sector without one ("NO NAME" or invalid), and only from a clean label entry
 * (scan_dir removes every other). No entry: the boot label becomes "NO NAME", as dosfstools
 * does. */
static int check_label(struct chk *k, const uint8_t *boot)
{
    uint32_t sig = k->fs == 32 ? BS32_BOOT_SIG : BS16_BOOT_SIG;
    uint32_t lab = k->fs == 32 ? BS32_VOL_LAB : BS16_VOL_LAB;
    static const uint8_t none[11] = { 'N', 'O', ' ', 'N', 'A', 'M', 'E', ' ', ' ', ' ', ' ' };
    if (boot[sig] != 0x29)
        return 0;
    const uint8_t *bl = boot + lab;
    int boot_has = label_valid(bl) && memcmp(bl, none, 11);
    const uint8_t *want = NULL;
    int fix = 0;
    if (k->have_label && memcmp(bl, k->label, 11)) {
        if (boot_has) {
            if (!chk_report(k, SF_CHK_BOOT, 0, 0, "volume label entry differs from the boot "
                            "sector's label: the entry rewritten to it"))
                return 0;
            uint8_t *sec;
            if (chk_dsec(k, k->label_lba, &sec))
                return SF_EIO;
            memcpy(sec + k->label_off, bl, 11);
            if (chk_dsec_put(k))
                return SF_EIO;
            chk_repaired(k);
            return 0;
        }
        fix = chk_report(k, SF_CHK_BOOT, 0, 0, "boot sector has no valid label: the volume "
                         "label entry's copied");
        want = k->label;
    } else if (!k->have_label && memcmp(bl, none, 11)) {
        fix = chk_report(k, SF_CHK_BOOT, 0, 0, "boot sector has a label (or an invalid one) "
                         "but the root directory has none: removed");
        want = none;
    }
    if (!fix)
        return 0;
    uint32_t bk = k->fs == 32 ? ld_le16(boot + BPB32_BK_BOOT_SEC) : 0;
    for (int i = 0; i < 2; i++) {
        uint64_t lba = i ? bk : 0;
        if (i && (!bk || bk == 0xFFFF || bk >= ld_le16(boot + BPB_RSVD_SEC_CNT)))
            break;
        if (chk_read(k, lba, k->xsec))
            return SF_EIO;
        memcpy(k->xsec + lab, want, 11);
        if (chk_write(k, lba, k->xsec))
            return SF_EIO;
    }
    chk_repaired(k);
    return 0;
}

/* FAT[0]: the media byte with every other bit set. */
static int check_media(struct chk *k, const uint8_t *boot)
{
    uint32_t want, have;
    if (chk_read(k, k->fat_lba, k->fsec))
        return SF_EIO;
    k->fsec_lba = UINT64_MAX;
    uint8_t media = boot[BPB_MEDIA];
    if (k->fs == 12) {
        have = ld_le16(k->fsec) & 0xFFF;
        want = 0xF00u | media;
    } else if (k->fs == 16) {
        have = ld_le16(k->fsec);
        want = 0xFF00u | media;
    } else {
        have = ld_le32(k->fsec) & 0x0FFFFFFF;
        want = 0x0FFFFF00u | media;
    }
    if (have == want || !chk_report(k, SF_CHK_FAT, 0, 0, "FAT entry 0 is 0x%x, not the media "
                                    "entry 0x%x: set", have, want))
        return 0;
    if (k->fs == 16)
        st_le16(k->fsec, (uint16_t)want);
    else
        st_le32(k->fsec, (ld_le32(k->fsec) & 0xF0000000u) | want);
    for (uint32_t j = 0; j < k->nfats; j++)
        if (chk_write(k, k->fat_lba + (uint64_t)j * k->fat_len, k->fsec))
            return SF_EIO;
    chk_repaired(k);
    return 0;
}

/* FAT32: the backup boot sector against the main one. */
static int check_backup(struct chk *k)
{
    if (chk_read(k, 0, k->xsec))
        return SF_EIO;
    uint32_t bk = ld_le16(k->xsec + BPB32_BK_BOOT_SEC);
    if (!bk || bk == 0xFFFF || bk >= ld_le16(k->xsec + BPB_RSVD_SEC_CNT))
        return 0;
    k->dsec_lba = UINT64_MAX;
    if (chk_read(k, bk, k->dsec))
        return SF_EIO;
    k->dsec[BS32_RESERVED1] = k->xsec[BS32_RESERVED1];
    if (!memcmp(k->dsec, k->xsec, 90) && ld_le16(k->dsec + BS_SIGNATURE) == 0xAA55)
        return 0;
    if (chk_report(k, SF_CHK_BOOT, 0, 0, "backup boot sector differs from the main one: "
                   "rewritten")) {
        if (chk_read(k, 0, k->xsec) || chk_write(k, bk, k->xsec))
            return SF_EIO;
        chk_repaired(k);
    }
    return 0;
}

int chk_fat(struct chk *k, uint8_t *boot_sec)
{
    /* A copy: boot_sec is the scratch sector, reused by the checks below. */
    uint8_t boot[512];
    memcpy(boot, boot_sec, sizeof boot);
    uint32_t ccount, fatsz, rs, got, last;
    uint64_t data;
    int err;
    if (bpb(boot, k->ss, &ccount, &fatsz, &data, &rs))
        return SF_ECORRUPT;
    uint32_t tot = ld_le16(boot + BPB_TOT_SEC16) ? ld_le16(boot + BPB_TOT_SEC16)
                                                 : ld_le32(boot + BPB_TOT_SEC32);
    k->fs = ld_le16(boot + BPB_FAT_SZ16) ? (ccount <= FAT12_MAX_CLUSTERS ? 12 : 16) : 32;
    k->r->fs = k->fs;
    k->ccount = ccount;
    k->nfats = boot[BPB_NUM_FATS];
    k->fat_lba = ld_le16(boot + BPB_RSVD_SEC_CNT);
    k->fat_len = fatsz;
    k->heap_lba = data;
    k->spc_shift = spc_shift(boot[BPB_SEC_PER_CLUS]);
    k->cs = k->ss << k->spc_shift;
    k->alloc_test = fat_alloc_test;
    int saved_repair = k->repair;
    if (k->fs == 12)
        k->repair = 0;                  /* FAT12: checked only */
    if (k->fs == 32 && ld_le16(boot + BPB_ROOT_ENT_CNT)) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "FAT32 BPB with a FAT16 root directory area "
                   "(BPB_RootEntCnt %u)", ld_le16(boot + BPB_ROOT_ENT_CNT));
        return 0;
    }
    if (k->fs != 32 && (ld_le16(boot + BPB_ROOT_ENT_CNT) * 32u) % k->ss) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "root directory area of %u entries is not whole "
                   "sectors", ld_le16(boot + BPB_ROOT_ENT_CNT));
        return 0;
    }
    if (tot > k->bd->sector_count) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "the volume (%u sectors) is larger than the device", tot);
        return 0;
    }
    if ((uint64_t)fatsz * k->ss * 8 / (uint32_t)k->fs < (uint64_t)ccount + 2 ||
        (k->fs == 32 && ccount > FAT32_MAX_CLUSTERS)) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "the FAT is too small for the cluster count");
        return 0;
    }
    if ((err = check_media(k, boot)) || (k->fs == 32 && (err = check_backup(k))))
        return err;
    struct chk_dir root = { 0, 0, 0, 0, 0, 0, 0 };
    if (k->fs == 32) {
        k->root_clus = ld_le32(boot + BPB32_ROOT_CLUS);
        int why = chk_walk(k, k->root_clus, 0, UINT32_MAX, &got, &last);
        if (why == WALK_IO)
            return SF_EIO;
        if (why != WALK_OK && !got) {
            chk_report(k, SF_CHK_RANGE, 0, 1, "root directory: %s", chk_walk_why(why));
            return 0;
        }
        if (why != WALK_OK && chk_report(k, SF_CHK_RANGE, 0, 0, "root directory: %s after %u "
                                         "clusters: cut there", chk_walk_why(why), got)) {
            if ((err = chk_fat_set(k, last, CHK_EOC)))
                return err;
            chk_repaired(k);
        }
        root.first = k->root_clus;
        root.nclus = got;
    } else {
        root.fixed_lba = data - rs;
        root.fixed_n = ld_le16(boot + BPB_ROOT_ENT_CNT);
    }
    if ((err = scan_dir(k, &root, k->root_clus, 0, 0)))
        return err;
    if ((err = chk_recover(k, set_size)))
        return err;
    if ((err = chk_cut_tails(k)))
        return err;
    if ((err = check_label(k, boot)) || (err = check_lost(k)) || (err = check_copies(k)) ||
        (k->fs == 32 && (err = check_fsinfo(k, boot))) || (err = check_dirty(k)))
        return err;
    if (k->fs == 12 && saved_repair && k->r->problems) {
        chk_report(k, SF_CHK_BOOT, 0, 1, "FAT12 is checked only: not repaired");
    }
    return 0;
}
