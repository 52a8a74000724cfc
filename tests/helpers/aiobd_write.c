/* aiobd_write [--threads] [--direct] [--depth N] [--req BYTES] [--sector-size N] DEV FILE
 * aiobd_write --probe
 *
 * Writes the contents of FILE to the start of DEV (an image or a block device) through
 * the asynchronous file device (aiobd.h): requests of --req bytes (default 1 MiB, the last
 * one shorter) in a shuffled order, --depth (default 4) at the device at once, then a FLUSH
 * request; then reads everything back through asynchronous reads and compares. Prints
 *   backend=io_uring|threads uring_status=N sector_size=N requests=N bytes=N
 * and exits 0, or prints the failure and exits 1. --threads forces the fallback.
 * --probe prints uring=1 when this process can set up an io_uring ring, else uring=0.
 * Used by tests/scripts/t_aiobd_loop.sh, which checks the device with dd and cmp. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#ifdef SF_HAVE_URING
#include <liburing.h>
#endif

#include "streamfat/sf.h"
#include "streamfat/aiobd.h"

static int probe(void)
{
#ifdef SF_HAVE_URING
    struct io_uring r;
    if (io_uring_queue_init(4, &r, 0) == 0) {
        io_uring_queue_exit(&r);
        return 1;
    }
#endif
    return 0;
}

static int load(const char *path, uint8_t **data, size_t *len)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    size_t got = 0;

    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0)
        return -1;
    *len = (size_t)st.st_size;
    *data = aligned_alloc(4096, (*len + 4095) / 4096 * 4096);
    if (!*data)
        return -1;
    while (got < *len) {
        ssize_t n = read(fd, *data + got, *len - got);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        got += (size_t)n;
    }
    close(fd);
    return 0;
}

/* Run bios[0..n) with at most `depth` outstanding from here (the device may hold more of
 * them in its queue: we submit up to 2*depth), checking each comes back once and well. */
static int run(struct sf_bdev *bd, struct sf_bio *bios, unsigned n, unsigned depth)
{
    unsigned next = 0, got = 0;
    struct sf_bio *out[8];

    while (got < n) {
        while (next < n && next - got < 2 * depth) {
            int err = sf_bdev_submit(bd, &bios[next]);
            if (err) {
                fprintf(stderr, "submit %u: %s\n", next, sf_strerror(err));
                return -1;
            }
            next++;
        }
        int k = sf_bdev_poll(bd, out, 8, 1);
        if (k <= 0) {
            fprintf(stderr, "poll returned %d with %u in flight\n", k, next - got);
            return -1;
        }
        for (int i = 0; i < k; i++) {
            if (out[i]->result) {
                fprintf(stderr, "request at lba %llu: %s\n",
                        (unsigned long long)out[i]->lba, sf_strerror(out[i]->result));
                return -1;
            }
        }
        got += (unsigned)k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned flags = 0, fflags = 0, depth = 4, n = 0;
    uint32_t ss = 0;
    size_t req = 1u << 20, len, padded;
    uint8_t *data, *back;
    struct sf_filebd f;
    struct sf_aiobd a;
    struct sf_bio *bios;
    uint32_t seed = 1;
    int i, err;

    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--probe")) {
            printf("uring=%d\n", probe());
            return 0;
        } else if (!strcmp(argv[i], "--threads")) {
            flags |= SF_AIOBD_NO_URING;
        } else if (!strcmp(argv[i], "--direct")) {
            fflags |= SF_FILEBD_DIRECT;
        } else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
            depth = (unsigned)strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--req") && i + 1 < argc) {
            req = strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--sector-size") && i + 1 < argc) {
            ss = (uint32_t)strtoul(argv[++i], NULL, 0);
        } else {
            break;
        }
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: aiobd_write [--threads] [--direct] [--depth N] [--req BYTES] "
                        "[--sector-size N] DEV FILE | --probe\n");
        return 2;
    }
    if (load(argv[i + 1], &data, &len)) {
        fprintf(stderr, "cannot read %s\n", argv[i + 1]);
        return 1;
    }
    if ((err = sf_filebd_open(&f, argv[i], fflags, ss, 0)) != 0) {
        fprintf(stderr, "open %s: %s\n", argv[i], sf_strerror(err));
        return 1;
    }
    if ((err = sf_aiobd_init(&a, &f, depth, flags)) != 0) {
        fprintf(stderr, "aiobd init: %s\n", sf_strerror(err));
        return 1;
    }
    ss = a.bd.sector_size;
    if (len % ss || req % ss || req == 0 || len / ss > a.bd.sector_count) {
        fprintf(stderr, "%zu bytes in requests of %zu do not fit %u-byte sectors of the device\n",
                len, req, ss);
        return 1;
    }
    padded = (len + 4095) / 4096 * 4096;
    back = aligned_alloc(4096, padded);
    bios = calloc(len / req + 2, sizeof(*bios));
    if (!back || !bios)
        return 1;

    for (size_t off = 0; off < len; off += req, n++) {
        bios[n].op = SF_BIO_WRITE;
        bios[n].lba = off / ss;
        bios[n].count = (uint32_t)((len - off < req ? len - off : req) / ss);
        bios[n].buf = data + off;
    }
    for (unsigned j = n - 1; j > 0; j--) {          /* shuffle, deterministically */
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % (j + 1);
        struct sf_bio t = bios[j];
        bios[j] = bios[k];
        bios[k] = t;
    }
    bios[n].op = SF_BIO_FLUSH;
    if (run(&a.bd, bios, n + 1, depth))
        return 1;

    memset(back, 0, padded);
    for (unsigned j = 0; j < n; j++) {
        bios[j].op = SF_BIO_READ;
        bios[j].buf = back + bios[j].lba * ss;
    }
    if (run(&a.bd, bios, n, depth))
        return 1;
    if (memcmp(back, data, len)) {
        fprintf(stderr, "asynchronous read-back differs\n");
        return 1;
    }
    printf("backend=%s uring_status=%d sector_size=%u requests=%u bytes=%zu\n", a.backend,
           a.uring_status, ss, n, len);
    sf_aiobd_close(&a);
    sf_filebd_close(&f);
    free(bios);
    free(back);
    free(data);
    return 0;
}
