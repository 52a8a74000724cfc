/* The `sim:` TARGET: a simulated SSD (streamfat/simbd.h) that lives for one run of the tool.
 *
 *   sim:SIZE,cache=SIZE,fast=RATE,slow=RATE[,idle_flush=RATE][,sector=512|4096]
 *
 * SIZE and cache take the size units, the rates the rate units (cli/common/units.h). fast alone
 * (or fast = slow, or cache=0) gives a device without a cache boundary; slow alone, one
 * that writes at slow throughout. cache defaults to 0.
 *
 * Storage: every sector written is kept, so a file system finds its metadata and its
 * files again: for a device of up to 4 GiB in a sparse memfd (memory, as much as has been
 * written), for a larger one in a sparse unlinked temporary file in $TMPDIR (O_TMPFILE;
 * /tmp when unset). Its speed does not count: the model times the writes. `streamfat bench --raw` trims what it has written behind itself, which
 * punches holes in that file, so raw runs do not fill the disk or the page cache.
 *
 * The same spec string opened again in one run (mkfs, then mount) is the same device, with
 * its data and its cache state. */
#ifndef SF_CLI_SIM_TARGET_H
#define SF_CLI_SIM_TARGET_H

#include <stdint.h>

#include "streamfat/simbd.h"

/* path starts with "sim:". */
int sim_target_is(const char *path);
/* Parse the spec (no side effects); 0 or -1 with a one-line reason in why[n]. */
int sim_target_parse(const char *spec, uint64_t *size, uint32_t *sector_size,
                     struct sf_simbd_model *m, char *why, unsigned n);
/* Create (first time) or find the device for spec and return a path that opens its storage
 * ("/proc/self/fd/N"), its sector size, model and state. Prints the error and returns
 * NULL on failure. */
const char *sim_target_backing(const char *spec, uint32_t *sector_size,
                               struct sf_simbd_model *m, struct sf_simbd_state **st);

#endif
