/* file:PATH: a candump -L, ASC, BLF or MF4 log (told apart by content, import.h) replayed
 * at its recorded speed (--fast: at once); records keep their original timestamps,
 * channels and flags. Candump lines go through candump.c's reader, the other formats
 * through their readers in formats/. */
#include "source_int.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int file_match(const char *spec)
{
    return strncmp(spec, "file:", 5) == 0 && spec[5];
}

/* Channel names of a candump log: the interfaces in order of first appearance. */
static void prescan_names(struct log_source *s)
{
    FILE *f = fopen(s->path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;

    if (!f)
        return;
    while ((n = getline(&line, &cap, f)) > 0) {
        struct src_can_frame fr;
        const char *ifc;
        size_t il;
        unsigned i;
        if (src_parse_candump(line, (size_t)n, &fr, &ifc, &il) != 1 || il == 0)
            continue;
        for (i = 0; i < s->nnames; i++)
            if (strlen(s->names[i]) == il && memcmp(s->names[i], ifc, il) == 0)
                break;
        if (i == s->nnames) {
            if (s->nnames == SRC_MAX_CHANNELS)
                break;
            src_add_name(s, ifc, il);
        }
    }
    free(line);
    fclose(f);
}

/* Channel names of an ASC, BLF or MF4 log: its channel numbers in order of first
 * appearance, named as python-can numbers them (channel N of the file is can<N-1>) unless
 * the file names them itself (MF4: streamfat's SI comment). A file that does
 * not read to the end stops the scan here; the replay reports the same error. */
static void prescan_import(struct log_source *s)
{
    struct imp_reader *r;
    struct imp_frame fr;
    enum imp_format fmt;
    char err[64];

    if (imp_open(s->path, &fmt, &r, err, sizeof err) || !r)
        return;
    while (imp_next(r, &fr) > 0) {
        unsigned i;
        for (i = 0; i < s->nnames; i++)
            if (s->chan_num[i] == fr.channel)
                break;
        if (i == s->nnames) {
            char nm[16];
            const char *own = imp_channel_name(r, fr.channel);
            if (s->nnames == SRC_MAX_CHANNELS)
                break;
            s->chan_num[s->nnames] = fr.channel;
            if (own) {
                src_add_name(s, own, strlen(own));
                continue;
            }
            if (fr.channel)
                snprintf(nm, sizeof nm, "can%u", fr.channel - 1);
            else
                snprintf(nm, sizeof nm, "ch0");
            s->chan_num[s->nnames] = fr.channel;
            src_add_name(s, nm, strlen(nm));
        }
    }
    imp_close(r);
}

static void prescan_file(struct log_source *s)
{
    struct imp_reader *r = NULL;
    char err[64];

    s->fmt = IMP_CANDUMP;
    if (imp_open(s->path, &s->fmt, &r, err, sizeof err))
        return;                 /* src_prepare says why */
    imp_close(r);
    if (s->fmt == IMP_CANDUMP)
        prescan_names(s);
    else
        prescan_import(s);
}

/* Not a pipe, FIFO or device; a path that does not stat passes (the open says why). */
static int is_regular(const char *path)
{
    struct stat st;

    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

static int file_parse(struct log_source *s, const char *spec, char *err, size_t errlen)
{
    s->nprod = 1;
    s->path = strdup(spec + 5);
    if (s->o.raw) {
        snprintf(err, errlen, "file: replays CAN logs; --raw does not apply");
        return -1;
    }
    /* The file is opened more than once (its format, its channel names for the log's
     * header, then the replay), so a pipe or FIFO would be read up by the prescan and the
     * replay's open would wait for a writer that never comes: only regular files, checked
     * with stat (an open blocks on a FIFO); file_prepare says why, as for a missing file. */
    if (s->path && !is_regular(s->path))
        return 0;
    prescan_file(s);
    return 0;
}

static int file_prepare(struct log_source *s, struct producer *p)
{
    if (!is_regular(s->path)) {
        cli_err("%s: not a regular file (file: reads the log twice, its channels first, then "
                "the replay); pipe candump -L lines to --source stdin", s->path);
        return -1;
    }
    if (s->fmt != IMP_CANDUMP) {
        char err[600];
        enum imp_format fmt;
        if (imp_open(s->path, &fmt, &s->imp, err, sizeof err)) {
            cli_err("%s", err);
            return -1;
        }
        if (fmt != s->fmt || !s->imp) {
            cli_err("%s: changed while starting", s->path);
            return -1;
        }
    } else {
        p->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (p->fd < 0) {
            cli_open_err(s->path, errno);
            return -1;
        }
    }
    return 0;
}

void src_note_bad_line(struct log_source *s, const char *line, size_t n, uint64_t no)
{
    size_t o = 0, cap = sizeof s->first_bad - 4;

    if (s->first_bad_no)
        return;
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    for (size_t i = 0; i < n && o < cap; i++) {
        unsigned char c = (unsigned char)line[i];
        s->first_bad[o++] = c >= 0x20 && c < 0x7F ? (char)c : '?';
    }
    if (o == cap && n > cap)
        memcpy(s->first_bad + o, "...", 3), o += 3;
    s->first_bad[o] = '\0';
    s->first_bad_no = no;
}

void src_no_frames_check(struct log_source *s)
{
    uint64_t bad = atomic_load(&s->bad);
    const char *what = s->path ? "not a candump, ASC or BLF log"
                               : "not candump -L lines (candump writes them with -L)";

    if (atomic_load(&s->offered) != 0)
        return;
    if (s->first_bad_no)
        src_set_error(s, "%s: no CAN frame in it (%" PRIu64 " unreadable line%s, the first: "
                      "line %" PRIu64 " \"%s\"): %s", src_name(s), bad, bad == 1 ? "" : "s",
                      s->first_bad_no, s->first_bad, what);
    else if (s->path || bad)
        src_set_error(s, "%s: no CAN frame in it (%" PRIu64 " unreadable line%s): %s",
                      src_name(s), bad, bad == 1 ? "" : "s", what);
    else
        src_set_error(s, "%s: no CAN frame in it: the input was empty", src_name(s));
}

/* file: with an ASC or BLF log: frames from the reader (import.h), on the channel the
 * prescan named after the file's channel number. A read error ends the run with it. */
static void *import_main(void *arg)
{
    struct producer *p = arg;
    struct log_source *s = p->s;
    struct waiter w = { 0, 0, 65536 };
    struct pacer pc = { 0, 0, 0 };
    struct imp_frame fr;
    int rc = 1, done = 0;

    while (!stopping(s) && (rc = imp_next(s->imp, &fr)) > 0) {
        unsigned i;
        for (i = 0; i < s->nnames; i++)
            if (s->chan_num[i] == fr.channel)
                break;
        if (i == s->nnames) {
            src_set_error(s, "%s: more than %u channels", s->path, SRC_MAX_CHANNELS);
            break;
        }
        s->lineno++;                            /* here: the frame's number */
        if (fr.f.ts > (uint64_t)INT64_MAX) {    /* docs/FORMAT.md: below 2^63 ns */
            src_bad_input(s, "frame", s->lineno, "timestamp out of range (at or after 2^63 ns, "
                          "2262-04-11)");
            continue;
        }
        if (!src_in_order(s, i, fr.f.ts)) {
            src_bad_input(s, "frame", s->lineno, "timestamp earlier than the previous frame's "
                          "on the same channel");
            continue;
        }
        src_pace(s, &pc, fr.f.ts);
        p->ch = i;
        src_wait_for_room(s, &w, sf_rec_size(SF_CAN_BODY + fr.f.len));
        if (src_emit_can(p, &fr.f) < 0) {
            done = 1;
            break;
        }
    }
    src_flush_counters(p);
    if (rc < 0)
        src_set_error(s, "%s", imp_error(s->imp));
    else if (rc == 0) {
        done = 1;
        src_no_frames_check(s);
    }
    if (done)
        atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static void *file_main(void *arg)
{
    struct producer *p = arg;

    return p->s->fmt == IMP_CANDUMP ? src_lines_main(arg) : import_main(arg);
}

static void file_release(struct log_source *s)
{
    free(s->path);
    imp_close(s->imp);
}

const struct src_ops src_file_ops = {
    .name = "file:",
    .match = file_match,
    .parse = file_parse,
    .prepare = file_prepare,
    .run = file_main,
    .release = file_release,
    .can_wait = 1,
};
