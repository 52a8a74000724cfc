/* SD card in SPI mode behind struct sf_bdev (docs/PORTING.md, "SD card over SPI").
 *
 * The driver speaks the SD Physical Layer's SPI protocol to a real card: at least 74 clocks
 * with chip select high, CMD0, CMD8 (voltage check; a card that calls it illegal is a v1
 * card), ACMD41 with HCS until the card leaves idle, CMD58 (CCS: block or byte addresses),
 * CMD16 (512-byte blocks) for byte-addressed cards, CMD9 for the capacity, CMD59 to switch
 * CRC checking on when asked; then CMD17/CMD18 reads and CMD24/CMD25 writes with data
 * tokens, the stop-tran token, CMD12, and busy polling. Every wait has a timeout; an R1
 * error bit, a rejected data block, a wrong token or a timeout is SF_EIO (a timeout while
 * waiting for the card: SF_ETIMEDOUT), and `why` says which step it was.
 *
 * Everything board specific sits behind struct sd_spi_port: one-byte full-duplex transfer,
 * chip select, the SPI clock and a millisecond clock. A port to another MCU (an STM32's SPI
 * with DMA, a Zynq-7000's SPI controller) replaces the port, not this file.
 *
 * Memory: struct sd_spi is the caller's; no statics, no heap. Synchronous: every request
 * completes before read/write returns; flush waits for nothing (a write returns only after
 * the card is no longer busy programming it). One thread at a time. */
#ifndef STREAMFAT_SD_SPI_H
#define STREAMFAT_SD_SPI_H

#include <stdint.h>
#include "streamfat/bdev.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sd_spi_port {
    void *ctx;
    /* Send one byte, return the byte clocked in at the same time. */
    uint8_t (*xfer)(void *ctx, uint8_t out);
    /* Optional: n bytes at once (DMA): send out[] (NULL: 0xFF each) and store what comes
     * back in in[] (NULL: discard). NULL: the driver loops over xfer. */
    void (*xfer_block)(void *ctx, const uint8_t *out, uint8_t *in, uint32_t n);
    /* Chip select: select != 0 drives the card's CS low. */
    void (*select)(void *ctx, int select);
    /* SPI clock: fast == 0 for identification (100..400 kHz), 1 for data (<= 25 MHz).
     * Optional. */
    void (*clock)(void *ctx, int fast);
    /* Milliseconds from any origin, wrapping; for timeouts. */
    uint32_t (*ms)(void *ctx);
};

enum sd_spi_type { SD_SPI_NONE = 0, SD_SPI_V1 = 1, SD_SPI_V2_SC = 2, SD_SPI_V2_HC = 3 };

#define SD_SPI_CRC 0x1u         /* CMD59: the card checks CRC7/CRC16, we send and check them */

struct sd_spi {
    struct sf_bdev bd;          /* first: the device the core sees */
    const struct sd_spi_port *port;
    uint32_t flags;             /* SD_SPI_* */
    uint8_t type;               /* enum sd_spi_type */
    uint8_t last_r1;            /* the last R1 with an error bit (0: none) */
    uint8_t last_cmd;
    uint8_t block_addr;         /* CCS: the card takes block numbers, not byte offsets */
    const char *why;            /* the step that failed, "" when none */
    /* Fault injection (the card in QEMU cannot be told to fail): when fail_from is
     * non-zero, command number fail_from (counting every command sent since
     * sd_spi_init, from 1) and every later one is treated as if the card had answered
     * with R1's parameter-error bit. So that the card does not act on a command reported
     * as failed, it is sent CMD59 (CRC setting unchanged) instead; CMD12 goes out as it
     * is, ending a multiple-block read. Setting fail_from back to 0 ends the fault. */
    uint32_t fail_from;
    /* Counters. */
    uint32_t commands;          /* commands sent */
    uint32_t reads, writes;     /* CMD17/CMD18, CMD24/CMD25 */
    uint64_t sectors_read, sectors_written;
    uint32_t crc_errors;        /* data blocks that failed their CRC16 (read) or were
                                   rejected for CRC (write) */
};

/* Bring the card up and fill in bd (sector_count from the CSD, 512-byte sectors).
 * 0, SF_EIO (the card answered with an error, or an answer made no sense),
 * SF_ETIMEDOUT (no card, or it never became ready), SF_ENOTSUP (not an SD card, or a
 * voltage range it refuses). d->why names the step. */
int sd_spi_init(struct sd_spi *d, const struct sd_spi_port *port, uint32_t flags);

/* The SD CRCs, exposed for tests: CRC7 (x^7 + x^3 + 1) of a command's first five bytes,
 * shifted left one with the end bit set, and CRC16-CCITT (x^16 + x^12 + x^5 + 1, initial
 * value 0) of a data block. */
uint8_t sd_spi_crc7(const uint8_t *p, uint32_t n);
uint16_t sd_spi_crc16(const uint8_t *p, uint32_t n);

#ifdef __cplusplus
}
#endif

#endif
