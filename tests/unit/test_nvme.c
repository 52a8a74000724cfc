/* drivers/nvme against a model controller on the host (QEMU's is in t_hw_nvme): what QEMU's
 * controller never does - completing out of order, holding completions, failing one piece
 * of a split request - and what the driver must hold to then: a FLUSH reaches the controller
 * only after every earlier command completed; a split request completes once, after all its
 * pieces, with SF_EIO when one failed; PRP lists with page-aligned entries for unaligned
 * buffers; data lands where it belongs; a controller that stops answering is a timeout, not
 * a hang; a controller that never gets ready fails init.
 *
 * The model: registers and doorbells in memory; the driver's clock callback runs one step of
 * the model (the driver calls it in every wait), so everything is deterministic. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "streamfat/sf.h"
#include "streamfat/bdev.h"

#include "../../drivers/nvme/nvme.c"

#define FSECT 4096u                 /* namespace: 4096 sectors of 512 bytes */
#define QD 8u

struct fcmd {
    uint16_t cid;
    uint8_t opc;
    uint64_t lba;
    uint32_t nlb;
    uint64_t prp1, prp2;
};

struct fake {
    uint32_t regs[0x2000 / 4];
    uint8_t media[FSECT * 512];
    uint64_t now_us;
    int never_ready;                /* CC.EN never gives CSTS.RDY */
    int hold;                       /* fetch I/O commands, never complete them */
    int reverse;                    /* complete the fetched ones last first */
    int fail_write;                 /* the write with this number (from 1) fails */
    int writes;
    int flush_early;                /* a FLUSH fetched while earlier commands were open */
    int prp_errors;                 /* PRP2 / list entries not page aligned */
    int max_open;
    uint8_t *asq, *acq, *iosq, *iocq;
    uint16_t a_nsq, a_ncq, a_head, a_tail, i_nsq, i_ncq, i_head, i_tail;
    uint8_t a_phase, i_phase;
    struct fcmd open[64];
    int nopen;
};

static uint32_t R(struct fake *f, uint32_t off) { return f->regs[off / 4]; }
static void W(struct fake *f, uint32_t off, uint32_t v) { f->regs[off / 4] = v; }
static uint8_t *ptr(uint64_t a) { return (uint8_t *)(uintptr_t)a; }

static void post(uint8_t *cq, uint16_t *tail, uint16_t n, uint8_t *phase, uint16_t sqhd,
                 uint16_t cid, uint16_t status)
{
    uint8_t *e = cq + (size_t)*tail * 16u;
    memset(e, 0, 16);
    put32(e + 8, sqhd);
    put32(e + 12, cid | (uint32_t)*phase << 16 | (uint32_t)status << 17);
    if (++*tail == n) {
        *tail = 0;
        *phase ^= 1u;
    }
}

/* the data of one command between media and the PRPs */
static void xfer(struct fake *f, const struct fcmd *c, int to_media)
{
    size_t bytes = (size_t)c->nlb * 512u, done = 0;
    uint8_t *m = f->media + c->lba * 512u;
    uint64_t pages[600];
    size_t np = 0;
    size_t first = 4096u - (size_t)(c->prp1 & 4095u);
    if (first > bytes)
        first = bytes;
    size_t rest = bytes - first, nrest = (rest + 4095u) / 4096u;
    if (nrest == 1) {
        pages[np++] = c->prp2;
    } else if (nrest > 1) {
        if (c->prp2 & 4095u)
            f->prp_errors++;
        for (size_t k = 0; k < nrest && np < 600; k++)
            pages[np++] = get64(ptr(c->prp2) + 8u * k);
    }
    for (size_t k = 0; k < np; k++)
        if (pages[k] & 4095u)
            f->prp_errors++;
    if (to_media)
        memcpy(m, ptr(c->prp1), first);
    else
        memcpy(ptr(c->prp1), m, first);
    done = first;
    for (size_t k = 0; k < np && done < bytes; k++) {
        size_t n = bytes - done < 4096u ? bytes - done : 4096u;
        if (to_media)
            memcpy(m + done, ptr(pages[k]), n);
        else
            memcpy(ptr(pages[k]), m + done, n);
        done += n;
    }
}

static void admin_cmd(struct fake *f, const uint8_t *e)
{
    uint8_t opc = e[0];
    uint16_t cid = (uint16_t)(get32(e) >> 16), status = 0;
    uint32_t cdw10 = get32(e + 40);
    uint8_t *p = ptr(get64(e + 24));
    if (opc == ADM_IDENTIFY) {
        memset(p, 0, 4096);
        if ((cdw10 & 0xFFu) == 1u) {
            memcpy(p + 4, "FAKE0001            ", 20);
            memcpy(p + 24, "model nvme", 10);
            p[77] = 2;                  /* MDTS: 4 pages, 16 KiB */
            put32(p + 516, 1);
        } else if (get32(e + 4) == 1u) {
            put64(p, FSECT);
            p[26] = 0;
            put32(p + 128, 9u << 16);   /* LBADS 9: 512 bytes, no metadata */
        }
    } else if (opc == ADM_CREATE_CQ) {
        f->iocq = p;
        f->i_ncq = (uint16_t)((cdw10 >> 16) + 1u);
        f->i_tail = 0;
        f->i_phase = 1;
    } else if (opc == ADM_CREATE_SQ) {
        f->iosq = p;
        f->i_nsq = (uint16_t)((cdw10 >> 16) + 1u);
        f->i_head = 0;
    } else {
        status = 1;                     /* invalid opcode */
    }
    post(f->acq, &f->a_tail, f->a_ncq, &f->a_phase, f->a_head, cid, status);
}

static void step(struct fake *f)
{
    uint32_t cc = R(f, REG_CC), csts = R(f, REG_CSTS);
    if (!(cc & CC_EN)) {
        csts &= ~CSTS_RDY;
        f->iosq = f->iocq = NULL;
    } else if (!(csts & CSTS_RDY) && !f->never_ready) {
        uint32_t aqa = R(f, REG_AQA);
        f->asq = ptr(R(f, REG_ASQ) | (uint64_t)R(f, REG_ASQ + 4) << 32);
        f->acq = ptr(R(f, REG_ACQ) | (uint64_t)R(f, REG_ACQ + 4) << 32);
        f->a_nsq = (uint16_t)((aqa & 0xFFFu) + 1u);
        f->a_ncq = (uint16_t)(((aqa >> 16) & 0xFFFu) + 1u);
        f->a_head = f->a_tail = 0;
        f->a_phase = 1;
        csts |= CSTS_RDY;
    }
    if (cc & CC_SHN_MASK)
        csts = (csts & ~(3u << 2)) | CSTS_SHST_DONE;
    W(f, REG_CSTS, csts);
    if (!(csts & CSTS_RDY))
        return;
    while (f->a_head != R(f, REG_DB)) {
        const uint8_t *e = f->asq + (size_t)f->a_head * 64u;
        f->a_head = (uint16_t)((f->a_head + 1u) % f->a_nsq);
        admin_cmd(f, e);
    }
    if (!f->iosq)
        return;
    while (f->i_head != R(f, REG_DB + 8)) {
        const uint8_t *e = f->iosq + (size_t)f->i_head * 64u;
        struct fcmd *c = &f->open[f->nopen++];
        f->i_head = (uint16_t)((f->i_head + 1u) % f->i_nsq);
        c->opc = e[0];
        c->cid = (uint16_t)(get32(e) >> 16);
        c->prp1 = get64(e + 24);
        c->prp2 = get64(e + 32);
        c->lba = get64(e + 40);
        c->nlb = (get32(e + 48) & 0xFFFFu) + 1u;
        if (c->opc == NVM_FLUSH && f->nopen > 1)
            f->flush_early++;
        if (f->nopen > f->max_open)
            f->max_open = f->nopen;
    }
    if (f->hold)
        return;
    for (int k = 0; k < f->nopen; k++) {
        struct fcmd *c = &f->open[f->reverse ? f->nopen - 1 - k : k];
        uint16_t status = 0;
        if (c->opc == NVM_WRITE) {
            if (++f->writes == f->fail_write)
                status = 2u << 8 | 0x80u;
            else
                xfer(f, c, 1);
        } else if (c->opc == NVM_READ) {
            xfer(f, c, 0);
        }
        post(f->iocq, &f->i_tail, f->i_ncq, &f->i_phase, f->i_head, c->cid, status);
    }
    f->nopen = 0;
}

static uint64_t fclock(void *ctx)
{
    struct fake *f = ctx;
    step(f);
    return f->now_us += 100u;
}

static struct fake fk;
static uint8_t mem[SF_NVME_MEM_SIZE(QD)] __attribute__((aligned(4096)));
static uint8_t buf[4][64 << 10] __attribute__((aligned(4096)));

static int start(struct sf_nvme *n, uint32_t timeout_ms)
{
    struct sf_nvme_cfg c;
    memset(&fk, 0, sizeof fk);
    fk.regs[0] = 63u | 2u << 24;                    /* MQES 63, TO 1 s */
    fk.regs[1] = 1u << 5;                           /* CSS: NVM; DSTRD 0; MPSMIN 0 */
    memset(&c, 0, sizeof c);
    c.regs = (uintptr_t)fk.regs;
    c.mem = mem;
    c.mem_size = sizeof mem;
    c.queue_depth = QD;
    c.clock = fclock;
    c.clock_ctx = &fk;
    c.timeout_ms = timeout_ms;
    return sf_nvme_init(n, &c);
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 31u + i * 7u + (i >> 9));
}

/* poll until `want` requests are back; their order in got[] */
static int collect(struct sf_nvme *n, struct sf_bio **got, int want)
{
    int have = 0;
    while (have < want) {
        int k = sf_bdev_poll(&n->bd, got + have, (unsigned)(want - have), 1);
        if (k <= 0)
            break;
        have += k;
    }
    return have;
}

static int pos(struct sf_bio **got, int n, const struct sf_bio *b)
{
    for (int i = 0; i < n; i++)
        if (got[i] == b)
            return i;
    return -1;
}

static void test_init(void)
{
    static struct sf_nvme n;
    CHECK_EQ(start(&n, 0), 0);
    CHECK_EQ(n.bd.sector_size, 512);
    CHECK_EQ(n.bd.sector_count, FSECT);
    CHECK_EQ(n.bd.mem_align, 4);
    CHECK_EQ(n.max_bytes, 16384);
    CHECK_EQ(n.cfg.queue_depth, QD);
    CHECK(strcmp(n.serial, "FAKE0001") == 0);
    CHECK_EQ(sf_nvme_shutdown(&n), 0);

    /* misaligned or short memory; a controller that never gets ready */
    struct sf_nvme_cfg c;
    memset(&c, 0, sizeof c);
    c.regs = (uintptr_t)fk.regs;
    c.clock = fclock;
    c.clock_ctx = &fk;
    c.mem = mem + 64;
    c.mem_size = sizeof mem - 4096;
    c.queue_depth = QD;
    CHECK_EQ(sf_nvme_init(&n, &c), SF_ENOMEM);
    memset(&fk, 0, sizeof fk);
    fk.regs[0] = 63u | 2u << 24;
    fk.regs[1] = 1u << 5;
    fk.never_ready = 1;
    c.mem = mem;
    c.mem_size = sizeof mem;
    CHECK_EQ(sf_nvme_init(&n, &c), SF_ETIMEDOUT);
    CHECK(fk.now_us >= 1000000u && fk.now_us < 1100000u);  /* CAP.TO: 1 s */
}

/* A split request, a small one, a FLUSH, one more; completed last first. */
static void test_order_split_flush(void)
{
    static struct sf_nvme n;
    struct sf_bio a, b, fl, c, *got[8];
    REQUIRE(start(&n, 0) == 0);
    fk.reverse = 1;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&fl, 0, sizeof fl);
    memset(&c, 0, sizeof c);
    uint8_t *pa = buf[0] + 4, *pc = buf[2] + 1000;  /* unaligned: PRP1 offsets */
    fill(pa, 40u << 10, 1);
    fill(buf[1], 4096, 2);
    fill(pc, 4096, 3);
    a = (struct sf_bio){ .lba = 100, .count = 80, .op = SF_BIO_WRITE, .buf = pa };
    b = (struct sf_bio){ .lba = 10, .count = 8, .op = SF_BIO_WRITE, .buf = buf[1] };
    fl = (struct sf_bio){ .op = SF_BIO_FLUSH };
    c = (struct sf_bio){ .lba = 2000, .count = 8, .op = SF_BIO_WRITE, .buf = pc };
    CHECK_EQ(sf_bdev_submit(&n.bd, &a), 0);
    CHECK_EQ(sf_bdev_submit(&n.bd, &b), 0);
    CHECK_EQ(sf_bdev_submit(&n.bd, &fl), 0);
    CHECK_EQ(sf_bdev_submit(&n.bd, &c), 0);
    CHECK_EQ(n.busy, 4);                /* A in 3 pieces (16 + 16 + 8 KiB), B; F waits */
    CHECK_EQ(collect(&n, got, 4), 4);
    CHECK_EQ(sf_bdev_poll(&n.bd, got + 4, 4, 1), 0);     /* nothing twice, nothing left */
    CHECK(a.result == 0 && b.result == 0 && fl.result == 0 && c.result == 0);
    CHECK(pos(got, 4, &fl) > pos(got, 4, &a) && pos(got, 4, &fl) > pos(got, 4, &b));
    CHECK_EQ(fk.flush_early, 0);
    CHECK_EQ(fk.prp_errors, 0);
    CHECK(memcmp(fk.media + 100 * 512, pa, 40u << 10) == 0);
    CHECK(memcmp(fk.media + 10 * 512, buf[1], 4096) == 0);
    CHECK(memcmp(fk.media + 2000 * 512, pc, 4096) == 0);
    CHECK_EQ(n.st.writes, 5);
    CHECK_EQ(n.st.flushes, 1);
    CHECK_EQ(n.st.size_hist[14], 2);
    CHECK_EQ(n.st.size_hist[13], 1);
    CHECK_EQ(n.st.size_hist[12], 2);
    CHECK_EQ(n.st.max_depth, 4);

    /* read back through the synchronous path, unaligned, while a write is in flight */
    uint8_t *rb = buf[3] + 12;
    fk.hold = 1;
    CHECK_EQ(sf_bdev_submit(&n.bd, &b), 0);
    fk.hold = 0;
    memset(rb, 0, 40u << 10);
    CHECK_EQ(sf_bdev_read(&n.bd, 100, rb, 80), 0);
    CHECK(memcmp(rb, pa, 40u << 10) == 0);
    CHECK_EQ(collect(&n, got, 1), 1);   /* the write's completion waited for poll */
    CHECK(got[0] == &b && b.result == 0);
    CHECK_EQ(sf_bdev_flush(&n.bd), 0);
    CHECK_EQ(sf_nvme_shutdown(&n), 0);
}

/* The second piece of a split write fails: that request SF_EIO, once; the other fine. */
static void test_piece_error(void)
{
    static struct sf_nvme n;
    struct sf_bio a, b, *got[4];
    REQUIRE(start(&n, 0) == 0);
    fk.fail_write = 2;
    fill(buf[0], 48u << 10, 4);
    fill(buf[1], 4096, 5);
    a = (struct sf_bio){ .lba = 0, .count = 96, .op = SF_BIO_WRITE, .buf = buf[0] };
    b = (struct sf_bio){ .lba = 500, .count = 8, .op = SF_BIO_WRITE, .buf = buf[1] };
    CHECK_EQ(sf_bdev_submit(&n.bd, &a), 0);
    CHECK_EQ(sf_bdev_submit(&n.bd, &b), 0);
    CHECK_EQ(collect(&n, got, 2), 2);
    CHECK_EQ(sf_bdev_poll(&n.bd, got + 2, 2, 1), 0);
    CHECK_EQ(a.result, SF_EIO);
    CHECK_EQ(b.result, 0);
    CHECK_EQ(n.st.errors, 1);
    CHECK_EQ(n.st.last_status, 0x280);
    CHECK_EQ(sf_bdev_write(&n.bd, 600, buf[1], 8), 0);  /* the device goes on */
}

/* The controller stops answering: the requests time out, the device stays failed. */
static void test_timeout(void)
{
    static struct sf_nvme n;
    struct sf_bio a, b, *got[4];
    REQUIRE(start(&n, 50) == 0);
    fk.hold = 1;
    a = (struct sf_bio){ .lba = 0, .count = 8, .op = SF_BIO_WRITE, .buf = buf[0] };
    b = (struct sf_bio){ .op = SF_BIO_FLUSH };
    CHECK_EQ(sf_bdev_submit(&n.bd, &a), 0);
    CHECK_EQ(sf_bdev_submit(&n.bd, &b), 0);
    uint64_t t0 = fk.now_us;
    CHECK_EQ(collect(&n, got, 2), 2);
    CHECK(fk.now_us - t0 >= 50000u && fk.now_us - t0 < 60000u);
    CHECK_EQ(a.result, SF_ETIMEDOUT);
    CHECK_EQ(b.result, SF_ETIMEDOUT);
    CHECK_EQ(sf_bdev_submit(&n.bd, &a), SF_EIO);
    CHECK_EQ(sf_bdev_write(&n.bd, 0, buf[0], 8), SF_EIO);
    CHECK_EQ(sf_bdev_poll(&n.bd, got, 4, 1), 0);
}

int main(void)
{
    test_init();
    test_order_split_flush();
    test_piece_error();
    test_timeout();
    TEST_END();
}
