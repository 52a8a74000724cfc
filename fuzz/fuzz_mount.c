/* libFuzzer target: an arbitrary image as a block device, then everything a reader does
 * with it (probe, mount, walk every directory, stat, open and read every file), and a
 * second mount that writes (mkdir, create and write a file, remove one, unmount), and a
 * third that walks the result.
 *
 * Small inputs are what keeps libFuzzer fast, so the device is 2^32 sectors long and reads
 * zeros wherever the input says nothing. The input is either
 *   - the image's beginning (a fresh volume shrinks to a few hundred KiB of metadata once its
 *     trailing zeros are cut off), or
 *   - sparse: "SFZSPARS", then extents of (u32 LE 512-byte unit, u16 LE count, count * 512
 *     bytes), later extents over earlier ones - for images whose metadata lies far apart
 *     (a heap at 4 MiB, a directory in the middle of 128 MiB).
 * fuzz/seeds.sh writes whichever form is smaller. Partition tables work the same way (the
 * GPT backup header at the end reads as zeros).
 *
 * Writes go to an overlay of at most OVL_MAX sectors, dropped after each input; a write
 * that does not fit fails with SF_EIO, one more error path for the library to take. Reads
 * see the overlay first, so the write phase reads back what it wrote.
 *
 * Bounded work per input: at most MAX_ENTRIES directory entries in all, MAX_DEPTH levels,
 * READ_BYTES from the start and from the end of each file (the end only of files up to
 * BIG_FILE bytes), and only a file up to BIG_FILE bytes is removed: seeking to the end of
 * a file and freeing one walk its whole cluster chain, which a hostile size makes as long as
 * the volume (most of an input's time, for the same code a short chain takes). A hang is
 * libFuzzer's -timeout.
 *
 * The device also reads at most READ_BUDGET bytes per input, then fails with SF_EIO. Some
 * work is linear in what the input declares rather than in what it holds: an exact free
 * count reads the whole FAT or bitmap (sf_mkdir's clean step writes FSInfo's count and
 * counts it when the mount did not trust the old one), and a hostile FAT32 boot sector
 * declares a 1 GiB FAT of zeros in a few hundred bytes; such an input took 7 s, where a
 * typical one takes well under a millisecond. The budget keeps every input's cost bounded
 * whatever its geometry, and the library's read-error paths get exercised on the way;
 * the inputs the budget stops still run the code up to that read. Over the 2,323 inputs of
 * a 30-minute run's corpus an input read 40 KB (median), 1.8 MB at the 99th percentile;
 * building with -DFZ_STATS prints each input's total. */
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "streamfat/sf.h"
#ifdef FZ_STATS
#include <stdio.h>
#endif

#define DEV_SECTORS (UINT64_C(1) << 32)
#define OVL_MAX 64
#define MAX_ENTRIES 64
#define STAT_ENTRIES 16
#define MAX_DEPTH 8
#define READ_BYTES 8192
#define BIG_FILE (1u << 20)
#define READ_BUDGET (4u << 20)
#define PATH_MAX_LEN 1024

#define EXT_MAX 512
#define SPARSE_MAGIC "SFZSPARS"

struct extent {
    uint64_t off;          /* bytes from the start of the device */
    size_t len;
    const uint8_t *p;
};

struct fzbd {
    struct sf_bdev bd;
    struct extent ext[EXT_MAX];
    unsigned n_ext;
    uint64_t ovl_lba[OVL_MAX];
    unsigned ovl_n;
    uint64_t read_bytes;   /* this input's reads so far, against READ_BUDGET */
};

static uint8_t ovl_mem[OVL_MAX][4096];
static _Alignas(4096) uint8_t cache_mem[64 * 1024];
static uint16_t upcase_mem[SF_UPCASE_BUF_SIZE / 2];
static _Alignas(4096) uint8_t probe_buf[4096];
static uint8_t io_buf[READ_BYTES];

static int ovl_find(struct fzbd *f, uint64_t lba)
{
    for (unsigned i = 0; i < f->ovl_n; i++)
        if (f->ovl_lba[i] == lba)
            return (int)i;
    return -1;
}

/* Zeros, then the input's extents in order (later ones over earlier), then the overlay:
 * one pass over each per request, not per sector (a 64 KiB cache fill is 128 sectors). */
static int fz_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct fzbd *f = (struct fzbd *)bd;
    uint32_t ss = bd->sector_size;
    uint8_t *out = buf;
    uint64_t lo, hi;

    if (lba >= bd->sector_count || count > bd->sector_count - lba)
        return SF_EINVAL;
    if ((uint64_t)count * ss > READ_BUDGET - f->read_bytes)
        return SF_EIO;
    f->read_bytes += (uint64_t)count * ss;
    lo = lba * ss;
    hi = lo + (uint64_t)count * ss;
    memset(out, 0, (size_t)count * ss);
    for (unsigned e = 0; e < f->n_ext; e++) {
        const struct extent *x = &f->ext[e];
        uint64_t a = lo > x->off ? lo : x->off;
        uint64_t b = hi < x->off + x->len ? hi : x->off + x->len;
        if (a < b)
            memcpy(out + (a - lo), x->p + (a - x->off), (size_t)(b - a));
    }
    for (unsigned i = 0; i < f->ovl_n; i++)
        if (f->ovl_lba[i] >= lba && f->ovl_lba[i] - lba < count)
            memcpy(out + (f->ovl_lba[i] - lba) * ss, ovl_mem[i], ss);
    return 0;
}

static int fz_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct fzbd *f = (struct fzbd *)bd;
    uint32_t ss = bd->sector_size;
    const uint8_t *in = buf;

    if (lba >= bd->sector_count || count > bd->sector_count - lba)
        return SF_EINVAL;
    for (uint32_t k = 0; k < count; k++, in += ss) {
        int i = ovl_find(f, lba + k);
        if (i < 0) {
            if (f->ovl_n == OVL_MAX)
                return SF_EIO;
            i = (int)f->ovl_n++;
            f->ovl_lba[i] = lba + k;
        }
        memcpy(ovl_mem[i], in, ss);
    }
    return 0;
}

static int fz_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

static void read_file(struct sf_vol *v, const char *path)
{
    struct sf_file f;
    sf_ssize_t n;

    if (sf_open(v, &f, path, SF_O_RDONLY))
        return;
    n = sf_read(&f, io_buf, sizeof io_buf);
    if (n >= 0 && sf_fsize(&f) > sizeof io_buf && sf_fsize(&f) <= BIG_FILE &&
        sf_seek(&f, -(int64_t)sizeof io_buf / 2, SF_SEEK_END) >= 0)
        (void)sf_read(&f, io_buf, sizeof io_buf);
    sf_close(&f);
}

/* Depth-first walk; *budget counts the entries left to look at. */
static void walk(struct sf_vol *v, char *path, size_t len, int depth, unsigned *budget)
{
    struct sf_dir d;
    struct sf_stat st;

    if (depth > MAX_DEPTH || sf_opendir(v, &d, len ? path : "/"))
        return;
    while (*budget && sf_readdir(&d, &st) == 1) {
        size_t nl = strlen(st.name);
        struct sf_stat st2;

        (*budget)--;
        if (len + 1 + nl + 1 > PATH_MAX_LEN)
            continue;
        path[len] = '/';
        memcpy(path + len + 1, st.name, nl + 1);
        /* stat by name goes through lookup (names, up-case table) rather than the walk;
         * for the first STAT_ENTRIES only: opening each entry by path looks it up too */
        if (*budget + STAT_ENTRIES >= MAX_ENTRIES)
            (void)sf_stat(v, path, &st2);
        if (st.attr & SF_ATTR_DIR)
            walk(v, path, len + 1 + nl, depth + 1, budget);
        else
            read_file(v, path);
        path[len] = 0;
    }
    sf_closedir(&d);
}

static int mount(struct sf_vol *v, struct fzbd *f, uint32_t flags)
{
    struct sf_vol_cfg cfg;

    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &f->bd;
    cfg.buf = cache_mem;
    cfg.buf_size = sizeof cache_mem;
    cfg.upcase_buf = upcase_mem;
    cfg.flags = flags;
    return sf_mount(v, &cfg);
}

/* The write phase: what a logger does to a volume it is handed. */
static void write_phase(struct sf_vol *v, const char *victim)
{
    struct sf_file f;
    static const char text[] = "fuzz";

    (void)sf_mkdir(v, "FZDIR");
    if (sf_open(v, &f, "FZDIR/LOG00001.SFL", SF_O_WRONLY | SF_O_CREAT | SF_O_TRUNC) == 0) {
        for (unsigned i = 0; i < 3; i++)
            if (sf_write(&f, io_buf, 1500 + i) < 0)
                break;
        (void)sf_sync(&f);
        (void)sf_write(&f, text, sizeof text);
        sf_close(&f);
    }
    if (victim[0])
        (void)sf_unlink(v, victim);
    (void)sf_rename(v, "FZDIR/LOG00001.SFL", "LOG00002.SFL");
    /* The count reads the whole bitmap or FAT: linear in a size the input can make 2 TiB
     * of zeros. Counted where that stays quick. */
    if (v->cluster_count <= (1u << 13))
        (void)sf_vol_free_clusters(v);
}

/* The input as extents (see the top of the file); a truncated last extent keeps its bytes. */
static void load(struct fzbd *f, const uint8_t *data, size_t size)
{
    size_t m = sizeof SPARSE_MAGIC - 1, pos;

    if (size < m || memcmp(data, SPARSE_MAGIC, m)) {
        f->ext[0] = (struct extent){ 0, size, data };
        f->n_ext = 1;
        return;
    }
    for (pos = m; pos + 6 <= size && f->n_ext < EXT_MAX;) {
        uint64_t unit = (uint64_t)data[pos] | (uint64_t)data[pos + 1] << 8 |
                        (uint64_t)data[pos + 2] << 16 | (uint64_t)data[pos + 3] << 24;
        size_t len = ((size_t)data[pos + 4] | (size_t)data[pos + 5] << 8) * 512u;
        pos += 6;
        if (len > size - pos)
            len = size - pos;
        f->ext[f->n_ext++] = (struct extent){ unit * 512u, len, data + pos };
        pos += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct fzbd f;
    static struct sf_vol v;
    static char path[PATH_MAX_LEN];
    char victim[SF_NAME_UTF8_MAX + 1] = "";
    uint8_t type = 0;
    uint32_t ss = 0;
    unsigned budget = MAX_ENTRIES;

    memset(&f, 0, sizeof f);
    load(&f, data, size);
    f.bd.sector_size = 512;
    f.bd.sector_count = DEV_SECTORS;
    f.bd.align_sectors = 1;
    f.bd.mem_align = 1;
    f.bd.read = fz_read;
    f.bd.write = fz_write;
    f.bd.flush = fz_flush;
    if (sf_probe(&f.bd, 0, probe_buf, &type, &ss) || type == SF_FS_NONE)
        return 0;
    if (ss == 4096)
        f.bd.sector_size = 4096;

    memset(&v, 0, sizeof v);
    if (mount(&v, &f, SF_VOL_RDONLY) == 0) {
        struct sf_vol_info info;
        struct sf_dir d;
        struct sf_stat st;

        (void)sf_vol_info(&v, &info);
        path[0] = 0;
        walk(&v, path, 0, 0, &budget);
        /* a regular file of the root, for the write phase to remove */
        if (sf_opendir(&v, &d, "/") == 0) {
            while (sf_readdir(&d, &st) == 1)
                if (!(st.attr & SF_ATTR_DIR) && st.alloc_size <= BIG_FILE) {
                    memcpy(victim, st.name, sizeof st.name);
                    break;
                }
            sf_closedir(&d);
        }
        sf_unmount(&v);
    }

    memset(&v, 0, sizeof v);
    if (mount(&v, &f, 0) == 0) {
        write_phase(&v, victim);
        sf_unmount(&v);
        /* what the library wrote onto a hostile volume must read back without harm */
        memset(&v, 0, sizeof v);
        budget = MAX_ENTRIES;
        if (mount(&v, &f, SF_VOL_RDONLY) == 0) {
            path[0] = 0;
            walk(&v, path, 0, 0, &budget);
            sf_unmount(&v);
        }
    }
#ifdef FZ_STATS
    fprintf(stderr, "read_bytes %llu\n", (unsigned long long)f.read_bytes);
#endif
    return 0;
}
