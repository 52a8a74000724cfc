/* libFuzzer target: src_parse_candump (cli/sources/candump.c), the parser of candump -L lines
 * that `streamfat log --source stdin|file:` feeds every input line to.
 *
 * The input is split at newlines like the line reader does, each line is parsed from a
 * buffer of exactly its length (so ASan sees any read past it), and every accepted frame
 * must satisfy what the logger relies on next: the interface name lies inside the line,
 * and sf_rec_can_valid accepts the frame, since the logger would otherwise count it as a
 * refused frame with no record, silently. */
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sources/log_sources.h"
#include "streamfat/rec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;

    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        char *line = malloc(n ? n : 1);
        struct src_can_frame f;
        const char *ifc;
        size_t il;
        int rc;

        if (!line)
            abort();
        memcpy(line, p, n);
        rc = src_parse_candump(line, n, &f, &ifc, &il);
        if (rc < -1 || rc > 1)
            abort();
        if (rc == 1) {
            if (il && (ifc < line || ifc + il > line + n))
                abort();
            if (!sf_rec_can_valid(f.id, f.flags, f.len))
                abort();
        }
        free(line);
        p += n;
    }
    return 0;
}
