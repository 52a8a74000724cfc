/* exFAT directories: entry sets (read, validate, build, write, delete), name hashing,
 * lookup, insertion, listing.
 *
 * Sections: entry sets - lookup and insertion - listing.
 *
 * On-disk invariants kept when placing a new set (docs/DESIGN.md, "Crash consistency"):
 * - the file entry and the stream extension share a sector, so the size, first cluster,
 *   flags and the set checksum change together in one sector write;
 * - a set that fits in one sector never straddles two, so creating it is one sector write;
 * - a longer set is written last sector first: before the sector holding the file entry is
 *   written, its secondaries stand alone and are ignored by every reader. */
#include "fs/exfat.h"
#include "util/time.h"
#include "util/utf.h"

uint16_t exfat_name_hash(const struct sf_vol *v, const uint16_t *name, uint32_t len)
{
    uint16_t h = 0;
    for (uint32_t i = 0; i < len; i++) {
        uint16_t u = vol_upcase(v, name[i]);
        h = (uint16_t)(((h & 1) ? 0x8000 : 0) + (h >> 1) + (u & 0xFF));
        h = (uint16_t)(((h & 1) ? 0x8000 : 0) + (h >> 1) + (u >> 8));
    }
    return h;
}
/* ---- entry sets ---- */

static SF_NOINLINE uint16_t set_checksum(const uint8_t *e, uint32_t n)
{
    uint16_t sum = 0;
    for (uint32_t i = 0; i < n * EXDE_SIZE; i++) {
        if (i == EXDE_FILE_SET_CHECKSUM || i == EXDE_FILE_SET_CHECKSUM + 1)
            continue;
        sum = (uint16_t)(((sum & 1) ? 0x8000 : 0) + (sum >> 1) + e[i]);
    }
    return sum;
}

static uint64_t loc_lba(const struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t i,
                        uint32_t *off)
{
    uint32_t byte = loc->off + i * EXDE_SIZE;
    *off = byte & (vol_ss(v) - 1);
    return loc->lba[byte >> v->sector_shift];
}

/* Copy the set at loc into s (no validation beyond the count). */
static int eset_load(struct sf_vol *v, const struct sf_entry_loc *loc, struct eset *s)
{
    if (loc->count < 3 || loc->count > 1 + EXFAT_MAX_SECONDARY)
        return SF_EINVAL;
    for (uint32_t i = 0; i < loc->count; i++) {
        uint32_t off;
        uint8_t *sec;
        int err = cache_get(v, loc_lba(v, loc, i, &off), &sec);
        if (err)
            return err;
        memcpy(s->e + i * EXDE_SIZE, sec + off, EXDE_SIZE);
    }
    s->n = loc->count;
    s->loc = *loc;
    return 0;
}

static int eset_read(struct dwalk *w, uint32_t idx, struct eset *s)
{
    struct sf_vol *v = w->v;
    uint64_t lba;
    uint32_t off, n = 1;
    uint8_t *sec;
    int err;

    memset(&s->loc, 0, sizeof s->loc);
    for (uint32_t i = 0; i < n; i++) {
        if ((err = dwalk_locate(w, idx + i, &lba, &off)))
            return err == SF_ENOENT ? SF_ECORRUPT : err;   /* the set runs off the end */
        if ((err = cache_get(v, lba, &sec)))
            return err;
        memcpy(s->e + i * EXDE_SIZE, sec + off, EXDE_SIZE);
        if (i == 0) {
            if (s->e[0] != EXDE_FILE)
                return SF_ECORRUPT;
            n = 1u + s->e[EXDE_FILE_SECONDARY_COUNT];
            if (n < 3 || n > 1 + EXFAT_MAX_SECONDARY)
                return SF_ECORRUPT;
            s->loc.off = (uint16_t)off;
        }
        s->loc.lba[(s->loc.off + i * EXDE_SIZE) >> v->sector_shift] = lba;
    }
    s->n = n;
    s->idx = idx;
    s->loc.count = (uint8_t)n;
    const uint8_t *st = s->e + EXDE_SIZE;
    if (st[0] != EXDE_STREAM)
        return SF_ECORRUPT;
    uint32_t name_len = st[EXDE_STREAM_NAME_LEN];
    uint32_t name_entries = (name_len + EXFAT_NAME_PER_ENTRY - 1) / EXFAT_NAME_PER_ENTRY;
    if (name_len == 0 || 2 + name_entries > n)
        return SF_ECORRUPT;
    for (uint32_t i = 2; i < n; i++) {
        uint8_t t = s->e[i * EXDE_SIZE];
        if (i < 2 + name_entries ? t != EXDE_NAME : !(t & EXDE_INUSE) || !(t & EXDE_TYPE_SECONDARY))
            return SF_ECORRUPT;
    }
    if (set_checksum(s->e, n) != ld_le16(s->e + EXDE_FILE_SET_CHECKSUM))
        return SF_ECORRUPT;
    return 0;
}

static sf_time_ms decode_time(const struct sf_vol *v, const uint8_t *fe, int ts, int ms10, int utc)
{
    int off = sf_exfat_utc_minutes(fe[utc], v->cfg.utc_offset_min);
    return sf_time_from_dos(ld_le32(fe + ts), ms10 >= 0 ? fe[ms10] : 0, off);
}

static int eset_decode(const struct sf_vol *v, const struct eset *s, struct dentry *d)
{
    const uint8_t *fe = s->e, *st = s->e + EXDE_SIZE;
    d->loc = s->loc;
    d->idx = s->idx;
    d->name_len = st[EXDE_STREAM_NAME_LEN];
    for (uint32_t i = 0; i < d->name_len; i++) {
        uint32_t ent = 2 + i / EXFAT_NAME_PER_ENTRY, k = i % EXFAT_NAME_PER_ENTRY;
        d->name[i] = ld_le16(s->e + ent * EXDE_SIZE + EXDE_NAME_CHARS + 2 * k);
    }
    d->attr = ld_le16(fe + EXDE_FILE_ATTR);
    d->data_length = ld_le64(st + EXDE_DATA_LENGTH);
    d->valid_length = ld_le64(st + EXDE_STREAM_VALID_LEN);
    d->ch.first = ld_le32(st + EXDE_FIRST_CLUSTER);
    d->ch.contiguous = (st[EXDE_STREAM_FLAGS] & EXDE_FLAG_NO_FAT_CHAIN) != 0;
    d->ch.size = (d->data_length + vol_cs(v) - 1) & ~(uint64_t)(vol_cs(v) - 1);
    d->ctime = decode_time(v, fe, EXDE_FILE_CTIME, EXDE_FILE_CTIME_10MS, EXDE_FILE_CTIME_UTC);
    d->mtime = decode_time(v, fe, EXDE_FILE_MTIME, EXDE_FILE_MTIME_10MS, EXDE_FILE_MTIME_UTC);
    d->atime = decode_time(v, fe, EXDE_FILE_ATIME, -1, EXDE_FILE_ATIME_UTC);
    if (d->valid_length > d->data_length)
        return SF_ECORRUPT;
    if (!(st[EXDE_STREAM_FLAGS] & EXDE_FLAG_ALLOC_POSSIBLE) && (d->data_length || d->ch.first))
        return SF_ECORRUPT;
    if (d->data_length) {
        uint64_t n = d->ch.size >> v->cluster_shift;
        if (!clus_ok(v, d->ch.first))
            return SF_ECORRUPT;
        if (d->ch.contiguous && (uint64_t)(d->ch.first - SF_FIRST_CLUSTER) + n > v->cluster_count)
            return SF_ECORRUPT;
        if (n > v->cluster_count)
            return SF_ECORRUPT;
    } else if (d->ch.first && !clus_ok(v, d->ch.first)) {
        return SF_ECORRUPT;
    }
    if ((d->attr & SF_ATTR_DIR) && d->data_length == 0)
        return SF_ECORRUPT;      /* a directory always has at least one cluster */
    return 0;
}

static void put_time(const struct sf_vol *v, uint8_t *fe, int ts, int ms10, int utc, sf_time_ms t)
{
    uint8_t m10;
    st_le32(fe + ts, sf_time_to_dos(t, v->cfg.utc_offset_min, &m10));
    if (ms10 >= 0)
        fe[ms10] = m10;
    fe[utc] = sf_exfat_utc_field(v->cfg.utc_offset_min);
}

static void set_stream(const struct sf_vol *v, uint8_t *st, const struct sf_chain *ch,
                       uint64_t data_length, uint64_t valid_length)
{
    (void)v;
    uint8_t flags = EXDE_FLAG_ALLOC_POSSIBLE;
    uint32_t first = data_length ? ch->first : 0;
    if (first && ch->contiguous)
        flags |= EXDE_FLAG_NO_FAT_CHAIN;
    st[EXDE_STREAM_FLAGS] = flags;
    st_le64(st + EXDE_STREAM_VALID_LEN, valid_length);
    st_le32(st + EXDE_FIRST_CLUSTER, first);
    st_le64(st + EXDE_DATA_LENGTH, data_length);
}

static void eset_build(const struct sf_vol *v, struct eset *s, const struct dentry *d)
{
    const uint16_t *name = d->name;
    uint32_t len = d->name_len;
    uint32_t name_entries = (len + EXFAT_NAME_PER_ENTRY - 1) / EXFAT_NAME_PER_ENTRY;
    uint8_t *fe = s->e, *st = s->e + EXDE_SIZE;
    s->n = 2 + name_entries;
    memset(s->e, 0, s->n * EXDE_SIZE);
    fe[EXDE_TYPE] = EXDE_FILE;
    fe[EXDE_FILE_SECONDARY_COUNT] = (uint8_t)(s->n - 1);
    st_le16(fe + EXDE_FILE_ATTR, (uint16_t)d->attr);
    put_time(v, fe, EXDE_FILE_CTIME, EXDE_FILE_CTIME_10MS, EXDE_FILE_CTIME_UTC, d->ctime);
    put_time(v, fe, EXDE_FILE_MTIME, EXDE_FILE_MTIME_10MS, EXDE_FILE_MTIME_UTC, d->mtime);
    put_time(v, fe, EXDE_FILE_ATIME, -1, EXDE_FILE_ATIME_UTC, d->atime);
    st[EXDE_TYPE] = EXDE_STREAM;
    st[EXDE_STREAM_NAME_LEN] = (uint8_t)len;
    st_le16(st + EXDE_STREAM_NAME_HASH, exfat_name_hash(v, name, len));
    set_stream(v, st, &d->ch, d->data_length, d->valid_length);
    for (uint32_t i = 0; i < name_entries; i++) {
        uint8_t *ne = s->e + (2 + i) * EXDE_SIZE;
        ne[EXDE_TYPE] = EXDE_NAME;
        for (uint32_t k = 0; k < EXFAT_NAME_PER_ENTRY && i * EXFAT_NAME_PER_ENTRY + k < len; k++)
            st_le16(ne + EXDE_NAME_CHARS + 2 * k, name[i * EXFAT_NAME_PER_ENTRY + k]);
    }
}

/* Write the sectors of the set that differ from the medium, last sector first. */
static int eset_store(struct sf_vol *v, const struct eset *s)
{
    uint32_t last = (s->loc.off + (s->n - 1) * EXDE_SIZE) >> v->sector_shift;
    for (int k = (int)last; k >= 0; k--) {
        uint8_t *sec;
        int err, changed = 0;
        if ((err = cache_get(v, s->loc.lba[k], &sec)))
            return err;
        for (uint32_t i = 0; i < s->n; i++) {
            uint32_t byte = s->loc.off + i * EXDE_SIZE;
            if ((byte >> v->sector_shift) != (uint32_t)k)
                continue;
            uint8_t *dst = sec + (byte & (vol_ss(v) - 1));
            if (memcmp(dst, s->e + i * EXDE_SIZE, EXDE_SIZE)) {
                memcpy(dst, s->e + i * EXDE_SIZE, EXDE_SIZE);
                changed = 1;
            }
        }
        if (changed && (err = cache_put(v, s->loc.lba[k])))
            return err;
    }
    return 0;
}

static int eset_write(struct sf_vol *v, struct eset *s)
{
    st_le16(s->e + EXDE_FILE_SET_CHECKSUM, set_checksum(s->e, s->n));
    return eset_store(v, s);
}

int exfat_update(struct sf_vol *v, const struct sf_entry_loc *loc, uint32_t attr,
                const struct sf_chain *ch, uint64_t data_length, uint64_t valid_length,
                sf_time_ms mtime, int touch_mtime)
{
    struct eset s;
    int err = eset_load(v, loc, &s);
    if (err)
        return err;
    if (s.e[0] != EXDE_FILE || s.e[EXDE_SIZE] != EXDE_STREAM)
        return SF_ECORRUPT;   /* the set moved under us: a programming error or corruption */
    if (attr != UINT32_MAX)
        st_le16(s.e + EXDE_FILE_ATTR, (uint16_t)attr);
    if (touch_mtime) {
        put_time(v, s.e, EXDE_FILE_MTIME, EXDE_FILE_MTIME_10MS, EXDE_FILE_MTIME_UTC, mtime);
        put_time(v, s.e, EXDE_FILE_ATIME, -1, EXDE_FILE_ATIME_UTC, mtime);
    }
    set_stream(v, s.e + EXDE_SIZE, ch, data_length, valid_length);
    return eset_write(v, &s);
}

int exfat_remove(struct sf_vol *v, const struct sf_entry_loc *loc)
{
    /* the file entry's sector first */
    return dir_mark_entries(v, loc, (uint8_t)~EXDE_INUSE, 0, 0);
}
/* ---- lookup and insertion ---- */

int exfat_lookup(struct sf_vol *v, const struct sf_chain *dir, const uint16_t *name,
                 uint32_t len, struct dentry *d, uint32_t *free_hint)
{
    struct dwalk w;
    struct eset set, *s = &set;
    uint16_t hash = exfat_name_hash(v, name, len);
    uint32_t ss = vol_ss(v), first_free = UINT32_MAX, run_start = 0, run_len = 0;
    uint32_t need = 2 + (len + EXFAT_NAME_PER_ENTRY - 1) / EXFAT_NAME_PER_ENTRY;
    int err = dwalk_open(&w, v, dir);
    if (err)
        return err;
    uint32_t total = dwalk_entries(&w);
    for (uint32_t idx = 0; idx < total;) {
        uint64_t lba;
        uint32_t off;
        uint8_t *sec;
        if ((err = dwalk_locate(&w, idx, &lba, &off)) || (err = cache_get(v, lba, &sec)))
            return err;
        /* Scan this sector; sets whose stream extension is in the same sector and whose
         * name length or hash differ are skipped without decoding. */
        int decode = 0;
        for (; off < ss && idx < total; ) {
            uint8_t type = sec[off];
            if (type == EXDE_END || !(type & EXDE_INUSE)) {
                /* the hint for dir_insert: the first free run long enough for this name */
                if (!run_len++)
                    run_start = idx;
                if (type == EXDE_END || (run_len >= need && first_free == UINT32_MAX)) {
                    if (first_free == UINT32_MAX)
                        first_free = run_start;
                    if (type == EXDE_END)
                        goto absent;
                }
                idx++;
                off += EXDE_SIZE;
                continue;
            }
            run_len = 0;
            if (type != EXDE_FILE) {
                idx++;
                off += EXDE_SIZE;
                continue;
            }
            uint32_t n = 1u + sec[off + EXDE_FILE_SECONDARY_COUNT];
            const uint8_t *st = sec + off + EXDE_SIZE;
            if (off + EXDE_SIZE < ss && st[0] == EXDE_STREAM && n >= 3 &&
                n <= 1 + EXFAT_MAX_SECONDARY &&
                (st[EXDE_STREAM_NAME_LEN] != len || ld_le16(st + EXDE_STREAM_NAME_HASH) != hash)) {
                idx += n;
                off += n * EXDE_SIZE;
                continue;
            }
            decode = 1;
            break;
        }
        if (!decode)
            continue;
        run_len = 0;
        err = eset_read(&w, idx, s);
        if (err == SF_ECORRUPT) {      /* a damaged set is skipped, as if absent */
            idx++;
            continue;
        }
        if (err)
            return err;
        idx += s->n;
        const uint8_t *st = s->e + EXDE_SIZE;
        if (st[EXDE_STREAM_NAME_LEN] != len || ld_le16(st + EXDE_STREAM_NAME_HASH) != hash)
            continue;
        if ((err = eset_decode(v, s, d)) == SF_ECORRUPT)
            continue;
        if (err)
            return err;
        if (name_equal(v, d->name, name, len))
            return 0;
    }
absent:
    if (free_hint)
        *free_hint = first_free == UINT32_MAX ? 0 : first_free;
    return SF_ENOENT;
}

/* Free entries: InUse clear; skipped end entries become unused file entries. The file and
 * stream entries share a sector (head 2). */
static const struct dir_slot_rules exfat_slots = {
    EXDE_END, EXDE_FILE & (uint8_t)~EXDE_INUSE, EXDE_INUSE, 2
};

/* Room for the set (dir.c), then the set, written last sector first (eset_store). */
int exfat_create(struct sf_vol *v, struct sf_chain *dir, const struct sf_entry_loc *dir_loc,
                 struct dentry *d, uint32_t hint)
{
    struct eset s;
    eset_build(v, &s, d);
    int err = dir_find_slots(v, dir, dir_loc, &exfat_slots, s.n, hint, &s.loc, &s.idx);
    if (err || (err = eset_write(v, &s)))
        return err;
    d->loc = s.loc;
    d->idx = s.idx;
    return 0;
}

/* ---- listing ---- */

int exfat_next(struct sf_vol *v, struct dwalk *w, uint32_t *idx, struct dentry *d)
{
    struct eset s;
    int err;
    while (*idx < dwalk_entries(w)) {
        uint8_t type;
        if ((err = dwalk_type(w, *idx, &type)))
            return err;
        if (type == EXDE_END)
            break;
        if (type != EXDE_FILE) {
            (*idx)++;
            continue;
        }
        err = eset_read(w, *idx, &s);
        if (err == SF_ECORRUPT) {            /* damaged set: skipped, as the lookup does */
            (*idx)++;
            continue;
        }
        if (err)
            return err;
        *idx += s.n;
        if ((err = eset_decode(v, &s, d)) == SF_ECORRUPT)
            continue;
        if (err)
            return err;
        return 1;
    }
    return 0;
}

int exfat_is_empty(struct sf_vol *v, const struct sf_chain *dir)
{
    struct dwalk w;
    int err = dwalk_open(&w, v, dir);
    if (err)
        return err;
    for (uint32_t idx = 0; idx < dwalk_entries(&w); idx++) {
        uint8_t type;
        if ((err = dwalk_type(&w, idx, &type)))
            return err;
        if (type == EXDE_END)
            break;
        if (type == EXDE_FILE)
            return 0;
    }
    return 1;
}
