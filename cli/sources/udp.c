/* udp:[HOST:]PORT: each datagram one SAMPLE record (HOST default 127.0.0.1). PORT 0: a
 * port the kernel picks, announced on stderr ("udp: listening on HOST:PORT") once bound, and
 * the channel named with it; a sender (a test) waits for that line instead of racing for a
 * free port. */
#include "source_int.h"
#include "cli.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int udp_match(const char *spec)
{
    return strncmp(spec, "udp:", 4) == 0;
}

static int udp_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    const char *p = spec + 4, *colon = strrchr(p, ':');
    uint64_t port;

    snprintf(s->host, sizeof s->host, "127.0.0.1");
    if (colon) {
        if ((size_t)(colon - p) >= sizeof s->host || colon == p) {
            snprintf(err, errlen, "udp: bad host in '%s'", spec);
            return -1;
        }
        memcpy(s->host, p, (size_t)(colon - p));
        s->host[colon - p] = '\0';
        p = colon + 1;
    }
    if (cli_parse_uint(p, 65535, &port)) {
        snprintf(err, errlen, "udp: expects a port 0..65535 (0: any free one): '%s'", spec);
        return -1;
    }
    s->port = (uint16_t)port;
    s->nprod = 1;
    if (s->o.raw) {
        snprintf(err, errlen, "udp: makes records; --raw does not apply");
        return -1;
    }
    src_add_name(s, spec, strlen(spec));
    return 0;
}

static void *udp_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = s->o.max_body + 1;
    uint8_t *buf = malloc(cap);
    int done = 0;

    if (!buf) {
        src_set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s)) {
        uint64_t ts;
        int mflags;
        ssize_t r = src_recv_stamped(p->fd, buf, cap, &ts, &mflags);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            src_set_error(s, "udp: receive: %s", strerror(errno));
            break;
        }
        if ((size_t)r > s->o.max_body || (mflags & MSG_TRUNC)) {
            atomic_fetch_add_explicit(&s->bad, 1, memory_order_relaxed);
            continue;
        }
        if (!ts)
            ts = now_ns(CLOCK_REALTIME);
        if ((s->o.max_records || s->o.max_bytes) &&
            !src_take_budget(s, sf_rec_size((uint32_t)r))) {
            done = 1;
            break;
        }
        if (sf_log_append(s->lg, SF_REC_SAMPLE, (uint8_t)p->ch, 0, ts, buf, (uint16_t)r))
            p->dropped++;
        p->offered++;
        p->offered_bytes += sf_rec_size((uint32_t)r);
    }
    src_flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static int open_udp(struct log_source *s, struct producer *p)
{
    struct sockaddr_in a;
    int fd, on = 1;
    char what[128];

    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(s->port);
    if (inet_pton(AF_INET, s->host, &a.sin_addr) != 1) {
        cli_err("udp: '%s' is not an IPv4 address", s->host);
        return -1;
    }
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        cli_err("udp: socket: %s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
    {
        int rcvbuf = 8 << 20;            /* ride out short writer stalls in the kernel */
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    }
    snprintf(what, sizeof what, "udp: bind %s:%u", s->host, (unsigned)s->port);
    if (src_bind_source(p, fd, &a, sizeof a, what))
        return -1;
    if (s->port == 0) {
        socklen_t len = sizeof a;
        char name[96];
        if (getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
            cli_err("udp: getsockname: %s", strerror(errno));
            return -1;                  /* the producer's fd is closed by src_free */
        }
        s->port = ntohs(a.sin_port);
        /* The channel's name as if the port had been given (names[0] is read when the
         * log opens, after this). */
        if (strchr(s->names[0] + 4, ':'))
            snprintf(name, sizeof name, "udp:%s:%u", s->host, (unsigned)s->port);
        else
            snprintf(name, sizeof name, "udp:%u", (unsigned)s->port);
        free(s->names[0]);
        s->names[0] = NULL;
        s->nnames = 0;
        src_add_name(s, name, strlen(name));
        fprintf(stderr, "streamfat log: udp: listening on %s:%u\n", s->host, (unsigned)s->port);
    }
    return 0;
}

const struct src_ops src_udp_ops = {
    .name = "udp:",
    .match = udp_match,
    .parse = udp_parse,
    .prepare = open_udp,
    .run = udp_main,
};
