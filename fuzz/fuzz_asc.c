/* libFuzzer target: the Vector ASC importer (cli/formats/import_asc.c) of `streamfat log --source
 * file:`: the streaming line reader (lines split across reads, a byte order mark, a last
 * line without newline, the line-length limit) and through it asc_parse_line (header lines,
 * dates, hex and decimal bases, relative times, classic, remote, CAN FD and error-frame
 * lines), on arbitrary text.
 *
 * The input is the file, handed to asc_reader_open as an in-memory descriptor (fuzz_fd.h).
 * Beyond the sanitizers: every frame is one the logger can record (sf_rec_can_valid), at
 * most one frame per line, the reader ends, and the end or an error is final, an error
 * with a message. Each line is also parsed on its own from a buffer of exactly its length
 * (so ASan sees a read past it), with the same state the reader had. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_fd.h"
#include "formats/import.h"
#include "streamfat/rec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("TZ", "UTC", 1);         /* dates are read as local time (mktime) */
    return 0;
}

/* Every line through asc_parse_line directly, each from its own heap copy. */
static void lines(const uint8_t *data, size_t size)
{
    struct asc_state st;
    const uint8_t *p = data, *end = data + size;

    asc_init(&st);
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        char *line = malloc(n);
        struct imp_frame fr;
        const char *why = NULL;
        int rc;

        if (!line)
            abort();
        memcpy(line, p, n);
        rc = asc_parse_line(&st, line, n, &fr, &why);
        if (rc < -1 || rc > 1 || (rc == -1 && !why))
            abort();
        if (rc == 1 && !sf_rec_can_valid(fr.f.id, fr.f.flags, fr.f.len))
            abort();
        free(line);
        if (rc == -1)
            break;                  /* the reader stops at the first bad line too */
        p += n;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct asc_reader *r = asc_reader_open(fuzz_fd(data, size), "fuzz.asc", err, sizeof err);
    struct imp_frame fr;
    uint64_t frames = 0;
    int rc;

    if (!r)
        abort();                    /* opening only allocates */
    while ((rc = asc_reader_next(r, &fr)) == 1) {
        if (!sf_rec_can_valid(fr.f.id, fr.f.flags, fr.f.len))
            abort();
        if (++frames > size / 2 + 1)
            abort();                /* a frame line is longer than 2 bytes */
    }
    if (rc != 0 && rc != -1)
        abort();
    if ((rc == -1) != (asc_reader_error(r) != NULL))
        abort();
    if (asc_reader_next(r, &fr) != rc)
        abort();
    asc_reader_close(r);
    lines(data, size);
    return 0;
}
