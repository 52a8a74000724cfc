/* The writer thread of streamfat log (log_writer.h), the only one touching the volume:
 * sf_log_service, triggers, the ring room the waiting sources read, statistics snapshots
 * for the main thread; and what the main thread shows of them: the status line and the
 * final report (text or --json). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "log_writer.h"
#include "common/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define SNAPSHOT_NS 100000000ull     /* writer publishes statistics this often */
/* The writer's sleep when there is nothing to do: IDLE_MIN_NS after work, doubling while
 * it stays idle up to idle_cap (at most IDLE_MAX_NS). Polling every 200 us for ever cost
 * more CPU than receiving the frames (5,000 wake-ups a second: 10 % of a host core with no
 * traffic, most of the logger's CPU under an emulator). The cap keeps a burst that starts
 * while the writer sleeps within a quarter of the ring: about ring bytes in ns is a quarter
 * of the ring at 256 MB/s, far above a CAN interface's rate (a --ring of 1 MiB: 1 ms). */
#define IDLE_MIN_NS 200000ull
#define IDLE_MAX_NS 10000000ull

static uint64_t idle_cap(uint64_t ring_size)
{
    return ring_size < IDLE_MIN_NS ? IDLE_MIN_NS : ring_size > IDLE_MAX_NS ? IDLE_MAX_NS
                                                                            : ring_size;
}

void log_snapshot(struct writer *w)
{
    struct sf_log_stats st;
    struct sf_hist a, d, u;

    sf_log_get_stats(w->lg, &st);
    sf_log_get_hist(w->lg, &a, &d, &u);
    pthread_mutex_lock(&w->lock);
    w->st = st;
    w->h_append = a;
    w->h_device = d;
    w->h_durable = u;
    w->have_snapshot = 1;
    pthread_mutex_unlock(&w->lock);
}

static void deliver_triggers(struct writer *w)
{
    uint64_t ts;
    char why[160];

    while (atomic_load_explicit(&w->usr1, memory_order_relaxed) > 0) {
        atomic_fetch_sub(&w->usr1, 1);
        sf_log_trigger(w->lg, now_ns(CLOCK_REALTIME), "trigger: SIGUSR1");
    }
    if (src_take_trigger(w->src, &ts, why, sizeof why))
        sf_log_trigger(w->lg, ts, why);
}

void *log_writer_main(void *arg)
{
    struct writer *w = arg;
    uint64_t last_snap = 0, idle = IDLE_MIN_NS;
    int err;

    while (!atomic_load(&w->stop)) {
        struct sf_log_stats st;
        uint64_t now;
        int rc;

        deliver_triggers(w);
        rc = sf_log_service(w->lg);
        if (rc < 0) {
            w->err = rc;
            atomic_store(&w->failed, 1);
            break;
        }
        sf_log_get_stats(w->lg, &st);
        src_set_ring_free(w->src, st.ring_size - st.ring_used);
        now = now_ns(CLOCK_MONOTONIC);
        if (now - last_snap >= SNAPSHOT_NS) {
            log_snapshot(w);
            last_snap = now;
        }
        if (rc == 0) {
            uint64_t d = sf_log_next_deadline_ns(w->lg);
            struct timespec ts;
            if (d > idle)
                d = idle;
            ts.tv_sec = 0;
            ts.tv_nsec = (long)d;
            nanosleep(&ts, NULL);
            if (idle < idle_cap(st.ring_size))
                idle *= 2;
        } else {
            idle = IDLE_MIN_NS;
        }
    }
    /* The producers have stopped (or the log failed): write what is left, checkpoint,
     * close the file. */
    deliver_triggers(w);
    err = sf_log_close(w->lg);
    if (err) {
        w->close_err = err;
        if (!w->err)
            w->err = err;
    }
    log_snapshot(w);
    return NULL;
}

/* ---- the status line and the report ------------------------------------------------ */

static void fmt_ns(uint64_t ns, char *buf, size_t n)
{
    if (ns < 10000)
        snprintf(buf, n, "%" PRIu64 " ns", ns);
    else if (ns < 10000000)
        snprintf(buf, n, "%.1f us", (double)ns / 1e3);
    else
        snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
}

void log_status_line(struct writer *w, double secs, uint64_t *last_rec, double *last_t)
{
    struct sf_log_stats st;
    struct sf_hist d;
    char worst[32];
    double rate;

    pthread_mutex_lock(&w->lock);
    st = w->st;
    d = w->h_device;
    pthread_mutex_unlock(&w->lock);
    rate = secs > *last_t ? (double)(st.records_in - *last_rec) / (secs - *last_t) : 0;
    *last_rec = st.records_in;
    *last_t = secs;
    fmt_ns(d.max_ns, worst, sizeof worst);
    fprintf(stderr, "\r%7.1f s %10.1f MB %8.1f MB/s %11.0f rec/s  drops %" PRIu64
            "  ring %3.0f%%  worst write %s   ", secs, (double)st.bytes_written / 1e6,
            secs > 0 ? (double)st.bytes_written / 1e6 / secs : 0.0, rate, st.records_dropped,
            st.ring_size ? 100.0 * (double)st.ring_used / (double)st.ring_size : 0.0, worst);
    fflush(stderr);
}

static void json_hist(FILE *out, int *first, const char *name, const struct sf_hist *h)
{
    char k[64];

    snprintf(k, sizeof k, "%s_count", name);
    json_kv_u64(out, first, k, h->count);
    snprintf(k, sizeof k, "%s_p50_ns", name);
    json_kv_u64(out, first, k, h->count ? sf_hist_percentile(h, 0.5) : 0);
    snprintf(k, sizeof k, "%s_p99_ns", name);
    json_kv_u64(out, first, k, h->count ? sf_hist_percentile(h, 0.99) : 0);
    snprintf(k, sizeof k, "%s_p999_ns", name);
    json_kv_u64(out, first, k, h->count ? sf_hist_percentile(h, 0.999) : 0);
    snprintf(k, sizeof k, "%s_max_ns", name);
    json_kv_u64(out, first, k, h->max_ns);
}

void log_report(const struct log_args *a, struct writer *w, const struct src_stats *ss,
                double secs, int status, const char *error)
{
    const struct sf_log_stats *st = &w->st;
    FILE *out = stdout;
    int first = 1;
    uint64_t kept_out = st->records_filtered + st->records_prescaled + st->records_paused;

    if (a->json) {
        fputc('{', out);
        /* include/streamfat/log.h: records_in = records_written + records_dropped; the
         * writer's own DROP and ANNOTATION records are records_own, apart */
        json_kv_u64(out, &first, "records_in", st->records_in);
        json_kv_u64(out, &first, "records_own", st->records_own);
        json_kv_u64(out, &first, "records_written", st->records_written);
        json_kv_u64(out, &first, "records_dropped", st->records_dropped);
        json_kv_u64(out, &first, "bytes_in", st->bytes_in);
        json_kv_u64(out, &first, "bytes_written", st->bytes_written);
        json_kv_u64(out, &first, "bytes_durable", st->bytes_durable);
        fputs(", \"seconds\": ", out);
        fprintf(out, "%.6f", secs);
        json_kv_u64(out, &first, "files", st->files);
        json_kv_u64(out, &first, "files_deleted", st->files_deleted);
        json_kv_u64(out, &first, "triggers", st->triggers);
        json_kv_u64(out, &first, "ring_size", st->ring_size);
        json_kv_u64(out, &first, "ring_high_water", st->ring_high_water);
        /* the core's control stage (--filter, --prescale, --start/--stop) keeps frames the
         * source handed to the log out of the ring: not offered to it */
        json_kv_u64(out, &first, "records_offered", ss->offered - kept_out);
        json_kv_u64(out, &first, "records_filtered", st->records_filtered);
        json_kv_u64(out, &first, "records_prescaled", st->records_prescaled);
        json_kv_u64(out, &first, "records_paused", st->records_paused);
        json_kv_u64(out, &first, "source_dropped", ss->dropped);
        json_kv_u64(out, &first, "kernel_dropped", ss->kernel_dropped);
        if (a->so.nsend) {
            json_kv_u64(out, &first, "frames_sent", ss->tx_sent);
            json_kv_u64(out, &first, "sends_failed", ss->tx_failed);
            json_kv_u64(out, &first, "sends_skipped", ss->tx_skipped);
        }
        if (ss->npolls) {
            /* --poll: each poll's counters (include/streamfat/poll.h), in --poll order */
            fputs(", \"polls\": [", out);
            for (unsigned i = 0; i < ss->npolls; i++) {
                const struct sf_poll_stats *p = &ss->poll[i];
                int f2 = 1;
                fputs(i ? ", {" : "{", out);
                json_kv_str(out, &f2, "poll", a->so.poll[i]);
                json_kv_u64(out, &f2, "requests", p->requests);
                json_kv_u64(out, &f2, "answers", p->answers);
                json_kv_u64(out, &f2, "multi_frame", p->multi_frame);
                json_kv_u64(out, &f2, "negative", p->negative);
                json_kv_u64(out, &f2, "pending", p->pending);
                json_kv_u64(out, &f2, "timeouts", p->timeouts);
                json_kv_u64(out, &f2, "late", p->late);
                json_kv_u64(out, &f2, "broken", p->broken);
                json_kv_u64(out, &f2, "overflow", p->overflow);
                json_kv_u64(out, &f2, "flow_controls", p->flow_controls);
                json_kv_u64(out, &f2, "skipped", p->skipped);
                json_kv_u64(out, &f2, "failed", p->failed);
                fputc('}', out);
            }
            fputc(']', out);
        }
        json_kv_u64(out, &first, "bad_input", ss->bad_input);
        json_kv_u64(out, &first, "source_waits", ss->waits);
        json_kv_u64(out, &first, "rules_fired", ss->rules_fired);
        if (ss->latency_samples) {
            json_kv_u64(out, &first, "latency_samples", ss->latency_samples);
            json_kv_u64(out, &first, "latency_max_ns", ss->latency_max_ns);
        }
        json_hist(out, &first, "append", &w->h_append);
        json_hist(out, &first, "device", &w->h_device);
        json_hist(out, &first, "durable", &w->h_durable);
        json_kv_bool(out, &first, "raw", a->so.raw);
        json_kv_str(out, &first, "source", a->source);
        json_kv_i64(out, &first, "exit_status", status);
        if (error)
            json_kv_str(out, &first, "error", error);
        fputs("}\n", out);
        fflush(out);
        return;
    }
    if (a->quiet)
        return;
    /* the counters and names of --json and include/streamfat/log.h */
    if (a->so.raw)
        fprintf(stderr, "%s: bytes in %" PRIu64 ", bytes dropped %" PRIu64, a->target,
                st->bytes_in, st->records_dropped);
    else {
        uint64_t out_n = st->records_written + st->records_dropped;
        uint64_t rest = st->records_in > out_n ? st->records_in - out_n : 0;
        fprintf(stderr, "%s: records in %" PRIu64 " = records written %" PRIu64
                " + records dropped %" PRIu64, a->target, st->records_in,
                st->records_written, st->records_dropped);
        if (rest)
            fprintf(stderr, " + %" PRIu64 " not written (%s)", rest,
                    error ? "the error" : "outside every trigger window");
        fprintf(stderr, "; records own %" PRIu64 " (the writer's DROP and ANNOTATION "
                "records)", st->records_own);
    }
    fprintf(stderr, "; %.1f MB written in %.2f s (%.1f MB/s); %" PRIu64 " file%s",
            (double)st->bytes_written / 1e6, secs,
            secs > 0 ? (double)st->bytes_written / 1e6 / secs : 0.0, st->files,
            st->files == 1 ? "" : "s");
    if (st->files_deleted)
        fprintf(stderr, ", %" PRIu64 " deleted", st->files_deleted);
    if (st->triggers)
        fprintf(stderr, ", %" PRIu64 " trigger%s", st->triggers, st->triggers == 1 ? "" : "s");
    if (st->records_filtered)
        fprintf(stderr, ", %" PRIu64 " filtered", st->records_filtered);
    if (st->records_prescaled)
        fprintf(stderr, ", %" PRIu64 " prescaled", st->records_prescaled);
    if (st->records_paused)
        fprintf(stderr, ", %" PRIu64 " paused", st->records_paused);
    if (ss->bad_input)
        fprintf(stderr, ", %" PRIu64 " unreadable input", ss->bad_input);
    fputc('\n', stderr);
    if (st->records_dropped)
        fprintf(stderr, "%s: %" PRIu64 " %s dropped because the ring was full (%s): a larger "
                "--ring or a faster device would help\n", a->target, st->records_dropped,
                a->so.raw ? "bytes" : "records",
                a->so.raw ? "not marked in raw files" : "DROP records mark them");
    if (a->so.nsend)
        fprintf(stderr, "%s: --send: %" PRIu64 " frames sent, %" PRIu64 " sends failed (queue "
                "full or interface down), %" PRIu64 " periods skipped (the sender was late)\n",
                a->target, ss->tx_sent, ss->tx_failed, ss->tx_skipped);
    for (unsigned i = 0; i < ss->npolls; i++) {
        const struct sf_poll_stats *p = &ss->poll[i];
        fprintf(stderr, "%s: --poll %s: %" PRIu64 " requests, %" PRIu64 " answers (%" PRIu64
                " multi-frame), %" PRIu64 " negative, %" PRIu64 " response pending, %" PRIu64
                " timeouts, %" PRIu64 " late, %" PRIu64 " broken, %" PRIu64 " overflow, %"
                PRIu64 " periods skipped, %" PRIu64 " sends failed\n", a->target,
                a->so.poll[i], p->requests, p->answers, p->multi_frame, p->negative,
                p->pending, p->timeouts, p->late, p->broken, p->overflow, p->skipped,
                p->failed);
    }
    if (ss->kernel_dropped)
        fprintf(stderr, "%s: %" PRIu64 " frames dropped by the kernel before they were read "
                "(DROP records on their channels mark them): a larger --can-rcvbuf would "
                "help\n", a->target, ss->kernel_dropped);
}
