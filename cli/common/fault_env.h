/* A testing aid: STREAMFAT_FAULT in the environment wraps the device a command writes to in
 * the fault-injection device (include/streamfat/bdev.h, sf_faultbd), so that tests can make
 * the Nth device write fail or cut the power there (docs/RELIABILITY.md, "Faults").
 *
 *   STREAMFAT_FAULT=fail_at=N          write number N and every later one fail with EIO
 *   STREAMFAT_FAULT=cut=N[,policy=P]   power cut right after write N: writes since the last
 *                                      flush are kept, dropped or torn (P: keep, drop, tear;
 *                                      default keep), and every later call fails with EIO
 *   seed=S                             the PRNG seed for tear
 *
 * Without the variable the device is returned unchanged. Not in any --help: it is for tests. */
#ifndef SF_CLI_FAULT_ENV_H
#define SF_CLI_FAULT_ENV_H

#include "streamfat/bdev.h"

/* bd itself, or (STREAMFAT_FAULT set) a fault device over it; one per process. A malformed
 * value prints one line and exits with status 2. */
struct sf_bdev *fault_env_wrap(struct sf_bdev *bd);

#endif
