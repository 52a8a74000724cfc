/* What a core built with feature options does (t_size with SF_LONG=1; include/streamfat/
 * config.h). Built by the test with the host compiler against a core-only build of one
 * option set, with the same -D macro; not part of the CMake test tree, which links the
 * full library.
 *
 *   probe make-exfat IMG       format a 64 MiB RAM disk (make-fat32: as FAT32), write
 *                              /A.TXT = "hello", save the disk to IMG
 *   probe nomkfs-exfat -       sf_mkfs of exFAT must refuse with SF_ENOTSUP (nomkfs-fat32)
 *   probe rw IMG               mount, create, mkdir, read back: all must work
 *   probe ro IMG               mount; opening for writing, creating, mkdir, unlink and
 *                              rename must fail with SF_EROFS; reading must work
 *   probe nomount IMG          mount must fail with SF_ENOTSUP
 *   probe log IMG              mount; a logger writes a record and closes; a flight recorder
 *                              opens, takes a trigger and closes
 *   probe notrigger IMG        mount; a logger works, but a flight recorder's sf_log_open and
 *                              sf_log_trigger fail with SF_ENOTSUP (SF_NO_LOG_TRIGGER)
 *   probe nolfn IMG            mount; creating a name that is not 8.3 ("/Long name.txt")
 *                              must fail with SF_ENOTSUP (SF_NO_LFN), "/lower.txt" must be
 *                              created and found again as "/LOWER.TXT"
 *   probe badmount IMG         the image with its boot sector signature cleared: mount must
 *                              fail with SF_ECORRUPT; prints "why: " and sf_mount_error's text
 *   TYPE may end in -mbr or -gpt (make-exfat-gpt, nomkfs-fat32-gpt): sf_mkfs then writes
 *   that partition table around the volume (SF_NO_GPT: -gpt must be refused)
 * Exit 0 when everything behaved as expected, 1 otherwise (one line on stderr says what). */
#include <stdio.h>
#include <string.h>
#include "streamfat/vol.h"
#include "streamfat/log.h"

#define DISK (64u << 20)

static uint8_t disk[DISK];
static _Alignas(64) uint8_t vbuf[8192];
static _Alignas(64) uint8_t wbuf[65536];
static struct sf_rambd ram;

static int fail(const char *what, int got)
{
    fprintf(stderr, "probe: %s: got %d (%s)\n", what, got, sf_strerror(got));
    return 1;
}

static _Alignas(64) uint8_t ring[4 * 4096];
static _Alignas(64) uint8_t lwork[4096];
static struct sf_log lg;
static uint64_t fake_ns;

static uint64_t clock_ns(void *ctx)
{
    (void)ctx;
    return fake_ns += 1000000;
}

/* A logger on v (flight recorder: keeps 1 ms after a trigger). */
static int log_open(struct sf_vol *v, int recorder)
{
    struct sf_log_cfg c;
    memset(&c, 0, sizeof c);
    c.vol = v;
    c.ring = ring;
    c.ring_size = sizeof ring;
    c.block_size = 4096;
    c.work = lwork;
    c.work_size = sizeof lwork;
    c.clock = clock_ns;
    c.post_ns = recorder ? 1000000 : 0;
    return sf_log_open(&lg, &c);
}

static int log_modes(struct sf_vol *v, int have_trigger)
{
    int err;
    if ((err = log_open(v, 0)))
        return fail("sf_log_open", err);
    if ((err = sf_log_append(&lg, SF_REC_ANNOTATION, 0, 0, clock_ns(NULL), "probe", 5)))
        return fail("sf_log_append", err);
    err = sf_log_trigger(&lg, clock_ns(NULL), "probe");
    if (err != (have_trigger ? SF_EINVAL : SF_ENOTSUP))
        return fail(have_trigger ? "sf_log_trigger on a plain logger (want SF_EINVAL)"
                                 : "sf_log_trigger (want SF_ENOTSUP)", err);
    if ((err = sf_log_close(&lg)))
        return fail("sf_log_close", err);
    err = log_open(v, 1);
    if (!have_trigger)
        return err == SF_ENOTSUP ? 0 : fail("sf_log_open as a flight recorder (want SF_ENOTSUP)",
                                            err);
    if (err)
        return fail("sf_log_open as a flight recorder", err);
    if ((err = sf_log_trigger(&lg, clock_ns(NULL), "probe")))
        return fail("sf_log_trigger", err);
    if ((err = sf_log_close(&lg)))
        return fail("sf_log_close of the flight recorder", err);
    return 0;
}

static int mount(struct sf_vol *v)
{
    struct sf_vol_cfg c;
    memset(&c, 0, sizeof c);
    c.bd = &ram.bd;
    c.buf = vbuf;
    c.buf_size = sizeof vbuf;
    return sf_mount(v, &c);
}

static int format(const char *type)
{
    struct sf_mkfs_opts o;
    const char *why = "";
    memset(&o, 0, sizeof o);
    o.fs_type = strncmp(type, "exfat", 5) == 0 ? SF_FS_EXFAT : SF_FS_FAT32;
    const char *table = strchr(type, '-');
    if (table)
        o.partition = strcmp(table, "-gpt") == 0 ? SF_PART_GPT : SF_PART_MBR;
    o.buf = wbuf;
    o.buf_size = sizeof wbuf;
    return sf_mkfs(&ram.bd, &o, &why);
}

static int read_hello(struct sf_vol *v)
{
    struct sf_file f;
    char b[16] = "";
    int err = sf_open(v, &f, "/A.TXT", SF_O_RDONLY);
    if (err)
        return fail("open /A.TXT for reading", err);
    sf_ssize_t n = sf_read(&f, b, sizeof b - 1);
    sf_close(&f);
    if (n != 5 || strcmp(b, "hello") != 0)
        return fail("read /A.TXT (want 5 bytes \"hello\")", (int)n);
    return 0;
}

static int write_file(struct sf_vol *v, const char *path)
{
    struct sf_file f;
    int err = sf_open(v, &f, path, SF_O_WRONLY | SF_O_CREAT);
    if (err)
        return err;
    sf_ssize_t n = sf_write(&f, "hello", 5);
    err = sf_close(&f);
    return n != 5 ? (int)n : err;
}

static int image_io(const char *path, int save)
{
    FILE *fp = fopen(path, save ? "wb" : "rb");
    if (!fp) {
        perror(path);
        return 1;
    }
    size_t n = save ? fwrite(disk, 1, DISK, fp) : fread(disk, 1, DISK, fp);
    if (fclose(fp) != 0 || n != DISK) {
        fprintf(stderr, "probe: %s: short %s\n", path, save ? "write" : "read");
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct sf_vol v;
    struct sf_file f;
    int err;

    if (argc != 3) {
        fprintf(stderr, "usage: probe make-TYPE[-mbr|-gpt]|nomkfs-TYPE[-mbr|-gpt]|rw|ro|nomount|"
                        "log|notrigger|nolfn|badmount IMG\n");
        return 2;
    }
    const char *mode = argv[1], *arg = argv[2];
    sf_rambd_init(&ram, disk, 512, DISK / 512);

    if (strncmp(mode, "nomkfs-", 7) == 0) {
        err = format(mode + 7);
        return err == SF_ENOTSUP ? 0 : fail("sf_mkfs (want SF_ENOTSUP)", err);
    }
    if (strncmp(mode, "make-", 5) == 0) {
        if ((err = format(mode + 5)))
            return fail("sf_mkfs", err);
        if ((err = mount(&v)))
            return fail("sf_mount of the new volume", err);
        if ((err = write_file(&v, "/A.TXT")))
            return fail("create /A.TXT", err);
        if ((err = sf_unmount(&v)))
            return fail("unmount", err);
        return image_io(arg, 1);
    }
    if (image_io(arg, 0))
        return 1;
    if (strcmp(mode, "badmount") == 0) {
        disk[510] = disk[511] = 0;          /* an unpartitioned volume: sector 0 is its own */
        err = mount(&v);
        printf("why: %s\n", sf_mount_error(&v));
        return err == SF_ECORRUPT ? 0 : fail("sf_mount of a bad boot sector (want SF_ECORRUPT)", err);
    }
    err = mount(&v);
    if (strcmp(mode, "nomount") == 0)
        return err == SF_ENOTSUP ? 0 : fail("sf_mount (want SF_ENOTSUP)", err);
    if (err)
        return fail("sf_mount", err);
    if (strcmp(mode, "rw") == 0) {
        if ((err = write_file(&v, "/B.TXT")))
            return fail("create /B.TXT", err);
        if ((err = sf_mkdir(&v, "/D")))
            return fail("mkdir /D", err);
    } else if (strcmp(mode, "log") == 0 || strcmp(mode, "notrigger") == 0) {
        if (log_modes(&v, strcmp(mode, "log") == 0))
            return 1;
    } else if (strcmp(mode, "nolfn") == 0) {
        if ((err = write_file(&v, "/Long name.txt")) != SF_ENOTSUP)
            return fail("create /Long name.txt (want SF_ENOTSUP)", err);
        if ((err = write_file(&v, "/lower.txt")))
            return fail("create /lower.txt", err);
        if ((err = sf_open(&v, &f, "/LOWER.TXT", SF_O_RDONLY)))
            return fail("open /LOWER.TXT (ASCII case folding)", err);
        sf_close(&f);
    } else if (strcmp(mode, "ro") == 0) {
        if ((err = sf_open(&v, &f, "/A.TXT", SF_O_RDWR)) != SF_EROFS)
            return fail("open /A.TXT read-write (want SF_EROFS)", err);
        if ((err = write_file(&v, "/B.TXT")) != SF_EROFS)
            return fail("create /B.TXT (want SF_EROFS)", err);
        if ((err = sf_mkdir(&v, "/D")) != SF_EROFS)
            return fail("mkdir /D (want SF_EROFS)", err);
        if ((err = sf_unlink(&v, "/A.TXT")) != SF_EROFS)
            return fail("unlink /A.TXT (want SF_EROFS)", err);
        if ((err = sf_rename(&v, "/A.TXT", "/C.TXT")) != SF_EROFS)
            return fail("rename /A.TXT (want SF_EROFS)", err);
    } else {
        return 2;
    }
    if (read_hello(&v))
        return 1;
    if ((err = sf_unmount(&v)))
        return fail("unmount", err);
    return 0;
}
