/* SysTick and NVIC for the Cortex-M4 of mps2-an386 (registers from the ARMv7-M
 * Architecture Reference Manual, System Control Space). */
#include "board.h"

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR   REG(0xE000E010u)   /* ENABLE bit 0, TICKINT bit 1, CLKSOURCE bit 2 */
#define SYST_RVR   REG(0xE000E014u)
#define SYST_CVR   REG(0xE000E018u)
#define SCB_ICSR   REG(0xE000ED04u)   /* PENDSTSET bit 26: a SysTick is pending */
#define SCB_SHPR3  REG(0xE000ED20u)   /* SysTick priority in bits 31:24 */
#define NVIC_ISER0 REG(0xE000E100u)
#define NVIC_ICER0 REG(0xE000E180u)
#define NVIC_ISPR0 REG(0xE000E200u)
#define NVIC_IPR(n) (*(volatile uint8_t *)(0xE000E400u + (n)))

#define RELOAD (BOARD_CPU_HZ / BOARD_TICK_HZ - 1u)
#define NS_PER_CYCLE (1000000000u / BOARD_CPU_HZ)

static volatile uint32_t ticks;

void board_init(void)
{
    ticks = 0;
    SCB_SHPR3 = (SCB_SHPR3 & 0x00FFFFFFu) | 0x40u << 24;
    NVIC_IPR(BOARD_CAN_IRQ) = 0x80u;   /* SysTick may preempt the CAN handler */
    NVIC_ISER0 = 1u << BOARD_CAN_IRQ;
    SYST_RVR = RELOAD;
    SYST_CVR = 0;
    SYST_CSR = 0x7u;
}

uint32_t board_ticks(void)
{
    return ticks;
}

/* Ticks and the down-counter must be from the same millisecond: read the tick count on
 * both sides of the counter, and count a wrap that the handler has not yet seen (it is
 * pending between the wrap and the handler's entry, or while interrupts are masked). A
 * pending wrap with the counter still high happened just before the read; with the counter
 * low, the read came first. Right as long as the handler is never held off half a tick. */
uint64_t board_now_ns(void)
{
    uint32_t t, v;
    int pending;
    do {
        t = ticks;
        v = SYST_CVR;
        pending = (SCB_ICSR >> 26) & 1u;
    } while (t != ticks);
    if (pending && v > RELOAD / 2)     /* wrapped after the read of ticks */
        t++;
    return (uint64_t)t * (1000000000u / BOARD_TICK_HZ) + (uint64_t)(RELOAD - v) * NS_PER_CYCLE;
}

void board_can_pend(void)
{
    NVIC_ISPR0 = 1u << BOARD_CAN_IRQ;
}

void board_can_stop(void)
{
    NVIC_ICER0 = 1u << BOARD_CAN_IRQ;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

void board_idle(void)
{
    __asm__ volatile("wfi");
}

void SysTick_Handler(void);
void SysTick_Handler(void)
{
    uint32_t t = ticks + 1;
    ticks = t;
    app_tick(t);
}

void CAN_IRQHandler(void);
void CAN_IRQHandler(void)
{
    app_can_irq();
}
