/* streamfat log: record a source into log files on a volume (include/streamfat/log.h,
 * docs/FORMAT.md). Producers (sources/) append from their own threads; a writer thread
 * (log_writer.c) runs sf_log_service and is the only one touching the volume; the main
 * thread parses options, handles signals, limits and the status line, and reports.
 *
 * Sections: help and options; signals; clocks and names; options; the command. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli.h"
#include "log_config.h"
#include "log_control.h"
#include "log_writer.h"
#include "log_sweep.h"
#include "sources/log_sources.h"
#include "common/target.h"
#include "common/units.h"
#include "common/keyfile.h"
#include "streamfat/cipher_sodium.h"

#include "streamfat/log.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RING (64ull << 20)
#define DEFAULT_QD 4u
#define STATUS_NS 500000000ull       /* status line refresh */

int cmd_log(int argc, char **argv);

static const char help[] =
"NAME\n"
"  streamfat log - record data into log files on a volume\n"
"\n"
"SYNOPSIS\n"
"  streamfat log --source SOURCE [OPTIONS] TARGET\n"
"\n"
"DESCRIPTION\n"
"  Records what SOURCE delivers into files LOG00001.SFL, LOG00002.SFL ... (raw mode:\n"
"  .BIN) in the root of the volume on TARGET (an image file or a block device), numbering\n"
"  after the highest such file already there. The format is docs/FORMAT.md; decode with\n"
"  'streamfat export'. Producers append to a ring in memory without ever waiting; a\n"
"  writer thread moves full blocks to the device with --qd requests in flight. When the\n"
"  ring is full a record is dropped, counted, and a DROP record in the file says how many\n"
"  and when. Runs until the source ends, a limit is reached, or Ctrl-C / SIGTERM: then it\n"
"  writes everything still in the ring, checkpoints, closes and unmounts.\n"
"\n"
"SOURCES\n"
"  gen:can[,rate=N][,channels=N]\n"
"                   synthetic CAN: frame k (from 0) of each channel has id 0x100 + (k mod 16)\n"
"                   and k as 8 little-endian data bytes. rate: frames/s per channel, paced\n"
"                   with absolute sleeps (timestamps: the scheduled times); no rate: as\n"
"                   fast as possible (timestamps read every 16 frames). channels: producer\n"
"                   threads, one per channel, each with its own k.\n"
"  gen:raw          with --raw: the bytes of u64 little-endian words 0, 1, 2 ... as fast\n"
"                   as the device takes them (this source waits for ring space)\n"
"  stdin            candump -L lines '(sec.usec) iface id#data' (also id#R, id##Fdata for\n"
"                   CAN FD, error frames); timestamps from the lines; with --raw: bytes.\n"
"                   Waits for ring space rather than drop. Ends at end of input.\n"
"  file:PATH        replay a candump -L, Vector ASC, Vector BLF or ASAM MDF 4 (MF4) log\n"
"                   (told apart by content; BLF stored or zlib-compressed) at its\n"
"                   recorded speed (--fast: at once); records keep their original\n"
"                   timestamps, channels and flags (ASC/BLF channel N is interface\n"
"                   can<N-1>; their start time is local time, TZ). A damaged file ends\n"
"                   the run with an error, the frames before the damage logged. Ends at\n"
"                   the end of the file. PATH must be a regular file (it is read twice);\n"
"                   a pipe or FIFO is refused.\n"
"  can:IFACE[,IFACE...]\n"
"                   SocketCAN raw sockets, CAN FD enabled, the kernel's receive times\n"
"                   (SO_TIMESTAMPNS), error frames (--can-errors); one thread and channel\n"
"                   per interface. Frames the kernel drops (a full socket buffer:\n"
"                   --can-rcvbuf) become DROP records on their interface's channel and\n"
"                   exit status 3; an interface that goes down and comes back gets an\n"
"                   ANNOTATION record each time, the others go on (docs/LOG.md).\n"
"  udp:[HOST:]PORT  each datagram one SAMPLE record; HOST defaults to 127.0.0.1\n"
"                   (PORT 0: a free port, printed on stderr: 'udp: listening on H:P')\n"
"  latency:PERIOD   a cyclictest-style probe: sleep to absolute CLOCK_MONOTONIC times\n"
"                   every PERIOD and record how late each wake-up was (LATENCY records)\n"
"\n"
"OPTIONS\n"
"  --source SRC         what to record (required)\n"
"  --filter [!]ID[/MASK][@CHANNEL]  CAN frames: keep those with (id & MASK) == (ID & MASK);\n"
"                       repeat for more; '!' rejects (a matching reject wins; with no\n"
"                       accept rule the rest is kept); @CHANNEL: that channel only (a\n"
"                       number, or the name the source gives it: can0, gen1).\n"
"                       Hexadecimal. Run by the core's control stage; counted\n"
"  --prescale ID[/MASK]:N|T|change[/BYTEMASK]  keep 1 in N of those frames, at most one\n"
"                       per duration T (100ms), or only when the data changed under\n"
"                       BYTEMASK (hex bytes, first data byte first); counted, never dropped\n"
"  --signal NAME=ID:START:LENGTH[:le|be][:u|s][:SCALE[:OFFSET]]  a DBC signal (ID hex)\n"
"  --start 'NAME OP VALUE' | can:ID   start logging when it holds (OP: >= > <= < ==);\n"
"                       with --start logging begins stopped; paused frames are counted\n"
"  --stop 'NAME OP VALUE' | can:ID    stop logging (the stop frame is not logged; stop\n"
"                       wins when both hold); a stop checkpoints the file\n"
"  --rotate-on-start    a start after a stop begins a new file\n"
"  --trigger RULE       flight recorder trigger: can:ID/MASK (a matching frame),\n"
"                       latency>DURATION (a latency sample over it) or\n"
"                       'signal:NAME OP VALUE'; repeatable\n"
"  --trigger-holdoff T  a signal trigger fires at most once per T (record time)\n"
"  --config FILE.json   options from a file: each long option a key (TARGET: \"target\"),\n"
"                       flags true/false, repeatable ones a list; the command line wins\n"
"                       (a repeatable option there replaces the file's list).\n"
"                       docs/log-config.schema.json\n"
"  --print-config       print the effective options as JSON and exit\n"
"  --pre T|SIZE         flight recorder: keep this much before a trigger (time, or bytes\n"
"                       with a size unit, at least one block); only trigger files are\n"
"                       written\n"
"  --post T             flight recorder: and record this long after it, more than 0 (a\n"
"                       trigger in the post window extends it). SIGUSR1 is a trigger too.\n"
"  --split-size SIZE    start a new file at this size (at least 2 blocks: 128K with the\n"
"                       default --chunk)\n"
"  --split-time T       start a new file after this long (at least 100ms)\n"
"  --cyclic             when the volume is full, delete this logger's oldest files\n"
"  --sync-interval T|SIZE  checkpoint (data and size durable) every T (default 1s; more\n"
"                       than 0) or every SIZE bytes (at least one block); give both to\n"
"                       use both\n"
"  --ring SIZE          ring memory (default 64M; with --pre SIZE: that plus 8 blocks):\n"
"                       a multiple of --chunk from 4 blocks to 2G\n"
"  --chunk SIZE         block size, a power of two from 512 to 1M (default 64K)\n"
"  --compress[=LEVEL]   compressed record blocks (docs/FORMAT.md): each block holds the\n"
"                       records of several, coded against the previous frame of their\n"
"                       id; every reader of streamfat reads them. LEVEL: 1 (the only\n"
"                       one so far, the default). Not with --raw or --pre/--post\n"
"  --qd N               device requests in flight, 1..64 (default 4)\n"
"  --duration T         stop after T (more than 0)\n"
"  --max-records N      stop after N records (raw: see --max-bytes)\n"
"  --max-bytes SIZE     stop after SIZE bytes (records: as stored, headers included)\n"
"  --mkfs TYPE          format TARGET first: exfat, fat32, fat16 or auto. A TARGET that\n"
"                       already holds a volume, a partition table or other data is\n"
"                       refused (exit 1, as 'streamfat mkfs'): to log onto it again,\n"
"                       leave out --mkfs; to erase it, add --force\n"
"  -F, --force          with --mkfs: format even over a volume or other data\n"
"  -s, --size SIZE      with --mkfs: create TARGET as an image file of SIZE (256M, 1G,\n"
"                       ...; as 'streamfat mkfs -s') if it does not exist\n"
"  --dir DIR            write the files into DIR (created if missing)\n"
"  --name PATTERN       file names by strftime(3) of the file's start time (local), %n\n"
"                       the file number (5 digits); e.g. 'CAN_%Y%m%d_%H%M%S_%n.SFL'.\n"
"                       Refused at start when two files would get the same name (no %n)\n"
"                       or a name FAT/exFAT cannot hold (: / \\ * ? \" < > |, a dot or space\n"
"                       at the end)\n"
"  --device-id NAME     a META record device=NAME in every file's header (which logger\n"
"                       wrote it: streamfat-lake partitions by it); 1..64 bytes, no '/'\n"
"  --encrypt-to PUBKEY  seal every file (docs/LOG.md, \"Sealed logs\"): a random key per\n"
"                       file, sealed to PUBKEY (NAME.pub from 'streamfat keygen'), every\n"
"                       record block encrypted (XChaCha20-Poly1305); only NAME.key reads\n"
"                       them (export --key). The logger keeps no key of a finished file\n"
"  --encrypt-aead NAME  the blocks' AEAD: xchacha20-poly1305 (default) or aes-256-gcm\n"
"                       (needs AES-NI here, and libsodium readers need it too)\n"
"  --raw                raw mode: bytes in, bytes out, no framing\n"
"  --fast               file: replay without waiting\n"
"  --can-rcvbuf SIZE    can: each socket's receive buffer as the kernel counts it (about\n"
"                       800 bytes per classic frame); default: the ring's worth of frames,\n"
"                       1M to 64M. Above net.core.rmem_max it needs root (SO_RCVBUFFORCE);\n"
"                       without, the kernel caps it and a warning says so\n"
"  --can-errors CLASSES  can: the error frames to log: all (default), none, or a hex mask\n"
"                       of CAN_ERR_* classes (linux/can/error.h; 4 = controller problems)\n"
"  --send ID#DATA@PERIOD[+DELAY]@IFACE  can: send this frame (candump notation, ID##FDATA\n"
"                       for CAN FD) on IFACE every PERIOD (0 or empty: once), the first\n"
"                       DELAY after the start; repeatable, up to 256 per interface. Each\n"
"                       sent frame is logged from the kernel's echo with the TX flag and\n"
"                       the time the driver confirmed it. IFACE must be one of can:'s.\n"
"                       PERIOD 'on:can:ID/MASK' (the condition of --trigger can:): once\n"
"                       each time a received frame matches, DELAY after it\n"
"                       Nothing is ever sent without --send\n"
"  --poll obd:PID[,PID...]@PERIOD@IFACE  can: ask OBD-II mode 01 PIDs (2 hex digits;\n"
"                       4 give the mode: 0902 is the VIN) every PERIOD on the functional\n"
"                       id 7DF (obd:18DB33F1:PIDS for 29-bit), answers from 7E8-7EF\n"
"                       (18DAF1xx); repeatable\n"
"  --poll uds:TXID/RXID:DID[,DID...]@PERIOD@IFACE  can: UDS ReadDataByIdentifier (22)\n"
"                       of each DID (4 hex digits, or 22 and 4) from TXID, answers on\n"
"                       RXID (8 hex digits: 29-bit). The items of a poll go one after\n"
"                       another, the first every PERIOD; multi-frame answers get ISO-TP\n"
"                       flow control. Requests and answers are logged like any frame;\n"
"                       each poll's answers, timeouts, negative and late answers are in\n"
"                       the statistics\n"
"  --poll-timeout DURATION  how long an answer may take (default 100ms; 0x7F..78\n"
"                       response pending gives 5s more)\n"
"  --poll-bs N          flow control block size (default 0: no limit)\n"
"  --poll-stmin DURATION  flow control STmin (default 0; 100us-900us or 1ms-127ms)\n"
"  --listen-only IFACE[,IFACE...]  can: these interfaces must be in listen-only mode\n"
"                       (the logger checks, and refuses to start with the ip command to\n"
"                       run when they are not); --send on them is refused\n"
"  --measure            time every append (append latency histogram; costs two clock\n"
"                       reads per record)\n"
"  --json               print the final statistics as one JSON object on stdout\n"
"  --no-direct          buffered I/O on the target (no O_DIRECT)\n"
"  --partition N        use the Nth partition (from 1)\n"
"  -q, --quiet          no status line and no summary\n"
"  -h, --help           show this help\n"
"\n"
"  Values out of range are refused with the range (exit 2), never rounded or clamped.\n"
"  On a terminal, a status line on stderr shows elapsed time, MB written, MB/s,\n"
"  records/s, drops, ring fill and the worst device write latency.\n"
"\n"
"EXAMPLES\n"
"  streamfat log --mkfs exfat --size 1G --source gen:can,rate=1000000 --duration 10 disk.img\n"
"  candump -L can0 | streamfat log --source stdin --split-size 256M /dev/mmcblk0\n"
"  streamfat log --source can:can0,can1 --pre 10s --post 5s --trigger can:7DF/7FF disk.img\n"
"  streamfat log --source latency:1ms --trigger 'latency>100us' --pre 2s --post 1s disk.img\n"
"\n"
"EXIT STATUS\n"
"  0 everything accepted was written and nothing was dropped; 3 records were dropped, by\n"
"  the ring or (can:) by the kernel (the log is complete and consistent, DROP records\n"
"  included); 1 an error, also when the source gave not one usable record (random bytes,\n"
"  candump without -L: the first unreadable line is quoted; empty input; nothing\n"
"  received): the run's empty log files are removed then; 2 wrong usage.\n";

enum {
    OPT_FILTER = 256, OPT_TRIGGER, OPT_PRE, OPT_POST, OPT_SPLIT_SIZE, OPT_SPLIT_TIME,
    OPT_CYCLIC, OPT_SYNC, OPT_RING, OPT_CHUNK, OPT_QD, OPT_DURATION, OPT_MAX_RECORDS,
    OPT_MAX_BYTES, OPT_MKFS, OPT_DIR, OPT_NAME, OPT_RAW, OPT_FAST, OPT_MEASURE, OPT_JSON,
    OPT_NO_DIRECT, OPT_SIZE, OPT_DEVICE_ID, OPT_PRESCALE, OPT_SIGNAL, OPT_START, OPT_STOP,
    OPT_HOLDOFF, OPT_ROTATE_ON_START, OPT_CONFIG, OPT_PRINT_CONFIG, OPT_SOURCE,
    OPT_CAN_RCVBUF, OPT_CAN_ERRORS, OPT_SEND, OPT_LISTEN_ONLY, OPT_COMPRESS,
    OPT_POLL, OPT_POLL_TIMEOUT, OPT_POLL_BS, OPT_POLL_STMIN,
    OPT_ENCRYPT_TO,
    OPT_ENCRYPT_AEAD,
};

static const struct option longopts[] = {
    { "source", required_argument, NULL, OPT_SOURCE },
    { "filter", required_argument, NULL, OPT_FILTER },
    { "trigger", required_argument, NULL, OPT_TRIGGER },
    { "pre", required_argument, NULL, OPT_PRE },
    { "post", required_argument, NULL, OPT_POST },
    { "split-size", required_argument, NULL, OPT_SPLIT_SIZE },
    { "split-time", required_argument, NULL, OPT_SPLIT_TIME },
    { "cyclic", no_argument, NULL, OPT_CYCLIC },
    { "sync-interval", required_argument, NULL, OPT_SYNC },
    { "ring", required_argument, NULL, OPT_RING },
    { "chunk", required_argument, NULL, OPT_CHUNK },
    { "compress", optional_argument, NULL, OPT_COMPRESS },
    { "qd", required_argument, NULL, OPT_QD },
    { "duration", required_argument, NULL, OPT_DURATION },
    { "max-records", required_argument, NULL, OPT_MAX_RECORDS },
    { "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
    { "mkfs", required_argument, NULL, OPT_MKFS },
    { "size", required_argument, NULL, 's' },
    { "force", no_argument, NULL, 'F' },
    { "dir", required_argument, NULL, OPT_DIR },
    { "name", required_argument, NULL, OPT_NAME },
    { "device-id", required_argument, NULL, OPT_DEVICE_ID },
    { "encrypt-to", required_argument, NULL, OPT_ENCRYPT_TO },
    { "encrypt-aead", required_argument, NULL, OPT_ENCRYPT_AEAD },
    { "raw", no_argument, NULL, OPT_RAW },
    { "fast", no_argument, NULL, OPT_FAST },
    { "can-rcvbuf", required_argument, NULL, OPT_CAN_RCVBUF },
    { "can-errors", required_argument, NULL, OPT_CAN_ERRORS },
    { "send", required_argument, NULL, OPT_SEND },
    { "listen-only", required_argument, NULL, OPT_LISTEN_ONLY },
    { "poll", required_argument, NULL, OPT_POLL },
    { "poll-timeout", required_argument, NULL, OPT_POLL_TIMEOUT },
    { "poll-bs", required_argument, NULL, OPT_POLL_BS },
    { "poll-stmin", required_argument, NULL, OPT_POLL_STMIN },
    { "measure", no_argument, NULL, OPT_MEASURE },
    { "json", no_argument, NULL, OPT_JSON },
    { "no-direct", no_argument, NULL, OPT_NO_DIRECT },
    { "prescale", required_argument, NULL, OPT_PRESCALE },
    { "signal", required_argument, NULL, OPT_SIGNAL },
    { "start", required_argument, NULL, OPT_START },
    { "stop", required_argument, NULL, OPT_STOP },
    { "trigger-holdoff", required_argument, NULL, OPT_HOLDOFF },
    { "rotate-on-start", no_argument, NULL, OPT_ROTATE_ON_START },
    { "config", required_argument, NULL, OPT_CONFIG },
    { "print-config", no_argument, NULL, OPT_PRINT_CONFIG },
    CLI_LONGOPT_PARTITION,
    { "quiet", no_argument, NULL, 'q' },
    CLI_LONGOPTS_END,
};

/* ---- signals ----------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;
static volatile sig_atomic_t usr1_count;

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        usr1_count++;
    else
        interrupted = sig;
}

static void catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

/* Threads started with these blocked leave the signals to the main thread. */
static void block_signals(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

/* ---- clocks and names -------------------------------------------------------------- */

static uint64_t log_clock(void *ctx)
{
    (void)ctx;
    return now_ns(CLOCK_REALTIME);
}

/* --name: strftime of the start time, with %n the file number. */
static int name_by_pattern(void *ctx, uint32_t index, uint64_t start_ts, char *out,
                           uint32_t cap)
{
    const char *pat = ctx;
    char fmt[512], num[16];
    size_t o = 0;
    time_t t = (time_t)(start_ts / NS);
    struct tm tm;
    size_t n;

    snprintf(num, sizeof num, "%05" PRIu32, index);
    for (const char *p = pat; *p && o + 16 < sizeof fmt; p++) {
        if (p[0] == '%' && p[1] == 'n') {
            memcpy(fmt + o, num, strlen(num));
            o += strlen(num);
            p++;
        } else if (p[0] == '%' && p[1] == '%') {
            fmt[o++] = '%';
            fmt[o++] = '%';
            p++;
        } else {
            fmt[o++] = *p;
        }
    }
    fmt[o] = '\0';
    if (!localtime_r(&t, &tm))
        return SF_EINVAL;
    n = strftime(out, cap, fmt, &tm);
    if (n == 0)
        return SF_ENAMETOOLONG;
    return (int)n;
}

/* A pattern must give every file its own name, one FAT and exFAT can hold: checked at
 * start (files 1 and 2 at the same time must differ), not when the second file fails. */
static int check_name_pattern(const char *pat)
{
    char a[300], b[300];
    uint64_t t = now_ns(CLOCK_REALTIME);
    int n1 = name_by_pattern((void *)pat, 1, t, a, 256);
    int n2 = name_by_pattern((void *)pat, 2, t, b, 256);
    size_t n;

    if (n1 <= 0 || n2 <= 0)
        return cli_usage("--name '%s' gives no name or one longer than 255 bytes", pat);
    if (strcmp(a, b) == 0)
        return cli_usage("--name '%s' gives every file the same name '%s': put %%n (the "
                         "file number) in it", pat, a);
    n = strlen(a);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)a[i];
        if (c < 0x20 || strchr("\"*/:<>?\\|", c))
            return cli_usage("--name '%s' gives '%s': FAT and exFAT names cannot hold '%c'%s",
                             pat, a, c < 0x20 ? '?' : c,
                             c == '/' ? " (--dir DIR puts the files into a directory)" : "");
    }
    if (a[n - 1] == '.' || a[n - 1] == ' ' || !strcmp(a, "."))
        return cli_usage("--name '%s' gives '%s': a name must not end in a dot or a space",
                         pat, a);
    return 0;
}

/* ---- options ------------------------------------------------------------------------- */

/* A duration, or a size when it has a size unit: for --pre and --sync-interval. */
static int parse_time_or_size(const char *opt, const char *s, uint64_t *ns, uint64_t *bytes)
{
    const char *why = "";

    if (units_parse_duration(s, ns, &why) == 0)
        return 0;
    if (units_parse_size(s, bytes, &why) == 0)
        return 0;
    return cli_usage("invalid value '%s' for %s: a duration (10s, 500ms) or a size (64M)", s,
                     opt);
}

/* --can-errors: "all", "none" or a hex mask of the CAN_ERR_* classes (29 bits) */
static int parse_can_errors(const char *s, uint32_t *mask)
{
    char *end;
    unsigned long v;

    if (!strcmp(s, "all")) {
        *mask = 0x1FFFFFFFu;
        return 0;
    }
    if (!strcmp(s, "none")) {
        *mask = 0;
        return 0;
    }
    errno = 0;
    v = strtoul(s, &end, 16);
    if (!*s || *end || errno || v > 0x1FFFFFFFu || *s == '-')
        return -1;
    *mask = (uint32_t)v;
    return 0;
}

static int parse_size_opt(const char *opt, const char *s, uint64_t *out)
{
    const char *why = "";

    if (units_parse_size(s, out, &why))
        return cli_usage("invalid size '%s' for %s: %s", s, opt, why);
    return 0;
}

static int parse_duration_opt(const char *opt, const char *s, uint64_t *out)
{
    const char *why = "";

    if (units_parse_duration(s, out, &why))
        return cli_usage("invalid duration '%s' for %s: %s", s, opt, why);
    return 0;
}

static int print_config;            /* --print-config */
static const char **send_specs;     /* --send values (argv's strings) */
static const char **poll_specs;     /* --poll values (argv's strings) */
static const char **listen_names;   /* --listen-only names (malloc'd; live until exit) */

/* Appends v to a growing list: 0, or -1 after saying out of memory. */
static int add_string(const char ***list, unsigned *n, const char *v)
{
    const char **l = realloc(*list, (*n + 1) * sizeof *l);

    if (!l) {
        cli_err("out of memory");
        return -1;
    }
    l[(*n)++] = v;
    *list = l;
    return 0;
}

#define SEEN(opt) (given[(opt) - OPT_FILTER] != NULL)

/* The ranges of the size and time options (issue 26: no value is rounded, clamped or read
 * as "off" silently). block: the block size (--chunk). Each refusal is one line with the
 * range; CLI_USAGE, or 0. */
static int check_bounds(const struct log_args *a, uint64_t block, const char *const *given)
{
    char b2[32], b4[32], bs[32];
    const uint64_t ring_max = a->so.raw ? (1ull << 31) - block : 1ull << 31;

    units_format_size(2 * block, b2, sizeof b2);
    units_format_size(4 * block, b4, sizeof b4);
    units_format_size(block, bs, sizeof bs);
    if (SEEN(OPT_SPLIT_SIZE) && a->split_bytes < 2 * block)
        return cli_usage("--split-size %s out of range: at least 2 blocks (%s with --chunk "
                         "%s); without --split-size files are not split by size",
                         given[OPT_SPLIT_SIZE - OPT_FILTER], b2, bs);
    if (SEEN(OPT_SPLIT_TIME) && a->split_ns < 100000000ull)
        return cli_usage("--split-time %s out of range: at least 100ms; without --split-time "
                         "files are not split by time", given[OPT_SPLIT_TIME - OPT_FILTER]);
    if (SEEN(OPT_SYNC) && !a->sync_ns && a->sync_bytes < block)
        return cli_usage("--sync-interval %s out of range: a duration above 0 (default 1s) or "
                         "a size of at least one block (%s)", given[OPT_SYNC - OPT_FILTER], bs);
    if (SEEN(OPT_RING) && (a->ring < 4 * block || a->ring > ring_max || a->ring % block))
        return cli_usage("--ring %s out of range: a multiple of the block size (--chunk %s) "
                         "from 4 blocks (%s) to 2G%s", given[OPT_RING - OPT_FILTER], bs, b4,
                         a->so.raw ? " less one block" : "");
    if (SEEN(OPT_PRE) && !a->pre_ns && a->pre_bytes < block)
        return cli_usage("--pre %s out of range: a duration above 0 or a size of at least one "
                         "block (%s)", given[OPT_PRE - OPT_FILTER], bs);
    if (SEEN(OPT_POST) && !a->post_ns)
        return cli_usage("--post %s: must be more than 0 (leave it out for no post-trigger "
                         "window)", given[OPT_POST - OPT_FILTER]);
    return 0;
}

static int parse_args(int argc, char **argv, struct log_args *a)
{
    struct cli_opts cl = CLI_OPTS(argc, argv, ":s:qFh", longopts, help, CLI_OPT_PARTITION);
    int c, rc;
    uint64_t v;
    const char *given[16] = { 0 };      /* the value of OPT_FILTER + i as given (SEEN) */

    struct lctl *ctl = a->ctl;
    memset(a, 0, sizeof *a);
    a->ctl = ctl;
    a->qd = DEFAULT_QD;
    a->direct = 1;
    while ((c = cli_getopt(&cl)) > 0) {
        rc = 0;
        switch (c) {
        case OPT_SOURCE: a->source = optarg; break;
        /* the core's control stage (log_control.h) */
        case OPT_FILTER: rc = lctl_parse_filter(a->ctl, optarg) ? CLI_USAGE : 0; break;
        case OPT_PRESCALE: rc = lctl_parse_prescale(a->ctl, optarg) ? CLI_USAGE : 0; break;
        case OPT_SIGNAL: rc = lctl_parse_signal(a->ctl, optarg) ? CLI_USAGE : 0; break;
        case OPT_START: rc = lctl_set_start(a->ctl, optarg) ? CLI_ERR : 0; break;
        case OPT_STOP: rc = lctl_set_stop(a->ctl, optarg) ? CLI_ERR : 0; break;
        case OPT_HOLDOFF: rc = lctl_parse_holdoff(a->ctl, optarg) ? CLI_USAGE : 0; break;
        case OPT_ROTATE_ON_START: a->ctl->rotate_on_start = 1; break;
        case OPT_CONFIG: break;            /* merged before (log_config.c) */
        case OPT_PRINT_CONFIG: print_config = 1; break;
        case OPT_TRIGGER: {
            const char *why = "";
            if (strncmp(optarg, "signal:", 7) == 0) {
                rc = lctl_parse_trigger(a->ctl, optarg + 7) ? CLI_ERR : 0;
                break;
            }
            if (a->so.nrules == SRC_MAX_RULES)
                return cli_usage("at most %d --trigger options", SRC_MAX_RULES);
            if (src_parse_rule(optarg, &a->so.rules[a->so.nrules], &why))
                return cli_usage("invalid trigger '%s': %s", optarg, why);
            a->so.nrules++;
            break;
        }
        case OPT_PRE: rc = parse_time_or_size("--pre", optarg, &a->pre_ns, &a->pre_bytes); break;
        case OPT_POST: rc = parse_duration_opt("--post", optarg, &a->post_ns); break;
        case OPT_SPLIT_SIZE: rc = parse_size_opt("--split-size", optarg, &a->split_bytes); break;
        case OPT_SPLIT_TIME: rc = parse_duration_opt("--split-time", optarg, &a->split_ns); break;
        case OPT_CYCLIC: a->cyclic = 1; break;
        case OPT_SYNC:
            rc = parse_time_or_size("--sync-interval", optarg, &a->sync_ns, &a->sync_bytes);
            break;
        case OPT_RING: rc = parse_size_opt("--ring", optarg, &a->ring); break;
        case OPT_CHUNK: rc = parse_size_opt("--chunk", optarg, &a->chunk); break;
        case OPT_COMPRESS:
            if (optarg && strcmp(optarg, "1"))
                return cli_usage("invalid --compress level '%s' (1, the only one so far)",
                                 optarg);
            a->compress = 1;
            break;
        case OPT_QD:
            if (cli_parse_uint(optarg, 64, &v) || v == 0)
                return cli_usage("invalid --qd '%s' (1..64)", optarg);
            a->qd = (unsigned)v;
            break;
        case OPT_DURATION:
            rc = parse_duration_opt("--duration", optarg, &a->duration_ns);
            if (!rc && !a->duration_ns)
                return cli_usage("--duration must be more than 0 (without it: until the "
                                 "source ends or Ctrl-C)");
            break;
        case 's':
            /* -s was --source before -s meant --size in every command (docs/CLI.md) */
            if (!isdigit((unsigned char)optarg[0]))
                return cli_usage("-s is --size (--source has no short form; docs/CLI.md): %s",
                                 optarg);
            rc = parse_size_opt("--size", optarg, &a->mkfs_size);
            if (!rc && !a->mkfs_size)
                return cli_usage("--size must be more than 0");
            a->have_size = 1;
            break;
        case OPT_MAX_RECORDS:
            if (cli_parse_uint(optarg, UINT64_MAX, &a->so.max_records) || !a->so.max_records)
                return cli_usage("invalid --max-records '%s'", optarg);
            break;
        case OPT_MAX_BYTES:
            rc = parse_size_opt("--max-bytes", optarg, &a->so.max_bytes);
            if (!rc && !a->so.max_bytes)
                return cli_usage("--max-bytes must be more than 0");
            break;
        case OPT_MKFS:
            a->mkfs = 1;
            if (strcmp(optarg, "exfat") == 0)
                a->mkfs_type = SF_FS_EXFAT;
            else if (strcmp(optarg, "fat32") == 0)
                a->mkfs_type = SF_FS_FAT32;
            else if (strcmp(optarg, "fat16") == 0)
                a->mkfs_type = SF_FS_FAT16;
            else if (strcmp(optarg, "auto") == 0)
                a->mkfs_type = 0;
            else
                return cli_usage("invalid --mkfs type '%s' (exfat, fat32, fat16, auto)", optarg);
            break;
        case OPT_DIR: a->dir = optarg; break;
        case OPT_NAME: a->name = optarg; break;
        case OPT_DEVICE_ID:
            if (!*optarg || strlen(optarg) > 64 || strpbrk(optarg, "/\\=\n"))
                return cli_usage("invalid --device-id '%s': 1 to 64 bytes, without / \\ = or "
                                 "a line break", optarg);
            a->device_id = optarg;
            break;
        case OPT_ENCRYPT_TO: a->encrypt_to = optarg; break;
        case OPT_ENCRYPT_AEAD:
            if (!strcmp(optarg, "xchacha20-poly1305"))
                a->encrypt_aead = SF_AEAD_XCHACHA20_POLY1305;
            else if (!strcmp(optarg, "aes-256-gcm"))
                a->encrypt_aead = SF_AEAD_AES256_GCM;
            else
                return cli_usage("invalid --encrypt-aead '%s' (xchacha20-poly1305, "
                                 "aes-256-gcm)", optarg);
            break;
        case OPT_RAW: a->so.raw = 1; break;
        case OPT_FAST: a->so.fast = 1; break;
        case OPT_CAN_RCVBUF:
            rc = parse_size_opt("--can-rcvbuf", optarg, &a->so.can_rcvbuf);
            if (!rc && (a->so.can_rcvbuf < 4096 || a->so.can_rcvbuf > (UINT64_C(1) << 31)))
                return cli_usage("--can-rcvbuf must be from 4K to 2G");
            a->so.can_rcvbuf_given = 1;
            break;
        case OPT_CAN_ERRORS:
            if (parse_can_errors(optarg, &a->so.can_err_mask))
                return cli_usage("invalid --can-errors '%s' (all, none, or a hex mask of "
                                 "error classes below 0x20000000)", optarg);
            a->so.can_err_given = 1;
            break;
        case OPT_SEND:
            if (add_string(&send_specs, &a->so.nsend, optarg))
                return CLI_ERR;
            a->so.send = send_specs;
            break;
        case OPT_POLL:
            if (add_string(&poll_specs, &a->so.npoll, optarg))
                return CLI_ERR;
            a->so.poll = poll_specs;
            break;
        case OPT_POLL_TIMEOUT:
            rc = parse_duration_opt("--poll-timeout", optarg, &a->so.poll_timeout_ns);
            if (!rc && (a->so.poll_timeout_ns < UINT64_C(1000000) ||
                        a->so.poll_timeout_ns > UINT64_C(60000000000)))
                return cli_usage("--poll-timeout must be from 1ms to 60s");
            break;
        case OPT_POLL_BS: {
            char *end;
            unsigned long bsv;
            errno = 0;
            bsv = strtoul(optarg, &end, 10);
            if (errno || end == optarg || *end || bsv > 255 || optarg[0] == '-')
                return cli_usage("--poll-bs must be from 0 to 255 (0: no limit)");
            a->so.poll_bs = (unsigned)bsv;
            break;
        }
        case OPT_POLL_STMIN:
            rc = parse_duration_opt("--poll-stmin", optarg, &a->so.poll_stmin_ns);
            if (!rc && a->so.poll_stmin_ns > UINT64_C(127000000))
                return cli_usage("--poll-stmin must be from 0 to 127ms");
            break;
        case OPT_LISTEN_ONLY:
            for (const char *p = optarg; *p;) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                char *name = n ? strndup(p, n) : NULL;
                if (!n)
                    return cli_usage("--listen-only: empty interface name in '%s'", optarg);
                if (!name || add_string(&listen_names, &a->so.nlisten_only, name))
                    return CLI_ERR;
                a->so.listen_only = listen_names;
                p = e ? e + 1 : p + n;
            }
            break;
        case OPT_MEASURE: a->measure = 1; break;
        case OPT_JSON: a->json = 1; break;
        case OPT_NO_DIRECT: a->direct = 0; break;
        case 'F': a->force = 1; break;
        case 'q': a->quiet = 1; break;
        }
        if (rc)
            return rc;
        if (c >= OPT_FILTER && c < OPT_FILTER + 16)
            given[c - OPT_FILTER] = optarg;
    }
    if (c < 0 && cl.status == CLI_OK)
        exit(cli_stdout_checked(CLI_OK));   /* the help: nothing more to do */
    if (c < 0)
        return cl.status;
    a->partition = cl.partition;
    if (cli_args(argc, argv, 1, "TARGET", NULL))
        return CLI_USAGE;
    a->target = argv[optind++];
    if (!a->source)
        return cli_usage("missing --source");
    if (a->chunk && (a->chunk < SF_BLOCK_MIN || a->chunk > SF_BLOCK_MAX ||
                     (a->chunk & (a->chunk - 1))))
        return cli_usage("--chunk must be a power of two from 512 to 1M");
    if (check_bounds(a, a->chunk ? a->chunk : SF_BLOCK_DEFAULT, given))
        return CLI_USAGE;
    if (a->so.nrules && !a->pre_ns && !a->pre_bytes && !a->post_ns)
        return cli_usage("--trigger needs the flight recorder (--pre and/or --post)");
    if (a->so.raw && (a->pre_ns || a->pre_bytes || a->post_ns))
        return cli_usage("the flight recorder works on records, not with --raw");
    if (a->compress && a->so.raw)
        return cli_usage("--compress packs records; a --raw file has none (docs/FORMAT.md)");
    if (a->compress && (a->pre_ns || a->pre_bytes || a->post_ns))
        return cli_usage("--compress does not work with the flight recorder (--pre, --post) "
                         "yet");
    if (a->encrypt_aead && !a->encrypt_to)
        return cli_usage("--encrypt-aead needs --encrypt-to");
    if (a->so.raw && a->encrypt_to)
        return cli_usage("--encrypt-to seals record blocks; raw files have none (not with "
                         "--raw)");
    if (a->so.raw && lctl_active(a->ctl))
        return cli_usage("--filter, --prescale, --signal, --start, --stop and signal "
                         "triggers work on CAN frames, not with --raw");
    if (lctl_active(a->ctl) && !lctl_has_channel_names(a->ctl) &&     /* else after the source */
        lctl_build(a->ctl, SF_LOG_CHANNELS, a->pre_ns || a->pre_bytes || a->post_ns))
        return CLI_USAGE;
    if (a->have_size && !a->mkfs)
        return cli_usage("--size creates the image with --mkfs; give --mkfs TYPE too");
    if (a->force && !a->mkfs)
        return cli_usage("--force lets --mkfs format over data; without --mkfs nothing is "
                         "formatted");
    if (a->name && strlen(a->name) > 200)
        return cli_usage("--name pattern too long");
    if (a->name && check_name_pattern(a->name))
        return CLI_USAGE;
    return 0;
}

/* mkdir -p on the volume. */
static int make_dir(struct target *t, const char *dir)
{
    char path[1024];
    size_t n = strlen(dir);

    if (n >= sizeof path) {
        cli_err("%s: --dir too long", t->path);
        return CLI_ERR;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] == '/' || path[i] == '\0') {
            struct sf_stat st;
            char save = path[i];
            int err;
            path[i] = '\0';
            if (path[i - 1] != '/' && sf_stat(&t->vol, path, &st) != 0) {
                err = sf_mkdir(&t->vol, path);
                if (err) {
                    cli_err("%s: %s: cannot create: %s", t->path, path, sf_strerror(err));
                    return CLI_ERR;
                }
            }
            path[i] = save;
        }
    }
    return 0;
}

/* ---- the command ------------------------------------------------------------------------ */

static int log_run(int argc, char **argv);

/* --config FILE.json first (its options before the command line's), then the command. */
int cmd_log(int argc, char **argv)
{
    int margc, rc;
    char **margv;
    rc = log_config_merge(argc, argv, longopts, &margc, &margv);
    if (rc)
        return rc;
    rc = log_run(margv ? margc : argc, margv ? margv : argv);
    log_config_free(margc, margv);
    return rc;
}

static int log_run(int argc, char **argv)
{
    static struct lctl ctl;
    struct log_args a = { .ctl = &ctl };
    struct log_source *src = NULL;
    struct target t;
    struct sf_log *lg = NULL;
    struct sf_log_cfg cfg;
    struct writer w;
    struct src_stats ss;
    const char *const *names;
    const char *meta[4];
    char meta_src[300], meta_host[300], meta_ver[64], meta_dev[80], errbuf[300];
    uint8_t recipient[SF_CIPHER_KEY];
    void *ring = NULL, *work = NULL, *pack_mem = NULL;
    size_t pack_mem_size = 0;
    uint64_t t0, last_status = 0, last_rec = 0, block;
    double secs, last_t = 0;
    sigset_t oldmask;
    int rc, err, status = CLI_OK, tty, writer_started = 0;
    const char *error = NULL;
    char error_buf[300];
    struct log_names before = { 0 };
    const char *ldir;

    memset(&w, 0, sizeof w);
    rc = parse_args(argc, argv, &a);
    if (rc) {
        lctl_free(&ctl);
        return rc;
    }
    if (print_config) {
        lctl_free(&ctl);
        return log_config_print(argc, argv, longopts, a.target);
    }
    /* --encrypt-to: the recipient's public key, read before anything is created */
    if (a.encrypt_to) {
        if (!sf_sodium_port()) {
            cli_err("--encrypt-to: sealed logs need libsodium, which this build lacks "
                    "(scripts/deps.sh installs libsodium-dev)");
            lctl_free(&ctl);
            return CLI_ERR;
        }
        if (keyfile_read_public(a.encrypt_to, recipient)) {
            lctl_free(&ctl);
            return CLI_ERR;
        }
        if (a.encrypt_aead && !sf_sodium_aead_available(a.encrypt_aead)) {
            cli_err("--encrypt-aead aes-256-gcm: this CPU has no AES-NI, which libsodium's "
                    "AES-256-GCM needs (xchacha20-poly1305 works everywhere)");
            lctl_free(&ctl);
            return CLI_ERR;
        }
    }
    /* Before anything slow (mkfs, mount, ring): a SIGINT or SIGUSR1 that arrives early is
     * noted and acted on once the log runs, never the default action that kills us. */
    catch_signals();
    block = a.chunk ? a.chunk : SF_BLOCK_DEFAULT;
    a.so.max_body = (uint32_t)block - SF_BLOCK_HDR - SF_REC_HDR -
                    (a.encrypt_to ? SF_CIPHER_OVERHEAD : 0);
    if (a.so.max_body > 65535)
        a.so.max_body = 65535;
    /* can: a socket buffer that holds what the ring holds (32 bytes a classic frame in the
     * ring, about 800 in the kernel's accounting), so a reader stalled no longer than the
     * ring could absorb loses nothing in the kernel either; 1M to 64M */
    if (!a.so.can_rcvbuf_given) {
        uint64_t rs = a.ring ? a.ring : a.pre_bytes ? a.pre_bytes + 8 * block : DEFAULT_RING;
        uint64_t rb = rs / 32 * 800;
        a.so.can_rcvbuf = rb < (UINT64_C(1) << 20) ? UINT64_C(1) << 20 :
                          rb > (UINT64_C(64) << 20) ? UINT64_C(64) << 20 : rb;
    }
    src = src_parse(a.source, &a.so, errbuf, sizeof errbuf);
    if (!src)
        return cli_usage("%s", errbuf);
    if (lctl_has_channel_names(&ctl)) {    /* --filter ...@NAME: the source's channel names */
        unsigned n = src_channels(src, &names);
        if (lctl_resolve_channels(&ctl, names, n) ||
            lctl_build(&ctl, SF_LOG_CHANNELS, a.pre_ns || a.pre_bytes || a.post_ns)) {
            lctl_free(&ctl);
            src_free(src);
            return CLI_USAGE;
        }
    }

    if (a.mkfs) {
        struct mkfs_args m;
        memset(&m, 0, sizeof m);
        m.target = a.target;
        m.fs_type = (unsigned)a.mkfs_type;
        m.partition = -1;
        m.quiet = 1;
        m.size = a.mkfs_size;
        m.have_size = a.have_size;
        m.size_opt = "--size";
        m.force = a.force;
        m.keep_hint = "without --mkfs the log goes onto it";
        rc = mkfs_run(&m);
        if (rc) {
            src_free(src);
            return rc;
        }
    }
    if (target_open_async(&t, a.target, TARGET_ASYNC | (a.direct ? TARGET_DIRECT : 0),
                          a.partition, a.qd)) {
        src_free(src);
        return CLI_ERR;
    }
    /* What is in the log directory before the run: a run that logs nothing removes what it
     * created (log_sweep.h), and only that. */
    ldir = a.dir && *a.dir && !cli_is_root(a.dir) ? a.dir : NULL;
    if (log_names_take(&t.vol, a.target, ldir, &before) || (ldir && make_dir(&t, ldir))) {
        status = CLI_ERR;
        goto out_close;
    }

    /* The ring: --ring, or sized from --pre SIZE; whole blocks, at least 4. */
    if (!a.ring)
        a.ring = a.pre_bytes ? a.pre_bytes + 8 * block : DEFAULT_RING;
    a.ring = (a.ring + block - 1) / block * block;
    if (a.ring < 4 * block)
        a.ring = 4 * block;
    ring = target_alloc(target_bd(&t), (size_t)a.ring);
    work = target_alloc(target_bd(&t), (size_t)block);
    if (a.compress) {
        /* output blocks for two requests of 1 MiB (at least 4) */
        size_t nout = 2 * ((1u << 20) / block) < 4 ? 4 : 2 * ((1u << 20) / block);
        pack_mem_size = SF_LOG_PACK_MEM(block, nout) + 4096;   /* + alignment */
        pack_mem = target_alloc(target_bd(&t), pack_mem_size);
    }
    lg = aligned_alloc(64, (sizeof *lg + 63) / 64 * 64);
    if (!lg) {
        cli_err("out of memory");
        status = CLI_ERR;
        goto out_close;
    }
    memset(lg, 0, sizeof *lg);

    snprintf(meta_src, sizeof meta_src, "source=%s", a.source);
    {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        snprintf(meta_host, sizeof meta_host, "host=%s", host);
    }
    snprintf(meta_ver, sizeof meta_ver, "writer=streamfat %s", SF_VERSION_STRING);
    meta[0] = meta_src;
    meta[1] = meta_host;
    meta[2] = meta_ver;

    memset(&cfg, 0, sizeof cfg);
    cfg.vol = &t.vol;
    cfg.ring = ring;
    cfg.ring_size = a.ring;
    cfg.block_size = (uint32_t)block;
    cfg.flags = (a.so.raw ? SF_LOG_RAW : 0) | (a.cyclic ? SF_LOG_CYCLIC : 0) |
                (a.measure ? SF_LOG_MEASURE : 0);
    cfg.dir = a.dir;
    if (a.name) {
        cfg.name = name_by_pattern;
        cfg.name_ctx = (void *)a.name;
    }
    cfg.split_bytes = a.split_bytes;
    cfg.split_ns = a.split_ns;
    cfg.checkpoint_ns = a.sync_ns;
    cfg.checkpoint_bytes = a.sync_bytes;
    cfg.pre_bytes = a.pre_bytes;
    cfg.pre_ns = a.pre_ns;
    cfg.post_ns = a.post_ns;
    cfg.queue_depth = a.qd;
    cfg.clock = log_clock;
    cfg.clock_kind = src_clock_kind(src);
    if (getrandom(&cfg.session_id, sizeof cfg.session_id, 0) != sizeof cfg.session_id)
        cfg.session_id = now_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
    cfg.channel_count = src_channels(src, &names);
    cfg.channel_names = names;
    cfg.meta = meta;
    cfg.meta_count = 3;
    if (a.device_id) {
        snprintf(meta_dev, sizeof meta_dev, "device=%s", a.device_id);
        meta[cfg.meta_count++] = meta_dev;
    }
    cfg.work = work;
    cfg.work_size = (uint32_t)block;
    cfg.packer = pack_mem ? &sf_log_packer : NULL;
    cfg.pack_mem = pack_mem;
    cfg.pack_mem_size = pack_mem_size;
    if (a.encrypt_to) {
        cfg.cipher_port = sf_sodium_port();
        cfg.cipher_stage = &sf_cipher_stage;
        cfg.cipher_pub = recipient;
        cfg.cipher_aead = a.encrypt_aead;
    }

    if (src_prepare(src)) {
        status = CLI_ERR;
        goto out_close;
    }
    err = sf_log_open(lg, &cfg);
    if (err) {
        cli_err("%s: cannot start the log: %s", a.target, sf_strerror(err));
        status = CLI_ERR;
        goto out_close;
    }
    if (lctl_active(&ctl) && lctl_attach(&ctl, lg)) {
        sf_log_close(lg);
        status = CLI_ERR;
        goto out_close;
    }

    w.lg = lg;
    w.src = src;
    pthread_mutex_init(&w.lock, NULL);
    log_snapshot(&w);
    block_signals(&oldmask);
    err = pthread_create(&w.th, NULL, log_writer_main, &w);
    if (!err) {
        writer_started = 1;
        if (src_start(src, lg))
            status = CLI_ERR;
    } else {
        cli_err("cannot start the writer thread: %s", strerror(err));
        status = CLI_ERR;
    }
    pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
    t0 = now_ns(CLOCK_MONOTONIC);           /* --duration counts from here */

    tty = isatty(2) && !a.quiet;
    while (status == CLI_OK) {
        uint64_t now = now_ns(CLOCK_MONOTONIC);
        struct timespec nap = { 0, 20000000 };
        int n1 = usr1_count;
        if (n1) {
            usr1_count -= n1;
            atomic_fetch_add(&w.usr1, n1);
        }
        if (interrupted || atomic_load(&w.failed) || src_finished(src) || src_error(src))
            break;
        if (a.duration_ns && now - t0 >= a.duration_ns)
            break;
        if (tty && now - last_status >= STATUS_NS) {
            log_status_line(&w, (double)(now - t0) / 1e9, &last_rec, &last_t);
            last_status = now;
        }
        if (a.duration_ns && a.duration_ns - (now - t0) < (uint64_t)nap.tv_nsec)
            nap.tv_nsec = (long)(a.duration_ns - (now - t0));
        nanosleep(&nap, NULL);
    }
    if (interrupted && !a.quiet && !a.json)
        fprintf(stderr, "%s%s: stopping: writing what is buffered, closing\n",
                tty ? "\n" : "", a.target);
    else if (tty)
        fputc('\n', stderr);

    /* Stop: producers first, then the writer drains the ring and closes the file. */
    src_stop(src);
    src_join(src);
    if (writer_started) {
        atomic_store(&w.stop, 1);
        pthread_join(w.th, NULL);
    }
    secs = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
    src_get_stats(src, &ss);

    if (w.err) {
        snprintf(error_buf, sizeof error_buf, "%s: log: %s%s", a.target, sf_strerror(w.err),
                 w.err == SF_ENOSPC ? " (the volume is full; --cyclic deletes old logs)" : "");
        error = error_buf;
        status = CLI_ERR;
    } else if (src_error(src)) {
        snprintf(error_buf, sizeof error_buf, "%s", src_error(src));
        error = error_buf;
        status = CLI_ERR;
    }
    /* Nothing usable from the source is an error, and leaves no file (issue 26): the
     * source's own line when it has one (candump text: the first unreadable line). */
    if (ss.offered == 0) {
        if (!error) {
            snprintf(error_buf, sizeof error_buf, "%s: nothing to log: the source gave no "
                     "usable %s%s", a.source, a.so.raw ? "byte" : "record",
                     ss.bad_input ? " (all of its input was unreadable)" : "");
            error = error_buf;
        }
        status = CLI_ERR;
        long removed = log_names_sweep(&t.vol, a.target, ldir, &before); /* prints its error */
        /* the summary and --json count the files left, not the ones just removed */
        if (removed > 0)
            w.st.files = w.st.files > (uint64_t)removed ? w.st.files - (uint64_t)removed : 0;
    }
    log_names_free(&before);
    if (status == CLI_OK && (w.st.records_dropped || ss.kernel_dropped))
        status = 3;
    if (error)
        cli_err("%s", error);
    if (target_close(&t) && !error) {
        error = "unmount failed";
        status = CLI_ERR;
    }
    log_report(&a, &w, &ss, secs, status, error);
    pthread_mutex_destroy(&w.lock);
    free(lg);
    free(ring);
    free(work);
    free(pack_mem);
    src_free(src);
    return status;

out_close:
    log_names_free(&before);
    target_close(&t);
    free(lg);
    lctl_free(&ctl);
    free(ring);
    free(work);
    free(pack_mem);
    src_free(src);
    return status;
}
