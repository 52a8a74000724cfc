/* The checker's driver: work memory, findings, sector caches, FAT entries, chain walks.
 * File-system specific checks are in check_exfat.c and check_fat.c, log recovery in
 * recover.c (overview in check_int.h, rules in docs/FSCK.md). */
#include <stdarg.h>
#include <string.h>
#include "check/check_int.h"
#include "util/utf.h"

/* ---- findings ---- */

static char *put_str(char *o, char *end, const char *s)
{
    while (*s && o < end)
        *o++ = *s++;
    return o;
}

static char *put_num(char *o, char *end, uint64_t v, unsigned base)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n && o < end)
        *o++ = tmp[--n];
    return o;
}

static void vfmt(char *out, uint32_t cap, const char *fmt, va_list ap)
{
    char *o = out, *end = out + cap - 1;
    for (; *fmt && o < end; fmt++) {
        if (*fmt != '%') {
            *o++ = *fmt;
            continue;
        }
        switch (*++fmt) {
        case 's': o = put_str(o, end, va_arg(ap, const char *)); break;
        case 'u': o = put_num(o, end, va_arg(ap, uint32_t), 10); break;
        case 'U': o = put_num(o, end, va_arg(ap, uint64_t), 10); break;
        case 'x': o = put_num(o, end, va_arg(ap, uint32_t), 16); break;
        case '%': *o++ = '%'; break;
        default: fmt--; break;
        }
    }
    *o = 0;
}

void chk_fmt(char *out, uint32_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfmt(out, cap, fmt, ap);
    va_end(ap);
}

/* A finding states the problem, then the repair as done ("...: cut", "size cut to 12").
 * Without repair nothing is done: the repair is said as what --repair would do. The
 * messages' repair phrases, each as done and as it would be (the first match is used). */
static const char *const would[][2] = {
    { "size cut to", "size would be cut to" },
    { ": mark cleared", ": mark would be cleared" },
    { ": the first is copied", ": the first would be copied" },
    { ": cut", ": would be cut" },
    { ": removed", ": would be removed" },
    { ": freed", ": would be freed" },
    { ": cleared", ": would be cleared" },
    { ": replaced by", ": would be replaced by" },
    { ": marked unused", ": would be marked unused" },
    { ": set to", ": would be set to" },
    { ": written", ": would be written" },
    { ": renamed", ": would be renamed" },
    { ": corrected", ": would be corrected" },
    { ": copied from", ": would be copied from" },
};

static void say_would(char *msg, uint32_t cap)
{
    for (uint32_t i = 0; i < sizeof would / sizeof would[0]; i++) {
        const char *done = would[i][0], *todo = would[i][1];
        size_t dl = sf_strlen(done), tl = sf_strlen(todo), ml = sf_strlen(msg);
        char *at = NULL;
        for (size_t j = 0; j + dl <= ml; j++)
            if (!memcmp(msg + j, done, dl))
                at = msg + j;                         /* the last one: the repair */
        if (!at)
            continue;
        if (ml - dl + tl >= cap)
            return;                                   /* no room: leave it as it is */
        memmove(at + tl, at + dl, ml - (size_t)(at - msg) - dl + 1);
        memcpy(at, todo, tl);
        return;
    }
}

int chk_report(struct chk *k, int kind, int with_path, int fatal, const char *fmt, ...)
{
    va_list ap;
    if (k->pending)
        chk_unrepaired(k);
    va_start(ap, fmt);
    vfmt(k->msg, sizeof k->msg, fmt, ap);
    va_end(ap);
    if (!k->repair && !fatal)
        say_would(k->msg, sizeof k->msg);
    k->r->problems++;
    if (fatal)
        k->r->unrepairable++;
    if (k->o->cb && !(k->repair && !fatal)) {
        /* In repair mode the report goes out from chk_repaired (or below, when the fix is
         * not made after all), so that it carries the outcome. */
        struct sf_check_finding f = { kind, with_path ? (k->plen ? k->path : "/") : NULL,
                                      k->msg, 0, fatal };
        k->o->cb(k->o->user, &f);
    }
    k->pending_kind = kind;
    k->pending_path = with_path;
    k->pending = k->repair && !fatal;
    return k->pending;
}

void chk_repaired(struct chk *k)
{
    if (!k->pending)
        return;
    k->pending = 0;
    k->r->repaired++;
    if (k->o->cb) {
        struct sf_check_finding f = { k->pending_kind,
                                      k->pending_path ? (k->plen ? k->path : "/") : NULL,
                                      k->msg, 1, 0 };
        k->o->cb(k->o->user, &f);
    }
}

void chk_unrepaired(struct chk *k)
{
    if (!k->pending)
        return;
    k->pending = 0;
    k->r->unrepairable++;
    if (k->o->cb) {
        struct sf_check_finding f = { k->pending_kind,
                                      k->pending_path ? (k->plen ? k->path : "/") : NULL,
                                      k->msg, 0, 1 };
        k->o->cb(k->o->user, &f);
    }
}

const char *sf_check_kind_name(int kind)
{
    static const char *const names[] = {
        "?", "boot", "dirty", "fat", "bitmap", "leak", "cross-link", "loop", "range",
        "entry", "name", "size", "upcase", "fsinfo", "recover",
    };
    return kind > 0 && kind <= SF_CHK_RECOVER ? names[kind] : names[0];
}

const char *chk_walk_why(int why)
{
    switch (why) {
    case WALK_SHORT: return "the chain ends early";
    case WALK_RANGE: return "the chain leaves the cluster heap or meets a free or bad entry";
    case WALK_CROSS: return "a cluster is shared with another file";
    case WALK_LOOP: return "the chain loops";
    case WALK_FREE: return "the allocation bitmap marks a cluster of it free";
    default: return "I/O error";
    }
}

/* ---- paths ---- */

uint32_t chk_path_push(struct chk *k, const uint16_t *name, uint32_t len)
{
    uint32_t saved = k->plen;
    char tmp[3 * 255 + 1];
    int n = sf_utf16_to_utf8(name, len, tmp, sizeof tmp);
    if (n < 0)
        n = 0;
    tmp[n] = 0;
    if (k->plen + 1 + (uint32_t)n + 4 >= CHK_PATH_MAX) {
        if (k->plen + 4 < CHK_PATH_MAX)
            k->plen = (uint32_t)(put_str(k->path + k->plen, k->path + CHK_PATH_MAX - 1,
                                         "/...") - k->path);
    } else {
        k->path[k->plen++] = '/';
        memcpy(k->path + k->plen, tmp, (size_t)n);
        k->plen += (uint32_t)n;
    }
    k->path[k->plen] = 0;
    return saved;
}

void chk_path_pop(struct chk *k, uint32_t saved)
{
    k->plen = saved;
    k->path[saved] = 0;
}

/* ---- sectors ---- */

int chk_read(struct chk *k, uint64_t lba, void *buf)
{
    int err = sf_bdev_read(k->bd, lba, buf, 1);
    return err ? SF_EIO : 0;
}

int chk_write(struct chk *k, uint64_t lba, const void *buf)
{
    if (!k->repair)
        return SF_EINVAL;           /* a checker never writes unless asked to repair */
    k->wrote = 1;
    if (lba == k->dsec_lba && buf != k->dsec)
        memcpy(k->dsec, buf, k->ss);
    if (lba == k->fsec_lba && buf != k->fsec)
        k->fsec_lba = UINT64_MAX;
    if (lba == k->bsec_lba && buf != k->bsec)
        k->bsec_lba = UINT64_MAX;
    return sf_bdev_write(k->bd, lba, buf, 1) ? SF_EIO : 0;
}

int chk_dsec(struct chk *k, uint64_t lba, uint8_t **sec)
{
    if (lba != k->dsec_lba) {
        k->dsec_lba = UINT64_MAX;
        if (chk_read(k, lba, k->dsec))
            return SF_EIO;
        k->dsec_lba = lba;
    }
    *sec = k->dsec;
    return 0;
}

int chk_dsec_put(struct chk *k)
{
    return chk_write(k, k->dsec_lba, k->dsec);
}

/* ---- FAT entries ---- */

static int fat_load(struct chk *k, uint64_t lba)
{
    if (k->fsec_lba == lba)
        return 0;
    k->fsec_lba = UINT64_MAX;
    if (chk_read(k, lba, k->fsec))
        return SF_EIO;
    if (k->fs == 12 && chk_read(k, lba + 1, k->fsec + k->ss))
        return SF_EIO;
    k->fsec_lba = lba;
    return 0;
}

/* Byte offset of entry c in the FAT. */
static uint64_t fat_off(const struct chk *k, uint32_t c)
{
    if (k->fs == 12)
        return (uint64_t)c + c / 2;
    return (uint64_t)c * (k->fs == 16 ? 2 : 4);
}

int chk_fat_get(struct chk *k, uint32_t c, uint32_t *v)
{
    uint64_t off = fat_off(k, c);
    uint32_t o = (uint32_t)(off % k->ss), e;
    if (fat_load(k, k->fat_lba + off / k->ss))
        return SF_EIO;
    const uint8_t *p = k->fsec + o;
    switch (k->fs) {
    case 12:
        e = ld_le16(p);
        e = (c & 1) ? e >> 4 : e & 0xFFF;
        *v = e >= 0xFF8 ? CHK_EOC : e == 0xFF7 ? CHK_BAD : e;
        return 0;
    case 16:
        e = ld_le16(p);
        *v = e >= 0xFFF8 ? CHK_EOC : e == 0xFFF7 ? CHK_BAD : e;
        return 0;
    case 32:
        e = ld_le32(p) & 0x0FFFFFFF;
        *v = e >= 0x0FFFFFF8 ? CHK_EOC : e == 0x0FFFFFF7 ? CHK_BAD : e;
        return 0;
    default:
        /* exFAT: only FFFFFFFF ends a chain; FFFFFFF8..FFFFFFFE are invalid in a chain and
         * stay as they are, out of range for the walker. */
        *v = ld_le32(p);
        return 0;
    }
}

int chk_fat_set(struct chk *k, uint32_t c, uint32_t v)
{
    uint64_t off = fat_off(k, c);
    uint32_t o = (uint32_t)(off % k->ss);
    uint64_t rel = off / k->ss;
    if (k->fs == 12)
        return SF_ENOTSUP;
    if (fat_load(k, k->fat_lba + rel))
        return SF_EIO;
    uint8_t *p = k->fsec + o;
    if (k->fs == 16)
        st_le16(p, (uint16_t)(v == CHK_EOC ? 0xFFFF : v));
    else if (k->fs == 32)
        st_le32(p, (ld_le32(p) & 0xF0000000u) | (v == CHK_EOC ? 0x0FFFFFFF : v & 0x0FFFFFFF));
    else
        st_le32(p, v);
    /* Every copy (exFAT: the one FAT; TexFAT's second is not used by streamfat). */
    uint32_t n = k->fs == 64 ? 1 : k->nfats;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t lba = k->fat_lba + (uint64_t)i * k->fat_len + rel;
        k->wrote = 1;
        if (sf_bdev_write(k->bd, lba, k->fsec, 1))
            return SF_EIO;
    }
    return 0;
}

/* ---- chains ---- */

/* Is cluster c among the first n clusters of the chain from first? (Tells a loop from a
 * cross-link once a cluster turns up the second time.) */
static int in_chain(struct chk *k, uint32_t first, uint32_t n, uint32_t c)
{
    uint32_t x = first;
    for (uint32_t i = 0; i < n; i++) {
        if (x == c)
            return 1;
        if (chk_fat_get(k, x, &x) || !chk_clus_ok(k, x))
            return 0;
    }
    return 0;
}

int chk_walk(struct chk *k, uint32_t first, int contig, uint32_t want, uint32_t *got,
             uint32_t *last)
{
    uint32_t c = first, n = 0;
    *got = 0;
    *last = 0;
    if (!want)
        return WALK_OK;
    for (;;) {
        if (!chk_clus_ok(k, c))
            return WALK_RANGE;
        if (reach_test(k, c))
            return contig ? WALK_CROSS : in_chain(k, first, n, c) ? WALK_LOOP : WALK_CROSS;
        if (contig && k->bm_clus) {
            /* A contiguous exFAT file has no FAT to say where it ends: clusters the bitmap
             * marks free are past its valid allocation (allocation is written first). */
            int used;
            if (k->alloc_test(k, c, &used))
                return WALK_IO;
            if (!used)
                return WALK_FREE;
        }
        reach_set(k, c);
        *got = ++n;
        *last = c;
        if (n == want)
            return WALK_OK;
        if (contig) {
            c++;
            continue;
        }
        uint32_t next;
        if (chk_fat_get(k, c, &next))
            return WALK_IO;
        if (next == CHK_EOC)
            return want == UINT32_MAX ? WALK_OK : WALK_SHORT;
        if (next == CHK_FREE || next == CHK_BAD)
            return WALK_RANGE;
        c = next;
    }
}

/* ---- directories ---- */

int chk_dir_entry(struct chk *k, struct chk_dir *d, uint32_t idx, uint8_t **ent,
                  uint64_t *lba, uint32_t *off)
{
    uint8_t *sec;
    uint64_t byte = (uint64_t)idx * 32;
    if (d->fixed_n) {
        *lba = d->fixed_lba + byte / k->ss;
    } else {
        uint32_t ci = (uint32_t)(byte / k->cs), c;
        if (d->contig) {
            c = d->first + ci;
        } else {
            if (!d->cur_clus || ci < d->cur_ci) {
                d->cur_ci = 0;
                d->cur_clus = d->first;
            }
            c = d->cur_clus;
            while (d->cur_ci < ci) {
                if (chk_fat_get(k, c, &c))
                    return SF_EIO;
                if (!chk_clus_ok(k, c))
                    return SF_ECORRUPT;     /* the walk that counted nclus saw it valid */
                d->cur_ci++;
            }
            d->cur_clus = c;
        }
        *lba = chk_clus_lba(k, c) + (byte % k->cs) / k->ss;
    }
    *off = (uint32_t)(byte % k->ss);
    if (chk_dsec(k, *lba, &sec))
        return SF_EIO;
    *ent = sec + *off;
    return 0;
}

/* ---- the driver ---- */

static int probe(struct sf_bdev *bd, uint8_t *sec, int *fs, uint32_t *ccount)
{
    if (sf_bdev_read(bd, 0, sec, 1))
        return SF_EIO;
    if (!chk_exfat_probe(sec, bd->sector_size, ccount)) {
        *fs = 64;
        return 0;
    }
    if (!chk_fat_probe(sec, bd->sector_size, ccount)) {
        *fs = 32;
        return 0;
    }
    return SF_ECORRUPT;
}

/* Layout of the work memory: sector buffers first (aligned for the device), then the reach
 * map, then the recovery candidates. */
static size_t layout(uint32_t ss, uint32_t align, uint32_t ccount)
{
    size_t secs = 5 * (size_t)ss + align;
    size_t map = ((size_t)ccount + 7) / 8;
    map = (map + 7) & ~(size_t)7;
    return secs + map + CHK_CANDS * sizeof(struct chk_cand) + 8;
}

sf_ssize_t sf_check_work_size_buf(struct sf_bdev *bd, void *buf, size_t buf_size)
{
    int fs;
    uint32_t ccount;
    uint32_t align = bd && bd->mem_align ? bd->mem_align : 1;
    if (!bd || !buf || bd->sector_size > 4096 || align > 4096 || (align & (align - 1)))
        return SF_EINVAL;
    /* One sector, aligned for the device (O_DIRECT wants up to 4096). */
    if (buf_size < (size_t)bd->sector_size + align - 1)
        return SF_ENOMEM;
    uint8_t *sec = (uint8_t *)(((uintptr_t)buf + align - 1) & ~(uintptr_t)(align - 1));
    int err = probe(bd, sec, &fs, &ccount);
    if (err)
        return err;
    return (sf_ssize_t)layout(bd->sector_size, align, ccount);
}

sf_ssize_t sf_check_work_size(struct sf_bdev *bd)
{
    uint8_t raw[8192];                  /* a 4096-byte sector at 4096-byte alignment */
    return sf_check_work_size_buf(bd, raw, sizeof raw);
}

int sf_check(struct sf_bdev *bd, const struct sf_check_opts *o, struct sf_check_result *r)
{
    struct chk k;
    int err, fs;
    uint32_t ccount;
    if (!bd || !o || !r || !o->work)
        return SF_EINVAL;
    memset(r, 0, sizeof *r);
    memset(&k, 0, sizeof k);
    k.bd = bd;
    k.o = o;
    k.r = r;
    k.repair = (o->flags & SF_CHECK_REPAIR) != 0;
    k.ss = bd->sector_size;
    uint32_t align = bd->mem_align ? bd->mem_align : 1;
    if (o->work_size < 5 * (size_t)k.ss + align)
        return SF_ENOMEM;
    uintptr_t p = ((uintptr_t)o->work + align - 1) & ~(uintptr_t)(align - 1);
    k.xsec = (uint8_t *)p;
    k.dsec = k.xsec + k.ss;
    k.bsec = k.dsec + k.ss;
    k.fsec = k.bsec + k.ss;           /* two sectors */
    k.fsec_lba = k.bsec_lba = k.dsec_lba = UINT64_MAX;
    if ((err = probe(bd, k.xsec, &fs, &ccount)))
        return err;
    if (o->work_size < layout(k.ss, align, ccount))
        return SF_ENOMEM;
    k.reach = k.fsec + 2 * k.ss;
    size_t map = (((size_t)ccount + 7) / 8 + 7) & ~(size_t)7;
    memset(k.reach, 0, map);
    uintptr_t cp = ((uintptr_t)(k.reach + map) + 7) & ~(uintptr_t)7;
    k.cand = (struct chk_cand *)cp;
    k.fs = fs;
    r->fs = fs;
    err = fs == 64 ? chk_exfat(&k, k.xsec) : chk_fat(&k, k.xsec);
    if (k.pending)
        chk_unrepaired(&k);
    if (!err && k.wrote && sf_bdev_flush(bd))
        err = SF_EIO;
    if (err)
        return err;
    if (r->unrepairable)
        return 2;
    return r->problems ? 1 : 0;
}
