/* Log recovery: framed blocks (docs/FORMAT.md) that reached the medium after a .SFL file's
 * last checkpoint, re-attached by growing the file's recorded size over them.
 *
 * Where such blocks can be (src/stream/stream.c): the stream allocates ahead of the data
 * (exFAT: bitmap bits, the file staying NoFatChain while the clusters after it are free;
 * FAT: a chain run with its end mark) and writes data into that allocation; only a
 * checkpoint rewrites the entry's size. After a cut, the data past the size lies in
 *   - the rest of the last cluster the size covers, then
 *   - exFAT NoFatChain: the clusters directly after it, while the bitmap marks them
 *     allocated and no file reaches them (the stream's preallocation, now leaked);
 *   - exFAT with a FAT chain, and FAT: the clusters the file's own chain continues with
 *     past its size (allocated, reached by no file).
 * Free clusters are never taken: allocation is written before data, so a block in a free
 * cluster either belongs to a deleted file or was written without its allocation surviving.
 *
 * Every block of that allocation is judged as the readers judge it (docs/FORMAT.md, "Reading
 * a file"): it checks out (magic, version, kind 2, block size, CRC-32C over header and used
 * payload), carries the file's own file_id (from its header block), and sits at its place
 * (seq = block number, the position rule). The file is grown to the end of the last such
 * block; the bad blocks before it (torn, corrupted, unwritten) are attached with it and
 * counted (recovered_damaged), because the readers skip and count them the same way, so
 * one bad block no longer hides the good ones after it. Stale blocks of a deleted log
 * (another file_id, or a seq that is not their place) are never the file's last block, so
 * nothing past this file's own last block is taken. (The record layout, check 5, is not
 * walked here: a block with a good CRC and a broken layout comes only from a faulty writer,
 * and the readers report it as malformed.) Raw-mode files have no framing and are never
 * extended. */
#include <string.h>
#include "check/check_int.h"
#include "streamfat/rec.h"

int chk_is_log_name(const uint16_t *name, uint32_t len)
{
    static const char ext[] = ".SFL";
    if (len < 5)
        return 0;
    for (uint32_t i = 0; i < 4; i++) {
        uint16_t c = name[len - 4 + i];
        if (c >= 'a' && c <= 'z')
            c = (uint16_t)(c - 'a' + 'A');
        if (c != (uint16_t)ext[i])
            return 0;
    }
    return 1;
}

/* The cluster after c in the file's allocation past its size (see the top of the file), or
 * 0. ignore_reach: walking again over clusters this recovery marked itself. */
static int next_clus(struct chk *k, const struct chk_cand *c, uint32_t cur, int ignore_reach,
                     uint32_t *out)
{
    uint32_t nx;
    int used;
    *out = 0;
    if (c->contig) {
        nx = cur + 1;
    } else {
        if (chk_fat_get(k, cur, &nx))
            return SF_EIO;
    }
    if (!chk_clus_ok(k, nx) || (!ignore_reach && reach_test(k, nx)))
        return 0;
    if (k->alloc_test(k, nx, &used))
        return SF_EIO;
    if (used)
        *out = nx;
    return 0;
}

/* Cursor over the file's sectors from the end of its recorded size. */
struct cursor {
    uint32_t clus;      /* cluster holding byte pos */
    uint32_t taken;     /* clusters past c->nclus entered so far */
    uint64_t pos;       /* file offset */
};

/* LBA of the sector at cur->pos, entering the next cluster when pos reaches it. 0 with *lba
 * set, 1 when the allocation ends there. */
static int cur_lba(struct chk *k, const struct chk_cand *c, struct cursor *cur, uint64_t *lba)
{
    uint64_t ci = cur->pos / k->cs;
    if (ci >= (uint64_t)c->nclus + cur->taken) {
        uint32_t nx;
        int err = next_clus(k, c, cur->clus, 0, &nx);
        if (err)
            return err;
        if (!nx)
            return 1;
        reach_set(k, nx);          /* taken for now; given back below if not used */
        cur->clus = nx;
        cur->taken++;
    }
    *lba = chk_clus_lba(k, cur->clus) + (cur->pos % k->cs) / k->ss;
    return 0;
}

/* Move the cursor to `end`, entering the clusters on the way (nothing read): 0, 1 when the
 * allocation ends first, or an error. */
static int skip_to(struct chk *k, const struct chk_cand *c, struct cursor *cur, uint64_t end)
{
    uint64_t lba;
    while (cur->pos < end) {
        int err = cur_lba(k, c, cur, &lba);
        if (err)
            return err;
        cur->pos += k->ss;
    }
    return 0;
}

/* Check the block at cur->pos, block number `seq` of the file, as the readers' block check
 * and position rule do (docs/FORMAT.md "Reading a file", checks 2, 3, 4 and 6): 1 when it is
 * this file's block at its place, 0 when not, TB_END when the file's allocation ends before
 * the block does, or an error. The cursor moves to the block's end either way. */
#define TB_END 2
static int take_block(struct chk *k, const struct chk_cand *c, struct cursor *cur,
                      uint64_t file_id, uint64_t seq, uint32_t bsize)
{
    uint64_t lba, start = cur->pos, end = start + bsize;
    uint8_t hdr[SF_BLOCK_HDR];
    int err = cur_lba(k, c, cur, &lba), ok = 0;
    if (err)
        return err < 0 ? err : TB_END;
    if (chk_read(k, lba, k->xsec))
        return SF_EIO;
    memcpy(hdr, k->xsec, SF_BLOCK_HDR);
    uint32_t used = ld_le32(hdr + 32);
    if (ld_le32(hdr) == SF_BLOCK_MAGIC && ld_le16(hdr + 4) == SF_REC_VERSION &&
        ld_le16(hdr + 6) == SF_BLOCK_RECORDS && ld_le64(hdr + 8) == file_id &&
        ld_le64(hdr + 16) == seq && ld_le32(hdr + 40) == bsize &&
        used <= bsize - SF_BLOCK_HDR) {
        uint32_t crc = sf_crc32c(0, hdr, 44);
        uint32_t left = used, in = SF_BLOCK_HDR;
        for (;;) {
            uint32_t n = k->ss - in < left ? k->ss - in : left;
            crc = sf_crc32c(crc, k->xsec + in, n);
            left -= n;
            cur->pos += k->ss;
            if (!left)
                break;
            if ((err = cur_lba(k, c, cur, &lba)))
                return err < 0 ? err : TB_END;
            if (chk_read(k, lba, k->xsec))
                return SF_EIO;
            in = 0;
        }
        ok = crc == ld_le32(hdr + 44);
    }
    /* The block must lie wholly in the allocation: enter the clusters of the rest too. */
    if ((err = skip_to(k, c, cur, end)))
        return err < 0 ? err : TB_END;
    return ok;
}

/* exFAT NoFatChain candidate: 1 when the FAT holds its clusters first .. last as a chain
 * (each entry the next cluster) that goes on past last, 0 when not, or an error. */
static int fat_chain_continues(struct chk *k, const struct chk_cand *c)
{
    uint32_t x = c->first, nx;
    if (k->fs != 64)
        return 0;
    for (uint32_t i = 0; i < c->nclus; i++, x++) {
        if (chk_fat_get(k, x, &nx))
            return SF_EIO;
        if (i + 1 < c->nclus ? nx != x + 1 : !chk_clus_ok(k, nx))
            return 0;
    }
    return 1;
}

static int recover_one(struct chk *k, struct chk_cand *c,
                       int (*set_size)(struct chk *, struct chk_cand *, uint64_t, uint32_t,
                                       uint32_t))
{
    int err;
    /* The header block: the file's id and block size. */
    if (chk_read(k, chk_clus_lba(k, c->first), k->xsec))
        return SF_EIO;
    const uint8_t *h = k->xsec;
    uint32_t bsize = ld_le32(h + 40);
    if (ld_le32(h) != SF_BLOCK_MAGIC || ld_le16(h + 4) != SF_REC_VERSION ||
        ld_le16(h + 6) != SF_BLOCK_FILE_HEADER || ld_le64(h + 16) != 0 ||
        bsize < SF_BLOCK_MIN || bsize > SF_BLOCK_MAX || (bsize & (bsize - 1)) ||
        bsize < k->ss || c->size % bsize)
        return 0;                    /* not a framed log (raw mode), or not at a block end */
    /* Every block of the allocation past the size is judged at its place; the file ends
     * with the last one of this file (the writer writes them in order, so nothing of it
     * lies beyond); the bad ones before that are attached too and counted, as the
     * readers will skip and count them. */
    /* exFAT: a stream whose allocation stopped being contiguous wrote the whole chain into
     * the FAT (allocation before data), while the entry, last written by a checkpoint, may
     * still say NoFatChain: follow the FAT then, else the walk would run into the clusters
     * of whatever lies after the first extent (the next file's preallocation). */
    int was_contig = c->contig, err2;
    if (c->contig && (err2 = fat_chain_continues(k, c)) != 0) {
        if (err2 < 0)
            return err2;
        c->contig = 0;
    }
    uint64_t file_id = ld_le64(h + 8), first = c->size / bsize, blocks = 0, bad = 0, run = 0;
    struct cursor cur = { c->last, 0, c->size };
    uint64_t good_pos = c->size;
    for (uint64_t n = first;; n++) {
        int ok = take_block(k, c, &cur, file_id, n, bsize);
        if (ok < 0)
            return ok;
        if (ok == TB_END)
            break;
        if (!ok) {
            run++;
            continue;
        }
        blocks++;
        bad += run;
        run = 0;
        good_pos = (n + 1) * bsize;
    }
    /* Clusters entered past the last good block go back. */
    uint64_t need = (good_pos + k->cs - 1) / k->cs;
    uint32_t keep = (uint32_t)(need - c->nclus), x = c->last, newlast = c->last;
    for (uint32_t i = 0; i < cur.taken; i++) {
        if ((err = next_clus(k, c, x, 1, &x)))
            return err;
        if (!x)
            break;
        if (i < keep && blocks)
            newlast = x;
        else
            reach_clear(k, x);
    }
    if (!blocks) {
        c->contig = was_contig;
        return 0;
    }
    if (!k->repair) {
        /* Found, not attached: the clusters stay unreached (leaks in this report). */
        x = c->last;
        for (uint32_t i = 0; i < keep; i++) {
            if ((err = next_clus(k, c, x, 1, &x)) || !x)
                break;
            reach_clear(k, x);
        }
    }
    uint32_t saved = k->plen;
    chk_fmt(k->path, sizeof k->path, "%s", c->path);
    k->plen = 0;
    while (k->path[k->plen])
        k->plen++;
    k->r->recovered_blocks += blocks;
    k->r->recovered_bytes += good_pos - c->size;
    k->r->recovered_damaged += bad;
    if (chk_report(k, SF_CHK_RECOVER, 1, 0, "%U log blocks (%U bytes) written after the last "
                   "checkpoint found past the recorded end, %U damaged in between: %s", blocks, (good_pos - c->size), bad,
                   k->repair ? "re-attached" : "re-attach with --repair")) {
        if ((err = set_size(k, c, good_pos, (uint32_t)need, newlast)) < 0)
            return err;
        c->size = good_pos;
        c->nclus = (uint32_t)need;
        c->last = newlast;
        chk_repaired(k);
    }
    k->plen = saved;
    k->path[saved] = 0;
    return 0;
}

int chk_recover(struct chk *k, int (*set_size)(struct chk *k, struct chk_cand *c,
                                               uint64_t size, uint32_t nclus, uint32_t last))
{
    for (uint32_t i = 0; i < k->ncand; i++) {
        int err = recover_one(k, &k->cand[i], set_size);
        if (err)
            return err;
    }
    return 0;
}

int chk_cut_tails(struct chk *k)
{
    for (uint32_t i = 0; i < k->ncand; i++) {
        struct chk_cand *c = &k->cand[i];
        uint32_t nx;
        int err;
        if (c->contig)
            continue;
        if (chk_fat_get(k, c->last, &nx))
            return SF_EIO;
        if (nx == CHK_EOC)
            continue;
        chk_fmt(k->path, sizeof k->path, "%s", c->path);
        k->plen = 0;
        while (k->path[k->plen])
            k->plen++;
        if (chk_report(k, SF_CHK_SIZE, 1, 0, "cluster chain longer than the size %U: cut",
                       c->size)) {
            if ((err = chk_fat_set(k, c->last, CHK_EOC)))
                return err;
            chk_repaired(k);
        }
        chk_path_pop(k, 0);
    }
    return 0;
}
