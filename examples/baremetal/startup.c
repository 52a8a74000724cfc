/* Vector table and reset for a Cortex-M4: copy .data from its load address, zero .bss,
 * zero the RAM disk, run main, report its status through semihosting. Faults print a line
 * and stop the emulator with status 3, so a test sees a crash as a failure at once. */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "semihost.h"

/* From mps2_an386.ld. */
extern uint32_t __stack_top[];
extern uint32_t __data_load[], __data_start[], __data_end[];
extern uint32_t __bss_start[], __bss_end[];
extern uint8_t __disk_start[], __disk_end[];

int main(void);
void Reset_Handler(void);
void SysTick_Handler(void);
void CAN_IRQHandler(void);

static void fault(const char *what)
{
    sh_puts(what);
    sh_exit(3);
}
static void NMI_Handler(void) { fault("baremetal: NMI\n"); }
static void HardFault_Handler(void) { fault("baremetal: HardFault\n"); }
static void MemManage_Handler(void) { fault("baremetal: MemManage fault\n"); }
static void BusFault_Handler(void) { fault("baremetal: BusFault\n"); }
static void UsageFault_Handler(void) { fault("baremetal: UsageFault\n"); }
static void Unexpected_Handler(void) { fault("baremetal: unexpected exception\n"); }

typedef void (*vector)(void);

/* 16 system exceptions, then external IRQs 0..31 (QEMU's MPS2 NVIC has 32 lines). */
__attribute__((section(".vectors"), used))
static const vector vectors[16 + 32] = {
    [0] = (vector)__stack_top,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = MemManage_Handler,
    [5] = BusFault_Handler,
    [6] = UsageFault_Handler,
    [11] = Unexpected_Handler,          /* SVCall */
    [12] = Unexpected_Handler,          /* DebugMonitor */
    [14] = Unexpected_Handler,          /* PendSV */
    [15] = SysTick_Handler,
    [16 + BOARD_CAN_IRQ] = CAN_IRQHandler,
};

/* Stack measurement: the STACK_PAINT bytes below the top are filled with a pattern at
 * reset; the deepest word no longer holding it marks the most stack used so far. */
#define STACK_PAINT (64u * 1024u)
#define PAINT 0xA5C3A5C3u

static __attribute__((always_inline)) inline uint32_t sp_now(void)
{
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

uint32_t board_stack_used(void)
{
    const uint32_t *w = (const uint32_t *)((uintptr_t)__stack_top - STACK_PAINT);
    while (w < __stack_top && *w == PAINT)
        w++;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)w);
}

void Reset_Handler(void)
{
    /* Below this function's own frame only. */
    for (uint32_t *w = (uint32_t *)((uintptr_t)__stack_top - STACK_PAINT);
         (uintptr_t)w < sp_now() - 64u; w++)
        *w = PAINT;
    memcpy(__data_start, __data_load, (size_t)((uint8_t *)__data_end - (uint8_t *)__data_start));
    memset(__bss_start, 0, (size_t)((uint8_t *)__bss_end - (uint8_t *)__bss_start));
    /* The disk starts erased (zeros), so the image written out is the same on every run
     * wherever the format does not write. */
    memset(__disk_start, 0, (size_t)(__disk_end - __disk_start));
    sh_exit(main());
}
