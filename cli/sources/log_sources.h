/* Sources for `streamfat log`: where records come from, each in its own producer thread
 * appending to the log (include/streamfat/log.h) without ever blocking on the writer.
 *
 *   gen:can[,rate=N][,channels=N]   synthetic CAN; frame k of a channel has id 0x100 + (k mod 16)
 *                                   and k as 8 little-endian data bytes; one producer thread
 *                                   per channel, N frames/s each (paced with clock_nanosleep
 *                                   on absolute CLOCK_MONOTONIC times; no rate: unpaced)
 *   gen:raw                         (--raw) u64 little-endian counter words 0, 1, 2 ... at full speed
 *   stdin                           candump -L lines (--raw: bytes)
 *   file:PATH                       a candump -L, ASC or BLF log (by content; import.h)
 *                                   replayed at its recorded speed (--fast: at once); records
 *                                   keep their original timestamps, channels and flags
 *   can:IFACE[,IFACE...]            SocketCAN raw sockets, CAN FD on, SO_TIMESTAMPNS,
 *                                   SO_RXQ_OVFL (kernel drops become DROP records)
 *   canpair:FD[,FD...]              (hidden, for tests) the same reading loop on an inherited
 *                                   descriptor delivering struct can_frame / canfd_frame
 *                                   datagrams, e.g. one end of socketpair(AF_UNIX, SOCK_SEQPACKET)
 *   udp:[HOST:]PORT                 each datagram one SAMPLE record (HOST default 127.0.0.1)
 *   latency:PERIOD                  cyclictest-style probe: one LATENCY record per period
 *
 * Filters (CAN sources) and trigger rules are applied in the producer; a rule that fires
 * only raises a request, which the writer thread turns into sf_log_trigger (log.h: only the
 * writer may call it). Limits (--max-records, --max-bytes) count what a source offers to
 * the log, accepted or dropped, so a run ends after exactly that many.
 *
 * Threading: src_start spawns the producers; src_stop/src_join end them; everything else
 * may be called from any thread.
 *
 * Each kind is a file of this folder behind struct src_ops (source_int.h says how to add
 * one); source.c matches SPEC against their table. */
#ifndef SF_CLI_LOG_SOURCES_H
#define SF_CLI_LOG_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "streamfat/poll.h"

struct sf_log;

#define SRC_MAX_FILTERS 32
#define SRC_MAX_RULES 16
#define SRC_MAX_CHANNELS 256           /* a record's channel is a u8 */
#define SRC_MAX_POLLS 64               /* --poll values, on all interfaces together */

struct src_filter {
    uint32_t id, mask;
    int reject;                 /* "!ID/MASK" */
};

enum { RULE_CAN = 1, RULE_LATENCY = 2 };
struct src_rule {
    int kind;
    uint32_t id, mask;          /* RULE_CAN */
    uint64_t ns;                /* RULE_LATENCY: trigger when a sample is later than this */
};

struct src_opts {
    int raw;                    /* --raw */
    int fast;                   /* --fast (file:) */
    uint64_t max_records;       /* 0: no limit */
    uint64_t max_bytes;         /* 0: no limit (record body bytes; raw: bytes) */
    struct src_rule rules[SRC_MAX_RULES];
    unsigned nrules;
    uint32_t max_body;          /* largest record body the log takes (block size - 64) */
    /* can: the sockets' receive buffer in bytes as the kernel counts it (about 800 per
     * classic frame on Linux 6.1); 0: the kernel's default. --can-rcvbuf, or sized from
     * the ring by cmd_log. */
    uint64_t can_rcvbuf;
    int can_rcvbuf_given;       /* --can-rcvbuf: a cap by the kernel is a warning */
    /* can: the error classes to log (CAN_RAW_ERR_FILTER); --can-errors */
    uint32_t can_err_mask;
    int can_err_given;          /* 0: every class (CAN_ERR_MASK) */
    /* can: --send ID#DATA@PERIOD[+DELAY]@CHANNEL values (the caller's strings), and the
     * --listen-only interface names (never sent on) */
    const char *const *send;
    unsigned nsend;
    const char *const *listen_only;
    unsigned nlisten_only;
    /* can: --poll obd:...@PERIOD@CHANNEL / uds:... values, and the client's settings:
     * the answer timeout (0: the core's 100 ms), flow control BS and STmin */
    const char *const *poll;
    unsigned npoll;
    uint64_t poll_timeout_ns;
    unsigned poll_bs;
    uint64_t poll_stmin_ns;
};

/* What the sources did; read after src_join for exact numbers. */
struct src_stats {
    uint64_t offered;           /* records (raw: bytes) handed to the log, accepted or not */
    uint64_t offered_bytes;
    uint64_t dropped;           /* refused by the log (ring full), as the producers saw it */
    uint64_t bad_input;         /* unparsable lines, oversized datagrams, short CAN reads */
    uint64_t waits;             /* times a non-real-time source waited for ring space */
    uint64_t latency_samples, latency_max_ns;
    uint64_t rules_fired;
    uint64_t kernel_dropped;    /* can: frames the kernel dropped before the logger read
                                 * them (SO_RXQ_OVFL), each run in a DROP record */
    uint64_t tx_sent;           /* --send: frames handed to the interfaces' sockets */
    uint64_t tx_failed;         /* --send: writes refused (queue full, interface down) */
    uint64_t tx_skipped;        /* --send: periods passed over (the sender woke more than a
                                 * period late) */
    unsigned npolls;            /* --poll: each poll's counters, in --poll order */
    struct sf_poll_stats poll[SRC_MAX_POLLS];
};

struct log_source;

/* Parse --source SPEC; on a usage error returns NULL with a message in err. */
struct log_source *src_parse(const char *spec, const struct src_opts *o, char *err,
                             size_t errlen);
void src_free(struct log_source *s);
/* A source that may wait for ring space instead of dropping (stdin, file:). */
int src_can_wait(const struct log_source *s);
/* Channel names known before the start (file headers): returns the count. */
unsigned src_channels(const struct log_source *s, const char *const **names);
/* Kind of timestamps: enum sf_clock_kind. */
uint32_t src_clock_kind(const struct log_source *s);
/* Set up (open sockets, files) without starting threads: 0 or -1 after printing why. */
int src_prepare(struct log_source *s);
/* Start the producers. 0 or -1 after printing why. */
int src_start(struct log_source *s, struct sf_log *lg);
/* Ask the producers to stop; src_join waits for them. */
void src_stop(struct log_source *s);
void src_join(struct log_source *s);
/* Every producer has finished on its own (end of input, a limit reached). */
int src_finished(const struct log_source *s);
/* The writer publishes the free ring space (bytes) after each step; waiting sources read
 * it. */
void src_set_ring_free(struct log_source *s, uint64_t bytes);
/* A trigger rule fired since the last call: 1 with its time and a reason, else 0. */
int src_take_trigger(struct log_source *s, uint64_t *ts, char *why, size_t n);
void src_get_stats(const struct log_source *s, struct src_stats *st);
/* Something went wrong in a producer (I/O error): its message, or NULL. */
const char *src_error(const struct log_source *s);

/* "ID/MASK" or "!ID/MASK" (hex, optional 0x; MASK absent: exact id) into f: 0 or -1. */
int src_parse_filter(const char *s, struct src_filter *f);
/* "can:ID/MASK" or "latency>DURATION": 0 or -1 with *why set. */
int src_parse_rule(const char *s, struct src_rule *r, const char **why);

/* Parse one candump -L line "(sec.usec) iface id#data" (also id#R, id##Fdata, error frames).
 * Returns 1 with the fields set, 0 for an empty line or comment, -1 when malformed (a time
 * past 2^64 - 1 ns since 1970 too: it is refused, never wrapped). An error frame's class
 * above 0x7FF gets SF_CAN_EFF (docs/FORMAT.md).
 * iface points into line (not terminated; *iface_len bytes). */
struct src_can_frame {
    uint64_t ts;                /* 0 when the line has no time (has_ts 0) */
    uint8_t has_ts;             /* the line gave a time: "(sec.frac)" */
    const char *why;            /* -1: what is wrong, when more is known than "malformed" */
    uint32_t id, flags;         /* SF_CAN_* */
    uint8_t len;
    uint8_t data[64];
};
int src_parse_candump(const char *line, size_t n, struct src_can_frame *f, const char **iface,
                      size_t *iface_len);

/* The CAN reading loop on any descriptor delivering struct can_frame (16 bytes) or
 * struct canfd_frame (72 bytes) datagrams; SO_TIMESTAMPNS control messages give the time
 * when present, otherwise the time of reception. Exposed for tests/helpers. */
int src_can_decode(const void *buf, size_t len, struct src_can_frame *f);

#endif
