/* streamfat demo: the logger at work on an image file. A synthetic vehicle (four motor
 * drives at 1 kHz and a steering wheel at 100 Hz on one CAN bus) is logged for a few
 * seconds; then a diagnostic burst overruns a deliberately small ring so that the DROP
 * accounting shows. The volume is then mounted again read-only, every log file decoded and
 * checked (each frame's counter, every missing frame accounted for by a DROP record), the
 * volume listed and the first records printed. Exit 0 only when all of it went as designed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "common/format_guard.h"
#include "common/target.h"

#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/filebd.h"
#include "streamfat/log.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char help[] =
"NAME\n"
"  streamfat demo - the logger at work on an image file\n"
"\n"
"SYNOPSIS\n"
"  streamfat demo [-F] [-o IMAGE]\n"
"\n"
"DESCRIPTION\n"
"  Creates a 64 MiB sparse image (demo.img in the current directory) and formats it exFAT.\n"
"  The image is the demo's own scratch output: a previous demo image there (64 MiB,\n"
"  exFAT, label DEMO), an empty or an all-zero file is replaced, so the demo runs again\n"
"  and again; anything else (another volume, a partition table, other data) is refused\n"
"  with exit 1, as 'streamfat mkfs' refuses it, unless --force. The new image is made\n"
"  beside the old one and put in its place only once it is logged. It logs a synthetic\n"
"  vehicle: four motor drives (CAN ids 0x181-0x184) at 1 kHz and a steering wheel\n"
"  (0x025) at 100 Hz for 3 seconds,\n"
"  files rotated every second. Then the writer is held for a moment while a diagnostic\n"
"  burst (0x7E0) floods the deliberately small ring (64 KiB): records are dropped, counted,\n"
"  and DROP records in the file say how many. Half a second more of normal traffic, and\n"
"  the log is closed and the volume unmounted.\n"
"\n"
"  Then it mounts the image read-only, decodes every log file (damage-tolerant decoder),\n"
"  checks that each frame's counter continues where the previous one of its id stopped\n"
"  and that the frames missing add up exactly to the DROP records, prints the statistics,\n"
"  lists the volume and shows the first records, and finally says \"demo: OK\". The image\n"
"  stays for inspection (streamfat ls -l demo.img, fsck.exfat -n demo.img; 'make demo'\n"
"  runs fsck.exfat too).\n"
"\n"
"OPTIONS\n"
"  -o, --output IMAGE the image file to create instead of ./demo.img (also --image)\n"
"  -F, --force        replace IMAGE even when it holds something else (it is lost)\n"
"  -h, --help         show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat demo\n"
"  streamfat demo -o /tmp/demo.img && fsck.exfat -n /tmp/demo.img\n"
"\n"
"EXIT STATUS\n"
"  0 everything went as designed, 1 something did not (the message says what; IMAGE held\n"
"  something else and --force was not given: IMAGE is left as it was), 2 wrong usage.\n";

/* A previous demo image: 64 MiB, exFAT, label DEMO (what this command makes). Opened
 * read-only; anything that does not mount is not one. */
static int is_demo_image(const char *path)
{
    static uint8_t cache[3 * 4096] __attribute__((aligned(4096)));
    struct sf_filebd fb;
    struct sf_vol vol;
    struct sf_vol_info vi;
    int yes = 0;

    if (sf_filebd_open(&fb, path, SF_FILEBD_RDONLY, 0, 0))
        return 0;
    struct sf_vol_cfg cfg = { .bd = &fb.bd, .buf = cache, .buf_size = sizeof cache,
                              .flags = SF_VOL_RDONLY };
    if (fb.bytes == (64u << 20) && sf_mount(&vol, &cfg) == 0) {
        yes = sf_vol_info(&vol, &vi) == 0 && vi.fs_type == SF_FS_EXFAT &&
              strcmp(vi.label, "DEMO") == 0;
        sf_unmount(&vol);
    }
    sf_filebd_close(&fb);
    return yes;
}

static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "image", required_argument, NULL, 'o' },      /* the name before docs/CLI.md */
    { "force", no_argument, NULL, 'F' },
    CLI_LONGOPTS_END,
};

#define NS UINT64_C(1000000000)
#define BLOCK 4096u
#define RING (16u * BLOCK)              /* small on purpose: the burst overruns it */
#define RUN_NS (3 * NS)
#define TAIL_NS (NS / 2)
#define BURST 6000u
#define ID_STEER 0x025u
#define ID_MOTOR 0x181u                 /* .. 0x184 */
#define ID_DIAG 0x7E0u

struct demo {
    struct sf_log *lg;
    atomic_int stop, pause, paused;
    atomic_int ended;               /* the writer returned (an error: err): never pauses */
    int err;
};

struct node {
    struct demo *d;
    pthread_t th;
    uint32_t id;
    uint64_t period_ns;
    uint32_t sent;                  /* frames offered, when the node has stopped */
};

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* One ECU: a frame every period, with a 16-bit counter in bytes 6..7. */
static void *node_main(void *arg)
{
    struct node *n = arg;
    uint64_t next = mono();
    uint16_t count = 0;

    while (!atomic_load(&n->d->stop)) {
        uint8_t data[8];
        struct timespec ts;
        double t = (double)next / 1e9;
        memset(data, 0, sizeof data);
        if (n->id == ID_STEER) {
            int16_t angle = (int16_t)(900.0 * sin(t * 0.8));    /* 0.1 degree */
            data[0] = (uint8_t)angle;
            data[1] = (uint8_t)((uint16_t)angle >> 8);
        } else {
            unsigned m = n->id - ID_MOTOR;
            int16_t rpm = (int16_t)(3000.0 + 1500.0 * sin(t * 2.0 + m));
            int16_t amps = (int16_t)(120.0 + 40.0 * cos(t * 3.0 + m));   /* 0.1 A */
            data[0] = (uint8_t)rpm;
            data[1] = (uint8_t)((uint16_t)rpm >> 8);
            data[2] = (uint8_t)amps;
            data[3] = (uint8_t)((uint16_t)amps >> 8);
            data[4] = (uint8_t)(45 + m);                           /* deg C */
        }
        data[6] = (uint8_t)count;
        data[7] = (uint8_t)(count >> 8);
        sf_log_append_can(n->d->lg, 0, real_ns(NULL), n->id, 0, data, 8);
        count++;
        next += n->period_ns;
        ts.tv_sec = (time_t)(next / NS);
        ts.tv_nsec = (long)(next % NS);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
    n->sent = count;
    return NULL;
}

/* The writer: sf_log_service until told to stop; holds still while d->pause is set. */
static void *writer_main(void *arg)
{
    struct demo *d = arg;

    while (!atomic_load(&d->stop)) {
        int rc;
        if (atomic_load(&d->pause)) {
            atomic_store(&d->paused, 1);
            struct timespec ts = { 0, 1000000 };
            nanosleep(&ts, NULL);
            continue;
        }
        atomic_store(&d->paused, 0);
        rc = sf_log_service(d->lg);
        if (rc < 0) {
            d->err = rc;
            break;
        }
        if (rc == 0) {
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&d->ended, 1);
    return NULL;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / NS), (long)(ns % NS) };
    while (nanosleep(&ts, &ts) == EINTR)
        ;
}

/* ---- reading back ---------------------------------------------------------------------- */

struct check {
    uint32_t last[0x800];           /* last counter seen per id, + 1 (0: none yet) */
    uint32_t sent[0x800];           /* frames offered per id (run_log) */
    uint64_t frames, drops, drop_records, missing, other, shown, damage, files;
    uint64_t diag;
    int bad;
};

static sf_ssize_t rd(void *ctx, void *buf, size_t n)
{
    return sf_read(ctx, buf, n);
}

static void show(const struct sf_rec *r, const struct sf_can *c)
{
    printf("  (%010" PRIu64 ".%06" PRIu64 ") ", r->ts / NS, r->ts % NS / 1000);
    if (r->type == SF_REC_CAN) {
        printf("can0 %03" PRIX32 "#", c->id);
        for (unsigned i = 0; i < c->len; i++)
            printf("%02X", c->data[i]);
        putchar('\n');
    } else if (r->type == SF_REC_DROP) {
        uint64_t cnt = 0;
        for (int i = 7; i >= 0; i--)
            cnt = cnt << 8 | r->body[i];
        printf("DROP %" PRIu64 " records\n", cnt);
    } else if (r->type == SF_REC_ANNOTATION || r->type == SF_REC_CHANNEL ||
               r->type == SF_REC_META || r->type == SF_REC_TEXT) {
        printf("%s \"%.*s\"\n", r->type == SF_REC_CHANNEL ? "CHANNEL" :
               r->type == SF_REC_META ? "META" : "TEXT", (int)r->length,
               (const char *)r->body);
    } else {
        printf("record type 0x%02x, %u bytes\n", r->type, r->length);
    }
}

static void check_file(struct target *t, const char *name, struct check *ck, uint8_t *dbuf)
{
    struct sf_file f;
    struct sf_dec dec;
    struct sf_dec_event ev;
    int kind, err = sf_open(&t->vol, &f, name, SF_O_RDONLY);

    if (err) {
        cli_err("%s: %s: %s", t->path, name, sf_strerror(err));
        ck->bad = 1;
        return;
    }
    ck->files++;
    sf_dec_init(&dec, dbuf, SF_BLOCK_MAX);
    sf_dec_set_unpack(&dec, (uint8_t *)dbuf + SF_BLOCK_MAX, SF_UNPACK_MEM);
    while ((kind = sf_dec_read(&dec, rd, &f, &ev)) != SF_DEC_END) {
        struct sf_can c;
        if (kind < 0) {
            cli_err("%s: %s: read failed: %s", t->path, name, sf_strerror(kind));
            ck->bad = 1;
            break;
        }
        if (kind == SF_DEC_DAMAGED || kind == SF_DEC_GAP || kind == SF_DEC_FOREIGN) {
            cli_err("%s: %s: damage at block %" PRIu64 " (%s)", t->path, name, ev.block,
                    kind == SF_DEC_DAMAGED ? sf_dec_reason_str(ev.reason) :
                    kind == SF_DEC_GAP ? "gap in the block sequence" : "foreign block");
            ck->damage++;
            ck->bad = 1;
            continue;
        }
        if (kind != SF_DEC_RECORD)
            continue;
        memset(&c, 0, sizeof c);
        if (ev.rec.type == SF_REC_CAN) {
            uint32_t cnt;
            if (sf_rec_get_can(&ev.rec, &c) || c.len != 8 || c.id >= 0x800) {
                cli_err("%s: %s: unexpected CAN record", t->path, name);
                ck->bad = 1;
                continue;
            }
            ck->frames++;
            cnt = c.id == ID_DIAG ? (uint32_t)(c.data[0] | c.data[1] << 8)
                                  : (uint32_t)(c.data[6] | c.data[7] << 8);
            if (c.id == ID_DIAG && cnt < BURST)     /* not the closing frame (counter BURST) */
                ck->diag++;
            if (ck->last[c.id] && cnt + 1 <= ck->last[c.id]) {
                cli_err("%s: %s: id %03" PRIX32 ": counter %" PRIu32 " after %" PRIu32
                        " (repeated or out of order)", t->path, name, c.id, cnt,
                        ck->last[c.id] - 1);
                ck->bad = 1;
            }
            ck->missing += cnt - (ck->last[c.id] ? ck->last[c.id] : 0);
            ck->last[c.id] = cnt + 1;
        } else if (ev.rec.type == SF_REC_DROP) {
            uint64_t cnt = 0;
            for (int i = 7; i >= 0; i--)
                cnt = cnt << 8 | ev.rec.body[i];
            ck->drops += cnt;
            ck->drop_records++;
        } else {
            ck->other++;
        }
        if (ck->shown < 14 && (ev.rec.type == SF_REC_CAN || ev.rec.type == SF_REC_DROP ||
                               ck->files == 1)) {
            show(&ev.rec, &c);
            ck->shown++;
        }
    }
    sf_close(&f);
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(x, y);
}

/* ---- the demo ------------------------------------------------------------------------- */

/* Log for a few seconds into `image`; sent[id] gets the number of frames offered per id. */
static int run_log(const char *image, struct sf_log_stats *st, struct sf_hist *dev,
                   uint32_t *sent)
{
    struct target t;
    struct demo d;
    struct node nodes[5];
    struct sf_log_cfg cfg;
    struct sf_log *lg;
    static const char *const chans[] = { "can0" };
    static const char *const meta[] = { "source=streamfat demo (synthetic vehicle)" };
    pthread_t wt;
    void *ring, *work;
    int err, rc = CLI_ERR;
    uint64_t t0;

    if (target_open_async(&t, image, TARGET_ASYNC | TARGET_DIRECT, 0, 4))
        return CLI_ERR;
    ring = target_alloc(target_bd(&t), RING);
    work = target_alloc(target_bd(&t), BLOCK);
    lg = aligned_alloc(64, (sizeof *lg + 63) / 64 * 64);
    if (!lg) {
        cli_err("out of memory");
        target_close(&t);
        return CLI_ERR;
    }
    memset(lg, 0, sizeof *lg);
    memset(&d, 0, sizeof d);
    memset(&cfg, 0, sizeof cfg);
    cfg.vol = &t.vol;
    cfg.ring = ring;
    cfg.ring_size = RING;
    cfg.block_size = BLOCK;
    cfg.split_ns = NS;                  /* a new file every second: rotation shows too */
    cfg.checkpoint_ns = NS / 4;
    cfg.clock = real_ns;
    cfg.clock_kind = SF_CLOCK_REALTIME;
    cfg.session_id = real_ns(NULL) ^ ((uint64_t)getpid() << 40);
    cfg.channel_names = chans;
    cfg.channel_count = 1;
    cfg.meta = meta;
    cfg.meta_count = 1;
    cfg.work = work;
    cfg.work_size = BLOCK;
    err = sf_log_open(lg, &cfg);
    if (err) {
        cli_err("%s: cannot start the log: %s", image, sf_strerror(err));
        goto out;
    }
    d.lg = lg;
    if (pthread_create(&wt, NULL, writer_main, &d)) {
        cli_err("cannot start a thread");
        sf_log_close(lg);
        goto out;
    }
    for (unsigned i = 0; i < 5; i++) {
        nodes[i].d = &d;
        nodes[i].id = i < 4 ? ID_MOTOR + i : ID_STEER;
        nodes[i].period_ns = i < 4 ? NS / 1000 : NS / 100;
        pthread_create(&nodes[i].th, NULL, node_main, &nodes[i]);
    }
    printf("logging: 4 motor drives at 1 kHz (0x181-0x184), steering at 100 Hz (0x025), "
           "%.0f s ...\n", (double)RUN_NS / 1e9);
    fflush(stdout);
    t0 = mono();
    sleep_ns(RUN_NS);

    /* The burst: the writer is held (as if the card paused for garbage collection) while a
     * diagnostic dump floods the ring. */
    atomic_store(&d.pause, 1);
    while (!atomic_load(&d.paused) && !atomic_load(&d.ended))   /* a device error ended it */
        sleep_ns(100000);
    {
        uint64_t refused = 0;
        for (uint32_t k = 0; k < BURST; k++) {
            uint8_t data[8] = { (uint8_t)k, (uint8_t)(k >> 8), 0xD1, 0xA6, 0, 0, 0, 0 };
            if (sf_log_append_can(lg, 0, real_ns(NULL), ID_DIAG, 0, data, 8))
                refused++;
        }
        printf("burst: %u diagnostic frames into a %u KiB ring while the writer was held: "
               "%" PRIu64 " dropped\n"
               "  (motor and steering frames sent meanwhile are dropped too: all are in "
               "'records dropped')\n", BURST, RING / 1024, refused);
    }
    sleep_ns(20000000);
    atomic_store(&d.pause, 0);
    sleep_ns(20000000);
    {
        /* the burst's last frame, after the writer caught up: its counter shows how many
         * of the burst went missing */
        uint8_t data[8] = { (uint8_t)BURST, (uint8_t)(BURST >> 8), 0xD1, 0xA6, 0, 0, 0, 0 };
        sf_log_append_can(lg, 0, real_ns(NULL), ID_DIAG, 0, data, 8);
    }
    sleep_ns(TAIL_NS);

    atomic_store(&d.stop, 1);
    for (unsigned i = 0; i < 5; i++) {
        pthread_join(nodes[i].th, NULL);
        sent[nodes[i].id] = nodes[i].sent;
    }
    sent[ID_DIAG] = BURST + 1;          /* the burst and its closing frame */
    pthread_join(wt, NULL);
    err = sf_log_close(lg);
    if (d.err || err) {
        cli_err("%s: log: %s", image, sf_strerror(d.err ? d.err : err));
        goto out;
    }
    sf_log_get_stats(lg, st);
    {
        struct sf_hist h1, h3;
        sf_log_get_hist(lg, &h1, dev, &h3);
    }
    printf("logged for %.2f s\n", (double)(mono() - t0) / 1e9);
    rc = 0;
out:
    if (target_close(&t))
        rc = CLI_ERR;
    free(lg);
    free(ring);
    free(work);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    struct mkfs_args a;
    struct cli_opts cl = CLI_OPTS(argc, argv, ":o:Fh", longopts, help, 0);
    struct target t;
    struct sf_log_stats st;
    struct sf_hist dev;
    struct check *ck;
    static uint32_t sent[0x800];    /* frames offered per id */
    struct sf_dir dir;
    struct sf_stat s;
    const char *image = "demo.img";
    uint8_t *dbuf;
    struct out_file of;
    int c, err, rc = CLI_ERR, force = 0, replacing = 0;

    while ((c = cli_getopt(&cl)) > 0) {
        if (c == 'o')
            image = optarg;
        else if (c == 'F')
            force = 1;
    }
    if (c < 0)
        return cl.status;
    if (cli_args(argc, argv, 0, NULL))
        return CLI_USAGE;

    {
        struct stat hs;
        if (stat(image, &hs) == 0) {
            if (!S_ISREG(hs.st_mode)) {
                cli_err("%s: exists and is not a regular file", image);
                return CLI_ERR;
            }
            /* The demo's own previous image is its scratch output and is replaced; anything
             * else is refused as every formatting command refuses it (format_guard.h). */
            char what[400];
            if (!force && !is_demo_image(image) &&
                format_guard_look(image, what, sizeof what) > 0) {
                cli_err("%s: holds %s and is not a previous demo image: not replaced; -o "
                        "names another image, --force erases it", image, what);
                return CLI_ERR;
            }
            replacing = 1;
        }
    }
    /* The image is made and logged beside IMAGE (".IMAGE.XXXXXX", cli/common/outfile.c)
     * and put in its place only once the run has logged: a failed or killed demo leaves a
     * previous image as it was. */
    if (out_open(&of, image, NULL))
        return CLI_ERR;
    if (ftruncate(fileno(of.f), 64 << 20)) {     /* mkfs formats an existing file whole */
        cli_err("%s: %s", image, strerror(errno));
        out_close(&of, 0);
        goto fail;
    }
    cli_path_alias(of.tmp, image);
    memset(&a, 0, sizeof a);
    a.target = of.tmp;
    a.fs_type = SF_FS_EXFAT;
    a.size = 64u << 20;
    a.have_size = 1;
    a.label = "DEMO";
    a.partition = SF_PART_NONE;
    a.quiet = 1;
    memset(&dev, 0, sizeof dev);
    if (mkfs_run(&a) || run_log(of.tmp, &st, &dev, sent)) {
        cli_path_alias(NULL, NULL);         /* out_close frees of.tmp */
        out_close(&of, 0);
        goto fail;
    }
    cli_path_alias(NULL, NULL);
    if (out_close(&of, 1))
        goto fail;
    if (replacing)
        printf("replaced the old %s\n", image);
    printf("created %s: 64 MiB sparse image, exFAT, label DEMO\n", image);
    /* the counters and names of `streamfat log` and include/streamfat/log.h */
    printf("\nstatistics (records in = records written + records dropped)\n");
    printf("  records in       %10" PRIu64 "  (offered by the producers)\n", st.records_in);
    printf("  records written  %10" PRIu64 "\n", st.records_written);
    printf("  records dropped  %10" PRIu64 "  (ring full during the burst)\n",
           st.records_dropped);
    printf("  records own      %10" PRIu64 "  (DROP records the logger wrote itself, in the "
           "files too)\n",
           st.records_own);
    printf("  bytes written    %10" PRIu64 "  (%" PRIu64 " durable)\n", st.bytes_written,
           st.bytes_durable);
    printf("  files            %10" PRIu64 "\n", st.files);
    printf("  ring high water  %10" PRIu64 " of %" PRIu64 " bytes\n", st.ring_high_water,
           st.ring_size);
    if (dev.count)
        printf("  device writes    %10" PRIu64 "  p99 %" PRIu64 " us, max %" PRIu64 " us\n",
               dev.count, sf_hist_percentile(&dev, 0.99) / 1000, dev.max_ns / 1000);

    ck = calloc(1, sizeof *ck);
    dbuf = malloc(SF_BLOCK_MAX + SF_UNPACK_MEM);
    if (ck)
        memcpy(ck->sent, sent, sizeof ck->sent);
    if (!ck || !dbuf) {
        cli_err("out of memory");
        free(ck);
        free(dbuf);
        goto fail;
    }
    if (target_open(&t, image, TARGET_RDONLY, 0)) {
        free(ck);
        free(dbuf);
        goto fail;
    }
    printf("\n$ streamfat ls -l %s\n", image);
    fflush(stdout);
    if (ls_run(&t.vol, image, "", LS_LONG, stdout))
        ck->bad = 1;
    printf("\nfirst records (decoded):\n");
    err = sf_opendir(&t.vol, &dir, "");
    {
        char names[64][SF_NAME_UTF8_MAX];
        unsigned n = 0;
        int more = 0;
        while (!err && (more = sf_readdir(&dir, &s)) == 1) {
            size_t l = strlen(s.name);
            if (!(s.attr & SF_ATTR_DIR) && l > 4 && !strcmp(s.name + l - 4, ".SFL") && n < 64)
                memcpy(names[n++], s.name, l + 1);
        }
        if (!err && more < 0)
            err = more;
        if (!err)
            sf_closedir(&dir);
        qsort(names, n, sizeof names[0], cmp_name);
        for (unsigned i = 0; i < n && !err; i++)
            check_file(&t, names[i], ck, dbuf);
    }
    if (err) {
        cli_err("%s: cannot list the root: %s", image, sf_strerror(err));
        ck->bad = 1;
    }
    if (target_close(&t))
        ck->bad = 1;

    /* A frame dropped after the last one of its id in the files (the ring full in the
     * final moments) leaves no jump in that id's counter: the counts offered tell. */
    for (uint32_t id = 0; id < 0x800; id++)
        if (ck->sent[id] > ck->last[id])
            ck->missing += ck->sent[id] - ck->last[id];
    printf("\ncheck: %" PRIu64 " files decoded, no damage: %s; %" PRIu64 " frames (%" PRIu64
           " from the burst), %" PRIu64 " DROP records for %" PRIu64 " frames; counters show %"
           PRIu64 " frames missing\n", ck->files, ck->damage ? "NO" : "yes", ck->frames,
           ck->diag, ck->drop_records, ck->drops, ck->missing);
    if (ck->frames != st.records_written || ck->drop_records != st.records_own ||
        st.records_in != st.records_written + st.records_dropped) {
        cli_err("%" PRIu64 " frames and %" PRIu64 " DROP records in the files, but records "
                "in %" PRIu64 ", written %" PRIu64 ", dropped %" PRIu64 ", own %" PRIu64,
                ck->frames, ck->drop_records, st.records_in, st.records_written,
                st.records_dropped, st.records_own);
        ck->bad = 1;
    }
    if (ck->drops != st.records_dropped) {
        cli_err("DROP records count %" PRIu64 ", the statistics %" PRIu64, ck->drops,
                st.records_dropped);
        ck->bad = 1;
    }
    /* Every frame lost shows as a jump in its id's counter or, at the end, as a counter
     * short of the frames offered. */
    if (ck->missing != ck->drops) {
        cli_err("%" PRIu64 " frames are missing but DROP records account for %" PRIu64,
                ck->missing, ck->drops);
        ck->bad = 1;
    }
    if (st.records_dropped == 0) {
        cli_err("the burst did not overrun the ring: no DROP accounting to show");
        ck->bad = 1;
    }
    if (st.files < 3) {
        cli_err("expected at least 3 files (rotation every second), got %" PRIu64, st.files);
        ck->bad = 1;
    }
    rc = ck->bad ? CLI_ERR : CLI_OK;
    free(ck);
    free(dbuf);
    if (rc == CLI_OK) {
        printf("\nThe frames missing are exactly the ones the DROP records announce; the image\n"
               "stays for inspection: streamfat ls -l %s, fsck.exfat -n %s\n", image, image);
        printf("\ndemo: OK\n");
        return CLI_OK;
    }
fail:
    fprintf(stderr, "demo: FAILED\n");
    return CLI_ERR;
}
