/* QEMU virt (AArch64, bare metal) board support for examples/nvme: the device tree QEMU
 * leaves at the start of RAM, the PL011 UART, the generic timer, semihosting. */
#ifndef NVME_BOARD_H
#define NVME_BOARD_H

#include <stdint.h>

#define BOARD_FDT 0x40000000u           /* where QEMU puts the DTB for a bare-metal image */

struct board_pcie {
    uint64_t ecam, ecam_size;           /* from the pcie node's reg */
    uint32_t bus_first, bus_last;       /* bus-range (0..255 when absent) */
    uint64_t mem_cpu, mem_pci, mem_size;/* the 32-bit memory window from ranges */
};

/* Parse the device tree: the UART (arm,pl011) and the PCIe host (pci-host-ecam-generic).
 * 0, or a negative number: -1 no device tree, -2 no UART, -3 no PCIe host. */
int board_init(struct board_pcie *pcie);

void board_puts(const char *s);
void board_put_u64(uint64_t v);
void board_put_hex(uint64_t v);

uint64_t board_now_us(void);

/* The semihosting command line (QEMU -append, after the image name), or "" */
const char *board_cmdline(void);

void board_exit(int status) __attribute__((noreturn));

#endif
