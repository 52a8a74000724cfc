/* Vector table and reset for the LM3S6965 (Cortex-M3): paint the stack, copy .data, zero
 * .bss, run main, exit QEMU with its status through semihosting. Faults print a line and
 * exit with status 3, so a test sees a crash at once. */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "semihost.h"

extern uint32_t __stack_top[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];

int main(void);
void Reset_Handler(void);
void SysTick_Handler(void);

static void fault(const char *what)
{
    board_puts(what);
    sh_exit(3);
}
static void NMI_Handler(void) { fault("sd-spi: NMI\n"); }
static void HardFault_Handler(void) { fault("sd-spi: HardFault\n"); }
static void MemManage_Handler(void) { fault("sd-spi: MemManage fault\n"); }
static void BusFault_Handler(void) { fault("sd-spi: BusFault\n"); }
static void UsageFault_Handler(void) { fault("sd-spi: UsageFault\n"); }
static void Unexpected_Handler(void) { fault("sd-spi: unexpected exception\n"); }

typedef void (*vector)(void);

__attribute__((section(".vectors"), used))
static const vector vectors[16] = {
    [0] = (vector)__stack_top,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = MemManage_Handler,
    [5] = BusFault_Handler,
    [6] = UsageFault_Handler,
    [11] = Unexpected_Handler,
    [12] = Unexpected_Handler,
    [14] = Unexpected_Handler,
    [15] = SysTick_Handler,
};

#define PAINT 0xA5C3A5C3u
extern uint32_t __bss_end[];

static __attribute__((always_inline)) inline uint32_t sp_now(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* From the end of .bss up to the stack pointer: the deepest word not holding the paint
 * marks the most stack used. */
uint32_t board_stack_used(void)
{
    const uint32_t *w = __bss_end;
    while (w < __stack_top && *w == PAINT)
        w++;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)w);
}

void Reset_Handler(void)
{
    memcpy(__data_start, __data_load, (size_t)((uint8_t *)__data_end - (uint8_t *)__data_start));
    memset(__bss_start, 0, (size_t)((uint8_t *)__bss_end - (uint8_t *)__bss_start));
    for (uint32_t *w = __bss_end; (uintptr_t)w < sp_now() - 64u; w++)
        *w = PAINT;
    sh_exit(main());
}
