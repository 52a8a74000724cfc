/* drivers/sd_spi against a simulated SD card in SPI mode: what QEMU's card cannot show.
 *
 * The model answers byte by byte as the SD Physical Layer specification's SPI mode has a
 * card answer (Ncr gap, R1/R3/R7, start tokens, CRC16, data responses, busy), checks what
 * the host sends (CRC7 of every command when CRC is on and of CMD0/CMD8 always, CRC16 of
 * written blocks when CRC is on, 512-aligned byte addresses on byte-addressed cards, CMD16
 * before a byte-addressed transfer, the stop-tran token after CMD25), and can misbehave:
 * no card, a version 1 card, a busy that never ends, no read token, an error token, a
 * corrupted read CRC, a rejected write, a data response a byte late. Each case checks the driver's result, its `why`
 * and that it ended (the millisecond clock advances with every poll, so timeouts fire).
 *
 * The driver is compiled into this test (as test_crc32c_small does with its source). */
#include <stdint.h>
#include <string.h>
#include "check.h"
#include "streamfat/sf.h"

#include "../../drivers/sd_spi/sd_spi.c"

#define SECTORS 4096u                   /* a 2 MiB card */

enum misbehave { OK = 0, NO_CARD, BUSY_FOREVER, NO_TOKEN, ERROR_TOKEN, BAD_READ_CRC,
                 REJECT_WRITE, CRC_REJECT_WRITE, LATE_RESPONSE };

struct card {
    int version;                        /* 1 or 2 */
    int hc;                             /* SDHC: block addresses */
    enum misbehave mis;
    /* state */
    int selected, idle, app, crc_on, blocklen_set;
    uint8_t cmd[6];
    int ncmd;
    uint8_t out[2048];
    uint32_t head, tail;                /* queue of bytes the card sends */
    int reading;                        /* CMD18 streaming: next block to queue */
    uint32_t read_next;
    int writing;                        /* 24 or 25 while a write transfer is open */
    uint32_t write_at;
    uint8_t wbuf[514];
    int wpos;                           /* -1: waiting for a token */
    int busy_left;                      /* busy bytes still to send after a write */
    /* what the host did wrong, counted */
    int bad_crc7, bad_crc16, bad_addr, no_blocklen, commands, stop_trans;
    uint32_t ms;
    uint8_t data[SECTORS * 512u];
};

static struct card C;

static void q(uint8_t b)
{
    C.out[C.tail++ % sizeof C.out] = b;
}

static void q_block(const uint8_t *p, uint32_t n, int corrupt)
{
    q(0xFF);
    q(0xFF);
    if (C.mis == NO_TOKEN)
        return;
    if (C.mis == ERROR_TOKEN) {
        q(0x08);                        /* data error token: out of range */
        return;
    }
    q(0xFE);
    for (uint32_t i = 0; i < n; i++)
        q(p[i]);
    uint16_t crc = sd_spi_crc16(p, n) ^ (corrupt ? 1u : 0u);
    q((uint8_t)(crc >> 8));
    q((uint8_t)crc);
}

static uint8_t csd[16];

static void make_csd(void)
{
    memset(csd, 0, sizeof csd);
    if (C.hc) {                         /* CSD 2.0: (C_SIZE + 1) * 512 KiB */
        uint32_t c_size = SECTORS / 1024u - 1u;
        csd[0] = 0x40;
        csd[7] = (uint8_t)(c_size >> 16 & 0x3F);
        csd[8] = (uint8_t)(c_size >> 8);
        csd[9] = (uint8_t)c_size;
    } else {                            /* CSD 1.0: READ_BL_LEN 9, C_SIZE_MULT 7 */
        uint32_t c_size = SECTORS / 512u - 1u, mult = 7;
        csd[5] = 9;
        csd[6] = (uint8_t)(c_size >> 10 & 3u);
        csd[7] = (uint8_t)(c_size >> 2);
        csd[8] = (uint8_t)(c_size << 6);
        csd[9] = (uint8_t)(mult >> 1);
        csd[10] = (uint8_t)(mult << 7);
    }
}

/* The block a command's address names, or -1 (and counted) when it is not one. */
static long block_of(uint32_t arg)
{
    uint32_t b = arg;
    if (!C.hc) {
        if (!C.blocklen_set)
            C.no_blocklen++;
        if (arg % 512u) {
            C.bad_addr++;
            return -1;
        }
        b = arg / 512u;
    }
    return b < SECTORS ? (long)b : -1;
}

static void card_command(void)
{
    uint8_t c = C.cmd[0] & 0x3Fu;
    uint32_t arg = (uint32_t)C.cmd[1] << 24 | (uint32_t)C.cmd[2] << 16 |
                   (uint32_t)C.cmd[3] << 8 | C.cmd[4];
    int app = C.app;
    uint8_t r1 = C.idle ? 1 : 0;
    C.app = 0;
    C.commands++;
    if ((C.crc_on || c == 0 || c == 8) && sd_spi_crc7(C.cmd, 5) != C.cmd[5]) {
        C.bad_crc7++;
        q(0xFF);
        q(r1 | 0x08);                   /* COM_CRC_ERROR */
        return;
    }
    q(0xFF);                            /* Ncr: one byte before the response */
    if (c == 12) {
        C.reading = 0;
        C.head = C.tail;                /* the data still queued is cut off */
        q(0xFF);
        q(r1);
        q(0x00);                        /* busy for two bytes */
        q(0x00);
        return;
    }
    if (app && c == 41) {
        if (C.version == 2 && !(arg & ACMD41_HCS) && C.hc) {
            q(r1);                      /* an SDHC card stays idle without HCS */
            return;
        }
        C.idle = 0;
        q(0);
        return;
    }
    switch (c) {
    case 0:
        C.idle = 1;
        q(1);
        return;
    case 8:
        if (C.version == 1) {
            q(r1 | 0x04);
            return;
        }
        q(r1);
        q(0);
        q(0);
        q((uint8_t)(arg >> 8 & 0xF));
        q((uint8_t)arg);
        return;
    case 55:
        C.app = 1;
        q(r1);
        return;
    case 58:
        q(r1);
        q((uint8_t)(0x80u | (C.hc ? 0x40u : 0)));
        q(0xFF);
        q(0x80);
        q(0);
        return;
    case 59:
        C.crc_on = arg & 1u;
        q(r1);
        return;
    case 16:
        C.blocklen_set = arg == 512;
        q(arg == 512 ? r1 : (uint8_t)(r1 | 0x40));
        return;
    case 9:
        q(r1);
        q_block(csd, 16, C.mis == BAD_READ_CRC);
        return;
    }
    if (C.idle) {
        q(r1 | 0x04);
        return;
    }
    long b = block_of(arg);
    switch (c) {
    case 17:
    case 18:
        if (b < 0) {
            q(0x20);                    /* ADDRESS_ERROR */
            return;
        }
        q(0);
        q_block(C.data + (uint32_t)b * 512u, 512, C.mis == BAD_READ_CRC);
        if (c == 18) {
            C.reading = 1;
            C.read_next = (uint32_t)b + 1;
        }
        return;
    case 24:
    case 25:
        if (b < 0) {
            q(0x20);
            return;
        }
        q(0);
        C.writing = c;
        C.write_at = (uint32_t)b;
        C.wpos = -1;
        return;
    default:
        q(r1 | 0x04);
    }
}

/* A byte the host sends while a write transfer is open. */
static void write_byte(uint8_t b)
{
    if (C.wpos < 0) {
        if (b == 0xFF)
            return;
        if (C.writing == 25 && b == TOKEN_STOP_TRAN) {
            C.stop_trans++;
            C.writing = 0;
            q(0xFF);
            q(0x00);
            q(0x00);
            return;
        }
        if (b == (C.writing == 25 ? TOKEN_START_MULTI : TOKEN_START))
            C.wpos = 0;
        return;
    }
    C.wbuf[C.wpos++] = b;
    if (C.wpos < 514)
        return;
    uint16_t crc = (uint16_t)(C.wbuf[512] << 8 | C.wbuf[513]);
    int crc_bad = C.crc_on && crc != sd_spi_crc16(C.wbuf, 512);
    if (crc_bad)
        C.bad_crc16++;
    if (C.mis == LATE_RESPONSE)
        q(0xFF);                        /* the line idles a byte before the response */
    if (C.mis == REJECT_WRITE) {
        q(0x0D);
    } else if (crc_bad || C.mis == CRC_REJECT_WRITE) {
        q(0x0B);
    } else {
        memcpy(C.data + C.write_at * 512u, C.wbuf, 512);
        q(0x05);
    }
    C.busy_left = C.mis == BUSY_FOREVER ? -1 : 3;
    C.write_at++;
    C.wpos = -1;
    if (C.writing == 24)
        C.writing = 0;
}

static uint8_t card_xfer(void *ctx, uint8_t b)
{
    (void)ctx;
    if (!C.selected || C.mis == NO_CARD)
        return 0xFF;
    /* what the card sends in this byte: queued bytes, then busy, then streamed blocks */
    uint8_t r;
    if (C.head != C.tail) {
        r = C.out[C.head++ % sizeof C.out];
    } else if (C.busy_left) {
        if (C.busy_left > 0)
            C.busy_left--;
        r = 0x00;
    } else {
        if (C.reading && C.read_next < SECTORS) {
            q_block(C.data + C.read_next * 512u, 512, C.mis == BAD_READ_CRC);
            C.read_next++;
        }
        r = 0xFF;
    }
    /* what the host sends */
    if (C.ncmd || (!C.writing && (b & 0xC0u) == 0x40u)) {
        C.cmd[C.ncmd++] = b;
        if (C.ncmd == 6) {
            C.ncmd = 0;
            card_command();
        }
    } else if (C.writing) {
        write_byte(b);
    }
    return r;
}

static void card_select(void *ctx, int sel)
{
    (void)ctx;
    C.selected = sel;
}

static uint32_t card_ms(void *ctx)
{
    (void)ctx;
    return C.ms++ / 64u;                /* time passes with every poll */
}

static const struct sd_spi_port port = {
    .ctx = NULL, .xfer = card_xfer, .xfer_block = NULL, .select = card_select,
    .clock = NULL, .ms = card_ms,
};

static struct sd_spi d;

static void card_reset(int version, int hc, enum misbehave mis)
{
    memset(&C, 0, sizeof C);
    C.version = version;
    C.hc = hc;
    C.mis = mis;
    for (uint32_t i = 0; i < sizeof C.data; i++)
        C.data[i] = (uint8_t)(i * 7u + i / 512u);
    make_csd();
    memset(&d, 0, sizeof d);
}

static uint8_t wbuf[8 * 512], rbuf[8 * 512];

static void fill(uint32_t seed)
{
    for (uint32_t i = 0; i < sizeof wbuf; i++)
        wbuf[i] = (uint8_t)(seed + i * 13u + i / 97u);
}

/* Write one and eight sectors, read them back one by one and as one multi-block read. */
static void round_trip(const char *what)
{
    fill(1);
    CHECK_EQ(d.bd.write(&d.bd, 7, wbuf, 1), 0);
    fill(2);
    CHECK_EQ(d.bd.write(&d.bd, 100, wbuf, 8), 0);
    memset(rbuf, 0, sizeof rbuf);
    CHECK_EQ(d.bd.read(&d.bd, 100, rbuf, 8), 0);
    CHECK(memcmp(rbuf, wbuf, sizeof wbuf) == 0);
    CHECK_EQ(d.bd.read(&d.bd, 103, rbuf, 1), 0);
    CHECK(memcmp(rbuf, wbuf + 3 * 512, 512) == 0);
    CHECK(memcmp(C.data + 100 * 512, wbuf, sizeof wbuf) == 0);   /* on the card itself */
    fill(1);
    CHECK_EQ(d.bd.read(&d.bd, 7, rbuf, 1), 0);
    CHECK(memcmp(rbuf, wbuf, 512) == 0);
    CHECK(memcmp(C.data + 7 * 512, wbuf, 512) == 0);
    CHECK_EQ(d.bd.flush(&d.bd), 0);
    CHECK_EQ(C.stop_trans, 1);
    CHECK_EQ(C.bad_crc7 + C.bad_crc16 + C.bad_addr + C.no_blocklen, 0);
    if (check_failures)
        fprintf(stderr, "  (in %s)\n", what);
}

int main(void)
{
    /* The CRCs: CMD0's and CMD8(0x1AA)'s well-known last bytes; CRC16 of 512 x 0xFF. */
    uint8_t cmd0[5] = { 0x40, 0, 0, 0, 0 }, cmd8[5] = { 0x48, 0, 0, 0x01, 0xAA };
    CHECK_EQ(sd_spi_crc7(cmd0, 5), 0x95);
    CHECK_EQ(sd_spi_crc7(cmd8, 5), 0x87);
    memset(wbuf, 0xFF, 512);
    CHECK_EQ(sd_spi_crc16(wbuf, 512), 0x7FA1);
    CHECK_EQ(sd_spi_crc16((const uint8_t *)"123456789", 9), 0x31C3);

    /* SDHC, CRC off and on */
    for (int crc = 0; crc <= 1; crc++) {
        card_reset(2, 1, OK);
        REQUIRE(sd_spi_init(&d, &port, crc ? SD_SPI_CRC : 0) == 0);
        CHECK_EQ(d.type, SD_SPI_V2_HC);
        CHECK_EQ(d.block_addr, 1);
        CHECK_EQ(d.bd.sector_count, SECTORS);
        CHECK_EQ(d.bd.sector_size, 512);
        CHECK_EQ(C.crc_on, crc);
        round_trip(crc ? "SDHC, CRC on" : "SDHC, CRC off");
    }
    /* SDSC version 2: byte addresses, CMD16 first */
    card_reset(2, 0, OK);
    REQUIRE(sd_spi_init(&d, &port, SD_SPI_CRC) == 0);
    CHECK_EQ(d.type, SD_SPI_V2_SC);
    CHECK_EQ(d.block_addr, 0);
    CHECK_EQ(C.blocklen_set, 1);
    CHECK_EQ(d.bd.sector_count, SECTORS);
    round_trip("SDSC v2");
    /* a card whose data response comes a byte late */
    card_reset(2, 1, LATE_RESPONSE);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    round_trip("late data response");
    /* a version 1 card: CMD8 illegal, ACMD41 without HCS, byte addresses */
    card_reset(1, 0, OK);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    CHECK_EQ(d.type, SD_SPI_V1);
    CHECK_EQ(d.block_addr, 0);
    round_trip("SDSC v1");
    /* beyond the end: refused before anything is sent */
    uint32_t before = C.commands;
    CHECK_EQ(d.bd.read(&d.bd, SECTORS - 1, rbuf, 2), SF_EINVAL);
    CHECK_EQ(d.bd.write(&d.bd, SECTORS, wbuf, 1), SF_EINVAL);
    CHECK_EQ(C.commands, before);

    /* no card: nothing answers */
    card_reset(2, 1, NO_CARD);
    CHECK_EQ(sd_spi_init(&d, &port, 0), SF_ETIMEDOUT);
    CHECK(strstr(d.why, "CMD0") != NULL);
    CHECK_EQ(d.type, SD_SPI_NONE);

    /* read CRC corrupted: caught with CRC on */
    card_reset(2, 1, BAD_READ_CRC);
    CHECK_EQ(sd_spi_init(&d, &port, SD_SPI_CRC), SF_EIO);   /* the CSD itself fails */
    CHECK(strstr(d.why, "CRC16") != NULL);
    CHECK_EQ(d.crc_errors, 1);
    card_reset(2, 1, OK);
    REQUIRE(sd_spi_init(&d, &port, SD_SPI_CRC) == 0);
    C.mis = BAD_READ_CRC;
    CHECK_EQ(d.bd.read(&d.bd, 5, rbuf, 1), SF_EIO);
    CHECK_EQ(d.bd.read(&d.bd, 5, rbuf, 4), SF_EIO);
    CHECK_EQ(d.crc_errors, 2);
    C.mis = OK;
    CHECK_EQ(d.bd.read(&d.bd, 5, rbuf, 4), 0);               /* and the card still works */

    /* no read token; an error token */
    card_reset(2, 1, OK);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    C.mis = NO_TOKEN;
    CHECK_EQ(d.bd.read(&d.bd, 5, rbuf, 1), SF_ETIMEDOUT);
    CHECK(strstr(d.why, "token") != NULL);
    C.head = C.tail;
    C.mis = ERROR_TOKEN;
    CHECK_EQ(d.bd.read(&d.bd, 5, rbuf, 1), SF_EIO);
    CHECK(strstr(d.why, "error token") != NULL);

    /* writes the card rejects, and a busy that never ends */
    card_reset(2, 1, OK);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    C.mis = REJECT_WRITE;
    CHECK_EQ(d.bd.write(&d.bd, 9, wbuf, 1), SF_EIO);
    CHECK(strstr(d.why, "rejected") != NULL);
    CHECK_EQ(d.bd.write(&d.bd, 9, wbuf, 3), SF_EIO);
    CHECK_EQ(C.stop_trans, 1);                               /* ended with stop-tran */
    C.mis = CRC_REJECT_WRITE;
    CHECK_EQ(d.bd.write(&d.bd, 9, wbuf, 1), SF_EIO);
    CHECK(strstr(d.why, "CRC") != NULL);
    CHECK_EQ(d.crc_errors, 1);
    C.mis = BUSY_FOREVER;
    CHECK_EQ(d.bd.write(&d.bd, 9, wbuf, 1), SF_ETIMEDOUT);
    CHECK(strstr(d.why, "busy") != NULL);
    C.busy_left = 0;
    C.mis = OK;
    CHECK_EQ(d.bd.write(&d.bd, 9, wbuf, 1), 0);

    /* an out-of-range address the card refuses (R1 address error) */
    card_reset(2, 1, OK);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    d.bd.sector_count = SECTORS + 8;    /* the driver believes in more than there is */
    CHECK_EQ(d.bd.read(&d.bd, SECTORS + 1, rbuf, 1), SF_EIO);
    CHECK_EQ(d.last_r1 & 0x20, 0x20);

    /* fault injection: from the next command on, every command fails */
    card_reset(2, 1, OK);
    REQUIRE(sd_spi_init(&d, &port, 0) == 0);
    d.fail_from = d.commands + 1;
    CHECK_EQ(d.bd.write(&d.bd, 1, wbuf, 1), SF_EIO);
    CHECK_EQ(d.bd.read(&d.bd, 1, rbuf, 1), SF_EIO);
    CHECK_EQ(d.last_r1 & R1_PARAM, R1_PARAM);
    CHECK_EQ(C.writing, 0);             /* the card never saw the write */
    d.fail_from = 0;                    /* the fault ends: the card works as before */
    CHECK_EQ(d.bd.read(&d.bd, 1, rbuf, 1), 0);
    card_reset(2, 1, OK);
    d.fail_from = 2;                    /* kept by sd_spi_init: CMD8 fails */
    CHECK_EQ(sd_spi_init(&d, &port, 0), SF_EIO);
    CHECK(strstr(d.why, "CMD8") != NULL);

    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
