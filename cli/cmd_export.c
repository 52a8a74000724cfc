/* streamfat export: decode a log file (docs/FORMAT.md) from a volume or from the host into
 * another format. candump -L lines for now: frames only, everything else counted on stderr.
 *
 * candump -L, as can-utils writes and reads it:
 *   (1700000000.123456) can0 123#11223344           11-bit id: 3 hex digits
 *   (1700000000.123456) can0 1ABCDEF0#11            29-bit id: 8 hex digits
 *   (1700000000.123456) can0 123#R   123#R5         remote frame, with its length if > 0
 *   (1700000000.123456) can0 123##3112233           CAN FD: '##', a hex digit of flags
 *                                                   (1 BRS, 2 ESI), the data
 *   (1700000000.123456) can0 20000080#0000000000000000   error frame: the id is
 *                                                   CAN_ERR_FLAG | error class, 8 digits
 * Hex is upper case; the interface name is the channel's (CHANNEL records), else can<N>. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "target.h"
#include "streamfat/decode.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAN_ERR_FLAG 0x20000000u
#define CAN_ERR_MASK 0x1FFFFFFFu
#define IFNAME_MAX   32

static const char export_help[] =
"NAME\n"
"  streamfat export - decode a log file into another format\n"
"\n"
"SYNOPSIS\n"
"  streamfat export [--format candump] [-o OUT] [--partition N] TARGET PATH\n"
"  streamfat export [--format candump] [-o OUT] FILE\n"
"\n"
"DESCRIPTION\n"
"  Decodes the log file PATH on TARGET (an image file or block device, opened read-only),\n"
"  or the log file FILE on the host ('-' is standard input), and writes it to standard\n"
"  output or to OUT.\n"
"\n"
"  candump writes candump -L lines, '(seconds.microseconds) iface frame', as can-utils'\n"
"  candump -L logs them and canplayer, python-can and Wireshark read them: CAN 2.0 with\n"
"  11- and 29-bit ids, remote frames (123#R), error frames (20000080#...), CAN FD (123##1...)\n"
"  with BRS and ESI. The interface is the channel's name from the log's CHANNEL records\n"
"  (can0 ... otherwise). Other records (text, samples, latency, DROP, annotations) have\n"
"  no candump form: they are skipped and counted on standard error, DROP records with the\n"
"  number of frames they account for.\n"
"\n"
"  Damage is reported on standard error and skipped: blocks failing their CRC, gaps in\n"
"  the block sequence, blocks of another file. Every intact block is still exported.\n"
"\n"
"OPTIONS\n"
"  -f, --format FMT  output format: candump (the default)\n"
"  -o, --output OUT  write to OUT instead of standard output\n"
"  --partition N     use the Nth partition of TARGET (from 1)\n"
"  -h, --help        show this help\n"
"\n"
"EXAMPLES\n"
"  streamfat export --format candump sd.img LOG00001.SFL > run1.log\n"
"  streamfat export -o run1.log LOG00001.SFL\n"
"  canplayer -I run1.log\n"
"\n"
"EXIT STATUS\n"
"  0 the file decoded cleanly, 1 damage was found (the intact part is still written) or an\n"
"  error, 2 wrong usage.\n";

static const struct option longopts[] = {
    { "format", required_argument, NULL, 'f' },
    { "output", required_argument, NULL, 'o' },
    { "partition", required_argument, NULL, 'P' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
};

struct exporter {
    const char *src;               /* names the input in messages */
    FILE *out;
    char ifname[256][IFNAME_MAX];  /* "" until a CHANNEL record names it */
    uint64_t frames, skipped[256], drop_lost, malformed;
};

static const char hexu[] = "0123456789ABCDEF";

static char *put_hex(char *p, uint32_t v, int digits)
{
    for (int i = digits - 1; i >= 0; i--)
        *p++ = hexu[(v >> (4 * i)) & 0xF];
    return p;
}

static char *put_dec(char *p, uint64_t v, int min_digits)
{
    char tmp[24];
    int n = 0;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < min_digits)
        tmp[n++] = '0';
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* A CHANNEL record's name as an interface token: printable, no spaces, bounded. */
static void set_ifname(struct exporter *x, const struct sf_rec *r)
{
    char *d = x->ifname[r->channel];
    size_t n = 0;

    for (size_t i = 0; i < r->length && n < IFNAME_MAX - 1; i++) {
        uint8_t c = r->body[i];
        d[n++] = (c > 0x20 && c < 0x7F && c != '(' && c != ')' && c != '#') ? (char)c : '_';
    }
    d[n] = '\0';
}

static int put_frame(struct exporter *x, const struct sf_rec *r, const struct sf_can *c)
{
    char line[64 + IFNAME_MAX + 2 * 64], *p = line;
    const char *ifn = x->ifname[r->channel];

    *p++ = '(';
    p = put_dec(p, r->ts / 1000000000u, 10);
    *p++ = '.';
    p = put_dec(p, r->ts % 1000000000u / 1000u, 6);
    *p++ = ')';
    *p++ = ' ';
    if (*ifn) {
        size_t n = strlen(ifn);
        memcpy(p, ifn, n);
        p += n;
    } else {
        memcpy(p, "can", 3);
        p = put_dec(p + 3, r->channel, 1);
    }
    *p++ = ' ';
    if (c->flags & SF_CAN_ERR)
        p = put_hex(p, CAN_ERR_FLAG | (c->id & CAN_ERR_MASK), 8);
    else if (c->flags & SF_CAN_EFF)
        p = put_hex(p, c->id & CAN_ERR_MASK, 8);
    else
        p = put_hex(p, c->id, 3);
    *p++ = '#';
    if (c->flags & SF_CAN_FD) {
        *p++ = '#';
        *p++ = hexu[((c->flags & SF_CAN_BRS) ? 1 : 0) | ((c->flags & SF_CAN_ESI) ? 2 : 0)];
    } else if (c->flags & SF_CAN_RTR) {
        *p++ = 'R';
        if (c->len)
            *p++ = hexu[c->len & 0xF];
    }
    if (!(c->flags & SF_CAN_RTR))
        for (unsigned i = 0; i < c->len; i++) {
            *p++ = hexu[c->data[i] >> 4];
            *p++ = hexu[c->data[i] & 0xF];
        }
    *p++ = '\n';
    return fwrite(line, 1, (size_t)(p - line), x->out) == (size_t)(p - line) ? 0 : -1;
}

static const char *type_name(unsigned t)
{
    switch (t) {
    case SF_REC_SAMPLE:     return "SAMPLE";
    case SF_REC_TEXT:       return "TEXT";
    case SF_REC_LATENCY:    return "LATENCY";
    case SF_REC_DROP:       return "DROP";
    case SF_REC_ANNOTATION: return "ANNOTATION";
    default:                return NULL;
    }
}

static void block_range(char *buf, size_t n, uint64_t first, uint64_t count)
{
    if (count > 1)
        snprintf(buf, n, "blocks %" PRIu64 "-%" PRIu64, first, first + count - 1);
    else
        snprintf(buf, n, "block %" PRIu64, first);
}

/* One event; returns -1 when the output cannot be written. */
static int handle(struct exporter *x, const struct sf_dec_event *ev)
{
    char where[64];

    switch (ev->kind) {
    case SF_DEC_RECORD: {
        const struct sf_rec *r = &ev->rec;
        struct sf_can c;
        if (r->type == SF_REC_CAN) {
            if (sf_rec_get_can(r, &c)) {
                x->malformed++;
                return 0;
            }
            x->frames++;
            return put_frame(x, r, &c);
        }
        if (r->type == SF_REC_CHANNEL)
            set_ifname(x, r);
        else if (r->type != SF_REC_META)
            x->skipped[r->type]++;
        if (r->type == SF_REC_DROP && r->length >= 8) {
            const uint8_t *b = r->body;
            uint64_t cnt = 0;
            for (int i = 7; i >= 0; i--)
                cnt = cnt << 8 | b[i];
            x->drop_lost += cnt;
        }
        return 0;
    }
    case SF_DEC_DAMAGED:
        if (ev->reason == SF_DEC_NO_BLOCK) {
            cli_err("%s: not a streamfat log: %s in %" PRIu64 " bytes", x->src,
                    sf_dec_reason_str(ev->reason), ev->length);
        } else {
            block_range(where, sizeof where, ev->block, ev->count);
            cli_err("%s: %s damaged (%s), skipped", x->src, where,
                    sf_dec_reason_str(ev->reason));
        }
        return 0;
    case SF_DEC_GAP:
        cli_err("%s: block %" PRIu64 ": gap in the block sequence: seq %" PRIu64
                " where %" PRIu64 " was due", x->src, ev->block, ev->seq, ev->seq_expected);
        return 0;
    case SF_DEC_FOREIGN:
        block_range(where, sizeof where, ev->block, ev->count);
        cli_err("%s: %s belong to another file (file id %016" PRIx64 "), skipped", x->src,
                where, ev->file_id);
        return 0;
    default:
        return 0;
    }
}

static void report_skipped(const struct exporter *x)
{
    char buf[512];
    size_t n = 0;
    uint64_t total = 0;

    for (unsigned t = 0; t < 256; t++) {
        const char *name;
        char other[24];
        if (!x->skipped[t])
            continue;
        total += x->skipped[t];
        name = type_name(t);
        if (!name) {
            snprintf(other, sizeof other, "type 0x%02X", t);
            name = other;
        }
        if (n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s: %" PRIu64, n ? ", " : "",
                                  name, x->skipped[t]);
        if (t == SF_REC_DROP && n < sizeof buf)
            n += (size_t)snprintf(buf + n, sizeof buf - n, " accounting for %" PRIu64
                                  " lost records", x->drop_lost);
    }
    if (total)
        fprintf(stderr, "export: skipped %" PRIu64 " non-CAN records (%s)\n", total, buf);
}

/* Read callbacks for the decoder. */
static sf_ssize_t read_fd(void *ctx, void *buf, size_t n)
{
    int fd = *(int *)ctx;
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0)
            return r;
        if (errno != EINTR)
            return SF_EIO;
    }
}

static sf_ssize_t read_vol(void *ctx, void *buf, size_t n)
{
    return sf_read(ctx, buf, n);
}

/* Decode everything; 0 clean, CLI_ERR on damage or an error. */
static int run(struct exporter *x, sf_dec_read_fn fn, void *ctx)
{
    struct sf_dec d;
    struct sf_dec_event ev;
    void *buf = malloc(SF_BLOCK_MAX);
    int k, rc = CLI_OK;

    if (!buf) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    sf_dec_init(&d, buf, SF_BLOCK_MAX);
    while ((k = sf_dec_read(&d, fn, ctx, &ev)) != SF_DEC_END) {
        if (k < 0) {
            cli_err("%s: read failed: %s", x->src, sf_strerror(k));
            rc = CLI_ERR;
            break;
        }
        if (handle(x, &ev)) {
            cli_err("write failed: %s", strerror(errno));
            rc = CLI_ERR;
            break;
        }
    }
    free(buf);
    report_skipped(x);
    if (x->malformed)
        cli_err("%s: %" PRIu64 " malformed CAN records skipped", x->src, x->malformed);
    if (sf_dec_stats(&d)->damage_events || x->malformed)
        rc = CLI_ERR;
    return rc;
}

int cmd_export(int argc, char **argv)
{
    const char *out_path = NULL;
    uint32_t partition = 0;
    struct exporter *x;
    int c, rc, nargs;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "candump") != 0)
                return cli_usage("unknown format '%s' (known: candump)", optarg);
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'P':
            if (cli_parse_partition(optarg, &partition))
                return CLI_USAGE;
            break;
        case 'h':
            fputs(export_help, stdout);
            return CLI_OK;
        default:
            return cli_bad_option(c, argv);
        }
    }
    nargs = argc - optind;
    if (nargs < 1)
        return cli_usage("missing FILE, or TARGET PATH");
    if (nargs > 2)
        return cli_usage("unexpected argument '%s'", argv[optind + 2]);
    if (nargs == 1 && partition)
        return cli_usage("--partition needs TARGET PATH");

    x = calloc(1, sizeof *x);
    if (!x) {
        cli_err("out of memory");
        return CLI_ERR;
    }
    x->out = stdout;
    if (out_path && !(x->out = fopen(out_path, "w"))) {
        cli_err("%s: %s", out_path, strerror(errno));
        free(x);
        return CLI_ERR;
    }
    setvbuf(x->out, NULL, _IOFBF, 1 << 20);

    if (nargs == 1) {
        const char *file = argv[optind];
        int fd = strcmp(file, "-") == 0 ? STDIN_FILENO : open(file, O_RDONLY | O_CLOEXEC);
        x->src = strcmp(file, "-") == 0 ? "standard input" : file;
        if (fd < 0) {
            cli_err("%s: %s", file, strerror(errno));
            rc = CLI_ERR;
        } else {
            rc = run(x, read_fd, &fd);
            if (fd != STDIN_FILENO)
                close(fd);
        }
    } else {
        struct target t;
        struct sf_file f;
        const char *path = argv[optind + 1];
        int err;
        x->src = path;
        if (target_open(&t, argv[optind], TARGET_RDONLY, partition)) {
            rc = CLI_ERR;
        } else {
            if ((err = sf_open(&t.vol, &f, path, SF_O_RDONLY))) {
                cli_err("%s: %s: %s", t.path, path, sf_strerror(err));
                rc = CLI_ERR;
            } else {
                rc = run(x, read_vol, &f);
                sf_close(&f);
            }
            if (target_close(&t))
                rc = CLI_ERR;
        }
    }
    c = fflush(x->out);
    if (x->out != stdout && fclose(x->out))
        c = EOF;
    if (c) {
        cli_err("%s: write failed: %s", out_path ? out_path : "standard output",
                strerror(errno));
        rc = CLI_ERR;
    }
    free(x);
    return rc;
}
