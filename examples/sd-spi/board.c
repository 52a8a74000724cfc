/* lm3s6965evb peripherals (Stellaris LM3S6965 data sheet; QEMU models UART0 and SSI0 as
 * the PL011 and PL022 they are, GPIOs as PL061s): see board.h. */
#include "board.h"

#define REG(a) (*(volatile uint32_t *)(a))

/* System control: run-mode clock gating (QEMU does not model gating; a real part needs it). */
#define SYSCTL_RCC   REG(0x400FE060u)   /* clock source, PLL, system divider */
#define SYSCTL_RCGC1 REG(0x400FE104u)   /* bit 4: SSI0, bit 0: UART0 */
#define SYSCTL_RCGC2 REG(0x400FE108u)   /* bits 0..3: GPIO ports A..D */

/* GPIO (PL061): the data register is masked by address bits 9:2. */
#define GPIOA 0x40004000u
#define GPIOC 0x40006000u
#define GPIOD 0x40007000u
#define GPIO_DATA(port, pins) REG((port) + ((uint32_t)(pins) << 2))
#define GPIO_DIR(port) REG((port) + 0x400u)
#define GPIO_AFSEL(port) REG((port) + 0x420u)
#define GPIO_DEN(port) REG((port) + 0x51Cu)
#define PIN(n) (1u << (n))

/* UART0 (PL011) */
#define UART0 0x4000C000u
#define UART_DR REG(UART0 + 0x000u)
#define UART_FR REG(UART0 + 0x018u)     /* TXFF bit 5 */
#define UART_IBRD REG(UART0 + 0x024u)
#define UART_FBRD REG(UART0 + 0x028u)
#define UART_LCRH REG(UART0 + 0x02Cu)
#define UART_CTL REG(UART0 + 0x030u)

/* SSI0 (PL022) */
#define SSI0 0x40008000u
#define SSI_CR0 REG(SSI0 + 0x00u)       /* SCR 15:8, SPH 7, SPO 6, FRF 5:4, DSS 3:0 */
#define SSI_CR1 REG(SSI0 + 0x04u)       /* SSE bit 1 */
#define SSI_DR REG(SSI0 + 0x08u)
#define SSI_SR REG(SSI0 + 0x0Cu)        /* TNF bit 1, RNE bit 2, BSY bit 4 */
#define SSI_CPSR REG(SSI0 + 0x10u)

/* SysTick (ARMv7-M System Control Space) */
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

#define CPU_HZ 12000000u                /* the reload only sets the tick; QEMU's clock may differ */

static volatile uint32_t ticks;

void board_init(void)
{
    /* 12 MHz from the PLL bypass with the 8 MHz crystal would be 8 MHz; what matters here is
     * that the system clock is set up (QEMU derives SysTick's clock from this register). */
    SYSCTL_RCC = SYSCTL_RCC;
    SYSCTL_RCGC1 |= PIN(4) | PIN(0);
    SYSCTL_RCGC2 |= 0xFu;

    /* UART0 on PA0/PA1: 115200 8N1 at 12 MHz */
    GPIO_AFSEL(GPIOA) |= PIN(0) | PIN(1);
    GPIO_DEN(GPIOA) |= PIN(0) | PIN(1);
    UART_CTL = 0;
    UART_IBRD = 6;
    UART_FBRD = 33;
    UART_LCRH = 0x60u;                  /* 8 bits, no FIFO */
    UART_CTL = 0x301u;                  /* UARTEN, TXE, RXE */

    /* SSI0 on PA2 (clock), PA4 (MISO), PA5 (MOSI); chip select by hand on PD0. The pin is
     * driven high (card deselected) before it becomes an output, so the card never sees a
     * glitch low. PC7 high: the OLED's D/C line at "data". */
    GPIO_AFSEL(GPIOA) |= PIN(2) | PIN(4) | PIN(5);
    GPIO_DEN(GPIOA) |= PIN(2) | PIN(4) | PIN(5);
    GPIO_DATA(GPIOD, PIN(0)) = PIN(0);
    GPIO_DIR(GPIOD) |= PIN(0);
    GPIO_DEN(GPIOD) |= PIN(0);
    GPIO_DATA(GPIOC, PIN(7)) = PIN(7);
    GPIO_DIR(GPIOC) |= PIN(7);
    GPIO_DEN(GPIOC) |= PIN(7);
    SSI_CR1 = 0;
    SSI_CR0 = 0x07u;                    /* SPI mode 0, 8-bit frames */
    SSI_CPSR = 30;                      /* 12 MHz / 30 = 400 kHz for identification */
    SSI_CR1 = 0x02u;

    ticks = 0;
    SYST_RVR = CPU_HZ / BOARD_TICK_HZ - 1u;
    SYST_CVR = 0;
    SYST_CSR = 0x7u;                    /* processor clock, interrupt, enable */
}

uint32_t board_ticks(void)
{
    return ticks;
}

void board_idle(void)
{
    __asm__ volatile("wfi");
}

void board_puts(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n') {
            while (UART_FR & PIN(5)) {
            }
            UART_DR = '\r';
        }
        while (UART_FR & PIN(5)) {
        }
        UART_DR = (uint8_t)*s;
    }
}

/* ---- the SD card's port ---------------------------------------------------------------- */

static uint8_t ssi_xfer(void *ctx, uint8_t out)
{
    (void)ctx;
    while (!(SSI_SR & PIN(1))) {
    }
    SSI_DR = out;
    while (!(SSI_SR & PIN(2))) {
    }
    return (uint8_t)SSI_DR;
}

static void ssi_select(void *ctx, int select)
{
    (void)ctx;
    while (SSI_SR & PIN(4)) {           /* the last frame must be out before CS moves */
    }
    GPIO_DATA(GPIOD, PIN(0)) = select ? 0u : PIN(0);
}

static void ssi_clock(void *ctx, int fast)
{
    (void)ctx;
    SSI_CR1 = 0;
    SSI_CPSR = fast ? 2u : 30u;         /* 6 MHz (the part's maximum at 12 MHz) or 400 kHz */
    SSI_CR1 = 0x02u;
}

static uint32_t ssi_ms(void *ctx)
{
    (void)ctx;
    return ticks;
}

const struct sd_spi_port board_sd_port = {
    .ctx = 0,
    .xfer = ssi_xfer,
    .xfer_block = 0,
    .select = ssi_select,
    .clock = ssi_clock,
    .ms = ssi_ms,
};

void SysTick_Handler(void);
void SysTick_Handler(void)
{
    uint32_t t = ticks + 1;
    ticks = t;
    app_tick(t);
}
