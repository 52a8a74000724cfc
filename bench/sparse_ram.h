/* The benches' RAM device (bench/fs_cost.c, bench/fs_create_cost.c): a volume in sparse
 * memory, 512-byte sectors, 64 KiB pages materialised when first written with anything but
 * zeros (mkfs's zeroing of the FATs costs nothing); unwritten pages read as zeros. It
 * counts its requests. Its callbacks ram_rd / ram_wr (the scripts look for these names)
 * are never inlined and do all of the device's work, the copying too, so callgrind can
 * take the device's cost out by function: the benches' scripts subtract their inclusive
 * cost.
 *
 * Also the size arguments the benches and tests/helpers/mkfs_img.c take: decimal with an
 * optional K, M, G or T (powers of 1024), header only (every test helper is one file). */
#ifndef SF_BENCH_SPARSE_RAM_H
#define SF_BENCH_SPARSE_RAM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "streamfat/bdev.h"

struct sparse_ram {
    struct sf_bdev bd;              /* use this one */
    uint8_t **page;                 /* 64 KiB each, NULL: all zeros */
    uint64_t reads, writes, rsec, wsec;
};

/* A device of `bytes` (a multiple of 64 KiB); exits with a message when out of memory. */
void sparse_ram_init(struct sparse_ram *s, uint64_t bytes);

/* "64M" -> 67108864; a malformed size ends the program with exit status 2. */
static inline uint64_t parse_size(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 10);

    if (end == s)
        goto bad;
    switch (*end) {
    case 'K': case 'k': v <<= 10; end++; break;
    case 'M': case 'm': v <<= 20; end++; break;
    case 'G': case 'g': v <<= 30; end++; break;
    case 'T': case 't': v <<= 40; end++; break;
    default: break;
    }
    if (*end == 0)
        return v;
bad:
    fprintf(stderr, "bad size: %s\n", s);
    exit(2);
}

#endif
