/* Which foreign log a file: source holds, and one reader over BLF and ASC (import.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "import.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

struct imp_reader {
    enum imp_format fmt;
    struct blf_reader *blf;
    struct asc_reader *asc;
    struct mf4_reader *mf4;
};

static int word_at(const uint8_t *p, const uint8_t *end, const char *w)
{
    size_t n = strlen(w);

    return (size_t)(end - p) >= n && strncasecmp((const char *)p, w, n) == 0;
}

enum imp_format imp_detect(const uint8_t *buf, size_t n)
{
    const uint8_t *p = buf, *end;

    if (n > 4096)
        n = 4096;
    end = buf + n;
    if (n >= 4 && memcmp(buf, "LOGG", 4) == 0)
        return IMP_BLF;
    if (n >= 8 && (memcmp(buf, "MDF     ", 8) == 0 || memcmp(buf, "UnFinMF ", 8) == 0))
        return IMP_MF4;
    if (n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
        p += 3;                 /* a UTF-8 byte order mark (Windows editors) */
    while (p < end) {
        const uint8_t *eol = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *q = p;
        if (!eol)
            eol = end;
        while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q == eol || word_at(q, eol, "//")) {
            p = eol + 1;
            continue;
        }
        if (word_at(q, eol, "date ") || word_at(q, eol, "date\t") || word_at(q, eol, "base ") ||
            word_at(q, eol, "base\t") || word_at(q, eol, "begin triggerblock"))
            return IMP_ASC;
        break;
    }
    return IMP_CANDUMP;
}

int imp_open(const char *path, enum imp_format *fmt, struct imp_reader **rp, char *err,
             size_t errlen)
{
    uint8_t head[4096];
    ssize_t got;
    size_t n = 0;
    struct imp_reader *r;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    *rp = NULL;
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, cli_errno_text(errno));
        return -1;
    }
    while (n < sizeof head && (got = read(fd, head + n, sizeof head - n)) != 0) {
        if (got < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "%s: read: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        n += (size_t)got;
    }
    *fmt = imp_detect(head, n);
    if (*fmt == IMP_CANDUMP) {
        close(fd);
        return 0;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: not a regular file (BLF and ASC are read from files)", path);
        close(fd);
        return -1;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        close(fd);
        return -1;
    }
    r->fmt = *fmt;
    if (*fmt == IMP_BLF)
        r->blf = blf_reader_open(fd, path, err, errlen);
    else if (*fmt == IMP_MF4)
        r->mf4 = mf4_reader_open(fd, path, err, errlen);
    else
        r->asc = asc_reader_open(fd, path, err, errlen);
    if (!r->blf && !r->asc && !r->mf4) {
        free(r);
        return -1;
    }
    *rp = r;
    return 0;
}

int imp_next(struct imp_reader *r, struct imp_frame *fr)
{
    if (r->mf4)
        return mf4_reader_next(r->mf4, fr);
    return r->fmt == IMP_BLF ? blf_reader_next(r->blf, fr) : asc_reader_next(r->asc, fr);
}

const char *imp_error(const struct imp_reader *r)
{
    if (r->mf4)
        return mf4_reader_error(r->mf4);
    return r->fmt == IMP_BLF ? blf_reader_error(r->blf) : asc_reader_error(r->asc);
}

const char *imp_channel_name(const struct imp_reader *r, unsigned channel)
{
    return r->mf4 ? mf4_reader_channel_name(r->mf4, channel) : NULL;
}

void imp_close(struct imp_reader *r)
{
    if (!r)
        return;
    if (r->blf)
        blf_reader_close(r->blf);
    if (r->asc)
        asc_reader_close(r->asc);
    if (r->mf4)
        mf4_reader_close(r->mf4);
    free(r);
}

int imp_local_time(int year, int month, int day, int hour, int min, int sec, uint32_t ns,
                   uint64_t *out)
{
    static const int mdays[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    struct tm tm;
    time_t t;

    if (year < 1970 || year > 9999 || month < 1 || month > 12 || day < 1 ||
        day > mdays[month - 1] || hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 ||
        sec > 59 || ns >= 1000000000u)
        return -1;
    if (month == 2 && day == 29 && !(year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)))
        return -1;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = min;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;              /* the zone's rule for that date, as python's datetime */
    t = mktime(&tm);
    if (t == (time_t)-1 || t < 0)
        return -1;
    *out = (uint64_t)t * 1000000000u + ns;
    return 0;
}
