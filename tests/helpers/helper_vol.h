/* Shared by the test helpers in this directory (header only: every helper is its own
 * executable). Opens an image file or block device with the file bdev, finds the file
 * system and its sector size with sf_probe, and mounts it with a generous cache. */
#ifndef SF_TESTS_HELPER_VOL_H
#define SF_TESTS_HELPER_VOL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "streamfat/sf.h"
#include "streamfat/filebd.h"

struct hvol {
    struct sf_filebd fbd;
    struct sf_vol vol;
    void *cache;
    uint16_t *upcase;
    const char *path;
};

#define HVOL_CACHE_BYTES (2u << 20)

static sf_time_ms hvol_clock(void *ctx)
{
    struct timespec ts;
    (void)ctx;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (sf_time_ms)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 0, or prints why and returns the error. */
static int hvol_mount(struct hvol *h, const char *path)
{
    uint8_t type = 0;
    uint32_t ss = 0;
    void *probe;
    int err;
    struct sf_vol_cfg cfg;

    memset(h, 0, sizeof *h);
    h->path = path;
    err = sf_filebd_open(&h->fbd, path, 0, 0, 0);
    if (err) {
        fprintf(stderr, "%s: open: %s\n", path, sf_strerror(err));
        return err;
    }
    probe = aligned_alloc(4096, 4096);
    h->cache = aligned_alloc(4096, HVOL_CACHE_BYTES);
    h->upcase = malloc(SF_UPCASE_BUF_SIZE);
    if (!probe || !h->cache || !h->upcase) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    err = sf_probe(&h->fbd.bd, 0, probe, &type, &ss);
    free(probe);
    if (err || type == SF_FS_NONE) {
        fprintf(stderr, "%s: probe: %s (type %u)\n", path, sf_strerror(err), type);
        return err ? err : SF_EINVAL;
    }
    if (ss != h->fbd.bd.sector_size && (err = sf_filebd_set_sector_size(&h->fbd, ss))) {
        fprintf(stderr, "%s: sector size %u: %s\n", path, ss, sf_strerror(err));
        return err;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.bd = &h->fbd.bd;
    cfg.buf = h->cache;
    cfg.buf_size = HVOL_CACHE_BYTES;
    cfg.upcase_buf = h->upcase;
    cfg.clock = hvol_clock;
    err = sf_mount(&h->vol, &cfg);
    if (err) {
        fprintf(stderr, "%s: mount: %s (%s)\n", path, sf_strerror(err), sf_mount_error(&h->vol));
        return err;
    }
    return 0;
}

static int hvol_unmount(struct hvol *h)
{
    int err = sf_unmount(&h->vol);
    if (err)
        fprintf(stderr, "%s: unmount: %s\n", h->path, sf_strerror(err));
    sf_filebd_close(&h->fbd);
    free(h->cache);
    free(h->upcase);
    h->cache = NULL;
    h->upcase = NULL;
    return err;
}

#endif
