/* The tiny logger's FAT16/FAT32 volume: mount (MBR partition or superfloppy), the FAT, the
 * allocation of contiguous runs a FAT sector at a time, FSInfo at unmount.
 *
 * On-disk invariants kept here (what fsck.fat checks and streamfat's repair expects):
 * - Every FAT copy holds the same entries: each change is written to all of them, FAT 1
 *   first, before anything that refers to it (a data write, a directory entry).
 * - A run is written chained and ended (last entry end-of-chain) in one sector write per
 *   copy before the previous end of the file's chain is linked to it, so a power cut leaves
 *   either the old chain or the old chain plus the new run: never a chain into free space.
 *   Clusters a cut leaves allocated but not yet in the entry's chain are leaked, which
 *   `streamfat fsck --repair` reclaims (docs/RELIABILITY.md).
 * - FSInfo's free count is a hint: it is kept exact in memory when mount found it known and
 *   written only by sf_tiny_unmount, as fsck.fat expects of a cleanly unmounted volume. */
#include "tiny_int.h"

/* Boot sector (BPB) fields */
#define BPB_BYTES_PER_SEC 11
#define BPB_SEC_PER_CLUS  13
#define BPB_RSVD          14
#define BPB_NFATS         16
#define BPB_ROOT_ENTS     17
#define BPB_TOTSEC16      19
#define BPB_FATSZ16       22
#define BPB_TOTSEC32      32
#define BPB_FATSZ32       36
#define BPB_ROOT_CLUS     44
#define BPB_FSINFO        48
#define FSI_FREE          488
#define FSI_NEXT          492

int tiny_read(struct sf_tiny_vol *v, uint32_t lba)
{
    return sf_bdev_read(v->bd, v->base + lba, v->buf, 1);
}

int tiny_write(struct sf_tiny_vol *v, uint32_t lba)
{
    return sf_bdev_write(v->bd, v->base + lba, v->buf, 1);
}

uint32_t tiny_clus_lba(const struct sf_tiny_vol *v, uint32_t c)
{
    return v->data_lba + ((c - 2) << v->cl_shift);
}

static unsigned log2u(uint32_t x)
{
    unsigned n = 0;
    while (x > 1) {
        x >>= 1;
        n++;
    }
    return n;
}

/* A FAT boot sector at b whose geometry works: 1 on success with v filled. */
static int parse_bpb(struct sf_tiny_vol *v, const uint8_t *b)
{
    uint32_t spc = b[BPB_SEC_PER_CLUS], rsvd = ld_le16(b + BPB_RSVD), nf = b[BPB_NFATS];
    uint32_t ents = ld_le16(b + BPB_ROOT_ENTS), tot = ld_le16(b + BPB_TOTSEC16);
    uint32_t fsz = ld_le16(b + BPB_FATSZ16), meta;
    if ((b[0] != 0xEB && b[0] != 0xE9) || ld_le16(b + BPB_BYTES_PER_SEC) != v->ss ||
        !spc || (spc & (spc - 1)) || !rsvd || !nf || nf > 2)
        return 0;
    if (!tot)
        tot = ld_le32(b + BPB_TOTSEC32);
    if (!fsz)
        fsz = ld_le32(b + BPB_FATSZ32);
    v->cl_shift = (uint8_t)log2u(spc);
    v->nfats = (uint8_t)nf;
    v->fat_lba = rsvd;
    v->fat_size = fsz;
    v->root_lba = rsvd + nf * fsz;
    v->root_sectors = (ents * 32 + v->ss - 1) >> v->ss_shift;
    meta = v->root_lba + v->root_sectors;
    if (!fsz || tot <= meta || tot > v->bd->sector_count - v->base)
        return 0;
    v->sectors = tot;
    v->data_lba = meta;
    v->clusters = (tot - meta) >> v->cl_shift;
    v->fat32 = v->clusters >= 65525;
    if (v->clusters < 4085 ||                                   /* FAT12: not here */
        (uint64_t)(v->clusters + 2) * (v->fat32 ? 4 : 2) > (uint64_t)fsz << v->ss_shift)
        return 0;
    if (v->fat32) {
        if (ents)
            return 0;
        v->root_clus = ld_le32(b + BPB_ROOT_CLUS);
        v->fsinfo = ld_le16(b + BPB_FSINFO);
        if (v->fsinfo >= rsvd)
            v->fsinfo = 0;
    } else if (!ents) {
        return 0;
    }
    return 1;
}

int sf_tiny_mount(struct sf_tiny_vol *v, struct sf_bdev *bd, void *buf)
{
    int err;
    memset(v, 0, sizeof *v);
    v->bd = bd;
    v->buf = buf;
    v->ss = bd->sector_size;
    v->ss_shift = (uint8_t)log2u(v->ss);
    if ((err = tiny_read(v, 0)))
        return err;
    if (ld_le16(v->buf + 510) != 0xAA55)
        return SF_ENOENT;
    if (!parse_bpb(v, v->buf)) {
        /* An MBR: the first partition of a FAT type (FAT12/16 CHS and LBA, FAT32). */
        for (uint32_t i = 0; i < 4 && !v->base; i++) {
            const uint8_t *e = v->buf + 446 + 16 * i;
            uint8_t t = e[4];
            if (t == 0x04 || t == 0x06 || t == 0x0B || t == 0x0C || t == 0x0E)
                v->base = ld_le32(e + 8);
        }
        if (!v->base || v->base >= bd->sector_count)
            return SF_ENOENT;
        if ((err = tiny_read(v, 0)))
            return err;
        if (ld_le16(v->buf + 510) != 0xAA55 || !parse_bpb(v, v->buf))
            return SF_ENOENT;
    }
    v->free_count = 0xFFFFFFFFu;
    v->next_free = 2;
    if (v->fsinfo && !tiny_read(v, v->fsinfo) && ld_le32(v->buf) == 0x41615252u) {
        uint32_t fc = ld_le32(v->buf + FSI_FREE), nx = ld_le32(v->buf + FSI_NEXT);
        if (fc <= v->clusters)
            v->free_count = fc;
        if (nx >= 2 && nx < v->clusters + 2)
            v->next_free = nx;
    }
    return 0;
}

int sf_tiny_unmount(struct sf_tiny_vol *v)
{
    int err;
    if (v->fat32 && v->fsinfo && v->fsinfo_dirty) {
        if ((err = tiny_read(v, v->fsinfo)))
            return err;
        st_le32(v->buf + FSI_FREE, v->free_count);
        st_le32(v->buf + FSI_NEXT, v->next_free);
        if ((err = tiny_write(v, v->fsinfo)))
            return err;
        v->fsinfo_dirty = 0;
    }
    return sf_bdev_flush(v->bd);
}

/* Where cluster c's entry is: its FAT sector (relative to the FAT) and byte offset. */
static uint32_t fat_pos(const struct sf_tiny_vol *v, uint32_t c, uint32_t *off)
{
    uint32_t byte = c << (v->fat32 ? 2 : 1);
    *off = byte & (v->ss - 1);
    return byte >> v->ss_shift;
}

static uint32_t ent_get(const struct sf_tiny_vol *v, uint32_t off)
{
    uint32_t e = v->fat32 ? ld_le32(v->buf + off) & 0x0FFFFFFFu : ld_le16(v->buf + off);
    if (!v->fat32 && e >= 0xFFF7u)
        e |= 0x0FFF0000u;                 /* bad and end marks read as FAT32's */
    return e;
}

static void ent_put(struct sf_tiny_vol *v, uint32_t off, uint32_t val)
{
    if (v->fat32)   /* the top 4 bits are reserved: kept */
        st_le32(v->buf + off, (ld_le32(v->buf + off) & 0xF0000000u) | (val & 0x0FFFFFFFu));
    else
        st_le16(v->buf + off, (uint16_t)val);
}

int tiny_fat_get(struct sf_tiny_vol *v, uint32_t c, uint32_t *next)
{
    uint32_t off, sec = fat_pos(v, c, &off);
    int err = tiny_read(v, v->fat_lba + sec);
    if (!err)
        *next = ent_get(v, off);
    return err;
}

/* The buffer holds FAT sector `sec`: write it to every copy. */
static int fat_put_sector(struct sf_tiny_vol *v, uint32_t sec)
{
    int err = 0;
    for (uint32_t k = 0; k < v->nfats && !err; k++)
        err = tiny_write(v, v->fat_lba + k * v->fat_size + sec);
    return err;
}

int tiny_fat_set(struct sf_tiny_vol *v, uint32_t c, uint32_t n, uint32_t last, int chain)
{
    int err;
    while (n) {
        uint32_t off, sec = fat_pos(v, c, &off);
        if ((err = tiny_read(v, v->fat_lba + sec)))
            return err;
        for (; n && off < v->ss; off += v->fat32 ? 4u : 2u, c++, n--) {
            ent_put(v, off, !chain ? 0 : n == 1 ? last : c + 1);
            if (!chain && v->free_count != 0xFFFFFFFFu)
                v->free_count++;
        }
        if ((err = fat_put_sector(v, sec)))
            return err;
    }
    if (!chain)
        v->fsinfo_dirty = 1;
    return 0;
}

int tiny_alloc(struct sf_tiny_vol *v, uint32_t prev, uint32_t want, uint32_t *first,
               uint32_t *n)
{
    uint32_t end = v->clusters + 2, c = v->next_free, esh = v->fat32 ? 2u : 1u;
    uint32_t step = v->ss >> esh;                        /* entries per FAT sector */
    uint32_t sectors = (end + step - 1) / step + 1;     /* visits: every sector, wrapping */
    int err;
    if (c < 2 || c >= end)
        c = 2;
    /* One FAT sector at a time, from the hint on, wrapping once: the first free entry, and
     * the free entries right after it in the same sector, up to want. */
    while (sectors--) {
        uint32_t off, sec = fat_pos(v, c, &off), stop = (c | (step - 1)) + 1, k = 0;
        if (stop > end)
            stop = end;
        if ((err = tiny_read(v, v->fat_lba + sec)))
            return err;
        for (; c < stop && k < want; c++, off += 1u << esh) {
            if (ent_get(v, off) == 0) {
                if (!k)
                    *first = c;
                k++;
            } else if (k) {
                break;
            }
        }
        if (k) {
            uint32_t poff = 0, psec = prev ? fat_pos(v, prev, &poff) : 0;
            fat_pos(v, *first, &off);
            for (uint32_t i = 0; i < k; i++, off += 1u << esh)
                ent_put(v, off, i + 1 < k ? *first + i + 1 : TINY_EOC);
            if (prev && psec == sec) {
                ent_put(v, poff, *first);      /* the link in the same sector write */
                prev = 0;
            }
            if ((err = fat_put_sector(v, sec)))
                return err;
            if (prev && (err = tiny_fat_set(v, prev, 1, *first, 1)))
                return err;
            *n = k;
            v->next_free = *first + k < end ? *first + k : 2;
            if (v->free_count != 0xFFFFFFFFu)
                v->free_count = v->free_count >= k ? v->free_count - k : 0;
            v->fsinfo_dirty = 1;
            return 0;
        }
        if (c >= end)
            c = 2;
    }
    return SF_ENOSPC;
}
