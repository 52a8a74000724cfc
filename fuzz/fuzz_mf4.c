/* libFuzzer target: the MF4 reader (cli/formats/import_mf4.c) that `streamfat log --source
 * file:X.mf4` replays, on arbitrary file bytes (mf4_reader_open_mem: the same code as on a
 * file, reading from the buffer).
 *
 * Every frame it accepts must satisfy what the logger relies on next: sf_rec_can_valid
 * accepts it (the logger would otherwise refuse it with no record) and the channel fits a
 * byte. An error must come with a message. The frames are counted, not kept: links are
 * followed with bounded counts, so every input ends. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "formats/import.h"
#include "streamfat/rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    struct mf4_reader *r = mf4_reader_open_mem(data, size, err, sizeof err);
    struct imp_frame fr;
    int rc;

    if (!r) {
        if (!err[0])
            abort();
        return 0;
    }
    while ((rc = mf4_reader_next(r, &fr)) == 1) {
        if (!sf_rec_can_valid(fr.f.id, fr.f.flags, fr.f.len) || fr.channel > 255)
            abort();
    }
    if (rc != 0 && (rc != -1 || !mf4_reader_error(r) || !mf4_reader_error(r)[0]))
        abort();
    mf4_reader_close(r);
    return 0;
}
