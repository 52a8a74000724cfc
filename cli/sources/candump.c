/* candump -L lines (log_sources.h): the parser of one line, and the producer that reads
 * lines from a descriptor for stdin and for file: with a candump log. The parser stands
 * alone (fuzz/fuzz_candump.c links it without the rest). */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/can.h>

int src_parse_hex32(const char *s, size_t n, uint32_t *out)
{
    uint32_t v = 0;
    size_t i;

    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
        n -= 2;
    }
    if (n == 0 || n > 8)
        return -1;
    for (i = 0; i < n; i++) {
        int d;
        char c = s[i];
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 0;
}

const uint8_t src_fd_lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64 };

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int src_parse_candump(const char *line, size_t n, struct src_can_frame *f, const char **iface,
                      size_t *iface_len)
{
    const char *p = line, *end = line + n, *tok, *hash;
    size_t i;
    uint32_t raw;

    memset(f, 0, sizeof *f);
    *iface = "";
    *iface_len = 0;
    while (end > p && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p == '#')
        return 0;
    if (*p == '(') {
        uint64_t sec = 0, frac = 0;
        unsigned digits = 0;
        p++;
        if (p == end || hexval(*p) < 0 || *p > '9')
            return -1;
        while (p < end && *p >= '0' && *p <= '9') {
            if (sec > (uint64_t)INT64_MAX / 10 / NS) {
                f->why = "timestamp out of range (at or after 2^63 ns, 2262-04-11)";
                return -1;
            }
            sec = sec * 10 + (uint64_t)(*p++ - '0');
        }
        if (p < end && *p == '.') {
            p++;
            while (p < end && *p >= '0' && *p <= '9') {
                if (digits < 9) {
                    frac = frac * 10 + (uint64_t)(*p - '0');
                    digits++;
                }
                p++;
            }
        }
        if (p == end || *p != ')')
            return -1;
        p++;
        while (digits < 9) {
            frac *= 10;
            digits++;
        }
        /* docs/FORMAT.md: timestamps are below 2^63 ns, so that every reader (Python's
         * signed 64-bit nanoseconds too) takes them as they are */
        if (sec > ((uint64_t)INT64_MAX - frac) / NS) {
            f->why = "timestamp out of range (at or after 2^63 ns, 2262-04-11)";
            return -1;
        }
        f->ts = sec * NS + frac;
        f->has_ts = 1;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
    }
    /* [iface] frame */
    tok = p;
    while (p < end && *p != ' ' && *p != '\t')
        p++;
    if (!memchr(tok, '#', (size_t)(p - tok))) {
        *iface = tok;
        *iface_len = (size_t)(p - tok);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        tok = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
    }
    end = p;                    /* anything after the frame (candump -x extras) is ignored */
    hash = memchr(tok, '#', (size_t)(end - tok));
    if (!hash || src_parse_hex32(tok, (size_t)(hash - tok), &raw))
        return -1;
    if (hash - tok > 3) {
        /* candump -L writes an extended id as its 29 bits (with CAN_ERR_FLAG for an error
         * frame) and a remote frame as #R: the EFF and RTR flag bits (31, 30) of a canid_t
         * are never in the text, and a line with them is refused, not guessed at */
        if (raw & ~(CAN_EFF_MASK | CAN_ERR_FLAG)) {
            f->why = "id with bit 30 or 31 set (candump -L writes a remote frame as #R)";
            return -1;
        }
        f->id = raw & CAN_EFF_MASK;
        /* docs/FORMAT.md: an error class above 0x7FF carries EFF like any such id */
        if (!(raw & CAN_ERR_FLAG) || f->id > CAN_SFF_MASK)
            f->flags |= SF_CAN_EFF;
        if (raw & CAN_ERR_FLAG)
            f->flags |= SF_CAN_ERR;
    } else {
        if (raw > CAN_SFF_MASK)
            return -1;
        f->id = raw;
    }
    p = hash + 1;
    if (p < end && *p == '#') {                 /* CAN FD: ##<flags nibble><data> */
        int fl;
        p++;
        if (p == end || (fl = hexval(*p)) < 0)
            return -1;
        p++;
        f->flags |= SF_CAN_FD;
        if (fl & CANFD_BRS)
            f->flags |= SF_CAN_BRS;
        if (fl & CANFD_ESI)
            f->flags |= SF_CAN_ESI;
    } else if (p < end && (*p == 'R' || *p == 'r')) {
        f->flags |= SF_CAN_RTR;
        p++;
        if (p < end && *p >= '0' && *p <= '8')
            f->len = (uint8_t)(*p++ - '0');
        /* an error frame cannot be a remote frame: sf_rec_can_valid would refuse it, and the
         * logger would count a malformed line as a drop (found by fuzz/fuzz_candump.c) */
        return p == end && sf_rec_can_valid(f->id, f->flags, f->len) ? 1 : -1;
    }
    i = 0;
    while (p < end) {
        int hi, lo;
        if (*p == '.') {
            p++;
            continue;
        }
        if (*p == '_' && !(f->flags & SF_CAN_FD))   /* _<len8_dlc>: not kept */
            break;
        if (p + 1 >= end || (hi = hexval(p[0])) < 0 || (lo = hexval(p[1])) < 0)
            return -1;
        if (i == ((f->flags & SF_CAN_FD) ? 64u : 8u))
            return -1;
        f->data[i++] = (uint8_t)(hi << 4 | lo);
        p += 2;
    }
    if (f->flags & SF_CAN_FD) {
        unsigned k;
        for (k = 0; k < sizeof src_fd_lens; k++)
            if (src_fd_lens[k] == i)
                break;
        if (k == sizeof src_fd_lens)
            return -1;
    }
    f->len = (uint8_t)i;
    return sf_rec_can_valid(f->id, f->flags, f->len) ? 1 : -1;   /* e.g. no CAN FD error frames */
}

/* The channel of the interface a candump line names (channel 0 for none). New names (stdin
 * only: file: knows them all before the start) are named in the log (sf_log_name_channel:
 * this file and every later one). -1: the line is bad input (*why); -2: the run cannot go
 * on (error set: more interfaces than channels). */
static int line_channel(struct producer *p, const char *ifc, size_t il, uint64_t ts,
                        struct waiter *w, const char **why)
{
    struct log_source *s = p->s;
    unsigned i;

    if (il == 0)
        return 0;
    for (i = 0; i < s->nnames; i++)
        if (strlen(s->names[i]) == il && memcmp(s->names[i], ifc, il) == 0)
            return (int)i;
    if (s->nnames < SRC_MAX_CHANNELS && s->path) {
        src_set_error(s, "%s line %" PRIu64 ": interface '%.*s' was not there when the file was "
                      "scanned (did it change?)", src_name(s), s->lineno, il > 64 ? 64 : (int)il,
                      ifc);
        return -2;
    }
    if (s->nnames == SRC_MAX_CHANNELS) {
        src_set_error(s, "%s line %" PRIu64 ": more than %u interfaces ('%.*s'): the log has "
                      "channels 0 to %u", src_name(s), s->lineno, SRC_MAX_CHANNELS,
                      il > 64 ? 64 : (int)il, ifc, SRC_MAX_CHANNELS - 1);
        return -2;
    }
    if (il > s->o.max_body - SF_FILE_HDR) {     /* sf_log_name_channel's limit, B - 96 */
        *why = "interface name too long";
        return -1;
    }
    pthread_mutex_lock(&s->lock);  /* src_channels readers are done by now; names grow only */
    src_add_name(s, ifc, il);
    pthread_mutex_unlock(&s->lock);
    src_wait_for_room(s, w, sf_rec_size((uint32_t)il));
    /* the CHANNEL record goes through the ring like a frame: records_in counts it, so
     * records_offered does too (it was 1 short per interface: issue 26) */
    int rc = sf_log_name_channel(s->lg, (uint8_t)i, s->names[i], ts);
    if (rc == 0 || rc == SF_EDROPPED) {
        p->offered++;
        p->offered_bytes += sf_rec_size((uint32_t)il);
        p->dropped += rc != 0;                                  /* a refusal is a drop */
    }
    return (int)i;
}

/* Handle one line; -1 when the budget is used up, -2 on an error that ends the run. */
static int handle_line(struct producer *p, const char *line, size_t n, struct waiter *w,
                       struct pacer *pc)
{
    struct log_source *s = p->s;
    struct src_can_frame f;
    const char *ifc;
    size_t il;
    int rc = src_parse_candump(line, n, &f, &ifc, &il), ch;
    const char *why = NULL;

    s->lineno++;
    if (rc == 0)
        return 0;
    if (rc < 0) {
        src_note_bad_line(s, line, n, s->lineno);
        src_bad_input(s, "line", s->lineno, f.why ? f.why : "not a candump -L frame");
        return 0;
    }
    if (!f.has_ts)
        f.ts = now_ns(CLOCK_REALTIME);         /* no time in the line: when it came */
    ch = line_channel(p, ifc, il, f.ts, w, &why);
    if (ch == -2)
        return -2;
    if (ch < 0) {
        src_note_bad_line(s, line, n, s->lineno);
        src_bad_input(s, "line", s->lineno, why);
        return 0;
    }
    if (!src_in_order(s, (unsigned)ch, f.ts)) {
        if (f.has_ts) {
            src_bad_input(s, "line", s->lineno, "timestamp earlier than the previous line's on "
                          "the same interface");
            return 0;
        }
        f.ts = s->last_ts[ch];                 /* the host's clock went back */
    }
    if (s->path)
        src_pace(s, pc, f.ts);
    p->ch = (unsigned)ch;
    src_wait_for_room(s, w, sf_rec_size(SF_CAN_BODY + f.len));
    return src_emit_can(p, &f) < 0 ? -1 : 0;
}

void *src_lines_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    struct waiter w = { 0, 0, 65536 };
    struct pacer pc = { 0, 0, 0 };
    int fd = p->fd, eof = 0, limit = 0, failed = 0;

    if (!buf) {
        src_set_error(s, "out of memory");
        return NULL;
    }
    while (!stopping(s) && !eof && !limit && !failed) {
        struct pollfd pf = { fd, POLLIN, 0 };
        ssize_t r;
        char *nl, *start;
        if (!s->path) {
            int pr = poll(&pf, 1, POLL_MS);
            if (pr == 0 || (pr < 0 && errno == EINTR))
                continue;
        }
        if (len == cap) {                       /* a line longer than the buffer: skip it */
            src_bad_input(s, "line", s->lineno + 1, "longer than 64 KiB");
            len = 0;
        }
        r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            src_set_error(s, "%s: read: %s", src_name(s), strerror(errno));
            break;
        }
        if (r == 0) {
            eof = 1;
            if (len && len < cap)
                buf[len++] = '\n';              /* a last line without a newline */
        }
        len += (size_t)r;
        start = buf;
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf))) != NULL) {
            int hr = handle_line(p, start, (size_t)(nl - start + 1), &w, &pc);
            if (hr == -2) {
                failed = 1;
                break;
            }
            if (hr < 0) {
                limit = 1;
                break;
            }
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
    }
    src_flush_counters(p);
    free(buf);
    if (eof)
        src_no_frames_check(s);
    if (eof || limit)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}
