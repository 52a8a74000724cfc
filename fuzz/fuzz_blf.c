/* libFuzzer target: the Vector BLF importer (cli/formats/import_blf.c) of `streamfat log --source
 * file:`: the streaming reader (file header, log containers stored or zlib-compressed,
 * objects split across containers, padding, skipped object types) and through it the pure
 * parsers blf_parse_file_header and blf_parse_object, on arbitrary file bytes.
 *
 * The input is the file, handed to blf_reader_open as an in-memory descriptor (fuzz_fd.h).
 * Beyond the sanitizers: every frame the reader returns is one the logger can record
 * (sf_rec_can_valid: the logger would otherwise drop it and count it, silently), the reader
 * ends (frames are bounded: no object is smaller than its 16-byte header, and a container
 * inflates at most its UncompressedSize, checked against its bytes), and after the end or an
 * error it stays there with a message for the error. */
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
    setenv("TZ", "UTC", 1);         /* the start time is read as local time (mktime) */
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    struct blf_reader *r = blf_reader_open(fuzz_fd(data, size), "fuzz.blf", err, sizeof err);
    struct imp_frame fr;
    uint64_t frames = 0;
    int rc;

    if (!r) {
        if (!err[0])
            abort();                /* a refusal says why */
        return 0;
    }
    while ((rc = blf_reader_next(r, &fr)) == 1) {
        if (!sf_rec_can_valid(fr.f.id, fr.f.flags, fr.f.len))
            abort();
        /* each frame comes from a distinct object of at least BLF_OBJ_BASE_SIZE inflated
         * bytes, and zlib inflates at most 1032 bytes per input byte */
        if (++frames > (uint64_t)size * 1032 / 16 + 1)
            abort();
    }
    if (rc != 0 && rc != -1)
        abort();
    if ((rc == -1) != (blf_reader_error(r) != NULL))
        abort();
    if (blf_reader_next(r, &fr) != rc)
        abort();                    /* the end and an error are final */
    blf_reader_close(r);
    return 0;
}
