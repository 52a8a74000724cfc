/* decode_check: read every log file `streamfat log` wrote on a volume (mounted read-only
 * through the library), decode it with the library's damage-tolerant decoder and check it.
 *
 *   decode_check IMAGE [--dir DIR] [--gen N] [--allow-drops] [--windows] [--raw]
 *                      [--expect-frames N] [--expect-bytes N] [--clean]
 *
 * --gen N        CAN frames on channels 0..N-1 are the gen:can sequences: frame k has id
 *                0x100 + (k mod 16), 8 data bytes = k little-endian; k runs 0, 1, 2 ... per
 *                channel across the files in name order, timestamps non-decreasing per
 *                channel. A jump in k is an error unless --allow-drops, and then the jumps
 *                must add up to the sum of the DROP records' counts.
 * --windows      flight recorder files: each file's sequence starts anywhere (its pre window)
 *                but is gap-free inside the file
 * --raw          the .BIN files, concatenated in name order, are the gen:raw pattern (byte i
 *                is byte i mod 8 of the little-endian u64 i / 8)
 * --clean        any damage event (damaged block, gap, foreign block) is an error
 * --start-any    the sequences may start at any k (cyclic mode deleted the oldest files)
 * --generated N  gen:can generated N frames in all (split over the channels like the CLI
 *                does): frames missing after the last one decoded count as gaps too
 * --candump FILE write every CAN record as a candump -L line to FILE, the interface named
 *                by the CHANNEL records ("ch<N>" when unnamed)
 *
 * Always: every file's header block is valid, all files share one session id, file indexes
 * increase. Prints one JSON object with what it found on stdout; exit 0 when every check
 * passed, 1 otherwise (the reasons on stderr). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamfat/sf.h"
#include "streamfat/filebd.h"
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"
#include "streamfat/rec.h"

#define MAXCH 256
#define MAXFILES 100000

static int errors;
static int ever_seen[256];

static int frames_ch_seen(unsigned ch)
{
    int r = ever_seen[ch];
    ever_seen[ch] = 1;
    return r;
}

static void bad(const char *fmt, ...)
{
    va_list ap;

    if (errors++ >= 20)
        return;
    fputs("decode_check: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static sf_time_ms clk(void *ctx)
{
    (void)ctx;
    return 0;
}

struct rd {
    struct sf_file *f;
};

static sf_ssize_t rd_fn(void *ctx, void *buf, size_t n)
{
    return sf_read(((struct rd *)ctx)->f, buf, n);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int main(int argc, char **argv)
{
    const char *img = NULL, *dir = "";
    unsigned gen = 0;
    int allow_drops = 0, windows = 0, raw = 0, clean = 0, start_any = 0;
    uint64_t generated = UINT64_MAX;
    FILE *cd = NULL;
    static char chname[MAXCH][64];
    uint64_t expect_frames = UINT64_MAX, expect_bytes = UINT64_MAX;
    struct sf_filebd fbd;
    struct sf_vol vol;
    struct sf_vol_cfg cfg;
    struct sf_dir d;
    struct sf_stat st;
    uint8_t type = 0;
    uint32_t ss = 0;
    void *cache, *probe, *dbuf;
    uint16_t *upcase;
    char **names = NULL;
    size_t nnames = 0;
    int err;
    /* results */
    uint64_t next_k[MAXCH], last_ts[MAXCH], frames_ch[MAXCH];
    int seen_ch[MAXCH];
    uint64_t frames = 0, other_can = 0, records = 0, drop_records = 0, drop_sum = 0, gaps = 0;
    uint64_t blocks = 0, damage = 0, annotations = 0, latency = 0, samples = 0, channel_recs = 0;
    uint64_t meta_recs = 0, text = 0, raw_bytes = 0, session = 0, file_bytes = 0;
    uint64_t lat_max = 0;
    uint32_t last_index = 0;
    char first_annotation[200] = "";

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--gen") && i + 1 < argc)
            gen = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--allow-drops"))
            allow_drops = 1;
        else if (!strcmp(argv[i], "--windows"))
            windows = 1;
        else if (!strcmp(argv[i], "--raw"))
            raw = 1;
        else if (!strcmp(argv[i], "--clean"))
            clean = 1;
        else if (!strcmp(argv[i], "--start-any"))
            start_any = 1;
        else if (!strcmp(argv[i], "--generated") && i + 1 < argc)
            generated = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--candump") && i + 1 < argc) {
            cd = fopen(argv[++i], "w");
            if (!cd) {
                perror(argv[i]);
                return 1;
            }
        }
        else if (!strcmp(argv[i], "--expect-frames") && i + 1 < argc)
            expect_frames = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--expect-bytes") && i + 1 < argc)
            expect_bytes = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && !img)
            img = argv[i];
        else {
            fprintf(stderr, "usage: decode_check IMAGE [--dir DIR] [--gen N] [--allow-drops] "
                    "[--windows] [--raw] [--clean] [--expect-frames N] [--expect-bytes N]\n");
            return 2;
        }
    }
    if (!img || gen > MAXCH)
        return 2;
    memset(next_k, 0, sizeof next_k);
    memset(last_ts, 0, sizeof last_ts);
    memset(frames_ch, 0, sizeof frames_ch);
    memset(seen_ch, 0, sizeof seen_ch);

    err = sf_filebd_open(&fbd, img, SF_FILEBD_RDONLY, 0, 0);
    if (err) {
        fprintf(stderr, "%s: %s\n", img, sf_strerror(err));
        return 1;
    }
    probe = aligned_alloc(4096, 4096);
    cache = aligned_alloc(4096, 2u << 20);
    upcase = malloc(SF_UPCASE_BUF_SIZE);
    dbuf = malloc(SF_BLOCK_MAX + SF_UNPACK_MEM);
    if (!probe || !cache || !upcase || !dbuf)
        return 1;
    err = sf_probe(&fbd.bd, 0, probe, &type, &ss);
    if (err || type == SF_FS_NONE) {
        fprintf(stderr, "%s: no volume\n", img);
        return 1;
    }
    if (ss != fbd.bd.sector_size && sf_filebd_set_sector_size(&fbd, ss))
        return 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &fbd.bd;
    cfg.buf = cache;
    cfg.buf_size = 2u << 20;
    cfg.upcase_buf = upcase;
    cfg.clock = clk;
    cfg.flags = SF_VOL_RDONLY;
    err = sf_mount(&vol, &cfg);
    if (err) {
        fprintf(stderr, "%s: mount: %s (%s)\n", img, sf_strerror(err), sf_mount_error(&vol));
        return 1;
    }

    err = sf_opendir(&vol, &d, dir);
    if (err) {
        fprintf(stderr, "%s: %s: %s\n", img, dir, sf_strerror(err));
        return 1;
    }
    while ((err = sf_readdir(&d, &st)) == 1) {
        size_t n = strlen(st.name);
        const char *ext = raw ? ".BIN" : ".SFL";
        if ((st.attr & SF_ATTR_DIR) || n < 4 || strcmp(st.name + n - 4, ext) != 0)
            continue;
        names = realloc(names, (nnames + 1) * sizeof *names);
        names[nnames++] = strdup(st.name);
        if (nnames >= MAXFILES)
            break;
    }
    sf_closedir(&d);
    if (err < 0) {
        fprintf(stderr, "%s: readdir: %s\n", img, sf_strerror(err));
        return 1;
    }
    qsort(names, nnames, sizeof *names, cmp_names);

    for (size_t fi = 0; fi < nnames; fi++) {
        char path[1024];
        struct sf_file f;
        struct sf_dec dec;
        struct sf_dec_event ev;
        struct rd r;
        int kind, have_header = 0;

        snprintf(path, sizeof path, "%s%s%s", dir, *dir ? "/" : "", names[fi]);
        err = sf_open(&vol, &f, path, SF_O_RDONLY);
        if (err) {
            bad("%s: open: %s", path, sf_strerror(err));
            continue;
        }
        file_bytes += sf_fsize(&f);
        if (raw) {
            uint8_t *b = dbuf;
            sf_ssize_t got;
            while ((got = sf_read(&f, b, SF_BLOCK_MAX)) > 0) {
                for (sf_ssize_t i = 0; i < got; i++) {
                    uint64_t pos = raw_bytes + (uint64_t)i;
                    uint8_t want = (uint8_t)((pos >> 3) >> (8 * (pos & 7)));
                    if (b[i] != want) {
                        bad("%s: byte %" PRIu64 " of the stream is 0x%02x, expected 0x%02x",
                            path, pos, b[i], want);
                        break;
                    }
                }
                raw_bytes += (uint64_t)got;
            }
            if (got < 0)
                bad("%s: read: %s", path, sf_strerror((int)got));
            sf_close(&f);
            continue;
        }
        if (windows)
            memset(seen_ch, 0, sizeof seen_ch);
        sf_dec_init(&dec, dbuf, SF_BLOCK_MAX);
        sf_dec_set_unpack(&dec, (uint8_t *)dbuf + SF_BLOCK_MAX, SF_UNPACK_MEM);
        r.f = &f;
        while ((kind = sf_dec_read(&dec, rd_fn, &r, &ev)) != SF_DEC_END) {
            if (kind < 0) {
                bad("%s: read: %s", path, sf_strerror(kind));
                break;
            }
            switch (kind) {
            case SF_DEC_HEADER:
                have_header = 1;
                if (fi == 0)
                    session = ev.hdr.session_id;
                else if (ev.hdr.session_id != session)
                    bad("%s: session id differs from the first file's", path);
                if (ev.hdr.file_index <= last_index)
                    bad("%s: file index %u after %u", path, ev.hdr.file_index, last_index);
                last_index = ev.hdr.file_index;
                break;
            case SF_DEC_DAMAGED:
            case SF_DEC_GAP:
            case SF_DEC_FOREIGN:
                damage++;
                if (clean)
                    bad("%s: damage event %d at block %" PRIu64 " (%s)", path, kind, ev.block,
                        kind == SF_DEC_DAMAGED ? sf_dec_reason_str(ev.reason) : "");
                break;
            case SF_DEC_RECORD: {
                const struct sf_rec *rc = &ev.rec;
                records++;
                if (rc->type == SF_REC_CAN) {
                    struct sf_can c;
                    if (sf_rec_get_can(rc, &c)) {
                        bad("%s: malformed CAN record", path);
                        break;
                    }
                    frames++;
                    frames_ch[rc->channel]++;
                    if (cd) {
                        char nm[64];
                        if (chname[rc->channel][0])
                            snprintf(nm, sizeof nm, "%s", chname[rc->channel]);
                        else
                            snprintf(nm, sizeof nm, "can%u", rc->channel);
                        /* to the nearest microsecond, as export's text formats give it
                         * (docs/EXPORT.md, Timestamps) */
                        uint64_t us = rc->ts / 1000u + (rc->ts % 1000u >= 500u);
                        fprintf(cd, "(%010" PRIu64 ".%06" PRIu64 ") %s ", us / 1000000u,
                                us % 1000000u, nm);
                        if (c.flags & SF_CAN_ERR)
                            fprintf(cd, "%08" PRIX32, c.id | 0x20000000u);
                        else if (c.flags & SF_CAN_EFF)
                            fprintf(cd, "%08" PRIX32, c.id);
                        else
                            fprintf(cd, "%03" PRIX32, c.id);
                        if (c.flags & SF_CAN_FD)
                            fprintf(cd, "##%X", 4u | ((c.flags & SF_CAN_BRS) ? 1u : 0u) |
                                                    ((c.flags & SF_CAN_ESI) ? 2u : 0u));
                        else
                            fputc('#', cd);
                        if (c.flags & SF_CAN_RTR) {
                            fputc('R', cd);
                            if (c.len)
                                fprintf(cd, "%u", c.len);
                        } else {
                            for (unsigned b = 0; b < c.len; b++)
                                fprintf(cd, "%02X", c.data[b]);
                        }
                        fputc('\n', cd);
                    }
                    if (rc->channel < gen) {
                        uint64_t k;
                        unsigned ch = rc->channel;
                        if (c.len != 8 || c.flags != 0) {
                            bad("%s: channel %u: frame with len %u flags 0x%x", path, ch, c.len,
                                c.flags);
                            break;
                        }
                        k = le64(c.data);
                        if (c.id != 0x100u + (uint32_t)(k & 15))
                            bad("%s: channel %u frame %" PRIu64 ": id 0x%x", path, ch, k, c.id);
                        if (!seen_ch[ch] && (windows || (start_any && !frames_ch_seen(ch))))
                            next_k[ch] = k;
                        if (seen_ch[ch] && rc->ts < last_ts[ch])
                            bad("%s: channel %u frame %" PRIu64 ": timestamp goes back", path, ch,
                                k);
                        if (k > next_k[ch]) {
                            gaps += k - next_k[ch];
                            if (!allow_drops)
                                bad("%s: channel %u: frames %" PRIu64 "..%" PRIu64 " missing",
                                    path, ch, next_k[ch], k - 1);
                        } else if (k < next_k[ch]) {
                            bad("%s: channel %u: frame %" PRIu64 " after %" PRIu64
                                " (duplicate or out of order)", path, ch, k, next_k[ch] - 1);
                        }
                        next_k[ch] = k + 1;
                        last_ts[ch] = rc->ts;
                        seen_ch[ch] = 1;
                    } else {
                        other_can++;
                    }
                } else if (rc->type == SF_REC_DROP) {
                    drop_records++;
                    if (rc->length >= 8)
                        drop_sum += le64(rc->body);
                } else if (rc->type == SF_REC_ANNOTATION) {
                    if (!annotations)
                        snprintf(first_annotation, sizeof first_annotation, "%.*s",
                                 (int)(rc->length < 190 ? rc->length : 190),
                                 (const char *)rc->body);
                    annotations++;
                } else if (rc->type == SF_REC_LATENCY) {
                    latency++;
                    if (rc->length >= 8 && (int64_t)le64(rc->body) > 0 &&
                        le64(rc->body) > lat_max)
                        lat_max = le64(rc->body);
                } else if (rc->type == SF_REC_SAMPLE) {
                    samples++;
                } else if (rc->type == SF_REC_CHANNEL) {
                    channel_recs++;
                    snprintf(chname[rc->channel], sizeof chname[0], "%.*s",
                             (int)(rc->length < 63 ? rc->length : 63), (const char *)rc->body);
                } else if (rc->type == SF_REC_META) {
                    meta_recs++;
                } else if (rc->type == SF_REC_TEXT) {
                    text++;
                }
                break;
            }
            default:
                break;
            }
        }
        blocks += sf_dec_stats(&dec)->blocks_ok;
        if (!have_header)
            bad("%s: no valid header block", path);
        sf_close(&f);
    }
    sf_unmount(&vol);
    sf_filebd_close(&fbd);

    if (gen && generated != UINT64_MAX) {
        for (unsigned c = 0; c < gen; c++) {
            uint64_t quota = generated / gen + (c < generated % gen);
            if (next_k[c] > quota)
                bad("channel %u: frame %" PRIu64 " beyond the %" PRIu64 " generated", c,
                    next_k[c] - 1, quota);
            else
                gaps += quota - next_k[c];
        }
    }
    if (cd)
        fclose(cd);
    if (gen && allow_drops && gaps != drop_sum)
        bad("frames missing from the sequences: %" PRIu64 ", DROP records account for %" PRIu64,
            gaps, drop_sum);
    if (expect_frames != UINT64_MAX && frames != expect_frames)
        bad("%" PRIu64 " frames decoded, expected %" PRIu64, frames, expect_frames);
    if (expect_bytes != UINT64_MAX && raw_bytes != expect_bytes)
        bad("%" PRIu64 " raw bytes, expected %" PRIu64, raw_bytes, expect_bytes);
    if (nnames == 0)
        bad("no log files in '%s'", *dir ? dir : "/");

    printf("{\"files\": %zu, \"file_bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
           ", \"damage\": %" PRIu64 ", \"records\": %" PRIu64 ", \"frames\": %" PRIu64
           ", \"other_can\": %" PRIu64 ", \"drop_records\": %" PRIu64 ", \"drop_sum\": %" PRIu64
           ", \"gaps\": %" PRIu64 ", \"annotations\": %" PRIu64 ", \"latency\": %" PRIu64
           ", \"latency_max_ns\": %" PRIu64 ", \"samples\": %" PRIu64 ", \"channel_records\": %"
           PRIu64 ", \"meta\": %" PRIu64 ", \"text\": %" PRIu64 ", \"raw_bytes\": %" PRIu64
           ", \"first_annotation\": \"", nnames, file_bytes, blocks, damage, records, frames,
           other_can, drop_records, drop_sum, gaps, annotations, latency, lat_max, samples,
           channel_recs, meta_recs, text, raw_bytes);
    for (const char *p = first_annotation; *p; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            putchar(*p);
    printf("\", \"per_channel\": [");
    for (unsigned c = 0; c < (gen ? gen : 1); c++)
        printf("%s%" PRIu64, c ? ", " : "", frames_ch[c]);
    printf("], \"names\": [");
    for (size_t i = 0; i < nnames; i++)
        printf("%s\"%s\"", i ? ", " : "", names[i]);
    printf("], \"ok\": %s}\n", errors ? "false" : "true");
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    free(probe);
    free(cache);
    free(upcase);
    free(dbuf);
    return errors ? 1 : 0;
}
