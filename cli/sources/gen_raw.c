/* gen:raw (--raw): u64 little-endian counter words 0, 1, 2 ... at full speed. */
#include "source_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gen_raw_match(const char *spec)
{
    return strcmp(spec, "gen:raw") == 0;
}

static int gen_raw_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    (void)spec;
    s->nprod = 1;
    if (!s->o.raw) {
        snprintf(err, errlen, "gen:raw needs --raw");
        return -1;
    }
    return 0;
}

#define RAW_CHUNK 65536u

static void *gen_raw_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    uint8_t *buf = malloc(RAW_CHUNK);
    uint64_t total = 0;
    struct waiter wt = { 0, 0, 0 };
    int done = 0;

    if (!buf) {
        src_set_error(s, "out of memory");
        return NULL;
    }
    wt.margin = RAW_CHUNK;
    while (!stopping(s)) {
        uint64_t n = RAW_CHUNK;
        sf_ssize_t got;
        if (s->o.max_bytes && total + n > s->o.max_bytes)
            n = s->o.max_bytes - total;
        if (n == 0) {
            done = 1;
            break;
        }
        /* the pattern: byte i of the stream is byte (i mod 8) of the u64 word i / 8. total
         * is a multiple of 8 here (n is RAW_CHUNK except at the very end of --max-bytes),
         * so whole words are one store each; a source must cost less than what it measures
         * (byte by byte this loop took 9 instructions per byte, the append 1) */
        uint64_t whole = (total & 7) ? 0 : n >> 3, word = total >> 3;
        for (uint64_t i = 0; i < whole; i++)
            put_le64(buf + 8 * i, word + i);
        for (uint64_t k = 8 * whole; k < n; k++)
            buf[k] = (uint8_t)(((total + k) >> 3) >> (8 * ((total + k) & 7)));
        src_wait_for_room(s, &wt, n);
        /* The wait also ends when the run stops: the ring may still be full then, and this
         * chunk, made here rather than read from anywhere, is not offered (it was counted
         * as 64 KiB dropped, exit status 3, when --duration ended a run on a slow device). */
        if (stopping(s))
            break;
        got = sf_log_write_raw(s->lg, buf, (size_t)n);
        if (got < 0) {
            src_set_error(s, "raw write: %s", sf_strerror((int)got));
            break;
        }
        p->offered += n;
        p->offered_bytes += n;
        p->dropped += n - (uint64_t)got;
        total += n;
    }
    src_flush_counters(p);
    free(buf);
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

const struct src_ops src_gen_raw_ops = {
    .name = "gen:raw",
    .match = gen_raw_match,
    .parse = gen_raw_parse,
    .run = gen_raw_main,
    .can_wait = 1,
};
