/* Sources for `streamfat log` (log_sources.h): the table of source kinds, parsing --source
 * into one of them, and the life cycle every kind shares (prepare, start, stop, join) with
 * the numbers the writer reads (finished, ring room, triggers, stats, errors).
 *
 * The kinds, one file each, are listed in source_int.h. */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every kind of source, in the order --source SPEC is matched against them. */
static const struct src_ops *const kinds[] = {
    &src_gen_can_ops, &src_gen_raw_ops, &src_stdin_ops, &src_file_ops,
    &src_can_ops,     &src_canpair_ops, &src_udp_ops,   &src_latency_ops,
};

int src_parse_u64_dec(const char *s, size_t n, uint64_t *out)
{
    char buf[32];

    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return cli_parse_uint(buf, UINT64_MAX, out);
}

void src_add_name(struct log_source *s, const char *name, size_t n)
{
    char *p = malloc(n + 1);

    if (!p) {
        fprintf(stderr, "streamfat: out of memory\n");
        exit(CLI_ERR);
    }
    memcpy(p, name, n);
    p[n] = '\0';
    s->names[s->nnames++] = p;
}

struct log_source *src_parse(const char *spec, const struct src_opts *o, char *err,
                             size_t errlen)
{
    struct log_source *s = calloc(1, sizeof *s);

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    pthread_mutex_init(&s->lock, NULL);
    for (unsigned i = 0; i < SRC_MAX_CHANNELS; i++)
        s->prod[i].fd = -1;

    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k]->match(spec)) {
            s->ops = kinds[k];
            break;
        }
    if (!s->ops) {
        snprintf(err, errlen, "unknown source '%s' (gen:can, gen:raw, stdin, file:PATH, "
                 "can:IFACE, udp:PORT, latency:PERIOD)", spec);
        goto bad;
    }
    if (s->ops->parse(s, spec, err, errlen) || src_send_parse(s, err, errlen) ||
        src_poll_parse(s, err, errlen))
        goto bad;
    return s;
bad:
    src_free(s);
    return NULL;
}

void src_free(struct log_source *s)
{
    if (!s)
        return;
    for (unsigned i = 0; i < s->nnames; i++)
        free(s->names[i]);
    if (s->ops && s->ops->release)
        s->ops->release(s);
    src_send_free(s);
    src_poll_free(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int src_can_wait(const struct log_source *s)
{
    return s->ops->can_wait;
}

unsigned src_channels(const struct log_source *s, const char *const **names)
{
    *names = (const char *const *)s->names;
    return s->nnames;
}

uint32_t src_clock_kind(const struct log_source *s)
{
    (void)s;
    return SF_CLOCK_REALTIME;
}

int src_prepare(struct log_source *s)
{
    for (unsigned i = 0; i < s->nprod; i++) {
        struct producer *p = &s->prod[i];
        p->s = s;
        p->ch = i;
        if (s->ops->prepare && s->ops->prepare(s, p))
            return -1;
    }
    return 0;
}

int src_start(struct log_source *s, struct sf_log *lg)
{
    s->lg = lg;
    atomic_store(&s->ring_free, UINT64_MAX / 2);
    for (unsigned i = 0; i < s->nprod; i++) {
        int err = pthread_create(&s->prod[i].th, NULL, s->ops->run, &s->prod[i]);
        if (err) {
            cli_err("cannot start a producer thread: %s", strerror(err));
            src_stop(s);
            src_join(s);
            return -1;
        }
        s->prod[i].started = 1;
    }
    return 0;
}

void src_stop(struct log_source *s)
{
    atomic_store(&s->stop, 1);
}

void src_join(struct log_source *s)
{
    for (unsigned i = 0; i < s->nprod; i++) {
        struct producer *p = &s->prod[i];
        if (p->started)
            pthread_join(p->th, NULL);
        p->started = 0;
        if (p->fd > 2 && !s->ops->borrowed_fds) {
            close(p->fd);
            p->fd = -1;
        }
    }
}

int src_finished(const struct log_source *s)
{
    return atomic_load(&((struct log_source *)s)->finished) >= s->nprod ||
           atomic_load(&((struct log_source *)s)->limit_hit);
}

void src_set_ring_free(struct log_source *s, uint64_t bytes)
{
    atomic_store_explicit(&s->ring_free, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->ring_epoch, 1, memory_order_release);
}

int src_take_trigger(struct log_source *s, uint64_t *ts, char *why, size_t n)
{
    int got = 0;

    pthread_mutex_lock(&s->lock);
    if (s->trig_pending) {
        *ts = s->trig_ts;
        snprintf(why, n, "%s", s->trig_why);
        s->trig_pending = 0;
        got = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return got;
}

void src_get_stats(const struct log_source *cs, struct src_stats *st)
{
    struct log_source *s = (struct log_source *)cs;

    memset(st, 0, sizeof *st);
    st->offered = atomic_load(&s->offered);
    st->offered_bytes = atomic_load(&s->offered_bytes);
    st->dropped = atomic_load(&s->dropped);
    st->bad_input = atomic_load(&s->bad);
    st->waits = atomic_load(&s->waits);
    st->latency_samples = atomic_load(&s->lat_n);
    st->latency_max_ns = atomic_load(&s->lat_max);
    st->rules_fired = atomic_load(&s->rules_fired);
    st->kernel_dropped = atomic_load(&s->kdropped);
    for (unsigned i = 0; i < s->nprod; i++) {
        st->tx_sent += atomic_load(&s->tx_sent[i]);
        st->tx_failed += atomic_load(&s->tx_failed[i]);
        st->tx_skipped += atomic_load(&s->tx_skipped[i]);
    }
    src_poll_stats(s, st);
}

const char *src_error(const struct log_source *cs)
{
    struct log_source *s = (struct log_source *)cs;
    const char *e;

    pthread_mutex_lock(&s->lock);
    e = s->has_err ? s->err : NULL;
    pthread_mutex_unlock(&s->lock);
    return e;
}
