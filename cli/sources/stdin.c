/* stdin: candump -L lines (candump.c), or with --raw bytes as they come. */
#include "source_int.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int stdin_match(const char *spec)
{
    return strcmp(spec, "stdin") == 0 || strcmp(spec, "-") == 0;
}

static int stdin_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    (void)spec;
    (void)err;
    (void)errlen;
    s->nprod = 1;
    s->prod[0].fd = 0;
    return 0;
}

/* stdin --raw: bytes as they come, in pieces no larger than a block's worth. */
static void *stdin_raw_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = 65536;
    uint8_t *buf = malloc(cap);
    struct waiter w = { 0, 0, 65536 };
    uint64_t total = 0;
    int done = 0;

    if (!buf) {
        src_set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s)) {
        struct pollfd pf = { p->fd, POLLIN, 0 };
        size_t want = cap;
        ssize_t r;
        sf_ssize_t got;
        int pr = poll(&pf, 1, POLL_MS);
        if (pr == 0 || (pr < 0 && errno == EINTR))
            continue;
        if (s->o.max_bytes && s->o.max_bytes - total < want)
            want = (size_t)(s->o.max_bytes - total);
        if (want == 0) {
            done = 1;
            break;
        }
        r = read(p->fd, buf, want);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            src_set_error(s, "stdin: read: %s", strerror(errno));
            break;
        }
        if (r == 0) {
            done = 1;
            break;
        }
        src_wait_for_room(s, &w, (uint64_t)r);
        got = sf_log_write_raw(s->lg, buf, (size_t)r);
        if (got < 0) {
            src_set_error(s, "raw write: %s", sf_strerror((int)got));
            break;
        }
        p->offered += (uint64_t)r;
        p->offered_bytes += (uint64_t)r;
        p->dropped += (uint64_t)r - (uint64_t)got;
        total += (uint64_t)r;
    }
    src_flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static void *stdin_main(void *arg)
{
    struct producer *p = arg;

    return p->s->o.raw ? stdin_raw_main(arg) : src_lines_main(arg);
}

const struct src_ops src_stdin_ops = {
    .name = "stdin",
    .match = stdin_match,
    .parse = stdin_parse,
    .run = stdin_main,
    .can_wait = 1,
};
