/* NVMe controller behind struct sf_bdev (nvme.h): polled, one I/O queue pair.
 *
 * Sections: register and memory access; the admin queue; start-up (reset, enable,
 * Identify, I/O queues); the I/O queue (start commands from the FIFO, reap completions,
 * time out); the sf_bdev callbacks; shutdown.
 *
 * Field offsets and bit positions are those of NVM Express Base Specification 1.4. */
#include "nvme.h"

#include <string.h>

#include "streamfat/sf.h"

/* Controller registers (NVMe 1.4, 3.1) */
#define REG_CAP   0x00u   /* 64: MQES 15:0, TO 31:24 (500 ms), DSTRD 35:32, CSS 44:37,
                             MPSMIN 51:48 */
#define REG_VS    0x08u
#define REG_CC    0x14u   /* EN 0, CSS 6:4, MPS 10:7, AMS 13:11, SHN 15:14, IOSQES 19:16,
                             IOCQES 23:20 */
#define REG_CSTS  0x1Cu   /* RDY 0, CFS 1, SHST 3:2 */
#define REG_AQA   0x24u   /* ASQS 11:0, ACQS 27:16 (0-based) */
#define REG_ASQ   0x28u
#define REG_ACQ   0x30u
#define REG_DB    0x1000u /* doorbells: SQ y tail at 2y * stride, CQ y head at (2y+1) * stride */

#define CC_EN       0x1u
#define CC_SHN_NORM (1u << 14)
#define CC_SHN_MASK (3u << 14)
#define CC_IOSQES   (6u << 16)     /* 2^6 = 64-byte SQ entries */
#define CC_IOCQES   (4u << 20)     /* 2^4 = 16-byte CQ entries */
#define CSTS_RDY    0x1u
#define CSTS_CFS    0x2u
#define CSTS_SHST_DONE (2u << 2)

/* Opcodes (admin: 5.x; NVM: NVM Command Set 6.x) */
#define ADM_CREATE_SQ 0x01u
#define ADM_CREATE_CQ 0x05u
#define ADM_IDENTIFY  0x06u
#define NVM_FLUSH     0x00u
#define NVM_WRITE     0x01u
#define NVM_READ      0x02u

#define PAGE 4096u
#define AQ_SIZE 8u                  /* admin queue entries: one command at a time */
#define PRP_MAX_BYTES (2u << 20)    /* one PRP-list page: 512 entries */

/* ---- register and memory access -------------------------------------------------------- */

/* The doorbell write must follow the queue entry it announces; the entry a phase bit
 * announces must be read after it (Device memory with the MMU off orders this already,
 * Normal cacheable memory does not). */
static inline void barrier_wr(void)
{
#if defined(__aarch64__)
    __asm__ volatile("dsb st" ::: "memory");
#elif defined(__arm__)
    __asm__ volatile("dsb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline void barrier_rd(void)
{
#if defined(__aarch64__)
    __asm__ volatile("dsb ld" ::: "memory");
#elif defined(__arm__)
    __asm__ volatile("dsb" ::: "memory");
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline uint32_t rd32(const struct sf_nvme *n, uint32_t off)
{
    return *(volatile uint32_t *)(n->cfg.regs + off);
}

static inline void wr32(const struct sf_nvme *n, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(n->cfg.regs + off) = v;
}

/* 64-bit registers as two dword accesses, low first (allowed by 3.1 for every register) */
static uint64_t rd64(const struct sf_nvme *n, uint32_t off)
{
    uint64_t lo = rd32(n, off);
    return lo | (uint64_t)rd32(n, off + 4) << 32;
}

static void wr64(const struct sf_nvme *n, uint32_t off, uint64_t v)
{
    wr32(n, off, (uint32_t)v);
    wr32(n, off + 4, (uint32_t)(v >> 32));
}

static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline uint64_t dma(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static void clean(const struct sf_nvme *n, const void *p, size_t len)
{
    if (n->cfg.dma_clean)
        n->cfg.dma_clean(n->cfg.cache_ctx, p, len);
}

static void inval(const struct sf_nvme *n, const void *p, size_t len)
{
    if (n->cfg.dma_inval)
        n->cfg.dma_inval(n->cfg.cache_ctx, p, len);
}

static uint64_t now_us(const struct sf_nvme *n)
{
    return n->cfg.clock(n->cfg.clock_ctx);
}

/* Wait until (CSTS & mask) == want, or CFS, or ms pass. */
static int wait_csts(const struct sf_nvme *n, uint32_t mask, uint32_t want, uint32_t ms)
{
    uint64_t t0 = now_us(n);
    for (;;) {
        uint32_t s = rd32(n, REG_CSTS);
        if (s == 0xFFFFFFFFu)
            return SF_EIO;              /* the function is gone (surprise removal) */
        if ((s & mask) == want)
            return 0;
        if ((s & CSTS_CFS) && want != 0)
            return SF_EIO;              /* controller fatal status */
        if (now_us(n) - t0 > (uint64_t)ms * 1000u)
            return SF_ETIMEDOUT;
    }
}

/* ---- the admin queue: one command at a time, waited for --------------------------------- */

static int admin(struct sf_nvme *n, uint8_t opc, uint32_t nsid, const void *prp1,
                 uint32_t cdw10, uint32_t cdw11)
{
    uint8_t *e = n->asq + (size_t)n->asq_tail * 64u;
    memset(e, 0, 64);
    put32(e, opc | (uint32_t)n->asq_tail << 16);        /* CID = the slot */
    put32(e + 4, nsid);
    put64(e + 24, dma(prp1));
    put32(e + 40, cdw10);
    put32(e + 44, cdw11);
    clean(n, e, 64);
    n->asq_tail = (uint16_t)((n->asq_tail + 1u) % n->aq_size);
    barrier_wr();
    wr32(n, REG_DB, n->asq_tail);
    n->st.admin++;

    uint64_t t0 = now_us(n);
    const uint8_t *c = n->acq + (size_t)n->acq_head * 16u;
    uint32_t dw3;
    for (;;) {
        inval(n, c, 16);
        dw3 = get32(c + 12);
        if (((dw3 >> 16) & 1u) == n->acq_phase)
            break;
        if (now_us(n) - t0 > (uint64_t)n->cfg.timeout_ms * 1000u)
            return SF_ETIMEDOUT;
    }
    barrier_rd();
    if (++n->acq_head == n->aq_size) {
        n->acq_head = 0;
        n->acq_phase ^= 1u;
    }
    wr32(n, REG_DB + n->dstrd, n->acq_head);
    uint16_t status = (uint16_t)((dw3 >> 17) & 0x7FFFu);
    if (status) {
        n->st.last_status = status & 0x7FFu;
        return SF_EIO;
    }
    return 0;
}

/* ---- start-up ------------------------------------------------------------------------------ */

static int nvme_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count);
static int nvme_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count);
static int nvme_flush(struct sf_bdev *bd);
static int nvme_submit(struct sf_bdev *bd, struct sf_bio *bio);
static int nvme_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait);

static void copy_text(char *dst, const uint8_t *src, size_t n)
{
    size_t k = n;
    while (k > 0 && (src[k - 1] == ' ' || src[k - 1] == 0))
        k--;
    for (size_t i = 0; i < k; i++)
        dst[i] = (src[i] >= 0x20 && src[i] < 0x7F) ? (char)src[i] : '?';
    dst[k] = '\0';
}

int sf_nvme_init(struct sf_nvme *n, const struct sf_nvme_cfg *cfg)
{
    uint32_t qd = cfg->queue_depth ? cfg->queue_depth : 16u;
    int err;

    memset(n, 0, sizeof *n);
    if (!cfg->regs || !cfg->clock || qd > SF_NVME_MAX_QD)
        return SF_EINVAL;
    if (!cfg->mem || ((uintptr_t)cfg->mem & (PAGE - 1u)) || cfg->mem_size < sf_nvme_mem_size(qd))
        return SF_ENOMEM;
    n->cfg = *cfg;
    n->cfg.queue_depth = qd;
    if (!n->cfg.timeout_ms)
        n->cfg.timeout_ms = 5000u;

    uint64_t cap = rd64(n, REG_CAP);
    if (cap == ~0ull)
        return SF_EIO;
    if (!((cap >> 37) & 1u) || ((cap >> 48) & 0xFu) != 0)
        return SF_ENOTSUP;              /* no NVM command set, or no 4 KiB pages */
    n->dstrd = 4u << ((cap >> 32) & 0xFu);
    n->cap_to_ms = (uint32_t)((cap >> 24) & 0xFFu) * 500u;
    if (n->cap_to_ms == 0)
        n->cap_to_ms = 500u;
    uint32_t mqes = (uint32_t)(cap & 0xFFFFu) + 1u;     /* entries per queue at most */

    /* reset: CC.EN 1 -> 0 makes the controller drop every queue (7.6.2) */
    uint32_t cc = rd32(n, REG_CC);
    if (cc & CC_EN)
        wr32(n, REG_CC, cc & ~CC_EN);
    if ((err = wait_csts(n, CSTS_RDY, 0, n->cap_to_ms)))
        return err;

    uint8_t *m = cfg->mem;
    memset(m, 0, sf_nvme_mem_size(qd));
    n->asq = m;
    n->acq = m + PAGE;
    n->ident = m + 2u * PAGE;
    n->iocq = m + 3u * PAGE;
    n->prp = m + 4u * PAGE;
    n->iosq = n->prp + (size_t)qd * PAGE;
    clean(n, m, sf_nvme_mem_size(qd));
    n->aq_size = AQ_SIZE;
    n->acq_phase = 1;
    n->iocq_phase = 1;

    wr32(n, REG_AQA, (AQ_SIZE - 1u) | (AQ_SIZE - 1u) << 16);
    wr64(n, REG_ASQ, dma(n->asq));
    wr64(n, REG_ACQ, dma(n->acq));
    barrier_wr();
    wr32(n, REG_CC, CC_IOSQES | CC_IOCQES | CC_EN);     /* NVM set, 4 KiB pages, round robin */
    if ((err = wait_csts(n, CSTS_RDY, CSTS_RDY, n->cap_to_ms)))
        return err;

    /* Identify controller (CNS 1): serial 23:4, model 63:24, MDTS 77, NN 519:516 */
    inval(n, n->ident, PAGE);
    if ((err = admin(n, ADM_IDENTIFY, 0, n->ident, 1u, 0)))
        return err;
    inval(n, n->ident, PAGE);
    copy_text(n->serial, n->ident + 4, 20);
    copy_text(n->model, n->ident + 24, 40);
    n->mdts = n->ident[77];
    uint32_t nn = get32(n->ident + 516);
    n->max_bytes = PRP_MAX_BYTES;
    if (n->mdts && n->mdts < 20 && (PAGE << n->mdts) < n->max_bytes)
        n->max_bytes = PAGE << n->mdts;  /* MDTS: 2^n minimum pages (CAP.MPSMIN = 4 KiB) */

    uint32_t nsid = cfg->nsid ? cfg->nsid : 1u;
    n->cfg.nsid = nsid;
    if (nsid > nn)
        return SF_ENOENT;
    /* Identify namespace (CNS 0): NSZE 7:0, FLBAS 26 (format 3:0), LBAF[i] at 128 + 4i
     * (MS 15:0, LBADS 23:16) */
    inval(n, n->ident, PAGE);
    if ((err = admin(n, ADM_IDENTIFY, nsid, n->ident, 0, 0)))
        return err;
    inval(n, n->ident, PAGE);
    uint64_t nsze = get64(n->ident);
    uint32_t lbaf = get32(n->ident + 128 + 4u * (n->ident[26] & 0xFu));
    uint32_t lbads = (lbaf >> 16) & 0xFFu;
    if (nsze == 0)
        return SF_ENOENT;               /* inactive namespace */
    if ((lbaf & 0xFFFFu) != 0 || lbads < 9 || lbads > 12)
        return SF_ENOTSUP;

    /* the I/O queue pair: completion queue first (5.4, 5.5), physically contiguous,
     * no interrupts */
    n->ioq_size = (uint16_t)(qd + 1u < mqes ? qd + 1u : mqes);
    if (n->ioq_size < 2)
        return SF_ENOTSUP;
    n->cfg.queue_depth = n->ioq_size - 1u;
    if ((err = admin(n, ADM_CREATE_CQ, 0, n->iocq, (uint32_t)(n->ioq_size - 1u) << 16 | 1u, 1u)))
        return err;
    if ((err = admin(n, ADM_CREATE_SQ, 0, n->iosq, (uint32_t)(n->ioq_size - 1u) << 16 | 1u,
                     1u << 16 | 1u)))
        return err;

    n->bd.sector_size = 1u << lbads;
    n->bd.sector_count = nsze;
    n->bd.align_sectors = n->bd.sector_size < PAGE ? PAGE / n->bd.sector_size : 1u;
    n->bd.mem_align = 4;                /* PRP entries are dword aligned */
    n->bd.flags = SF_BDEV_ATOMIC_SECTOR;/* AWUPF is 0's based: one LBA at least */
    n->bd.read = nvme_read;
    n->bd.write = nvme_write;
    n->bd.flush = nvme_flush;
    n->bd.trim = NULL;
    n->bd.submit = nvme_submit;
    n->bd.poll = nvme_poll;
    return 0;
}

/* ---- the I/O queue ------------------------------------------------------------------------ */

static void complete(struct sf_nvme *n, struct sf_bio *b)
{
    if (b == n->sync_bio) {
        n->sync_done = 1;
        return;
    }
    b->next = NULL;
    if (n->done_tail)
        n->done_tail->next = b;
    else
        n->done_head = b;
    n->done_tail = b;
}

static void fifo_pop(struct sf_nvme *n)
{
    n->fifo_head = n->fifo_head->next;
    if (!n->fifo_head)
        n->fifo_tail = NULL;
    n->head_done = 0;
}

/* Write one command into the submission queue (the doorbell is the caller's). */
static void issue(struct sf_nvme *n, uint32_t cid, struct sf_bio *b, uint64_t lba,
                  uint32_t count, uint8_t *buf)
{
    struct sf_nvme_slot *s = &n->slot[cid];
    uint8_t *e = n->iosq + (size_t)n->iosq_tail * 64u;
    uint8_t opc = b->op == SF_BIO_FLUSH ? NVM_FLUSH : b->op == SF_BIO_WRITE ? NVM_WRITE : NVM_READ;

    s->bio = b;
    s->lba = lba;
    s->count = count;
    s->op = opc;
    memset(e, 0, 64);
    put32(e, opc | cid << 16);
    put32(e + 4, n->cfg.nsid);
    if (opc != NVM_FLUSH) {
        size_t bytes = (size_t)count * n->bd.sector_size;
        uint64_t a = dma(buf), prp2 = 0;
        size_t first = PAGE - (size_t)(a & (PAGE - 1u));
        if (bytes > first) {
            /* the rest starts on a page boundary: one page is PRP2 itself, more a list */
            size_t pages = (bytes - first + PAGE - 1u) / PAGE;
            if (pages == 1) {
                prp2 = a + first;
            } else {
                uint8_t *list = n->prp + (size_t)cid * PAGE;
                for (size_t k = 0; k < pages; k++)
                    put64(list + 8u * k, a + first + k * PAGE);
                clean(n, list, pages * 8u);
                prp2 = dma(list);
            }
        }
        put64(e + 24, a);
        put64(e + 32, prp2);
        put32(e + 40, (uint32_t)lba);                   /* SLBA */
        put32(e + 44, (uint32_t)(lba >> 32));
        put32(e + 48, count - 1u);                      /* NLB, 0's based */
        if (opc == NVM_WRITE)
            clean(n, buf, bytes);
        else
            inval(n, buf, bytes);       /* no dirty line may be written over the DMA data */
    }
    clean(n, e, 64);
    n->iosq_tail = (uint16_t)((n->iosq_tail + 1u) % n->ioq_size);
    if (++n->busy > n->st.max_depth)
        n->st.max_depth = n->busy;
}

/* Start commands from the FIFO while slots are free, then ring the doorbell once. */
static void kick(struct sf_nvme *n)
{
    uint32_t qd = n->cfg.queue_depth, ss = n->bd.sector_size, cid = 0;
    int started = 0;

    while (n->fifo_head && n->busy < qd) {
        struct sf_bio *b = n->fifo_head;
        if (b->op == SF_BIO_FLUSH && n->busy)
            break;                      /* Flush covers only completed writes */
        while (n->slot[cid].bio)
            cid++;                      /* busy < qd: a free one exists */
        if (b->op == SF_BIO_FLUSH) {
            issue(n, cid, b, 0, 0, NULL);
            fifo_pop(n);
        } else {
            uint32_t left = b->count - n->head_done, c = n->max_bytes / ss;
            if (c > left)
                c = left;
            issue(n, cid, b, b->lba + n->head_done, c,
                  (uint8_t *)b->buf + (size_t)n->head_done * ss);
            n->head_done += c;
            if (n->head_done == b->count)
                fifo_pop(n);
        }
        started = 1;
    }
    if (started) {
        barrier_wr();
        wr32(n, REG_DB + 2u * n->dstrd, n->iosq_tail);
    }
}

static int slot_holds(const struct sf_nvme *n, const struct sf_bio *b)
{
    for (uint32_t i = 0; i < n->cfg.queue_depth; i++)
        if (n->slot[i].bio == b)
            return 1;
    return 0;
}

static unsigned hist_bucket(uint64_t bytes)
{
    unsigned k = 0;
    while (bytes >>= 1)
        k++;
    return k < SF_NVME_HIST ? k : SF_NVME_HIST - 1u;
}

/* Take every completion the controller has posted. Returns how many. */
static uint32_t reap(struct sf_nvme *n)
{
    uint32_t got = 0, ss = n->bd.sector_size;

    for (;;) {
        const uint8_t *c = n->iocq + (size_t)n->iocq_head * 16u;
        inval(n, c, 16);
        uint32_t dw3 = get32(c + 12);
        if (((dw3 >> 16) & 1u) != n->iocq_phase)
            break;
        barrier_rd();
        uint32_t cid = dw3 & 0xFFFFu;
        uint16_t status = (uint16_t)((dw3 >> 17) & 0x7FFu);    /* SCT << 8 | SC */
        uint16_t f = 0;
        if (cid < n->cfg.queue_depth && n->slot[cid].bio && n->cfg.fault)
            f = n->cfg.fault(n->cfg.fault_ctx, n->slot[cid].op, n->slot[cid].lba,
                             n->slot[cid].count);
        if (f)
            status = f & 0x7FFu;
        if (cid < n->cfg.queue_depth && n->slot[cid].bio && f != SF_NVME_FAULT_LOST) {
            struct sf_nvme_slot *s = &n->slot[cid];
            struct sf_bio *b = s->bio;
            uint64_t bytes = (uint64_t)s->count * ss;
            if (s->op == NVM_FLUSH) {
                n->st.flushes++;
            } else {
                if (s->op == NVM_WRITE) {
                    n->st.writes++;
                    n->st.bytes_written += bytes;
                } else {
                    n->st.reads++;
                    n->st.bytes_read += bytes;
                    inval(n, (uint8_t *)b->buf + (s->lba - b->lba) * ss, (size_t)bytes);
                }
                n->st.size_hist[hist_bucket(bytes)]++;
            }
            if (status) {
                n->st.errors++;
                n->st.last_status = status;
                b->result = SF_EIO;
            }
            s->bio = NULL;
            n->busy--;
            if (b != n->fifo_head && !slot_holds(n, b))
                complete(n, b);
        }
        if (++n->iocq_head == n->ioq_size) {
            n->iocq_head = 0;
            n->iocq_phase ^= 1u;
        }
        got++;
    }
    if (got)
        wr32(n, REG_DB + 3u * n->dstrd, n->iocq_head);
    return got;
}

/* The controller stopped answering: every request in flight or queued fails with err. */
static void kill(struct sf_nvme *n, int err)
{
    n->dead = 1;
    for (uint32_t i = 0; i < n->cfg.queue_depth; i++) {
        struct sf_bio *b = n->slot[i].bio;
        if (!b)
            continue;
        for (uint32_t j = i; j < n->cfg.queue_depth; j++)
            if (n->slot[j].bio == b)
                n->slot[j].bio = NULL;
        b->result = err;
        if (b != n->fifo_head)
            complete(n, b);
    }
    n->busy = 0;
    while (n->fifo_head) {
        struct sf_bio *b = n->fifo_head;
        fifo_pop(n);
        b->result = err;
        complete(n, b);
    }
}

/* Wait until at least one command completes (0), nothing is at the controller (0), or the
 * timeout (SF_ETIMEDOUT, the device is dead). */
static int wait_progress(struct sf_nvme *n)
{
    uint64_t t0 = now_us(n);
    for (;;) {
        uint32_t got = reap(n);
        kick(n);
        if (got || !n->busy)
            return 0;
        if (now_us(n) - t0 > (uint64_t)n->cfg.timeout_ms * 1000u) {
            kill(n, SF_ETIMEDOUT);
            return SF_ETIMEDOUT;
        }
    }
}

/* ---- sf_bdev callbacks -------------------------------------------------------------------- */

static int nvme_submit(struct sf_bdev *bd, struct sf_bio *bio)
{
    struct sf_nvme *n = (struct sf_nvme *)bd;

    if (n->dead)
        return SF_EIO;
    if (bio->op == SF_BIO_READ || bio->op == SF_BIO_WRITE) {
        if (bio->count == 0 || bio->lba > bd->sector_count ||
            bio->count > bd->sector_count - bio->lba)
            return SF_EINVAL;
        if ((uintptr_t)bio->buf & 3u)
            return SF_EINVAL;
    } else if (bio->op != SF_BIO_FLUSH) {
        return SF_EINVAL;
    }
    bio->result = 0;
    bio->next = NULL;
    if (n->fifo_tail)
        n->fifo_tail->next = bio;
    else
        n->fifo_head = bio;
    n->fifo_tail = bio;
    reap(n);
    kick(n);
    return 0;
}

static int nvme_poll(struct sf_bdev *bd, struct sf_bio **out, unsigned max, int wait)
{
    struct sf_nvme *n = (struct sf_nvme *)bd;
    unsigned k = 0;

    reap(n);
    kick(n);
    while (wait && !n->done_head && (n->busy || n->fifo_head))
        if (wait_progress(n))
            break;
    while (k < max && n->done_head) {
        out[k++] = n->done_head;
        n->done_head = n->done_head->next;
        if (!n->done_head)
            n->done_tail = NULL;
    }
    return (int)k;
}

static int sync_io(struct sf_nvme *n, uint8_t op, uint64_t lba, void *buf, uint32_t count)
{
    struct sf_bio b;
    int err;

    memset(&b, 0, sizeof b);
    b.lba = lba;
    b.count = count;
    b.op = op;
    b.buf = buf;
    n->sync_bio = &b;
    n->sync_done = 0;
    if ((err = nvme_submit(&n->bd, &b))) {
        n->sync_bio = NULL;
        return err;
    }
    while (!n->sync_done)
        if (wait_progress(n))
            break;                      /* kill() completed it with its error */
    n->sync_bio = NULL;
    return b.result;
}

static int nvme_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    return sync_io((struct sf_nvme *)bd, SF_BIO_READ, lba, buf, count);
}

static int nvme_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    return sync_io((struct sf_nvme *)bd, SF_BIO_WRITE, lba, (void *)(uintptr_t)buf, count);
}

static int nvme_flush(struct sf_bdev *bd)
{
    return sync_io((struct sf_nvme *)bd, SF_BIO_FLUSH, 0, NULL, 0);
}

/* ---- shutdown ----------------------------------------------------------------------------- */

int sf_nvme_shutdown(struct sf_nvme *n)
{
    int err = 0;
    if (!n->cfg.regs || !n->cfg.clock || !n->cap_to_ms)
        return SF_EINVAL;               /* sf_nvme_init did not get as far as the controller */
    while (!n->dead && n->busy)
        if ((err = wait_progress(n)))
            break;
    uint32_t cc = rd32(n, REG_CC);
    wr32(n, REG_CC, (cc & ~CC_SHN_MASK) | CC_SHN_NORM);
    int e2 = wait_csts(n, 3u << 2, CSTS_SHST_DONE, n->cap_to_ms);
    n->dead = 1;
    return err ? err : e2;
}
