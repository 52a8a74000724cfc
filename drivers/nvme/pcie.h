/* PCIe configuration through ECAM, the part an NVMe driver on a bare-metal host needs
 * (drivers/nvme/pcie.c): find a function by class code on the root bus, size its BAR0 and
 * place it in the host's memory window, enable memory decoding and bus mastering.
 *
 * Nothing has set up the bus before us (no firmware does on bare metal): the caller gives the
 * ECAM base and the 32-bit memory window, from its device tree or its hardware manual.
 * Bridges (a PCIe root port, as on Zynq UltraScale+, or a switch) are numbered on the way
 * down (primary, secondary, subordinate bus, depth first, up to 4 levels), and the bridges
 * above the function found get a memory window around its BAR0 and memory decoding + bus
 * mastering (docs/PORTING.md, "NVMe on bare-metal AArch64"). Only one function is placed:
 * this is a boot-time set-up for one controller, not a general enumerator.
 *
 * Freestanding: no allocation, no globals. */
#ifndef SF_DRIVERS_PCIE_H
#define SF_DRIVERS_PCIE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sf_pcie_host {
    uintptr_t ecam;          /* CPU address of the configuration space of bus 0 */
    uint8_t bus;             /* the bus to scan (the first of the host's bus range) */
    uint64_t mem_cpu;        /* the 32-bit memory window: CPU address ... */
    uint64_t mem_pci;        /* ... the same place as the PCI bus sees it ... */
    uint64_t mem_size;       /* ... and its size */
    uint64_t mem_next;       /* next free PCI address in the window (0: mem_pci); moves */
    uint8_t bus_last;        /* highest bus number to hand out to bridges (0: 255) */
    uint8_t bus_max;         /* private: highest bus number handed out so far */
};

#define SF_PCIE_MAX_BRIDGES 4u

struct sf_pcie_fn {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint32_t class_code;     /* base class << 16 | subclass << 8 | programming interface */
    uintptr_t bar0;          /* CPU address of BAR0 once assigned */
    uint64_t bar0_size;
    uint8_t nbridges;        /* bridges between the root bus and the function ... */
    struct { uint8_t bus, dev, fn; } bridge[SF_PCIE_MAX_BRIDGES];  /* ... root first */
};

/* Find the first function at or below h->bus whose class code is `class_code` (NVMe:
 * 0x010802), numbering the bridges on the way. 0, or SF_ENOENT when there is none. */
int sf_pcie_find_class(struct sf_pcie_host *h, uint32_t class_code, struct sf_pcie_fn *out);

/* Size BAR0 (32- or 64-bit memory BAR), give it the next naturally aligned range of the
 * window (1 MiB aligned behind a bridge: a bridge window's granularity), open the bridges'
 * windows onto it, and turn on memory decoding and bus mastering (INTx off: the drivers
 * poll).
 * 0; SF_ENOSPC when the window has no room; SF_ENOTSUP for an I/O or missing BAR0. */
int sf_pcie_enable_bar0(struct sf_pcie_host *h, struct sf_pcie_fn *f);

#ifdef __cplusplus
}
#endif

#endif
