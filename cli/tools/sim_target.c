/* The `sim:` TARGET: spec parsing and the run-long registry of simulated devices
 * (see sim_target.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sim_target.h"
#include "cli.h"
#include "common/units.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_MAX 8          /* distinct sim: devices in one run */
#define SIM_MEM_MAX (4ull << 30)   /* devices up to this size keep their data in memory */

struct sim_dev {
    char *spec;
    int fd;
    uint32_t sector_size;
    struct sf_simbd_model m;
    struct sf_simbd_state st;
    char path[40];
};

static struct sim_dev devs[SIM_MAX];
static unsigned ndevs;

int sim_target_is(const char *path)
{
    return strncmp(path, "sim:", 4) == 0;
}

static int fail(char *why, unsigned n, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

int sim_target_parse(const char *spec, uint64_t *size, uint32_t *sector_size,
                     struct sf_simbd_model *m, char *why, unsigned n)
{
    char buf[256], *tok, *save = NULL;
    const char *w = "";
    int have_fast = 0, have_slow = 0, first = 1;
    uint64_t v;

    memset(m, 0, sizeof *m);
    *size = 0;
    *sector_size = 512;
    if (!sim_target_is(spec) || strlen(spec + 4) >= sizeof buf)
        return fail(why, n, "expected sim:SIZE,cache=SIZE,fast=RATE,slow=RATE");
    strcpy(buf, spec + 4);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = 0) {
        char *eq = strchr(tok, '=');
        if (first) {
            if (eq || units_parse_size(tok, size, &w))
                return fail(why, n, "sim: device size '%s' %s", tok, eq ? "missing" : w);
            continue;
        }
        if (!eq)
            return fail(why, n, "sim: '%s' is not KEY=VALUE", tok);
        *eq++ = '\0';
        if (strcmp(tok, "cache") == 0) {
            if (units_parse_size(eq, &m->cache_bytes, &w))
                return fail(why, n, "sim: cache '%s': %s", eq, w);
        } else if (strcmp(tok, "fast") == 0 || strcmp(tok, "slow") == 0 ||
                   strcmp(tok, "idle_flush") == 0) {
            if (units_parse_rate(eq, &v, &w))
                return fail(why, n, "sim: %s '%s': %s", tok, eq, w);
            if (v == 0 && tok[0] != 'i')
                return fail(why, n, "sim: %s must be above 0", tok);
            if (tok[0] == 'f')
                m->fast_bps = v, have_fast = 1;
            else if (tok[0] == 's')
                m->slow_bps = v, have_slow = 1;
            else
                m->idle_flush_bps = v;
        } else if (strcmp(tok, "sector") == 0) {
            if (strcmp(eq, "512") && strcmp(eq, "4096"))
                return fail(why, n, "sim: sector must be 512 or 4096");
            *sector_size = (uint32_t)atoi(eq);
        } else {
            return fail(why, n, "sim: unknown key '%s' (cache, fast, slow, idle_flush, sector)",
                        tok);
        }
    }
    if (!have_fast && !have_slow)
        return fail(why, n, "sim: give fast=RATE and/or slow=RATE");
    if (!have_fast)
        m->fast_bps = m->slow_bps;
    if (!have_slow)
        m->slow_bps = m->fast_bps;
    if (*size < (1u << 20) || *size % *sector_size)
        return fail(why, n, "sim: size must be at least 1M and a multiple of the sector size");
    return 0;
}

/* Sparse, unlinked storage of `size` bytes: in memory up to SIM_MEM_MAX (a memfd has no
 * writeback, which would stall the host and so the model's timing), else a file. */
static int backing_fd(uint64_t size)
{
    const char *dir = getenv("TMPDIR");
    int fd = size <= SIM_MEM_MAX ? memfd_create("streamfat-sim", MFD_CLOEXEC) : -1;

    if (fd < 0)
        fd = open(dir && *dir ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0)
        fd = memfd_create("streamfat-sim", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

const char *sim_target_backing(const char *spec, uint32_t *sector_size,
                               struct sf_simbd_model *m, struct sf_simbd_state **st)
{
    struct sim_dev *d;
    uint64_t size;
    char why[160];
    unsigned i;

    for (i = 0; i < ndevs; i++) {
        if (strcmp(devs[i].spec, spec) == 0) {
            d = &devs[i];
            goto found;
        }
    }
    if (ndevs == SIM_MAX) {
        cli_err("%s: too many sim: devices in one run", spec);
        return NULL;
    }
    d = &devs[ndevs];
    if (sim_target_parse(spec, &size, &d->sector_size, &d->m, why, sizeof why)) {
        cli_err("%s", why);
        return NULL;
    }
    d->fd = backing_fd(size);
    if (d->fd < 0) {
        cli_err("%s: cannot create its storage: %s", spec, strerror(errno));
        return NULL;
    }
    d->spec = strdup(spec);
    if (!d->spec) {
        cli_err("out of memory");
        close(d->fd);
        return NULL;
    }
    snprintf(d->path, sizeof d->path, "/proc/self/fd/%d", d->fd);
    ndevs++;
found:
    *sector_size = d->sector_size;
    *m = d->m;
    *st = &d->st;
    return d->path;
}
