/* The board port for QEMU's lm3s6965evb: UART0 for the report, SysTick as the time base and
 * the producer's interrupt, SSI0 with the SD card's chip select on GPIO PD0 (the
 * sd_spi_port of drivers/sd_spi).
 *
 * QEMU wires PD0 to the SD card's chip select (active low) and to the OLED controller's
 * (active high) at once: whenever the card is deselected the OLED is selected and takes
 * what SSI0 sends. The port keeps the OLED's D/C line (PC7) high, so those bytes are pixel
 * data for it rather than commands, and reads while the card is deselected come from the
 * OLED (zeros), which the driver never uses. */
#ifndef SD_SPI_BOARD_H
#define SD_SPI_BOARD_H

#include <stdint.h>
#include "sd_spi.h"

#define BOARD_TICK_HZ 1000u

/* UART0, GPIOs, SSI0, SysTick (1 kHz, priority above nothing else: the only interrupt). */
void board_init(void);
/* Milliseconds since board_init; written only by the SysTick handler. */
uint32_t board_ticks(void);
void board_idle(void);
/* Text to UART0 (blocking). */
void board_puts(const char *s);
/* The SD card's SPI port (SSI0, PD0). */
extern const struct sd_spi_port board_sd_port;
/* The most stack used since reset, in bytes (startup.c paints the stack). */
uint32_t board_stack_used(void);

/* Called by the SysTick handler every millisecond (main.c). */
void app_tick(uint32_t ms);

#endif
