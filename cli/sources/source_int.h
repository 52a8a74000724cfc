/* Inside the log sources (log_sources.h is the outside): the source and producer state, the
 * table of source kinds, and the machinery every kind shares.
 *
 * One file per kind (gen_can.c, gen_raw.c, stdin.c, file.c, socketcan.c, udp.c,
 * latency.c), each defining one struct src_ops; source.c holds the table of them and the
 * life cycle (parse, prepare, start, stop, join). Shared by the kinds: candump.c (the
 * candump -L parser and the line reader of stdin and file:), rules.c (filters, trigger
 * rules, the --max-records / --max-bytes budget, and src_emit_can that applies them to a
 * CAN frame), producer.c (clocks, waiting for ring room, pacing, counters, errors, socket
 * helpers).
 *
 * Adding a source: a file with its struct src_ops (match the spec, parse it, optionally
 * open what each producer reads, the producer thread's body), an extern line below, an
 * entry in source.c's table, and its line in log_sources.h's list. */
#ifndef SF_CLI_SOURCE_INT_H
#define SF_CLI_SOURCE_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "log_sources.h"
#include "formats/import.h"

#include "streamfat/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#define NS UINT64_C(1000000000)
#define POLL_MS 100                 /* how often a blocked producer looks at the stop flag */
#define FLUSH_EVERY 4096u           /* records between flushes of a producer's counters */

struct log_source;
struct producer;
struct can_tx;
struct can_poll;

#define SRC_TX_PER_IFACE 256        /* --send entries per interface (issue 27 asks for 64) */
#define SRC_SEND_TRIGGERS 64        /* --send ...@on:can:ID/MASK entries in all */

/* A --send entry's trigger: a received frame matching id/mask sends it (on channel ch). */
struct src_send_trig {
    uint32_t id, mask;
    uint8_t ch;
};

/* One kind of source: the table entry (source.c) that --source SPEC selects. */
struct src_ops {
    const char *name;
    /* SPEC is of this kind: 1, else 0 */
    int (*match)(const char *spec);
    /* Read SPEC into s (s->o is set): 0, or -1 with a message in err. */
    int (*parse)(struct log_source *s, const char *spec, char *err, size_t errlen);
    /* Optional: open what producer p reads (p->s and p->ch are set): 0, or -1 after
     * printing why. */
    int (*prepare)(struct log_source *s, struct producer *p);
    /* The producer thread's body; arg is its struct producer. */
    void *(*run)(void *arg);
    /* Optional: free what parse and prepare took beyond the common state. */
    void (*release)(struct log_source *s);
    int can_wait;                   /* may wait for ring space instead of dropping */
    int borrowed_fds;               /* the descriptors are the caller's: never closed */
};

extern const struct src_ops src_gen_can_ops, src_gen_raw_ops, src_stdin_ops, src_file_ops,
    src_can_ops, src_canpair_ops, src_udp_ops, src_latency_ops;

struct producer {
    struct log_source *s;
    pthread_t th;
    int started;
    unsigned ch;                    /* channel (index into the channel table) */
    int fd;
    uint64_t quota;                 /* gen:can with --max-records: this channel's share */
    /* counters, flushed into the source's atomics every FLUSH_EVERY records */
    uint64_t offered, offered_bytes, dropped;
    struct can_tx *tx;              /* can:, canpair: with --send on this interface */
    struct can_poll *poll;          /* can:, canpair: with --poll on this interface */
};

struct log_source {
    const struct src_ops *ops;
    struct src_opts o;
    struct sf_log *lg;
    uint64_t rate;                  /* gen:can frames/s per channel (0: unpaced) */
    uint64_t period_ns;             /* latency: */
    char *path;                     /* file: (NULL for every other kind) */
    enum imp_format fmt;            /* file: candump, ASC or BLF (by content) */
    struct imp_reader *imp;         /* file: ASC and BLF */
    unsigned chan_num[SRC_MAX_CHANNELS];    /* ASC, BLF: the file's number of names[i] */
    char host[64];
    uint16_t port;
    char *names[SRC_MAX_CHANNELS];  /* channel names (malloc'd) */
    unsigned nnames;
    /* candump lines, ASC and BLF frames (one producer): each channel's last time, for the
     * order docs/FORMAT.md promises; the input's line (or frame) number; bad lines shown */
    uint64_t last_ts[SRC_MAX_CHANNELS];
    uint8_t have_last[SRC_MAX_CHANNELS];
    uint64_t lineno;
    unsigned bad_shown;
    char first_bad[64];             /* the first unreadable candump line, quoted (printable) */
    uint64_t first_bad_no;          /* its number, 0 while none */
    unsigned nprod;
    struct producer prod[SRC_MAX_CHANNELS];
    atomic_int stop;
    atomic_uint finished;
    atomic_int limit_hit;
    _Atomic uint64_t offered, offered_bytes, dropped, bad, waits, kdropped;
    _Atomic uint64_t lat_n, lat_max, rules_fired;
    _Atomic uint64_t budget_rec, budget_bytes;   /* taken so far, when limits are set */
    _Atomic uint64_t ring_free;                  /* published by the writer */
    atomic_uint ring_epoch;
    _Atomic uint64_t tx_sent[SRC_MAX_CHANNELS], tx_failed[SRC_MAX_CHANNELS],  /* --send */
        tx_skipped[SRC_MAX_CHANNELS];
    struct src_send_trig send_trig[SRC_SEND_TRIGGERS];   /* entry k: trigger number k + 1 */
    unsigned nsend_trig;

    pthread_mutex_t lock;           /* trigger request and error text */
    int trig_pending;
    uint64_t trig_ts;
    char trig_why[128];
    char err[256];
    int has_err;
};

/* ---- source.c: parsing helpers ----------------------------------------------------------- */

/* n bytes of s as a decimal number: 0, or -1 */
int src_parse_u64_dec(const char *s, size_t n, uint64_t *out);
/* Append a channel name (n bytes of name); out of memory ends the program. */
void src_add_name(struct log_source *s, const char *name, size_t n);

/* ---- candump.c ------------------------------------------------------------------------ */

/* n bytes of hexadecimal (optional 0x), at most 8 digits: 0, or -1 */
int src_parse_hex32(const char *s, size_t n, uint32_t *out);
/* The CAN FD data lengths */
extern const uint8_t src_fd_lens[16];
/* The producer of candump -L lines on p->fd (stdin, file: with a candump log). */
void *src_lines_main(void *arg);

/* ---- producer.c ----------------------------------------------------------------------- */

static inline uint64_t now_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

static inline int stopping(struct log_source *s)
{
    return atomic_load_explicit(&s->stop, memory_order_relaxed) ||
           atomic_load_explicit(&s->limit_hit, memory_order_relaxed);
}

/* v as 8 little-endian bytes; written out so the compiler makes it one store */
static inline void put_le64(uint8_t *p, uint64_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    p[4] = (uint8_t)(v >> 32);
    p[5] = (uint8_t)(v >> 40);
    p[6] = (uint8_t)(v >> 48);
    p[7] = (uint8_t)(v >> 56);
}

void src_sleep_until(uint64_t mono_ns);
void src_sleep_ns(uint64_t ns);
/* The first error of the run (src_error shows it). */
void src_set_error(struct log_source *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void src_flush_counters(struct producer *p);

/* Sources that can wait (stdin, file:, gen:raw) keep this much ring free rather than drop.
 * The writer publishes the free space after each step; `since` counts what this producer
 * appended after the last publication it saw. */
struct waiter {
    unsigned epoch;
    uint64_t since;
    uint64_t margin;
};
void src_wait_for_room(struct log_source *s, struct waiter *w, uint64_t need);

/* file: at the recorded speed: wait until the frame's time relative to the first frame
 * has passed since the start (--fast: no waiting). */
struct pacer {
    int started;
    uint64_t ts0, t0;
};
void src_pace(struct log_source *s, struct pacer *pc, uint64_t ts);

/* docs/FORMAT.md: each channel's records in a file have non-decreasing times. A time earlier
 * than the channel's last: 0 (the caller refuses it); else 1, and it is the last. */
int src_in_order(struct log_source *s, unsigned ch, uint64_t ts);
/* The input named in messages: file:'s path or "stdin" */
const char *src_name(const struct log_source *s);
/* Input that does not fit: counted as bad input, and the first few reported with their
 * line (or frame) number. */
void src_bad_input(struct log_source *s, const char *what, uint64_t n, const char *why);

/* One datagram from a socket source and its kernel receive time (SO_TIMESTAMPNS; *ts is 0
 * where the kernel gave none): its size, or -1 with errno set, EAGAIN or EINTR when there
 * was nothing within POLL_MS (poll again after checking for a stop). *msg_flags gets
 * recvmsg's flags (MSG_TRUNC). */
ssize_t src_recv_stamped(int fd, void *buf, size_t cap, uint64_t *ts, int *msg_flags);
/* The same, also giving the socket's drop counter when the kernel sent one (SO_RXQ_OVFL:
 * the datagrams dropped on this socket since it was opened, modulo 2^32): *have_drops 1
 * and *drops set, else *have_drops 0. */
ssize_t src_recv_meta(int fd, void *buf, size_t cap, uint64_t *ts, int *msg_flags,
                      uint32_t *drops, int *have_drops);
/* Up to SRC_RX_BATCH datagrams of at most SRC_RX_DGRAM bytes (a larger one is cut:
 * MSG_TRUNC) with their control messages, read by one recvmmsg: a busy socket costs one
 * system call per batch, not one per datagram (can: and canpair:). */
#define SRC_RX_BATCH 32
#define SRC_RX_DGRAM 96             /* CANFD_MTU (72) and room to see a longer datagram */
#define SRC_RX_CTL (CMSG_SPACE(sizeof(struct timespec)) * 2 + CMSG_SPACE(sizeof(uint32_t)))
struct src_rx_batch {
    struct mmsghdr mm[SRC_RX_BATCH];
    struct iovec iov[SRC_RX_BATCH];
    union {
        struct cmsghdr align;
        char buf[SRC_RX_CTL];
    } ctl[SRC_RX_BATCH];
    _Alignas(8) uint8_t data[SRC_RX_BATCH][SRC_RX_DGRAM];
};
/* Receive what the socket holds, up to SRC_RX_BATCH datagrams (block: wait for the first
 * in recvmmsg, fd set up by src_rx_blocking; else poll first): their number (> 0; a
 * datagram of size 0 is the end of file of a stream-like peer), or -1 with errno set as src_recv_meta (EAGAIN or EINTR: nothing within
 * POLL_MS). An error after some datagrams comes with the next call (the kernel keeps it). */
int src_recv_batch(int fd, struct src_rx_batch *b, int block);
/* Make fd's receives wait at most POLL_MS (SO_RCVTIMEO): 1 when fd is a blocking socket
 * that took it (then src_recv_batch may block: no poll before each receive), else 0. */
int src_rx_blocking(int fd);
/* Datagram i of the last src_recv_batch: its size, bytes, time, flags and drop counter as
 * src_recv_meta gives them. */
ssize_t src_rx_message(struct src_rx_batch *b, unsigned i, const uint8_t **data, uint64_t *ts,
                       int *msg_flags, uint32_t *drops, int *have_drops);
/* The last step of opening a socket source: bind, naming the socket `what` in the error;
 * from then on the producer owns fd. */
int src_bind_source(struct producer *p, int fd, const void *addr, socklen_t len,
                    const char *what);

/* ---- rules.c -------------------------------------------------------------------------- */

/* Take one record of `bytes` from the --max-records / --max-bytes budget: 1, or 0 when a
 * limit is reached (then every producer ends). */
int src_take_budget(struct log_source *s, uint64_t bytes);
/* A rule fired: leave a request for the writer (never blocks: a request being recorded
 * by another producer at the same moment stands for this one too). */
void src_fire(struct log_source *s, uint64_t ts, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One CAN frame through budget and rules into the log (--filter is the core's control
 * stage, after it). 1 appended (or dropped and counted), -1 the budget is used up. */
int src_emit_can(struct producer *p, const struct src_can_frame *f);

/* ---- can_send.c: --send ------------------------------------------------------------- */

/* The --send values (s->o.send) against the channel names, after the source's parse: 0,
 * or -1 with a message in err (not a can: source, an interface not logged, a listen-only
 * one, a bad frame or period, too many frames). */
int src_send_parse(struct log_source *s, char *err, size_t errlen);
/* Start / join producer p's sender thread (none without --send on its interface). */
int src_send_start(struct producer *p);
void src_send_join(struct producer *p);
void src_send_free(struct log_source *s);
/* Write one frame to producer p's socket without waiting: 0, or -1 (queue full, down). The
 * hook of --send's schedule and of --poll's client. */
int src_can_write(struct producer *p, const struct sf_can *f);
/* A frame a can: receive loop read: the --send entries it triggers (on:can:ID/MASK). */
void src_send_on_frame(struct log_source *s, const struct src_can_frame *f);

/* ---- can_poll.c: --poll ------------------------------------------------------------- */

/* The --poll values (s->o.poll) against the channel names, after --send's: 0, or -1 with a
 * message in err. */
int src_poll_parse(struct log_source *s, char *err, size_t errlen);
/* A frame producer p read (not its own echo): to its interface's poll client, if any. */
void src_poll_feed(struct producer *p, const struct src_can_frame *f);
int src_poll_start(struct producer *p);
void src_poll_join(struct producer *p);
/* Each poll's counters into st->poll[] (in --poll order). */
void src_poll_stats(struct log_source *s, struct src_stats *st);
void src_poll_free(struct log_source *s);

/* ---- can_ctrlmode.c: --listen-only -------------------------------------------------- */

/* Whether the CAN interface ifindex is in listen-only mode: 1 yes, 0 no, -1 its driver has
 * no CAN control modes (vcan), -2 the kernel did not say. kind gets the link kind
 * ("can", "vcan") when known. */
int src_can_listen_only(unsigned ifindex, char *kind, size_t kindlen);

/* ---- file.c --------------------------------------------------------------------------- */

/* Candump text (file: or stdin) read to its end without one usable frame is an error
 * (issues 15 and 26): the line says how many lines were unreadable and quotes the first. */
void src_no_frames_check(struct log_source *s);
/* Keep the first unreadable line (n bytes, line number no) for that message. */
void src_note_bad_line(struct log_source *s, const char *line, size_t n, uint64_t no);

#endif
