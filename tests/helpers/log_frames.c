/* log_frames [-v] FILE: the records of a streamfat log file on the host, as the library's decoder
 * gives them, one per line, for the export tests to compare exported files against:
 *
 *   start START_NS                              the file header's start time
 *   chan CH NAME                                a CHANNEL record
 *   can TS_NS CH ID FLAGS LEN HEX               a CAN record (id, SF_CAN_* flags in hex)
 *   rec TYPE TS_NS CH HEX                       any other data record (type in hex)
 *
 * With -v (the CAN test VM, tests/vm), DROP and ANNOTATION records decoded instead:
 *   drop TS_NS CH FLAGS COUNT FIRST_TS LAST_TS  (flags in hex: SF_DROP_*)
 *   note TS_NS CH FLAGS TEXT                    (flags in hex: SF_ANNOT_*)
 *
 * Damage events go to stderr; exit 0 when the file decoded cleanly, 1 otherwise. */
#include "streamfat/decode.h"
#include "streamfat/block_pack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sf_ssize_t rd(void *ctx, void *buf, size_t n)
{
    size_t r = fread(buf, 1, n, ctx);
    return r || !ferror(ctx) ? (sf_ssize_t)r : SF_EIO;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void hex(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    if (!n)
        putchar('-');
}

int main(int argc, char **argv)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    FILE *f;
    void *buf = malloc(SF_BLOCK_MAX + SF_UNPACK_MEM);
    int k, verbose = argc == 3 && !strcmp(argv[1], "-v");
    const char *path = argv[argc - 1];

    if (argc != 2 + verbose || !buf) {
        fprintf(stderr, "usage: log_frames [-v] FILE\n");
        return 2;
    }
    if (!(f = fopen(path, "rb"))) {
        perror(path);
        return 1;
    }
    sf_dec_init(&d, buf, SF_BLOCK_MAX);
    sf_dec_set_unpack(&d, (uint8_t *)buf + SF_BLOCK_MAX, SF_UNPACK_MEM);
    while ((k = sf_dec_read(&d, rd, f, &ev)) != SF_DEC_END) {
        const struct sf_rec *r = &ev.rec;
        struct sf_can c;
        if (k < 0) {
            fprintf(stderr, "log_frames: read error %d\n", k);
            return 1;
        }
        if (ev.kind == SF_DEC_HEADER) {
            printf("start %llu\n", (unsigned long long)ev.hdr.start_ts);
        } else if (ev.kind != SF_DEC_RECORD) {
            fprintf(stderr, "log_frames: damage event %d at block %llu\n", ev.kind,
                    (unsigned long long)ev.block);
        } else if (r->type == SF_REC_CHANNEL) {
            printf("chan %u %.*s\n", r->channel, (int)r->length, (const char *)r->body);
        } else if (r->type == SF_REC_CAN) {
            if (sf_rec_get_can(r, &c)) {
                fprintf(stderr, "log_frames: malformed CAN record\n");
                return 1;
            }
            printf("can %llu %u %x %x %u ", (unsigned long long)r->ts, r->channel, c.id,
                   c.flags, c.len);
            hex(c.data, (c.flags & SF_CAN_RTR) ? 0 : c.len);
            putchar('\n');
        } else if (verbose && r->type == SF_REC_DROP && r->length >= 24) {
            printf("drop %llu %u %x %llu %llu %llu\n", (unsigned long long)r->ts, r->channel,
                   r->flags, (unsigned long long)le64(r->body),
                   (unsigned long long)le64(r->body + 8), (unsigned long long)le64(r->body + 16));
        } else if (verbose && r->type == SF_REC_ANNOTATION) {
            printf("note %llu %u %x %.*s\n", (unsigned long long)r->ts, r->channel, r->flags,
                   (int)r->length, (const char *)r->body);
        } else if (r->type != SF_REC_META) {
            printf("rec %x %llu %u ", r->type, (unsigned long long)r->ts, r->channel);
            hex(r->body, r->length);
            putchar('\n');
        }
    }
    fclose(f);
    free(buf);
    return sf_dec_stats(&d)->damage_events ? 1 : 0;
}
