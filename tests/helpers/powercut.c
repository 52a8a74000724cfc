/* powercut: replay a logging workload on the fault device and cut the power at chosen device
 * writes; after each cut, remount the surviving image and verify what the logger promised.
 *
 *   powercut [options]
 *     --fs exfat|fat32        volume type (default exfat)
 *     --policy keep|drop|tear|torn   unsynced writes at the cut: all kept, all dropped,
 *                             each sector kept or dropped at random (a device with atomic
 *                             sectors), or kept / dropped / torn at random (no atomic sectors)
 *     --size small|large      workload size (default small)
 *     --linear                cut after every write 1..W (default)
 *     --compress 1            log with compressed record blocks (cfg.pack_mem)
 *     --random N --seed S     cut after N random writes (seeded)
 *     --dump DIR --dump-count K   write K evenly spread post-cut images to DIR
 *                             (DIR/cut_N.img) for the independent checkers
 *     --verify IMAGE          only verify an image (after an external repair): mount, walk,
 *                             decode, and the next logging session
 *     --cut N                 only the cut after write N (to debug one state)
 *   Environment: PC_TRACE=1 prints every write reaching the medium and the tracking after
 *   each service call; PC_DEBUG=1 lists the files of a failing state and the reference map;
 *   PC_ENCRYPT=1 seals every file (docs/FORMAT.md, "Sealed files"; libsodium's port) to a
 *   fixed test key pair, and every file is read with its secret key (issue 29: power cuts
 *   with encryption on; a sealed block torn by the cut fails its CRC or its AEAD check and
 *   is damage like any torn block).
 *
 * Workload (deterministic: a fake clock advances 1 ms per step; the volume is pre-filled so
 * that only 96 KiB are left and cyclic deletion happens):
 *   session 1, directory /FR (first, while there is room): flight recorder (pre 20 ms, post
 *     30 ms), two triggers; close.
 *   session 2, directory /CYC: SF_LOG_CYCLIC, rotation by size (8 KiB), checkpoints by bytes
 *     and time, an explicit rotation now and then; close.
 *   Records are CAN frames whose data is their serial number k (id 0x100 + k % 16).
 *
 * Tracking (what the logger said before the cut): after every service call of session 2,
 * when the stats say every byte handed to the device is durable (bytes_durable ==
 * bytes_written) and every frame appended was handed over (records_written ==
 * frames appended; records_in only counts blocks the writer has taken), every frame appended
 * so far is durable: durable_k = the last serial appended. A trigger file the recorder has
 * finished (closed) must be intact.
 *
 * Verification after a cut (the image exactly as the cut left it, no repair):
 *   - the volume mounts;
 *   - /CYC: every file decodes; frames are serials in strictly increasing order across the
 *     files by index, none twice; every file but the newest one with data is free of damage
 *     and ends right before the next file's first frame (closed files intact); the highest
 *     serial found is >= durable_k (records lost beyond the checkpoint guarantee otherwise);
 *     after repair, with every write kept (policy keep), >= written_k: the last serial in a
 *     block handed to the (synchronous) device, checkpointed or not (issue 26 item 3);
 *   - /FR: each file holds consecutive serials, no damage, and there are at least as many
 *     files as trigger files completed;
 *   - no record is corrupt (CRC, framing) within any file's size;
 *   - the volume takes the next logging session (open, 300 frames, close) and that file
 *     reads back whole.
 *
 * Output: one line per failing cut on stderr, and a summary "key=value ..." line on stdout.
 * Exit 0 when every cut verified, 1 otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#include "streamfat/sf.h"
#include "streamfat/log.h"
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/check.h"
#include "streamfat/cipher_sodium.h"

#define SS 512u
#define BLOCK 1024u
#define RING_BLOCKS 16u
#define OVL_SECTORS 4096u

/* ---- a device that remembers which sectors were written (to restore the image fast) ---- */

struct trackbd {
    struct sf_bdev bd;
    struct sf_rambd *ram;
    uint8_t *dirty;         /* one byte per sector */
};

static int trk_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct trackbd *t = (struct trackbd *)bd;
    return sf_bdev_read(&t->ram->bd, lba, buf, count);
}

static int trk_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct trackbd *t = (struct trackbd *)bd;
    memset(t->dirty + lba, 1, count);
    if (getenv("PC_TRACE"))
        fprintf(stderr, "  medium write lba %" PRIu64 " +%u\n", lba, count);
    return sf_bdev_write(&t->ram->bd, lba, buf, count);
}

static int trk_flush(struct sf_bdev *bd)
{
    struct trackbd *t = (struct trackbd *)bd;
    return sf_bdev_flush(&t->ram->bd);
}

/* ---- state ---- */

struct vfile {
    uint32_t index;
    char name[SF_NAME_UTF8_MAX + 8];
    uint64_t first_k, last_k, frames, damage, size;
    int lead_damage;                /* damage before the file's first frame */
};


static const char *opt_fs = "exfat", *opt_policy = "keep", *opt_size = "small";
static const char *opt_dump, *opt_verify;
static uint64_t opt_random, opt_dump_count, opt_cut;
static int opt_compress;                 /* --compress 1: compressed record blocks (issue 29) */
static void *pack_mem;
#define PACK_BLOCKS 8u
static uint32_t opt_seed = 1;

static uint64_t dev_bytes;
static uint8_t *disk, *snapshot, *ovl;
static struct sf_rambd ram;
static struct trackbd trk;
static struct sf_faultbd fbd;
static uint8_t *cache, *upcase, *ring, *work, *dbuf, *filebuf;
#define CACHE_BYTES (256u * 1024u)
#define FILEBUF_BYTES (8u << 20)

static uint64_t now_ns;
static uint64_t clk(void *ctx) { (void)ctx; return now_ns; }
static sf_time_ms vclk(void *ctx) { (void)ctx; return 1700000000000 + (sf_time_ms)(now_ns / 1000000); }

/* workload size */
static uint32_t steps1, steps2, frames_per_step;

/* tracking during a run */
static uint64_t next_k;          /* next serial to append */
static uint64_t durable_k;       /* every serial <= it is durable (0: none) */
static uint64_t written_k;       /* every serial <= it is in a block written to the device */
static uint64_t cut_written_k;   /* written_k at the cut being verified */
static uint32_t fr_done;         /* trigger files completed */
static uint64_t sess_base;       /* serials before the current session */
static uint64_t del_seen;        /* files the logger said it deleted (cyclic) by the cut */
static int reference;            /* the uncut run: record which frames each file got */
#define MAXIDX 4096
static uint64_t ref_first[MAXIDX], ref_last[MAXIDX];   /* by CYC file index */
static int decode_one(struct sf_vol *v, const char *path, struct vfile *vf);
static int list_dir(struct sf_vol *v, const char *dir, uint32_t *n);
static struct vfile *vfs_ptr(void);
static void ref_note(struct sf_vol *v, uint32_t below);

/* results */
static uint64_t cuts, failed_cuts, lost_total, damaged_open, dumped, flagged_ours, recovered_blocks,
    anomalies;
static uint64_t total_writes, uncut_frames;
static uint64_t s1_files, s1_deleted, s2_triggers;  /* of the last run that got that far */

static void die(const char *msg)
{
    fprintf(stderr, "powercut: %s\n", msg);
    exit(2);
}

static void *xalloc(size_t n)
{
    void *p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
    if (!p)
        die("out of memory");
    memset(p, 0, n);
    return p;
}

static int mount_on(struct sf_vol *v, struct sf_bdev *bd)
{
    static uint8_t fat_cache[4096];
    struct sf_vol_cfg cfg = { .bd = bd, .buf = cache, .buf_size = CACHE_BYTES,
                              .upcase_buf = (uint16_t *)upcase, .clock = vclk,
                              .fat_cache = fat_cache, .fat_cache_size = sizeof fat_cache };
    return sf_mount(v, &cfg);
}

/* ---- building the starting image ---- */

static void make_template(void)
{
    struct sf_mkfs_opts o = { .serial = 0x5EED, .align = 64 * 1024 };
    const char *why = "";
    struct sf_vol v;
    struct sf_file f;
    int err;

    if (!strcmp(opt_fs, "exfat")) {
        dev_bytes = 8u << 20;
        o.fs_type = SF_FS_EXFAT;
        o.cluster_size = 4096;
    } else if (!strcmp(opt_fs, "fat32")) {
        dev_bytes = 36u << 20;
        o.fs_type = SF_FS_FAT32;
        o.cluster_size = 512;
    } else {
        die("--fs: exfat or fat32");
    }
    disk = xalloc(dev_bytes);
    snapshot = xalloc(dev_bytes);
    trk.dirty = xalloc(dev_bytes / SS);
    if (sf_rambd_init(&ram, disk, SS, dev_bytes / SS))
        die("rambd");
    trk.ram = &ram;
    trk.bd = ram.bd;
    trk.bd.read = trk_read;
    trk.bd.write = trk_write;
    trk.bd.flush = trk_flush;
    trk.bd.trim = NULL;
    trk.bd.submit = NULL;
    trk.bd.poll = NULL;
    trk.bd.done_head = trk.bd.done_tail = NULL;
    o.buf = work;
    o.buf_size = 1u << 20;
    if ((err = sf_mkfs(&ram.bd, &o, &why))) {
        fprintf(stderr, "powercut: mkfs: %s (%s)\n", sf_strerror(err), why);
        exit(2);
    }
    if (mount_on(&v, &ram.bd) || sf_mkdir(&v, "CYC") || sf_mkdir(&v, "FR"))
        die("template: mount/mkdir");
    /* Leave room for a few small files: the logger's allocation steps (1/16 of the volume,
     * at least 1 MiB) do not fit, so it takes what it can and cyclic deletion starts early. */
    struct sf_vol_info vi;
    sf_vol_info(&v, &vi);
    uint64_t step = vi.volume_size / 16;
    if (step < (1u << 20))
        step = 1u << 20;
    int64_t fc = sf_vol_free_clusters(&v);
    uint64_t freeb = (uint64_t)fc * vi.cluster_size;
    uint64_t keep = 96 * 1024;
    if (fc < 0 || freeb <= keep)
        die("template: volume too small");
    /* Written in large pieces (sf_truncate extends a FAT chain cluster by cluster). */
    if (sf_open(&v, &f, "FILLER.BIN", SF_O_WRONLY | SF_O_CREAT))
        die("template: filler");
    memset(work, 0, 1u << 20);
    for (uint64_t left = freeb - keep; left;) {
        uint64_t n = left < (1u << 20) ? left : (1u << 20);
        if (sf_write(&f, work, n) != (sf_ssize_t)n)
            die("template: filler");
        left -= n;
    }
    if (sf_close(&f))
        die("template: filler");
    if (sf_unmount(&v))
        die("template: unmount");
    memcpy(snapshot, disk, dev_bytes);
}

static void restore(void)
{
    uint64_t n = dev_bytes / SS;
    for (uint64_t i = 0; i < n; i++) {
        if (trk.dirty[i]) {
            memcpy(disk + i * SS, snapshot + i * SS, SS);
            trk.dirty[i] = 0;
        }
    }
}

/* ---- the workload ---- */

static struct sf_log lg;

/* PC_ENCRYPT: a fixed secret key (a test key; any 32 bytes are an X25519 secret key), so
 * that --verify in another process reads what the workload sealed. */
static const struct sf_cipher_port *seal_port;
static uint8_t seal_pub[32];
static const uint8_t seal_sec[32] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
    17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
};

static void seal_setup(void)
{
    const char *e = getenv("PC_ENCRYPT");
    if (!e || !*e || !strcmp(e, "0"))
        return;
    seal_port = sf_sodium_port();
    if (!seal_port || sf_sodium_public_of(seal_sec, seal_pub)) {
        fprintf(stderr, "PC_ENCRYPT: no libsodium in this build\n");
        exit(77);
    }
}

static struct sf_log_cfg log_cfg(struct sf_vol *v, const char *dir)
{
    static const char *const chans[] = { "can0" };
    struct sf_log_cfg c = {
        .vol = v, .ring = ring, .ring_size = (uint64_t)RING_BLOCKS * BLOCK, .block_size = BLOCK,
        .flags = SF_LOG_CYCLIC, .dir = dir, .split_bytes = 8 * 1024,
        .checkpoint_ns = 20 * 1000000ull, .checkpoint_bytes = 3 * 1024,
        .queue_depth = 2, .request_size = 2 * BLOCK, .clock = clk,
        .session_id = 0xC0FFEE, .channel_names = chans, .channel_count = 1,
        .work = work, .work_size = 1u << 20,
        .packer = opt_compress ? &sf_log_packer : NULL,
        .pack_mem = opt_compress ? pack_mem : NULL,
        .pack_mem_size = opt_compress ? SF_LOG_PACK_MEM(BLOCK, PACK_BLOCKS) : 0,
        .cipher_port = seal_port, .cipher_pub = seal_port ? seal_pub : NULL,
        .cipher_stage = seal_port ? &sf_cipher_stage : NULL,
    };
    return c;
}

static int put_frame(uint64_t k)
{
    uint8_t d[8];
    for (int i = 0; i < 8; i++)
        d[i] = (uint8_t)(k >> (8 * i));
    return sf_log_append_can(&lg, 0, now_ns, 0x100 + (uint32_t)(k % 16), 0, d, 8);
}

/* After each service call: the device writes at submission (the fault device is
 * synchronous), so the frames of every block handed over are on it; serials count up
 * without a hole while nothing was dropped. */
static void note_written(void)
{
    struct sf_log_stats st;
    if (fbd.dead)
        return;         /* the cut came in this call: its blocks may be the ones refused */
    sf_log_get_stats(&lg, &st);
    if (!st.records_dropped && sess_base + st.records_written > written_k)
        written_k = sess_base + st.records_written;
}

/* Service until idle; then note what the stats say is durable. <0: the writer failed. */
static int pump(int track)
{
    int r;
    while ((r = sf_log_service(&lg)) > 0) {
        if (reference && track)
            ref_note(lg.v, lg.file_index);   /* before cyclic mode deletes a closed file */
        if (track)
            note_written();
    }
    if (track) {
        struct sf_log_stats st;
        sf_log_get_stats(&lg, &st);
        del_seen = st.files_deleted;
        if (r < 0)
            return r;
        if (st.last_error)
            return st.last_error;
        if (st.bytes_durable == st.bytes_written &&
            st.records_written == next_k - 1 - sess_base)
            durable_k = next_k - 1;
        note_written();
        if (getenv("PC_TRACE"))
            fprintf(stderr, "step: k %" PRIu64 " durable %" PRIu64 " writes %" PRIu64
                    " files %" PRIu64 " del %" PRIu64 " bw %" PRIu64 " bd %" PRIu64 "\n",
                    next_k - 1, durable_k, fbd.c.writes, st.files, st.files_deleted,
                    st.bytes_written, st.bytes_durable);
    }
    return r < 0 ? r : 0;
}

/* The uncut run: note the frames of every CYC file below `below` not noted yet (closed
 * files, read between service calls before cyclic mode deletes them). */
static void ref_note(struct sf_vol *v, uint32_t below)
{
    static struct vfile tmp[64];
    uint32_t n;
    if (list_dir(v, "CYC", &n))
        die("reference run: cannot list /CYC");
    if (n > 64)
        die("reference run: too many files");
    memcpy(tmp, vfs_ptr(), n * sizeof tmp[0]);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t x = tmp[i].index;
        if (x >= below || x >= MAXIDX || ref_last[x])
            continue;
        if (decode_one(v, tmp[i].name, &tmp[i]))
            die("reference run: a closed file does not decode");
        ref_first[x] = tmp[i].first_k;
        ref_last[x] = tmp[i].last_k;
    }
}

/* A workload error, with where it happened when PC_TRACE is set. */
static int wl_err(int err, int line)
{
    if (getenv("PC_TRACE"))
        fprintf(stderr, "workload: line %d: %s\n", line, sf_strerror(err));
    return err;
}

/* Run the whole workload; stops at the first error (after a cut everything fails). 0 when
 * it ran to the end. */

static int workload(void)
{
    struct sf_vol v;
    struct sf_log_cfg c;
    struct sf_log_stats st;
    int err;

    next_k = 1;
    sess_base = 0;
    del_seen = 0;
    durable_k = written_k = 0;
    fr_done = 0;
    now_ns = 1000000000ull;
    if ((err = mount_on(&v, &fbd.bd)))
        return wl_err(err, __LINE__);

    /* Session 1: the flight recorder, while the volume has room. */
    c = log_cfg(&v, "FR");
    c.flags = 0;
    c.split_bytes = 0;
    c.pre_ns = 20 * 1000000ull;
    c.post_ns = 30 * 1000000ull;
    c.session_id = 0xF11E;
    c.packer = NULL;                     /* --compress: not with the flight recorder (yet) */
    c.pack_mem = NULL;
    c.pack_mem_size = 0;
    if ((err = sf_log_open(&lg, &c)))
        return wl_err(err, __LINE__);
    for (uint32_t s = 0; s < steps2; s++) {
        for (uint32_t i = 0; i < frames_per_step; i++)
            if (put_frame(next_k++))
                return -1000;          /* a drop: the ring is sized so that none happen */
        now_ns += 1000000;
        if ((s == steps2 / 3 || s == 2 * steps2 / 3) &&
            (err = sf_log_trigger(&lg, now_ns, "test trigger")))
            return wl_err(err, __LINE__);
        int was = lg.fr_writing;
        if ((err = pump(0)))
            return wl_err(err, __LINE__);
        if (was && !lg.fr_writing)
            fr_done++;                 /* the trigger file was closed */
    }
    sf_log_get_stats(&lg, &st);
    s2_triggers = st.triggers;
    if ((err = sf_log_close(&lg)))
        return wl_err(err, __LINE__);
    fr_done = (uint32_t)st.triggers;   /* close ends a trigger file still being written */

    /* Session 2: cyclic rotation, until the volume is full and beyond. */
    sess_base = next_k - 1;
    c = log_cfg(&v, "CYC");
    if ((err = sf_log_open(&lg, &c)))
        return wl_err(err, __LINE__);
    for (uint32_t s = 0; s < steps1; s++) {
        for (uint32_t i = 0; i < frames_per_step; i++)
            if (put_frame(next_k++))
                return -1000;
        now_ns += 1000000;
        if (s % 97 == 50 && (err = sf_log_rotate(&lg)))
            return wl_err(err, __LINE__);
        if ((err = pump(1)))
            return wl_err(err, __LINE__);
        if (reference)
            ref_note(&v, lg.file_index);
    }
    if ((err = sf_log_close(&lg)))
        return wl_err(err, __LINE__);
    /* After close: its last blocks may have made cyclic mode delete one more file (sealed
     * files, whose blocks hold fewer frames, did so). */
    sf_log_get_stats(&lg, &st);
    durable_k = written_k = next_k - 1;   /* a clean close makes everything durable */
    s1_files = st.files;
    s1_deleted = st.files_deleted;
    if (reference)
        ref_note(&v, MAXIDX);
    return sf_unmount(&v);
}

/* ---- verification ---- */


static char why[512];

#define FAIL(...) do { snprintf(why, sizeof why, __VA_ARGS__); return -1; } while (0)

/* Read a whole file into filebuf; decode; fill vf. Frames must be consecutive serials. */
static int decode_one(struct sf_vol *v, const char *path, struct vfile *vf)
{
    struct sf_file f;
    struct sf_dec d;
    struct sf_dec_event ev;
    int err, kind;
    if ((err = sf_open(v, &f, path, SF_O_RDONLY)))
        FAIL("%s: open: %s", path, sf_strerror(err));
    vf->size = sf_fsize(&f);
    if (vf->size > FILEBUF_BYTES) {
        sf_close(&f);
        FAIL("%s: %" PRIu64 " bytes, larger than the test allows", path, vf->size);
    }
    sf_ssize_t got = sf_read(&f, filebuf, vf->size);
    sf_close(&f);
    if (got != (sf_ssize_t)vf->size)
        FAIL("%s: read: %s", path, got < 0 ? sf_strerror((int)got) : "short");
    vf->first_k = vf->last_k = vf->frames = vf->damage = 0;
    vf->lead_damage = 0;
    if (vf->size == 0)
        return 0;                          /* prepared, never started */
    sf_dec_init(&d, dbuf, SF_BLOCK_MAX);
    sf_dec_set_unpack(&d, (uint8_t *)dbuf + SF_BLOCK_MAX, SF_UNPACK_MEM);
    if (seal_port)
        sf_dec_set_key(&d, seal_port, seal_pub, seal_sec);
    size_t off = 0;
    int skipped = 0;                       /* damage since the last frame */
    sf_dec_feed(&d, NULL, 0);
    for (;;) {
        if (off < vf->size)
            off += sf_dec_feed(&d, filebuf + off, vf->size - off);
        else
            sf_dec_finish(&d);
        while ((kind = sf_dec_next(&d, &ev)) != SF_DEC_NEED_DATA && kind != SF_DEC_END) {
            if (kind == SF_DEC_DAMAGED || kind == SF_DEC_GAP || kind == SF_DEC_FOREIGN) {
                vf->damage++;
                skipped = 1;
                if (!vf->frames)
                    vf->lead_damage = 1;
            } else if (kind == SF_DEC_RECORD) {
                struct sf_can cf;
                if (ev.rec.type == SF_REC_DROP)
                    FAIL("%s: a DROP record (the workload never drops)", path);
                if (ev.rec.type != SF_REC_CAN)
                    continue;
                if (sf_rec_get_can(&ev.rec, &cf))
                    FAIL("%s: malformed CAN record", path);
                uint64_t k = 0;
                for (int i = 7; i >= 0; i--)
                    k = k << 8 | cf.data[i];
                if (cf.id != 0x100 + k % 16 || cf.len != 8)
                    FAIL("%s: frame %" PRIu64 " corrupt (id %x)", path, k, cf.id);
                /* Consecutive, but for the frames of blocks the reader skipped (a torn
                 * block the repair re-attached between valid ones, issue 26 item 3). */
                if (vf->frames && (skipped ? k <= vf->last_k : k != vf->last_k + 1))
                    FAIL("%s: frame %" PRIu64 " after %" PRIu64, path, k, vf->last_k);
                skipped = 0;
                if (!vf->frames)
                    vf->first_k = k;
                vf->last_k = k;
                vf->frames++;
            }
        }
        if (kind == SF_DEC_END)
            break;
    }
    return 0;
}

static uint32_t log_number(const char *name)
{
    uint32_t n = 0;
    if (strncmp(name, "LOG", 3) || strlen(name) != 12 || strcmp(name + 8, ".SFL"))
        return 0;
    for (int i = 3; i < 8; i++) {
        if (name[i] < '0' || name[i] > '9')
            return 0;
        n = n * 10 + (uint32_t)(name[i] - '0');
    }
    return n;
}

#define MAXF 512
static struct vfile vfs[MAXF];
static struct vfile *vfs_ptr(void) { return vfs; }

static int cmp_vf(const void *a, const void *b)
{
    const struct vfile *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int list_dir(struct sf_vol *v, const char *dir, uint32_t *n)
{
    struct sf_dir d;
    struct sf_stat st;
    int err;
    *n = 0;
    if ((err = sf_opendir(v, &d, dir)))
        FAIL("opendir %s: %s", dir, sf_strerror(err));
    while ((err = sf_readdir(&d, &st)) == 1) {
        uint32_t k = log_number(st.name);
        if (!k || *n == MAXF)
            continue;
        vfs[*n].index = k;
        snprintf(vfs[*n].name, sizeof vfs[*n].name, "%s/%s", dir, st.name);
        (*n)++;
    }
    sf_closedir(&d);
    if (err < 0)
        FAIL("readdir %s: %s", dir, sf_strerror(err));
    qsort(vfs, *n, sizeof vfs[0], cmp_vf);
    return 0;
}

/* The next session: open, 300 frames, close, and read that file back whole. */
static int next_session(struct sf_vol *v)
{
    struct sf_log_cfg c = log_cfg(v, "CYC");
    uint32_t n;
    int err;
    c.session_id = 0xBEEF;
    if ((err = sf_log_open(&lg, &c)))
        FAIL("next session: open: %s", sf_strerror(err));
    uint64_t k0 = 1000000000ull;
    for (uint64_t k = k0; k < k0 + 300; k++) {
        if (put_frame(k))
            FAIL("next session: append refused");
        if (k % 32 == 0) {
            now_ns += 1000000;
            if ((err = pump(0)))
                FAIL("next session: service: %s", sf_strerror(err));
        }
    }
    if ((err = sf_log_close(&lg)))
        FAIL("next session: close: %s", sf_strerror(err));
    if (list_dir(v, "CYC", &n))
        return -1;
    for (uint32_t i = n; i-- > 0;) {
        if (decode_one(v, vfs[i].name, &vfs[i]))
            return -1;
        if (vfs[i].frames == 0)
            continue;
        if (vfs[i].first_k < k0)
            FAIL("next session: newest file %s holds old frames", vfs[i].name);
        if (vfs[i].damage || vfs[i].last_k != k0 + 299)
            FAIL("next session: %s: %" PRIu64 " frames, %" PRIu64 " damaged", vfs[i].name,
                 vfs[i].frames, vfs[i].damage);
        return 0;
    }
    FAIL("next session: no file with data");
}

/* 0 ok, -1 failed (why set). *lost: serials missing beyond the guarantee. */
/* The checks above on the image as it is; with next, the next session too. */
static int verify_files(uint64_t dk, uint32_t frd, uint64_t dbound, uint64_t *lost,
                        int next)
{
    struct sf_vol v;
    uint32_t n;
    int err;
    *lost = 0;
    if ((err = mount_on(&v, &trk.bd)))
        FAIL("mount: %s (%s)", sf_strerror(err), sf_mount_error(&v));

    /* session 1 */
    if (list_dir(&v, "CYC", &n))
        return -1;
    uint64_t prev_last = 0, maxk = 0;
    int have_prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (decode_one(&v, vfs[i].name, &vfs[i]))
            return -1;
    }
    int newest = -1;
    for (uint32_t i = 0; i < n; i++)
        if (vfs[i].frames)
            newest = (int)i;
    for (uint32_t i = 0; i < n; i++) {
        struct vfile *f = &vfs[i];
        if (!f->frames)
            continue;
        if (have_prev && f->first_k != prev_last + 1 && getenv("PC_DEBUG"))
            for (uint32_t j = 0; j < n; j++)
                fprintf(stderr, "  %s: size %" PRIu64 " frames %" PRIu64 "..%" PRIu64 " damage %"
                        PRIu64 "\n", vfs[j].name, vfs[j].size, vfs[j].first_k, vfs[j].last_k,
                        vfs[j].damage);
        /* The newest file may begin with a torn block (policies tear and torn): its
         * frames are skipped as damage and lie beyond the guarantee, now that a file is
         * findable from its header's checkpoint on (issue 26 item 3). */
        int torn_start = (int)i == newest && f->lead_damage && prev_last >= dk;
        if (have_prev && f->first_k != prev_last + 1 && !torn_start)
            FAIL("%s: %s starts at frame %" PRIu64 ", the file before ends at %" PRIu64,
                 next ? "after repair" : "before repair", f->name, f->first_k, prev_last);
        if ((int)i != newest && f->damage)
            FAIL("%s (closed) has %" PRIu64 " damaged runs", f->name, f->damage);
        if ((int)i == newest && f->damage)
            damaged_open++;
        prev_last = f->last_k;
        have_prev = 1;
        maxk = f->last_k;
    }
    /* Every durable frame must be found, except those of files cyclic mode deleted: the
     * lowest indices, as many as the logger reported by the cut, plus one whose deletion
     * the cut may have caught. */
    uint64_t del_bound = dbound;
    for (uint32_t x = 1; x < MAXIDX; x++) {
        if (x <= del_bound || !ref_first[x] || ref_first[x] > dk)
            continue;
        uint64_t hi = ref_last[x] < dk ? ref_last[x] : dk;
        for (uint64_t k = ref_first[x]; k <= hi; k++) {
            int found = 0;
            for (uint32_t i = 0; i < n && !found; i++)
                found = vfs[i].frames && k >= vfs[i].first_k && k <= vfs[i].last_k;
            if (!found)
                (*lost)++;
        }
    }
    if (*lost && getenv("PC_DEBUG"))
        for (uint32_t i = 0; i < n; i++)
            fprintf(stderr, "  %s: size %" PRIu64 " frames %" PRIu64 "..%" PRIu64 " damage %" PRIu64 "\n",
                    vfs[i].name, vfs[i].size, vfs[i].first_k, vfs[i].last_k, vfs[i].damage);
    if (*lost)
        FAIL("%" PRIu64 " frames up to %" PRIu64 " were durable but are gone (highest found %"
             PRIu64 ")", *lost, dk, maxk);

    /* session 2 */
    if (list_dir(&v, "FR", &n))
        return -1;
    uint32_t with = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (decode_one(&v, vfs[i].name, &vfs[i]))
            return -1;
        if (vfs[i].frames)
            with++;
        if (vfs[i].damage && i < frd)
            FAIL("%s (a completed trigger file) has damage", vfs[i].name);
    }
    if (with < frd)
        FAIL("%u trigger files with data, %u were completed", with, frd);

    if (next && next_session(&v))
        return -1;
    if ((err = sf_unmount(&v)))
        FAIL("unmount: %s", sf_strerror(err));
    return 0;
}

/* sf_check on the image: its verdict (0 clean, 1 problems [repaired], 2 not repairable) or
 * a negative error. */
static int run_check(uint32_t flags, struct sf_check_result *r)
{
    static void *wk;
    static size_t wk_size;
    sf_ssize_t need = sf_check_work_size(&trk.bd);
    if (need < 0)
        return (int)need;
    if ((size_t)need > wk_size) {
        free(wk);
        wk_size = (size_t)need;
        wk = xalloc(wk_size);
    }
    struct sf_check_opts o = { .flags = flags, .work = wk, .work_size = wk_size };
    memset(r, 0, sizeof *r);
    return sf_check(&trk.bd, &o, r);
}

/* After a cut: the files as the cut left them; our checker's verdict (counted); repair; the
 * checker clean after it; the files again (repair may re-attach blocks, never lose or
 * duplicate any); and the next logging session. */
static int verify(uint64_t dk, uint32_t frd, uint64_t dbound, uint64_t *lost)
{
    struct sf_check_result r;
    int v;
    /* Torn sectors are outside the guarantee (a directory entry set relies on sector
     * atomicity): what the files show is counted, not failed; the checker's repair and the
     * next session must still work. */
    int relaxed = !strcmp(opt_policy, "torn");
    if (verify_files(dk, frd, dbound, lost, 0)) {
        if (!relaxed)
            return -1;
        anomalies++;
        if (getenv("PC_DEBUG"))
            fprintf(stderr, "  (torn, tolerated) %s\n", why);
        *lost = 0;
    }
    v = run_check(0, &r);
    if (v < 0 || v == 2)
        FAIL("checker before repair: %s (%u problems, %u fatal)",
             v < 0 ? sf_strerror(v) : "not repairable", r.problems, r.unrepairable);
    if (v == 1)
        flagged_ours++;
    v = run_check(SF_CHECK_REPAIR, &r);
    if (v < 0 || v == 2)
        FAIL("repair: %s (%u problems, %u repaired)", v < 0 ? sf_strerror(v) : "not repairable",
             r.problems, r.repaired);
    recovered_blocks += r.recovered_blocks;
    v = run_check(0, &r);
    if (v != 0)
        FAIL("checker after repair: verdict %d, %u problems", v, r.problems);
    /* Every write kept (policy keep): the repair brings back every frame of a block written
     * before the cut, not only those a checkpoint covered, also in a file whose first
     * regular checkpoint had not come (issue 26 item 3). */
    if (!strcmp(opt_policy, "keep") && cut_written_k > dk)
        dk = cut_written_k;
    if (!relaxed)
        return verify_files(dk, frd, dbound, lost, 1);
    struct sf_vol vol;
    int err;
    if ((err = mount_on(&vol, &trk.bd)))
        FAIL("mount after repair: %s (%s)", sf_strerror(err), sf_mount_error(&vol));
    if (next_session(&vol))
        return -1;
    if ((err = sf_unmount(&vol)))
        FAIL("unmount: %s", sf_strerror(err));
    *lost = 0;
    return 0;
}

/* ---- images ---- */

/* Write the device to path, sparse: all-zero sectors are skipped. */
static int save_image(const char *path)
{
    static const uint8_t zero[SS];
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    for (uint64_t off = 0; off < dev_bytes; off += SS) {
        if (!memcmp(disk + off, zero, SS))
            continue;
        if (fseeko(fp, (off_t)off, SEEK_SET) || fwrite(disk + off, 1, SS, fp) != SS) {
            fclose(fp);
            return -1;
        }
    }
    if (ftruncate(fileno(fp), (off_t)dev_bytes)) {
        fclose(fp);
        return -1;
    }
    return fclose(fp);
}

static void load_image(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        die("cannot open the image");
    fseeko(fp, 0, SEEK_END);
    dev_bytes = (uint64_t)ftello(fp);
    rewind(fp);
    if (dev_bytes < 1u << 20 || dev_bytes % SS)
        die("image size");
    disk = xalloc(dev_bytes);
    trk.dirty = xalloc(dev_bytes / SS);
    if (fread(disk, 1, dev_bytes, fp) != dev_bytes)
        die("cannot read the image");
    fclose(fp);
    if (sf_rambd_init(&ram, disk, SS, dev_bytes / SS))
        die("rambd");
    trk.ram = &ram;
    trk.bd = ram.bd;
    trk.bd.read = trk_read;
    trk.bd.write = trk_write;
    trk.bd.flush = trk_flush;
    trk.bd.trim = NULL;
}

/* ---- one cut ---- */

static uint32_t rng_state;
static uint32_t rnd(void)
{
    uint32_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return rng_state = x;
}

static void setup_fault(uint64_t cut_at, uint32_t seed)
{
    if (sf_faultbd_init(&fbd, &trk.bd, ovl, (size_t)OVL_SECTORS * (8 + SS)))
        die("faultbd");
    if (!strcmp(opt_policy, "keep"))
        fbd.policy = SF_FAULT_KEEP;
    else if (!strcmp(opt_policy, "drop"))
        fbd.policy = SF_FAULT_DROP;
    else if (!strcmp(opt_policy, "tear"))
        fbd.policy = SF_FAULT_TEAR, fbd.bd.flags |= SF_BDEV_ATOMIC_SECTOR;
    else if (!strcmp(opt_policy, "torn"))
        fbd.policy = SF_FAULT_TEAR, fbd.bd.flags &= ~SF_BDEV_ATOMIC_SECTOR;
    else
        die("--policy: keep, drop, tear or torn");
    fbd.seed = seed;
    fbd.cut_after_writes = cut_at;
}

static int run_cut(uint64_t n, int dump)
{
    uint64_t lost = 0;
    restore();
    setup_fault(n, opt_seed * 2654435761u + (uint32_t)n);
    int r = workload();
    if (!fbd.dead) {
        if (r == 0)
            return 0;                      /* past the end of the workload */
        fprintf(stderr, "cut %" PRIu64 ": the workload failed before the cut: %s\n", n,
                sf_strerror(r));
        failed_cuts++;
        cuts++;
        return -1;
    }
    cuts++;
    if (dump && opt_dump) {
        char path[1024];
        snprintf(path, sizeof path, "%s/cut_%06" PRIu64 ".img", opt_dump, n);
        if (save_image(path))
            die("cannot write the dump");
        dumped++;
    }
    uint64_t dk = durable_k;
    uint32_t frd = fr_done;
    cut_written_k = written_k;
    if (verify(dk, frd, del_seen + 1, &lost)) {
        failed_cuts++;
        lost_total += lost;
        fprintf(stderr, "cut %" PRIu64 " (%s, %s, durable to frame %" PRIu64 "): %s\n", n,
                opt_fs, opt_policy, dk, why);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    seal_setup();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--linear")) {
            opt_random = 0;
            continue;
        }
        if (!v)
            die("usage: see the comment at the top of tests/helpers/powercut.c");
        i++;
        if (!strcmp(a, "--fs")) opt_fs = v;
        else if (!strcmp(a, "--policy")) opt_policy = v;
        else if (!strcmp(a, "--size")) opt_size = v;
        else if (!strcmp(a, "--random")) opt_random = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--seed")) opt_seed = (uint32_t)strtoul(v, NULL, 0);
        else if (!strcmp(a, "--dump")) opt_dump = v;
        else if (!strcmp(a, "--dump-count")) opt_dump_count = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--verify")) opt_verify = v;
        else if (!strcmp(a, "--cut")) opt_cut = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--compress")) opt_compress = atoi(v) != 0;
        else die("unknown option");
    }
    cache = xalloc(CACHE_BYTES);
    upcase = xalloc(SF_UPCASE_BUF_SIZE);
    ring = xalloc((size_t)RING_BLOCKS * BLOCK);
    work = xalloc(1u << 20);
    pack_mem = xalloc(SF_LOG_PACK_MEM(BLOCK, PACK_BLOCKS));
    dbuf = xalloc(SF_BLOCK_MAX + SF_UNPACK_MEM);
    filebuf = xalloc(FILEBUF_BYTES);
    ovl = xalloc((size_t)OVL_SECTORS * (8 + SS));
    now_ns = 1000000000ull;

    if (opt_verify) {
        uint64_t lost;
        load_image(opt_verify);
        if (verify(0, 0, 0, &lost)) {
            fprintf(stderr, "powercut: %s: %s\n", opt_verify, why);
            return 1;
        }
        printf("verify=ok\n");
        return 0;
    }

    if (!strcmp(opt_size, "small")) {
        steps1 = 400, steps2 = 150, frames_per_step = 3;
    } else if (!strcmp(opt_size, "large")) {
        steps1 = 3000, steps2 = 600, frames_per_step = 5;
    } else {
        die("--size: small or large");
    }
    make_template();

    /* The uncut run: how many writes the workload makes, and that it works at all. */
    setup_fault(0, 0);
    reference = 1;
    int r = workload();
    reference = 0;
    if (getenv("PC_DEBUG"))
        for (uint32_t x = 1; x < 64; x++)
            fprintf(stderr, "reference: LOG%05u: frames %" PRIu64 "..%" PRIu64 "\n", x,
                    ref_first[x], ref_last[x]);
    if (r) {
        fprintf(stderr, "powercut: the workload fails without a cut: %s\n", sf_strerror(r));
        return 1;
    }
    total_writes = fbd.c.writes;
    uncut_frames = next_k - 1;
    if (s1_deleted == 0 || s2_triggers != 2) {
        fprintf(stderr, "powercut: the workload should delete files (%" PRIu64 ") and fire 2 "
                "triggers (%" PRIu64 ")\n", s1_deleted, s2_triggers);
        return 1;
    }
    uint64_t lost;
    if (verify(next_k - 1, 2, s1_deleted, &lost)) {
        fprintf(stderr, "powercut: the uncut image does not verify: %s\n", why);
        return 1;
    }

    if (opt_cut) {
        r = run_cut(opt_cut, 1);
        printf("cut=%" PRIu64 " %s\n", opt_cut, r ? "failed" : "ok");
        return r ? 1 : 0;
    }
    uint64_t npoints = opt_random ? opt_random : total_writes;
    uint64_t every = opt_dump_count ? (npoints + opt_dump_count - 1) / opt_dump_count : 0;
    rng_state = opt_seed ? opt_seed : 1;
    for (uint64_t i = 0; i < npoints; i++) {
        uint64_t n = opt_random ? 1 + rnd() % total_writes : i + 1;
        run_cut(n, every && i % every == every / 2);
    }
    printf("fs=%s policy=%s size=%s writes=%" PRIu64 " cuts=%" PRIu64 " failed=%" PRIu64
           " lost=%" PRIu64 " open_damaged=%" PRIu64 " dumped=%" PRIu64 " frames=%" PRIu64
           " files=%" PRIu64 " deleted=%" PRIu64 " flagged=%" PRIu64 " recovered_blocks=%"
           PRIu64 " torn_anomalies=%" PRIu64 "\n",
           opt_fs, opt_policy, opt_size, total_writes, cuts, failed_cuts, lost_total,
           damaged_open, dumped, uncut_frames, s1_files, s1_deleted, flagged_ours,
           recovered_blocks, anomalies);
    return failed_cuts ? 1 : 0;
}
