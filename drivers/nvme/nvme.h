/* An NVMe controller behind struct sf_bdev (drivers/nvme/nvme.c): one namespace, one I/O
 * queue pair, polled (no interrupts), with the asynchronous submit/poll pair.
 *
 * What it does at sf_nvme_init: reset the controller (CC.EN = 0, wait CSTS.RDY = 0), set up
 * the admin queue (AQA/ASQ/ACQ), enable (4 KiB pages, 64-byte SQ and 16-byte CQ entries),
 * Identify the controller (MDTS: the largest transfer) and the namespace (size, LBA format
 * -> sector size), create I/O completion queue 1 and then submission queue 1 with
 * queue_depth + 1 entries (at most CAP.MQES + 1). The caller has found the controller
 * and enabled its BAR0 with bus mastering (pcie.h).
 *
 * Requests (the contract of bdev.h):
 *   - submit queues a request in the driver's FIFO (linked through bio->next) and starts as
 *     many commands as free slots allow; it never refuses for lack of room. A request
 *     larger than the controller's maximum transfer (MDTS, and 2 MiB for one PRP list page)
 *     becomes several commands; it completes when all have, with SF_EIO if any failed.
 *   - data buffers need only dword alignment (mem_align 4): PRP entry 1 takes the offset,
 *     entry 2 is the next page or, beyond two pages, a PRP list in the command's slot.
 *   - FLUSH: the NVMe Flush command covers only writes completed before it, so a FLUSH
 *     waits at the head of the FIFO until every earlier command has completed; requests
 *     behind it wait too (strict order).
 *   - completions move on only inside submit, poll and the synchronous calls (no
 *     interrupts). A command that does not complete within timeout_ms (counted while the
 *     driver waits) kills the device: every request in flight and queued completes with
 *     SF_ETIMEDOUT and later calls fail with SF_EIO (a real port would reset the controller
 *     here; an abandoned command may still reach memory, so its buffer is not reusable
 *     until then).
 *   - read, write, flush are the synchronous forms, going through the same queue; they may
 *     be mixed with requests in flight (whose completions stay queued for poll).
 *   - any non-zero completion status (or one the fault hook returns) is SF_EIO.
 *
 * Memory: everything the controller reads or writes besides the data buffers is in
 * cfg.mem (sf_nvme_mem_size(queue_depth) bytes, 4 KiB aligned): the admin and I/O queues,
 * an Identify page and one PRP-list page per slot. Nothing else, no allocation.
 *
 * DMA addresses are CPU addresses (no IOMMU, as on the QEMU virt board and a Zynq
 * UltraScale+ without the SMMU in the path). With data caches on, the cache hooks must
 * clean what the controller reads and invalidate what it writes (docs/PORTING.md).
 *
 * Threading: one caller at a time, as every device. */
#ifndef SF_DRIVERS_NVME_H
#define SF_DRIVERS_NVME_H

#include <stddef.h>
#include <stdint.h>

#include "streamfat/bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SF_NVME_MAX_QD 64u           /* commands in flight at most */
#define SF_NVME_HIST 24u             /* log2 buckets of command sizes: 1 B .. 8 MiB */

/* bytes of cfg.mem for a queue depth: admin SQ, admin CQ, Identify page, I/O CQ (one page
 * each), the I/O SQ (64 bytes an entry), one PRP-list page per slot */
#define SF_NVME_MEM_SIZE(qd) \
    ((size_t)(4u + (qd) + (((qd) + 1u) * 64u + 4095u) / 4096u) * 4096u)
static inline size_t sf_nvme_mem_size(uint32_t qd) { return SF_NVME_MEM_SIZE(qd); }

struct sf_nvme_stats {
    uint64_t reads, writes, flushes;     /* I/O commands completed */
    uint64_t bytes_read, bytes_written;
    uint64_t errors;                     /* commands completed with a non-zero status */
    uint64_t admin;                      /* admin commands */
    uint64_t size_hist[SF_NVME_HIST];    /* read/write commands by size: bucket k holds
                                            2^k <= bytes < 2^(k+1) */
    uint32_t max_depth;                  /* most commands at the controller at once */
    uint16_t last_status;                /* the last non-zero status (SCT << 8 | SC) */
};

/* Called as each I/O command completes, with its opcode (0 flush, 1 write, 2 read), first
 * LBA and sectors: a non-zero return is taken as that command's status instead of the
 * controller's; SF_NVME_FAULT_LOST drops the completion as if the controller had never
 * posted it (the command then times out). For fault tests: QEMU's controller cannot be
 * told to fail. */
#define SF_NVME_FAULT_LOST 0xFFFFu
typedef uint16_t (*sf_nvme_fault_fn)(void *ctx, uint8_t opcode, uint64_t lba, uint32_t count);
typedef uint64_t (*sf_nvme_clock_fn)(void *ctx);               /* microseconds */
typedef void (*sf_nvme_cache_fn)(void *ctx, const void *p, size_t n);

struct sf_nvme_cfg {
    uintptr_t regs;              /* BAR0, CPU address */
    void *mem;                   /* 4 KiB aligned, sf_nvme_mem_size(queue_depth) bytes */
    size_t mem_size;
    uint32_t queue_depth;        /* I/O commands in flight, 1 .. SF_NVME_MAX_QD (0: 16) */
    uint32_t nsid;               /* namespace (0: 1) */
    sf_nvme_clock_fn clock;      /* required: timeouts */
    void *clock_ctx;
    uint32_t timeout_ms;         /* per command (0: 5000; enable/disable use CAP.TO) */
    sf_nvme_cache_fn dma_clean;  /* optional: write back before the controller reads */
    sf_nvme_cache_fn dma_inval;  /* optional: discard before the CPU reads what it wrote */
    void *cache_ctx;
    sf_nvme_fault_fn fault;      /* optional, tests */
    void *fault_ctx;
};

struct sf_nvme_slot {
    struct sf_bio *bio;          /* NULL: free */
    uint64_t lba;
    uint32_t count;
    uint8_t op;
};

struct sf_nvme {
    struct sf_bdev bd;           /* use this one */
    /* what Identify said */
    uint32_t max_bytes;          /* largest command, bytes */
    uint8_t mdts;
    char serial[21], model[41];
    struct sf_nvme_stats st;
    /* ---- private ---- */
    struct sf_nvme_cfg cfg;
    uint32_t dstrd;              /* doorbell stride, bytes */
    uint32_t cap_to_ms;
    uint8_t *asq, *acq, *iosq, *iocq, *ident, *prp;
    uint16_t aq_size, asq_tail, acq_head;
    uint8_t acq_phase, iocq_phase;
    uint16_t ioq_size, iosq_tail, iocq_head;
    uint32_t busy;               /* commands at the controller */
    int dead;
    struct sf_bio *fifo_head, *fifo_tail;   /* queued, not fully started */
    uint32_t head_done;          /* sectors of fifo_head already started */
    struct sf_bio *done_head, *done_tail;   /* completed, waiting for poll */
    struct sf_bio *sync_bio;     /* the synchronous call's request, not handed to poll */
    int sync_done;
    struct sf_nvme_slot slot[SF_NVME_MAX_QD];
};

/* Reset, enable and identify the controller, create the I/O queues, fill n->bd.
 * 0; SF_EINVAL (configuration); SF_ENOMEM (mem too small or not aligned); SF_ETIMEDOUT
 * (the controller did not become ready / answer); SF_EIO (a command failed, the controller
 * reported a fatal status); SF_ENOTSUP (no NVM command set, pages above 4 KiB, namespace
 * with metadata or sectors other than 512..4096 bytes); SF_ENOENT (no such namespace). */
int sf_nvme_init(struct sf_nvme *n, const struct sf_nvme_cfg *cfg);

/* Wait for the commands in flight, then the normal shutdown (CC.SHN): the controller
 * writes back its caches. 0, SF_ETIMEDOUT. The device is unusable afterwards. */
int sf_nvme_shutdown(struct sf_nvme *n);

#ifdef __cplusplus
}
#endif

#endif
