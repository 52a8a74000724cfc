/* SD card in SPI mode (sd_spi.h). Follows the SD Physical Layer Simplified Specification
 * (version 2.00 and later), chapter 7 "SPI Mode".
 *
 * Sections: CRCs; bytes and waits; commands; initialisation; reads; writes; sf_bdev glue. */
#include "sd_spi.h"

#include "streamfat/sf.h"

#define CMD0   0u    /* GO_IDLE_STATE */
#define CMD8   8u    /* SEND_IF_COND */
#define CMD9   9u    /* SEND_CSD */
#define CMD12 12u    /* STOP_TRANSMISSION */
#define CMD16 16u    /* SET_BLOCKLEN */
#define CMD17 17u    /* READ_SINGLE_BLOCK */
#define CMD18 18u    /* READ_MULTIPLE_BLOCK */
#define CMD24 24u    /* WRITE_BLOCK */
#define CMD25 25u    /* WRITE_MULTIPLE_BLOCK */
#define CMD55 55u    /* APP_CMD */
#define CMD58 58u    /* READ_OCR */
#define CMD59 59u    /* CRC_ON_OFF */
#define ACMD41 41u   /* SD_SEND_OP_COND */

/* R1 (spec 7.3.2.1): bit 7 is 0 in a response, the others are flags. */
#define R1_IDLE     0x01u
#define R1_ILLEGAL  0x04u
#define R1_PARAM    0x40u
#define R1_ERRORS   0x7Eu    /* erase reset, illegal command, CRC, erase sequence, address,
                                parameter */

#define TOKEN_START       0xFEu  /* CMD17, CMD18, CMD24 data block */
#define TOKEN_START_MULTI 0xFCu  /* CMD25 data block */
#define TOKEN_STOP_TRAN   0xFDu  /* end of a CMD25 */
#define DATA_RESP_MASK    0x1Fu
#define DATA_ACCEPTED     0x05u
#define DATA_CRC_ERROR    0x0Bu

#define OCR_CCS (1u << 30)   /* card capacity status: block addresses */
#define ACMD41_HCS (1u << 30)
#define CMD8_ARG 0x1AAu      /* 2.7-3.6 V, check pattern 0xAA */

#define BLOCK 512u

/* Timeouts (spec 4.6.2: read 100 ms, write 250 ms for SDSC and 500 ms for SDHC; ACMD41
 * up to 1 s). A port whose clock stands still still ends each wait: POLL_CAP polls per ms. */
#define T_INIT_MS  1000u
#define T_READ_MS   200u
#define T_WRITE_MS  600u
#define T_READY_MS  600u
#define POLL_CAP  20000u
#define NCR_BYTES    16u     /* a response comes within 8 bytes (Ncr); twice that */

/* ---- CRCs -------------------------------------------------------------------------------- */

uint8_t sd_spi_crc7(const uint8_t *p, uint32_t n)
{
    uint32_t crc = 0;
    while (n--) {
        uint32_t b = *p++;
        for (int i = 0; i < 8; i++, b <<= 1) {
            uint32_t top = ((crc >> 6) ^ (b >> 7)) & 1u;
            crc = (crc << 1) & 0x7Fu;
            if (top)
                crc ^= 0x09u;
        }
    }
    return (uint8_t)(crc << 1 | 1u);
}

uint16_t sd_spi_crc16(const uint8_t *p, uint32_t n)
{
    uint32_t crc = 0;
    while (n--) {
        crc ^= (uint32_t)*p++ << 8;
        for (int i = 0; i < 8; i++)
            crc = crc & 0x8000u ? (crc << 1) ^ 0x1021u : crc << 1;
    }
    return (uint16_t)crc;
}

/* ---- bytes and waits --------------------------------------------------------------------- */

static uint8_t xfer(struct sd_spi *d, uint8_t b)
{
    return d->port->xfer(d->port->ctx, b);
}

static void send(struct sd_spi *d, const uint8_t *p, uint32_t n)
{
    if (d->port->xfer_block) {
        d->port->xfer_block(d->port->ctx, p, NULL, n);
        return;
    }
    while (n--)
        xfer(d, *p++);
}

static void receive(struct sd_spi *d, uint8_t *p, uint32_t n)
{
    if (d->port->xfer_block) {
        d->port->xfer_block(d->port->ctx, NULL, p, n);
        return;
    }
    while (n--)
        *p++ = xfer(d, 0xFF);
}

static int fail(struct sd_spi *d, const char *why, int err)
{
    d->why = why;
    return err;
}

struct wait {
    uint32_t t0, limit_ms, polls;
};

static void wait_start(struct sd_spi *d, struct wait *w, uint32_t limit_ms)
{
    w->t0 = d->port->ms(d->port->ctx);
    w->limit_ms = limit_ms;
    w->polls = 0;
}

static int wait_over(struct sd_spi *d, struct wait *w)
{
    return (uint32_t)(d->port->ms(d->port->ctx) - w->t0) > w->limit_ms ||
           ++w->polls > w->limit_ms * POLL_CAP;
}

/* Poll until the card stops holding MISO low (busy) or the time is up. */
static int wait_ready(struct sd_spi *d, uint32_t limit_ms)
{
    struct wait w;
    wait_start(d, &w, limit_ms);
    while (xfer(d, 0xFF) != 0xFF)
        if (wait_over(d, &w))
            return -1;
    return 0;
}

static void deselect(struct sd_spi *d)
{
    d->port->select(d->port->ctx, 0);
    xfer(d, 0xFF);               /* the card releases MISO on the next clock (spec 7.5.5) */
}

/* ---- commands ---------------------------------------------------------------------------- */

/* Send a command with the card selected and return its R1 (>= 0) or SF_ETIMEDOUT. */
static int command(struct sd_spi *d, uint8_t cmd, uint32_t arg)
{
    uint8_t f[6];
    uint8_t r1 = 0xFF;

    d->commands++;
    d->last_cmd = cmd;
    int inject = d->fail_from && d->commands >= d->fail_from;
    if (cmd != CMD0 && cmd != CMD12 && wait_ready(d, T_READY_MS))
        return SF_ETIMEDOUT;
    if (inject && cmd != CMD12) {
        /* The card must not act on a command we report as failed (a write it accepted
         * would leave it waiting for data): it gets CMD59 with the CRC setting it has,
         * which changes nothing and answers R1 alone. */
        arg = d->flags & SD_SPI_CRC ? 1u : 0u;
        cmd = CMD59;
    }
    f[0] = (uint8_t)(0x40u | cmd);
    f[1] = (uint8_t)(arg >> 24);
    f[2] = (uint8_t)(arg >> 16);
    f[3] = (uint8_t)(arg >> 8);
    f[4] = (uint8_t)arg;
    f[5] = sd_spi_crc7(f, 5);    /* CMD0 and CMD8 need it even with CRC off; cheap */
    send(d, f, 6);
    if (cmd == CMD12)
        xfer(d, 0xFF);           /* stuff byte: the card may still be sending data */
    for (uint32_t i = 0; i < NCR_BYTES && (r1 & 0x80u); i++)
        r1 = xfer(d, 0xFF);
    if (r1 & 0x80u)
        return SF_ETIMEDOUT;
    if (inject)
        r1 |= R1_PARAM;
    if (r1 & R1_ERRORS)
        d->last_r1 = r1;
    return r1;
}

static int app_command(struct sd_spi *d, uint8_t cmd, uint32_t arg)
{
    int r1 = command(d, CMD55, 0);
    if (r1 < 0 || (r1 & R1_ERRORS))
        return r1;
    return command(d, cmd, arg);
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The data block after a read command: start token, n bytes, CRC16. */
static int read_data(struct sd_spi *d, uint8_t *buf, uint32_t n)
{
    struct wait w;
    uint8_t t, crc[2];

    wait_start(d, &w, T_READ_MS);
    while ((t = xfer(d, 0xFF)) == 0xFF)
        if (wait_over(d, &w))
            return fail(d, "read: no data token", SF_ETIMEDOUT);
    if (t != TOKEN_START)
        return fail(d, "read: data error token", SF_EIO);
    receive(d, buf, n);
    receive(d, crc, 2);
    if ((d->flags & SD_SPI_CRC) && sd_spi_crc16(buf, n) != (uint16_t)(crc[0] << 8 | crc[1])) {
        d->crc_errors++;
        return fail(d, "read: CRC16 mismatch", SF_EIO);
    }
    return 0;
}

/* ---- initialisation ---------------------------------------------------------------------- */

static int card_init(struct sd_spi *d)
{
    uint8_t r[4], csd[16];
    struct wait w;
    int r1, err;

    /* Power up: >= 74 clocks with CS high, then CMD0 with CS low (spec 6.4.1, 7.2.1). */
    d->port->select(d->port->ctx, 0);
    for (int i = 0; i < 10; i++)
        xfer(d, 0xFF);
    d->port->select(d->port->ctx, 1);
    r1 = SF_ETIMEDOUT;
    for (int i = 0; i < 10 && r1 != R1_IDLE; i++)
        r1 = command(d, CMD0, 0);
    if (r1 < 0)
        return fail(d, "CMD0: no response (no card?)", SF_ETIMEDOUT);
    if (r1 != R1_IDLE)
        return fail(d, "CMD0: the card does not go idle (no card?)", SF_EIO);

    /* CMD8: a v2 card echoes the voltage range and the check pattern; a v1 card calls the
     * command illegal. */
    r1 = command(d, CMD8, CMD8_ARG);
    if (r1 < 0)
        return fail(d, "CMD8: no response", SF_ETIMEDOUT);
    if (r1 & R1_ILLEGAL) {
        d->type = SD_SPI_V1;
    } else if (r1 & R1_ERRORS) {
        return fail(d, "CMD8: error", SF_EIO);
    } else {
        receive(d, r, 4);
        if ((get_be32(r) & 0xFFFu) != CMD8_ARG)
            return fail(d, "CMD8: voltage range or check pattern refused", SF_ENOTSUP);
        d->type = SD_SPI_V2_SC;
    }

    /* ACMD41 until the card leaves the idle state. */
    wait_start(d, &w, T_INIT_MS);
    for (;;) {
        r1 = app_command(d, ACMD41, d->type == SD_SPI_V1 ? 0 : ACMD41_HCS);
        if (r1 < 0)
            return fail(d, "ACMD41: no response", SF_ETIMEDOUT);
        if (r1 & R1_ILLEGAL)
            return fail(d, "ACMD41: illegal (not an SD card)", SF_ENOTSUP);
        if (r1 & R1_ERRORS)
            return fail(d, "ACMD41: error", SF_EIO);
        if (!(r1 & R1_IDLE))
            break;
        if (wait_over(d, &w))
            return fail(d, "ACMD41: the card stays idle", SF_ETIMEDOUT);
    }

    /* CMD58: CCS tells block from byte addresses (v2 cards only; v1 cards are bytes). */
    if (d->type != SD_SPI_V1) {
        r1 = command(d, CMD58, 0);
        if (r1 < 0)
            return fail(d, "CMD58: no response", SF_ETIMEDOUT);
        if (r1 & R1_ERRORS)
            return fail(d, "CMD58: error", SF_EIO);
        receive(d, r, 4);
        if (get_be32(r) & OCR_CCS)
            d->type = SD_SPI_V2_HC;
    }
    d->block_addr = d->type == SD_SPI_V2_HC;
    if (!d->block_addr) {
        r1 = command(d, CMD16, BLOCK);
        if (r1 < 0 || (r1 & R1_ERRORS))
            return fail(d, "CMD16: 512-byte blocks refused", r1 < 0 ? SF_ETIMEDOUT : SF_EIO);
    }
    if (d->flags & SD_SPI_CRC) {
        r1 = command(d, CMD59, 1);
        if (r1 < 0 || (r1 & R1_ERRORS))
            return fail(d, "CMD59: CRC on refused", r1 < 0 ? SF_ETIMEDOUT : SF_EIO);
    }

    /* CMD9: the CSD, for the capacity (spec 5.3). */
    r1 = command(d, CMD9, 0);
    if (r1 < 0 || (r1 & R1_ERRORS))
        return fail(d, "CMD9: error", r1 < 0 ? SF_ETIMEDOUT : SF_EIO);
    if ((err = read_data(d, csd, sizeof csd)))
        return err;
    if (csd[0] >> 6 == 0) {      /* CSD 1.0: (C_SIZE + 1) << (C_SIZE_MULT + 2) blocks */
        uint32_t bl_len = csd[5] & 0xFu;
        uint32_t c_size = (uint32_t)(csd[6] & 3u) << 10 | (uint32_t)csd[7] << 2 | csd[8] >> 6;
        uint32_t mult = (uint32_t)(csd[9] & 3u) << 1 | csd[10] >> 7;
        if (bl_len < 9 || bl_len > 11)
            return fail(d, "CMD9: bad READ_BL_LEN", SF_EIO);
        d->bd.sector_count = (uint64_t)(c_size + 1) << (mult + 2 + bl_len - 9);
    } else if (csd[0] >> 6 == 1) {  /* CSD 2.0: (C_SIZE + 1) * 512 KiB */
        uint32_t c_size = (uint32_t)(csd[7] & 0x3Fu) << 16 | (uint32_t)csd[8] << 8 | csd[9];
        d->bd.sector_count = (uint64_t)(c_size + 1) << 10;
    } else {
        return fail(d, "CMD9: unknown CSD structure", SF_EIO);
    }
    return 0;
}

/* ---- reads ------------------------------------------------------------------------------- */

static uint32_t card_addr(const struct sd_spi *d, uint64_t lba)
{
    return d->block_addr ? (uint32_t)lba : (uint32_t)(lba * BLOCK);
}

/* CMD12 after a multiple-block read, then wait while the card is busy. */
static int stop_read(struct sd_spi *d)
{
    int r1 = command(d, CMD12, 0);
    if (r1 < 0)
        return fail(d, "CMD12: no response", SF_ETIMEDOUT);
    if (wait_ready(d, T_READY_MS))
        return fail(d, "CMD12: busy", SF_ETIMEDOUT);
    if (r1 & R1_ERRORS)
        return fail(d, "CMD12: error", SF_EIO);
    return 0;
}

static int sd_read(struct sf_bdev *bd, uint64_t lba, void *buf, uint32_t count)
{
    struct sd_spi *d = (struct sd_spi *)bd;
    uint8_t *p = buf;
    int r1, err = 0;

    if (lba > bd->sector_count || count > bd->sector_count - lba)
        return SF_EINVAL;
    if (count == 0)
        return 0;
    d->port->select(d->port->ctx, 1);
    d->reads++;
    r1 = command(d, count == 1 ? CMD17 : CMD18, card_addr(d, lba));
    if (r1 < 0) {
        err = fail(d, "read command: no response", SF_ETIMEDOUT);
    } else if (r1 & R1_ERRORS) {
        err = fail(d, "read command: error", SF_EIO);
    } else {
        for (uint32_t i = 0; i < count && !err; i++, p += BLOCK)
            err = read_data(d, p, BLOCK);
        if (count > 1) {
            int e = stop_read(d);
            if (!err)
                err = e;
        }
        if (!err)
            d->sectors_read += count;
    }
    deselect(d);
    return err;
}

/* ---- writes ------------------------------------------------------------------------------ */

/* One data block: token, 512 bytes, CRC16, the data response, then the busy wait. */
static int write_data(struct sd_spi *d, uint8_t token, const uint8_t *p)
{
    uint16_t crc = d->flags & SD_SPI_CRC ? sd_spi_crc16(p, BLOCK) : 0xFFFFu;
    uint8_t c[2] = { (uint8_t)(crc >> 8), (uint8_t)crc };
    uint8_t resp;

    xfer(d, 0xFF);               /* Nwr: at least one byte before the token */
    xfer(d, token);
    send(d, p, BLOCK);
    send(d, c, 2);
    /* The data response follows the CRC at once; allow a few bytes for cards that idle
     * the line first. */
    resp = 0xFF;
    for (int i = 0; i < 8 && resp == 0xFF; i++)
        resp = xfer(d, 0xFF);
    resp &= DATA_RESP_MASK;
    if (resp != DATA_ACCEPTED) {
        if (resp == DATA_CRC_ERROR)
            d->crc_errors++;
        wait_ready(d, T_WRITE_MS);
        return fail(d, resp == DATA_CRC_ERROR ? "write: data CRC error" :
                       "write: data rejected", SF_EIO);
    }
    if (wait_ready(d, T_WRITE_MS))
        return fail(d, "write: busy for too long", SF_ETIMEDOUT);
    return 0;
}

static int sd_write(struct sf_bdev *bd, uint64_t lba, const void *buf, uint32_t count)
{
    struct sd_spi *d = (struct sd_spi *)bd;
    const uint8_t *p = buf;
    int r1, err = 0;

    if (lba > bd->sector_count || count > bd->sector_count - lba)
        return SF_EINVAL;
    if (count == 0)
        return 0;
    d->port->select(d->port->ctx, 1);
    d->writes++;
    r1 = command(d, count == 1 ? CMD24 : CMD25, card_addr(d, lba));
    if (r1 < 0) {
        err = fail(d, "write command: no response", SF_ETIMEDOUT);
    } else if (r1 & R1_ERRORS) {
        err = fail(d, "write command: error", SF_EIO);
    } else if (count == 1) {
        err = write_data(d, TOKEN_START, p);
    } else {
        for (uint32_t i = 0; i < count && !err; i++, p += BLOCK)
            err = write_data(d, TOKEN_START_MULTI, p);
        /* The stop-tran token ends the transfer, also after a rejected block. */
        xfer(d, TOKEN_STOP_TRAN);
        xfer(d, 0xFF);           /* Nbr: one byte before busy shows */
        if (wait_ready(d, T_WRITE_MS) && !err)
            err = fail(d, "write: busy after stop-tran", SF_ETIMEDOUT);
    }
    if (!err)
        d->sectors_written += count;
    deselect(d);
    return err;
}

/* Every write returned only after the card left busy: nothing is left to wait for. */
static int sd_flush(struct sf_bdev *bd)
{
    (void)bd;
    return 0;
}

/* ---- sf_bdev glue ------------------------------------------------------------------------ */

int sd_spi_init(struct sd_spi *d, const struct sd_spi_port *port, uint32_t flags)
{
    uint32_t fail_from = d->fail_from;
    int err;

    if (!port || !port->xfer || !port->select || !port->ms)
        return SF_EINVAL;
    /* Zero everything but the fault-injection setting the caller may have made. */
    {
        uint8_t *z = (uint8_t *)d;
        for (uint32_t i = 0; i < sizeof *d; i++)
            z[i] = 0;
    }
    d->port = port;
    d->flags = flags;
    d->fail_from = fail_from;
    d->why = "";
    if (port->clock)
        port->clock(port->ctx, 0);
    err = card_init(d);
    deselect(d);
    if (err) {
        d->type = SD_SPI_NONE;
        return err;
    }
    if (port->clock)
        port->clock(port->ctx, 1);
    d->bd.sector_size = BLOCK;
    d->bd.align_sectors = 1;
    d->bd.mem_align = 1;
    d->bd.read = sd_read;
    d->bd.write = sd_write;
    d->bd.flush = sd_flush;
    return 0;
}
