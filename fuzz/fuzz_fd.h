/* The fuzz input as a file descriptor, for readers that take one (cli/formats/import_*.c): an
 * anonymous in-memory file (memfd) made once and refilled for each input; each input gets a
 * dup of it (the reader closes its descriptor), positioned at the start. No file system is
 * touched. */
#ifndef SF_FUZZ_FD_H
#define SF_FUZZ_FD_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static int fuzz_fd(const uint8_t *data, size_t size)
{
    static int mfd = -1;
    size_t done = 0;

    if (mfd < 0 && (mfd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0)
        abort();
    if (ftruncate(mfd, 0))
        abort();
    while (done < size) {
        ssize_t k = pwrite(mfd, data + done, size - done, (off_t)done);
        if (k <= 0)
            abort();
        done += (size_t)k;
    }
    if (lseek(mfd, 0, SEEK_SET) != 0)
        abort();
    int fd = dup(mfd);              /* shares the offset: the reader reads from 0 */
    if (fd < 0)
        abort();
    return fd;
}

#endif
