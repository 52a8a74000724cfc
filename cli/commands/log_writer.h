/* streamfat log inside: the options as parsed (cmd_log.c), and the writer thread with the
 * status line and the report (log_writer.c). */
#ifndef SF_CLI_LOG_WRITER_H
#define SF_CLI_LOG_WRITER_H

#include "sources/log_sources.h"
#include "streamfat/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define NS UINT64_C(1000000000)

static inline uint64_t now_ns(clockid_t c)
{
    struct timespec ts;

    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

struct log_args {
    const char *source, *target, *dir, *name;
    const char *device_id;   /* --device-id: META device=NAME */
    const char *encrypt_to;  /* --encrypt-to: the recipient's public key file */
    uint32_t encrypt_aead;   /* --encrypt-aead: enum sf_aead, 0 the default */
    struct src_opts so;
    struct lctl *ctl;            /* the control options (log_control.h) */
    uint64_t pre_ns, pre_bytes, post_ns, split_bytes, split_ns, sync_ns, sync_bytes;
    uint64_t ring, chunk, duration_ns, mkfs_size;
    unsigned qd;
    int cyclic, json, quiet, measure, direct, mkfs_type, mkfs, have_size, force;
    int compress;                /* --compress: the level, 0 off */
    uint32_t partition;
};

struct writer {
    struct sf_log *lg;
    struct log_source *src;
    pthread_t th;
    atomic_int stop;               /* main: finish (drain, close) and return */
    atomic_int usr1;               /* main: SIGUSR1 triggers to deliver */
    atomic_int failed;             /* writer: an error happened (err holds it) */
    int err;                       /* first error of service or close */
    int close_err;
    /* published for the main thread */
    pthread_mutex_t lock;
    struct sf_log_stats st;
    struct sf_hist h_append, h_device, h_durable;
    int have_snapshot;
};

/* Publish the log's statistics and histograms for the main thread (under w->lock). */
void log_snapshot(struct writer *w);
/* The writer thread (arg: its struct writer): services the log until w->stop, then writes
 * what is left and closes the log. */
void *log_writer_main(void *arg);
/* The status line on standard error (a terminal), rates since the last call. */
void log_status_line(struct writer *w, double secs, uint64_t *last_rec, double *last_t);
/* The final report: --json on standard output, else the counters on standard error. */
void log_report(const struct log_args *a, struct writer *w, const struct src_stats *ss,
                double secs, int status, const char *error);

#endif
