/* STREAMFAT_FAULT: fault injection for tests (cli/common/fault_env.h has the syntax). The overlay
 * of unsynced writes (for cut=) lives here for the life of the process: the CLI may hold
 * state in globals, the core may not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fault_env.h"

#define FAULT_OVL_BYTES (16u << 20)    /* unsynced sectors held for a cut: 16 MiB + tags */

static struct sf_faultbd fault_dev;
static int fault_used;

static int parse_u64(const char *s, size_t n, uint64_t *v)
{
    char buf[32], *end;
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    *v = strtoull(buf, &end, 10);
    return *end ? -1 : 0;
}

static void bad(const char *spec)
{
    cli_err("STREAMFAT_FAULT='%s': expected fail_at=N or cut=N[,policy=keep|drop|tear][,seed=S]",
            spec);
    exit(CLI_USAGE);
}

struct sf_bdev *fault_env_wrap(struct sf_bdev *bd)
{
    const char *spec = getenv("STREAMFAT_FAULT");
    uint64_t fail_at = 0, cut = 0, seed = 1;
    uint8_t policy = SF_FAULT_KEEP;
    void *mem = NULL;
    size_t mem_size = 0;

    if (!spec || !*spec || !bd)
        return bd;
    if (fault_used)
        return bd;                         /* one device per process: the first one */
    for (const char *p = spec; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (!eq)
            bad(spec);
        size_t kl = (size_t)(eq - p), vl = n - kl - 1;
        if (kl == 7 && !memcmp(p, "fail_at", 7)) {
            if (parse_u64(eq + 1, vl, &fail_at) || !fail_at)
                bad(spec);
        } else if (kl == 3 && !memcmp(p, "cut", 3)) {
            if (parse_u64(eq + 1, vl, &cut) || !cut)
                bad(spec);
        } else if (kl == 4 && !memcmp(p, "seed", 4)) {
            if (parse_u64(eq + 1, vl, &seed))
                bad(spec);
        } else if (kl == 6 && !memcmp(p, "policy", 6)) {
            if (vl == 4 && !memcmp(eq + 1, "keep", 4))
                policy = SF_FAULT_KEEP;
            else if (vl == 4 && !memcmp(eq + 1, "drop", 4))
                policy = SF_FAULT_DROP;
            else if (vl == 4 && !memcmp(eq + 1, "tear", 4))
                policy = SF_FAULT_TEAR;
            else
                bad(spec);
        } else {
            bad(spec);
        }
        p += n;
        if (*p == ',')
            p++;
    }
    if (!fail_at && !cut)
        bad(spec);
    if (cut) {
        mem_size = FAULT_OVL_BYTES / bd->sector_size * (8 + bd->sector_size);
        if (!(mem = malloc(mem_size))) {
            cli_err("out of memory");
            exit(CLI_ERR);
        }
    }
    if (sf_faultbd_init(&fault_dev, bd, mem, mem_size)) {
        cli_err("STREAMFAT_FAULT: cannot set up the fault device");
        exit(CLI_ERR);
    }
    fault_dev.eio_after_writes = fail_at;
    fault_dev.cut_after_writes = cut;
    fault_dev.policy = policy;
    fault_dev.seed = (uint32_t)seed;
    fault_used = 1;
    return &fault_dev.bd;
}
