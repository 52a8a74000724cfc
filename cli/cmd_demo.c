/* streamfat demo: format an image, fill it with files of awkward sizes, read them back
 * after a remount and compare every byte. Exit 0 only when everything matched. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "target.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char help[] =
"NAME\n"
"  streamfat demo - show the library at work on an image file\n"
"\n"
"SYNOPSIS\n"
"  streamfat demo [-o IMAGE]\n"
"\n"
"DESCRIPTION\n"
"  Creates a 64 MiB sparse image (demo.img in the current directory; an existing one is\n"
"  replaced), formats it exFAT, makes a directory, writes files of 0 B, 1 B, 4095 B,\n"
"  1 MiB + 7 B and 20 MiB (one with a non-ASCII name), unmounts, mounts again read-only,\n"
"  reads every file back comparing each byte, lists the volume and unmounts. Prints what\n"
"  it did and finally \"demo: OK\". The image stays for inspection (streamfat ls -lR\n"
"  demo.img, or fsck.exfat -n demo.img).\n"
"\n"
"OPTIONS\n"
"  -o, --image IMAGE  the image file to create instead of ./demo.img\n"
"  -h, --help         show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat demo\n"
"  streamfat demo -o /tmp/demo.img\n"
"\n"
"EXIT STATUS\n"
"  0 every byte matched, 1 something failed (the message says what), 2 wrong usage.\n";

static const struct option longopts[] = {
    { "image", required_argument, NULL, 'o' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct demo_file {
    const char *path;
    uint64_t size;
    uint64_t seed;
};

static const struct demo_file files[] = {
    { "logs/empty.bin", 0, 1 },
    { "logs/one-byte.bin", 1, 2 },
    { "logs/almost-a-page.bin", 4095, 3 },
    { "logs/1MiB-plus-7.bin", (1u << 20) + 7, 4 },
    { "logs/pattern-20MiB.bin", 20u << 20, 5 },
    { "logs/Grüße-データ-ñ.txt", 100000, 6 },
    { "readme.txt", 300, 7 },
};
#define NFILES (sizeof files / sizeof files[0])

#define CHUNK (192u * 1024u + 13u)   /* odd on purpose: writes straddle sectors and clusters */

static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Content of a demo file at byte offset off: a seeded hash of each 8-byte word; the text
 * files get printable lines instead. */
static void fill(const struct demo_file *df, uint64_t off, uint8_t *buf, size_t n)
{
    size_t i;
    int text = strstr(df->path, ".txt") != NULL;

    for (i = 0; i < n; i++) {
        uint64_t pos = off + i;
        if (text) {
            static const char line[] = "streamfat demo line - the quick brown fox 0123456789\n";
            buf[i] = (uint8_t)line[pos % (sizeof line - 1)];
        } else {
            uint64_t w = mix64(df->seed << 40 ^ (pos >> 3));
            buf[i] = (uint8_t)(w >> ((pos & 7) * 8));
        }
    }
}

static int write_file(struct target *t, const struct demo_file *df, uint8_t *buf)
{
    struct sf_file f;
    uint64_t done = 0;
    int err;

    err = sf_open(&t->vol, &f, df->path, SF_O_WRONLY | SF_O_CREAT | SF_O_EXCL);
    if (err) {
        cli_err("%s: %s: cannot create: %s", t->path, df->path, sf_strerror(err));
        return CLI_ERR;
    }
    while (done < df->size) {
        size_t n = df->size - done < CHUNK ? (size_t)(df->size - done) : CHUNK;
        sf_ssize_t w;
        fill(df, done, buf, n);
        w = sf_write(&f, buf, n);
        if (w != (sf_ssize_t)n) {
            cli_err("%s: %s: write failed at byte %" PRIu64 ": %s", t->path, df->path, done,
                    sf_strerror(w < 0 ? (int)w : SF_EIO));
            sf_close(&f);
            return CLI_ERR;
        }
        done += n;
    }
    err = sf_close(&f);
    if (err) {
        cli_err("%s: %s: close failed: %s", t->path, df->path, sf_strerror(err));
        return CLI_ERR;
    }
    return 0;
}

static int check_file(struct target *t, const struct demo_file *df, uint8_t *buf,
                      uint8_t *want)
{
    struct sf_file f;
    struct sf_stat st;
    uint64_t done = 0;
    int err;

    err = sf_stat(&t->vol, df->path, &st);
    if (!err && st.size != df->size) {
        cli_err("%s: %s: size is %" PRIu64 ", expected %" PRIu64, t->path, df->path, st.size,
                df->size);
        return CLI_ERR;
    }
    if (!err)
        err = sf_open(&t->vol, &f, df->path, SF_O_RDONLY);
    if (err) {
        cli_err("%s: %s: %s", t->path, df->path, sf_strerror(err));
        return CLI_ERR;
    }
    for (;;) {
        sf_ssize_t r = sf_read(&f, buf, CHUNK);
        if (r < 0) {
            cli_err("%s: %s: read failed at byte %" PRIu64 ": %s", t->path, df->path, done,
                    sf_strerror((int)r));
            sf_close(&f);
            return CLI_ERR;
        }
        if (r == 0)
            break;
        if (done + (uint64_t)r > df->size) {
            cli_err("%s: %s: more data than written", t->path, df->path);
            sf_close(&f);
            return CLI_ERR;
        }
        fill(df, done, want, (size_t)r);
        if (memcmp(buf, want, (size_t)r) != 0) {
            size_t i = 0;
            while (buf[i] == want[i])
                i++;
            cli_err("%s: %s: byte %" PRIu64 " differs (0x%02x, expected 0x%02x)", t->path,
                    df->path, done + i, buf[i], want[i]);
            sf_close(&f);
            return CLI_ERR;
        }
        done += (uint64_t)r;
    }
    sf_close(&f);
    if (done != df->size) {
        cli_err("%s: %s: read %" PRIu64 " bytes, expected %" PRIu64, t->path, df->path, done,
                df->size);
        return CLI_ERR;
    }
    return 0;
}

int cmd_demo(int argc, char **argv)
{
    struct mkfs_args a;
    struct target t;
    const char *image = "demo.img";
    uint8_t *buf, *want;
    size_t i;
    int c, err, rc = CLI_ERR;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': image = optarg; break;
        case 'h': fputs(help, stdout); return CLI_OK;
        default:  return cli_bad_option(c, argv);
        }
    }
    if (optind < argc)
        return cli_usage("unexpected argument '%s'", argv[optind]);

    {
        struct stat st;
        if (stat(image, &st) == 0) {
            if (!S_ISREG(st.st_mode)) {
                cli_err("%s: exists and is not a regular file", image);
                return CLI_ERR;
            }
            if (unlink(image)) {
                cli_err("%s: cannot replace: %s", image, strerror(errno));
                return CLI_ERR;
            }
            printf("removed the old %s\n", image);
        }
    }
    memset(&a, 0, sizeof a);
    a.target = image;
    a.fs_type = SF_FS_EXFAT;
    a.size = 64u << 20;
    a.have_size = 1;
    a.label = "DEMO";
    a.partition = SF_PART_NONE;
    a.quiet = 1;
    if (mkfs_run(&a))
        return CLI_ERR;
    printf("created %s: 64 MiB sparse image, exFAT, label DEMO\n", image);

    buf = malloc(CHUNK);
    want = malloc(CHUNK);
    if (!buf || !want) {
        cli_err("out of memory");
        goto out_free;
    }

    if (target_open(&t, image, 0, 0))
        goto out_free;
    err = sf_mkdir(&t.vol, "logs");
    if (err) {
        cli_err("%s: logs: cannot create directory: %s", image, sf_strerror(err));
        target_close(&t);
        goto out_free;
    }
    printf("mkdir logs\n");
    for (i = 0; i < NFILES; i++) {
        if (write_file(&t, &files[i], buf)) {
            target_close(&t);
            goto out_free;
        }
        printf("wrote %-28s %10" PRIu64 " bytes\n", files[i].path, files[i].size);
    }
    if (target_close(&t))
        goto out_free;
    printf("unmounted; mounting again read-only\n");

    if (target_open(&t, image, TARGET_RDONLY, 0))
        goto out_free;
    for (i = 0; i < NFILES; i++) {
        if (check_file(&t, &files[i], buf, want)) {
            target_close(&t);
            goto out_free;
        }
        printf("read back %-24s %10" PRIu64 " bytes, all match\n", files[i].path,
               files[i].size);
    }
    printf("\n$ streamfat ls -lR %s\n", image);
    fflush(stdout);
    if (ls_run(&t.vol, image, "", LS_LONG | LS_RECURSIVE, stdout)) {
        target_close(&t);
        goto out_free;
    }
    if (target_close(&t))
        goto out_free;
    printf("\ndemo: OK\n");
    rc = CLI_OK;

out_free:
    free(buf);
    free(want);
    if (rc != CLI_OK)
        fprintf(stderr, "demo: FAILED\n");
    return rc;
}
