/* FAT directories: 8.3 entries preceded by long-name (LFN) entries; reading, lookup,
 * alias choice, insertion, update, removal, "." and "..".
 *
 * Sections: entries - the walk - lookup - aliases - insertion - update and removal -
 * "." and "..".
 *
 * A file is 0..20 LFN entries followed by its 8.3 entry. The LFN entries are stored last
 * part first (ordinal n | 0x40, n-1, ..., 1), each carrying the checksum of the 8.3 name;
 * a run whose ordinals or checksums do not line up is ignored and its 8.3 entry is known
 * by its short name alone, as Windows and Linux do.
 *
 * On-disk order (docs/DESIGN.md, "Crash consistency"):
 * - a run that fits in one sector never straddles two, so creating it is one sector write;
 * - a longer run is written first sector first: the LFN-only sectors, then the sector with
 *   the 8.3 entry, which makes the file exist; LFN entries without it are orphans that every
 *   reader ignores;
 * - removal marks the 8.3 entry free first, then its LFN entries. */
#include "fs/fat.h"
#include "fs/fat_name.h"
#include "fs/fat_ondisk.h"
#include "util/time.h"

#define LFN_UNITS (LDIR_MAX_ENTRIES * LDIR_CHARS)    /* 260 */
#define MAX_RUN (LDIR_MAX_ENTRIES + 1)
#define ATTR_KEEP (ATTR_READ_ONLY | ATTR_HIDDEN | ATTR_SYSTEM | ATTR_DIRECTORY | ATTR_ARCHIVE)

/* Byte offsets of the 13 name characters in an LFN entry. */
static const uint8_t lfn_pos[LDIR_CHARS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };

/* ---- entries ---- */

static int is_free(uint8_t b) { return b == DIR_FREE || b == DIR_END; }

static int is_lfn(const uint8_t *e)
{
    return (e[DIR_ATTR] & ATTR_LONG_NAME_MASK) == ATTR_LONG_NAME;
}

static int is_dot(const uint8_t *e)
{
    return !memcmp(e, ".          ", FAT_SFN_LEN) || !memcmp(e, "..         ", FAT_SFN_LEN);
}

/* First cluster: the high word counts on FAT32 only (FAT12/16 leave it to other uses). */
static uint32_t ent_first(const struct sf_vol *v, const uint8_t *e)
{
    uint32_t lo = ld_le16(e + DIR_FST_CLUS_LO);
    return v->fat_bits == 32 ? lo | (uint32_t)ld_le16(e + DIR_FST_CLUS_HI) << 16 : lo;
}

static void set_first(const struct sf_vol *v, uint8_t *e, uint32_t c)
{
    st_le16(e + DIR_FST_CLUS_LO, (uint16_t)c);
    st_le16(e + DIR_FST_CLUS_HI, v->fat_bits == 32 ? (uint16_t)(c >> 16) : 0);
}

static sf_time_ms get_time(const struct sf_vol *v, const uint8_t *e, int tpos, int dpos,
                           int tenth)
{
    uint32_t dos = (uint32_t)ld_le16(e + dpos) << 16 | (tpos >= 0 ? ld_le16(e + tpos) : 0);
    uint8_t t10 = tenth >= 0 && e[tenth] <= 199 ? e[tenth] : 0;
    return sf_time_from_dos(dos, t10, v->cfg.utc_offset_min);
}

static void put_time(const struct sf_vol *v, uint8_t *e, int tpos, int dpos, int tenth,
                     sf_time_ms t)
{
    uint8_t t10;
    uint32_t dos = sf_time_to_dos(t, v->cfg.utc_offset_min, &t10);
    if (tpos >= 0)
        st_le16(e + tpos, (uint16_t)dos);
    st_le16(e + dpos, (uint16_t)(dos >> 16));
    if (tenth >= 0)
        e[tenth] = t10;
}

/* Everything but the name and location from an 8.3 entry. SF_ECORRUPT for a first cluster
 * outside the volume or a size the volume cannot hold: such entries are skipped. */
static int decode_83(const struct sf_vol *v, const uint8_t *e, struct dentry *d)
{
    uint32_t first = ent_first(v, e), size = ld_le32(e + DIR_FILE_SIZE);
    d->attr = e[DIR_ATTR] & ATTR_KEEP;
    d->ch.first = first;
    d->ch.contiguous = 0;
    d->ch.size = 0;
    d->data_length = d->valid_length = 0;
    if (d->attr & ATTR_DIRECTORY) {
        if (!clus_ok(v, first))
            return SF_ECORRUPT;       /* only ".." may point at the root with 0 */
    } else if (size) {
        uint64_t n = ((uint64_t)size + vol_cs(v) - 1) >> v->cluster_shift;
        if (!clus_ok(v, first) || n > v->cluster_count)
            return SF_ECORRUPT;
        d->ch.size = n << v->cluster_shift;
        d->data_length = d->valid_length = size;
    } else if (first && !clus_ok(v, first)) {
        return SF_ECORRUPT;
    }
    d->ctime = get_time(v, e, DIR_CRT_TIME, DIR_CRT_DATE, DIR_CRT_TIME_TENTH);
    d->mtime = get_time(v, e, DIR_WRT_TIME, DIR_WRT_DATE, -1);
    d->atime = get_time(v, e, -1, DIR_LST_ACC_DATE, -1);
    return 0;
}

/* Entry i of the run at loc: its sector and offset. */
static SF_NOINLINE uint64_t loc_entry(const struct sf_vol *v, const struct sf_entry_loc *loc,
                                      uint32_t i, uint32_t *off)
{
    uint32_t byte = loc->off + i * SF_DIRENT_SIZE;
    *off = byte & (vol_ss(v) - 1);
    return loc->lba[byte >> v->sector_shift];
}

static void loc_add(const struct sf_vol *v, struct sf_entry_loc *loc, uint32_t i, uint64_t lba)
{
    loc->lba[(loc->off + i * SF_DIRENT_SIZE) >> v->sector_shift] = lba;
}

/* ---- the walk ---- */

struct scan {
    /* the LFN run being collected */
    int active;
    uint8_t n;                  /* its entries */
    uint8_t next;               /* ordinal expected next; 0 once complete */
    uint8_t chk;
    uint32_t start;             /* index of its first entry */
    struct sf_entry_loc loc;
    uint16_t lfn[LFN_UNITS];
    /* free entries, for the lookup's hint: the first run of `need` free entries */
    uint32_t need, run_start, run_len, first_free;
    /* the 8.3 entry of the last file found */
    uint8_t e[SF_DIRENT_SIZE];
};

static void scan_init(struct scan *s, uint32_t need)
{
    s->active = 0;
    s->need = need;
    s->run_len = 0;
    s->first_free = UINT32_MAX;
}

static void lfn_take(const struct sf_vol *v, struct scan *s, const uint8_t *e, uint32_t idx,
                     uint64_t lba, uint32_t off)
{
    uint8_t ord = e[LDIR_ORD];
    uint32_t k = ord & (uint8_t)~LDIR_LAST;
    if (e[LDIR_TYPE] != 0) {
        s->active = 0;
        return;
    }
    if (ord & LDIR_LAST) {
        if (k < 1 || k > LDIR_MAX_ENTRIES) {
            s->active = 0;
            return;
        }
        s->active = 1;
        s->n = (uint8_t)k;
        s->chk = e[LDIR_CHKSUM];
        s->start = idx;
        memset(&s->loc, 0, sizeof s->loc);
        s->loc.off = (uint16_t)off;
    } else if (!s->active || !s->next || k != s->next || e[LDIR_CHKSUM] != s->chk) {
        s->active = 0;             /* an orphan, or a run out of order */
        return;
    }
    loc_add(v, &s->loc, idx - s->start, lba);
    for (uint32_t i = 0; i < LDIR_CHARS; i++)
        s->lfn[(k - 1) * LDIR_CHARS + i] = ld_le16(e + lfn_pos[i]);
    s->next = (uint8_t)(k - 1);
}

/* Length of the collected long name, or 0 when it is malformed (no character, or the
 * terminator is not in the last entry). */
static uint32_t lfn_len(const struct scan *s)
{
    uint32_t max = s->n * LDIR_CHARS, len = 0;
    while (len < max && s->lfn[len] != 0)
        len++;
    if (len == 0 || len <= (s->n - 1u) * LDIR_CHARS || len > SF_NAME_MAX)
        return 0;
    return len;
}

static void note_free(struct scan *s, uint32_t idx, int end)
{
    if (!s->run_len++)
        s->run_start = idx;
    if (s->first_free == UINT32_MAX && (end || s->run_len >= s->need))
        s->first_free = s->run_start;
}

/* The next file or directory at or after *idx: 1 with its name, loc and idx in d and its
 * 8.3 entry in s->e, *idx past it; 0 at the end of the directory. Deleted entries, volume
 * labels, "." and "..", and LFN entries that do not belong to the 8.3 entry after them are
 * passed over. Other fields of d are not set (decode_83). */
static int scan_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct scan *s,
                     struct dentry *d)
{
    uint32_t total = dwalk_entries(w);
    int err;
    s->active = 0;
    while (*idx < total) {
        uint32_t i = (*idx)++, off;
        uint64_t lba;
        uint8_t *sec;
        if ((err = dwalk_locate(w, i, &lba, &off)) || (err = cache_get(v, lba, &sec)))
            return err;
        const uint8_t *e = sec + off;
        if (is_free(e[0])) {
            note_free(s, i, e[0] == DIR_END);
            s->active = 0;
            if (e[0] == DIR_END) {
                *idx = total;
                return 0;
            }
            continue;
        }
        s->run_len = 0;
        if (is_lfn(e)) {
            lfn_take(v, s, e, i, lba, off);
            continue;
        }
        if ((e[DIR_ATTR] & ATTR_VOLUME_ID) || is_dot(e)) {
            s->active = 0;
            continue;
        }
        memcpy(s->e, e, SF_DIRENT_SIZE);
        uint32_t len = 0;
        if (s->active && s->next == 0 && s->chk == fat_lfn_checksum(e))
            len = lfn_len(s);
        if (len) {
            memcpy(d->name, s->lfn, len * sizeof d->name[0]);
            d->name_len = len;
            d->loc = s->loc;
            d->loc.count = (uint8_t)(s->n + 1);
            loc_add(v, &d->loc, s->n, lba);
            d->idx = s->start;
        } else {
            d->name_len = fat_sfn_decode(e, e[DIR_NTRES], d->name);
            memset(&d->loc, 0, sizeof d->loc);
            d->loc.off = (uint16_t)off;
            d->loc.lba[0] = lba;
            d->loc.count = 1;
            d->idx = i;
        }
        s->active = 0;
        if (d->name_len)
            return 1;
    }
    return 0;
}

int fat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    struct scan s;
    int r;
    scan_init(&s, 0);
    while ((r = scan_next(v, w, idx, &s, d)) == 1) {
        int err = decode_83(v, s.e, d);
        if (err == SF_ECORRUPT)
            continue;                  /* damaged entry: skipped, as the lookup does */
        return err ? err : 1;
    }
    return r;
}

/* ---- lookup ----
 * One pass over the directory, compared on the raw entries: nothing is decoded until a
 * file matches.
 * - Short names: a name that is ASCII and fits 8.3 becomes its 11 upper-case bytes, and an
 *   8.3 entry matches when its bytes, ASCII letters folded to upper case, are these. That
 *   is the same as decoding and comparing without case: an entry byte >= 0x80 (0x05 for
 *   0xE5 in the first place) decodes to a character outside ASCII whose upper case is
 *   outside ASCII too (code page 437), so it never equals an ASCII character. Other names
 *   of up to 12 characters decode each 8.3 entry and compare (rare: names with spaces,
 *   several dots or characters a short name cannot hold).
 * - Long names: each long-name entry is compared, as it comes, against the 13 characters
 *   of the name it holds, only in runs with as many entries as the name needs; the
 *   checksum is checked once the whole run has matched.
 * - Aliases: for a name that needs long-name entries the same pass notes the short names
 *   formed from its basis (see "aliases" below), so that creating it needs no second pass.
 * - Free entries: the first run of entries the name needs (or the end), for dir_create. */

#define LOW_TAILS 64u

struct want {
    const uint16_t *name;
    uint32_t len;
    uint32_t nlfn;              /* long-name entries a run holding the name has */
    int key_ok;                 /* key: the name's 8.3 bytes (ASCII names that fit 8.3) */
    uint8_t key[FAT_SFN_LEN];
    int tails;                  /* note aliases of basis (names that need long entries) */
    int fits, taken;            /* the basis spells the name / an entry has the basis */
    uint8_t basis[FAT_SFN_LEN];
    uint32_t blen;              /* characters in the basis's base */
    uint64_t low;               /* bit t-1: tail ~t (1..LOW_TAILS) in use */
    uint32_t max;               /* highest tail in use */
};

static void want_init(struct want *q, const uint16_t *name, uint32_t len)
{
    int ascii = 1;
    q->name = name;
    q->len = len;
    q->nlfn = (len + LDIR_CHARS - 1) / LDIR_CHARS;
    for (uint32_t i = 0; i < len; i++)
        ascii &= name[i] < 0x80;
    q->fits = fat_sfn_basis(name, len, q->basis);
    q->key_ok = ascii && q->fits;
    memcpy(q->key, q->basis, FAT_SFN_LEN);
    uint8_t sfn[FAT_SFN_LEN], nt;
    q->tails = SF_HAVE_WRITE && !fat_sfn_exact(name, len, sfn, &nt);   /* for a create */
    q->blen = 8;
    while (q->blen && q->basis[q->blen - 1] == ' ')
        q->blen--;
    q->taken = 0;
    q->low = 0;
    q->max = 0;
}

static inline uint64_t ld_u64(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

static uint8_t fold(uint8_t c) { return c >= 'a' && c <= 'z' ? (uint8_t)(c - 32) : c; }

/* Does the 8.3 entry e name q->name? */
static int sfn_match(const struct sf_vol *v, const struct want *q, const uint8_t *e)
{
    if (q->key_ok) {
        /* bytes that differ in more than the 0x20 bit cannot be a case pair */
        if ((ld_u64(e) ^ ld_u64(q->key)) & ~0x2020202020202020ull)
            return 0;
        for (uint32_t i = 0; i < FAT_SFN_LEN; i++)
            if (fold(e[i]) != q->key[i])
                return 0;
        return 1;
    }
    if (q->len > FAT_SFN_MAX_CHARS)
        return 0;
    uint16_t sname[FAT_SFN_MAX_CHARS];
    uint32_t n = fat_sfn_decode(e, 0, sname);
    return n == q->len && name_equal(v, sname, q->name, q->len);
}

/* Compare long-name entry e, part k (1-based) of its run, with the name. */
static int lfn_part_match(const struct sf_vol *v, const struct want *q, const uint8_t *e,
                          uint32_t k)
{
    uint32_t p = (k - 1) * LDIR_CHARS;
    for (uint32_t i = 0; i < LDIR_CHARS; i++, p++) {
        uint16_t u = ld_le16(e + lfn_pos[i]);
        if (p >= q->len)
            return u == 0;          /* the terminator; what follows it does not matter */
        uint16_t c = q->name[p];
        if (u == c)
            continue;
        if ((u | c) < 0x80) {       /* ASCII: only letters have another case */
            if ((u ^ c) != 0x20 || (uint16_t)((u | 0x20) - 'a') > 'z' - 'a')
                return 0;
        } else if (vol_upcase(v, u) != vol_upcase(v, c)) {
            return 0;
        }
    }
    return 1;
}

/* Note the 8.3 entry e if it is the basis or the basis with a numeric tail: the test of
 * fat_sfn_tail_of, inline (this runs for every entry of the directory). */
static void note_alias(struct want *q, const uint8_t *e)
{
    const uint8_t *b = q->basis;
    if (e[0] != b[0] || e[8] != b[8] || e[9] != b[9] || e[10] != b[10])
        return;                     /* the basis and all its tails start with its first byte */
    for (uint32_t t = 1; t < 7; t++) {
        if (e[t] != '~')
            continue;
        uint32_t k = t + 1, val = 0;
        for (; k < 8 && e[k] >= '0' && e[k] <= '9'; k++)
            val = val * 10 + (uint32_t)(e[k] - '0');
        uint32_t d = k - t - 1, i = 1;
        while (k < 8 && e[k] == ' ')
            k++;
        if (k < 8)
            continue;               /* not digits and spaces: a later "~" may be the tail */
        if (!d || e[t + 1] == '0' || t != (q->blen < 7 - d ? q->blen : 7 - d))
            break;
        while (i < t && e[i] == b[i])
            i++;
        if (i < t)
            break;
        if (val <= LOW_TAILS)
            q->low |= 1ull << (val - 1);
        if (val > q->max)
            q->max = val;
        if (t == q->blen)
            return;                 /* the whole base and a tail: not the basis too */
        break;
    }
    if (!memcmp(e, b, FAT_SFN_LEN))
        q->taken = 1;
}

/* The alias a create may use after a walk that saw every entry, or 0 when the walk cannot
 * tell (tails up to FAT_TAIL_MAX in use): the basis when it fits and is free; else the
 * smallest free tail up to ~64; else one past the highest tail in use. Each is unique:
 * an entry equal to the basis or to tail t of the basis was seen and noted. */
static int alias_from_walk(const struct want *q, uint8_t *out)
{
    if (q->fits && !q->taken) {
        memcpy(out, q->basis, FAT_SFN_LEN);
        return 1;
    }
    uint32_t t = 1;
    while (t <= LOW_TAILS && (q->low >> (t - 1) & 1u))
        t++;
    if (t > LOW_TAILS)
        t = q->max + 1;
    if (t > FAT_TAIL_MAX)
        return 0;
    fat_sfn_tail(q->basis, t, out);
    return 1;
}

/* The found file at index `at` (its 8.3 entry, or the first entry of its long-name run):
 * name, location and fields into d. SF_ECORRUPT when its 8.3 entry is damaged. */
static int take_found(struct sf_vol *v, struct dwalk *w, uint32_t at, struct dentry *d)
{
    struct scan s;
    uint32_t idx = at;
    scan_init(&s, 0);
    int r = scan_next(v, w, &idx, &s, d);
    if (r != 1)
        return r < 0 ? r : SF_ECORRUPT;
    return decode_83(v, s.e, d);
}

int fat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
               uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    struct dwalk w;
    struct want q;
    const uint8_t *sec = NULL;
    uint32_t eps = vol_ss(v) / SF_DIRENT_SIZE, need;
    uint32_t run_len = 0, run_start = 0, first_free = UINT32_MAX;
    /* the long-name run before the current entry */
    int active = 0, ok = 0;
    uint32_t next = 0, start = 0;
    uint8_t chk = 0;
    int r = dwalk_open(&w, v, dir);
    if (r)
        return r;
    v->alias_ok = 0;
    want_init(&q, name, len);
    need = q.tails ? 1 + q.nlfn : 1;      /* fat_name_entries */
    uint32_t total = dwalk_entries(&w), idx;
    for (idx = 0; idx < total; idx++) {
        if (!sec || idx % eps == 0) {
            uint64_t lba;
            uint32_t off;
            uint8_t *p;
            if ((r = dwalk_locate(&w, idx, &lba, &off)) || (r = cache_get(v, lba, &p)))
                return r;
            sec = p + off;
        } else {
            sec += SF_DIRENT_SIZE;
        }
        const uint8_t *e = sec;
        if (is_free(e[0])) {
            if (!run_len++)
                run_start = idx;
            if (first_free == UINT32_MAX && (e[0] == DIR_END || run_len >= need))
                first_free = run_start;
            active = 0;
            if (e[0] == DIR_END)
                break;
            continue;
        }
        run_len = 0;
        if (is_lfn(e)) {
            uint8_t ord = e[LDIR_ORD];
            uint32_t k = ord & (uint8_t)~LDIR_LAST;
            if (e[LDIR_TYPE] != 0) {
                active = 0;
            } else if (ord & LDIR_LAST) {
                active = k >= 1 && k <= LDIR_MAX_ENTRIES;
                ok = k == q.nlfn;
                chk = e[LDIR_CHKSUM];
                start = idx;
            } else if (!active || !next || k != next || e[LDIR_CHKSUM] != chk) {
                active = 0;
            }
            if (SF_HAVE_LFN && active) {   /* 8.3-only builds match short names only */
                if (ok)
                    ok = lfn_part_match(v, &q, e, k);
                next = k - 1;
            }
            continue;
        }
        if (SF_HAVE_WRITE && SF_HAVE_LFN && q.tails)
            note_alias(&q, e);    /* labels and dot entries too, as alias_pick does */
        if ((e[DIR_ATTR] & ATTR_VOLUME_ID) || (e[0] == '.' && is_dot(e))) {
            active = 0;
            continue;
        }
        int run = active && next == 0;
        int match = run && ok && chk == fat_lfn_checksum(e);
        if (!match)
            match = sfn_match(v, &q, e);
        active = 0;
        if (!match)
            continue;
        /* decode it (its long name if it has one): from the run's start when the run
         * belongs to this entry */
        uint32_t at = run && chk == fat_lfn_checksum(e) ? start : idx;
        int err = take_found(v, &w, at, d);
        if (err != SF_ECORRUPT)
            return err;
        sec = NULL;                /* damaged: skipped, as fat_next does; walk on */
    }
    if (SF_HAVE_WRITE && SF_HAVE_LFN && q.tails && alias_from_walk(&q, v->alias)) {
        v->alias_ok = 1;
        v->alias_fits = (uint8_t)q.fits;
        v->alias_gen = v->dir_gen;
        v->alias_dir = dir->first;
        memcpy(v->alias_basis, q.basis, FAT_SFN_LEN);
    }
    if (free_hint)
        *free_hint = first_free == UINT32_MAX ? 0 : first_free;
    return SF_ENOENT;
}

/* ---- aliases ---- */

#define TAIL_WINDOW 4096u

/* A short name for a long one: the basis itself when the name fits 8.3 and no entry has
 * it, else the basis with the smallest numeric tail no entry has. One pass over the
 * directory per 4096 tails. Used when the lookup of the name left no alias for it
 * (v->alias_ok, alias_from_walk). */
static int alias_pick(struct sf_vol *v, const struct sf_chain *dir, const uint8_t *basis,
                      int fits, uint8_t *out)
{
    if (v->alias_ok && v->alias_gen == v->dir_gen && v->alias_dir == dir->first &&
        v->alias_fits == (uint8_t)fits && !memcmp(v->alias_basis, basis, FAT_SFN_LEN)) {
        memcpy(out, v->alias, FAT_SFN_LEN);
        return 0;
    }
    uint32_t used[TAIL_WINDOW / 32];
    struct dwalk w;
    int err;
    for (uint32_t lo = 1; lo <= FAT_TAIL_MAX; lo += TAIL_WINDOW) {
        int taken = 0;
        memset(used, 0, sizeof used);
        if ((err = dwalk_open(&w, v, dir)))
            return err;
        for (uint32_t idx = 0; idx < dwalk_entries(&w); idx++) {
            uint64_t lba;
            uint32_t off, t;
            uint8_t *sec;
            if ((err = dwalk_locate(&w, idx, &lba, &off)) || (err = cache_get(v, lba, &sec)))
                return err;
            const uint8_t *e = sec + off;
            if (e[0] == DIR_END)
                break;
            if (e[0] == DIR_FREE || is_lfn(e))
                continue;
            if (!memcmp(e, basis, FAT_SFN_LEN))
                taken = 1;
            if (fat_sfn_tail_of(basis, e, &t) && t >= lo && t - lo < TAIL_WINDOW)
                used[(t - lo) / 32] |= 1u << ((t - lo) % 32);
        }
        if (fits && !taken) {
            memcpy(out, basis, FAT_SFN_LEN);
            return 0;
        }
        fits = 0;
        for (uint32_t k = 0; k < TAIL_WINDOW && lo + k <= FAT_TAIL_MAX; k++) {
            if (!(used[k / 32] & 1u << (k % 32))) {
                fat_sfn_tail(basis, lo + k, out);
                return 0;
            }
        }
    }
    return SF_ENOSPC;
}

/* ---- insertion ---- */

/* The entries of d: LFN entries (last part first) then the 8.3 entry. Returns their count. */
static uint32_t build(const struct sf_vol *v, const struct dentry *d, const uint8_t *sfn,
                      uint8_t ntres, int with_lfn, uint8_t *out)
{
    uint32_t k = with_lfn ? (d->name_len + LDIR_CHARS - 1) / LDIR_CHARS : 0;
    uint8_t chk = fat_lfn_checksum(sfn);
    memset(out, 0, (k + 1) * SF_DIRENT_SIZE);
    for (uint32_t j = 0; j < k; j++) {
        uint8_t *e = out + j * SF_DIRENT_SIZE;
        uint32_t ord = k - j;
        e[LDIR_ORD] = (uint8_t)(ord | (j == 0 ? LDIR_LAST : 0));
        e[LDIR_ATTR] = ATTR_LONG_NAME;
        e[LDIR_CHKSUM] = chk;
        for (uint32_t i = 0; i < LDIR_CHARS; i++) {
            uint32_t c = (ord - 1) * LDIR_CHARS + i;
            uint16_t u = c < d->name_len ? d->name[c] : c == d->name_len ? 0 : 0xFFFF;
            st_le16(e + lfn_pos[i], u);
        }
    }
    uint8_t *e = out + k * SF_DIRENT_SIZE;
    int is_dir = (d->attr & ATTR_DIRECTORY) != 0;
    memcpy(e, sfn, FAT_SFN_LEN);
    e[DIR_ATTR] = (uint8_t)(d->attr & ATTR_KEEP);
    e[DIR_NTRES] = ntres;
    put_time(v, e, DIR_CRT_TIME, DIR_CRT_DATE, DIR_CRT_TIME_TENTH, d->ctime);
    put_time(v, e, DIR_WRT_TIME, DIR_WRT_DATE, -1, d->mtime);
    put_time(v, e, -1, DIR_LST_ACC_DATE, -1, d->atime);
    set_first(v, e, d->ch.first);
    st_le32(e + DIR_FILE_SIZE, is_dir ? 0 : (uint32_t)d->data_length);
    return k + 1;
}

/* Free entries: deleted (0xE5) or end (0x00); skipped end entries become deleted ones. */
static const struct dir_slot_rules fat_slots = { DIR_END, DIR_FREE, 0, 1 };

/* Write the n entries of a run placed at loc, sector by sector in order: the 8.3 entry,
 * last, goes in the last write. */
static int write_run(struct sf_vol *v, const struct sf_entry_loc *loc, const uint8_t *ents,
                     uint32_t n)
{
    uint32_t last = (loc->off + (n - 1) * SF_DIRENT_SIZE) >> v->sector_shift;
    for (uint32_t k = 0; k <= last; k++) {
        uint8_t *sec;
        int err = cache_get(v, loc->lba[k], &sec);
        if (err)
            return err;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t byte = loc->off + i * SF_DIRENT_SIZE;
            if ((byte >> v->sector_shift) == k)
                memcpy(sec + (byte & (vol_ss(v) - 1)), ents + i * SF_DIRENT_SIZE,
                       SF_DIRENT_SIZE);
        }
        if ((err = cache_put(v, loc->lba[k])))
            return err;
    }
    return 0;
}

int fat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
               struct dentry *d, uint32_t hint)
{
    uint8_t ents[MAX_RUN * SF_DIRENT_SIZE], sfn[FAT_SFN_LEN], ntres = 0;
    int err, with_lfn = 0;
    if (!d->name_len || d->name_len > SF_NAME_MAX)
        return SF_EINVAL;
    if (!fat_sfn_exact(d->name, d->name_len, sfn, &ntres)) {
        if (!SF_HAVE_LFN)
            return SF_ENOTSUP;         /* a core without long names (config.h, SF_NO_LFN) */
        uint8_t basis[FAT_SFN_LEN];
        int fits = fat_sfn_basis(d->name, d->name_len, basis);
        if ((err = alias_pick(v, dir, basis, fits, sfn)))
            return err;
        with_lfn = 1;
    }
    uint32_t n = build(v, d, sfn, ntres, with_lfn, ents);
    if ((err = dir_find_slots(v, dir, dir_loc, &fat_slots, n, hint, &d->loc, &d->idx)))
        return err;                    /* SF_ENOSPC for a full FAT12/16 root */
    v->dir_gen++;                      /* the alias memo no longer holds */
    return write_run(v, &d->loc, ents, n);
}

/* ---- update and removal ---- */

int fat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
               const struct sf_chain *ch, uint64_t size, sf_time_ms mtime, int touch_mtime)
{
    uint32_t off;
    uint8_t *sec;
    if (!loc->count || loc->count > MAX_RUN)
        return SF_EINVAL;
    uint64_t lba = loc_entry(v, loc, loc->count - 1u, &off);
    int err = cache_get(v, lba, &sec);
    if (err)
        return err;
    uint8_t *e = sec + off;
    if (is_free(e[0]) || is_lfn(e))
        return SF_ECORRUPT;   /* the entry moved under us: a programming error or corruption */
    if (attr != UINT32_MAX)
        e[DIR_ATTR] = (uint8_t)((attr & ATTR_KEEP & ~ATTR_DIRECTORY) |
                                (e[DIR_ATTR] & ATTR_DIRECTORY));
    if (e[DIR_ATTR] & ATTR_DIRECTORY) {
        set_first(v, e, ch->first);      /* a directory's size stays 0 */
    } else {
        if (size > SF_FAT_MAX_FILE)
            return SF_EFBIG;
        set_first(v, e, size ? ch->first : 0);
        st_le32(e + DIR_FILE_SIZE, (uint32_t)size);
    }
    if (touch_mtime) {
        put_time(v, e, DIR_WRT_TIME, DIR_WRT_DATE, -1, mtime);
        put_time(v, e, -1, DIR_LST_ACC_DATE, -1, mtime);
    }
    return cache_put(v, lba);
}

int fat_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    if (!loc->count || loc->count > MAX_RUN)
        return SF_EINVAL;
    v->dir_gen++;
    return dir_mark_entries(v, loc, 0, DIR_FREE, 1);     /* the 8.3 entry's sector first */
}

int fat_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    struct dwalk w;
    int err = dwalk_open(&w, v, dir);
    if (err)
        return err;
    for (uint32_t idx = 0; idx < dwalk_entries(&w); idx++) {
        uint64_t lba;
        uint32_t off;
        uint8_t *sec;
        if ((err = dwalk_locate(&w, idx, &lba, &off)) || (err = cache_get(v, lba, &sec)))
            return err;
        const uint8_t *e = sec + off;
        if (e[0] == DIR_END)
            break;
        if (e[0] == DIR_FREE || is_lfn(e) || (e[DIR_ATTR] & ATTR_VOLUME_ID) || is_dot(e))
            continue;
        return 0;
    }
    return 1;
}

/* ---- "." and ".." ---- */

/* ".." of a directory in the root holds 0, on FAT32 too. */
static uint32_t parent_ref(const struct sf_vol *v, const struct sf_chain *parent)
{
    return parent->first == v->root_cluster ? 0 : parent->first;
}

int fat_init_dir(struct sf_vol *v, uint32_t c, const struct sf_chain *parent, sf_time_ms now)
{
    uint64_t lba = clus_lba(v, c);
    uint8_t *sec;
    int err = cache_get(v, lba, &sec);
    if (err)
        return err;
    for (uint32_t i = 0; i < 2; i++) {
        uint8_t *e = sec + i * SF_DIRENT_SIZE;
        memset(e, 0, SF_DIRENT_SIZE);
        memcpy(e, i ? "..         " : ".          ", FAT_SFN_LEN);
        e[DIR_ATTR] = ATTR_DIRECTORY;
        put_time(v, e, DIR_CRT_TIME, DIR_CRT_DATE, DIR_CRT_TIME_TENTH, now);
        put_time(v, e, DIR_WRT_TIME, DIR_WRT_DATE, -1, now);
        put_time(v, e, -1, DIR_LST_ACC_DATE, -1, now);
        set_first(v, e, i ? parent_ref(v, parent) : c);
    }
    return cache_put(v, lba);
}

int fat_reparent(struct sf_vol *v, const struct sf_chain *dir, const struct sf_chain *parent)
{
    uint8_t *sec;
    if (!clus_ok(v, dir->first))
        return SF_ECORRUPT;
    uint64_t lba = clus_lba(v, dir->first);
    int err = cache_get(v, lba, &sec);
    if (err)
        return err;
    uint8_t *e = sec + SF_DIRENT_SIZE;
    if (memcmp(e, "..         ", FAT_SFN_LEN) || !(e[DIR_ATTR] & ATTR_DIRECTORY))
        return SF_ECORRUPT;
    set_first(v, e, parent_ref(v, parent));
    return cache_put(v, lba);
}
