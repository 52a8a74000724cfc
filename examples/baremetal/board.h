/* The board port for QEMU's mps2-an386 (Cortex-M4, 25 MHz): the time base (SysTick at
 * 1 kHz), the simulated CAN receive interrupt, and the memory the application may use.
 *
 * Memory map (QEMU, AN386):
 *   0x00000000  4 MiB  SSRAM1   code and read-only data (stands in for flash)
 *   0x20000000  4 MiB  SSRAM2/3 data, bss, stack: the logger's ring and buffers
 *   0x21000000 16 MiB  PSRAM    the RAM disk (.disk section, not loaded, zeroed at start)
 */
#ifndef BAREMETAL_BOARD_H
#define BAREMETAL_BOARD_H

#include <stdint.h>

#define BOARD_CPU_HZ 25000000u       /* MPS2 SYSCLK, SysTick's clock source */
#define BOARD_TICK_HZ 1000u

/* The interrupt line the simulated CAN controller raises (an external IRQ that nothing
 * on the emulated board drives: I2S audio, not modelled by QEMU). */
#define BOARD_CAN_IRQ 14u

/* Start SysTick (highest priority) and enable the CAN line at a lower priority. */
void board_init(void);
/* Milliseconds since board_init; written only by the SysTick handler. */
uint32_t board_ticks(void);
/* Nanoseconds since board_init, with SysTick's 40 ns resolution; from thread mode. */
uint64_t board_now_ns(void);
/* Raise the CAN interrupt from software (as the controller would on a received frame). */
void board_can_pend(void);
/* Stop the CAN interrupt for good: no producer runs after this returns. */
void board_can_stop(void);
/* Sleep until the next interrupt. */
void board_idle(void);

/* The most stack used since reset, in bytes (startup.c paints the top 64 KiB). */
uint32_t board_stack_used(void);

/* Called by the SysTick handler each millisecond after it counted the tick (main.c). */
void app_tick(uint32_t ms);
/* The CAN interrupt handler's work (main.c): the producer. */
void app_can_irq(void);

#endif
