/* Fragmenting a volume's free space for the unit tests: `files` files of `size` bytes, then
 * every other one deleted, so the free space starts with files / 2 holes of `size` bytes
 * (rounded up to clusters). Names are F000, F001, ... in the root directory. */
#ifndef SF_TEST_FRAGMENT_H
#define SF_TEST_FRAGMENT_H

#include <stdio.h>
#include "check.h"
#include "streamfat/sf.h"

static void fragment_volume(struct sf_vol *v, int files, uint32_t size)
{
    static uint8_t junk[65536];
    char p[16];
    REQUIRE(size <= sizeof junk);
    for (int i = 0; i < files; i++) {
        struct sf_file f;
        snprintf(p, sizeof p, "F%03d", i);
        REQUIRE(sf_open(v, &f, p, SF_O_WRONLY | SF_O_CREAT) == 0);
        REQUIRE(sf_write(&f, junk, size) == (sf_ssize_t)size);
        REQUIRE(sf_close(&f) == 0);
    }
    for (int i = 0; i < files; i += 2) {
        snprintf(p, sizeof p, "F%03d", i);
        REQUIRE(sf_unlink(v, p) == 0);
    }
}

#endif
